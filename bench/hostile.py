"""One `atip scan` over the 40 entries of the hostile-executable corpus
(tests/fixtures/hostile): wall time and peak memory, for each isolation mode.

    python bench/hostile.py [--runs N] [--modes auto,none] [--json]

Each run writes the corpus afresh into a temporary directory (registry, cache and TMPDIR
there too) and runs `atip scan --path <corpus> --json` as a process, as a person would,
with the probe's default 2 s timeout. Wall time is the process's, start to exit; peak
memory is the largest resident set of it and every child it waited for (the sandbox's
server among them: `getrusage(RUSAGE_CHILDREN)` of a wrapper). Medians of the runs; the
peak is the largest seen. Modes: `auto` (namespaces where the kernel allows them) and
`none` (the fallback), side by side, runs alternating.

Targets (issue 19): at most 3 s and 120 MB for 40 entries.
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
from pathlib import Path

from _machine import cpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.hostile import build  # the corpus is the tests'

TARGET_SECONDS = 3.0
TARGET_MIB = 120.0

MEASURE = """
import json, resource, subprocess, sys, time
start = time.monotonic()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.monotonic() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": done.returncode, "seconds": seconds, "peak_kib": peak,
                  "out": done.stdout}))
"""


def one_scan(mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="atip-bench-hostile-") as tmp:
        root = Path(tmp)
        home, outside, temp = root / "home", root / "outside", root / "tmp"
        for directory in (home, outside, temp):
            directory.mkdir()
        (outside / "keep").write_text("keep")
        corpus = build(root, mark="atipbench", port=9, port6=9, home=home, outside=outside)
        env = {
            **os.environ,
            "HOME": str(home),
            "TMPDIR": str(temp),
            "XDG_DATA_HOME": str(root / "data"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "ATIP_CACHE_DIR": str(root / "cache"),
            "ATIP_SANDBOX": mode,
        }
        argv = [sys.executable, "-m", "atipkit.cli", "scan", "--path", str(corpus.bin), "--json"]
        done = subprocess.run(
            [sys.executable, "-c", MEASURE, *argv],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        for place in ("/tmp", "/var/tmp", "/dev/shm"):  # what the fallback let through
            for leftover in Path(place).glob("atipbench*"):
                leftover.unlink()
        measured = json.loads(done.stdout)
        report = json.loads(measured.pop("out"))["result"]
        found = sorted(f["name"] for f in report["found"])
        assert measured["code"] == 0, measured
        assert found == sorted(corpus.good + corpus.stealers), found
        measured["isolation"] = report["isolation"]
        return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modes", default="auto,none")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    modes = args.modes.split(",")
    runs: dict[str, list[dict]] = {mode: [] for mode in modes}
    for _ in range(args.runs):
        for mode in modes:
            runs[mode].append(one_scan(mode))
    figures = {
        mode: {
            "isolation": values[0]["isolation"],
            "median seconds": statistics.median(v["seconds"] for v in values),
            "seconds": [round(v["seconds"], 3) for v in values],
            "peak MiB": max(v["peak_kib"] for v in values) / 1024,
        }
        for mode, values in runs.items()
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"atip scan of the 40-entry hostile corpus, {args.runs} runs, {cpu()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}"
    )
    for mode, figure in figures.items():
        seconds, mib = figure["median seconds"], figure["peak MiB"]
        verdict = "ok" if seconds <= TARGET_SECONDS and mib <= TARGET_MIB else "OVER TARGET"
        print(
            f"{mode:5} ({figure['isolation']}): median {seconds:.2f} s "
            f"(≤ {TARGET_SECONDS:g}), peak {mib:.0f} MiB (≤ {TARGET_MIB:g})  {verdict}"
        )


if __name__ == "__main__":
    main()
