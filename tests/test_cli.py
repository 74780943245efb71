"""The `atip` command: exit codes, output channels, --json, --strict, --agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import atipkit
from atipkit import iter_commands
from atipkit.cli import cli
from atipkit.introspect.click import AtipCommand
from tests.helpers import minimal


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def write(tmp_path: Path, name: str, doc: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_agent_output_is_valid_under_our_own_schema(runner):
    result = runner.invoke(cli, ["--agent"])
    assert result.exit_code == 0
    report = atipkit.validate(result.output, source="atip.json")
    assert report.problems == []  # not even a warning: every command states its effects
    tool = report.tool
    assert tool.name == "atip"
    assert tool.version == atipkit.__version__


def test_agent_output_covers_every_command_with_effects(runner):
    tool = atipkit.loads(runner.invoke(cli, ["--agent"]).output)
    described = {" ".join(path): command for path, command in iter_commands(tool)}
    assert {name.split()[0] for name in described} == set(cli.commands)
    leaves = {name: c for name, c in described.items() if not c.commands}
    for name, command in leaves.items():
        top = cli.commands[name.split()[0]]
        clicked = top if not name.count(" ") else top.commands[name.split()[1]]
        assert isinstance(clicked, AtipCommand), name
        effects = command.effects
        assert effects.network is not atipkit.UNSET, name
        assert effects.destructive is not atipkit.UNSET, name
    # `atip run` runs whatever a call names, so it declares the worst; nothing else destroys
    assert [n for n, c in leaves.items() if c.effects.destructive] == ["run"]
    validate = described["validate"]
    assert [o.name for o in validate.options] == ["json", "strict", "max-bytes"]
    assert validate.arguments[0].variadic
    assert validate.arguments[0].type == "file"


def test_valid_document_exit_0(runner, tmp_path):
    result = runner.invoke(cli, ["validate", str(write(tmp_path, "ok.json", minimal()))])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert result.stderr.strip() == "1 file valid"


def test_invalid_document_exit_1_one_line_per_problem(runner, tmp_path):
    doc = minimal()
    doc["commands"]["run"]["options"].append(
        {"name": "bad", "flags": ["bad"], "type": "str", "description": "x"}
    )
    path = write(tmp_path, "gh.json", doc)
    result = runner.invoke(cli, ["validate", str(path)])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{path}: $.commands.run.options[1].flags: expected a list of strings starting with '-'",
        f'{path}: $.commands.run.options[1].type: expected one of "string", "integer", '
        '"number", "boolean", "file", "directory", "url", "enum", "array", '
        'got "str"',
    ]


def test_warnings_fail_only_with_strict(runner, tmp_path):
    doc = minimal(description="x" * 201)
    path = write(tmp_path, "long.json", doc)
    relaxed = runner.invoke(cli, ["validate", str(path)])
    assert relaxed.exit_code == 0
    assert "warning: description is 201 characters" in relaxed.stdout
    assert runner.invoke(cli, ["validate", "--strict", str(path)]).exit_code == 1


def test_json_report(runner, tmp_path):
    good = write(tmp_path, "good.json", minimal())
    bad = write(tmp_path, "bad.json", minimal(version=3))
    result = runner.invoke(cli, ["validate", "--json", str(good), str(bad)])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
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


def test_stdin_and_directories(runner, tmp_path):
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "a.json", minimal())
    write(tmp_path, "b.json", minimal(name="has space"))
    (tmp_path / "notes.txt").write_text("not json, not picked up")
    result = runner.invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{tmp_path / 'b.json'}: $.name: expected the executable")
    piped = runner.invoke(cli, ["validate", "-"], input=json.dumps(minimal()))
    assert piped.exit_code == 0


def test_usage_errors_exit_2(runner):
    assert runner.invoke(cli, ["validate"]).exit_code == 2
    assert runner.invoke(cli, ["validate", "--max-bytes", "0", "-"]).exit_code == 2
    assert runner.invoke(cli, ["nonsense"]).exit_code == 2


@pytest.mark.parametrize("kind", ["metadata", "shim"])
def test_schema_command_prints_the_shipped_schema(runner, kind):
    result = runner.invoke(cli, ["schema", "--kind", kind])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("https://atip.dev/schema/0.6")


def test_version(runner):
    assert runner.invoke(cli, ["--version"]).stdout.strip().endswith(atipkit.__version__)
