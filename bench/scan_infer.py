"""`atip scan --infer` over this machine's real PATH: the first run, then re-runs.

    python bench/scan_infer.py [--reruns N] [--budget S] [--jobs N] [--tool NAME]... [--json]
        [--base SRC [--rounds N] [--keep DIR]]

Runs the real command (`python -m atipkit scan --infer --json`, a fresh process each time)
with XDG_DATA_HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME in a temporary directory — never the
user's registry, cache or configuration — and no ATIP_* setting of the environment's
(no remote registry is asked, nothing is forced to refresh). Reported:
- the first run: seconds, and what became of every executable — native (speaks ATIP),
  shim, inferred (from the man page alone / from `--help` in the sandbox), denied (never
  run; of which without a man page, so not described), aliases (one binary under several
  names: recorded once), failed, left for later (the budget ran out), cut short (inferred
  with part of the tree unread: `inference.cut`, decision 578);
- re-runs (nothing changed): the median of N fresh processes, and that none inferred
  anything again;
- the names `registry.json` records after the first run, and how many of them have a
  document of their own in their binary's shim (`_names`);
- for each `--tool` (default: git), what its inferred shim says after the first run, when
  the whole PATH was inferred at once: commands, of which with options, subcommands of
  theirs (`git remote add`), and whether its budget cut it short (`incomplete`).

With `--base SRC` (another tree's `src`: `git archive REV src | tar -x -C DIR`), the first
run of that tree ("before") and of this one ("after") are taken in turns, `--rounds` times
(before, after, after, before, ...: a change of load falls on both alike), each with a home
of its own, and reported as wall-clock seconds, the CPU seconds of the whole process tree
(user + system of the scan and every process it waited for: what the load does not
stretch) and the load average at its start, with medians; then the tools whose shims
differ between the two trees' first rounds (by name, their `_generation` left out), so
that a speed-up is seen not to change what is inferred. `--keep DIR` keeps each run's
shims under DIR/VARIANT-ROUND.

Targets (issue 11): the first run within 10 minutes for about 1 500 executables, re-runs in
seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import cores, cpu

TARGETS_S = {"first run": 600.0, "re-run": 10.0}


def run_scan(env: dict[str, str], extra: list[str]) -> tuple[float, dict[str, Any]]:
    """One `atip scan --infer` process: its wall-clock seconds and its result."""
    seconds, _, result = timed_scan(env, extra)
    return seconds, result


def timed_scan(env: dict[str, str], extra: list[str]) -> tuple[float, float, dict[str, Any]]:
    """One `atip scan --infer` process: its wall-clock seconds, the CPU seconds of its
    process tree (each descendant is reaped by the time it exits: the sandbox's wardens
    reap the programs, the scan its wardens and groff) and its result."""
    argv = [sys.executable, "-m", "atipkit", "scan", "--infer", "--json", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        sys.exit(f"atip scan --infer failed ({done.returncode}): {done.stdout[-2000:]!r}")
    return seconds, cpu_s, json.loads(done.stdout)["result"]


def home_env(root: Path, src: Path | None = None) -> dict[str, str]:
    """This environment without its ATIP_* settings, XDG directories under `root`, and
    (given `src`) PYTHONPATH at that tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATIP_")}
    env.update(
        XDG_DATA_HOME=str(root / "data"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_CONFIG_HOME=str(root / "config"),
    )
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def shim_dir(root: Path) -> Path:
    return root / "data" / "agent-tools" / "shims" / "sha256"


def shims_by_name(shims: Path) -> dict[str, dict[str, Any]]:
    """The shims under `shims` by name, their `_generation` (when, how long) left out."""
    out = {}
    for path in shims.glob("*.json"):
        shim = json.loads(path.read_text())
        shim.pop("_generation", None)
        out[str(shim.get("name"))] = shim
    return out


def side_by_side(args: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    """The first runs of `--base`'s tree and this one's, in turns (see the docstring)."""
    here = Path(__file__).resolve().parents[1] / "src"
    trees = {"before": args.base.resolve(), "after": here}
    turns = (("before", "after"), ("after", "before"))
    order = [variant for r in range(args.rounds) for variant in turns[r % 2]]
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    firsts: dict[str, dict[str, dict[str, Any]]] = {}
    for variant in order:
        with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
            root = Path(tmp)
            load = os.getloadavg()[0]
            seconds, cpu_s, result = timed_scan(home_env(root, trees[variant]), extra)
            shims = shim_dir(root)
            runs[variant].append(
                {
                    "seconds": seconds,
                    "cpu seconds": cpu_s,
                    "load at start": load,
                    "inferred": result["inference"]["inferred"],
                    "cut": result["inference"].get("cut", []),
                    "tools": tool_figures(shims, args.tool or ["git"]),
                }
            )
            print(
                f"{variant}: {seconds:.1f} s, CPU {cpu_s:.1f} s, load {load:.1f}", file=sys.stderr
            )
            firsts.setdefault(variant, shims_by_name(shims))
            if args.keep is not None:
                shutil.copytree(shims, args.keep / f"{variant}-{len(runs[variant])}")
    before, after = firsts["before"], firsts["after"]
    differ = sorted(n for n in before.keys() | after.keys() if before.get(n) != after.get(n))
    return {
        "trees": {variant: str(path) for variant, path in trees.items()},
        "runs": runs,
        "medians": {
            variant: {
                key: statistics.median(r[key] for r in done)
                for key in ("seconds", "cpu seconds", "load at start")
            }
            for variant, done in runs.items()
        },
        "shims differing (first rounds)": differ,
    }


def counts(result: dict[str, Any]) -> dict[str, Any]:
    inference = result["inference"]
    found = result["found"]
    return {
        "executables": result["executables"] + len(inference["denied"]),
        "probed": result["executables"],
        "native": sum(f["source"] == "native" for f in found),
        "shim": sum(f["source"] == "shim" for f in found),
        "inferred (recorded)": result["inferred"],
        "inferred by this run": inference["inferred"],
        "  from the man page alone": inference["from_man_page"],
        "  from --help (sandboxed)": inference["from_help"],
        "inferred before (reused)": inference["reused"],
        "aliases": len(inference["aliases"]),
        "denied (never run)": len(inference["denied"]),
        "  without a man page": len(inference["skipped"]),
        "failed": len(inference["failed"]),
        "left for later": len(inference["left"]),
        "cut short (part unread)": len(inference.get("cut", [])),
    }


def tool_figures(shims: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """What the first run inferred for each of `names` (by the shims' `name`)."""
    out: dict[str, dict[str, Any]] = {}
    for path in shims.glob("*.json"):
        shim = json.loads(path.read_text())
        if shim.get("name") not in names:
            continue
        commands = shim.get("commands", {})
        out[shim["name"]] = {
            "commands": len(commands),
            "with options": sum(1 for c in commands.values() if c.get("options")),
            "their subcommands": sum(len(c.get("commands", {})) for c in commands.values()),
            "method": shim.get("_generation", {}).get("method"),
            "incomplete": bool(shim.get("_generation", {}).get("incomplete")),
        }
    return out


def name_figures(registry: Path, shims: Path) -> dict[str, int]:
    """After the first run: the names `registry.json` records (every name of an inferred
    binary on PATH, decision 276), and of those, the ones its shim gives a document of
    their own (`_names`)."""
    recorded = json.loads(registry.read_text())["tools"] if registry.is_file() else {}
    own = sum(len(json.loads(path.read_text()).get("_names", {})) for path in shims.glob("*.json"))
    return {"recorded": len(recorded), "with a document of their own": own}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reruns", type=int, default=5, help="re-runs to take the median of")
    parser.add_argument("--budget", type=float, help="--budget for the scans (default: atip's)")
    parser.add_argument("--jobs", type=int, help="--jobs for the scans (default: atip's)")
    parser.add_argument(
        "--tool", action="append", help="report what this tool's shim says (default: git)"
    )
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    parser.add_argument("--base", type=Path, help="the `src` of the code before, run in turns")
    parser.add_argument("--rounds", type=int, default=1, help="first runs of each (--base)")
    parser.add_argument("--keep", type=Path, help="keep each run's shims here (--base)")
    args = parser.parse_args()
    extra = []
    if args.budget is not None:
        extra += ["--budget", str(args.budget)]
    if args.jobs is not None:
        extra += ["--jobs", str(args.jobs)]
    if args.base is not None:
        compared = side_by_side(args, extra)
        compared["machine"] = {"cpu": cpu(), "cores": cores(), "python": platform.python_version()}
        print(json.dumps(compared, indent=2))
        return

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        root = Path(tmp)
        env = home_env(root)
        first_s, first = run_scan(env, extra)
        shims_path = shim_dir(root)
        tools = tool_figures(shims_path, args.tool or ["git"])
        names = name_figures(root / "data" / "agent-tools" / "registry.json", shims_path)
        reruns = [run_scan(env, extra) for _ in range(args.reruns)]
        shims = len(list(shims_path.glob("*.json")))
    again = [r for _, r in reruns if r["inference"]["inferred"]]
    figures: dict[str, Any] = {
        "command": "atip scan --infer --json " + " ".join(extra),
        "first run": first_s,
        "re-run": statistics.median(s for s, _ in reruns) if reruns else None,
        "re-runs": len(reruns),
        "re-runs that inferred again": len(again),
        "first": counts(first),
        "shim files": shims,
        "names": names,
        "tools": tools,
        "failed": first["inference"]["failed"],
        "cut": first["inference"].get("cut", []),
        "skipped": first["inference"]["skipped"],
        "machine": {"cpu": cpu(), "cores": cores(), "python": platform.python_version()},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    machine = figures["machine"]
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(f"command: {figures['command']}")
    for label in ("first run", "re-run"):
        value = figures[label]
        if value is None:
            continue
        target = TARGETS_S[label]
        verdict = "ok" if value < target else "OVER TARGET"
        what = " (median)" if label == "re-run" else ""
        print(f"{label + what:28} {value:9.2f} s  < {target:g} s {verdict}")
    print(f"re-runs that inferred again: {len(again)} of {len(reruns)}")
    for label, value in figures["first"].items():
        print(f"  {label:30} {value:6}")
    print(
        f"  names recorded in registry.json {names['recorded']}, "
        f"with a document of their own {names['with a document of their own']}"
    )
    for name, values in tools.items():
        print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in values.items()))
    for failure in figures["failed"]:
        print(f"  failed: {failure['name']}: {failure['error']}")
    if figures["cut"]:
        print(f"  cut short: {', '.join(figures['cut'])}")


if __name__ == "__main__":
    main()
