"""Scanning a directory of 1 000 executables, and resolving a cached tool.

    python bench/scan.py [--executables N] [--atip N] [--runs N] [--json]

Everything happens in a temporary directory (registry, cache and executables), so the
figures do not depend on this machine's PATH. Medians in milliseconds:
- cold scan: every executable probed (sandboxed `--agent`) and hashed, `--jobs 8`;
- warm rescan: nothing changed, so nothing is probed; next to it, the cost of only
  `stat`-ing the same files, the floor a rescan cannot beat;
- resolve a cached tool in-process (registry read, fingerprint check, cached metadata).

Targets (issue 4): warm rescan < 100 ms for 1 000 entries, resolve < 5 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from _synth import median_ms

TARGETS_MS = {"warm rescan": 100.0, "resolve (cached)": 5.0}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--executables", type=int, default=1000)
    parser.add_argument("--atip", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        root = Path(tmp)
        os.environ.update(
            XDG_DATA_HOME=str(root / "data"),
            XDG_CONFIG_HOME=str(root / "config"),
            ATIP_CACHE_DIR=str(root / "cache"),
        )
        os.environ.pop("ATIP_REFRESH", None)
        from atipkit.registry.local import LocalRegistry
        from atipkit.resolve import resolve_tool
        from atipkit.scan import scan

        bin_dir = root / "bin"
        make_executables(bin_dir, args.executables, args.atip)
        start = time.perf_counter()
        cold = scan([str(bin_dir)], jobs=8)
        cold_ms = (time.perf_counter() - start) * 1000
        assert len(cold.found) == args.atip, cold.found
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
        "cold scan": cold_ms,
        "warm rescan": warm_ms,
        "stat only": stat_ms,
        "resolve (cached)": resolve_ms,
        "python": platform.python_version(),
        "cores": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{args.executables} executables ({args.atip} speak ATIP), "
        f"Python {platform.python_version()}, {os.cpu_count()} cores"
    )
    for label in ("cold scan", "warm rescan", "stat only", "resolve (cached)"):
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
