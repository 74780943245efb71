"""The first index of a machine, embeddings included, side by side (issue 21, decision 656).

    python bench/first_index.py --home H [--old-src DIR] [--rounds 3] [--tools N]
                                [--query TEXT] [--json]

Times a first `atip search` (fused, with the `rerank` extra: the default) in an empty
cache directory, as a new user's first search runs: the machine index built from the
registry, the model's files hashed, every command's and passage's vector embedded. The
registry is `--home`'s (bench/search.py's, which `atip scan --infer` filled with the
whole PATH) and, with `--tools N`, also a deterministic sample of N of its executables:
the N binaries first by the sha256 of their path, each with every registry name that
runs it (a multi-call binary's names stay together), in a copy of the data directory.
The issue's target names a 1 000-tool machine; a PATH of more tools is measured whole
first, and the sample is labelled as one.

With `--old-src` (e.g. `git archive main src | tar -x -C DIR`) that tree's process and
this one's alternate round by round; each prints its medians of wall and CPU time (user
+ sys, every thread), and the medians of the per-round ratios; the 1-minute load is
printed too, since the wall clock of a shared machine is not the code's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NEW_SRC = Path(__file__).resolve().parent.parent / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="bench/search.py's home")
    parser.add_argument("--old-src", type=Path, help="another tree's src, run alternately")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tools", type=int, help="also over a sample of this many binaries")
    parser.add_argument("--query", default="list files")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = {"new": NEW_SRC} | ({"old": args.old_src} if args.old_src else {})
    with tempfile.TemporaryDirectory() as scratch:
        registries = {"whole PATH": args.home / "data"}
        if args.tools:
            sample = Path(scratch) / "sample"
            registries[f"sample of {args.tools} binaries"] = sampled(
                args.home / "data", sample, args.tools
            )
        figures = {
            label: rounds(args, data, trees, Path(scratch)) for label, data in registries.items()
        }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for label, row in figures.items():
        print(f"{label}: {row['tools']} tools, {row['binaries']} binaries")
        for tree in trees:
            print(
                f"  {tree}: wall {row[tree]['wall s']:.1f} s, CPU {row[tree]['cpu s']:.1f} s"
                f" (medians of {args.rounds})"
            )
        for name in ("wall", "cpu"):
            if f"{name} ratio" in row:
                print(f"  new / old, {name}: median of per-round ratios {row[f'{name} ratio']:.3f}")
        print(f"  1-minute load: {row['load']}")


def sampled(data: Path, into: Path, count: int) -> Path:
    """A copy of the data directory `data` whose registry keeps `count` binaries: those
    first by the sha256 of their path (the same on every run over the same PATH), each
    with all its names. Returns the copy."""
    shutil.copytree(data, into)
    registry = into / "agent-tools" / "registry.json"
    document = json.loads(registry.read_text())
    binaries = sorted(
        {entry["path"] for entry in document["tools"].values()},
        key=lambda path: hashlib.sha256(path.encode()).hexdigest(),
    )
    if count > len(binaries):
        sys.exit(f"--tools {count}: the registry has {len(binaries)} binaries")
    kept = set(binaries[:count])
    document["tools"] = {
        name: entry for name, entry in document["tools"].items() if entry["path"] in kept
    }
    registry.write_text(json.dumps(document, indent=2))
    return into


def rounds(
    args: argparse.Namespace, data: Path, trees: dict[str, Path], scratch: Path
) -> dict[str, Any]:
    """Each tree's first search over `data`'s registry, `args.rounds` times, alternated."""
    tools = json.loads((data / "agent-tools" / "registry.json").read_text())["tools"]
    walls: dict[str, list[float]] = {tree: [] for tree in trees}
    cpus: dict[str, list[float]] = {tree: [] for tree in trees}
    loads = []
    for number in range(args.rounds):
        loads.append(round(os.getloadavg()[0], 1))
        for tree in list(trees) if number % 2 == 0 else list(trees)[::-1]:
            wall, cpu = first_search(args, data, trees[tree], scratch)
            walls[tree].append(wall)
            cpus[tree].append(cpu)
    row: dict[str, Any] = {
        "tools": len(tools),
        "binaries": len({entry["path"] for entry in tools.values()}),
        "load": f"median {statistics.median(loads)}, {min(loads)}-{max(loads)}",
    }
    for tree in trees:
        row[tree] = {
            "wall s": round(statistics.median(walls[tree]), 1),
            "cpu s": round(statistics.median(cpus[tree]), 1),
            "walls": [round(w, 1) for w in walls[tree]],
            "cpus": [round(c, 1) for c in cpus[tree]],
        }
    if "old" in trees:
        for name, figures in (("wall", walls), ("cpu", cpus)):
            ratios = [new / old for new, old in zip(figures["new"], figures["old"], strict=True)]
            row[f"{name} ratio"] = round(statistics.median(ratios), 3)
    return row


def first_search(
    args: argparse.Namespace, data: Path, src: Path, scratch: Path
) -> tuple[float, float]:
    """One `atip search` with `src` in a new empty cache directory: its wall and CPU
    seconds (user + sys, every thread)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "PYTHONPATH": str(src),
        "XDG_DATA_HOME": str(data),
        "XDG_CONFIG_HOME": str(args.home / "config"),
        "XDG_CACHE_HOME": str(args.home / "cache"),
        "OPENBLAS_NUM_THREADS": "1",
    }
    with tempfile.TemporaryDirectory(dir=scratch) as cache:
        env["ATIP_CACHE_DIR"] = cache
        argv = [sys.executable, "-m", "atipkit", "search", args.query, "--json"]
        before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0 or '"ok":true' not in done.stdout.replace(" ", ""):
            sys.exit(f"atip search failed ({done.returncode}): {done.stdout[-2000:]}")
        if not list(Path(cache).glob("search/vectors.bin")):
            sys.exit("atip search kept no vectors: is the rerank extra installed?")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


if __name__ == "__main__":
    main()
