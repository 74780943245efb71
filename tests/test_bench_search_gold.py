"""The search gold (bench/data/search_gold.json) and how bench/search.py scores against it:
the file keeps its shape, size and split; a tool-level rank counts distinct tools, a
command-level rank takes commands below an answer's; queries whose tools are missing are
skipped and counted; the copy check finds a query lifted from a man page; `--errors`
refuses the test split."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
GOLD = BENCH / "data" / "search_gold.json"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "search"


class Hit(NamedTuple):
    tool: str
    command: str

    @property
    def name(self) -> str:
        return f"{self.tool} {self.command}".strip()


def _import(name: str) -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def gold_mod() -> ModuleType:
    return _import("search_gold")


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _import("search")


def test_the_gold_is_well_formed_and_as_large_as_the_issue_asks(gold_mod):
    queries = gold_mod.load_gold(GOLD)  # exits on a malformed entry
    assert gold_mod.check(queries) == []
    assert len(queries) >= 450
    assert len({q["query"] for q in queries}) == len(queries)
    assert all(q["answers"] and all(a["tool"] for a in q["answers"]) for q in queries)
    for q in queries:
        assert q["split"] == gold_mod.split_of(q["answers"][0]["tool"]), q["query"]
    assert len({q["answers"][0]["tool"] for q in queries}) >= 75
    assert sum(q["split"] == "test" for q in queries) >= 150
    commands = sum(any("command" in a for a in q["answers"]) for q in queries)
    assert commands / len(queries) >= 0.4
    assert all(
        set(a) <= {"tool", "command"} and a.get("command", "x").strip()
        for q in queries
        for a in q["answers"]
    )


def test_check_names_each_problem(gold_mod):
    good = {"query": "q", "answers": [{"tool": "git"}], "split": gold_mod.split_of("git")}
    wrong_split = {**good, "query": "r", "split": "test" if good["split"] == "dev" else "dev"}
    assert gold_mod.check([good]) == []
    problems = gold_mod.check([good, good, wrong_split, {"query": "s", "answers": []}])
    assert len(problems) == 3
    assert "twice" in problems[0]
    assert "split" in problems[1]
    assert "no answers" in problems[2]


def test_the_split_rule_is_bench_datas(gold_mod):
    assert gold_mod.split_of("chmod") == "test"  # sha256 % 3 == 0
    assert gold_mod.split_of("git") == "dev"
    assert _import("infer").split_of("tar") == gold_mod.split_of("tar")


def test_tool_level_ranks_distinct_tools_in_hit_order(gold_mod):
    hits = [Hit("git", "log"), Hit("git", "show"), Hit("tig", ""), Hit("gzip", "")]
    assert gold_mod.tool_rank(hits, [{"tool": "gzip"}]) == 3
    assert gold_mod.tool_rank(hits, [{"tool": "xz"}, {"tool": "git", "command": "x"}]) == 1
    assert gold_mod.tool_rank(hits, [{"tool": "xz"}]) is None


def test_command_level_takes_the_command_and_those_below_it(gold_mod):
    hits = [Hit("git", "stashed"), Hit("git", "stash push"), Hit("git", "stash")]
    assert gold_mod.command_rank(hits, [{"tool": "git", "command": "stash"}]) == 2
    assert gold_mod.command_rank(hits, [{"tool": "git", "command": "stash pop"}]) is None
    assert gold_mod.command_rank(hits, [{"tool": "git"}]) == 1
    assert gold_mod.command_rank(hits, [{"tool": "hg", "command": "stash"}]) is None


def test_queries_without_an_installed_answer_are_skipped_and_counted(bench):
    from atipkit.model import loads
    from atipkit.search import CommandIndex

    gh = loads((FIXTURES / "gh.json").read_bytes())
    index = CommandIndex.from_tools([gh])
    gold = [
        {"query": "open a pull request", "answers": [{"tool": "gh", "command": "pr create"}]},
        {"query": "compress a file", "answers": [{"tool": "nosuchtool"}]},
        {"query": "merge it", "answers": [{"tool": "hub"}, {"tool": "gh", "command": "pr"}]},
    ]
    for item in gold:
        item["split"] = "dev"
    commands = {"gh": set(gh.commands)}
    row = bench._gold_quality(index, {"gh"}, gold, {"hub": "gh"}, "all", False, commands)
    dev, test = row["figures"]["dev"], row["figures"]["test"]
    assert dev["queries"] == 2
    assert dev["skipped (no answer tool here)"] == 1
    assert test["queries"] == 0
    assert dev["tool"]["recall@5"] == 1.0  # gh is the only tool of the index
    assert 0 < dev["command"]["mrr"] <= 1


def test_an_answer_also_takes_its_binarys_own_name_not_a_sibling_links(
    bench, tmp_path, monkeypatch
):
    class Entry(NamedTuple):
        path: str

    real = tmp_path / "mawk"
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    for link in ("awk", "nawk"):
        (tmp_path / link).symlink_to(real)
    monkeypatch.setenv("PATH", str(tmp_path))
    entries = {name: Entry(str(real)) for name in ("awk", "mawk", "nawk")}
    assert bench._aliases(entries, {"awk", "mawk", "nawk"}) == {"awk": "mawk", "nawk": "mawk"}
    hit = Hit("mawk", "")
    assert bench._right(hit, [{"tool": "awk"}], {"awk": "mawk"})
    assert not bench._right(Hit("nawk", ""), [{"tool": "awk"}], {"awk": "mawk"})


def test_a_link_named_as_a_command_of_its_binary_is_that_command(bench):
    aliases, commands = {"reboot": "systemctl", "awk": "mawk"}, {"systemctl": {"reboot"}}
    answers = [{"tool": "reboot"}, {"tool": "awk"}, {"tool": "ls"}]
    assert bench._as_recorded(answers, aliases, commands) == [
        {"tool": "systemctl", "command": "reboot"},
        {"tool": "mawk"},
    ]


def test_the_copy_check_flags_five_words_from_a_man_page(gold_mod):
    if shutil.which("man") is None or "information about the" not in gold_mod.page_text("ls"):
        pytest.skip("the ls man page is not installed")
    copied = {"query": "list information about the files here", "answers": [{"tool": "ls"}]}
    near = {"query": "list information about the stuff", "answers": [{"tool": "ls"}]}
    found = gold_mod.overlaps([copied, near])
    assert [(q, page) for q, page, _ in found] == [(copied["query"], "ls")]


@pytest.mark.parametrize(
    "asked", [["--errors"], ["--ranks", "ranks.json"], ["--against", "ranks.json"]]
)
def test_errors_refuse_the_test_split_unless_asked(tmp_path, asked):
    """Each query's result on the held-out split stays out of sight of whoever tunes:
    its misses, its ranks written out, and its changes against an earlier run."""
    done = subprocess.run(
        [sys.executable, str(BENCH / "search.py"), "--split", "test", *asked],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "tune on dev" in done.stderr
    assert not (tmp_path / "ranks.json").exists()


def test_changes_name_the_queries_found_or_lost_in_the_top_5(gold_mod):
    before = {"a": [3, 7], "b": [None, None], "c": [6, 1], "d": [1, 1], "gone": [1, 1]}
    after = {"a": [6, 5], "b": [5, 9], "c": [6, 2], "d": [2, 4], "new": [None, None]}
    assert gold_mod.changes(before, after) == [
        "lost (tool 3 -> 6): 'a'",
        "found (command 7 -> 5): 'a'",
        "found (tool None -> 5): 'b'",
    ]


def test_the_file_is_valid_json_with_its_rule(gold_mod):
    data = json.loads(GOLD.read_text(encoding="utf-8"))
    assert "sha256" in data["_about"]["split"]


def test_errors_print_each_miss_with_its_ranks_and_first_hits(bench, capsys):
    """`--errors` names every gold miss, as the tuning loop (`--quality-only`) prints
    them: the query, its tool and command ranks and the first hits."""
    scored = {
        "bm25": {
            "misses": [{"query": "compress a file", "ranks": [7, None], "top": ["zcmp", "xzdiff"]}]
        }
    }
    bench._print_misses(scored)
    assert capsys.readouterr().out == (
        "  bm25 miss (tool 7, command None): 'compress a file' -> zcmp, xzdiff\n"
    )


def test_dev_is_halved_by_its_answer_tools(gold_mod):
    """Decision 595's halves: by the sha256 of the first answer's tool, mod 2, so each
    tool's queries fall in one half, and both halves of dev are large enough to read."""
    assert gold_mod.half_of("chmod") == 1
    assert gold_mod.half_of("git") == 0
    dev = [q for q in json.loads(GOLD.read_text())["queries"] if q["split"] == "dev"]
    sizes = [sum(gold_mod.half_of(q["answers"][0]["tool"]) == h for q in dev) for h in (0, 1)]
    assert sizes == [233, 130]


def test_dev_figures_carry_each_half_and_test_figures_do_not(bench, gold_mod):
    from atipkit.model import loads
    from atipkit.search import CommandIndex

    gh = loads((FIXTURES / "gh.json").read_bytes())
    index = CommandIndex.from_tools([gh])
    gold = [
        {"query": "open a pull request", "answers": [{"tool": "gh", "command": "pr create"}]},
        {"query": "brew the coffee zzyzx", "answers": [{"tool": "hub"}]},
        {"query": "list the releases", "answers": [{"tool": "gh", "command": "release"}]},
    ]
    for item, split in zip(gold, ("dev", "dev", "test"), strict=True):
        item["split"] = split
    halves = [gold_mod.half_of("gh"), gold_mod.half_of("hub")]
    assert sorted(halves) == [0, 1]  # one query in each half
    row = bench._gold_quality(index, {"gh"}, gold, {"hub": "gh"}, "all", False, {"gh": set()})
    figures = row["figures"]
    assert "halves" not in figures["test"]
    assert "halves" not in figures["all"]
    dev = figures["dev"]["halves"]
    assert [h["queries"] for h in dev] == [1, 1]
    assert dev[halves[0]]["command"]["recall@5"] == 1.0  # gh pr create is found
    assert dev[halves[1]]["tool"]["recall@5"] == 0.0  # no command has those words


def test_the_plain_baseline_is_standard_bm25_over_whole_pages():
    import math

    plain = _import("_plain")
    index = plain.PlainIndex(
        {
            "gzip": "gzip - compress or expand files. Compressed files keep their names.",
            "tar": "tar - an archiving utility. " + "It stores files in an archive. " * 9,
            "ls": "ls - list directory contents",
        }
    )
    hits = index.search("compress a file", 10)
    assert [h.tool for h in hits] == ["gzip", "tar"]  # ls's page has neither word
    assert {h.command for h in hits} == {""}
    # by hand, k1 1.2, b 0.75: gzip's 8 terms hold "compress" twice (one page of three
    # has it) and "file" twice (two pages of three); tar's 30, "file" nine times
    average = (8 + 30 + 4) / 3

    def part(df: int, tf: int, length: int) -> float:
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))

    assert hits[0].score == pytest.approx(part(1, 2, 8) + part(2, 2, 8))
    assert hits[1].score == pytest.approx(part(2, 9, 30))
    assert not index.search("zzyzx", 10)
    with pytest.raises(ValueError, match="BM25 alone"):
        index.search("compress", 10, rerank=True)


def test_the_pooled_page_adds_its_tools_page_score_to_each_matching_command():
    from atipkit.search import CommandIndex
    from atipkit.search.documents import CommandDoc
    from atipkit.search.terms import terms

    plain = _import("_plain")

    def doc(tool: str, path: tuple[str, ...], description: str) -> CommandDoc:
        name = terms(" ".join((tool, *path)))
        return CommandDoc(tool, path, description, [name, terms(description), *[[]] * 5])

    documents = [
        doc("alpha", (), "set the network link"),
        doc("beta", ("link",), "set a link up or down"),
        doc("beta", ("route",), "show the routing table"),
    ]
    index = CommandIndex.from_documents(documents)
    assert [h.tool for h in index.search("set the mtu")] == ["alpha", "beta"]
    page = "beta - show and set links. The mtu of a link is set with beta link set."
    pooled = plain.PooledIndex(index, documents, {"beta": page})
    hits = pooled.search("set the mtu", 10)
    assert [(h.tool, h.command) for h in hits] == [("beta", "link"), ("alpha", "")]
    # alpha has no page: its pooled document is its commands' terms
    tools = plain.PlainIndex({"alpha": documents[0].terms, "beta": terms(page)})
    alone = {index.hit(d, s).tool: s for d, s in index.ranked("set the mtu")}
    scores = {h.tool: h.score for h in tools.search("set the mtu", 10)}
    assert hits[1].score == pytest.approx(alone["alpha"] + 0.15 * scores["alpha"], abs=1e-4)
    assert not pooled.search("mtu", 10)  # a command must match the query itself
