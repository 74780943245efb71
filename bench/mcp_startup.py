"""Time to the first `tools/list` answer of `atip mcp serve` over stdio, beside the floor.

    python bench/mcp_startup.py [--reps N] [--json] [--tool FILE ...] [--deferred] [--src DIR]
                                [--without-front]

Each repetition starts a real `atip mcp serve --tool FILE --interval 0` process and speaks
real JSON-RPC to it over its pipes, as an MCP client does: `initialize`, the
`notifications/initialized` notification, `tools/list`; the clock runs from just before
the process is started to the moment the `tools/list` answer's line has been read, then
stdin is closed and the server must exit 0. `python3 -c pass` is timed the same way
(start to exit) in the same rounds, in a shuffled order, so a busy machine slows both
alike; the report gives medians, p95s and the ratio of the medians.

The tools default to the examples' `gh`, `kubectl` and `terraform` documents, so nothing
of the machine (PATH, the registry) is read: the registry, cache and home are a
temporary directory's, and so are the compiled modules (PYTHONPYCACHEPREFIX, with
PYTHONDONTWRITEBYTECODE dropped): the untimed first run of each variant compiles them, as
an installed package has them, without writing into the checkouts. `--src` runs another
checkout's atipkit (`/work/main/src`), to compare two versions on one machine;
`--without-front` adds each with the stdio front off (`ATIP_MCP_FRONT=0`: the SDK answers
from the start). Issue 22's target: under 300 ms to the first `tools/list`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import cpu

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TOOLS = [ROOT / "examples" / "tools" / f"{name}.json" for name in ("gh", "kubectl", "terraform")]
TARGET_MS = 300.0
NO_FRONT = "ATIP_MCP_FRONT=0"
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def environment(home: Path, src: Path) -> dict[str, str]:
    """A machine of the bench's own, with the atipkit of `src` first on the path."""
    env = {
        **os.environ,
        "HOME": str(home / "home"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "ATIP_CACHE_DIR": str(home / "cache"),
        "PYTHONPYCACHEPREFIX": str(home / "pycache"),
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("XDG_CACHE_HOME", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def first_list(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds from start to the `tools/list` answer, and how many tools it listed."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(json.dumps(HANDSHAKE[0]) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        if answer.get("id") != 1 or "result" not in answer:
            raise SystemExit(f"initialize failed: {answer}")
        process.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE[1:]))
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        elapsed = time.perf_counter() - started
        if answer.get("id") != 2 or "result" not in answer:
            raise SystemExit(f"tools/list failed: {answer}")
        process.stdin.close()
        if process.wait(30) != 0:
            raise SystemExit(f"the server exited {process.returncode}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return elapsed, len(answer["result"]["tools"])


def floor(env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - started


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="one JSON object, not a table")
    parser.add_argument("--tool", type=Path, action="append", help="ATIP documents to serve")
    parser.add_argument("--deferred", action="store_true", help="serve in deferred mode")
    parser.add_argument(
        "--src", type=Path, action="append", help="the atipkit to run (repeatable: side by side)"
    )
    parser.add_argument(
        "--without-front",
        action="store_true",
        help="also time each --src with the stdio front off (ATIP_MCP_FRONT=0)",
    )
    args = parser.parse_args()
    sources = [path.resolve() for path in args.src or [ROOT / "src"]]
    serve = [sys.executable, "-m", "atipkit.cli", "mcp", "serve", "--interval", "0"]
    for path in args.tool or TOOLS:
        serve += ["--tool", str(path)]
    if args.deferred:
        serve.append("--deferred")
    variants = [str(src) for src in sources]
    if args.without_front:
        variants += [f"{src} {NO_FRONT}" for src in sources]
    jobs = [*variants, "floor"]
    times: dict[str, list[float]] = {job: [] for job in jobs}
    listed = 0
    with tempfile.TemporaryDirectory() as home:
        envs = {}
        for variant in variants:
            src, _, off = variant.partition(" ")
            envs[variant] = environment(Path(home), Path(src))
            if off:
                envs[variant]["ATIP_MCP_FRONT"] = "0"
        floor_env = environment(Path(home), sources[0])
        for variant in variants:
            first_list(serve, envs[variant])  # warm the disk cache and bytecode, not timed
        floor(floor_env)
        for _ in range(args.reps):
            random.shuffle(jobs)
            for job in jobs:
                if job == "floor":
                    elapsed = floor(floor_env)
                else:
                    elapsed, listed = first_list(serve, envs[job])
                times[job].append(elapsed)
    floor_ms = statistics.median(times["floor"]) * 1000
    rows = {
        job: {
            "median_ms": statistics.median(values) * 1000,
            "p95_ms": p95(values) * 1000,
            "ratio_to_floor": statistics.median(values) * 1000 / floor_ms,
        }
        for job, values in times.items()
    }
    report: dict[str, Any] = {
        "cpu": cpu(),
        "python": sys.version.split()[0],
        "reps": args.reps,
        "tools_listed": listed,
        "mode": "deferred" if args.deferred else "one tool a command",
        "first_tools_list": {variant: rows[variant] for variant in variants},
        "python_pass": rows["floor"],
        "target_ms": TARGET_MS,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['cpu']}, Python {report['python']}, {args.reps} runs, {report['mode']}")
    print(f"first tools/list of atip mcp serve ({listed} tools), target < {TARGET_MS:.0f} ms")
    print(f"{'':52} {'median':>8} {'p95':>8} {'ratio':>6}")
    for label, row in [*report["first_tools_list"].items(), ("python3 -c pass", rows["floor"])]:
        print(
            f"{label[-52:]:52} {row['median_ms']:7.0f}ms {row['p95_ms']:7.0f}ms "
            f"{row['ratio_to_floor']:5.1f}x"
        )


if __name__ == "__main__":
    main()
