"""The guards around a call: the policy validator before it, the result filter after it,
and `atip compile` on the command line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import atipkit
from atipkit.bridge import ResultFilter, Validator, compile_tools, parse_tool_calls
from atipkit.cli import cli
from atipkit.partial import select
from atipkit.policy import Policy
from tests.helpers import EXAMPLES, FIXTURES, minimal

GH = atipkit.load(FIXTURES / "rfc" / "rfc06-14.1-gh.json")
TERRAFORM = atipkit.load(EXAMPLES / "tools" / "terraform.json")


def codes(problems):
    return [(p.code, p.severity.value) for p in problems]


def test_destructive_needs_confirmation_unless_allowed():
    assert codes(Validator(GH).check_command("gh", ("repo", "delete"))) == [
        ("policy.destructive", "warning")
    ]
    allowed = Validator(GH, Policy(allow_destructive=True))
    assert allowed.check_command("gh", ("repo", "delete")) == []


def test_billable_cost_network_and_files():
    strict = Validator(
        TERRAFORM, Policy(allow_network=False, allow_filesystem_write=False, max_cost="low")
    )
    assert codes(strict.check_command("terraform", ("apply",))) == [
        ("policy.billable", "warning"),
        ("policy.network", "error"),
    ]
    assert ("policy.filesystem-write", "error") in codes(
        strict.check_command("terraform", ("init",))
    )
    tool = atipkit.from_dict(
        minimal(
            commands={
                "x": {
                    "description": "d",
                    "effects": {"cost": {"estimate": "high"}, "filesystem": {"delete": True}},
                }
            }
        )
    )
    guarded = Validator(tool, Policy(max_cost="medium", allow_filesystem_delete=False))
    assert codes(guarded.check_command("t", ("x",))) == [
        ("policy.cost", "error"),
        ("policy.filesystem-delete", "error"),
    ]


def test_trust_threshold_uses_the_metadata_source():
    inferred = atipkit.from_dict(minimal(trust={"source": "inferred"}))
    validator = Validator([GH, inferred], Policy(minimum_trust="low"))
    assert codes(validator.check_command("t", ("run",))) == [("policy.trust", "error")]
    assert validator.check_command("gh", ("pr", "list")) == []  # native: high


def test_unknown_and_omitted_commands():
    validator = Validator(GH)
    assert codes(validator.check_command("gh", ("pr", "close"))) == [
        ("policy.unknown-command", "error")
    ]
    assert codes(validator.check_command("kubectl", ("get",))) == [
        ("policy.unknown-command", "error")
    ]
    partial = select(GH, commands=["pr"])
    assert codes(Validator(partial).check_command("gh", ("repo", "delete"))) == [
        ("policy.omitted-command", "warning")
    ]


def test_validator_checks_parsed_calls():
    compiled = compile_tools(GH, "anthropic")
    data = {
        "content": [
            {"type": "tool_use", "id": "1", "name": "gh_repo_delete", "input": {"repo": "a/b"}},
            {"type": "tool_use", "id": "2", "name": "gh_bogus", "input": {}},
        ]
    }
    first, second = parse_tool_calls("anthropic", data, compiled)
    validator = Validator(GH)
    assert codes(validator.check(first)) == [("policy.destructive", "warning")]
    [problem] = validator.check(second)
    assert problem.code == "policy.unknown-command"
    assert "unknown tool 'gh_bogus'" in problem.message


# -- result filter ------------------------------------------------------------------------

SECRETS = {
    "github-token": "ghp_" + "a1B2" * 9,
    "gitlab-token": "glpat-" + "x" * 20,
    "slack-token": "xoxb-123456789012-abcdefghij",
    "openai-key": "sk-proj-" + "Q" * 40,
    "anthropic-key": "sk-ant-api03-" + "z" * 40,
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "gcp-api-key": "AIza" + "S" * 35,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", SECRETS)
def test_secrets_are_redacted(kind):
    text = f"token: {SECRETS[kind]} end"
    out = ResultFilter().apply(text)
    assert SECRETS[kind] not in out.text
    assert f"[REDACTED:{kind}]" in out.text
    assert out.redactions == 1


def test_private_keys_aws_secrets_and_url_credentials():
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"
    text = (
        f"{key}\naws_secret_access_key = {'w' * 40}\n"
        "remote: https://alice:s3cret@git.example.com/repo.git"
    )
    out = ResultFilter()(text)
    assert "b3BlbnNzaC1rZXk" not in out
    assert "[REDACTED:private-key]" in out
    assert "aws_secret_access_key = [REDACTED:aws-secret-key]" in out
    assert "https://alice:[REDACTED:password]@git.example.com/repo.git" in out


def test_terminal_escapes_and_progress_lines():
    text = "\x1b[1;31mred\x1b[0m \x1b]0;title\x07ok\x00\n10%\r50%\r100%\nbell\x07 done"
    assert ResultFilter()(text) == "red ok\n100%\nbell done"


def test_truncation_keeps_head_and_tail_and_says_how_much():
    text = "HEAD" + "x" * 10_000 + "TAIL"
    out = ResultFilter(max_chars=1000).apply(text)
    assert out.truncated == len(text) - 1000
    assert out.text.startswith("HEAD")
    assert out.text.endswith("TAIL")
    assert f"truncated: {len(text) - 1000:,} of {len(text):,} characters omitted" in out.text
    assert ResultFilter(max_chars=None)(text) == text


# -- atip compile -------------------------------------------------------------------------


def compile_cli(*args: str) -> tuple[int, dict]:
    """Exit status and envelope of `atip compile ARGS` (JSON: the runner is no terminal)."""
    result = CliRunner().invoke(cli, ["compile", *args])
    assert len(result.stdout.splitlines()) == 1, result.stdout
    return result.exit_code, json.loads(result.stdout)


def test_compile_cli():
    path = str(EXAMPLES / "tools" / "gh.json")
    code, out = compile_cli(path, "--provider", "anthropic", "--table")
    assert code == 0
    result = out["result"]
    assert result["table"]["gh_pr_create"] == "pr create"
    assert {t["name"] for t in result["tools"]} == set(result["table"])
    _, gemini = compile_cli(path, "--provider", "gemini", "--commands", "repo")
    assert [d["name"] for d in gemini["result"][0]["function_declarations"]] == ["gh_repo_clone"]
    _, grouped = compile_cli(path, "--strategy", "action", "--depth", "2")
    assert "gh_pr" in [t["function"]["name"] for t in grouped["result"]]


def test_compile_output_for_files_is_the_definitions_verbatim():
    path = str(EXAMPLES / "tools" / "gh.json")
    expected = compile_tools([atipkit.load(path)], "openai").payload()
    for flag in ("--plain", "--text"):
        result = CliRunner().invoke(cli, ["compile", path, flag])
        assert result.exit_code == 0
        assert result.stdout == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    _, out = compile_cli(path)
    assert out["result"] == expected


def test_compile_reads_stdin():
    doc = json.dumps(minimal())
    result = CliRunner().invoke(cli, ["compile", "-", "--provider", "mcp"], input=doc)
    assert result.exit_code == 0
    assert [t["name"] for t in json.loads(result.stdout)["result"]] == ["t_run"]


def test_compile_cli_errors_and_warnings(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"atip": "0.6"}')
    code, out = compile_cli(str(bad))
    assert (code, out["error"]["code"]) == (65, "E1003")
    assert "missing required field 'name'" in out["error"]["message"]
    assert out["error"]["message"].endswith("(and 2 more problems)")
    assert [p["code"] for p in out["error"]["details"]["problems"]] == ["schema.required"] * 3
    text = CliRunner().invoke(cli, ["compile", str(bad), "--text"])
    assert text.exit_code == 65
    assert text.stdout == ""
    assert "missing required field 'name'" in text.stderr
    code, out = compile_cli(str(tmp_path / "none.json"))  # neither a file nor a tool
    assert (code, out["error"]["code"]) == (10, "E3001")
    code, out = compile_cli(str(tmp_path))  # a directory is no document
    assert (code, out["error"]["code"]) == (2, "E1001")
    assert out["error"]["message"] == f"{tmp_path}: cannot read: Is a directory"
    code, out = compile_cli(str(EXAMPLES / "tools" / "gh.json"), "--commands", "nope")
    assert (code, out["error"]["details"]["param"]) == (2, "commands")
    many = tmp_path / "many.json"
    many.write_text(
        json.dumps(minimal(commands={f"c{i}": {"description": "d"} for i in range(129)}))
    )
    code, out = compile_cli(str(many))
    assert code == 0
    assert len(out["result"]) == 129
    [warning] = out["meta"]["warnings"]
    assert "129 tools; OpenAI accepts at most 128" in warning
    result = CliRunner().invoke(cli, ["compile", str(many), "--text"])
    assert result.exit_code == 0
    assert "warning: more than" not in result.stdout
    assert "warning: 129 tools; OpenAI accepts at most 128" in result.stderr
