"""Every `atip` command's start-up beside plain Click's floor, side by side.

    python bench/cli_startup.py [--runs N] [--only WORD ...] [--imports] [--instructions]
                                [--json]

The floor is a plain Click group of atip's shape, generated from atip's own command tree
(the same groups and commands by name, each with its summary as help, doing nothing):
what any Click program of that shape pays to start. For every command X (and `atip
--help`, `atip --version`), `atip X --help` and the floor's `X --help` run as fresh
processes of this interpreter, one of each per round, all jobs of a round in a shuffled
order, so a change of load on the machine falls on both alike; compiled modules are kept
(PYTHONDONTWRITEBYTECODE dropped), as an installed package has them. Reported: each
median and p95 (ms) and the ratio of the medians, and the ratio of the median CPU times
(the child's user + system time, steadier on a loaded machine); the target (issue 22) is every ratio
within 1.3. `--imports` also lists, for each command, the modules its `--help` imports
beyond the floor's (what to make lazy when one is over). `--instructions` also counts,
once per command, the instructions each process executes under valgrind's callgrind (a
fixed hash seed): a count that does not move with the load, for a machine shared with
other work, where the wall clock does.

atipkit is the one this script imports (PYTHONPATH is passed on); run it from the
README's install (`pip install -e .`) or with PYTHONPATH at a tree's `src`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import cores, cpu, instructions

TARGET_RATIO = 1.3
ATIP = "from atipkit.cli import main; main()"
FLOOR = "from atip_floor import cli; cli(prog_name='atip')"
IMPORTS = (
    "import sys, runpy; sys.argv = ['atip', *sys.argv[1:]]\n"
    "try:\n    {run}\nexcept SystemExit:\n    pass\n"
    "print('\\n'.join(sorted(sys.modules)), file=sys.__stderr__)"
)


def command_tree() -> dict[str, Any]:
    """atip's commands: name → summary (a command) or a dict (a group), in `--help` order."""
    from atipkit.app import Group
    from atipkit.cli import app

    def walk(group: Group) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, child in group.children.items():
            if isinstance(child, Group):
                out[name] = walk(child)
            elif not child.hidden:
                out[name] = child.summary
        return out

    tree = walk(app)
    for name in app.builtins:  # atip's `docs`: plain Click groups
        from atipkit.app import builtins

        group = builtins.group(app, name)
        tree[name] = {n: c.get_short_help_str() for n, c in group.commands.items()}
    return tree


def floor_source(tree: dict[str, Any]) -> str:
    """A plain Click program of the tree's shape whose commands do nothing."""
    lines = ["import click", "", "", "@click.group()", "@click.version_option('0')"]
    lines += ["def cli():", '    """atip"""', ""]
    counter = iter(range(10_000))

    def add(parent: str, node: dict[str, Any]) -> None:
        for name, child in node.items():
            var = f"c{next(counter)}"
            if isinstance(child, dict):
                lines.append(f"@{parent}.group({name!r})")
                lines.extend([f"def {var}():", "    pass", ""])
                add(var, child)
            else:
                lines.append(f"@{parent}.command({name!r}, help={child!r})")
                lines.extend([f"def {var}():", "    pass", ""])

    add("cli", tree)
    return "\n".join(lines) + "\n"


def paths(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, child in tree.items():
        out.append((*prefix, name))
        if isinstance(child, dict):
            out += paths(child, (*prefix, name))
    return out


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall-clock ms, CPU ms) of one process. CPU time (user + system, the child's own)
    moves less than the wall clock when other processes load the machine."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]!r}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return elapsed, cpu


def imported(code: str, words: list[str], env: dict[str, str]) -> set[str]:
    script = IMPORTS.format(run="\n    ".join(part.strip() for part in code.split(";")))
    done = subprocess.run(
        [sys.executable, "-c", script, *words],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return set(done.stderr.split())


def measure(args: argparse.Namespace) -> dict[str, Any]:
    tree = command_tree()
    cases: list[tuple[str, list[str]]] = [("--version", ["--version"]), ("--help", ["--help"])]
    for path in paths(tree):
        if args.only and path[0] not in args.only:
            continue
        cases.append((" ".join(path), [*path, "--help"]))
    with tempfile.TemporaryDirectory(prefix="atipkit-bench-") as tmp:
        Path(tmp, "atip_floor.py").write_text(floor_source(tree), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tmp, env.get("PYTHONPATH")) if p)
        env["COLUMNS"] = "80"
        env["XDG_CONFIG_HOME"] = str(Path(tmp, "config"))  # no user settings read
        jobs = [(label, kind, words) for label, words in cases for kind in ("atip", "floor")]
        samples: dict[tuple[str, str], list[float]] = {(lb, k): [] for lb, k, _ in jobs}
        cpu_ms: dict[tuple[str, str], list[float]] = {(lb, k): [] for lb, k, _ in jobs}
        for _label, kind, words in jobs:  # warm: compiled modules, the page cache
            timed([sys.executable, "-c", ATIP if kind == "atip" else FLOOR, *words], env)
        for _ in range(args.runs):
            random.shuffle(jobs)
            for label, kind, words in jobs:
                code = ATIP if kind == "atip" else FLOOR
                wall, cpu_time = timed([sys.executable, "-c", code, *words], env)
                samples[label, kind].append(wall)
                cpu_ms[label, kind].append(cpu_time)
        counted: dict[tuple[str, str], int] = {}
        if args.instructions:
            for label, kind, words in jobs:
                code = ATIP if kind == "atip" else FLOOR
                counted[label, kind] = instructions([sys.executable, "-c", code, *words], env)
        extra: dict[str, list[str]] = {}
        if args.imports:
            for label, words in cases:
                mine = imported(ATIP, words, env)
                floor = imported(FLOOR, words, env)
                extra[label] = sorted(mine - floor)
    rows = []
    for label, _words in cases:
        a, f = samples[label, "atip"], samples[label, "floor"]
        row = {
            "command": label,
            "atip_ms": {"median": statistics.median(a), "p95": _p95(a)},
            "floor_ms": {"median": statistics.median(f), "p95": _p95(f)},
            "ratio": statistics.median(a) / statistics.median(f),
            "cpu_ratio": statistics.median(cpu_ms[label, "atip"])
            / statistics.median(cpu_ms[label, "floor"]),
        }
        if counted:
            row["instructions"] = {"atip": counted[label, "atip"], "floor": counted[label, "floor"]}
            row["instruction_ratio"] = counted[label, "atip"] / counted[label, "floor"]
        if label in extra:
            row["imports_beyond_floor"] = extra[label]
        rows.append(row)
    return {
        "machine": {"cpu": cpu(), "cores": cores(), "python": sys.version.split()[0]},
        "atipkit_from": str(Path(__import__("atipkit").__file__).parent.parent),
        "runs": args.runs,
        "target_ratio": TARGET_RATIO,
        "rows": rows,
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; atipkit from "
        f"{report['atipkit_from']}; {report['runs']} rounds, medians / p95 (ms)",
        "",
    ]
    counted = all("instruction_ratio" in row for row in report["rows"])
    head = "| `atip ... --help` | atip | plain Click, same shape | ratio | CPU-time ratio |"
    lines += [head + (" instructions, atip / floor (M) | ratio |" if counted else "")]
    lines += ["|---|---|---|---|---|" + ("---|---|" if counted else "")]
    over = []
    for row in report["rows"]:
        a, f = row["atip_ms"], row["floor_ms"]
        flag = "" if row["ratio"] <= report["target_ratio"] else " **over**"
        if flag:
            over.append(row["command"])
        line = (
            f"| {row['command']} | {a['median']:.1f} / {a['p95']:.1f} | "
            f"{f['median']:.1f} / {f['p95']:.1f} | {row['ratio']:.2f}{flag} | "
            f"{row['cpu_ratio']:.2f} |"
        )
        if counted:
            n = row["instructions"]
            line += f" {n['atip'] / 1e6:.1f} / {n['floor'] / 1e6:.1f} | "
            line += f"{row['instruction_ratio']:.3f} |"
        lines.append(line)
    ratios = [row["ratio"] for row in report["rows"]]
    cpu = [row["cpu_ratio"] for row in report["rows"]]
    lines += [""]
    if counted:
        counts = [row["instruction_ratio"] for row in report["rows"]]
        lines.append(
            f"instruction ratios: median {statistics.median(counts):.3f}, max {max(counts):.3f}"
        )
    lines += [
        f"CPU-time ratios: median {statistics.median(cpu):.2f}, max {max(cpu):.2f}",
        f"ratios: median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
        f"target ≤ {report['target_ratio']}: "
        + ("every command within it" if not over else f"over: {', '.join(over)}"),
    ]
    for row in report["rows"]:
        if row.get("imports_beyond_floor"):
            mods = [m for m in row["imports_beyond_floor"] if not m.startswith("_")]
            lines.append(f"{row['command']}: {len(mods)} modules beyond the floor's")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="rounds of fresh processes")
    parser.add_argument("--only", nargs="*", help="only these top-level commands")
    parser.add_argument("--imports", action="store_true", help="list imports beyond the floor")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (valgrind)"
    )
    parser.add_argument("--json", action="store_true", help="print figures as JSON")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    report = measure(args)
    print(json.dumps(report, indent=2) if args.json else render(report))


if __name__ == "__main__":
    main()
