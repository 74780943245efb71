"""How right inferred effects are, against the effects gold (issue 20).

    python bench/effects.py [--split dev|test|all] [--mode gen|scan|both] [--errors]
                            [--json] [TOOL ...]

The gold (bench/data/effects_gold.json, labelled from the man pages before any tuning;
bench/data/README.md says how) gives commands of installed tools, each `read-only`,
`writes` or `destructive`, and whether it reaches the network. Each tool of the split
asked for is inferred the two ways users infer one:
- `gen`: what `atip gen TOOL` does (`generate_shim` with its defaults: depth 2, its
  budget of runs and pages under a 120 s ceiling, the man page merged in);
- `scan`: what `atip scan --infer` does for one executable (`coverage.infer_shim`: the man
  page alone when it is enough or the command is denied, else the help in the sandbox
  without the word `help`, the page merged in).
Each gold command is looked up in the shim (`missing` when the shim lacks it; `cut` among
those missing from a shim that says its reading was cut short, `_generation.incomplete`) and its
effective effects (the tool's, each enclosing group's, then its own, merged as SPEC-NOTES 4
says: `model.effective_effects`) are classed: `destructive` when `destructive` is true;
`read-only` when `filesystem.write` is false (and `filesystem.delete` not true);
`writes` when `filesystem.write` or `filesystem.delete` is true; else `unknown`.

Reported per split (dev, test and all with `--split all`) and mode: the confusion matrix
gold class × predicted class; destructive commands predicted read-only (goal 0) and
writes predicted read-only; destructive recall (goal ≥ 0.80), read-only recall (goal
≥ 0.90), read-only precision; network recall and precision (a missing command predicts
nothing). `--errors` lists the misclassified commands of the split asked for. Tune on
`--split dev`; never look at the test split's rows.

Runs with XDG_DATA_HOME, XDG_CACHE_HOME, XDG_CONFIG_HOME and XDG_STATE_HOME in a temporary
directory and no ATIP_* setting: the built-in deny list, never the user's configuration.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _machine import cores, cpu

GOLD = Path(__file__).resolve().parent / "data" / "effects_gold.json"
CLASSES = ("read-only", "writes", "destructive")
PREDICTED = (*CLASSES, "unknown", "missing")
MODES = ("gen", "scan")
GOALS = {"destructive as read-only": 0, "destructive recall": 0.80, "read-only recall": 0.90}


def split_of(tool: str) -> str:
    """The split of a tool: one third `test`, by the hash of its name."""
    return "test" if int(hashlib.sha256(tool.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def load_gold(path: Path) -> list[dict[str, Any]]:
    """The gold entries, checked: a bad entry stops the bench with what is wrong."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.exit(f"{path}: cannot be read as JSON: {exc}")
    if not isinstance(entries, list):
        sys.exit(f"{path}: must be a JSON list of entries")
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict):
            sys.exit(f"{path}: entry {number} must be an object")
        where = f"{path}: entry {number} ({entry.get('tool')} {entry.get('command')})"
        tool, command = entry.get("tool"), entry.get("command")
        if not isinstance(tool, str) or not tool:
            sys.exit(f"{where}: 'tool' must be a non-empty string")
        if not isinstance(command, list) or not all(isinstance(w, str) and w for w in command):
            sys.exit(f"{where}: 'command' must be a list of words")
        if entry.get("class") not in CLASSES:
            sys.exit(f"{where}: 'class' must be one of {', '.join(CLASSES)}")
        if not isinstance(entry.get("network"), bool):
            sys.exit(f"{where}: 'network' must be true or false")
        if entry.get("split") != split_of(tool):
            sys.exit(f"{where}: 'split' must be {split_of(tool)!r} (sha256 of the tool's name)")
        if not entry.get("why"):
            sys.exit(f"{where}: 'why' must say which page decided the label")
        key = (tool, tuple(command))
        if key in seen:
            sys.exit(f"{where}: listed twice")
        seen.add(key)
    return entries


def infer(tool: str, mode: str) -> Any:
    """The tool's shim as `mode` makes it."""
    if mode == "gen":
        from atipkit.infer.generate import generate_shim

        return generate_shim(tool)
    from atipkit.infer.coverage import file_hash, infer_shim

    found = shutil.which(tool)
    assert found is not None
    hash_ = file_hash(os.path.realpath(found))
    assert hash_ is not None
    return infer_shim(os.path.abspath(found), tool, hash_)  # by its name: multi-call


def predict(shim: Any, command: list[str]) -> tuple[str, bool]:
    """The predicted class of a command of `shim`, and whether it is said to reach the
    network; (`missing`, False) when the shim lacks the command."""
    from atipkit.model import effective_effects

    try:
        effects = effective_effects(shim, tuple(command))
    except KeyError:
        return "missing", False
    network = effects.network is True
    fs = effects.filesystem
    if effects.destructive is True:
        return "destructive", network
    if fs and fs.write is False and fs.delete is not True:
        return "read-only", network
    if fs and (fs.write is True or fs.delete is True):
        return "writes", network
    return "unknown", network


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of one split and mode."""
    matrix = {g: Counter(r["predicted"] for r in rows if r["class"] == g) for g in CLASSES}
    gold = Counter(r["class"] for r in rows)
    said_read_only = sum(1 for r in rows if r["predicted"] == "read-only")
    net_gold = sum(1 for r in rows if r["network"])
    net_said = sum(1 for r in rows if r["predicted_network"])
    net_right = sum(1 for r in rows if r["network"] and r["predicted_network"])
    return {
        "commands": len(rows),
        "tools": len({r["tool"] for r in rows}),
        "gold": {c: gold[c] for c in CLASSES},
        "matrix": {g: {p: matrix[g][p] for p in PREDICTED} for g in CLASSES},
        "missing": sum(1 for r in rows if r["predicted"] == "missing"),
        "missing, cut short": sum(1 for r in rows if r["predicted"] == "missing" and r.get("cut")),
        "destructive as read-only": matrix["destructive"]["read-only"],
        "writes as read-only": matrix["writes"]["read-only"],
        "destructive recall": ratio(matrix["destructive"]["destructive"], gold["destructive"]),
        "read-only recall": ratio(matrix["read-only"]["read-only"], gold["read-only"]),
        "read-only precision": ratio(matrix["read-only"]["read-only"], said_read_only),
        "network recall": ratio(net_right, net_gold),
        "network precision": ratio(net_right, net_said),
    }


def run(
    entries: list[dict[str, Any]], modes: list[str]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One row per gold entry and mode, and the seconds each mode took (total, slowest)."""
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_tool.setdefault(entry["tool"], []).append(entry)
    rows: list[dict[str, Any]] = []
    timing: dict[str, Any] = {}
    for mode in modes:
        seconds: dict[str, float] = {}
        for tool, wanted in by_tool.items():
            start = time.monotonic()
            try:
                shim, error = infer(tool, mode), None
            except Exception as exc:  # one tool's failure is a row of misses, not the end
                shim, error = None, f"{type(exc).__name__}: {exc}"
            seconds[tool] = time.monotonic() - start
            cut = bool(shim and shim.extensions.get("_generation", {}).get("incomplete"))
            for entry in wanted:
                predicted, network = predict(shim, entry["command"]) if shim else ("missing", False)
                row = {**entry, "mode": mode, "predicted": predicted}
                row["predicted_network"] = network
                row["cut"] = cut
                if error:
                    row["error"] = error
                rows.append(row)
        slowest = max(seconds, key=seconds.__getitem__)
        timing[mode] = {
            "seconds": round(sum(seconds.values()), 2),
            "tools": len(seconds),
            "slowest": {"tool": slowest, "seconds": round(seconds[slowest], 2)},
        }
    return rows, timing


SEVERITY = {("destructive", "read-only"): 0, ("writes", "read-only"): 1}


def errors_of(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose class or network is wrong, the worst first: destructive or writes
    said read-only."""
    wrong = [
        r for r in rows if r["predicted"] != r["class"] or r["predicted_network"] != r["network"]
    ]
    return sorted(
        wrong,
        key=lambda r: (SEVERITY.get((r["class"], r["predicted"]), 2), r["mode"], r["tool"]),
    )


def isolate(root: Path) -> None:
    """This process's atipkit reads and writes under `root`, with no ATIP_* setting."""
    for name in [k for k in os.environ if k.startswith("ATIP_")]:
        del os.environ[name]
    for var in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        os.environ[var] = str(root / var.lower())


def show_figures(label: str, figures: dict[str, Any]) -> None:
    print(
        f"\n== {label}: {figures['commands']} commands of {figures['tools']} tools "
        f"({', '.join(f'{n} {c}' for c, n in figures['gold'].items())}); "
        f"{figures['missing']} missing ({figures['missing, cut short']} from shims cut short)"
    )
    corner = "gold \\ predicted"
    print(f"  {corner:18}" + "".join(f"{p:>12}" for p in PREDICTED))
    for gold, counts in figures["matrix"].items():
        print(f"  {gold:18}" + "".join(f"{counts[p]:>12}" for p in PREDICTED))
    for name in (
        "destructive as read-only",
        "writes as read-only",
        "destructive recall",
        "read-only recall",
        "read-only precision",
        "network recall",
        "network precision",
    ):
        value = figures[name]
        goal = GOALS.get(name)
        verdict = ""
        if goal is not None and value is not None:
            met = value <= goal if name == "destructive as read-only" else value >= goal
            sign = "=" if name == "destructive as read-only" else "≥"
            verdict = f"  (goal {sign} {goal:g}: {'met' if met else 'NOT MET'})"
        shown = (
            "n/a" if value is None else (f"{value}" if isinstance(value, int) else f"{value:.3f}")
        )
        print(f"  {name:26} {shown:>6}{verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tools", nargs="*", help="only these tools of the gold")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--mode", choices=(*MODES, "both"), default="both")
    parser.add_argument(
        "--gold", type=Path, default=GOLD, help="the gold file (default: %(default)s)"
    )
    parser.add_argument("--errors", action="store_true", help="list the misclassified commands")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    entries = load_gold(args.gold)
    if args.split != "all":
        entries = [e for e in entries if e["split"] == args.split]
    if args.tools:
        unknown = sorted(set(args.tools) - {e["tool"] for e in entries})
        if unknown:
            sys.exit(f"not in the {args.split} split of the gold: {', '.join(unknown)}")
        entries = [e for e in entries if e["tool"] in args.tools]
    absent = sorted({e["tool"] for e in entries if shutil.which(e["tool"]) is None})
    entries = [e for e in entries if e["tool"] not in absent]
    modes = list(MODES) if args.mode == "both" else [args.mode]

    with tempfile.TemporaryDirectory(prefix="atip-bench-effects-") as tmp:
        isolate(Path(tmp))
        start = time.monotonic()
        rows, timing = run(entries, modes)
        total = time.monotonic() - start

    splits = ["dev", "test", "all"] if args.split == "all" else [args.split]
    figures = {
        split: {
            mode: score([r for r in rows if r["mode"] == mode and split in (r["split"], "all")])
            for mode in modes
        }
        for split in splits
    }
    report: dict[str, Any] = {
        "gold": str(args.gold),
        "split": args.split,
        "modes": modes,
        "not installed": absent,
        "figures": figures,
        "timing": timing,
        "seconds": round(total, 2),
        "machine": {"cpu": cpu(), "cores": cores(), "python": platform.python_version()},
    }
    wrong = errors_of(rows) if args.errors else []
    if args.errors:
        report["errors"] = [
            {k: r[k] for k in ("mode", "tool", "command", "class", "predicted", "why")}
            | {"network": r["network"], "predicted_network": r["predicted_network"]}
            | ({"error": r["error"]} if "error" in r else {})
            for r in wrong
        ]
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return

    machine = report["machine"]
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(
        f"gold: {args.gold.name}, split {args.split}, {len(entries)} commands of "
        f"{len({e['tool'] for e in entries})} tools"
        + (f"; not installed: {', '.join(absent)}" if absent else "")
    )
    for mode, spent in timing.items():
        slowest = spent["slowest"]
        print(
            f"{mode}: {spent['seconds']:.1f} s for {spent['tools']} tools "
            f"(slowest {slowest['tool']} {slowest['seconds']:.1f} s)"
        )
    for split in splits:
        for mode in modes:
            show_figures(f"{split} / {mode}", figures[split][mode])
    if args.errors:
        print(f"\nmisclassified ({len(wrong)}):")
        for r in wrong:
            words = " ".join([r["tool"], *r["command"]])
            net = (
                ""
                if r["network"] == r["predicted_network"]
                else (
                    f"; network {'yes' if r['network'] else 'no'} said "
                    f"{'yes' if r['predicted_network'] else 'no'}"
                )
            )
            extra = f" [{r['error']}]" if "error" in r else ""
            print(f"  {r['mode']:4} {words:34} {r['class']:>11} → {r['predicted']}{net}{extra}")
    print(f"\nbench: {total:.1f} s")


if __name__ == "__main__":
    main()
