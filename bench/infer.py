"""Inferring shims for real Debian tools: what is found, how long it takes, all valid.

    python bench/infer.py [--budget S] [--json] [TOOL ...]

For each tool (default: the list below, those installed), `generate_shim` runs with
depth 2 and the budget (default 10 s), then git's whole tree once more with a 60 s
budget. Reported per tool: subcommands, options, seconds, whether the shim validates.
rsync is not on a fresh machine: `apt-get install rsync`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import time

import atipkit
from atipkit.infer.generate import generate_shim

TOOLS = [
    # coreutils
    "ls",
    "cp",
    "mv",
    "rm",
    "sort",
    "cut",
    "head",
    "tail",
    "wc",
    "du",
    "df",
    "chmod",
    "date",
    # findutils, text, archives, build
    "find",
    "xargs",
    "grep",
    "sed",
    "tar",
    "gzip",
    "diff",
    "make",
    # network, remote, processes, system
    "curl",
    "wget",
    "rsync",
    "ssh",
    "ps",
    "ip",
    "systemctl",
    # with subcommands
    "jq",
    "git",
    "apt-get",
    "pip",
]


def measure(tool: str, budget: float, depth: int = 2) -> dict[str, object]:
    start = time.monotonic()
    shim = generate_shim(tool, depth=depth, budget=budget)
    seconds = time.monotonic() - start
    report = atipkit.validate(atipkit.dumps(shim))
    commands = [c for p, c in atipkit.iter_commands(shim) if p]
    options = sum(len(c.options) for _, c in atipkit.iter_commands(shim))
    return {
        "tool": tool,
        "version": shim.version,
        "subcommands": len(commands),
        "options": options + len(shim.global_options),
        "arguments": sum(len(c.arguments) for _, c in atipkit.iter_commands(shim)),
        "seconds": round(seconds, 2),
        "valid": report.ok,
        "sources": shim.extensions["_generation"]["sources"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tools", nargs="*")
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    names = args.tools or [t for t in TOOLS if shutil.which(t)]
    rows = [measure(t, args.budget) for t in names]
    if "git" in names:
        whole = measure("git", 60.0, depth=3)
        whole["tool"] = "git (whole tree, --budget 60)"
        rows.append(whole)
    missing = [t for t in TOOLS if not shutil.which(t)] if not args.tools else []
    if args.json:
        print(
            json.dumps(
                {
                    "rows": rows,
                    "missing": missing,
                    "python": platform.python_version(),
                    "cores": os.cpu_count(),
                },
                indent=2,
            )
        )
        return
    print(
        f"{len(rows)} runs; Python {platform.python_version()}, {os.cpu_count()} cores"
        + (f"; not installed: {', '.join(missing)}" if missing else "")
    )
    print(f"{'tool':32} {'subcmds':>7} {'options':>7} {'args':>5} {'seconds':>8}  valid  sources")
    for row in rows:
        print(
            f"{row['tool']:32} {row['subcommands']:>7} {row['options']:>7} "
            f"{row['arguments']:>5} {row['seconds']:>8.2f}  {row['valid']!s:5}  "
            f"{','.join(row['sources'])}"
        )
    slowest = max(r["seconds"] for r in rows if not str(r["tool"]).startswith("git (whole"))
    print(
        f"all valid: {all(r['valid'] for r in rows)}; slowest within the budget: "
        f"{slowest:.2f} s (target < {args.budget:g} s)"
    )


if __name__ == "__main__":
    main()
