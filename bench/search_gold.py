"""The search gold set (bench/data/search_gold.json): its split rule, its checks, and how a
ranked list of hits is scored against its answers (issue 21).

    python bench/search_gold.py [PATH]   # checks the file; exits non-zero on a problem

The check is the one run before the file was frozen: every query well formed, with the
split the rule gives its first answer's tool, no query twice, and no query that shares a
run of OVERLAP consecutive words with the NAME or DESCRIPTION of an answer's man page
(the tool's page, and the page of the command an answer names, `git-stash`), so no query
was copied from the text the index is built from.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

GOLD = Path(__file__).resolve().parent / "data" / "search_gold.json"
OVERLAP = 5
WORD = re.compile(r"[a-z0-9]+")
HEADING = re.compile(r"^[A-Z][A-Z0-9 ]*$")


class Hit(Protocol):
    tool: str
    command: str


def split_of(tool: str) -> str:
    """The split rule of every gold set under bench/data: one tool in three is held out."""
    return "test" if int(hashlib.sha256(tool.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def half_of(tool: str) -> int:
    """Which half of a split a tool's queries fall in (0 or 1: sha256 of its name, mod 2;
    decision 595): a ranking change that helps on one half of dev's tools and not on
    the other is the draw of tools, not a gain that will hold out."""
    return int(hashlib.sha256(tool.encode()).hexdigest(), 16) % 2


def load_gold(path: Path = GOLD) -> list[dict[str, Any]]:
    """The queries of a gold file; exits with every problem found when it is malformed."""
    queries = json.loads(path.read_text(encoding="utf-8"))["queries"]
    problems = check(queries)
    if problems:
        sys.exit(f"{path}:\n" + "\n".join(problems))
    return queries


def check(queries: Sequence[dict[str, Any]]) -> list[str]:
    """What is wrong with a list of gold queries: empty answers, a split other than the
    rule's, a query given twice."""
    problems, seen = [], set()
    for item in queries:
        query, answers = item.get("query"), item.get("answers")
        if not isinstance(query, str) or not query.strip():
            problems.append(f"a query without text: {item!r}")
            continue
        if query in seen:
            problems.append(f"{query!r}: given twice")
        seen.add(query)
        if not answers or not all(isinstance(a.get("tool"), str) for a in answers):
            problems.append(f"{query!r}: no answers, or an answer without a tool")
            continue
        if item.get("split") != split_of(answers[0]["tool"]):
            problems.append(f"{query!r}: split is not the one the rule gives")
    return problems


def tool_rank(hits: Iterable[Hit], answers: Sequence[dict[str, Any]]) -> int | None:
    """The 1-based rank of the first answer tool among the distinct tools of the hits, in
    the order they first appear (a tool's many commands count once); None when absent."""
    tools = {a["tool"] for a in answers}
    seen: set[str] = set()
    for hit in hits:
        if hit.tool in seen:
            continue
        seen.add(hit.tool)
        if hit.tool in tools:
            return len(seen)
    return None


def command_rank(hits: Iterable[Hit], answers: Sequence[dict[str, Any]]) -> int | None:
    """The 1-based rank of the first hit that is an answer: its tool, and where the answer
    names a command, that command or one below it (`stash` takes `stash push`)."""
    for rank, hit in enumerate(hits, 1):
        for answer in answers:
            command = answer.get("command")
            if hit.tool == answer["tool"] and (
                command is None or hit.command == command or hit.command.startswith(command + " ")
            ):
                return rank
    return None


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The queries found in the top 5 by one of two runs and not by the other, at either
    level: `before` and `after` map each query to its (tool rank, command rank), as
    bench/search.py's `--ranks` writes them; a query one run did not score is left out."""
    out = []
    for query in sorted(before.keys() & after.keys()):
        for level, old, new in zip(("tool", "command"), before[query], after[query], strict=True):
            found, lost = _top5(new) and not _top5(old), _top5(old) and not _top5(new)
            if found or lost:
                out.append(f"{'found' if found else 'lost'} ({level} {old} -> {new}): {query!r}")
    return out


def _top5(rank: int | None) -> bool:
    return rank is not None and rank <= 5


def overlaps(queries: Sequence[dict[str, Any]], n: int = OVERLAP) -> list[tuple[str, str, str]]:
    """(query, page, shared words) for each query sharing n consecutive words with the NAME
    or DESCRIPTION of one of its answers' man pages."""
    pages: dict[str, set[tuple[str, ...]]] = {}
    found = []
    for item in queries:
        words = WORD.findall(item["query"].lower())
        grams = {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}
        for page in _pages_of(item["answers"]):
            if page not in pages:
                pages[page] = _grams(page_text(page), n)
            shared = grams & pages[page]
            if shared:
                found.append((item["query"], page, " ".join(sorted(shared)[0])))
    return found


def _pages_of(answers: Sequence[dict[str, Any]]) -> list[str]:
    names = []
    for answer in answers:
        names.append(answer["tool"])
        if answer.get("command"):
            names.append(f"{answer['tool']}-{answer['command'].split()[0]}")
    return list(dict.fromkeys(names))


def _grams(text: str, n: int) -> set[tuple[str, ...]]:
    words = WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def page_text(page: str) -> str:
    """The NAME and DESCRIPTION sections of an installed man page, rendered here without
    network; empty when there is no such page."""
    done = subprocess.run(
        ["man", "-P", "cat", page],
        env={**os.environ, "MANWIDTH": "2000", "MAN_KEEP_FORMATTING": ""},
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        timeout=60,
    )
    if done.returncode != 0:
        return ""
    text = re.sub(r".\x08", "", done.stdout)
    keep, out = False, []
    for line in text.splitlines():
        if HEADING.match(line):
            keep = line.strip() in ("NAME", "DESCRIPTION")
        elif keep:
            out.append(line)
    return "\n".join(out)


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else GOLD
    queries = load_gold(path)
    found = overlaps(queries)
    for query, page, shared in found:
        print(f"{query!r} shares {OVERLAP} words with {page}(1): {shared!r}")
    tools = {a["tool"] for q in queries for a in q["answers"]}
    firsts = {q["answers"][0]["tool"] for q in queries}
    commands = sum(any("command" in a for a in q["answers"]) for q in queries)
    tests = sum(q["split"] == "test" for q in queries)
    print(
        f"{len(queries)} queries, {len(firsts)} first-answer tools ({len(tools)} answer tools), "
        f"{len(queries) - tests} dev / {tests} test, {commands} with command answers "
        f"({commands / len(queries):.0%}), {len(found)} copied from a man page"
    )
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
