"""atipkit.app on the command line: global flags, the envelope, errors and exit codes,
stdin parity, prompts, timeouts, pagination, truncation, idempotency, --agent, --schema.

In-process runs go through Click's CliRunner (stdout not a terminal, so `auto` is JSON);
what needs a real process (a terminal, no terminal, signals, pipes) runs
tests/apps/core_app.py as one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from click.testing import CliRunner

import atipkit
from atipkit.app import App, DefinitionError, Option
from atipkit.app.errors import ExitCode
from tests.apps.core_app import app

CORE = Path(__file__).parent / "apps" / "core_app.py"
REPO = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Nothing of the user's configuration or state; a working directory of its own."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("CORE_SYSTEM_CONFIG", str(tmp_path / "etc"))
    for name in list(os.environ):
        if (name.startswith("CORE_") and name != "CORE_SYSTEM_CONFIG") or name == "NO_COLOR":
            monkeypatch.delenv(name)
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").mkdir()  # the project root: no configuration above it is read
    monkeypatch.chdir(work)


def cli(*args: str, input: str | bytes | None = None) -> Any:
    return CliRunner().invoke(app.click_group, list(args), input=input)


def envelope(*args: str, input: str | bytes | None = None) -> tuple[int, dict[str, Any]]:
    result = cli(*args, input=input)
    lines = result.stdout.splitlines()
    assert len(lines) == 1, f"one envelope line on stdout, got: {result.stdout!r}"
    return result.exit_code, json.loads(lines[0])


def process(*args: str, input: bytes | None = None, env: dict[str, str] | None = None, **kw: Any):
    """The app as a real process with no controlling terminal (as agents run it)."""
    return subprocess.run(
        [sys.executable, str(CORE), *args],
        input=input,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        start_new_session=True,
        timeout=60,
        **kw,
    )


def files(*names: str) -> Path:
    folder = Path("files")
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text(name)
    return folder


# The envelope and output modes ------------------------------------------------------------


def test_success_envelope_has_ok_result_and_meta_in_that_order():
    root = files("a.py", "b.py", "c.txt")
    code, out = envelope("find", "*.py", "--root", str(root))
    assert code == 0
    assert list(out) == ["ok", "result", "meta"]
    assert out["ok"] is True
    assert [r["name"] for r in out["result"]] == ["a.py", "b.py"]
    assert out["meta"]["tool"] == "core.find"
    assert out["meta"]["version"] == "2.1.0"
    assert out["meta"]["warnings"] == []
    assert isinstance(out["meta"]["duration_ms"], float)


def test_values_are_converted_to_the_annotated_types():
    root = files("a.py")
    code, out = envelope(
        "find", "*.py", "--root", str(root), "--color", "blue", "--mode", "slow",
        "--tag", "x", "--tag", "y", "--limit", "5",
    )  # fmt: skip
    assert code == 0
    assert out["result"] == [{"name": "a.py", "color": "blue", "mode": "slow", "tags": ["x", "y"]}]


@pytest.mark.parametrize(
    ("flags", "mode"),
    [
        ([], "json"),  # auto, and stdout is not a terminal
        (["--json"], "json"),
        (["--text"], "text"),
        (["--json", "--text"], "text"),
        (["--text", "--json"], "json"),
        (["-o", "jsonl", "--plain"], "plain"),
        (["--plain", "--output", "jsonl"], "jsonl"),
        (["--output=text"], "text"),
    ],
)
def test_the_last_output_flag_wins(flags, mode):
    root = files("a.py", "b.py")
    result = cli("find", "*.py", "--root", str(root), *flags)
    assert result.exit_code == 0
    text = result.stdout
    if mode == "json":
        assert json.loads(text)["ok"] is True
    elif mode == "jsonl":
        assert [json.loads(line)["name"] for line in text.splitlines()] == ["a.py", "b.py"]
    elif mode == "plain":
        assert text.splitlines() == ["a.py\tred\tfast\t[]", "b.py\tred\tfast\t[]"]
    else:
        assert text.splitlines()[0].split() == ["NAME", "COLOR", "MODE", "TAGS"]


def test_output_mode_from_the_environment_loses_to_a_flag():
    root = files("a.py")
    result = CliRunner().invoke(
        app.click_group, ["find", "*.py", "--root", str(root)], env={"CORE_OUTPUT": "plain"}
    )
    assert result.stdout == "a.py\tred\tfast\t[]\n"
    result = CliRunner().invoke(
        app.click_group,
        ["find", "*.py", "--root", str(root), "--json"],
        env={"CORE_OUTPUT": "plain"},
    )
    assert json.loads(result.stdout)["ok"] is True


def test_print0_ends_plain_items_with_nul_and_refuses_json():
    root = files("a b.py", "c.py")
    result = cli("find", "*.py", "--root", str(root), "--print0")
    assert result.stdout.split("\0")[:2] == ["a b.py\tred\tfast\t[]", "c.py\tred\tfast\t[]"]
    assert result.stdout.endswith("\0")
    code, out = envelope("find", "*.py", "--print0", "--json")
    assert code == ExitCode.USAGE
    assert out["error"]["code"] == "E1001"
    assert "--print0" in out["error"]["message"]


def test_jsonl_streams_a_generator_one_line_per_item():
    result = cli("count", "3", "--jsonl")
    assert result.exit_code == 0
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"i": 0},
        {"i": 1},
        {"i": 2},
    ]


def test_text_output_streams_a_generator_item_by_item():
    result = cli("ticks", "2", "--text")
    assert result.stdout == "tick: 0\ntick: 1\n"
    paged = cli("count", "2", "--text")  # a page is a list: one table
    assert paged.stdout == "I\n0\n1\n"


def test_notes_for_people_go_to_stderr_in_text_output_only():
    assert "2 names checked" in cli("check", "a", "b", "--text").stderr
    assert cli("check", "a", "b", "--json").stderr == ""
    assert cli("check", "a", "b", "--text", "-q").stderr == ""


def test_text_output_of_a_record_and_no_color_off_a_terminal():
    result = cli("notes", "tag", "n1", "a", "--text")
    assert result.stdout.splitlines()[0].split() == ["name:", "n1"]
    assert "\x1b[" not in result.stdout


def test_quiet_keeps_warnings_out_of_stderr_but_in_meta(tmp_path):
    counter = tmp_path / "c"
    result = cli("tick", str(counter), "--text")
    assert "warning: ticked" in result.stderr
    result = cli("tick", str(counter), "--text", "--quiet")
    assert result.stderr == ""
    _code, out = envelope("tick", str(counter))
    assert out["meta"]["warnings"] == ["ticked"]
    assert "ticked" not in cli("tick", str(counter), "--json").stderr  # once, in meta


def test_verbose_levels_and_quiet(tmp_path):
    counter = tmp_path / "c"
    assert "ticking" not in cli("tick", str(counter)).stderr
    once = cli("tick", str(counter), "-v").stderr
    assert "ticking\n" in once
    assert "in detail" not in once
    assert "ticking, in detail" in cli("tick", str(counter), "-vv").stderr
    assert cli("tick", str(counter), "-vv", "--quiet").stderr == ""


def test_response_format_reaches_the_command():
    assert envelope("status")[1]["result"] == {"state": "ok"}
    detailed = envelope("status", "--response-format", "detailed")[1]["result"]
    assert detailed == {"state": "ok", "checks": ["disk", "network"]}
    assert envelope("status", "--response-format", "verbose")[0] == 2


def _spawn(*args: str, env: dict[str, str] | None = None) -> Any:
    """The core app run on a real pseudo-terminal."""
    from ptyprocess import PtyProcessUnicode

    return PtyProcessUnicode.spawn(
        [sys.executable, str(CORE), *args],
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        dimensions=(24, 200),
    )


def _read_until(proc: Any, needle: str) -> str:
    seen = ""
    while needle not in seen:
        seen += proc.read(1024)
    return seen


def _read_to_end(proc: Any) -> str:
    """Everything the process writes to its terminal until it exits; then closed."""
    seen = ""
    try:
        while True:
            seen += proc.read(4096)
    except EOFError:
        return seen
    finally:
        proc.close(force=True)


@pytest.mark.parametrize(
    ("flags", "env", "colored"),
    [([], {}, True), (["--no-color"], {}, False), ([], {"NO_COLOR": "1"}, False)],
)
def test_colors_only_on_a_terminal_and_never_when_asked_not_to(flags, env, colored):
    seen = _read_to_end(
        _spawn("notes", "tag", "n1", "a", *flags, env={"TERM": "xterm-256color", **env})
    )
    assert "n1" in seen  # auto on a terminal is text, not JSON
    assert '"ok"' not in seen
    assert ("\x1b[" in seen) is colored


# Errors and exit codes ------------------------------------------------------------------


def test_a_tool_error_is_an_envelope_with_its_exit_code():
    code, out = envelope("remove", "x", "--yes")  # destructive: confirmed
    assert code == ExitCode.NOT_FOUND == 10
    assert out["ok"] is False
    assert out["error"] == {
        "code": "E3001",
        "category": "state",
        "message": "no note 'x'",
        "suggestion": {
            "action": "retry_with_modified_input",
            "fix": "List the notes first.",
            "applicability": "maybe_incorrect",
        },
        "is_retryable": False,
        "exit_code": 10,
    }
    assert out["meta"]["tool"] == "core.remove"


def test_a_failure_can_carry_what_was_done_before_it():
    code, out = envelope("check", "a", "xb")
    assert code == 65
    assert list(out) == ["ok", "error", "result", "meta"]
    assert out["result"] == {"a": True, "xb": False}
    assert out["error"]["message"] == "1 of 2 names are bad"
    text = cli("check", "a", "xb", "--text")
    assert text.exit_code == 65
    assert text.stdout == "a: ok\nxb: BAD\n"  # the command's own text rendering
    assert "error: 1 of 2 names are bad" in text.stderr
    assert cli("check", "a", "--text").stdout == "a: ok\n"


def test_a_document_is_verbatim_for_files_and_decoded_in_the_envelope():
    assert envelope("manifest")[1]["result"] == {"tools": [1, 2]}
    assert cli("manifest", "--plain").stdout == '{\n  "tools": [1, 2]\n}\n'
    assert cli("manifest", "--text").stdout == '{\n  "tools": [1, 2]\n}\n'
    assert cli("manifest", "--jsonl").stdout == '{"tools":[1,2]}\n'


def test_a_document_a_command_renders_for_people():
    app = App("docs", version="1")

    @app.command(text=lambda doc: f"{len(doc['tools'])} tools\n")
    def show() -> atipkit.app.Document:
        """Show."""
        return atipkit.app.Document('{"tools": [1, 2]}')

    def run(*flags: str) -> str:
        return CliRunner().invoke(app.click_group, ["show", *flags]).stdout

    assert run("--text") == "2 tools\n"
    assert run("--plain") == '{"tools": [1, 2]}\n'
    assert json.loads(run())["result"] == {"tools": [1, 2]}


def test_progress_only_on_a_terminal():
    assert "\x1b[K" not in cli("check", "a", "b", "--text").stderr  # not a terminal here
    seen = _read_to_end(_spawn("check", "a", "b", "--text"))
    assert "\r\x1b[Kchecking 2/2" in seen


@pytest.mark.parametrize(
    ("kind", "code", "category", "exit_code", "retryable"),
    [
        ("input", "E1001", "input", 2, False),
        ("notfound", "E3001", "state", 10, False),
        ("state", "E3000", "state", 20, False),
        ("conflict", "E3002", "state", 20, False),
        ("auth", "E2001", "auth", 30, False),
        ("dependency", "E4001", "runtime", 40, False),
        ("timeout", "E4002", "runtime", 50, True),
        ("data", "E1003", "input", 65, False),
        ("internal", "E5001", "internal", 70, False),
        ("temporary", "E4003", "runtime", 75, True),
        ("handoff", "E2002", "auth", 101, False),
    ],
)
def test_each_error_class_has_its_envelope_and_exit_code(
    kind, code, category, exit_code, retryable
):
    result = cli("fail", kind)
    assert result.exit_code == exit_code
    error = json.loads(result.stdout)["error"]
    assert error == {
        "code": code,
        "category": category,
        "message": f"failed: {kind}",
        "is_retryable": retryable,
        "exit_code": exit_code,
    }
    text = cli("fail", kind, "--text")
    assert text.exit_code == exit_code
    assert text.stderr == f"error: failed: {kind} [{code}]\n"


def test_an_unexpected_exception_is_an_internal_error_exit_70_without_a_traceback():
    result = cli("crash")
    assert result.exit_code == ExitCode.INTERNAL == 70
    out = json.loads(result.stdout)
    assert out["error"]["category"] == "internal"
    assert out["error"]["details"] == {"exception": "ZeroDivisionError"}
    assert "Traceback" not in result.stdout + result.stderr


def test_errors_in_text_mode_go_to_stderr_and_stdout_stays_empty():
    result = cli("remove", "x", "--yes", "--text")
    assert result.exit_code == 10
    assert result.stdout == ""
    assert "error: no note 'x' [E3001]" in result.stderr
    assert "fix: List the notes first." in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "param", "expected_key"),
    [
        (["find", "*", "-d", "0"], "E1002", "max_depth", "minimum"),
        (["find", "*", "--max-depth", "many"], "E1002", "max_depth", "type"),
        (["find", "*", "--color", "green"], "E1002", "color", "enum"),
        (["find"], "E1001", "pattern", "type"),
        (["notes", "tag", "n"], "E1001", "labels", "items"),
        (["count", "5", "--limit", "0"], "E1002", "limit", None),
    ],
)
def test_usage_errors_are_envelopes_naming_the_parameter_and_what_it_expects(
    args, code, param, expected_key
):
    exit_code, out = envelope(*args)
    assert exit_code == ExitCode.USAGE
    assert out["ok"] is False
    error = out["error"]
    assert (error["code"], error["category"], error["exit_code"]) == (code, "input", 2)
    assert error["details"]["param"] == param
    if expected_key:
        assert expected_key in error["details"]["expected"]
    assert error["details"]["usage"].startswith("Usage: core ")


def test_an_unknown_option_suggests_the_near_miss():
    exit_code, out = envelope("find", "*", "--max-dept", "3")
    assert exit_code == 2
    assert "--max-depth" in out["error"]["details"]["did_you_mean"]
    assert "--max-depth" in out["error"]["suggestion"]["fix"]


def test_an_unknown_command_is_an_envelope_too():
    exit_code, out = envelope("fnd")
    assert exit_code == 2
    assert "No such command 'fnd'" in out["error"]["message"]
    assert out["meta"]["tool"] == "core"


def test_usage_errors_in_text_mode_show_usage_on_stderr():
    result = cli("find", "--text")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Usage: core find [OPTIONS] PATTERN" in result.stderr


def test_bad_json_input_is_a_data_format_error_exit_65():
    exit_code, out = envelope("add", '{"title": "t", "tags": ')
    assert exit_code == ExitCode.DATA_FORMAT == 65
    assert out["error"]["code"] == "E1003"
    exit_code, out = envelope("add", '{"title": 3, "tags": []}')
    assert exit_code == 65
    assert "$.title" in out["error"]["message"]


def test_a_model_argument_round_trips_as_json():
    code, out = envelope("add", '{"title": "t", "tags": ["a"]}')
    assert code == 0
    assert out["result"] == {"title": "t", "tags": ["a"], "body": ""}


# stdin and file parity --------------------------------------------------------------------


def test_stdin_or_reads_a_file_dash_and_piped_stdin_alike():
    Path("t.txt").write_text("one two\nthree\n")
    from_file = envelope("wc", "t.txt")[1]["result"]
    from_dash = envelope("wc", "-", input="one two\nthree\n")[1]["result"]
    piped = envelope("wc", input="one two\nthree\n")[1]["result"]
    assert from_file == from_dash == piped == {"words": 3, "lines": 2}


def test_stdin_or_without_input_on_a_terminal_fails_instead_of_hanging():
    # A real pseudo-terminal as stdin: nothing piped, so nothing to read.
    import pty

    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, str(CORE), "wc", "--json"],
            stdin=follower,
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=30,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert result.returncode == 2
    out = json.loads(result.stdout)
    assert out["error"]["code"] == "E1004"
    assert "missing input" in out["error"]["message"]


def test_a_missing_input_file_is_not_found():
    code, out = envelope("wc", "nope.txt")
    assert code == 10
    assert out["error"]["details"] == {"path": "nope.txt"}


def test_null_separated_records_with_null():
    code, out = envelope("lines", "--null", input=b"a b\0c\nd\0")
    assert code == 0
    assert out["result"] == ["A B", "C\nD"]
    _code, out = envelope("lines", input=b"a b\nc\n")
    assert out["result"] == ["A B", "C"]


def test_stdin_or_path_gets_the_file_itself_or_a_temporary_copy_of_stdin():
    Path("data.bin").write_bytes(b"12345")
    assert envelope("size", "data.bin")[1]["result"] == {"bytes": 5, "exists": True}
    assert envelope("size", input=b"123")[1]["result"] == {"bytes": 3, "exists": True}
    leftovers = list(Path(os.environ.get("TMPDIR", "/tmp")).glob("atipkit-input-*"))
    assert leftovers == []


def test_input_over_the_cap_is_refused():
    small = App("small", version="1", max_input_bytes=10)

    @small.command()
    def wc(data: atipkit.app.StdinOr[str]) -> int:
        return len(data)

    result = CliRunner().invoke(small.click_group, ["wc"], input="x" * 11)
    assert result.exit_code == 65
    assert json.loads(result.stdout)["error"]["code"] == "E1007"
    result = CliRunner().invoke(small.click_group, ["wc"], input="x" * 10)
    assert json.loads(result.stdout)["result"] == 10


def test_bytes_that_are_not_utf8_are_a_data_format_error():
    code, out = envelope("wc", input=b"\xff\xfe")
    assert code == 65
    assert "not UTF-8" in out["error"]["message"]


def test_an_output_destination_takes_dash_for_the_result(tmp_path):
    code, out = envelope("export")  # the default is '-'
    assert code == 0
    assert out["result"] == "note one\nnote two\n"
    assert cli("export", "--dest", "-", "--plain").stdout == "note one\nnote two\n"
    target = tmp_path / "notes.txt"
    code, out = envelope("export", "--dest", str(target))
    assert out["result"] == {"wrote": str(target)}
    assert target.read_text() == "note one\nnote two\n"
    leftovers = list(Path(os.environ.get("TMPDIR", "/tmp")).glob("atipkit-input-*"))
    assert leftovers == []
    schema = app.command_at(["export"]).signature.input_schema()["properties"]["dest"]
    assert "'-' returns what is written there as the result" in schema["description"]


def test_stdout_or_takes_a_path_only():
    bad = App("bad", version="1")

    @bad.command()
    def out(dest: atipkit.app.StdoutOr[str] = "-") -> None:
        """Out."""

    with pytest.raises(DefinitionError, match="StdoutOr takes a Path"):
        _ = bad.command_at(["out"]).signature


# Prompts, human in the loop, dry-run ----------------------------------------------------


def test_no_terminal_no_prompt_a_clear_error_instead():
    result = process("ask", "--json")
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "E1006"
    assert json.loads(process("ask", "--yes").stdout)["result"] == {"answer": True}


def test_human_in_the_loop_without_a_human_is_exit_101_even_with_yes():
    result = process("purge", "--yes")
    assert result.returncode == ExitCode.HUMAN_HANDOFF == 101
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["category"]) == ("E2002", "auth")
    assert error["suggestion"]["action"] == "ask_human"


def test_prompts_read_the_terminal_not_stdin():
    # stdin is a pipe of data, the terminal is a real pty: the question goes to the pty.
    proc = _spawn("ask", "--json")
    try:
        assert "Proceed? [y/N]:" in _read_until(proc, "Proceed?")
        proc.write("y\n")
        rest = _read_until(proc, "}}")
    finally:
        proc.close(force=True)
    assert '"answer":true' in rest


def test_no_input_never_prompts_even_on_a_terminal():
    proc = _spawn("ask", "--json", "--no-input")
    try:
        seen = _read_until(proc, "}}")
    finally:
        proc.close(force=True)
    assert "Proceed?" not in seen
    assert '"code":"E1006"' in seen
    assert "(--no-input)" in seen


def test_human_in_the_loop_asks_a_human_at_a_terminal():
    proc = _spawn("purge", "--json")
    try:
        _read_until(proc, "Go ahead? [y/N]:")
        proc.write("n\n")
        rest = _read_until(proc, "}}")
    finally:
        proc.wait() if proc.isalive() else None
        proc.close(force=True)
    assert '"code":"E2003"' in rest
    assert proc.exitstatus == ExitCode.PERMISSION


def test_dry_run_returns_the_plan():
    code, out = envelope("remove", "n1", "--dry-run")
    assert code == 0
    assert out["result"] == {
        "dry_run": True,
        "actions": [{"action": "delete", "target": "n1", "details": {"reason": "asked"}}],
        "result": {"would_remove": "n1"},
    }
    assert out["meta"]["dry_run"] is True


def test_dry_run_is_refused_by_commands_that_cannot_honour_it(tmp_path):
    counter = tmp_path / "c"
    code, out = envelope("tick", str(counter), "--dry-run")
    assert code == 2
    assert out["error"]["code"] == "E1008"
    assert out["error"]["message"] == "core tick does not support --dry-run: it would do the work"
    assert not counter.exists()  # nothing ran


def _help_flags(*path: str) -> set[str]:
    return {w.rstrip(",") for w in cli(*path, "--help").stdout.split() if w.startswith("--")}


@pytest.mark.parametrize(
    ("command", "offered", "absent"),
    [
        # read-only: nothing to plan, a retry is harmless, it never asks
        ("find", set(), {"--dry-run", "--idempotency-key"}),
        # destructive and planning, its prompts unknown: all of them
        ("remove", {"--dry-run", "--idempotency-key", "--yes", "--no-input"}, set()),
        # idempotent: no key; may ask (undeclared): --yes
        ("add", {"--yes", "--no-input"}, {"--dry-run", "--idempotency-key"}),
        # nothing declared: may do anything but plan
        ("tick", {"--idempotency-key", "--yes"}, {"--dry-run"}),
    ],
)
def test_a_flag_is_offered_where_the_declarations_say_it_does_something(command, offered, absent):
    flags = _help_flags(command)
    assert {"--json", "--timeout", "--max-items", "--no-color"} <= flags  # every command's
    assert offered <= flags
    assert not absent & flags
    doc = json.loads(cli("--agent").stdout)
    agent_flags = {f for o in doc["commands"][command].get("options", []) for f in o["flags"]}
    agent_flags |= {f for o in doc["globalOptions"] for f in o["flags"]}
    framework = {"--dry-run", "--idempotency-key", "--yes", "--no-input"}
    assert agent_flags & framework == flags & framework  # --agent offers what --help does


def test_a_flag_not_offered_is_refused_saying_why():
    code, out = envelope("find", "*.py", "--idempotency-key", "k")
    assert code == 2
    assert out["error"]["code"] == "E1001"
    assert out["error"]["message"] == (
        "core find takes no --idempotency-key: it is idempotent, so a retry does what the "
        "first call did"
    )
    assert out["error"]["details"]["option"] == "--idempotency-key"


def test_a_command_declared_never_to_ask_takes_no_yes():
    from atipkit.model import Effects, Interactive

    fresh = App("quiet", version="1")

    @fresh.command(effects=Effects(interactive=Interactive(prompts=False)))
    def go() -> int:
        """Go."""
        return 1

    @fresh.command(effects=Effects(interactive=Interactive(prompts=False)), human_in_the_loop=True)
    def approve() -> int:
        """Needs a human: --no-input still means something."""
        return 1

    runner = CliRunner()
    assert "--yes" not in runner.invoke(fresh.click_group, ["go", "--help"]).stdout
    refused = runner.invoke(fresh.click_group, ["go", "--yes", "--json"])
    assert refused.exit_code == 2
    message = json.loads(refused.stdout)["error"]["message"]
    assert message == "quiet go takes no --yes: it never asks"
    assert "--no-input" in runner.invoke(fresh.click_group, ["approve", "--help"]).stdout


# Timeouts -----------------------------------------------------------------------------------


def test_the_command_timeout_gives_exit_50():
    result = process("sleep", "5")
    assert result.returncode == ExitCode.TIMEOUT == 50
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["is_retryable"]) == ("E4002", True)


def test_timeout_flag_overrides_the_command_default():
    result = process("sleep", "0.8", "--timeout", "5")
    assert result.returncode == 0
    result = process("sleep", "0.3", "--timeout", "0.1")
    assert result.returncode == 50


# Pagination and truncation ----------------------------------------------------------------


def test_pages_follow_cursors_to_the_end():
    seen, cursor, pages = [], None, 0
    while True:
        args = ["count", "7", "--limit", "3"] + (["--cursor", cursor] if cursor else [])
        code, out = envelope(*args)
        assert code == 0
        seen += [r["i"] for r in out["result"]]
        pages += 1
        cursor = out["meta"]["pagination"]["next_cursor"]
        if cursor is None:
            break
    assert seen == list(range(7))
    assert pages == 3


def test_a_cursor_from_another_query_is_refused():
    cursor = envelope("count", "7", "--limit", "3")[1]["meta"]["pagination"]["next_cursor"]
    code, out = envelope("count", "8", "--limit", "3", "--cursor", cursor)
    assert code == 2
    assert out["error"]["code"] == "E1005"
    code, out = envelope("count", "7", "--cursor", "not-a-cursor")
    assert out["error"]["code"] == "E1005"


def test_limit_on_a_command_that_is_not_paginated_is_unknown():
    code, _out = envelope("find", "*", "--limit-x", "1")
    assert code == 2


def test_max_items_truncates_deterministically_and_says_so():
    code, out = envelope("count", "10", "--max-items", "4")
    assert code == 0
    assert [r["i"] for r in out["result"]] == [0, 1, 2, 3]
    truncation = out["meta"]["truncation"]
    assert truncation["reason"] == "max_items"
    assert truncation["returned_items"] == 4
    # a cut page continues where the cut was, not where the page would have ended
    cursor = out["meta"]["pagination"]["next_cursor"]
    _code, out = envelope("count", "10", "--max-items", "4", "--cursor", cursor)
    assert [r["i"] for r in out["result"]] == [4, 5, 6, 7]


def test_max_bytes_keeps_the_longest_prefix_within_the_budget():
    _code, out = envelope("words", "3", "--max-bytes", "18")
    assert out["result"] == ["word0", "word1"]  # ["word0","word1"] is 17 bytes
    assert out["meta"]["truncation"]["reason"] == "max_bytes"


def test_max_tokens_of_the_command_caps_the_result():
    _code, out = envelope("words", "100")
    encoded = json.dumps(out["result"], separators=(",", ":"))
    assert len(encoded) <= 20 * 4
    assert out["meta"]["truncation"]["reason"] == "max_tokens"
    assert out["meta"]["truncation"]["total_items"] == 100


# Idempotency keys -------------------------------------------------------------------------


def test_an_idempotency_key_runs_once_and_replays(tmp_path):
    counter = tmp_path / "c"
    first = envelope("tick", str(counter), "--idempotency-key", "k1")[1]
    again = envelope("tick", str(counter), "--idempotency-key", "k1")[1]
    assert counter.read_text() == "x\n"  # ran once
    assert first["result"] == again["result"] == {"ticks": 1}
    assert again["meta"]["replayed"] is True
    assert "replayed" not in first["meta"]
    envelope("tick", str(counter), "--idempotency-key", "k2")
    assert counter.read_text() == "x\nx\n"


def test_an_idempotency_key_reused_with_other_arguments_is_a_conflict(tmp_path):
    envelope("tick", str(tmp_path / "a"), "--idempotency-key", "k")
    code, out = envelope("tick", str(tmp_path / "b"), "--idempotency-key", "k")
    assert code == ExitCode.CONFLICT == 20
    assert out["error"]["code"] == "E3003"
    assert not (tmp_path / "b").exists()


def test_a_kept_failure_is_replayed_with_its_exit_code():
    first = cli("remove", "x", "--yes", "--idempotency-key", "k")
    again = cli("remove", "x", "--yes", "--idempotency-key", "k")
    assert first.exit_code == again.exit_code == 10
    assert json.loads(again.stdout)["meta"]["replayed"] is True


# --agent, --schema, --help-agent, --version ---------------------------------------------


def test_agent_is_valid_atip_and_matches_the_parser():
    result = cli("--agent")
    assert result.exit_code == 0
    report = atipkit.validate(result.stdout, source="core.json")
    assert report.errors == []
    tool = report.tool
    assert tool.name == "core"
    assert tool.version == "2.1.0"
    assert "partial-discovery" in tool.atip.features
    find = tool.commands["find"]
    assert [a.name for a in find.arguments] == ["pattern"]
    by_name = {o.name: o for o in find.options}
    assert by_name["max_depth"].flags == ["--max-depth", "-d"]
    assert by_name["max_depth"].default == 10
    assert by_name["color"].type == "enum"
    assert by_name["color"].enum == ["red", "blue"]
    assert by_name["root"].type == "directory"
    assert by_name["tag"].variadic is True
    assert find.effects.filesystem.write is False
    assert find.effects.network is False
    assert find.effects.idempotent is True
    assert find.examples == ["core find '*.py' --max-depth 2"]
    assert find.extensions["x-atipkit"]["errorCodes"] == {"E3001": "The root does not exist"}
    remove = tool.commands["remove"]
    assert remove.effects.destructive is True
    assert remove.effects.reversible is False
    assert tool.commands["purge"].extensions["x-atipkit"]["humanInTheLoop"] is True
    assert tool.commands["wc"].effects.interactive.stdin == "optional"
    assert tool.commands["sleep"].effects.duration.timeout == "0.5s"
    assert tool.commands["notes"].commands["tag"].arguments[1].variadic is True
    assert {o.name for o in tool.global_options} >= {"output", "timeout", "max_items"}
    # the flags only some commands take are those commands' options, as --help lists them
    assert not {o.name for o in tool.global_options} & {"dry_run", "yes", "idempotency_key"}
    assert {o.name for o in remove.options} >= {"dry_run", "idempotency_key", "yes"}
    assert not {o.name for o in find.options} & {"dry_run", "idempotency_key"}


def test_the_tool_in_process_is_the_one_agent_writes():
    """`App.tool()` is the document `--agent` writes, usable as any other: a command
    without examples has none (`[]`, never UNSET), so search and export can read it."""
    from atipkit.interop.atdf import export_atdf
    from atipkit.search import CommandIndex

    tool = app.tool()
    assert atipkit.to_dict(tool) == json.loads(cli("--agent").stdout)
    assert tool.commands["remove"].examples == []
    found = CommandIndex.from_tools([tool]).search("remove")
    assert found[0].command == "remove"
    export_atdf(tool)


def test_agent_does_partial_discovery_itself():
    out = json.loads(cli("--agent", "--commands", "notes,find", "--depth", "1").stdout)
    assert out["partial"] is True
    assert sorted(out["commands"]) == ["find", "notes"]
    assert out["commands"]["notes"].get("commands", {}) == {}
    assert out["filter"] == {"commands": ["notes", "find"], "depth": 1}
    assert out["totalCommands"] == atipkit.count_commands(atipkit.loads(cli("--agent").stdout))
    bad = cli("--agent", "--commands", "nope", "--json")
    assert bad.exit_code == 2


def test_commands_without_agent_is_a_usage_error():
    assert cli("--depth", "1").exit_code == 2


def test_schema_of_a_command_is_ref_free_json_schema_that_accepts_its_examples():
    import jsonschema

    result = cli("add", "--schema")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    schema = doc["input_schema"]
    assert "$ref" not in result.stdout
    assert "$defs" not in result.stdout
    jsonschema.Draft202012Validator.check_schema(schema)
    ok = {"note": {"title": "t", "tags": ["a"]}}
    jsonschema.validate(ok, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"note": {"title": 1, "tags": []}}, schema)
    assert doc["output_schema"]["properties"]["title"] == {"type": "string"}
    assert doc["annotations"]["idempotentHint"] is True
    assert "CORE_OUTPUT" in doc["env"]


def test_schema_of_the_app_covers_every_command():
    doc = json.loads(cli("--schema").stdout)
    assert sorted(doc["commands"]) == sorted(" ".join(s.path) for s in app.walk())
    assert doc["commands"]["notes tag"]["input_schema"]["required"] == ["name", "labels"]
    assert doc["commands"]["find"]["env"]["CORE_FIND_MAX_DEPTH"] == "max_depth"


def test_help_agent_is_one_minified_line():
    result = cli("find", "--help-agent")
    assert result.stdout.count("\n") == 1
    doc = json.loads(result.stdout)
    depth = next(p for p in doc["params"] if p["name"] == "max_depth")
    assert depth == {
        "name": "max_depth",
        "flag": ["--max-depth", "-d"],
        "type": "integer",
        "default": 10,
        "minimum": 1,
        "maximum": 100,
        "help": "How deep to go",
    }
    assert doc["hints"] == ["read-only", "idempotent", "no-network"]
    overview = json.loads(cli("--help-agent").stdout)
    assert [c["command"] for c in overview["commands"]][:2] == ["find", "remove"]


def test_version_and_help():
    assert cli("--version").stdout == "core 2.1.0\n"
    help_text = cli("find", "--help").stdout
    own, common = help_text.split("Global options:")
    assert "--max-depth" in own
    assert "--json" not in own
    assert "--json" in common
    assert "--max-items" in common


def test_help_lists_commands_without_building_them():
    fresh = App("lazy", version="1")
    built = []

    for i in range(30):

        def command(x: int = 1) -> int:
            """Does a thing."""
            return x

        fresh.command(f"c{i}")(command)
    result = CliRunner().invoke(fresh.click_group, ["--help"])
    assert result.exit_code == 0
    assert "c29" in result.stdout
    built = [s for s in fresh.walk() if "click_command" in vars(s) or "signature" in vars(s)]
    assert built == []


# Definitions --------------------------------------------------------------------------------


def test_a_parameter_that_takes_a_global_flag_is_refused_when_defined():
    bad = App("bad", version="1")

    @bad.command()
    def run(output: str = "x") -> None:
        """Run."""

    with pytest.raises(DefinitionError, match=r"--output.*global flag"):
        _ = bad.command_at(["run"]).signature

    other = App("bad2", version="1")

    @other.command()
    def go(quick: Annotated[bool, Option("-q")] = False) -> None:
        """Go."""

    with pytest.raises(DefinitionError, match="-q"):
        _ = other.command_at(["go"]).signature


def test_a_lazy_module_must_define_its_names_and_a_failed_import_is_tried_again():
    """`Group.lazy` (decision 310): a module that does not define the names it was
    declared for is a definition error, not a missing command; a module that cannot be
    imported fails each time it is asked for, as Python's own import does."""
    lazy = App("lazy", version="1")
    lazy.lazy("json", ["parse"])  # a real module that defines no command
    lazy.lazy("atipkit_no_such_module", ["gone"])
    with pytest.raises(DefinitionError, match=r"lazy parse: not defined by json"):
        lazy.child("parse")
    for _ in range(2):
        with pytest.raises(ModuleNotFoundError):
            lazy.child("gone")
    with pytest.raises(DefinitionError, match="defined twice"):
        lazy.lazy("json", ["parse"])


def test_a_color_option_would_shadow_no_color():
    bad = App("bad", version="1")

    @bad.command()
    def paint(color: bool = True) -> None:
        """Paint."""

    with pytest.raises(DefinitionError, match="--no-color"):
        _ = bad.command_at(["paint"]).signature


def test_contradictory_annotations_and_reserved_names_are_refused():
    from atipkit.app import Destructive, ReadOnly

    bad = App("bad", version="1")
    with pytest.raises(DefinitionError, match="contradict"):
        bad.command(annotations=ReadOnly | Destructive)(lambda: None)
    with pytest.raises(DefinitionError, match="built-in"):
        bad.command("mcp")(lambda: None)
    bad.command("x")(lambda: None)
    with pytest.raises(DefinitionError, match="twice"):
        bad.command("x")(lambda: None)


def test_decorated_functions_stay_plain_functions():
    from tests.apps.core_app import Note, add, find

    assert add(Note("t", [])) == Note("t", [])
    assert find.__name__ == "find"


LEAN = '''
import sys
from atipkit.app import App, Option
from typing import Annotated

app = App("lean", version="1")


@app.command()
def mods(n: Annotated[int, Option(help="A number", min=1)] = 1) -> list:
    """Which heavy modules this call has loaded."""
    return sorted(m for m in sys.argv[-1].split(",") if m in sys.modules)


app(sys.argv[1:-1])
'''


def test_a_call_imports_nothing_it_does_not_use(tmp_path):
    """Decision 95: a command's call loads neither msgspec nor dataclasses (nor pydantic,
    rich or hashlib), whatever this machine's interpreter loads on its own."""
    heavy = "msgspec,dataclasses,pydantic,rich,hashlib"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    baseline = subprocess.run(
        [sys.executable, "-c", f"import sys; print(','.join(m for m in {heavy.split(',')!r} "
         "if m in sys.modules))"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout.strip().split(",")  # fmt: skip
    script = tmp_path / "lean.py"
    script.write_text(LEAN)
    result = subprocess.run(
        [sys.executable, str(script), "mods", "--n", "2", "--json", heavy],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    loaded = set(json.loads(result.stdout)["result"]) - set(baseline)
    assert loaded == set()


def test_a_mistyped_command_gets_the_near_names_in_nested_groups_too():
    code, out = envelope("notes", "tg", "--json")
    assert code == 2
    assert out["error"]["details"]["did_you_mean"] == ["tag"]
    assert out["error"]["suggestion"]["fix"] == "Did you mean core notes tag?"
    code, out = envelope("fnd", "--json")
    assert (code, out["error"]["details"]["did_you_mean"]) == (2, ["find"])
