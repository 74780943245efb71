"""Hashing a 100 MB binary, against hashlib's raw speed, and re-verifying it (cache hit).

    python bench/trust.py [--megabytes N] [--runs N] [--json]

In one run, side by side: hashlib reading the file in 1 MiB chunks (the floor), the first
`file_digest` (which also records the fingerprint), and `file_digest` again on the
unchanged file — a fingerprint check and a cache hit, in the same process and as a new
process would (the cache file read). Target (issue 7): re-verify < 1 ms.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from atipkit.trust import digest as digests


def raw_hashlib(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        path = Path(tmp) / "binary"
        with path.open("wb") as f:
            for _ in range(args.megabytes):
                f.write(os.urandom(1 << 20))
        cache = Path(tmp) / "digests.json"
        raw, first, again, from_file = [], [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            raw_hashlib(path)
            raw.append(time.perf_counter() - start)
            digests._memory.clear()
            cache.unlink(missing_ok=True)
            start = time.perf_counter()
            digests.file_digest(path, cache=cache)
            first.append(time.perf_counter() - start)
            hits = []
            for _ in range(200):
                start = time.perf_counter()
                digests.file_digest(path, cache=cache)
                hits.append(time.perf_counter() - start)
            again.append(statistics.median(hits))
            cold = []
            for _ in range(50):  # as a new process: nothing in memory, the cache file read
                digests._memory.clear()
                start = time.perf_counter()
                digests.file_digest(path, cache=cache)
                cold.append(time.perf_counter() - start)
            from_file.append(statistics.median(cold))
    mb = args.megabytes * (1 << 20) / 1e6
    figures = {
        "megabytes": args.megabytes,
        "hashlib MB/s": mb / statistics.median(raw),
        "first file_digest MB/s": mb / statistics.median(first),
        "first file_digest s": statistics.median(first),
        "re-verify ms": statistics.median(again) * 1000,
        "re-verify from cache file ms": statistics.median(from_file) * 1000,
        "python": platform.python_version(),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.megabytes} MB file; Python {platform.python_version()}, {os.cpu_count()} cores")
    print(f"hashlib sha256, raw              {figures['hashlib MB/s']:8.0f} MB/s")
    print(
        f"file_digest, first (and record)  {figures['first file_digest MB/s']:8.0f} MB/s "
        f"({figures['first file_digest s']:.3f} s)"
    )
    verdict = "ok" if figures["re-verify ms"] < 1 else "OVER TARGET"
    print(f"file_digest, unchanged file      {figures['re-verify ms']:8.4f} ms  < 1 {verdict}")
    print(f"  — in a new process (cache file) {figures['re-verify from cache file ms']:8.4f} ms")


if __name__ == "__main__":
    main()
