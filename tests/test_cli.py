"""The `atip` command: the envelope, exit codes, text output, --agent, validate, schema.

Click's runner does not give stdout a terminal, so a call without an output flag answers
with the JSON envelope; `--text` gives what people see.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import atipkit
from atipkit import iter_commands
from atipkit.cli import app
from atipkit.schema import schema_text
from tests.helpers import atip, envelope_of, minimal


def envelope(*args: str, input: str | None = None) -> tuple[int, dict[str, Any]]:
    """Exit status and the envelope: one JSON line, and nothing else, on stdout."""
    result = atip(*args, input=input)
    return result.exit_code, envelope_of(result)


def write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# --agent, --version, usage --------------------------------------------------------------


def test_agent_output_is_valid_under_our_own_schema():
    result = atip("--agent")
    assert result.exit_code == 0
    report = atipkit.validate(result.stdout, source="atip.json")
    assert report.problems == []  # not even a warning: every command states its effects
    tool = report.tool
    assert tool.name == "atip"
    assert tool.version == atipkit.__version__


def test_agent_output_covers_every_command_with_all_its_effects():
    tool = atipkit.loads(atip("--agent").stdout)
    described = dict(iter_commands(tool))
    leaves = {path for path, command in described.items() if not command.commands}
    assert leaves == {spec.path for spec in app.walk()}
    for path in leaves:
        effects = described[path].effects
        fs = effects.filesystem
        stated = (
            effects.network,
            effects.subprocess,
            effects.idempotent,
            effects.destructive,
            fs.read,
            fs.write,
            fs.delete,
            effects.interactive.stdin,
        )
        assert atipkit.UNSET not in stated, path
    # `atip run` and the gateway run whatever a call names, and `atip app serve` imports
    # and serves any Python file, so they declare the worst; nothing else destroys
    destroys = sorted(p for p in leaves if described[p].effects.destructive)
    assert destroys == [("app", "serve"), ("mcp", "serve"), ("run",)]
    validate = described[("validate",)]
    assert [o.name for o in validate.options] == ["strict", "max_document_bytes"]
    assert validate.arguments[0].variadic


def test_commands_that_resolve_tools_say_they_may_probe_write_and_reach_registries():
    tool = atipkit.loads(atip("--agent").stdout)
    for name in ("show", "refresh", "compile"):
        effects = tool.commands[name].effects
        assert (effects.subprocess, effects.filesystem.write, effects.network) == (
            True,
            True,
            True,
        ), name
    assert tool.commands["compile"].effects.interactive.stdin == "optional"
    for name in ("scan", "gen"):  # local only: `atip scan` never asks a remote registry
        effects = tool.commands[name].effects
        assert (effects.subprocess, effects.network) == (True, False), name
    assert tool.commands["list"].effects.filesystem.write is False


def test_version():
    assert atip("--version").stdout.strip().endswith(atipkit.__version__)


def test_usage_errors_exit_2_with_an_envelope():
    code, out = envelope("validate")
    assert code == 2
    assert out["error"]["code"] == "E1001"
    assert "FILES" in out["error"]["message"]
    code, out = envelope("validate", "--max-document-bytes", "0", "-")
    assert (code, out["error"]["details"]["param"]) == (2, "max_document_bytes")
    code, out = envelope("nonsense")
    assert (code, out["ok"]) == (2, False)
    text = atip("nonsense", "--text")
    assert text.exit_code == 2
    assert text.stdout == ""
    assert "No such command 'nonsense'" in text.stderr


def test_options_the_framework_now_gives_every_command_are_gone_from_the_commands():
    for args in (["scan", "--timeout", "1"], ["validate", "--max-bytes", "10", "-"]):
        result = atip(*args, "--help")
        own = result.stdout.split("Global options:")[0]
        assert args[1] not in own, args  # the global flag, listed under Global options
    assert "--probe-timeout" in atip("scan", "--help").stdout
    code, out = envelope("scan", "--probe-timeout", "0")
    assert (code, out["error"]["details"]["param"]) == (2, "probe_timeout")


# validate -------------------------------------------------------------------------------


def test_valid_document_exit_0(tmp_path):
    path = str(write(tmp_path, "ok.json", minimal()))
    result = atip("validate", path, "--text")
    assert result.exit_code == 0
    assert result.stdout == "1 file valid\n"
    code, out = envelope("validate", path)
    assert code == 0
    assert (out["result"]["ok"], out["result"]["summary"]) == (True, "1 file valid")


def test_invalid_document_exit_65_one_line_per_problem(tmp_path):
    doc = minimal()
    doc["commands"]["run"]["options"].append(
        {"name": "bad", "flags": ["bad"], "type": "str", "description": "x"}
    )
    path = write(tmp_path, "gh.json", doc)
    result = atip("validate", str(path), "--text")
    assert result.exit_code == 65
    assert result.stdout.splitlines() == [
        f"{path}: $.commands.run.options[1].flags: expected a list of strings starting with '-'",
        f'{path}: $.commands.run.options[1].type: expected one of "string", "integer", '
        '"number", "boolean", "file", "directory", "url", "enum", "array", '
        'got "str"',
    ]
    assert result.stderr == "error: 1 file: 1 failed; 2 errors, 0 warnings [E1003]\n"


def test_warnings_fail_only_with_strict(tmp_path):
    path = str(write(tmp_path, "long.json", minimal(description="x" * 201)))
    relaxed = atip("validate", path, "--text")
    assert relaxed.exit_code == 0
    assert "warning: description is 201 characters" in relaxed.stdout
    code, out = envelope("validate", "--strict", path)
    assert code == 65
    assert (out["result"]["strict"], out["result"]["ok"]) == (True, False)


def test_an_invalid_document_is_a_data_format_error_whose_result_is_the_report(tmp_path):
    good = write(tmp_path, "good.json", minimal())
    bad = write(tmp_path, "bad.json", minimal(version=3))
    code, out = envelope("validate", "--json", str(good), str(bad))
    assert code == 65
    assert list(out) == ["ok", "error", "result", "meta"]
    assert out["ok"] is False
    assert (out["error"]["code"], out["error"]["category"]) == ("E1003", "input")
    report = out["result"]
    assert report["ok"] is False
    assert [f["valid"] for f in report["files"]] == [True, False]
    assert report["files"][0]["commands"] == 1
    assert report["files"][1]["errors"] == [
        {
            "severity": "error",
            "location": "$.version",
            "code": "schema.type",
            "message": "expected string, got integer",
        }
    ]


def test_stdin_and_directories(tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "a.json", minimal())
    write(tmp_path, "b.json", minimal(name="has space"))
    (tmp_path / "notes.txt").write_text("not json, not picked up")
    result = atip("validate", str(tmp_path), "--text")
    assert result.exit_code == 65
    assert result.stdout.startswith(f"{tmp_path / 'b.json'}: $.name: expected the executable")
    _, out = envelope("validate", str(tmp_path))
    assert [f["source"] for f in out["result"]["files"]] == [
        str(tmp_path / "b.json"),
        str(tmp_path / "sub" / "a.json"),
    ]
    piped = atip("validate", "-", input=json.dumps(minimal()))
    assert piped.exit_code == 0


def test_a_file_that_cannot_be_read_is_exit_2_with_the_report(tmp_path):
    code, out = envelope("validate", str(tmp_path / "missing.json"))
    assert code == 2
    assert out["error"]["message"] == "1 file cannot be read"
    [entry] = out["result"]["files"]
    assert entry["errors"][0]["code"] == "io.unreadable"


def test_max_document_bytes_replaces_validates_max_bytes(tmp_path):
    path = str(write(tmp_path, "ok.json", minimal()))
    code, out = envelope("validate", "--max-document-bytes", "10", path)
    assert code == 65
    assert "the limit is 10 bytes" in out["result"]["files"][0]["errors"][0]["message"]


# schema ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["metadata", "shim"])
def test_schema_command_prints_the_shipped_schema(kind):
    code, out = envelope("schema", "--kind", kind)
    assert code == 0
    schema = out["result"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("https://atip.dev/schema/0.6")
    plain = atip("schema", "--kind", kind, "--plain")
    assert plain.stdout == schema_text(kind)  # verbatim: `--plain > file` saves the schema
    assert json.loads(plain.stdout) == schema


def test_atip_loads_no_server_machinery_to_answer_a_command():
    """Every `atip` call imports every command's module: those of the servers (`serve`,
    `mcp serve`) must not bring asyncio, the MCP SDK, starlette or httpx with them."""
    import subprocess
    import sys

    heavy = ("asyncio", "mcp", "starlette", "uvicorn", "httpx", "anyio")
    code = (
        "import sys\n"
        f"baseline = {{m for m in {heavy!r} if m in sys.modules}}\n"
        "import atipkit.cli\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules and m not in baseline))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
