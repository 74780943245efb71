"""The effects gold (bench/data/effects_gold.json) and how bench/effects.py scores against
it: the gold keeps its shape, split and size; a prediction is read from effective effects,
inherited as SPEC-NOTES 4 says; a bad gold entry stops the bench with what is wrong."""

from __future__ import annotations

import hashlib
import importlib
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from atipkit.model import AtipVersion, Command, Effects, FilesystemEffects, Tool

BENCH = Path(__file__).resolve().parent.parent / "bench"
GOLD = BENCH / "data" / "effects_gold.json"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module("effects")
    finally:
        sys.path.remove(str(BENCH))


def gold() -> list[dict]:
    return json.loads(GOLD.read_text(encoding="utf-8"))


def test_the_gold_is_as_large_and_mixed_as_the_issue_asks(bench):
    entries = bench.load_gold(GOLD)  # exits on any malformed entry
    classes = Counter(e["class"] for e in entries)
    assert len(entries) >= 320
    assert len({e["tool"] for e in entries}) >= 42
    assert classes["destructive"] >= 80
    assert classes["read-only"] >= 120
    assert {e["split"] for e in entries} == {"dev", "test"}
    assert sum(1 for e in entries if len(e["command"]) == 2) >= 40  # second-level commands


def test_every_split_is_the_hash_of_the_tool_name():
    for entry in gold():
        digest = int(hashlib.sha256(entry["tool"].encode()).hexdigest(), 16)
        assert entry["split"] == ("test" if digest % 3 == 0 else "dev"), entry


def test_every_tool_of_the_gold_is_installed_here():
    missing = sorted({e["tool"] for e in gold() if shutil.which(e["tool"]) is None})
    assert missing == []


def test_a_wrong_split_stops_the_bench_naming_the_entry(bench, tmp_path):
    entry = {**gold()[0]}
    entry["split"] = "test" if entry["split"] == "dev" else "dev"
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([entry]))
    with pytest.raises(SystemExit, match=r"entry 0 .*'split' must be"):
        bench.load_gold(path)


def test_a_command_listed_twice_stops_the_bench(bench, tmp_path):
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([gold()[0], gold()[0]]))
    with pytest.raises(SystemExit, match="listed twice"):
        bench.load_gold(path)


def shim(tool_effects: Effects | None = None) -> Tool:
    """A tool with commands of every kind of stated effects."""
    return Tool(
        atip=AtipVersion(version="0.6"),
        name="t",
        version="1",
        description="t",
        effects=tool_effects if tool_effects is not None else Effects(),
        commands={
            "list": Command(
                description="list",
                effects=Effects(filesystem=FilesystemEffects(write=False), network=False),
            ),
            "fetch": Command(description="fetch", effects=Effects(network=True)),
            "prune": Command(
                description="prune",
                effects=Effects(filesystem=FilesystemEffects(write=False, delete=True)),
            ),
            "add": Command(
                description="add", effects=Effects(filesystem=FilesystemEffects(write=True))
            ),
            "remote": Command(
                description="remote",
                commands={"drop": Command(description="drop", effects=Effects(destructive=True))},
            ),
        },
    )


def test_a_prediction_is_read_from_the_commands_effects(bench):
    tool = shim()
    assert bench.predict(tool, ["list"]) == ("read-only", False)
    assert bench.predict(tool, ["fetch"]) == ("unknown", True)
    assert bench.predict(tool, ["prune"]) == ("writes", False)  # deletes: never read-only
    assert bench.predict(tool, ["add"]) == ("writes", False)
    assert bench.predict(tool, ["remote"]) == ("unknown", False)
    assert bench.predict(tool, ["remote", "drop"]) == ("destructive", False)
    assert bench.predict(tool, ["remote", "show"]) == ("missing", False)
    assert bench.predict(tool, []) == ("missing", False)  # no root command ""


def test_the_tools_effects_are_inherited(bench):
    tool = shim(Effects(destructive=True, network=True))
    assert bench.predict(tool, ["list"]) == ("destructive", True)


def test_scores_count_destructive_predicted_read_only_and_leave_missing_apart(bench):
    def row(gold_class: str, predicted: str, network: bool = False, said: bool = False) -> dict:
        return {
            "tool": "t",
            "class": gold_class,
            "predicted": predicted,
            "network": network,
            "predicted_network": said,
        }

    figures = bench.score(
        [
            row("destructive", "read-only"),
            row("destructive", "destructive", network=True, said=True),
            row("destructive", "missing", network=True),
            row("read-only", "read-only", said=True),
            row("writes", "unknown"),
        ]
    )
    assert figures["destructive as read-only"] == 1
    assert figures["destructive recall"] == round(1 / 3, 3)
    assert figures["read-only recall"] == 1.0
    assert figures["read-only precision"] == 0.5
    assert figures["missing"] == 1
    assert figures["network recall"] == 0.5
    assert figures["network precision"] == 0.5
    assert figures["matrix"]["destructive"]["missing"] == 1


def test_commands_missing_from_a_shim_cut_short_are_counted_apart(bench):
    """A command a budget left unread is not missing for want of reading (decision 581)."""
    rows = [
        {"tool": "t", "class": c, "predicted": "missing", "network": False, "cut": cut}
        for c, cut in (("writes", True), ("read-only", False))
    ]
    rows.append({**rows[1], "predicted": "read-only", "predicted_network": False})
    figures = bench.score([{"predicted_network": False, **r} for r in rows])
    assert (figures["missing"], figures["missing, cut short"]) == (2, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "cannot be read as JSON"),
        ('{"tool": "ls"}', "must be a JSON list"),
        ('["ls"]', "entry 0 must be an object"),
        ('[{"tool": "ls", "command": "ls"}]', "'command' must be a list of words"),
    ],
)
def test_a_malformed_gold_stops_the_bench_with_what_is_wrong(bench, tmp_path, text, message):
    path = tmp_path / "gold.json"
    path.write_text(text)
    with pytest.raises(SystemExit, match=message):
        bench.load_gold(path)
