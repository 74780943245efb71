"""Inferred metadata of real Debian tools, scored against a gold set written before tuning.

    python bench/infer.py [--split dev|test|all] [--mode gen|scan|both] [--budget S]
                          [--busy N] [--git-tree] [--gold FILE] [--extra-root DIR]
                          [--json] [TOOL ...]

The gold set (bench/data/infer_gold.json, see bench/data/README.md) labels, for each of
its tools, the flags of the root command and whether each takes a value, the first-level
subcommands and the children of chosen parents, from the installed man pages and shell
completion specs. Each tool is inferred the two ways atipkit does it:
- `gen`: what `atip gen TOOL` does, `generate_shim` with the CLI's defaults (depth 2, the
  man page merged, `--budget`, default 10 s);
- `scan`: what `atip scan --infer` does for that one tool, `coverage.infer_shim`: the man
  page alone when it is enough (or the tool is denied), else the tool's help in the
  sandbox within the scan's per-tool budget, the page merged.

Scored per tool and pooled over the tools of each split (dev, test, all):
- options: predicted flags are every flag of the shim's global options and of its root
  command `""`; a flag matches the gold flag of the same spelling. Precision, recall and
  F1 pooled over all flags, and the mean of the per-tool F1 (1.0 when both are empty);
- "takes a value" accuracy over the matched flags the gold does not leave open (a
  predicted flag takes a value when its option's type is not "boolean");
- first-level subcommands (`shim.commands` keys but ""): precision (a prediction is right
  when the gold lists it, as a subcommand, an alias or an extra) and recall (of the gold's
  subcommands; an alias found counts for its command);
- depth-2 recall over the gold's (parent, child) pairs, and the precision of the children
  predicted under those parents;
- for git, the number of first-level commands that have at least one option.
Also per tool, as before: subcommands and options inferred, seconds, whether the shim
validates. `--busy N` runs N CPU-bound processes alongside, to see the figures under load;
`--git-tree` adds `atip gen git --depth 3 --budget 60`. A tool not installed is reported as
missing and left out of the figures. Nothing of the user's is read or written: XDG
directories point into a temporary directory, and ATIP_* settings are dropped.

`--extra-root DIR` (repeatable) lets the run see gold tools that are not installed here but
unpacked from their packages into DIR (`apt-get download PKG; dpkg-deb -x PKG.deb DIR`,
nothing installed): DIR's `usr/sbin`, `usr/bin`, `sbin` and `bin` go before PATH, so the
tools are found there and their pages in DIR's `usr/share/man` (the man directory beside a
PATH directory, as `man` finds it; added to MANPATH too when that is set). The sandbox runs
a tool with that PATH and no library path of DIR's: a tool whose libraries are only in DIR
(nft) runs nowhere, which only matters when it is not denied.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _machine import cores, cpu

GOLD = Path(__file__).parent / "data" / "infer_gold.json"
SPLITS = ("dev", "test", "all")
MODES = ("gen", "scan")
TARGETS = {
    "option F1 (pooled)": 0.95,
    "option F1 (mean per tool)": 0.97,
    "subcommand precision": 0.95,
    "subcommand recall": 0.95,
    "depth-2 recall": 0.80,
    "takes a value": 0.98,
}


def split_of(tool: str) -> str:
    """The split rule of the gold sets: one tool in three is held out for testing."""
    return "test" if int(hashlib.sha256(tool.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def load_gold(path: Path) -> dict[str, dict[str, Any]]:
    """The gold set's tools, each checked to carry the split the rule gives it."""
    data = json.loads(path.read_text())
    tools = {name: entry for name, entry in data.items() if not name.startswith("_")}
    wrong = [name for name, entry in tools.items() if entry.get("split") != split_of(name)]
    if wrong:
        sys.exit(f"{path}: the split of {', '.join(wrong)} is not the one the rule gives")
    return tools


@dataclass
class Prediction:
    """What a shim says of the things the gold labels."""

    flags: dict[str, bool] = field(default_factory=dict)
    """Flag spelling -> takes a value (the first option that has the flag decides)."""
    commands: list[str] = field(default_factory=list)
    children: dict[str, list[str]] = field(default_factory=dict)
    commands_with_options: int = 0


def predict(shim: Any) -> Prediction:
    """The root's flags (global options, then those of the root command ""), the
    first-level commands and their children."""
    out = Prediction()
    root = shim.commands.get("")
    for option in [*shim.global_options, *(root.options if root else [])]:
        for flag in option.flags:
            out.flags.setdefault(flag, option.type != "boolean")
    for name, command in shim.commands.items():
        if not name:
            continue
        out.commands.append(name)
        out.children[name] = list(command.commands)
        out.commands_with_options += bool(command.options)
    return out


@dataclass
class Counts:
    """One tool's counts; pooled figures are ratios of their sums."""

    opt_right: int = 0
    opt_predicted: int = 0
    opt_gold: int = 0
    value_right: int = 0
    value_scored: int = 0
    sub_valid: int = 0
    sub_predicted: int = 0
    sub_found: int = 0
    sub_gold: int = 0
    d2_found: int = 0
    d2_gold: int = 0
    d2_predicted: int = 0

    def option_f1(self) -> float:
        """This tool's option F1; 1.0 when neither the gold nor the shim has a flag."""
        if not self.opt_gold and not self.opt_predicted:
            return 1.0
        return f1(ratio(self.opt_right, self.opt_predicted), ratio(self.opt_right, self.opt_gold))


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def f1(precision: float | None, recall: float | None) -> float:
    if not precision or not recall:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def score(gold: dict[str, Any], got: Prediction) -> Counts:
    """Count what `got` has right against one tool's gold entry."""
    c = Counts()
    options: dict[str, bool | None] = gold["options"]
    c.opt_predicted, c.opt_gold = len(got.flags), len(options)
    for flag, takes in got.flags.items():
        if flag not in options:
            continue
        c.opt_right += 1
        if options[flag] is not None:
            c.value_scored += 1
            c.value_right += takes == options[flag]

    aliases: dict[str, str] = gold.get("aliases", {})

    def canonical(path: str) -> str:
        return aliases.get(path, path)

    subcommands = set(gold["subcommands"])
    valid = subcommands | set(gold.get("extra", [])) | {a for a in aliases if " " not in a}
    c.sub_predicted, c.sub_gold = len(got.commands), len(subcommands)
    c.sub_valid = sum(name in valid for name in got.commands)
    c.sub_found = len({canonical(name) for name in got.commands} & subcommands)

    pairs = {f"{parent} {child}" for parent, kids in gold["depth2"].items() for child in kids}
    predicted: set[str] = set()
    for name, kids in got.children.items():
        parent = canonical(name)
        if parent in gold["depth2"]:
            predicted |= {canonical(f"{parent} {kid}") for kid in kids}
    c.d2_gold, c.d2_predicted = len(pairs), len(predicted)
    c.d2_found = len(predicted & pairs)
    return c


@dataclass
class Row:
    """One tool inferred one way: what the old table showed, and the counts to score."""

    tool: str
    split: str
    mode: str
    missing: bool = False
    error: str | None = None
    subcommands: int = 0
    options: int = 0
    seconds: float = 0.0
    valid: bool = False
    sources: list[str] = field(default_factory=list)
    counts: Counts | None = None
    commands_with_options: int = 0


def infer(tool: str, mode: str, budget: float, depth: int = 2) -> tuple[Any, float]:
    """The shim `mode` makes for `tool`, and the seconds it took."""
    start = time.monotonic()
    if mode == "gen":
        from atipkit.infer.generate import generate_shim

        shim = generate_shim(tool, depth=depth, budget=budget, man=True)
    else:
        from atipkit.infer.coverage import file_hash, infer_shim

        found = os.path.abspath(shutil.which(tool) or tool)  # run by its name: multi-call
        shim = infer_shim(found, tool, file_hash(os.path.realpath(found)) or "")
    return shim, time.monotonic() - start


def measure(
    tool: str, mode: str, gold: dict[str, Any] | None, budget: float, depth: int = 2
) -> Row:
    """One tool inferred one way; a tool that fails to infer counts as inferring nothing."""
    import atipkit

    row = Row(tool, gold["split"] if gold else "-", mode)
    if shutil.which(tool) is None:
        row.missing = True
        return row
    try:
        shim, row.seconds = infer(tool, mode, budget, depth)
    except Exception as exc:  # one tool's failure is a figure, not the end of the run
        row.error = f"{type(exc).__name__}: {exc}"
        row.counts = score(gold, Prediction()) if gold else None
        return row
    commands = [c for p, c in atipkit.iter_commands(shim) if p]
    row.subcommands = len(commands)
    row.options = len(shim.global_options) + sum(
        len(c.options) for _, c in atipkit.iter_commands(shim)
    )
    row.valid = atipkit.validate(atipkit.dumps(shim)).ok
    row.sources = list(shim.extensions.get("_generation", {}).get("sources", []))
    got = predict(shim)
    row.commands_with_options = got.commands_with_options
    row.counts = score(gold, got) if gold else None
    return row


def pooled(rows: Iterable[Row]) -> dict[str, Any]:
    """The pooled figures of `rows` (missing tools left out)."""
    scored = [r for r in rows if r.counts is not None]
    total = Counts()
    for row in scored:
        for name, value in asdict(row.counts).items():  # type: ignore[arg-type]
            setattr(total, name, getattr(total, name) + value)
    precision = ratio(total.opt_right, total.opt_predicted)
    recall = ratio(total.opt_right, total.opt_gold)
    per_tool = [r.counts.option_f1() for r in scored]  # type: ignore[union-attr]
    return {
        "tools": len(scored),
        "option precision": precision,
        "option recall": recall,
        "option F1 (pooled)": f1(precision, recall) if total.opt_gold else None,
        "option F1 (mean per tool)": sum(per_tool) / len(per_tool) if per_tool else None,
        "takes a value": ratio(total.value_right, total.value_scored),
        "subcommand precision": ratio(total.sub_valid, total.sub_predicted),
        "subcommand recall": ratio(total.sub_found, total.sub_gold),
        "depth-2 recall": ratio(total.d2_found, total.d2_gold),
        "depth-2 precision": ratio(total.d2_found, total.d2_predicted),
        "counts": asdict(total),
    }


@contextmanager
def busy(n: int) -> Iterator[None]:
    """N CPU-bound processes for the duration, stopped (by their ids) whatever happens."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(n)
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def extra_root(root: Path) -> None:
    """Let this run find the programs and pages unpacked under `root` (`--extra-root`)."""
    found = [root / d for d in ("usr/sbin", "usr/bin", "sbin", "bin") if (root / d).is_dir()]
    if not found:
        sys.exit(f"{root}: no usr/sbin, usr/bin, sbin or bin to add to PATH")
    os.environ["PATH"] = os.pathsep.join([*map(str, found), os.environ.get("PATH", "")])
    if os.environ.get("MANPATH") and (root / "usr/share/man").is_dir():
        os.environ["MANPATH"] = f"{root / 'usr/share/man'}:{os.environ['MANPATH']}"


def isolate(tmp: str) -> None:
    """Keep the run off the user's registry, cache and configuration."""
    for name in [k for k in os.environ if k.startswith("ATIP_")]:
        del os.environ[name]
    for var in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        os.environ[var] = os.path.join(tmp, var.lower())


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_rows(rows: list[Row]) -> None:
    print(
        f"{'tool':14} {'split':5} {'mode':4} {'subcmds':>7} {'options':>7} {'seconds':>7} "
        f"{'valid':5} {'optP':>5} {'optR':>5} {'optF1':>5} {'value':>5} "
        f"{'subP':>5} {'subR':>5} {'d2R':>5}  sources"
    )
    for r in rows:
        if r.missing:
            print(f"{r.tool:14} {r.split:5} {r.mode:4} missing (not installed)")
            continue
        c = r.counts
        figures = (
            [
                fmt(ratio(c.opt_right, c.opt_predicted), 2),
                fmt(ratio(c.opt_right, c.opt_gold), 2),
                fmt(c.option_f1(), 2),
                fmt(ratio(c.value_right, c.value_scored), 2),
                fmt(ratio(c.sub_valid, c.sub_predicted), 2),
                fmt(ratio(c.sub_found, c.sub_gold), 2),
                fmt(ratio(c.d2_found, c.d2_gold), 2),
            ]
            if c
            else ["-"] * 7
        )
        print(
            f"{r.tool:14} {r.split:5} {r.mode:4} {r.subcommands:>7} {r.options:>7} "
            f"{r.seconds:>7.2f} {r.valid!s:5} "
            + " ".join(f"{f:>5}" for f in figures)
            + f"  {','.join(r.sources)}"
            + (f"  ERROR {r.error}" if r.error else "")
        )


def print_pooled(summary: dict[str, dict[str, dict[str, Any]]]) -> None:
    names = [
        "option precision",
        "option recall",
        "option F1 (pooled)",
        "option F1 (mean per tool)",
        "takes a value",
        "subcommand precision",
        "subcommand recall",
        "depth-2 recall",
        "depth-2 precision",
    ]
    columns = [(mode, split) for mode in summary for split in summary[mode]]
    print(f"{'pooled':28}" + "".join(f"{m + ' ' + s:>11}" for m, s in columns) + "   target")
    print(
        f"{'tools':28}" + "".join(f"{summary[m][s]['tools']:>11}" for m, s in columns) + "      -"
    )
    for name in names:
        cells = "".join(f"{fmt(summary[m][s][name]):>11}" for m, s in columns)
        target = TARGETS.get(name)
        print(f"{name:28}{cells}   {'≥ ' + format(target, 'g') if target else '-'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tools", nargs="*", help="tools to run (default: the gold set's)")
    parser.add_argument("--split", choices=SPLITS, default="all", help="gold tools to run")
    parser.add_argument("--mode", choices=[*MODES, "both"], default="both")
    parser.add_argument("--budget", type=float, default=10.0, help="`atip gen --budget`")
    parser.add_argument("--busy", type=int, default=0, metavar="N", help="CPU hogs alongside")
    parser.add_argument("--git-tree", action="store_true", help="also git --depth 3, 60 s")
    parser.add_argument("--gold", type=Path, default=GOLD)
    parser.add_argument(
        "--extra-root",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="also find tools and pages unpacked under DIR (dpkg-deb -x)",
    )
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    for root in args.extra_root:
        extra_root(root.resolve())

    gold = load_gold(args.gold)
    names = args.tools or sorted(t for t in gold if args.split in ("all", gold[t]["split"]))
    modes = list(MODES) if args.mode == "both" else [args.mode]
    splits = ["dev", "test", "all"] if args.split == "all" else [args.split]
    with tempfile.TemporaryDirectory(prefix="atip-bench-infer-") as tmp, busy(args.busy):
        isolate(tmp)
        start = time.monotonic()
        rows = [measure(t, m, gold.get(t), args.budget) for m in modes for t in names]
        extra = []
        if args.git_tree and "git" in names:
            extra.append(measure("git", "gen", None, 60.0, depth=3))
            extra[-1].tool = "git --depth 3"
        wall = time.monotonic() - start

    summary = {
        mode: {
            split: pooled(
                r for r in rows if r.mode == mode and split in ("all", r.split) and r.split != "-"
            )
            for split in splits
        }
        for mode in modes
    }
    git = {r.mode: r.commands_with_options for r in rows if r.tool == "git" and not r.missing}
    for row in extra:
        git["gen --depth 3 --budget 60"] = row.commands_with_options
    missing = sorted({r.tool for r in rows if r.missing})
    machine = {"cpu": cpu(), "cores": cores(), "python": platform.python_version()}
    if args.json:
        out = {
            "machine": machine,
            "busy": args.busy,
            "seconds": round(wall, 1),
            "missing": missing,
            "pooled": summary,
            "git commands with options": git,
            "rows": [asdict(r) for r in rows + extra],
        }
        print(json.dumps(out, indent=2))
        return
    print(
        f"{len(names)} tools x {len(modes)} modes in {wall:.0f} s; {machine['cpu']}, "
        f"{machine['cores']} cores, Python {machine['python']}"
        + (f"; {args.busy} CPU-bound processes alongside" if args.busy else "")
        + (f"; not installed: {', '.join(missing)}" if missing else "")
    )
    print_rows(rows + extra)
    print()
    print_pooled(summary)
    if git:
        print(
            "git first-level commands with options: "
            + ", ".join(f"{k} {v}" for k, v in git.items())
        )
    scored = [r for r in rows if not r.missing]
    print(
        f"all valid: {all(r.valid for r in scored)}; errors: {sum(bool(r.error) for r in scored)}"
    )


if __name__ == "__main__":
    main()
