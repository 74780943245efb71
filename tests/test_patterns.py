"""Executable patterns: words split before substitution, every step through the policy."""

from __future__ import annotations

import pytest

import atipkit
from atipkit.execute import Executor
from atipkit.execute.patterns import PatternError, find_pattern, plan, run_pattern
from tests.test_execute import NOTES, notes  # noqa: F401  (the fixture)


def with_patterns(*patterns: dict) -> atipkit.Tool:
    return atipkit.from_dict({**NOTES, "patterns": list(patterns)})


SAVE = {
    "name": "save",
    "description": "Add a note and list",
    "executable": True,
    "steps": [{"command": "notes add {text} --file {attachment}"}, {"command": "notes list"}],
    "variables": {
        "text": {"type": "string", "description": "Note"},
        "attachment": {"type": "string", "description": "File", "default": "none.txt"},
    },
}


def test_steps_run_in_order_through_the_executor(notes):  # noqa: F811
    _, exe, store = notes
    tool = with_patterns(SAVE)
    outcomes = run_pattern(
        Executor(tool, executables=exe), find_pattern(tool, "save"), {"text": "hello world"}
    )
    assert [o.invocation.argv[1:] for o in outcomes] == [
        ["add", "--file", "none.txt", "hello world"],
        ["list"],
    ]
    assert outcomes[-1].text == "--file none.txt hello world\n"
    assert store.exists()


@pytest.mark.parametrize(
    "hostile", ["--file=/etc/passwd", "-rf", "a; rm -rf /", "$(id)", "x\n--force", "{attachment}"]
)
def test_a_value_never_becomes_an_option_or_a_word(notes, hostile):  # noqa: F811
    tool = with_patterns(SAVE)
    [add, _] = plan(find_pattern(tool, "save"), {"text": hostile}, {"notes": tool})
    by_name = {ref.name: value for ref, value in add.values.items()}
    assert by_name == {"text": hostile, "file": "none.txt"}


def test_every_step_is_checked_by_the_policy(notes):  # noqa: F811
    _, exe, store = notes
    store.write_text("keep\n")
    wipe = {
        "name": "wipe",
        "description": "List then delete",
        "executable": True,
        "steps": [{"command": "notes list"}, {"command": "notes rm"}],
    }
    tool = with_patterns(wipe)
    outcomes = run_pattern(Executor(tool, executables=exe), find_pattern(tool, "wipe"), {})
    assert [o.decision.action for o in outcomes] == ["allow", "deny"]
    assert store.exists()


@pytest.mark.parametrize(
    ("pattern", "variables", "message"),
    [
        ({**SAVE, "executable": False}, {"text": "x"}, "advisory"),
        (SAVE, {}, "variable 'text' is required"),
        (SAVE, {"text": "x", "extra": 1}, "unknown variable"),
        (SAVE, {"text": 5}, "is not a string"),
        ({**SAVE, "steps": [{"command": "rm -rf {text}"}]}, {"text": "x"}, "not a known tool"),
        ({**SAVE, "steps": [{"command": "notes fly"}]}, {"text": "x"}, "no command 'fly'"),
        ({**SAVE, "steps": [{"command": "notes add --{text} x"}]}, {"text": "x"}, "unknown option"),
    ],
)
def test_patterns_that_cannot_run(pattern, variables, message):
    tool = with_patterns(pattern)
    with pytest.raises(PatternError, match=message):
        plan(tool.patterns[0], variables, {"notes": tool})


def test_the_examples_pattern_is_advisory_and_never_runs():
    from atipkit.probe import probe
    from tests.helpers import EXAMPLES

    deploy = probe(EXAMPLES / "bin" / "deploy").tool
    pattern = find_pattern(deploy, "safe-release")
    assert pattern.executable is False
    with pytest.raises(PatternError, match="advisory"):
        plan(pattern, {"service": "web", "version": "1.2"}, {"deploy": deploy})
