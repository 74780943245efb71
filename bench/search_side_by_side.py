"""Two trees' `atip search` processes side by side (issue 21, decision 585).

    python bench/search_side_by_side.py --home H --old-src DIR --old-cache C1 --new-cache C2
                                        [--rounds 11] [-- ARGS...]

Runs `atip ARGS` (default: a fused search of "list files", JSON) for the old tree
(`--old-src`, e.g. `git archive main src | tar -x -C DIR`) and this one, alternated
round by round, each with its own warm cache directory (copies of one, so that neither
tree's file formats disturb the other's) over `--home`'s registry, and prints each
one's median wall and CPU time (user + sys), the medians of the per-round ratios and
the 1-minute load: a machine shared with other work moves the wall clock, and the CPU
time less.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

NEW_SRC = Path(__file__).resolve().parent.parent / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="bench/search.py's home")
    parser.add_argument("--old-src", type=Path, required=True)
    parser.add_argument("--old-cache", type=Path, required=True)
    parser.add_argument("--new-cache", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("args", nargs="*", default=["search", "list files", "--json"])
    args = parser.parse_args()
    home = args.home
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base |= {
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "OPENBLAS_NUM_THREADS": "1",
    }
    trees = {"old": (args.old_src, args.old_cache), "new": (NEW_SRC, args.new_cache)}
    argv = [sys.executable, "-m", "atipkit", *args.args]

    def run(tree: str) -> tuple[float, float]:
        src, cache = trees[tree]
        env = {**base, "PYTHONPATH": str(src), "ATIP_CACHE_DIR": str(cache)}
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=True)
        wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        return wall * 1000, cpu * 1000

    for tree in trees:  # warm: each cache brought up to date once
        run(tree)
    walls: dict[str, list[float]] = {tree: [] for tree in trees}
    cpus: dict[str, list[float]] = {tree: [] for tree in trees}
    loads = []
    for number in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for tree in ("old", "new") if number % 2 == 0 else ("new", "old"):
            wall, cpu = run(tree)
            walls[tree].append(wall)
            cpus[tree].append(cpu)
    for tree in trees:
        print(
            f"{tree}: wall {statistics.median(walls[tree]):.0f} ms, "
            f"CPU {statistics.median(cpus[tree]):.0f} ms (medians of {args.rounds})"
        )
    for name, figures in (("wall", walls), ("CPU", cpus)):
        ratios = [new / old for new, old in zip(figures["new"], figures["old"], strict=True)]
        print(f"new / old, {name}: median of per-round ratios {statistics.median(ratios):.3f}")
    low, high = min(loads), max(loads)
    print(f"1-minute load: median {statistics.median(loads):.1f}, {low:.1f}-{high:.1f}")


if __name__ == "__main__":
    main()
