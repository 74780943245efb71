"""`atip gen` and `atip search` processes against their floors, side by side, before and after.

    python bench/gen_speed.py [--tool ls] [--runs N] [--base SRC] [--home DIR] [--json]
    python bench/gen_speed.py --tools ls,cat,jq,pip [--runs N] [--base SRC] [--json]

Each figure is the median of N runs, taken in turns (one of each, then again) so that a
change of load on the machine falls on all of them alike. Every atip process is a fresh
interpreter, the real one (`sys.executable`, not a pyenv shim), running `-m atipkit` with
PYTHONPATH at this tree's `src` ("after") and, with `--base`, at another `src` ("before":
`git archive main src | tar -x -C DIR`, then `--base DIR/src`); compiled modules are kept,
as an installed package has them (the environment's PYTHONDONTWRITEBYTECODE is dropped,
PYTHONPYCACHEPREFIX points into a temporary directory):
- `TOOL --help`, the tool's own help, against `atip gen TOOL --plain` (issue 20: within
  1.5x);
- `atip --version`, the floor of any atip command (also through the installed console
  script beside the interpreter, for the "after" tree), against `atip search QUERY` over the
  registry under `--home` (issue 21: within 1.5x; the default home is bench/search.py's,
  which `atip scan --infer` of this machine's PATH fills; the index is brought up to date
  by a first, unmeasured search);
- what those are made of: Python's start without `site` (`python -S -c pass`) and with it
  (`python -c pass`: here a sandbox `.pth` hook imports certifi into every process),
  importing the command line (`python -c "import atipkit.cli"`), and what `gen` imports,
  then the process's first sandboxed run (the sandbox starts once a process), and, in one
  process, each step of `generate_shim`: the sandbox's start (`run_sandboxed` of `true`),
  the sandboxed `TOOL --help`, the index of man pages (`ManPages.load`, cached), rendering
  the page, hashing the binary, and validating the shim; and the steps of `atip search`
  ("after"), each timed inside a fresh process: importing the command line, the search
  command's module, the modules of the registry and the index, the index's up-to-date
  check and load, and the query.

With `--tools`, `atip gen` alone, for each tool: `TOOL --help` against `atip gen TOOL
--plain` of each tree, in turns, the wall-clock median and the CPU median of each process
tree (user + system of the process and what it waited for, which the load stretches
less), the ratio of the medians, and whether the two trees' shims (`atip gen TOOL --json`,
their `timestamp` and `duration_ms` left out) are the same: a speed-up must not change
what is inferred.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _machine import cores, cpu

TARGET_RATIO = 1.5
FIRST_RUN = (
    "import atipkit.cli, atipkit.infer.generate, atipkit.validation\n"
    "from atipkit.probe import run_sandboxed\n"
    "run_sandboxed({tool!r}, ['--help'], timeout=5)"
)
"""The sandbox starts once per process: its first run costs what the others do not."""
SEARCH_STAGES = """
import time
marks = [time.perf_counter()]
import atipkit.cli
marks.append(time.perf_counter())
atipkit.cli.app.child("search")
marks.append(time.perf_counter())
import atipkit.search.machine
marks.append(time.perf_counter())
from atipkit.search.machine import machine_index
index, _ = machine_index()
marks.append(time.perf_counter())
index.search({query!r}, 10)
marks.append(time.perf_counter())
print(" ".join(str(b - a) for a, b in zip(marks, marks[1:])))
"""
"""The steps of `atip search` in a fresh process, each timed by the process itself."""
STAGES = (
    "  search: import atipkit.cli",
    "  search: + cli/search.py (the model, msgspec)",
    "  search: + the registry, resolve, the index's modules",
    "  search: + the index's up-to-date check and load",
    "  search: + the query",
)


def cpu_timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One process: its wall-clock seconds and the CPU seconds of its process tree."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _steady(value: Any) -> Any:
    """A shim without what differs between two runs of the same code (when, how long)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in ("timestamp", "duration_ms")}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def own_cache(env: dict[str, str], variant: str, src: Path) -> dict[str, str]:
    """`env` for one tree: its PYTHONPATH, and a cache of its own (the index of man pages
    of one tree's form would be listed again by the other's, at every turn)."""
    cache = Path(env["XDG_CACHE_HOME"]) / variant
    return {**env, "PYTHONPATH": str(src), "XDG_CACHE_HOME": str(cache)}


def gen_only(tools: list[str], trees: dict[str, Path], runs: int, env: dict[str, str]) -> dict:
    """`--tools`: each tool's `--help` against `atip gen TOOL --plain` of each tree."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        argvs = {f"{tool} --help": ([tool, "--help"], env)}
        for variant, src in trees.items():
            code = own_cache(env, variant, src)
            argvs[f"atip gen [{variant}]"] = (
                [sys.executable, "-m", "atipkit", "gen", tool, "--plain"],
                code,
            )
        shims = {}
        for variant, src in trees.items():  # also warms the caches (pages' index, pyc)
            code = own_cache(env, variant, src)
            argv = [sys.executable, "-m", "atipkit", "gen", tool, "--json"]
            done = subprocess.run(argv, env=code, capture_output=True, check=False)
            shims[variant] = _steady(json.loads(done.stdout)) if done.returncode == 0 else None
        walls: dict[str, list[float]] = {label: [] for label in argvs}
        cpus: dict[str, list[float]] = {label: [] for label in argvs}
        for _ in range(runs):
            for label, (argv, code) in argvs.items():
                wall, cpu_s = cpu_timed(argv, code)
                walls[label].append(wall)
                cpus[label].append(cpu_s)
        figures: dict[str, Any] = {
            label: {
                "wall_ms": statistics.median(walls[label]) * 1000,
                "cpu_ms": statistics.median(cpus[label]) * 1000,
            }
            for label in argvs
        }
        help_ms = figures[f"{tool} --help"]["wall_ms"]
        for variant in trees:
            figures[f"ratio [{variant}]"] = figures[f"atip gen [{variant}]"]["wall_ms"] / help_ms
        figures["same shim"] = len({json.dumps(s, sort_keys=True) for s in shims.values()}) == 1
        out[tool] = figures
        print(json.dumps({tool: figures}), file=sys.stderr)  # as it goes: a tree may be long
    return out


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def process(argv: list[str], env: dict[str, str]) -> Callable[[], object]:
    return lambda: subprocess.run(argv, env=env, capture_output=True, check=False)


def in_process_steps(tool: str) -> dict[str, Callable[[], object]]:
    """The steps of `generate_shim(tool)`, each to be timed alone (imported here, once)."""
    from atipkit.infer.generate import generate_shim
    from atipkit.infer.manpage import ManPages, read_man_file
    from atipkit.model import dumps
    from atipkit.probe import run_sandboxed
    from atipkit.trust.digest import sha256_file
    from atipkit.validation import validate

    real = shutil.which(tool)
    true = shutil.which("true")
    if real is None or true is None:
        sys.exit(f"{tool} or true is not on PATH")
    index = getattr(ManPages, "load", ManPages)  # ManPages() listed the pages every time
    page = index().find(tool)
    shim = dumps(generate_shim(tool))
    return {
        "generate_shim (all of it)": lambda: generate_shim(tool),
        "  sandbox start (true)": lambda: run_sandboxed(true, [], timeout=5),
        f"  {tool} --help, sandboxed": lambda: run_sandboxed(real, ["--help"], timeout=5),
        "  index of man pages": index,
        "  rendering the page": lambda: read_man_file(page, tool) if page else None,
        "  hashing the binary": lambda: sha256_file(real),
        "  validating the shim": lambda: validate(shim),
    }


def atip_processes(
    src: Path, tool: str, query: str, env: dict[str, str], home: dict[str, str]
) -> dict[str, Callable[[], object]]:
    """The atip processes of one source tree: `home` is the registry `atip search` reads."""
    code = {**env, "PYTHONPATH": str(src)}
    atip = [sys.executable, "-m", "atipkit"]
    return {
        f"atip gen {tool} --plain": process([*atip, "gen", tool, "--plain"], code),
        "atip --version": process([*atip, "--version"], {**code, **home}),
        f"atip search {query!r}": process([*atip, "search", query], {**code, **home}),
        "  python start + import atipkit.cli": process(
            [sys.executable, "-c", "import atipkit.cli"], code
        ),
    }


def registry_home(home: Path) -> dict[str, str]:
    """The XDG directories of bench/search.py's registry home (`--home`)."""
    if not (home / "data" / "agent-tools" / "registry.json").is_file():
        sys.exit(f"no registry under {home}: fill it with `python bench/search.py --home {home}`")
    return {
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "ATIP_CACHE_DIR": str(home / "cache" / "agent-tools"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", default="ls", help="a simple tool on PATH (default: ls)")
    parser.add_argument("--runs", type=int, default=15, help="runs of each to take medians of")
    parser.add_argument("--base", type=Path, help="the `src` of the code before, timed beside")
    parser.add_argument(
        "--home",
        type=Path,
        default=Path.home() / ".cache/atipkit-bench/search",
        help="the registry home `atip search` reads (bench/search.py's --home)",
    )
    parser.add_argument("--query", default="compress a file", help="what `atip search` looks for")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    parser.add_argument("--tools", help="comma-separated tools: atip gen alone (see above)")
    args = parser.parse_args()
    if args.tools:
        here = {"after": Path(__file__).resolve().parent.parent / "src"}
        trees = {"before": args.base.resolve(), **here} if args.base else here
        env = {k: v for k, v in os.environ.items() if not k.startswith("ATIP_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
            env.update(
                XDG_DATA_HOME=str(Path(tmp) / "data"),
                XDG_CACHE_HOME=str(Path(tmp) / "cache"),
                XDG_CONFIG_HOME=str(Path(tmp) / "config"),
                PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"),
            )
            figures = gen_only(args.tools.split(","), trees, args.runs, env)
        machine = {"cpu": cpu(), "cores": cores(), "python": sys.version.split()[0]}
        print(json.dumps({"machine": machine, "load": os.getloadavg(), "tools": figures}, indent=2))
        return
    home = registry_home(args.home.resolve())
    trees = {"after": Path(__file__).resolve().parent.parent / "src"}
    if args.base is not None:
        trees["before"] = args.base.resolve()

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ATIP_")}
        # compiled modules kept, as an installed package has them (a first, unmeasured
        # run writes them), in the temporary directory rather than beside the sources
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(
            XDG_DATA_HOME=str(Path(tmp) / "data"),
            XDG_CACHE_HOME=str(Path(tmp) / "cache"),
            XDG_CONFIG_HOME=str(Path(tmp) / "config"),
            PYTHONPYCACHEPREFIX=str(Path(tmp) / "pycache"),
        )
        os.environ.update(env)
        python = sys.executable
        measures: dict[str, Callable[[], object]] = {
            f"{args.tool} --help": process([args.tool, "--help"], env),
            "  python start, no site (-S)": process([python, "-S", "-c", "pass"], env),
            "  python start": process([python, "-c", "pass"], env),
        }
        for variant, src in trees.items():
            processes = atip_processes(src, args.tool, args.query, env, home)
            measures.update({f"{label} [{variant}]": run for label, run in processes.items()})
        after = {**env, "PYTHONPATH": str(trees["after"])}
        script = Path(python).parent / "atip"  # the installed entry point, no pyenv shim
        if script.is_file():
            measures["atip --version, the console script [after]"] = process(
                [str(script), "--version"], after
            )
        measures.update(
            {
                "  ... + import what gen uses": process(
                    [
                        python,
                        "-c",
                        "import atipkit.cli, atipkit.infer.generate, atipkit.validation",
                    ],
                    after,
                ),
                "  ... + the process's first sandboxed run": process(
                    [python, "-c", FIRST_RUN.format(tool=args.tool)], after
                ),
            }
        )
        measures.update(in_process_steps(args.tool))
        for action in measures.values():  # once each, unmeasured: caches warm
            action()
        times: dict[str, list[float]] = {label: [] for label in (*measures, *STAGES)}
        stages = [python, "-c", SEARCH_STAGES.format(query=args.query)]
        for _ in range(args.runs):
            for label, action in measures.items():
                times[label].append(timed(action))
            done = subprocess.run(stages, env={**after, **home}, capture_output=True, text=True)
            for label, seconds in zip(STAGES, done.stdout.split(), strict=True):
                times[label].append(float(seconds))
    medians = {label: statistics.median(values) * 1000 for label, values in times.items()}
    ratios = {}
    for variant in trees:
        gen = medians[f"atip gen {args.tool} --plain [{variant}]"]
        search = medians[f"atip search {args.query!r} [{variant}]"]
        version = medians[f"atip --version [{variant}]"]
        ratios[f"gen / {args.tool} --help [{variant}]"] = gen / medians[f"{args.tool} --help"]
        ratios[f"search / --version [{variant}]"] = search / version
    sandboxed = medians[f"  {args.tool} --help, sandboxed"]
    ratios["generate_shim / sandboxed --help"] = medians["generate_shim (all of it)"] / sandboxed
    figures: dict[str, Any] = {
        "tool": args.tool,
        "query": args.query,
        "runs": args.runs,
        "interpreter": python,
        "trees": {variant: str(src) for variant, src in trees.items()},
        "medians_ms": medians,
        "ratios": ratios,
        "machine": {"cpu": cpu(), "cores": cores(), "python": sys.version.split()[0]},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    machine = figures["machine"]
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(f"interpreter: {python}; trees: {figures['trees']}")
    print(f"medians of {args.runs} runs, taken in turns:")
    for label, value in medians.items():
        print(f"  {label:56} {value:8.1f} ms")
    for label, ratio in ratios.items():
        verdict = (
            ""
            if label.startswith("generate")
            else ("ok" if ratio <= TARGET_RATIO else "OVER TARGET")
        )
        print(f"{label:58} {ratio:6.2f}x {verdict}")
    print(f"(target {TARGET_RATIO}x)")


if __name__ == "__main__":
    main()
