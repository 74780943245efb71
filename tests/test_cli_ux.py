"""The `atip` command as people type it: shell completion, a mistyped command.

Real processes: completion runs in real bash with the script `atip completion bash`
prints, calling an `atip` found on PATH as a shell would."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import atip_run, machine_env


def _atip_on_path(tmp_path: Path) -> dict[str, str]:
    """A machine whose PATH starts with an `atip` that runs this interpreter's atipkit."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    atip = bin_dir / "atip"
    atip.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m atipkit "$@"\n')
    atip.chmod(0o755)
    env = machine_env(tmp_path)
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    return env


COMPLETE = """
eval "$(atip completion bash --plain)"
complete_line() {  # what bash does on Tab: the words so far, the one being completed
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _atip_completion atip
    printf '%s\\n' "${COMPREPLY[@]}"; echo --
}
complete_line atip sc
complete_line atip registry f
complete_line atip gen --bud
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_and_options_with_the_printed_script(tmp_path):
    env = _atip_on_path(tmp_path)
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", COMPLETE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    top, nested, option, _ = done.stdout.split("--\n")
    assert top.split() == ["scan", "schema"]
    assert nested.split() == ["fetch"]
    assert option.split() == ["--budget"]


def test_completion_prints_each_shells_script(tmp_path):
    env = machine_env(tmp_path)
    zsh = atip_run(env, "completion", "zsh", "--plain")
    assert zsh.returncode == 0
    assert "compdef _atip_completion atip" in zsh.stdout
    fish = atip_run(env, "completion", "fish", "--plain")
    assert "complete --no-files --command atip" in fish.stdout
    assert "_ATIP_COMPLETE=fish_complete" in fish.stdout
    wrapped = json.loads(atip_run(env, "completion", "bash", "--json").stdout)
    assert "_ATIP_COMPLETE=bash_complete" in wrapped["result"]
    bad = atip_run(env, "completion", "tcsh", "--json")
    assert bad.returncode == 2
    install = atip_run(env, "completion", "--help").stdout
    assert 'eval "$(atip completion bash --plain)"' in install


@pytest.mark.parametrize(
    ("words", "meant", "tool"),
    [
        (["scna"], ["scan", "schema"], "atip"),
        (["registry", "fecth"], ["fetch"], "atip.registry"),
        (["mcp", "serv"], ["serve"], "atip.mcp"),
    ],
)
def test_a_mistyped_command_says_which_it_may_have_meant(tmp_path, words, meant, tool):
    env = machine_env(tmp_path)
    done = atip_run(env, *words, "--json")
    assert done.returncode == 2
    out = json.loads(done.stdout)
    error = out["error"]
    assert error["code"] == "E1001"
    assert error["details"]["command"] == words[-1]
    assert error["details"]["did_you_mean"] == meant
    where = " ".join(["atip", *words[:-1]])
    alternatives = " or ".join(f"{where} {m}" for m in meant)
    assert error["suggestion"]["fix"] == f"Did you mean {alternatives}?"
    assert out["meta"]["tool"] == tool
    text = atip_run(env, *words, "--text")
    assert text.returncode == 2
    assert f"fix: Did you mean {where} {meant[0]}" in text.stderr


def test_a_command_nothing_comes_near_points_at_help(tmp_path):
    done = atip_run(machine_env(tmp_path), "zzzzqq", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert "did_you_mean" not in error["details"]
    assert error["suggestion"]["fix"] == "Run 'atip --help' to see the commands."
