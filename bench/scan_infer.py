"""`atip scan --infer` over this machine's real PATH: the first run, then re-runs.

    python bench/scan_infer.py [--reruns N] [--budget S] [--jobs N] [--tool NAME]... [--json]

Runs the real command (`python -m atipkit scan --infer --json`, a fresh process each time)
with XDG_DATA_HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME in a temporary directory — never the
user's registry, cache or configuration — and no ATIP_* setting of the environment's
(no remote registry is asked, nothing is forced to refresh). Reported:
- the first run: seconds, and what became of every executable — native (speaks ATIP),
  shim, inferred (from the man page alone / from `--help` in the sandbox), denied (never
  run; of which without a man page, so not described), aliases (one binary under several
  names: recorded once), failed, left for later (the budget ran out), cut short (inferred
  with part of the tree unread: `inference.cut`, decision 578);
- re-runs (nothing changed): the median of N fresh processes, and that none inferred
  anything again;
- the names `registry.json` records after the first run, and how many of them have a
  document of their own in their binary's shim (`_names`);
- for each `--tool` (default: git), what its inferred shim says after the first run, when
  the whole PATH was inferred at once: commands, of which with options, subcommands of
  theirs (`git remote add`), and whether its budget cut it short (`incomplete`).

Targets (issue 11): the first run within 10 minutes for about 1 500 executables, re-runs in
seconds.
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
from typing import Any

from _machine import cores, cpu

TARGETS_S = {"first run": 600.0, "re-run": 10.0}


def run_scan(env: dict[str, str], extra: list[str]) -> tuple[float, dict[str, Any]]:
    """One `atip scan --infer` process: its wall-clock seconds and its result."""
    argv = [sys.executable, "-m", "atipkit", "scan", "--infer", "--json", *extra]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"atip scan --infer failed ({done.returncode}): {done.stdout[-2000:]!r}")
    return seconds, json.loads(done.stdout)["result"]


def counts(result: dict[str, Any]) -> dict[str, Any]:
    inference = result["inference"]
    found = result["found"]
    return {
        "executables": result["executables"] + len(inference["denied"]),
        "probed": result["executables"],
        "native": sum(f["source"] == "native" for f in found),
        "shim": sum(f["source"] == "shim" for f in found),
        "inferred (recorded)": result["inferred"],
        "inferred by this run": inference["inferred"],
        "  from the man page alone": inference["from_man_page"],
        "  from --help (sandboxed)": inference["from_help"],
        "inferred before (reused)": inference["reused"],
        "aliases": len(inference["aliases"]),
        "denied (never run)": len(inference["denied"]),
        "  without a man page": len(inference["skipped"]),
        "failed": len(inference["failed"]),
        "left for later": len(inference["left"]),
        "cut short (part unread)": len(inference.get("cut", [])),
    }


def tool_figures(shims: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """What the first run inferred for each of `names` (by the shims' `name`)."""
    out: dict[str, dict[str, Any]] = {}
    for path in shims.glob("*.json"):
        shim = json.loads(path.read_text())
        if shim.get("name") not in names:
            continue
        commands = shim.get("commands", {})
        out[shim["name"]] = {
            "commands": len(commands),
            "with options": sum(1 for c in commands.values() if c.get("options")),
            "their subcommands": sum(len(c.get("commands", {})) for c in commands.values()),
            "method": shim.get("_generation", {}).get("method"),
            "incomplete": bool(shim.get("_generation", {}).get("incomplete")),
        }
    return out


def name_figures(registry: Path, shims: Path) -> dict[str, int]:
    """After the first run: the names `registry.json` records (every name of an inferred
    binary on PATH, decision 276), and of those, the ones its shim gives a document of
    their own (`_names`)."""
    recorded = json.loads(registry.read_text())["tools"] if registry.is_file() else {}
    own = sum(len(json.loads(path.read_text()).get("_names", {})) for path in shims.glob("*.json"))
    return {"recorded": len(recorded), "with a document of their own": own}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reruns", type=int, default=5, help="re-runs to take the median of")
    parser.add_argument("--budget", type=float, help="--budget for the scans (default: atip's)")
    parser.add_argument("--jobs", type=int, help="--jobs for the scans (default: atip's)")
    parser.add_argument(
        "--tool", action="append", help="report what this tool's shim says (default: git)"
    )
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    extra = []
    if args.budget is not None:
        extra += ["--budget", str(args.budget)]
    if args.jobs is not None:
        extra += ["--jobs", str(args.jobs)]

    with tempfile.TemporaryDirectory(prefix="atip-bench-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ATIP_")}
        env.update(
            XDG_DATA_HOME=str(root / "data"),
            XDG_CACHE_HOME=str(root / "cache"),
            XDG_CONFIG_HOME=str(root / "config"),
        )
        first_s, first = run_scan(env, extra)
        shim_dir = root / "data" / "agent-tools" / "shims" / "sha256"
        tools = tool_figures(shim_dir, args.tool or ["git"])
        names = name_figures(root / "data" / "agent-tools" / "registry.json", shim_dir)
        reruns = [run_scan(env, extra) for _ in range(args.reruns)]
        shims = len(list(shim_dir.glob("*.json")))
    again = [r for _, r in reruns if r["inference"]["inferred"]]
    figures: dict[str, Any] = {
        "command": "atip scan --infer --json " + " ".join(extra),
        "first run": first_s,
        "re-run": statistics.median(s for s, _ in reruns) if reruns else None,
        "re-runs": len(reruns),
        "re-runs that inferred again": len(again),
        "first": counts(first),
        "shim files": shims,
        "names": names,
        "tools": tools,
        "failed": first["inference"]["failed"],
        "cut": first["inference"].get("cut", []),
        "skipped": first["inference"]["skipped"],
        "machine": {"cpu": cpu(), "cores": cores(), "python": platform.python_version()},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    machine = figures["machine"]
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(f"command: {figures['command']}")
    for label in ("first run", "re-run"):
        value = figures[label]
        if value is None:
            continue
        target = TARGETS_S[label]
        verdict = "ok" if value < target else "OVER TARGET"
        what = " (median)" if label == "re-run" else ""
        print(f"{label + what:28} {value:9.2f} s  < {target:g} s {verdict}")
    print(f"re-runs that inferred again: {len(again)} of {len(reruns)}")
    for label, value in figures["first"].items():
        print(f"  {label:30} {value:6}")
    print(
        f"  names recorded in registry.json {names['recorded']}, "
        f"with a document of their own {names['with a document of their own']}"
    )
    for name, values in tools.items():
        print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in values.items()))
    for failure in figures["failed"]:
        print(f"  failed: {failure['name']}: {failure['error']}")
    if figures["cut"]:
        print(f"  cut short: {', '.join(figures['cut'])}")


if __name__ == "__main__":
    main()
