"""The result filter: how much of the secrets corpus it redacts, and its time on hostile
output at the runner's 4 MiB cap.

    python bench/result_filter.py [--runs N] [--json]

Figures:
- corpus (tests/fixtures/secrets): secrets redacted, of them redacted exactly (the marker
  names the kind, everything else stays), look-alikes altered.
- time: `ResultFilter().apply` on each adversarial input repeated to 4 MiB, the median of
  N runs, in CPU milliseconds (the filter is single-threaded: CPU time is what it costs
  whatever else the machine runs; wall time is printed beside it), and the ratio to the
  same input at 1 MiB (4 when linear, 16 when quadratic), and the secrets redacted.
- the first call: compiling the table, in CPU milliseconds (median of N).
- memory: the peak of what Python allocates (tracemalloc) filtering the densest input.

Targets (issue 19): ≥ 97 % of secrets redacted, 0 look-alikes altered, < 1 s per input.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from _machine import cores, cpu
from atipkit.bridge import ResultFilter, secret_kinds
from atipkit.execute.runner import MAX_OUTPUT

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "secrets"
TARGET_MS = 1000.0

DENSEST = "://:a@"
# repeated to the cap; the first ones are the (`a.a.a.` took 27 s at 64 KiB)
ADVERSARIAL = {
    "a.a.a.": "a.",
    "x://x: repeated": "x://x:",
    "a run of word characters": "a",
    "-----BEGIN without END": "-----BEGIN ",
    "PRIVATE KEY block without END": "-----BEGIN PRIVATE KEY-----\n",
    "eyJ repeated": "eyJ",
    "JWT-like segments": "eyJaaaaaaaaaa.",
    "sk- repeated": "sk-",
    "password= repeated (dense matches)": "password=",
    "password: repeated": "password:",
    'token=" unclosed (dense matches)': 'token="',
    "Authorization: Bearer repeated": "Authorization: Bearer ",
    "://u: without host": "://u:",
    "https://u:p@ repeated (dense matches)": "https://u:p@",
    "://:a@ repeated (a secret every 6 characters)": DENSEST,
    "--token =' (two rows' secrets overlapping)": "--token ='",
    "gated kinds (Q~, -us, :AA)": "abc1Q~0123456789abcdef0123456789abcdef-us12345678:AA",
    "authorization:${ (a placeholder after a key)": "authorization:${",
    "_pwd=${ repeated": "_pwd=${",
    "token=a.b( repeated": "token=a.b(",
    "terminal escapes": "\x1b[\x1b]",
    "ordinary log lines": "2024-05-02T10:11:12Z INFO GET /api/v1/items?page=2 200 12ms\n",
}


def repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def timed(text: str, runs: int) -> tuple[float, float, int]:
    """Median CPU and wall milliseconds of filtering `text`, and the secrets it holds."""
    filt = ResultFilter()
    filt.apply(text[:1000])  # the table is compiled at the first call
    cpu_ms, wall_ms = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        secrets = filt.apply(text).redactions
        cpu_ms.append((time.process_time() - c) * 1000)
        wall_ms.append((time.perf_counter() - w) * 1000)
    return statistics.median(cpu_ms), statistics.median(wall_ms), secrets


def first_call(runs: int) -> float:
    """Median CPU milliseconds of compiling the table, as the first filtered output does."""
    times = []
    for _ in range(runs):
        re.purge()  # `re` keeps what it compiled: start from nothing
        secret_kinds._compiled.cache_clear()
        start = time.process_time()
        secret_kinds._compiled()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def peak_mb(text: str) -> float:
    """The peak of Python's allocations while `text` is filtered, in MB."""
    filt = ResultFilter()
    filt.apply("warm up")
    tracemalloc.start()
    filt.apply(text)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def corpus() -> dict[str, Any]:
    filt = ResultFilter(max_chars=None)
    secrets = [json.loads(line) for line in (CORPUS / "secrets.jsonl").read_text().splitlines()]
    lookalikes = [
        json.loads(line) for line in (CORPUS / "lookalikes.jsonl").read_text().splitlines()
    ]
    gone = exact = 0
    missed = []
    for record in secrets:
        out = filt(record["text"])
        if record["secret"] in out:
            missed.append(f"{record['kind']} ({record['where']})")
            continue
        gone += 1
        marker = f"[REDACTED:{record['kind']}]"
        exact += out == record["text"].replace(record["secret"], marker)
    altered = [r["what"] for r in lookalikes if filt(r["text"]) != r["text"]]
    return {
        "secrets": len(secrets),
        "kinds": len({r["kind"] for r in secrets}),
        "redacted": gone,
        "redacted_exactly": exact,
        "recall": gone / len(secrets),
        "missed": missed,
        "lookalikes": len(lookalikes),
        "lookalikes_altered": altered,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()

    times = {}
    for label, unit in ADVERSARIAL.items():
        cpu_ms, wall_ms, secrets = timed(repeat(unit, MAX_OUTPUT), args.runs)
        quarter, _, _ = timed(repeat(unit, MAX_OUTPUT // 4), args.runs)
        times[label] = {
            "cpu_ms": cpu_ms,
            "wall_ms": wall_ms,
            "ratio_to_1MiB": cpu_ms / quarter,
            "secrets": secrets,
        }
    figures: dict[str, Any] = {
        "corpus": corpus(),
        "size": MAX_OUTPUT,
        "runs": args.runs,
        "adversarial": times,
        "first_call_ms": first_call(args.runs),
        "peak_mb": peak_mb(repeat(DENSEST, MAX_OUTPUT)),
        "machine": {
            "python": platform.python_version(),
            "cpu": cpu(),
            "cores": cores(),
            "load": os.getloadavg()[0],
        },
    }
    if args.json:
        json.dump(figures, sys.stdout, indent=2)
        print()
        return
    m = figures["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, load {m['load']:.1f}")
    c = figures["corpus"]
    print(
        f"corpus: {c['redacted']}/{c['secrets']} secrets of {c['kinds']} kinds redacted "
        f"({c['recall']:.1%}, target ≥ 97 %), {c['redacted_exactly']} exactly; "
        f"{len(c['lookalikes_altered'])}/{c['lookalikes']} look-alikes altered (target 0)"
    )
    for line in c["missed"]:
        print(f"  missed: {line}")
    for what in c["lookalikes_altered"]:
        print(f"  altered: {what}")
    print(f"time at {MAX_OUTPUT // 1024 // 1024} MiB (median of {args.runs}; target < 1000 ms):")
    for label, t in times.items():
        verdict = "ok" if t["cpu_ms"] < TARGET_MS else "OVER TARGET"
        print(
            f"  {label:46} {t['cpu_ms']:7.0f} ms CPU  {t['wall_ms']:7.0f} ms wall  "
            f"×{t['ratio_to_1MiB']:.1f} of 1 MiB  {t['secrets']:7} secrets  {verdict}"
        )
    print(f"first call (the table compiled): {figures['first_call_ms']:.0f} ms CPU")
    print(f"peak allocated, 4 MiB of {DENSEST!r}: {figures['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
