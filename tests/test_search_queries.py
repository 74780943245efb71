"""The search evaluation data (tests/fixtures/search, issue 11): the queries and the pooled
judgments have the shape bench/search.py reads, the judgments cover every query, and every
kubectl and gh command either names exists in the real-size fixtures generated from those
binaries."""

from __future__ import annotations

import json
from functools import cache

import pytest

from atipkit.model import iter_commands, loads
from tests.helpers import FIXTURES

SEARCH = FIXTURES / "search"
FIXTURE_TOOLS = ("gh", "kubectl")


def queries() -> list[dict]:
    return json.loads((SEARCH / "queries.json").read_text(encoding="utf-8"))


def judgments() -> dict:
    return json.loads((SEARCH / "judgments.json").read_text(encoding="utf-8"))


@cache
def command_paths(tool: str) -> frozenset[str]:
    """Every command path of the fixture, space-joined; "" is the root invocation."""
    doc = loads((SEARCH / f"{tool}.json").read_text(encoding="utf-8"))
    assert doc.name == tool
    return frozenset({""} | {" ".join(path) for path, _ in iter_commands(doc)})


def test_every_entry_has_a_query_and_expected_answers():
    entries = queries()
    assert isinstance(entries, list)
    assert entries
    for entry in entries:
        assert set(entry) == {"query", "expected"}, entry
        query = entry["query"]
        assert isinstance(query, str), entry
        assert query.strip() == query, entry
        assert query, entry
        expected = entry["expected"]
        assert isinstance(expected, list), entry
        assert expected, entry
        for answer in expected:
            assert set(answer) <= {"tool", "command"}, entry
            assert isinstance(answer.get("tool"), str), entry
            assert answer["tool"], entry
            assert isinstance(answer.get("command", ""), str), entry
        assert len({json.dumps(a, sort_keys=True) for a in expected}) == len(expected), entry


def test_no_query_appears_twice():
    seen: set[str] = set()
    for entry in queries():
        key = " ".join(entry["query"].lower().split())
        assert key not in seen, entry["query"]
        seen.add(key)


@pytest.mark.parametrize("tool", FIXTURE_TOOLS)
def test_expected_commands_exist_in_the_fixture(tool):
    paths = command_paths(tool)
    expected = [
        answer for entry in queries() for answer in entry["expected"] if answer["tool"] == tool
    ]
    assert expected
    missing = sorted(
        {a["command"] for a in expected if "command" in a and a["command"] not in paths}
    )
    assert not missing, f"{tool}.json has no command {missing}"


def test_the_judgments_cover_every_query_once_and_only_the_queries():
    pooled = judgments()
    assert set(pooled) == {"about", "rule", "queries"}
    assert pooled["about"]
    assert pooled["rule"]
    judged = [entry["query"] for entry in pooled["queries"]]
    assert sorted(judged) == sorted(entry["query"] for entry in queries())
    assert len(judged) == len(set(judged))


def test_every_judgment_names_one_command_and_says_whether_and_why():
    for entry in judgments()["queries"]:
        assert set(entry) == {"query", "candidates"}, entry["query"]
        seen = set()
        for candidate in entry["candidates"]:
            assert set(candidate) == {"tool", "command", "relevant", "why"}, candidate
            assert isinstance(candidate["tool"], str), candidate
            assert candidate["tool"], candidate
            assert isinstance(candidate["command"], str), candidate
            assert isinstance(candidate["relevant"], bool), candidate
            assert isinstance(candidate["why"], str), candidate
            assert candidate["why"].strip(), candidate
            key = (candidate["tool"], candidate["command"])
            assert key not in seen, (entry["query"], key)
            seen.add(key)


@pytest.mark.parametrize("tool", FIXTURE_TOOLS)
def test_judged_commands_exist_in_the_fixture(tool):
    paths = command_paths(tool)
    judged = {
        candidate["command"]
        for entry in judgments()["queries"]
        for candidate in entry["candidates"]
        if candidate["tool"] == tool
    }
    assert judged
    assert not sorted(judged - paths), f"{tool}.json has no command {sorted(judged - paths)}"


@pytest.mark.parametrize("tool", FIXTURE_TOOLS)
def test_each_fixture_tool_has_its_own_queries(tool):
    """About 25 queries whose answers are all commands of one fixture tool."""
    own = [
        entry
        for entry in queries()
        if all(a["tool"] == tool and "command" in a for a in entry["expected"])
    ]
    assert len(own) >= 20


@pytest.mark.parametrize("tool", FIXTURE_TOOLS)
def test_fixtures_are_real_size(tool):
    """Real command trees (the examples have 8 and 4 commands), each well under 1 MB."""
    assert len(command_paths(tool)) > 100
    assert (SEARCH / f"{tool}.json").stat().st_size < 512 * 1024
