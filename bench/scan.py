"""Scanning a directory of 1 000 executables, and resolving a cached tool.

    python bench/scan.py [--executables N] [--atip N] [--runs N] [--cold-runs N]
                         [--baseline SRC] [--json]

Everything happens in a temporary directory (registry, cache and executables), so the
figures do not depend on this machine's PATH. Medians in milliseconds:
- cold scan: every executable probed (sandboxed `--agent`) and hashed, `--jobs 8`, in a
  fresh process each time (as `atip scan` is: the sandbox's start is counted), side by
  side: with isolation (`ATIP_SANDBOX=auto`: namespaces) and without
  (`ATIP_SANDBOX=none`: no namespaces, orphans still reaped), runs alternating; with
  `--baseline SRC`, also the atipkit in SRC (another checkout's `src`, say the commit
  before the sandbox) — the median ratios are printed;
- warm rescan: nothing changed, so nothing is probed; next to it, the cost of only
  `stat`-ing the same files, the floor a rescan cannot beat;
- resolve a cached tool in-process (registry read, fingerprint check, cached metadata).

Targets: warm rescan < 100 ms for 1 000 entries, resolve < 5 ms (issue 4); a cold scan
with isolation at most 1.3 times one without (issue 19).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _machine import cpu
from _synth import median_ms

TARGETS_MS = {"warm rescan": 100.0, "resolve (cached)": 5.0}
ISOLATION_RATIO = 1.3


def make_executables(root: Path, total: int, atip: int) -> None:
    root.mkdir(mode=0o755)
    for i in range(total):
        path = root / f"tool{i:04d}"
        if i < atip:
            doc = {
                "atip": {"version": "0.6"},
                "name": path.name,
                "version": "1.0",
                "description": "A benchmark tool",
                "commands": {"run": {"description": "Run", "effects": {"network": False}}},
            }
            body = f"[ \"$1\" = --agent ] && echo '{json.dumps(doc)}' && exit 0\nexit 1\n"
        else:
            body = "exit 1\n"
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)


def isolate_env(root: Path) -> None:
    """Registry, configuration and cache of this run's own, under `root`."""
    os.environ.update(
        XDG_DATA_HOME=str(root / "data"),
        XDG_CONFIG_HOME=str(root / "config"),
        ATIP_CACHE_DIR=str(root / "cache"),
    )
    os.environ.pop("ATIP_REFRESH", None)


def one_cold(bin_dir: str, atip: int) -> None:
    """A cold scan of `bin_dir` in this fresh process: its milliseconds and isolation
    as JSON on stdout."""
    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        isolate_env(Path(tmp))
        start = time.perf_counter()
        from atipkit import scan

        report = scan([bin_dir], jobs=8)
        ms = (time.perf_counter() - start) * 1000
    assert len(report.found) == atip, report.found
    print(json.dumps({"ms": ms, "isolation": getattr(report, "isolation", None)}))


def cold_scans(bin_dir: Path, atip: int, runs: int, baseline: str | None) -> dict:
    """Cold scans in fresh processes, the variants alternating: the medians (ms), what
    isolated each, and the ratios."""
    variants = {"isolated": ("auto", None), "not isolated": ("none", None)}
    if baseline:
        variants["baseline"] = ("none", baseline)
    times: dict[str, list[float]] = {name: [] for name in variants}
    isolation: dict[str, str | None] = {}
    for _ in range(runs):
        for name, (mode, src) in variants.items():
            env = {**os.environ, "ATIP_SANDBOX": mode}
            if src:
                env["PYTHONPATH"] = src
            done = subprocess.run(
                [sys.executable, __file__, "--one-cold", str(bin_dir), "--atip", str(atip)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            answer = json.loads(done.stdout.splitlines()[-1])
            times[name].append(answer["ms"])
            isolation[name] = answer["isolation"]
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratios = {"isolated / not isolated": medians["isolated"] / medians["not isolated"]}
    if baseline:
        ratios["isolated / baseline"] = medians["isolated"] / medians["baseline"]
        ratios["not isolated / baseline"] = medians["not isolated"] / medians["baseline"]
    return {"medians": medians, "runs": times, "isolation": isolation, "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--executables", type=int, default=1000)
    parser.add_argument("--atip", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--baseline", help="another atipkit source tree to compare with")
    parser.add_argument("--one-cold", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.one_cold:
        one_cold(args.one_cold, args.atip)
        return

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        root = Path(tmp)
        bin_dir = root / "bin"
        make_executables(bin_dir, args.executables, args.atip)
        cold = cold_scans(bin_dir, args.atip, args.cold_runs, args.baseline)
        isolate_env(root)
        from atipkit import scan
        from atipkit.registry.local import LocalRegistry
        from atipkit.resolve import resolve_tool

        first = scan([str(bin_dir)], jobs=8)
        assert len(first.found) == args.atip, first.found
        warm_ms = median_ms(lambda: scan([str(bin_dir)], jobs=8), args.runs)
        warm = scan([str(bin_dir)], jobs=8)
        assert warm.probed == 0

        def stat_all() -> None:
            for entry in os.scandir(bin_dir):
                os.stat(os.path.realpath(entry.path))

        stat_ms = median_ms(stat_all, args.runs)
        registry = LocalRegistry()
        name = str(bin_dir / "tool0000")
        resolve_tool(name, registry=registry)
        resolve_ms = median_ms(lambda: resolve_tool(name, registry=registry), args.runs * 10)
        assert resolve_tool(name, registry=registry).cached

    figures = {
        "executables": args.executables,
        "atip tools": args.atip,
        "cold scan": cold,
        "warm rescan": warm_ms,
        "stat only": stat_ms,
        "resolve (cached)": resolve_ms,
        "python": platform.python_version(),
        "cpu": cpu(),
        "cores": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{args.executables} executables ({args.atip} speak ATIP), {cpu()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for name, value in cold["medians"].items():
        print(f"cold scan, {name:14} {value:10.2f} ms  ({cold['isolation'][name]})")
    for name, ratio in cold["ratios"].items():
        verdict = ""
        if name.startswith("isolated"):
            verdict = f"≤ {ISOLATION_RATIO} " + (
                "ok" if ratio <= ISOLATION_RATIO else "OVER TARGET"
            )
        print(f"  {name:28} {ratio:6.2f}×  {verdict}")
    for label in ("warm rescan", "stat only", "resolve (cached)"):
        value = figures[label]
        target = TARGETS_MS.get(label)
        verdict = (
            ""
            if target is None
            else (f"< {target:g} " + ("ok" if value < target else "OVER TARGET"))
        )
        print(f"{label:20} {value:10.2f} ms  {verdict}")


if __name__ == "__main__":
    main()
