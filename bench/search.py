"""Search quality, context savings and search speed (issue 11).

    python bench/search.py [--home DIR] [--gold PATH] [--split dev|test|all]
                           [--mode bm25|fused|both|plain] [--errors] [--ranks OUT]
                           [--against RANKS] [--i-know] [--quality-only]
                           [--budget-share 0.1] [--runs N] [--rerank] [--json]
                           [--instructions]

1. The index of this machine: every executable on PATH recorded by `atip scan --infer`
   (native metadata, shims, inferred metadata) into a registry of the bench's own,
   `--home` (default `~/.cache/atipkit-bench/search`; the first run infers the whole PATH
   and takes minutes, later runs take seconds), plus the gh and kubectl fixtures of
   tests/fixtures/search (real-size documents inferred from the real binaries).
2. Quality on the gold set (`--gold`, bench/data/search_gold.json, issue 21; written
   before any tuning, split by bench/data's rule): tool-level and command-level recall@1,
   recall@5 and MRR over the first 10, for `--split` (dev by default; tune on dev only)
   and `--mode` (BM25 alone, fused: `CommandIndex.search(rerank=True)`, or both side by
   side; `plain`: BM25 alone next to issue 21's plain baseline, each tool's whole man
   page as one document under standard BM25, and next to BM25 with that page pooled
   into a tool-level score, decision 743; bench/_plain.py). Tool-level ranks the
   distinct tools of the first 50 hits in the order they first appear; command-level is
   the rank of the first hit that is an answer's tool and, where the answer names a
   command, that command or one below it (bench/search_gold.py).
   Dev's recall@5 is also given on each half of its answer tools (`half_of`, decision
   595), where a change that is more than the draw of tools helps on both.
   Queries whose every answer tool this machine lacks are skipped and counted.
   `--errors` prints the dev misses; `--ranks OUT` writes each dev query's ranks (JSON,
   per mode) and `--against RANKS` prints the queries a change found or lost in the top
   5 against such a file; all three refuse the test split unless `--i-know`.
   `--quality-only` stops after the gold and project queries (for tuning loops).
   Project quality: the queries of tests/fixtures/search/queries.json (natural task descriptions,
   written by hand, not taken from any help text), each with its acceptable answers. A
   hit is right when its tool is an answer's and, where the answer names a command, the
   hit is that command or one below it — or when the pooled judgments of
   tests/fixtures/search/judgments.json found that very command relevant to the query
   (answers nobody wrote down: `logsave` saves a command's output while showing it, as
   `tee` does). Queries whose written tools this machine lacks are skipped and counted.
   Reported: recall@1, recall@5 and MRR (over the first 10 hits), and recall@5 by the
   written answers alone.
3. Tokens: the gh and kubectl fixtures compiled whole (OpenAI format) versus compiled
   with `--budget` at `--budget-share` of the whole (default 10 %) for each of their
   queries, and how often the budgeted compile still holds a right command: for the
   project queries (tuned on) and for bench/data/budget_holdout.json (written before
   that tuning; decision 516). `--tokens-only` measures this part alone (no scan).
4. Speed over 5 000 commands (the machine's index, padded with synthesized tools when it
   has fewer): loading the saved index and answering a BM25 query in one process, warm
   (median over the queries), the machine index's own up-to-date check plus load plus
   query, and the whole `atip search --ranking bm25` process next to `atip --version`,
   the floor of any atip command (run after run, and the median of their ratios); with
   `--instructions`, also the instructions each of the two executes once under valgrind's
   callgrind, which no load on the machine moves.
5. With `--rerank` (the `rerank` extra): the project queries ranked fused
   (`CommandIndex.search(rerank=True)`), side by side with BM25 alone, and its costs:
   loading the model, embedding every command of the machine afresh (the vectors are
   also kept under `--home`, so later runs reuse them), the query's own embedding, a
   fused query over the padded 5 000 commands, the whole fused `atip search` process
   warm, and a first `atip search` in an empty cache directory (index and vectors built),
   each process's wall time and its CPU time (user + sys), which load moves less.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _machine import cores, cpu, instructions
from _plain import PlainIndex, PooledIndex, page_texts
from _synth import synthesize
from search_gold import GOLD, changes, command_rank, half_of, load_gold, tool_rank

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "search"
TARGETS = {"recall@5": 0.9, "token reduction": 0.9, "search ms": 50.0}
SPEED_COMMANDS = 5000
HOLDOUT = ROOT / "bench" / "data" / "budget_holdout.json"
GOLD_HITS = 50  # hits fetched per gold query: enough distinct tools for a tool-level rank
MRR_DEPTH = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, default=Path.home() / ".cache/atipkit-bench/search")
    parser.add_argument("--budget-share", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--rerank", action="store_true", help="also measure the re-ranker")
    parser.add_argument("--gold", type=Path, default=GOLD, help="the gold set of queries")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--mode", choices=("bm25", "fused", "both", "plain"), default="bm25")
    parser.add_argument("--errors", action="store_true", help="print the gold misses (dev)")
    parser.add_argument("--ranks", type=Path, help="write each query's ranks here (dev)")
    parser.add_argument("--against", type=Path, help="compare with a --ranks file (dev)")
    parser.add_argument("--i-know", action="store_true", help="allow the above on test")
    parser.add_argument("--quality-only", action="store_true", help="no tokens, no speed")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the search and --version processes' instructions (callgrind)",
    )
    parser.add_argument("--tokens-only", action="store_true", help="the budgets alone")
    args = parser.parse_args()
    if args.tokens_only:
        _tokens_only(args)
        return
    per_query = args.errors or args.ranks or args.against
    if per_query and args.split != "dev" and not args.i_know:
        parser.error(
            "--errors, --ranks and --against read the test split's queries: tune on dev "
            "(or --i-know)"
        )
    gold = load_gold(args.gold)
    env = _bench_env(args.home)
    os.environ.update(env)
    scan_seconds = _scan(env)

    from atipkit.model import loads
    from atipkit.registry.local import LocalRegistry
    from atipkit.resolve import load_recorded
    from atipkit.search import CommandIndex

    registry = LocalRegistry()
    entries = registry.read().tools
    fixtures = {name: loads((FIXTURES / f"{name}.json").read_bytes()) for name in ("gh", "kubectl")}
    tools = [fixtures[name] for name in sorted(fixtures)]
    for name in sorted(entries):
        if name in fixtures:
            continue
        tool = load_recorded(registry, name, entries[name])
        if tool is not None:
            tools.append(tool)
    index = CommandIndex.from_tools(tools)
    queries = _queries()
    aliases = _aliases(entries, {a["tool"] for q in queries for a in q["expected"]})
    judgments = _judgments(queries, aliases)
    present = {t.name for t in tools}
    gold_aliases = _aliases(entries, {a["tool"] for q in gold for a in q["answers"]})
    plain = ["bm25", "plain", "pooled"]
    modes = {"both": ["bm25", "fused"], "plain": plain}.get(args.mode, [args.mode])
    if "fused" in modes:
        _embed(index, args.home)
    ranked: dict[str, Any] = dict.fromkeys(modes, index)
    if "plain" in modes:
        from atipkit.bridge.names import distinct_tools
        from atipkit.search.documents import command_documents

        pages = page_texts(tools, entries, args.home)
        documents = [doc for tool in distinct_tools(tools) for doc in command_documents(tool)]
        ranked["plain"] = PlainIndex(pages)
        ranked["pooled"] = PooledIndex(index, documents, pages)
    commands = {t.name: set(t.commands) for t in tools}
    scored = {
        mode: _gold_quality(
            ranked[mode], present, gold, gold_aliases, args.split, mode == "fused", commands
        )
        for mode in modes
    }
    quality = _quality(index, present, queries, aliases)
    ranks = {mode: row["ranks"] for mode, row in scored.items()}
    if args.ranks:
        args.ranks.write_text(json.dumps(ranks, indent=1, sort_keys=True))
    if args.quality_only:
        _print_gold(args.gold, {mode: row["figures"] for mode, row in scored.items()})
        if args.errors:
            _print_misses(scored)
        _print_changes(args.against, ranks)
        return
    tokens = _tokens(fixtures, queries, args.budget_share)
    speed = _speed(index, tools, queries, env, args.runs, count=args.instructions)
    rerank = _rerank(index, tools, queries, aliases, env, args) if args.rerank else None
    figures = {
        "machine": {"cpu": cpu(), "cores": cores(), "python": sys.version.split()[0]},
        "index": {"tools": len(tools), "commands": len(index), "scan seconds": scan_seconds},
        "judgments": judgments,
        "gold": {mode: row["figures"] for mode, row in scored.items()},
        "quality": quality,
        "tokens": tokens,
        "speed": speed,
    }
    if rerank is not None:
        figures["rerank"] = rerank
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print_gold(args.gold, figures["gold"])
        if args.errors:
            _print_misses(scored)
        _print_changes(args.against, ranks)
        _print(figures)


def _tokens_only(args: argparse.Namespace) -> None:
    """Part 3 alone: the fixtures' budgeted compiles need no scan of the machine."""
    from atipkit.model import loads

    fixtures = {name: loads((FIXTURES / f"{name}.json").read_bytes()) for name in ("gh", "kubectl")}
    figures = {
        "machine": {"cpu": cpu(), "cores": cores(), "python": sys.version.split()[0]},
        "tokens": _tokens(fixtures, _queries(), args.budget_share),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print_tokens(figures["tokens"])


def _print_tokens(tokens: dict[str, Any]) -> None:
    for name, row in tokens.items():
        print(
            f"{name}: {row['commands']} commands, {row['full tokens']} tokens whole, "
            f"budget {row['budget']}: median {row['median budgeted tokens']} tokens "
            f"({row['reduction']:.1%} fewer), right command kept in "
            f"{row['right command kept']:.0%} of {row['queries']} queries, "
            f"{row['right command kept, held-out']:.0%} of {row['held-out queries']} held-out"
        )


def _bench_env(home: Path) -> dict[str, str]:
    return {
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "ATIP_CACHE_DIR": str(home / "cache" / "agent-tools"),
    }


def _scan(env: dict[str, str]) -> float:
    """`atip scan --infer` over PATH into the bench's registry (resumable: a re-run only
    looks at what changed)."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "atipkit", "scan", "--infer", "--budget", "900", "--json"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"atip scan --infer failed ({done.returncode}): {done.stdout[-2000:]}")
    return round(time.monotonic() - start, 1)


def _queries() -> list[dict[str, Any]]:
    """The queries, each with its written answers (`expected`) and the commands the pooled
    judgments found relevant (`judged`, exact tool and command path; judgments.json)."""
    queries = json.loads((FIXTURES / "queries.json").read_text())
    judgments = json.loads((FIXTURES / "judgments.json").read_text())
    pooled = {entry["query"]: entry["candidates"] for entry in judgments["queries"]}
    for item in queries:
        item["pool"] = pooled.get(item["query"], [])
        item["judged"] = [
            {"tool": c["tool"], "command": c["command"], "exact": True}
            for c in item["pool"]
            if c["relevant"]
        ]
    return queries


def _answers(item: dict[str, Any]) -> list[dict[str, str]]:
    """Every right answer of a query: written, or judged relevant."""
    return [*item["expected"], *item["judged"]]


def _judgments(queries: list[dict[str, Any]], aliases: dict[str, str]) -> dict[str, int]:
    """What the pooled judgments say next to the written answers: how many of the pooled
    commands the written answers count right the assessors judged relevant too, and how
    many relevant ones no written answer names (the answers the pool added)."""
    pairs = relevant = written = agreed = added = 0
    widened = 0
    for item in queries:
        new = 0
        for candidate in item["pool"]:
            hit = _Hit(candidate["tool"], candidate["command"])
            pairs += 1
            relevant += candidate["relevant"]
            if _right(hit, item["expected"], aliases):
                written += 1
                agreed += candidate["relevant"]
            else:
                new += candidate["relevant"]
        added += new
        widened += new > 0
    return {
        "pairs judged": pairs,
        "judged relevant": relevant,
        "pooled hits the written answers count right": written,
        "of those, judged relevant": agreed,
        "answers added": added,
        "queries with added answers": widened,
    }


def _aliases(entries: dict[str, Any], names: set[str]) -> dict[str, str]:
    """The registry's name of the file each answer's tool runs, where it differs: a scan
    names a tool after its own file too, so `awk` is also recorded as `mawk` and `gcc` as
    `x86_64-linux-gnu-gcc-12` (the same binary, which is a right answer as well). Only
    the file's own name: every link to git's binary (`git-upload-pack`) is not git."""
    out = {}
    for name in names:
        found = shutil.which(name)
        if not found:
            continue
        real = os.path.realpath(found)
        own = Path(real).name
        if own != name and own in entries and entries[own].path == real:
            out[name] = own
    return out


def _right(hit: Any, answers: list[dict[str, Any]], aliases: dict[str, str] | None = None) -> bool:
    """Whether a hit is one of the answers: a written answer's tool, and its command or one
    below it; a judged answer's very command (`exact`)."""
    for answer in answers:
        if hit.tool not in (answer["tool"], (aliases or {}).get(answer["tool"])):
            continue
        command = answer.get("command")
        if command is None or hit.command == command:
            return True
        if not answer.get("exact") and hit.command.startswith(command + " "):
            return True
    return False


def _rank(hits: list[Any], answers: list[dict[str, Any]], aliases: dict[str, str]) -> int | None:
    """The 1-based rank of the first right hit; None when none is."""
    return next((i + 1 for i, hit in enumerate(hits) if _right(hit, answers, aliases)), None)


def _quality(
    index: Any,
    present: set[str],
    queries: list[dict[str, Any]],
    aliases: dict[str, str],
    rerank: bool = False,
) -> dict[str, Any]:
    ranks: list[int | None] = []
    written: list[int | None] = []  # the rank of the first hit a written answer names
    groups: dict[str, list[int | None]] = {}
    skipped, misses = 0, []
    for item in queries:
        expected = [a for a in item["expected"] if {a["tool"], aliases.get(a["tool"])} & present]
        if not expected:
            skipped += 1
            continue
        hits = index.search(item["query"], 10, rerank=rerank)
        rank = _rank(hits, [*expected, *item["judged"]], aliases)
        ranks.append(rank)
        written.append(_rank(hits, expected, aliases))
        groups.setdefault(_group(item), []).append(rank)
        if rank is None or rank > 5:
            misses.append({"query": item["query"], "top": [h.name for h in hits[:3]]})
    n = len(ranks) or 1
    return {
        "queries": len(ranks),
        "skipped (tool not on this machine)": skipped,
        "recall@1": round(sum(r == 1 for r in ranks) / n, 3),
        "recall@5": round(sum(r is not None and r <= 5 for r in ranks) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
        "recall@5, written answers only": round(
            sum(r is not None and r <= 5 for r in written) / n, 3
        ),
        "recall@5 by group": {
            group: [len(found), round(sum(r is not None and r <= 5 for r in found) / len(found), 3)]
            for group, found in sorted(groups.items())
        },
        "misses@5": misses,
    }


def _embed(index: Any, home: Path) -> None:
    """Embeds every command once for the fused ranking; the vectors are kept under
    `--home`, so later runs reuse them."""
    from atipkit.search import rerank

    index.save(home / "rerank")
    rerank.semantic(index)


def _gold_quality(
    index: Any,
    present: set[str],
    gold: list[dict[str, Any]],
    aliases: dict[str, str],
    split: str,
    fused: bool,
    commands: dict[str, set[str]],
) -> dict[str, Any]:
    """Tool- and command-level recall@1, recall@5 and MRR of the gold queries, per split
    (dev, test, and all when `split` is all), and the misses at 5 and every query's
    ranks of the chosen split."""
    ranks: dict[str, list[tuple[int | None, int | None]]] = {}
    halves: dict[int, list[tuple[int | None, int | None]]] = {0: [], 1: []}
    each: dict[str, tuple[int | None, int | None]] = {}
    skipped: dict[str, int] = {}
    misses = []
    for item in gold:
        if split not in ("all", item["split"]):
            continue
        answers = [*item["answers"], *_as_recorded(item["answers"], aliases, commands)]
        answers = [a for a in answers if a["tool"] in present]
        if not answers:
            skipped[item["split"]] = skipped.get(item["split"], 0) + 1
            continue
        hits = index.search(item["query"], GOLD_HITS, rerank=fused)
        pair = (tool_rank(hits, answers), command_rank(hits, answers))
        ranks.setdefault(item["split"], []).append(pair)
        if item["split"] == "dev":
            halves[half_of(item["answers"][0]["tool"])].append(pair)
        each[item["query"]] = pair
        if not all(r is not None and r <= 5 for r in pair):
            misses.append(
                {"query": item["query"], "ranks": pair, "top": [h.name for h in hits[:5]]}
            )
    splits = ["dev", "test", "all"] if split == "all" else [split]
    figures = {}
    for name in splits:
        pairs = [p for s, found in ranks.items() if name in ("all", s) for p in found]
        figures[name] = {
            "queries": len(pairs),
            "skipped (no answer tool here)": sum(
                n for s, n in skipped.items() if name in ("all", s)
            ),
            "tool": _recall([p[0] for p in pairs]),
            "command": _recall([p[1] for p in pairs]),
        }
        if name == "dev":  # the held-out split's figures stay aggregates only
            figures[name]["halves"] = [
                {
                    "queries": len(found),
                    "tool": _recall([p[0] for p in found]),
                    "command": _recall([p[1] for p in found]),
                }
                for found in halves.values()
            ]
    return {"figures": figures, "misses": misses, "ranks": each}


def _as_recorded(
    answers: list[dict[str, Any]], aliases: dict[str, str], commands: dict[str, set[str]]
) -> list[dict[str, Any]]:
    """The answers again under the registry's name of the file their tool runs; a link
    named as a command of that file's tool is that command (`reboot` runs `systemctl
    reboot`, not any systemctl command)."""
    out = []
    for answer in answers:
        own = aliases.get(answer["tool"])
        if own is None:
            continue
        if "command" not in answer and answer["tool"] in commands.get(own, set()):
            out.append({"tool": own, "command": answer["tool"]})
        else:
            out.append({**answer, "tool": own})
    return out


def _recall(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "recall@1": round(sum(r == 1 for r in ranks) / n, 3),
        "recall@5": round(sum(r is not None and r <= 5 for r in ranks) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r and r <= MRR_DEPTH) / n, 3),
    }


def _print_gold(path: Path, gold: dict[str, dict[str, Any]]) -> None:
    print(f"gold {path.name}: tool-level | command-level recall@1, recall@5, MRR@{MRR_DEPTH}")
    for mode, splits in gold.items():
        for split, row in splits.items():
            tool, command = row["tool"], row["command"]
            print(
                f"  {mode:5} {split:4} {row['queries']:4} queries "
                f"({row['skipped (no answer tool here)']} skipped): "
                f"tool {tool['recall@1']:.3f} {tool['recall@5']:.3f} {tool['mrr']:.3f} | "
                f"command {command['recall@1']:.3f} {command['recall@5']:.3f} "
                f"{command['mrr']:.3f}"
            )
            for number, half in enumerate(row.get("halves", ())):
                print(
                    f"        half {number} {half['queries']:4} queries by tool (decision 595): "
                    f"recall@5 tool {half['tool']['recall@5']:.3f} | "
                    f"command {half['command']['recall@5']:.3f}"
                )


def _print_misses(scored: dict[str, dict[str, Any]]) -> None:
    """Each mode's gold misses at 5 (`--errors`): the query, its tool and command ranks
    and the first five hits. Printed with `--quality-only` too, the tuning loop's run."""
    for mode, row in scored.items():
        for miss in row["misses"]:
            tool, command = miss["ranks"]
            print(
                f"  {mode} miss (tool {tool}, command {command}): {miss['query']!r} "
                f"-> {', '.join(miss['top'])}"
            )


def _print_changes(against: Path | None, ranks: dict[str, dict[str, Any]]) -> None:
    """The queries found or lost in the top 5 against an earlier run's `--ranks` file,
    per mode both runs scored."""
    if against is None:
        return
    before = json.loads(against.read_text())
    for mode in ranks.keys() & before.keys():
        found = changes(before[mode], ranks[mode])
        print(f"{mode} against {against.name}: {len(found)} changed")
        for line in found:
            print(f"  {line}")


def _group(item: dict[str, Any]) -> str:
    """Which part of the evaluation a query belongs to: a fixture's tool, or the machine."""
    tools = {a["tool"] for a in item["expected"]}
    return next((name for name in ("gh", "kubectl") if name in tools), "machine")


def _tokens(fixtures: dict[str, Any], queries: list[dict[str, Any]], share: float) -> dict:
    from atipkit.bridge import compile_tools
    from atipkit.search.tokens import count_tokens

    held_out = json.loads(HOLDOUT.read_text())["queries"]
    out = {}
    for name, tool in fixtures.items():
        whole = compile_tools(tool, "openai").tools
        full = count_tokens(whole)
        budget = int(full * share)
        mine = [
            (q["query"], _answers(q))
            for q in queries
            if any(a["tool"] == name for a in q["expected"])
        ]
        theirs = [
            (q["query"], [{"tool": name, "command": c} for c in q["commands"]])
            for q in held_out
            if q["tool"] == name
        ]
        totals, kept = _kept(name, tool, budget, mine)
        held_totals, held_kept = _kept(name, tool, budget, theirs)
        median = statistics.median(totals + held_totals) if totals or held_totals else 0
        out[name] = {
            "commands": len(whole),
            "full tokens": full,
            "budget": budget,
            "median budgeted tokens": median,
            "reduction": round(1 - median / full, 3) if full else 0,
            "queries": len(mine),
            "right command kept": round(kept / (len(mine) or 1), 3),
            "held-out queries": len(theirs),
            "right command kept, held-out": round(held_kept / (len(theirs) or 1), 3),
        }
    return out


def _kept(
    name: str, tool: Any, budget: int, queries: list[tuple[str, list[dict[str, Any]]]]
) -> tuple[list[int], int]:
    """The budgeted compile of each query: its total tokens, and how many of them hold a
    right command."""
    from atipkit.search.budget import fit_budget

    totals, kept = [], 0
    for query, answers in queries:
        fitted = fit_budget([tool], "openai", budget, query=query)
        totals.append(fitted.tokens.total)
        paths = [t.binding.targets[""].path for t in fitted.compiled.flat]
        kept += any(_right(_Hit(name, " ".join(p)), answers) for p in paths)
    return totals, kept


class _Hit:
    def __init__(self, tool: str, command: str) -> None:
        self.tool, self.command = tool, command


def _speed(
    index: Any,
    tools: list[Any],
    queries: list[dict[str, Any]],
    env: dict[str, str],
    runs: int,
    *,
    count: bool = False,
) -> dict[str, Any]:
    from atipkit.search import CommandIndex
    from atipkit.search.machine import machine_index

    texts = [q["query"] for q in queries]
    index = _padded(tools)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        index.save(directory)

        def load_and_query(text: str) -> None:
            CommandIndex.load(directory).search(text, 10, rerank=False)

        cold = _ms(lambda: load_and_query(texts[0]))
        warm = statistics.median(_ms(lambda t=t: load_and_query(t)) for t in texts)
        loaded = CommandIndex.load(directory)
        query_only = statistics.median(
            _ms(lambda t=t: loaded.search(t, 10, rerank=False)) for t in texts
        )
    machine_index()  # brings the machine index up to date once
    machine = statistics.median(
        _ms(lambda t=t: machine_index()[0].search(t, 10, rerank=False)) for t in texts[:runs]
    )
    cli = [sys.executable, "-m", "atipkit"]
    search = [*cli, "search", texts[0], "--ranking", "bm25", "--json"]
    _run(search, env)  # writes the bytecode once
    # side by side, run after run: the machine's load moves both alike
    pairs = [
        (_ms(lambda: _run(search, env)), _ms(lambda: _run([*cli, "--version"], env)))
        for _ in range(runs)
    ]
    process = statistics.median(p[0] for p in pairs)
    floor = statistics.median(p[1] for p in pairs)
    ratio = statistics.median(p[0] / p[1] for p in pairs)
    counted = {}
    if count:  # one process each: the same count on every run, however loaded
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        searched = instructions(search, {**clean, **env})
        version = instructions([*cli, "--version"], {**clean, **env})
        counted = {
            "instructions (M): atip search --ranking bm25 / atip --version": (
                f"{searched / 1e6:.1f} / {version / 1e6:.1f}"
            ),
            "search / --version, instructions": round(searched / version, 3),
        }
    return {
        "commands": len(index),
        "load + query, first (ms)": round(cold, 2),
        "search ms": round(warm, 2),
        "query only (ms)": round(query_only, 3),
        "machine index check + load + query (ms)": round(machine, 2),
        "machine index commands": machine_index()[1].commands,
        "atip search --ranking bm25 process (ms)": round(process, 1),
        "atip --version process (ms)": round(floor, 1),
        "search / --version, median of per-run ratios": round(ratio, 2),
        **counted,
    }


def _padded(tools: list[Any]) -> Any:
    """The index of `tools`, padded with synthesized tools to `SPEED_COMMANDS` commands
    when it has fewer (the same ones each run: seeded)."""
    from atipkit.model import from_dict
    from atipkit.search import CommandIndex

    padded, seed = list(tools), 0
    index = CommandIndex.from_tools(padded)
    while len(index) < SPEED_COMMANDS:
        seed += 1
        doc = synthesize(300, seed=seed)
        doc["name"] = f"synth{seed}"
        padded.append(from_dict(doc))
        index = CommandIndex.from_tools(padded)
    return index


def _rerank(
    index: Any,
    tools: list[Any],
    queries: list[dict[str, Any]],
    aliases: dict[str, str],
    env: dict[str, str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """The fused ranking's recall next to BM25's over the same index, and what it costs:
    the model's load, embedding every command of the machine afresh, the query's own
    embedding, a fused query over 5 000 commands, and whole `atip search` processes."""
    from atipkit.search import CommandIndex, embed, rerank
    from atipkit.trust import digest

    def later() -> None:  # as a new process: the digests known from the store alone
        digest._memory.clear()
        rerank.encoder.__wrapped__()

    # as a process loads it: the first hashes the files, later ones know their digests
    # (the cache directory's digest store, once any load has hashed them)
    load = {}
    rerank.encoder.__wrapped__()
    for when, make in (("first", embed.Encoder), ("later", later)):
        load[when] = round(statistics.median(_ms(make) for _ in range(args.runs)), 1)
    index.save(args.home / "rerank")  # its vectors are kept there, between runs
    state = rerank.semantic(index)
    present = {t.name for t in tools}
    quality = _quality(index, present, queries, aliases, rerank=True)
    texts = [q["query"] for q in queries]
    model = rerank.encoder()
    encode = statistics.median(_ms(lambda t=t: model.encode([t])) for t in texts)
    with tempfile.TemporaryDirectory() as tmp:  # every command embedded afresh
        shutil.copy(args.home / "rerank" / "index.bin", tmp)
        fresh = CommandIndex.load(Path(tmp))  # no vectors beside it
        started = time.monotonic()
        embedded = rerank.semantic(fresh).embedded
        fresh_seconds = time.monotonic() - started
    padded = _padded(tools)
    padded.save(args.home / "rerank-padded")  # the synthesized commands' vectors, kept
    rerank.semantic(padded)
    query = statistics.median(_ms(lambda t=t: padded.search(t, 10, rerank=True)) for t in texts)
    cli = [sys.executable, "-m", "atipkit", "search", texts[0], "--json"]
    _run(cli, env)  # embeds the machine index's commands once
    runs = [_timed(cli, env) for _ in range(args.runs)]
    process = statistics.median(wall for wall, _cpu in runs)
    process_cpu = statistics.median(cpu for _wall, cpu in runs)
    with tempfile.TemporaryDirectory() as tmp:  # a first search: no index, no vectors
        first, first_cpu = _timed(cli, {**env, "ATIP_CACHE_DIR": tmp})
    return {
        "model": embed.MODEL,
        "depth": rerank.DEPTH,
        "k": rerank.K,
        "quality": quality,
        "model load, first (ms)": load["first"],
        "model load (ms)": load["later"],
        "commands embedded": state.embedded,
        f"embedding all {embedded} commands afresh (s)": round(fresh_seconds, 1),
        "query embedding (ms)": round(encode, 2),
        f"fused query over {len(padded)} commands, query embedding included (ms)": round(query, 2),
        "atip search process, fused, warm (ms)": round(process, 1),
        "— its CPU time, user + sys (ms)": round(process_cpu, 1),
        "first atip search: index and every vector built (s)": round(first / 1000, 1),
        "— its CPU time, user + sys (s)": round(first_cpu / 1000, 1),
        "1-minute load": round(os.getloadavg()[0], 1),
    }


def _ms(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One `_run`'s wall time and its CPU time (user + sys, every thread), in ms: a
    loaded machine moves the second less."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = _ms(lambda: _run(argv, env))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu * 1000


def _run(argv: list[str], env: dict[str, str]) -> None:
    """One atip process as installed: with its bytecode cached (a sandbox that sets
    PYTHONDONTWRITEBYTECODE would otherwise make every process compile atipkit again)."""
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, env={**clean, **env}, capture_output=True, check=True)


def _print(figures: dict[str, Any]) -> None:
    machine, index = figures["machine"], figures["index"]
    print(f"{machine['cpu']}, {machine['cores']} cores, Python {machine['python']}")
    print(f"index: {index['tools']} tools, {index['commands']} commands")
    judged = figures["judgments"]
    print(
        f"judgments: {judged['pairs judged']} pairs, {judged['judged relevant']} relevant; "
        f"{judged['of those, judged relevant']} of the "
        f"{judged['pooled hits the written answers count right']} pooled hits the written "
        f"answers count right judged relevant; {judged['answers added']} answers added "
        f"over {judged['queries with added answers']} queries"
    )
    quality = figures["quality"]
    print(
        f"project queries ({quality['queries']}, tuned on before) "
        f"({quality['skipped (tool not on this machine)']} skipped): "
        f"recall@1 {quality['recall@1']}, recall@5 {quality['recall@5']} "
        f"(target >= {TARGETS['recall@5']}; written answers only: "
        f"{quality['recall@5, written answers only']}), MRR {quality['mrr']}"
    )
    print(f"  recall@5 by group: {_by_group(quality)}")
    for miss in quality["misses@5"]:
        print(f"  miss: {miss['query']!r} -> {', '.join(miss['top'])}")
    _print_tokens(figures["tokens"])
    speed = figures["speed"]
    for key, value in speed.items():
        print(f"  {key}: {value}")
    rerank = figures.get("rerank")
    if rerank is not None:
        quality = rerank["quality"]
        print(
            f"re-ranked ({rerank['model']}, depth {rerank['depth']}): "
            f"recall@1 {quality['recall@1']}, recall@5 {quality['recall@5']} "
            f"(written answers only: {quality['recall@5, written answers only']}), "
            f"MRR {quality['mrr']} (BM25 alone: {figures['quality']['recall@1']}, "
            f"{figures['quality']['recall@5']}, {figures['quality']['mrr']})"
        )
        print(f"  recall@5 by group: {_by_group(quality)}")
        for miss in quality["misses@5"]:
            print(f"  miss: {miss['query']!r} -> {', '.join(miss['top'])}")
        for key, value in rerank.items():
            if key not in ("quality", "model", "depth"):
                print(f"  {key}: {value}")


def _by_group(quality: dict[str, Any]) -> str:
    groups = quality["recall@5 by group"]
    return ", ".join(f"{g} {r} ({n} queries)" for g, (n, r) in groups.items())


if __name__ == "__main__":
    main()
