"""`atip gen` of a simple tool against running the tool's own `--help`, side by side.

    python bench/gen_speed.py [--tool ls] [--runs N] [--json]

Each figure is the median of N runs, taken in turns (one of each, then again) so that a
change of load on the machine falls on all of them alike:
- `TOOL --help`: the tool's own help, a process;
- `atip gen TOOL --plain`: the whole command, a fresh Python process (with compiled
  modules, as an installed package has them: the environment's PYTHONDONTWRITEBYTECODE
  is dropped, PYTHONPYCACHEPREFIX points into a temporary directory);
- what that time is made of: Python's start (`python -c pass`), importing the command
  line (`python -c "import atipkit.cli"`), and what `gen` imports, then the process's
  first sandboxed run (the sandbox starts once a process), and, in one process, each step of
  `generate_shim`: the sandbox's start (`run_sandboxed` of `true`), the sandboxed
  `TOOL --help`, the index of man pages (`ManPages.load`, cached), rendering the page,
  hashing the binary, and validating the shim.

Target (issue 20): `atip gen` of a simple tool within 1.5x the time of its `--help`; the
in-process generation is compared with the sandboxed `--help` it cannot do without.
"""

from __future__ import annotations

import argparse
import json
import os
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", default="ls", help="a simple tool on PATH (default: ls)")
    parser.add_argument("--runs", type=int, default=15, help="runs of each to take medians of")
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()

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
            f"atip gen {args.tool} --plain": process(
                [python, "-m", "atipkit", "gen", args.tool, "--plain"], env
            ),
            "  python start": process([python, "-c", "pass"], env),
            "  python start + import atipkit.cli": process(
                [python, "-c", "import atipkit.cli"], env
            ),
            "  ... + import what gen uses": process(
                [python, "-c", "import atipkit.cli, atipkit.infer.generate, atipkit.validation"],
                env,
            ),
            "  ... + the process's first sandboxed run": process(
                [python, "-c", FIRST_RUN.format(tool=args.tool)], env
            ),
        }
        measures.update(in_process_steps(args.tool))
        for action in measures.values():  # once each, unmeasured: caches warm
            action()
        times: dict[str, list[float]] = {label: [] for label in measures}
        for _ in range(args.runs):
            for label, action in measures.items():
                times[label].append(timed(action))
    medians = {label: statistics.median(values) * 1000 for label, values in times.items()}
    help_ms = medians[f"{args.tool} --help"]
    gen_ms = medians[f"atip gen {args.tool} --plain"]
    sandboxed = medians[f"  {args.tool} --help, sandboxed"]
    figures: dict[str, Any] = {
        "tool": args.tool,
        "runs": args.runs,
        "medians_ms": medians,
        "ratio gen / --help": gen_ms / help_ms,
        "ratio generate_shim / sandboxed --help": medians["generate_shim (all of it)"] / sandboxed,
        "machine": {"cpu": cpu(), "cores": cores(), "python": sys.version.split()[0]},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    machine = figures["machine"]
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(f"medians of {args.runs} runs, taken in turns:")
    for label, value in medians.items():
        print(f"  {label:44} {value:8.1f} ms")
    ratio = figures["ratio gen / --help"]
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"atip gen / {args.tool} --help: {ratio:.1f}x (target {TARGET_RATIO}x) {verdict}")
    inner = figures["ratio generate_shim / sandboxed --help"]
    print(f"generate_shim / sandboxed {args.tool} --help: {inner:.1f}x")


if __name__ == "__main__":
    main()
