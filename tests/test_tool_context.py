"""RFC 0.6 §10.3 `toolContext`: shared between agents through a file, narrowed by §10.2's
delegation for a subagent, recorded by `atip run --context` from the calls that ran."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from atipkit.errors import DocumentError
from atipkit.execute.context import MAX_RECENT, RecentCommand, ToolContext, read_context
from atipkit.policy import Delegation
from tests.helpers import atip, envelope_of

pytestmark = pytest.mark.usefixtures("isolated_home")

# §10.3's example, and §10.2's
SPEC_CONTEXT = {
    "toolContext": {
        "availableTools": ["gh", "kubectl"],
        "authenticatedTools": ["gh"],
        "recentCommands": [{"tool": "gh", "command": "pr list", "exitCode": 0}],
    }
}
SPEC_DELEGATION = Delegation(
    allowed_tools=["gh", "git"],
    denied_commands=["gh repo delete"],
    effect_restrictions={"destructive": False},
)


def test_the_specs_example_reads_and_writes_as_shown():
    context = read_context(json.dumps(SPEC_CONTEXT))
    assert context.recent_commands == [RecentCommand(tool="gh", command="pr list", exit_code=0)]
    assert json.loads(context.to_json()) == SPEC_CONTEXT
    assert read_context(SPEC_CONTEXT["toolContext"]) == context  # the object alone too


def test_a_subagent_sees_only_what_its_delegation_allows():
    """§10.2's delegation of §10.3's context: kubectl is not the subagent's, and a command
    it is denied is not shown to it."""
    context = read_context(SPEC_CONTEXT)
    view = context.delegated(SPEC_DELEGATION)
    assert (view.available_tools, view.authenticated_tools) == (["gh"], ["gh"])
    assert [r.command for r in view.recent_commands] == ["pr list"]
    more = ToolContext(
        available_tools=["gh", "kubectl"],
        recent_commands=[
            RecentCommand(tool="gh", command="repo delete old", exit_code=0),
            RecentCommand(tool="kubectl", command="get pods", exit_code=0),
            RecentCommand(tool="gh", command="repo view", exit_code=1),
        ],
    )
    seen = more.delegated(SPEC_DELEGATION)
    assert [(r.tool, r.command) for r in seen.recent_commands] == [("gh", "repo view")]
    assert more.delegated(None) is more
    back = context.merged(seen)  # the subagent's context, come back to its lead
    assert back.available_tools == ["gh", "kubectl"]
    assert [r.command for r in back.recent_commands] == ["pr list", "repo view"]


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"toolContext": {"availableTools": "gh"}}, "$.toolContext.availableTools"),
        ({"toolContext": {"recentCommands": [{"tool": "gh"}]}}, "$.toolContext.recentCommands[0]"),
        ({"toolContext": {"authenticatedTools": ["../../bin/sh"]}}, "$.toolContext"),
        (
            {"toolContext": {"recentCommands": [{"tool": "gh", "command": 1, "exitCode": 0}]}},
            "command",
        ),
        ([], "$"),
    ],
)
def test_a_context_another_agent_wrote_is_read_strictly(bad, where):
    with pytest.raises(DocumentError) as caught:
        read_context(json.dumps(bad))
    problem = caught.value.problems[0]
    assert where in f"{problem.location} {problem.message}"


def test_a_hostile_context_is_bounded():
    many = [{"tool": "gh", "command": f"run {n}", "exitCode": 0} for n in range(MAX_RECENT * 3)]
    kept = read_context({"toolContext": {"recentCommands": many}}).recent_commands
    assert [r.command for r in kept] == [f"run {n}" for n in range(MAX_RECENT * 2, MAX_RECENT * 3)]
    with pytest.raises(DocumentError, match="more than"):
        read_context(b" " * (2 * 1024 * 1024))
    with pytest.raises(DocumentError):
        read_context("[" * 100 + "]" * 100)


KEEPER = {
    "atip": {"version": "0.6"},
    "name": "keeper",
    "version": "1.0",
    "description": "Keep things",
    "authentication": {"required": False},
    "commands": {
        "list": {"description": "List", "effects": {"network": False}},
        "sync": {
            "description": "Sync with the server",
            "effects": {"network": True},
            "authentication": {"required": True, "checkCommand": "keeper status"},
        },
        "fail": {"description": "Fail", "effects": {"network": False}},
    },
}


@pytest.fixture
def keeper(tmp_path, monkeypatch) -> Path:
    """A real `keeper` on PATH (`fail` exits 3), and its document."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "keeper"
    script.write_text('#!/bin/sh\n[ "$1" = fail ] && exit 3\necho "$1"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    document = tmp_path / "keeper.json"
    document.write_text(json.dumps(KEEPER))
    return document


def run_with(document: Path, context: Path, command: str, *extra: str):
    call = json.dumps({"name": f"keeper_{command}", "arguments": {}})
    return atip("run", "--call", call, "--tool", str(document), "--context", str(context), *extra)


def test_atip_run_records_each_call_in_the_shared_context(keeper, tmp_path):
    shared = tmp_path / "context.json"
    shared.write_text(json.dumps(SPEC_CONTEXT))  # the lead's
    assert run_with(keeper, shared, "list").exit_code == 0
    assert run_with(keeper, shared, "sync").exit_code == 0
    assert run_with(keeper, shared, "fail").exit_code != 0
    assert run_with(keeper, shared, "list", "--dry-run").exit_code == 0  # ran nothing
    written = json.loads(shared.read_text())["toolContext"]
    assert written["availableTools"] == ["gh", "kubectl", "keeper"]
    assert written["authenticatedTools"] == ["gh", "keeper"]  # sync needs it, and exited 0
    assert written["recentCommands"][1:] == [
        {"tool": "keeper", "command": "list", "exitCode": 0},
        {"tool": "keeper", "command": "sync", "exitCode": 0},
        {"tool": "keeper", "command": "fail", "exitCode": 3},
    ]


def test_a_subagent_under_a_delegation_is_shown_its_view(keeper, tmp_path):
    shared = tmp_path / "context.json"
    shared.write_text(json.dumps(SPEC_CONTEXT))
    policy = tmp_path / "sub.json"
    policy.write_text(json.dumps({"delegation": {"allowedTools": ["keeper"]}}))
    done = run_with(keeper, shared, "list", "--policy", str(policy))
    assert done.exit_code == 0, done.output
    view = envelope_of(done)["result"]["toolContext"]
    assert view == {
        "availableTools": ["keeper"],
        "authenticatedTools": [],
        "recentCommands": [{"tool": "keeper", "command": "list", "exitCode": 0}],
    }
    written = json.loads(shared.read_text())["toolContext"]  # the file keeps it all
    assert written["availableTools"] == ["gh", "kubectl", "keeper"]


def test_a_context_that_cannot_be_used_stops_the_call_before_it_runs(keeper, tmp_path):
    shared = tmp_path / "context.json"
    shared.write_text(json.dumps({"toolContext": {"availableTools": 7}}))
    refused = run_with(keeper, shared, "list")
    assert refused.exit_code == 65
    assert "availableTools" in envelope_of(refused)["error"]["message"]
    assert json.loads(shared.read_text()) == {"toolContext": {"availableTools": 7}}


def test_agents_recording_at_once_lose_none_of_each_others_commands(keeper, tmp_path):
    """`record`'s promise (§10.1: writes atomic): four agents, each a real `atip run`
    process after another in its own loop, all at once, into one file; every call that
    ran is in it, and the file is a whole context at the end."""
    import subprocess
    import sys

    shared = tmp_path / "context.json"
    calls = 5
    loop = (
        f"for i in $(seq {calls}); do {sys.executable} -m atipkit run --call "
        """'{"name": "keeper_list", "arguments": {}}' """
        f"--tool {keeper} --context {shared} --json >/dev/null || exit 1; done"
    )
    agents = [subprocess.Popen(["sh", "-c", loop]) for _ in range(4)]
    assert [a.wait(timeout=300) for a in agents] == [0, 0, 0, 0]
    written = json.loads(shared.read_text())["toolContext"]
    ran = {"tool": "keeper", "command": "list", "exitCode": 0}
    assert written["recentCommands"] == [ran] * (4 * calls)
