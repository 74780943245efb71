"""The executor and `atip run`: policy, confirmation, delegation, audit, parallel turns —
against a real tool written by the test."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

import atipkit
from atipkit.bridge import compile_tools, parse_tool_calls
from atipkit.cli import cli
from atipkit.execute import AuditLog, Executor
from atipkit.policy import Delegation, Policy
from tests.helpers import envelope_of

NOTES = {
    "atip": {"version": "0.6"},
    "name": "notes",
    "version": "1.0",
    "description": "Keep notes",
    "commands": {
        "add": {
            "description": "Add a note",
            "arguments": [{"name": "text", "type": "string", "description": "Note"}],
            "options": [
                {
                    "name": "file",
                    "flags": ["--file"],
                    "type": "file",
                    "description": "Attach a file",
                }
            ],
            "effects": {"filesystem": {"write": True}, "network": False, "idempotent": False},
        },
        "list": {
            "description": "List notes",
            "effects": {"filesystem": {"write": False}, "network": False, "idempotent": True},
        },
        "slow": {
            "description": "Look slowly",
            "effects": {"filesystem": {"write": False}, "network": False},
        },
        "rm": {
            "description": "Delete all notes",
            "effects": {"destructive": True, "reversible": False, "network": False},
        },
        "buy": {
            "description": "Buy storage",
            "effects": {
                "cost": {"billable": True},
                "network": False,
                "filesystem": {"write": False},
            },
        },
        "ask": {
            "description": "Ask for input",
            "effects": {"interactive": {"stdin": "required"}, "network": False},
        },
        "fail": {
            "description": "Fail",
            "effects": {"filesystem": {"write": False}, "network": False},
        },
        "hang": {
            "description": "Hang",
            "effects": {
                "filesystem": {"write": False},
                "network": False,
                "duration": {"timeout": "300ms"},
            },
        },
    },
}


@pytest.fixture
def notes(tmp_path: Path) -> tuple[atipkit.Tool, dict[str, str], Path]:
    store = tmp_path / "notes.txt"
    exe = tmp_path / "notes"
    exe.write_text(
        "#!/bin/sh\n"
        f"[ \"$1\" = --agent ] && echo '{json.dumps(NOTES)}' && exit 0\n"
        "cmd=$1; shift\n"
        "case $cmd in\n"
        f'  add) echo "$*" >> {store}; echo added;;\n'
        f"  list) cat {store} 2>/dev/null; true;;\n"
        # when each slow read began and ended, beside the store
        f'  slow) echo "start $(date +%s.%N)" >> {store}.slow; sleep 2\n'
        f'        echo "end $(date +%s.%N)" >> {store}.slow; echo looked;;\n'
        f"  rm) rm -f {store}; echo removed;;\n"
        "  buy) echo bought;;\n"
        '  ask) read x; echo "you said $x";;\n'
        "  fail) echo partial; echo 'no luck' >&2; exit 3;;\n"
        "  hang) exec sleep 5;;\n"
        "esac\n"
    )
    exe.chmod(0o755)
    return atipkit.from_dict(NOTES), {"notes": str(exe)}, store


def calls(tool: atipkit.Tool, *items: tuple[str, dict]):
    compiled = compile_tools(tool, "anthropic")
    content = [
        {"type": "tool_use", "id": f"t{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(items)
    ]
    return parse_tool_calls("anthropic", {"content": content}, compiled)


def test_destructive_needs_confirmation(notes):
    tool, exe, store = notes
    store.write_text("keep me\n")
    [call] = calls(tool, ("notes_rm", {}))
    denied = Executor(tool, executables=exe).execute(call)
    assert (denied.decision.action, denied.is_error, denied.result) == ("deny", True, None)
    assert "not confirmed" in denied.text
    assert denied.stopped == "unconfirmed"
    assert store.exists()
    asked = []
    confirmed = Executor(
        tool, executables=exe, confirm=lambda c, d: asked.append(d.reasons) or True
    ).execute(call)
    assert confirmed.decision.action == "allow"
    assert confirmed.stopped is None
    assert confirmed.text == "removed\n"
    assert asked == [["destructive: confirm first"]]
    assert not store.exists()


def test_delegation_denies_even_what_a_person_would_confirm(notes):
    tool, exe, store = notes
    store.write_text("keep me\n")
    lead = Policy(allow_destructive=True)
    sub = lead.narrow(
        Policy(allow_destructive=True, delegation=Delegation(denied_commands=["notes rm"]))
    )
    [call] = calls(tool, ("notes_rm", {}))
    outcome = Executor(tool, policy=sub, executables=exe, confirm=lambda *_: True).execute(call)
    assert outcome.decision.action == "deny"
    assert outcome.stopped == "denied"
    assert "denied by delegation" in outcome.text
    assert store.exists()


def test_a_subagent_cannot_widen_its_leads_policy(notes):
    tool, exe, _ = notes
    lead = Policy(delegation=Delegation(effect_restrictions={"filesystem.write": False}))
    sub = lead.narrow(Policy(allow_destructive=True))
    [add] = calls(tool, ("notes_add", {"text": "x"}))
    outcome = Executor(tool, policy=sub, executables=exe).execute(add)
    assert outcome.decision.action == "deny"
    assert "filesystem.write" in outcome.text
    other = Executor(
        tool, policy=Policy(delegation=Delegation(allowed_tools=["gh"])), executables=exe
    ).execute(add)
    assert "not among the delegated tools" in other.text


def test_billable_budget(notes):
    tool, exe, _ = notes
    executor = Executor(tool, policy=Policy(billable_budget=1), executables=exe)
    [buy] = calls(tool, ("notes_buy", {}))
    assert executor.execute(buy).text == "bought\n"
    second = executor.execute(buy)
    assert second.decision.action == "deny"
    assert "may incur costs" in second.text


def test_a_billable_budget_holds_for_calls_decided_at_once(notes, monkeypatch):
    """Two calls decided side by side cannot both spend a budget of one: the budget is
    reserved when a call is allowed, not when it starts (the barrier holds each allowed
    call until the other has been decided, the widest window there is)."""
    import contextlib
    import threading

    from atipkit.execute import executor as module

    tool, exe, _ = notes
    barrier = threading.Barrier(2, timeout=1)
    real = module.build_argv

    def held(*args, **kwargs):
        # the other call was not allowed: nothing to wait for
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "build_argv", held)
    executor = Executor(tool, policy=Policy(billable_budget=1), executables=exe)
    [buy] = calls(tool, ("notes_buy", {}))
    outcomes: list = []
    threads = [threading.Thread(target=lambda: outcomes.append(executor.execute(buy)))]
    threads.append(threading.Thread(target=lambda: outcomes.append(executor.execute(buy))))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(o.decision.action for o in outcomes) == ["allow", "deny"]
    assert executor.billable_used == 1
    # a call that never runs gives its share back
    [bad] = calls(tool, ("notes_buy", {}))
    dry = Executor(tool, policy=Policy(billable_budget=1), executables=exe)
    dry.execute(bad, dry_run=True)
    assert dry.billable_used == 0
    assert dry.execute(bad).text == "bought\n"


def test_path_globs(notes, tmp_path):
    tool, exe, _ = notes
    policy = Policy(path_allow=[f"{tmp_path}/*"], path_deny=["/etc/*", "~/.ssh/*"])
    executor = Executor(tool, policy=policy, executables=exe)
    ok, etc, ssh, out = calls(
        tool,
        ("notes_add", {"text": "a", "file": str(tmp_path / "x.txt")}),
        ("notes_add", {"text": "a", "file": "/etc/passwd"}),
        ("notes_add", {"text": "a", "file": "~/.ssh/id_rsa"}),
        ("notes_add", {"text": "a", "file": "/var/tmp/elsewhere"}),
    )
    assert executor.execute(ok).decision.action == "allow"
    assert "denied path" in executor.execute(etc).text
    assert "denied path" in executor.execute(ssh).text
    assert "outside the allowed paths" in executor.execute(out).text


def test_invalid_arguments_and_refusals_are_told_to_the_model(notes):
    tool, exe, _ = notes
    executor = Executor(tool, executables=exe)
    bad, ask, unknown = calls(
        tool, ("notes_add", {"text": 7}), ("notes_ask", {}), ("notes_fly", {})
    )
    invalid = executor.execute(bad)
    assert invalid.is_error
    assert json.loads(invalid.text)["errors"][0]["parameter_name"] == "text"
    assert invalid.stopped == "invalid-arguments"
    refused = executor.execute(ask)
    assert refused.text == "not run: the command needs input on stdin and none was given"
    assert refused.stopped == "input-refused"
    assert executor.execute(ask, stdin="hi\n").text == "you said hi\n"
    assert executor.execute(unknown).text == "error: unknown tool 'notes_fly'"


def test_every_decision_is_audited(notes, tmp_path):
    tool, exe, _ = notes
    audit = AuditLog(tmp_path / "audit.jsonl")
    executor = Executor(tool, executables=exe, audit=audit)
    add, rm = calls(tool, ("notes_add", {"text": "hello"}), ("notes_rm", {}))
    executor.execute(add)
    executor.execute(rm)
    first, second = audit.read()
    assert (first["tool"], first["path"], first["decision"], first["exit_code"]) == (
        "notes",
        ["add"],
        "allow",
        0,
    )
    assert first["argv"] == [exe["notes"], "add", "hello"]
    assert first["seconds"] >= 0
    assert (second["decision"], second["argv"], second["exit_code"]) == ("deny", None, None)


def test_a_turn_runs_reads_in_parallel_and_writes_in_order(notes):
    tool, exe, store = notes
    executor = Executor(tool, executables=exe)
    turn = calls(
        tool,
        ("notes_slow", {}),
        ("notes_slow", {}),
        ("notes_slow", {}),
        ("notes_add", {"text": "one"}),
        ("notes_add", {"text": "two"}),
        ("notes_list", {}),
    )
    outcomes = executor.execute_all(turn)
    assert [o.call.id for o in outcomes] == [c.id for c in turn]
    assert [o.text for o in outcomes[:3]] == ["looked\n"] * 3
    # together, not one after another: each read began before any ended (the wall clock's
    # sum of 3 × 0.6 s against 1.5 s was a race on a busy machine; decision 710)
    moments = [line.split() for line in Path(f"{store}.slow").read_text().splitlines()]
    starts = [float(t) for kind, t in moments if kind == "start"]
    ends = [float(t) for kind, t in moments if kind == "end"]
    assert (len(starts), len(ends)) == (3, 3)
    assert max(starts) < min(ends), moments
    assert store.read_text() == "one\ntwo\n"
    assert outcomes[-1].text == "one\ntwo\n"  # the read after the writes sees them


def test_dry_run_runs_nothing(notes):
    tool, exe, store = notes
    [add] = calls(tool, ("notes_add", {"text": "-rf"}))
    outcome = Executor(tool, executables=exe).execute(add, dry_run=True)
    assert outcome.result is None
    assert outcome.invocation.argv == [exe["notes"], "add", "--", "-rf"]
    assert not store.exists()


# -- remote callers ------------------------------------------------------------------------


class Answer(msgspec.Struct, frozen=True):
    text: str
    is_error: bool = False
    structured_content: Any = None
    seconds: float = 0.01


class Ring:
    """One call of `Ringing`'s, ready to send."""

    def __init__(self, caller: Ringing, request: dict[str, Any]) -> None:
        self.caller, self.request = caller, request
        self.argv, self.target = ["tel:notes"], "notes on tel:notes"

    def send(self, *, timeout: float) -> Answer:
        if self.caller.hang:
            raise TimeoutError("no answer")
        self.caller.sent.append(self.request)
        return Answer(f"rang {self.request['command']}", structured_content={"ok": 1})


class Ringing:
    """A remote caller of the test's own: it claims the notes tool and answers each call
    itself (or times out), so the seam is tested apart from any protocol; the MCP caller
    is tested against a real server in test_interop_mcp.py."""

    def __init__(self, *, hang: bool = False) -> None:
        self.sent: list[dict[str, Any]] = []
        self.hang = hang

    def claims(self, tool: atipkit.Tool) -> bool:
        return tool.name == "notes"

    def prepare(self, tool, path, values) -> Ring:
        return Ring(self, {"command": list(path), "values": {r.name: v for r, v in values.items()}})


def test_a_server_tool_no_caller_claims_never_runs_a_binary_of_its_name(notes):
    """A document that says its commands run on an MCP server (`x-mcp`), given to an
    executor without the MCP caller, is refused: the `notes` on PATH (here, named in
    `executables`) must not run with the server's arguments."""
    _, exe, store = notes
    served = atipkit.from_dict({**NOTES, "x-mcp": {"command": ["notes-server"]}})
    [add] = calls(served, ("notes_add", {"text": "hi"}))
    outcome = Executor(served, executables=exe).execute(add)
    assert (outcome.stopped, outcome.result, outcome.invocation) == ("not-started", None, None)
    assert "pass remote=[McpCaller()] from atipkit.interop.mcp" in outcome.text
    assert not store.exists()
    assert Executor(served, executables=exe, remote=[Ringing()]).execute(add).text == (
        "rang ['add']"
    )


def test_a_remote_caller_runs_the_tools_it_claims_under_the_same_rules(notes, tmp_path):
    tool, exe, store = notes
    audit = AuditLog(tmp_path / "audit.jsonl")
    ringing = Ringing()
    executor = Executor(tool, executables=exe, audit=audit, remote=[ringing])
    add, ask, rm = calls(tool, ("notes_add", {"text": "hi"}), ("notes_ask", {}), ("notes_rm", {}))
    outcome = executor.execute(add)
    assert (outcome.text, outcome.is_error, outcome.result.exit_code) == ("rang ['add']", False, 0)
    assert outcome.request == {"command": ["add"], "values": {"text": "hi"}}
    assert outcome.invocation.argv == ["tel:notes"]
    assert outcome.structured_content == {"ok": 1}
    assert not store.exists()  # the binary never ran
    assert audit.read()[0]["request"] == outcome.request
    assert executor.execute(add, dry_run=True).text.startswith("dry run: {")
    assert executor.execute(ask, stdin="x").stopped == "input-refused"
    assert executor.execute(rm).stopped == "unconfirmed"  # the policy still decides
    assert len(ringing.sent) == 1
    isolated = Executor(tool, policy=Policy(isolate="always"), remote=[ringing]).execute(add)
    assert (isolated.stopped, len(ringing.sent)) == ("not-started", 1)
    timed_out = Executor(tool, remote=[Ringing(hang=True)]).execute(add)
    assert timed_out.result.timed_out
    assert timed_out.is_error
    # without the caller the same tool is a command line: the executor knows no remote
    assert Executor(tool, executables=exe).execute(add).text == "added\n"
    assert store.read_text() == "hi\n"


# -- atip run -----------------------------------------------------------------------------


@pytest.fixture
def atip(tmp_path, monkeypatch):
    """`atip ARGS` in-process, with a registry and cache of the test's own; never a
    prompt (no terminal is asked, even when the test runs in one)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("ATIP_CACHE_DIR", str(tmp_path / "cache"))

    def invoke(*args: str, input: str | None = None):
        return CliRunner().invoke(cli, [*args, "--no-input"], input=input)

    return invoke


def run_notes(atip, exe, *args: str, call: dict):
    return atip("run", "--tool", exe["notes"], *args, "--call", json.dumps(call))


@pytest.mark.parametrize(
    "shape",
    [
        {"name": "notes_add", "arguments": {"text": "hi"}},
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "notes_add", "arguments": '{"text": "hi"}'},
        },
        {"type": "tool_use", "id": "t1", "name": "notes_add", "input": {"text": "hi"}},
        {"functionCall": {"name": "notes_add", "args": {"text": "hi"}}},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "notes_add",
            "arguments": '{"text": "hi"}',
        },
    ],
)
def test_atip_run_takes_any_providers_call(notes, shape, atip):
    _, exe, store = notes
    result = run_notes(atip, exe, call=shape)
    assert result.exit_code == 0, result.output
    report = envelope_of(result)["result"]
    assert report == {
        "call": {"name": "notes_add", "tool": "notes", "command": ["add"]},
        "decision": "allow",
        "reasons": [],
        "argv": [exe["notes"], "add", "hi"],
        "exitCode": 0,
        "isError": False,
        "text": "added\n",
    }
    assert store.read_text() == "hi\n"


def test_atip_run_text_output_is_the_commands_output(notes, atip):
    _, exe, _ = notes
    result = run_notes(atip, exe, "--text", call={"name": "notes_add", "arguments": {"text": "x"}})
    assert result.exit_code == 0
    assert result.stdout == "added\n"
    assert result.stderr == f"decision: allow\nargv: {json.dumps([exe['notes'], 'add', 'x'])}\n"
    piped = atip(
        "run", "--tool", exe["notes"], "--call", "-", "--stdin", "there\n", "--text",
        input=json.dumps({"name": "notes_ask", "arguments": {}}),
    )  # fmt: skip
    assert (piped.exit_code, piped.stdout) == (0, "you said there\n")


def test_atip_run_exit_codes(notes, atip, tmp_path):
    _, exe, store = notes
    rm = {"name": "notes_rm", "arguments": {}}
    store.write_text("keep\n")
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"delegation": {"deniedCommands": ["notes rm"]}}))
    denied = run_notes(atip, exe, "--yes", "--policy", str(policy), call=rm)
    assert denied.exit_code == 30
    out = envelope_of(denied)
    assert (out["error"]["code"], out["result"]["decision"]) == ("E2012", "deny")
    assert store.exists()
    assert run_notes(atip, exe, "--yes", call=rm).exit_code == 0
    assert not store.exists()
    dry = run_notes(atip, exe, "--dry-run", call={"name": "notes_add", "arguments": {"text": "x"}})
    plan = envelope_of(dry)["result"]
    assert plan["result"]["argv"] == [exe["notes"], "add", "x"]
    assert plan["actions"] == [
        {
            "action": "run",
            "target": f"{exe['notes']} add x",
            "details": {"argv": [exe["notes"], "add", "x"]},
        }
    ]
    assert not store.exists()
    not_json = atip("run", "--call", "{not json")
    assert not_json.exit_code == 65
    assert envelope_of(not_json)["error"]["details"] == {"param": "call"}
    assert atip("run", "--call", "[1]").exit_code == 65
    missing = atip("run", "--tool", str(tmp_path / "nothing"), "--call", json.dumps(rm))
    assert missing.exit_code == 10
    no_policy = run_notes(atip, exe, "--policy", str(tmp_path / "none.json"), call=rm)
    assert envelope_of(no_policy)["error"]["code"] == "E3001"
    broken = tmp_path / "broken.json"
    broken.write_text('{"allowDestructive": "sure"}')
    assert run_notes(atip, exe, "--policy", str(broken), call=rm).exit_code == 65


def test_atip_run_a_call_that_does_not_fit_is_a_data_format_error(notes, atip):
    _, exe, _ = notes
    wrong_type = run_notes(atip, exe, call={"name": "notes_add", "arguments": {"text": 1}})
    assert wrong_type.exit_code == 65
    out = envelope_of(wrong_type)
    atdf = json.loads(out["result"]["text"])  # what a model would be told
    assert atdf["errors"][0]["parameter_name"] == "text"
    missing = run_notes(atip, exe, call={"name": "notes_add", "arguments": {}})
    assert missing.exit_code == 65
    assert "missing required parameter(s) 'text'" in envelope_of(missing)["error"]["message"]
    unknown = run_notes(atip, exe, call={"name": "notes_fly", "arguments": {}})
    assert unknown.exit_code == 10
    assert envelope_of(unknown)["error"]["details"] == {"name": "notes_fly"}


def test_atip_run_confirmation_without_a_terminal_says_to_pass_yes(notes, atip, tmp_path):
    _, exe, store = notes
    store.write_text("keep\n")
    audit = tmp_path / "audit.jsonl"
    result = run_notes(atip, exe, "--audit", str(audit), call={"name": "notes_rm", "arguments": {}})
    assert result.exit_code == 2
    out = envelope_of(result)
    assert out["error"]["code"] == "E1006"
    assert "--yes" in out["error"]["suggestion"]["fix"]
    assert out["result"]["reasons"] == ["not confirmed: destructive: confirm first"]
    assert store.exists()
    [entry] = AuditLog(audit).read()  # the refusal is audited like any decision
    assert (entry["decision"], entry["argv"]) == ("deny", None)


@pytest.mark.parametrize(("answer", "status"), [("y", 0), ("n", 30)])
def test_atip_run_asks_a_person_at_the_terminal(notes, tmp_path, answer, status):
    """A real process on a real pty: what the policy wants confirmed is asked there."""
    import os
    import sys

    from ptyprocess import PtyProcessUnicode

    _, exe, store = notes
    store.write_text("keep\n")
    call = json.dumps({"name": "notes_rm", "arguments": {}})
    proc = PtyProcessUnicode.spawn(
        [sys.executable, "-m", "atipkit", "run", "--tool", exe["notes"], "--call", call, "--json"],
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")},
        dimensions=(24, 200),
    )
    seen = ""
    try:
        while "[y/N]:" not in seen:
            seen += proc.read(1024)
        proc.write(f"{answer}\n")
        while "}}" not in seen:
            seen += proc.read(1024)
        proc.wait()
    finally:
        proc.close(force=True)
    assert "Run notes rm? (destructive: confirm first) [y/N]:" in seen
    assert proc.exitstatus == status
    assert store.exists() is (answer == "n")
    if answer == "n":
        assert '"code":"E2003"' in seen
        assert "not confirmed: destructive: confirm first" in seen


def test_atip_run_a_failing_command_is_a_dependency_error_with_its_outcome(notes, atip):
    _, exe, _ = notes
    failed = run_notes(atip, exe, call={"name": "notes_fail", "arguments": {}})
    assert failed.exit_code == 40
    out = envelope_of(failed)
    assert out["error"]["details"] == {"exitCode": 3}
    assert out["result"]["exitCode"] == 3
    assert out["result"]["text"] == "[exit status 3]\nstdout:\npartial\n\nstderr:\nno luck\n"
    text = run_notes(atip, exe, "--text", call={"name": "notes_fail", "arguments": {}})
    assert text.stdout == out["result"]["text"]  # what it printed, then the error
    assert f"error: {exe['notes']} exited with status 3 [E4001]" in text.stderr
    hung = run_notes(atip, exe, call={"name": "notes_hang", "arguments": {}})
    assert hung.exit_code == 50
    assert envelope_of(hung)["result"]["text"].startswith("[timed out]")


def test_atip_run_refuses_a_command_whose_input_is_missing(notes, atip):
    _, exe, _ = notes
    refused = run_notes(atip, exe, call={"name": "notes_ask", "arguments": {}})
    assert refused.exit_code == 2
    out = envelope_of(refused)
    assert out["error"]["code"] == "E1004"
    assert out["error"]["message"] == "not run: the command needs input on stdin and none was given"


def test_a_dry_run_of_a_destructive_call_asks_nothing_and_plans_a_shell_line(atip):
    from tests.helpers import FIXTURES

    gh = str(FIXTURES / "rfc" / "rfc06-14.1-gh.json")
    repo = "acme/my site; $(id)"
    call = json.dumps({"name": "gh_repo_delete", "arguments": {"repo": repo}})
    line = "gh repo delete 'acme/my site; $(id)'"
    text = atip("run", "--tool", gh, "--dry-run", "--text", "--call", call)  # no --yes
    assert text.exit_code == 0, text.output
    assert text.stdout == line + "\n"  # paste it into a shell: one argument, nothing run
    assert shlex.split(text.stdout) == ["gh", "repo", "delete", repo]
    assert "decision: confirm (destructive: confirm first)" in text.stderr
    plan = envelope_of(atip("run", "--tool", gh, "--dry-run", "--json", "--call", call))
    assert plan["result"]["actions"] == [
        {"action": "run", "target": line, "details": {"argv": ["gh", "repo", "delete", repo]}}
    ]
    report = plan["result"]["result"]
    assert (report["decision"], report["text"]) == ("confirm", f"dry run: {line}")


def test_an_executor_dry_run_never_asks_for_confirmation(notes):
    tool, exe, store = notes
    store.write_text("keep\n")
    [rm] = calls(tool, ("notes_rm", {}))
    asked = []
    executor = Executor(tool, executables=exe, confirm=lambda c, d: asked.append(c) or True)
    outcome = executor.execute(rm, dry_run=True)
    assert asked == []
    assert outcome.decision.action == "confirm"
    assert outcome.text == f"dry run: {shlex.join([exe['notes'], 'rm'])}"
    assert store.exists()
    executor.execute(rm)  # for real: asked, and run
    assert len(asked) == 1
    assert not store.exists()


def test_a_delegated_deny_of_gh_repo_delete_holds_even_with_yes(tmp_path, atip):
    from tests.helpers import FIXTURES

    gh = str(FIXTURES / "rfc" / "rfc06-14.1-gh.json")
    policy = tmp_path / "subagent.json"
    policy.write_text(
        json.dumps({"allowDestructive": True, "delegation": {"deniedCommands": ["gh repo delete"]}})
    )
    call = json.dumps({"name": "gh_repo_delete", "arguments": {"repo": "acme/site"}})
    base = ["run", "--tool", gh, "--dry-run", "--call", call]
    plain = atip(*base)
    assert plain.exit_code == 0  # a dry run asks nothing: it runs nothing
    assert envelope_of(plain)["result"]["result"]["decision"] == "confirm"  # the real one asks
    real = atip("run", "--tool", gh, "--call", call)
    assert real.exit_code == 2  # destructive: needs confirmation, and no one to ask
    assert envelope_of(real)["error"]["code"] == "E1006"
    assert atip(*base, "--yes").exit_code == 0  # confirmed
    delegated = atip(*base, "--yes", "--policy", str(policy))
    assert delegated.exit_code == 30
    out = envelope_of(delegated)
    assert out["error"]["code"] == "E2012"
    assert out["result"]["decision"] == "deny"
    assert out["result"]["reasons"] == [
        "'gh repo delete' is denied by delegation ('gh repo delete')"
    ]


def test_a_tool_the_registry_knows_runs_without_being_told_its_path(notes, tmp_path, monkeypatch):
    import shutil

    from atipkit.registry.local import LocalRegistry

    tool, exe, store = notes
    path = exe["notes"]
    assert shutil.which("notes") is None  # not on PATH: only the registry knows where
    report = atipkit.discover(dirs=[str(tmp_path)])
    assert [(f.name, f.path) for f in report.found] == [("notes", path)]
    [add] = calls(tool, ("notes_add", {"text": "hello"}))
    ran = Executor(tool).execute(add)
    assert (ran.invocation.argv[0], ran.result.exit_code, ran.text) == (path, 0, "added\n")
    assert store.read_text() == "hello\n"

    other = tmp_path / "other"  # what the caller names still comes first
    other.mkdir()
    shutil.copy(path, other / "notes")
    given = Executor(tool, executables={"notes": str(other / "notes")}).execute(add)
    assert given.invocation.argv[0] == str(other / "notes")
    # another `notes` on PATH is not the binary the registry recorded as described
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    assert Executor(tool).execute(add).invocation.argv[0] == path

    # the registry's path is the binary it recorded, by its hash: a replaced one never runs
    Path(path).write_text(Path(path).read_text().replace("echo added", "echo impostor"))
    replaced = Executor(tool).execute(add)
    assert (replaced.decision.action, replaced.result) == ("deny", None)
    assert "not the binary its metadata was read for" in replaced.text

    # a hand-edited entry by a relative path is not a place to run anything from: PATH is
    with LocalRegistry().transaction() as index:
        index.tools["notes"] = msgspec.structs.replace(index.tools["notes"], path="notes")
    assert Executor(tool).execute(add).invocation.argv[0] == str(other / "notes")
