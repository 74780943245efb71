"""Compression bombs against atipkit's guarded HTTP client, and against the way it read
bodies before issue 19 (httpx decoding each received chunk whole, counted afterwards).

    python bench/http_bombs.py [--cap MIB] [--json]

The hostile registry of the tests (tests/servers.py `bomb`) serves, on loopback, 1 GiB
of zeros as one layer of `gzip`, one of raw `deflate`, and as `gzip, gzip` (a gzip
stream of a gzip stream). Each is fetched in a fresh process, with a
`--cap` MiB size limit (default 16, a shim's `maxBytes`), two ways:

- before: `httpx` streams the body with `iter_bytes()` (which decodes) and the bytes are
  counted as they come, stopping past the cap — what `_http.Fetcher` did before;
- now: `_http.Fetcher.get(max_bytes=cap)`, which decodes one layer itself, 64 KiB at a
  time, and refuses stacked encodings.

For each: the bytes on the wire, the memory the fetch added to the process at its peak
(`VmHWM` after the fetch less `VmHWM` before it: the process's own high-water mark,
which a child does not inherit from its parent), the seconds it took, and how it ended.
The `before` of `gzip, gzip` holds the whole decoded GiB at once: give it the memory.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from _machine import cpu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.servers import bomb, hostile_registry

KINDS = {"gzip": "gzip-bomb", "deflate": "deflate-bomb", "gzip, gzip": "gzip-gzip-bomb"}

FETCH = """
import json, sys, time
sys.path.insert(0, sys.argv[4])
import httpx
from atipkit._http import Fetcher, HttpError

def hwm_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

way, url, cap = sys.argv[1], sys.argv[2], int(sys.argv[3])
with httpx.Client(timeout=60) as client, Fetcher(read_timeout=60, deadline=600) as fetcher:
    before = hwm_kib()
    start = time.monotonic()
    if way == "before":
        with client.stream("GET", url) as response:
            seen = 0
            for chunk in response.iter_bytes():
                seen += len(chunk)
                if seen > cap:
                    ended = f"stopped past the cap, at {seen / 2**20:.0f} MiB decoded"
                    break
            else:
                ended = f"read whole: {seen / 2**20:.0f} MiB"
    else:
        try:
            ended = f"read whole: {len(fetcher.get(url, max_bytes=cap).content)} bytes"
        except HttpError as exc:
            ended = f"{type(exc).__name__}: {str(exc).removeprefix(url + ': ')}"
    seconds = time.monotonic() - start
    print(json.dumps({"added_kib": hwm_kib() - before, "seconds": seconds, "ended": ended}))
"""


def fetch(way: str, url: str, cap: int) -> dict:
    src = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-c", FETCH, way, url, str(cap), src],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cap", type=int, default=16, help="the size limit, MiB")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cap = args.cap << 20
    rows = []
    with hostile_registry() as server:
        for kind, behaviour in KINDS.items():
            wire = len(bomb(kind))
            url = f"{server.registry(behaviour, at='any')}/shim.json"
            for way in ("before", "now"):
                rows.append({"encoding": kind, "wire": wire, "way": way, **fetch(way, url, cap)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"1 GiB of zeros, cap {args.cap} MiB; {cpu()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    for row in rows:
        print(
            f"{row['encoding']:10} {row['wire']:>9,} B on the wire  {row['way']:6} "
            f"+{row['added_kib'] / 1024:7.1f} MiB  {row['seconds']:6.2f} s  {row['ended']}"
        )


if __name__ == "__main__":
    main()
