"""Client-side partial discovery: the same fields a native tool would fill in."""

from __future__ import annotations

import json

import pytest

import atipkit
from atipkit.partial import select
from tests.helpers import EXAMPLES, FIXTURES

GH = atipkit.load(EXAMPLES / "tools" / "gh.json")


def paths(tool: atipkit.Tool) -> list[str]:
    return [" ".join(p) for p, _ in atipkit.iter_commands(tool)]


def test_commands_keep_whole_subtrees_and_the_way_to_paths():
    part = select(GH, commands=["repo", "pr create"])
    assert paths(part) == ["pr", "pr create", "repo", "repo clone"]
    assert (part.partial, part.total_commands, part.included_commands) == (True, 8, 4)
    assert part.filter.commands == ["repo", "pr create"]
    assert part.filter.depth is None
    assert (part.omitted.reason, part.omitted.safety_assumption) == ("filtered", "unknown")
    assert atipkit.validate(atipkit.dumps(part)).problems == []


def test_omitted_is_written_whole_as_the_rfc_shows_it():
    """§3.1.1 writes `safetyAssumption` even when it is "unknown"; a reader that does
    `omitted["safetyAssumption"]` must find it in what atipkit writes."""
    written = json.loads(atipkit.dumps(select(GH, depth=1)))
    assert written["omitted"] == {"reason": "depth-limited", "safetyAssumption": "unknown"}
    example = json.loads((FIXTURES / "rfc" / "rfc06-3.1.1-partial-discovery.json").read_text())
    rfc = atipkit.from_dict({**atipkit.to_dict(GH), **example})
    assert json.loads(atipkit.dumps(rfc))["omitted"] == example["omitted"]


def test_depth_one_is_top_level_only():
    part = select(GH, depth=1)
    assert paths(part) == ["pr", "issue", "repo"]
    assert part.omitted.reason == "depth-limited"
    assert part.filter.depth == 1
    assert atipkit.validate(atipkit.dumps(part)).problems == []


def test_selecting_everything_returns_the_tool_itself():
    assert select(GH, commands=["pr", "issue", "repo"]) is GH
    assert select(GH, depth=5) is GH


def test_a_selection_of_a_partial_document_keeps_the_original_total():
    twice = select(select(GH, depth=1), commands=["pr"])
    assert twice.total_commands == 8
    assert twice.included_commands == 1


def test_errors():
    with pytest.raises(KeyError, match="pr nope"):
        select(GH, commands=["pr nope"])
    with pytest.raises(ValueError, match="depth"):
        select(GH, depth=0)
