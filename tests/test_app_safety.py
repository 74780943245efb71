"""atipkit.app's field selection and filtering (PRD §8.7), output sanitisation, secrets,
confirmation of destructive commands, policy modes and audit events (§14): each through
a real process of tests/apps/safe_app.py, with no controlling terminal, as agents run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SAFE = Path(__file__).parent / "apps" / "safe_app.py"
ROOT = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in list(os.environ):
        if name.startswith("SAFE_") or name == "NO_COLOR":
            monkeypatch.delenv(name)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").mkdir()
    monkeypatch.chdir(work)


def run(*args: str, input: bytes | None = None, env: dict[str, str] | None = None):
    """The app as a process with no controlling terminal (`start_new_session`)."""
    return subprocess.run(
        [sys.executable, str(SAFE), *args],
        input=input,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]), **(env or {})},
        start_new_session=True,
        timeout=60,
    )


def answer(*args: str, **kw: Any) -> tuple[int, dict[str, Any]]:
    done = run(*args, "--json", **kw)
    lines = done.stdout.decode().splitlines()
    assert len(lines) == 1, (done.stdout, done.stderr)
    return done.returncode, json.loads(lines[0])


# --fields / --select and --filter (PRD §8.7) -------------------------------------------


def test_fields_keep_only_those_fields_in_that_order_nested_ones_nested():
    code, out = answer("repos", "--fields", "stars,name", "--select", "owner.login")
    assert code == 0
    assert out["result"] == [
        {"stars": 120, "name": "atip", "owner": {"login": "ann"}},
        {"stars": 45, "name": "tooli", "owner": {"login": "bob"}},
        {"stars": 3, "name": "notes", "owner": {"login": "ann"}},
    ]
    assert list(out["result"][0]) == ["stars", "name", "owner"]


def test_filters_compare_as_the_field_is_typed_and_all_must_hold():
    def names(*filters: str) -> list[str]:
        args = [a for f in filters for a in ("--filter", f)]
        code, out = answer("repos", *args, "--fields", "name")
        assert code == 0, out
        return [r["name"] for r in out["result"]]

    assert names("stars>10") == ["atip", "tooli"]  # numerically: "3" > "10" as text
    assert names("stars>=45", "owner.admin=true") == ["atip"]
    assert names("owner.login!=ann") == ["tooli"]
    assert names("topics~CLI") == ["atip", "tooli"]  # a list: one of its items, any case
    assert names("topics=agents") == ["atip"]
    assert names("updated>=2026-01-01") == ["atip", "notes"]  # text orders ISO dates
    assert names("name~I", "name!~tool") == ["atip"]
    assert names("stars==3") == ["notes"]


def test_a_filtered_page_continues_in_the_filtered_results_and_its_cursor_is_bound_to_it():
    code, first = answer("events", "--filter", "kind=push", "--fields", "id")
    assert code == 0
    assert first["result"] == [{"id": 1}, {"id": 3}]
    cursor = first["meta"]["pagination"]["next_cursor"]
    code, second = answer("events", "--filter", "kind=push", "--fields", "id", "--cursor", cursor)
    assert second["result"] == [{"id": 5}]
    assert second["meta"]["pagination"]["next_cursor"] is None
    code, other = answer("events", "--filter", "kind=issue", "--cursor", cursor)
    assert code == 2
    assert other["error"]["code"] == "E1005"  # another filter is another query


def test_an_unknown_field_is_refused_before_the_command_runs_when_the_schema_names_them():
    code, out = answer("repos", "--fields", "name,stras")
    assert code == 2
    assert out["error"]["code"] == "E1002"
    assert out["error"]["details"] == {
        "param": "fields",
        "field": "stras",
        "known": ["name", "stars", "owner", "topics", "updated"],
    }
    code, out = answer("repos", "--filter", "owner.email=x")
    assert out["error"]["details"]["field"] == "owner.email"
    assert out["error"]["details"]["known"] == ["login", "admin"]


def test_an_unknown_field_without_a_schema_is_refused_once_the_records_are_read():
    code, out = answer("events", "--fields", "id,size")
    assert code == 2
    assert "no field 'size'" in out["error"]["message"]
    assert out["error"]["details"]["known"] == ["id", "kind", "meta"]
    code, out = answer("events", "--filter", "colour=red")
    assert code == 2
    assert out["error"]["details"] == {
        "param": "filter",
        "field": "colour",
        "known": ["id", "kind", "meta"],
    }


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--filter", "stars"], "is not FIELD OP VALUE"),
        (["--filter", "=3"], "is not FIELD OP VALUE"),
        (["--filter", ""], "is not FIELD OP VALUE"),
        (["--filter", "stars>many"], "which is no number"),
        (["--fields", "name..stars"], "is not a field name"),
        (["--fields", ",,"], "no field named"),
    ],
)
def test_malformed_expressions_are_usage_errors_that_say_what_was_wrong(args, fragment):
    code, out = answer("repos", *args)
    assert code == 2
    assert out["ok"] is False
    assert out["error"]["category"] == "input"
    assert fragment in out["error"]["message"]


def test_selection_is_offered_only_where_a_list_of_records_may_come_back():
    code, out = answer("show", "x", "--fields", "text")
    assert code == 2
    assert out["error"]["message"] == "safe show returns no list of records to take fields of"
    code, out = answer("word", "--filter", "a=b")
    assert code == 2
    assert "returns no list of records to filter" in out["error"]["message"]
    agent = json.loads(run("--agent").stdout)
    repos = {o["name"] for o in agent["commands"]["repos"]["options"]}
    word = {o["name"] for o in agent["commands"]["word"]["options"]}
    assert {"fields", "filter"} <= repos
    assert not {"fields", "filter"} & word


def test_selection_shapes_text_plain_and_jsonl_output_too():
    text = run("repos", "--fields", "name,stars", "--filter", "stars<100", "--text")
    assert text.returncode == 0
    assert text.stdout.decode().splitlines() == ["NAME   STARS", "tooli  45", "notes  3"]
    plain = run("repos", "--fields", "name", "--plain")
    assert plain.stdout == b"atip\ntooli\nnotes\n"
    jsonl = run("events", "4", "--fields", "meta.size", "--jsonl")
    assert jsonl.stdout.decode().splitlines() == ['{"meta":{"size":0}}', '{"meta":{"size":10}}']
    stream = run("events", "3", "--fields", "nope", "--jsonl")
    assert stream.returncode == 2
    last = json.loads(stream.stdout.decode().splitlines()[-1])
    assert last["ok"] is False
    assert last["error"]["details"]["field"] == "nope"
