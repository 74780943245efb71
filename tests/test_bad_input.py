"""Hostile and broken input: every case is one line, a documented exit code, no traceback,
bounded time and memory. Run through the real `atip` process.

For people (`--text`) the one line is the problem, on stdout, and the error's summary is
on stderr; for machines (the default off a terminal) it is one complete JSON envelope.
An invalid document is a data-format error: exit 65 (SPEC-NOTES 23)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import atipkit
from tests.helpers import FIXTURES, atip, envelope_of, minimal

ATIP = [sys.executable, "-m", "atipkit.cli"]


def run(*args: str, stdin: bytes | None = None, timeout: float = 60):
    start = time.perf_counter()
    proc = subprocess.run([*ATIP, *args], input=stdin, capture_output=True, timeout=timeout)
    return proc, time.perf_counter() - start


def assert_one_clean_line(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The one problem line of text output, and the error on stderr in one line too."""
    out = proc.stdout.decode()
    assert "Traceback" not in out + proc.stderr.decode()
    lines = out.splitlines()
    assert len(lines) == 1, out
    assert len(proc.stderr.decode().splitlines()) == 1, proc.stderr
    assert proc.stderr.decode().startswith("error: ")
    return lines[0]


def the_envelope(proc: subprocess.CompletedProcess[bytes]) -> dict:
    """The whole of stdout, one JSON envelope on one line; nothing on stderr."""
    out = proc.stdout.decode()
    assert "Traceback" not in out + proc.stderr.decode()
    assert proc.stderr == b""
    lines = out.splitlines()
    assert len(lines) == 1, out
    envelope = json.loads(lines[0])
    assert envelope["ok"] is False
    assert envelope["error"]["exit_code"] == proc.returncode
    return envelope


def first_error(envelope: dict) -> dict:
    return envelope["result"]["files"][0]["errors"][0]


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("empty.json", "line 1, column 1"),
        ("truncated.json", None),
        ("trailing-comma.json", "line 3"),
        ("not-utf8.json", "line 2"),
    ],
)
def test_malformed_json_names_line_and_column(name, where):
    path = FIXTURES / "bad-json" / name
    proc, _ = run("validate", str(path), "--text")
    line = assert_one_clean_line(proc)
    assert proc.returncode == 65
    assert line.startswith(f"{path}: line ")
    if where:
        assert where in line
    proc, _ = run("validate", str(path))
    problem = first_error(the_envelope(proc))
    assert proc.returncode == 65
    assert problem["location"].startswith("line ")
    if where:
        assert where in problem["location"]


def test_position_of_a_syntax_error_is_exact():
    with pytest.raises(atipkit.MalformedJSON) as info:
        atipkit.loads(b'{\n  "atip": "0.6",\n  "name": "t"\n  "version": "1"\n}')
    assert (info.value.line, info.value.column) == (4, 3)


def test_bad_utf8_position_is_exact():
    with pytest.raises(atipkit.MalformedJSON) as info:
        atipkit.loads(b'{"atip": "0.6",\n "name": "\xc3t\xff"}')
    assert info.value.line == 2
    assert "0xc3" in str(info.value)


def test_the_first_fault_is_named_when_bad_utf8_comes_after_it():
    """msgspec 0.23 says "Invalid UTF-8 encoded string" without a place; the place is
    Python's, and only when the bad byte comes before msgspec's own fault."""
    with pytest.raises(atipkit.MalformedJSON) as info:
        atipkit.loads(b'{"a": x, "b": "\xff"}')
    assert (info.value.line, info.value.column) == (1, 7)
    assert "UTF-8" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "got"), [("[]", "array"), ('"x"', "string"), ("3", "integer"), ("null", "null")]
)
def test_wrong_top_level_type(text, got):
    proc, _ = run("validate", "-", "--text", stdin=text.encode())
    line = assert_one_clean_line(proc)
    assert proc.returncode == 65
    assert line == f"<stdin>: $: expected a JSON object at the top level, got {got}"


# Runs `atip` and reports the process's own peak RSS (kB) on the last stderr line, from
# VmHWM: the high-water mark of this address space only. getrusage's ru_maxrss would also
# carry the forked test process's pages from before exec.
_MEASURED = (
    "import sys\n"
    "from atipkit.cli import main\n"
    "try:\n    main()\n"
    "finally:\n"
    "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
    "    sys.stderr.write('\\nmaxrss=' + hwm.split()[1])\n"
)


def test_100_mb_file_is_refused_before_reading(tmp_path: Path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(100 * 1024 * 1024)  # sparse: the size is real, the disk use is not
    proc, elapsed = run("validate", str(big), "--text")
    line = assert_one_clean_line(proc)
    assert proc.returncode == 65
    assert "104,857,600 bytes; the limit is 16,777,216 bytes" in line
    assert elapsed < 10
    proc, elapsed = run("validate", str(big))
    assert "the limit is 16,777,216 bytes" in first_error(the_envelope(proc))["message"]
    assert elapsed < 10


def test_100_mb_on_stdin_is_cut_off_with_bounded_memory(tmp_path: Path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.write(b'{"atip": "0.6", "x-pad": "')
        for _ in range(100):
            f.write(b"a" * (1024 * 1024))
        f.write(b'"}')
    start = time.perf_counter()
    with big.open("rb") as stdin:  # a pipe-like stream: its size is not known up front
        proc = subprocess.run(
            [sys.executable, "-c", _MEASURED, "validate", "-", "--text"],
            stdin=stdin,
            capture_output=True,
            timeout=60,
        )
    elapsed = time.perf_counter() - start
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1, proc.stdout
    assert "Traceback" not in proc.stderr.decode()
    assert proc.returncode == 65
    assert "the limit is 16,777,216 bytes" in lines[0]
    peak_mb = int(proc.stderr.decode().rsplit("maxrss=", 1)[1]) / 1024
    assert peak_mb < 100  # it read 16 MiB + 1 byte, never the 100 MB
    assert elapsed < 20


def test_a_document_within_a_raised_limit_is_read(tmp_path: Path):
    doc = minimal(**{"x-pad": "a" * 20_000_000})
    path = tmp_path / "large.json"
    path.write_text(json.dumps(doc))
    proc, _ = run("validate", "--max-document-bytes", "30000000", str(path))
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["result"]["files"][0]["valid"] is True


@pytest.mark.parametrize("depth", [10_000, 100_000])
def test_deep_nesting_is_refused(depth: int):
    nested = b'{"atip": "0.6", "x-deep": ' + b"[" * depth + b"]" * depth + b"}"
    proc, elapsed = run("validate", "-", "--text", stdin=nested)
    line = assert_one_clean_line(proc)
    assert proc.returncode == 65
    assert "nested too deeply" in line
    assert elapsed < 10
    proc, elapsed = run("validate", "-", stdin=nested)
    assert "nested too deeply" in first_error(the_envelope(proc))["message"]
    assert elapsed < 10


def test_deep_nesting_inside_a_schema_free_field_is_refused_by_the_library():
    with pytest.raises(atipkit.DocumentTooLarge):
        atipkit.loads(b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}")


def nested_commands(levels: int) -> dict:
    """`minimal()` with a chain of `levels` subcommands under `run`: the deepest is at
    JSON depth 3 + 2 × levels."""
    doc = minimal()
    node = doc["commands"]["run"]
    for i in range(levels):
        node["commands"] = {f"c{i}": {"description": "d"}}
        node = node["commands"][f"c{i}"]
    return doc


def test_command_nesting_is_read_up_to_the_json_limit_and_refused_past_it():
    report = atipkit.validate(json.dumps(nested_commands(30)))  # depth 63
    assert report.ok, report.problems
    assert report.to_dict()["commands"] == 31
    for deep in (json.dumps(nested_commands(31)), nested_commands(31)):  # text, and decoded
        [problem] = atipkit.validate(deep).problems
        assert problem.code == "json.too-deep"
        assert problem.location == "$.commands.run" + "".join(f".commands.c{i}" for i in range(31))
        assert "more than 64 levels" in problem.message


def test_binary_garbage_is_one_line():
    garbage = os.urandom(4096)
    proc, _ = run("validate", "-", "--text", stdin=garbage)
    assert_one_clean_line(proc)
    assert proc.returncode == 65
    proc, _ = run("validate", "-", stdin=garbage)
    assert first_error(the_envelope(proc))["location"].startswith("line ")


def test_unreadable_inputs_are_usage_errors(tmp_path: Path):
    proc, _ = run("validate", str(tmp_path / "missing.json"), "--text")
    line = assert_one_clean_line(proc)
    assert proc.returncode == 2
    assert line.endswith("cannot read: No such file or directory")
    proc, _ = run("validate", str(tmp_path / "missing.json"))
    assert first_error(the_envelope(proc))["code"] == "io.unreadable"
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    proc, _ = run("validate", str(empty_dir), "--text")
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert b"no .json files" in proc.stderr
    proc, _ = run("validate", str(empty_dir))
    assert "no .json files" in the_envelope(proc)["error"]["message"]


def test_a_document_too_large_for_the_compiler_is_refused_the_same_way(tmp_path: Path):
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(100 * 1024 * 1024)
    proc, elapsed = run("compile", str(big))
    envelope = the_envelope(proc)
    assert proc.returncode == 65
    assert "the limit is 16,777,216 bytes" in envelope["error"]["message"]
    assert elapsed < 10
    proc, _ = run("compile", "-", "--text", stdin=b"[" * 100_000)
    assert proc.returncode == 65
    assert proc.stdout == b""  # nothing half-written
    assert "Traceback" not in proc.stderr.decode()
    assert proc.stderr.decode().startswith("error: <stdin>: ")


# -- nesting is bounded where JSON enters, before any validator sees it ----------------------

DEEP_500 = "[" * 500 + "]" * 500


@pytest.mark.parametrize("command", [["validate"], ["compile"], ["export", "atdf"]])
def test_a_value_500_deep_where_a_string_belongs_is_exit_65_naming_where(tmp_path, command):
    """jsonschema-rs gave up on it ("Recursion limit reached", exit 70) while saying why
    the value is not a string; now the reader refuses it first."""
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(minimal()).replace('"version": "1.0"', f'"version": {DEEP_500}'))
    result = atip(*command, str(path))
    assert result.exit_code == 65, result.output
    text = result.output
    assert "$.version" + "[0]" * 63 in text
    assert "nested too deeply: more than 64 levels" in text
    assert "Recursion" not in text


@pytest.mark.parametrize(
    ("command", "document"),
    [
        (["import", "atdf", "--name", "t"], {"tool_id": "t", "description": "d", "x": "DEEP"}),
        (["import", "tdp"], {"protocol_version": "1.0", "scenario": {"name": "DEEP"}}),
    ],
)
def test_imports_refuse_nesting_past_the_limit_before_reading(tmp_path, command, document):
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(document).replace('"DEEP"', DEEP_500))
    result = atip(*command, str(path))
    assert result.exit_code == 65, result.output
    assert "nested too deeply: more than 64 levels" in result.output


def test_a_call_nested_100_000_deep_is_exit_65(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(minimal()))
    head = '{"name": "t_run", "arguments": {"x": '  # two levels, then the arrays from level 3
    call = head + "[" * 100_000 + "]" * 100_000 + "}}"
    result = atip("run", "--tool", str(path), "--call", "-", "--dry-run", input=call)
    assert result.exit_code == 65, result.output
    where = f"line 1, column {len(head) + 1 + 62}"  # the bracket that opens level 65
    assert f"--call: {where}: JSON is nested too deeply" in result.output


# -- a call the metadata cannot check, values no command line can carry ---------------------


def echo_tool(tmp_path: Path, pattern: str) -> Path:
    path = tmp_path / "echo.json"
    argument = {"name": "word", "type": "string", "description": "w", "pattern": pattern}
    command = {"description": "Say it", "arguments": [argument]}
    path.write_text(json.dumps(minimal(name="echo", commands={"say": command})))
    return path


def test_a_pattern_that_is_no_regex_is_invalid_to_validate_and_exit_65_to_run(tmp_path):
    path = echo_tool(tmp_path, "(")
    checked = atip("validate", str(path), "--text")
    assert checked.exit_code == 65
    assert "$.commands.say.arguments[0].pattern: pattern '(' is not a regular expression" in (
        checked.output
    )
    call = json.dumps({"name": "echo_say", "arguments": {"word": "hi"}})
    ran = atip("run", "--tool", str(path), "--call", call, "--yes")
    assert ran.exit_code == 65, ran.output
    report = envelope_of(ran)["result"]
    assert report["stopped"] == "invalid-arguments"
    assert "which is not a regular expression" in report["text"]


@pytest.mark.parametrize("word", ['"\\ud800"', '"a\\udfff"', '["\\ud83d"]'])
def test_a_lone_surrogate_in_a_call_is_exit_65_never_70(tmp_path, word):
    path = echo_tool(tmp_path, ".")
    call = '{"name": "echo_say", "arguments": {"word": ' + word + "}}"
    ran = atip("run", "--tool", str(path), "--call", call, "--yes")
    assert ran.exit_code == 65, ran.output
    assert "surrogate" in envelope_of(ran)["error"]["message"]


def test_a_lone_surrogate_is_found_at_any_depth_in_linear_time():
    """`lone_surrogate` serves values that were never depth-checked (an MCP server's
    info, a Python caller's mapping): it copied the path at every step, so 100 000
    levels took half a minute."""
    from atipkit._jsontext import lone_surrogate

    value: list = []
    node = value
    for _ in range(100_000):
        node.append([])
        node = node[0]
    node.append({"ok": "text", "bad\ud800": 1})
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    started = time.thread_time()
    where = lone_surrogate({"x": value})
    assert time.thread_time() - started < 3
    assert where == "$.x" + "[0]" * 100_001  # the object holding the key
    assert lone_surrogate({"x": value[0][0][0]}) is not None
    assert lone_surrogate({"x": ["text", "a\ufffdb", "🚀"], "y": {"k": 1}}) is None


def test_a_mapping_that_is_no_dict_is_held_to_the_nesting_limit():
    """`validate` takes any Mapping; `check_depth` walks dicts, lists and tuples only, so
    a read-only mapping at the root was passed unwalked to jsonschema-rs, and a value
    100 000 levels deep inside it raised RecursionError out of `validate`."""
    from types import MappingProxyType

    deep: list = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    document = MappingProxyType({**minimal(), "version": deep})
    [problem] = atipkit.validate(document).problems
    assert problem.code == "json.too-deep"
    assert problem.location == "$.version" + "[0]" * 63
    assert atipkit.validate(MappingProxyType(minimal())).ok


def test_patterns_that_take_long_to_compile_cannot_stall_validation():
    """`.{65535}` is 9 bytes and takes the regex engine ~50 ms to refuse (it compiles to
    megabytes first): 300 of them, 25 KB, took `validate` 15 s, and a tool printing them
    stalled `atip scan`. Compiling stops after `checks.COMPILE_BUDGET_SECONDS` (0.5 s);
    the rest are a warning, and each is checked in full by a call that uses it."""
    arguments = [
        {"name": f"a{i}", "type": "string", "description": "d", "pattern": f".{{65535}}{i}"}
        for i in range(300)
    ]
    text = json.dumps(minimal(commands={"run": {"description": "r", "arguments": arguments}}))
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    started = time.thread_time()
    report = atipkit.validate(text)
    assert time.thread_time() - started < 3
    codes = [p.code for p in report.problems]
    assert "pattern.invalid" in codes  # those compiled within the budget
    [unchecked] = [p for p in report.problems if p.code == "pattern.unchecked"]
    assert unchecked.severity.value == "warning"
    assert codes.count("pattern.invalid") + int(unchecked.message.split()[0]) == 300
    plain = [{**a, "pattern": f"^[a-z]+{i}$"} for i, a in enumerate(arguments)]
    again = atipkit.validate(
        json.dumps(minimal(commands={"run": {"description": "r", "arguments": plain}}))
    )
    assert again.ok
    assert "pattern.unchecked" not in [p.code for p in again.problems]
