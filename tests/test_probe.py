"""The sandboxed probe against hostile executables, each written by the test."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from atipkit.probe import probe
from tests.helpers import BUSY, EXAMPLES, minimal
from tests.sandboxing import marker, running

GOOD = json.dumps(minimal())


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


HOSTILE = {
    "hangs": ("#!/bin/sh\nsleep 60\n", "timeout"),
    "ignores-sigterm": ("#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n", "timeout"),
    "infinite-output": ('#!/bin/sh\nexec yes \'{"atip": "0.6"}\'\n', "too-large"),
    "huge-json": (
        '#!/usr/bin/env python3\nimport sys\nsys.stdout.write(\'{"atip": "0.6", "x-pad": "\')\n'
        "block = 'a' * (1 << 20)\nfor _ in range(200):\n    sys.stdout.write(block)\n"
        "sys.stdout.write('\"}')\n",
        "too-large",
    ),
    "deep-json": (
        "#!/usr/bin/env python3\nprint('{\"atip\": \"0.6\", \"x\": ' + '[' * 100000 + ']' * 100000"
        " + '}')\n",
        "not-json",
    ),
    "reads-stdin": ("#!/bin/sh\ncat\n", "not-json"),
    "opens-tty": ("#!/bin/sh\necho hello > /dev/tty && echo '{}'\n", "exit-code"),
    "not-utf8": ('#!/bin/sh\nprintf \'{"atip": "0.6", "name": "\\377"}\'\n', "not-json"),
    "json-without-atip": ('#!/bin/sh\necho \'{"name": "x"}\'\n', "not-atip"),
    "fails": ("#!/bin/sh\necho broken >&2\nexit 3\n", "exit-code"),
    "invalid-atip": ('#!/bin/sh\necho \'{"atip": "0.6", "name": "x"}\'\n', "invalid"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_executables_fail_cleanly_and_quickly(tmp_path, name):
    body, kind = HOSTILE[name]
    # the clock refuses only what hangs; the rest get room, so that their reason (a size,
    # the JSON) is what is checked, not a race with 1 s on a busy machine (decision 710)
    timeout = 1.0 if kind == "timeout" else 30.0
    start = time.monotonic()
    result = probe(script(tmp_path, name, body), timeout=timeout)
    assert time.monotonic() - start < timeout + BUSY  # unbounded, a minute or more
    assert result.tool is None
    assert result.failure.kind == kind, result.failure


def test_exit_code_and_stderr_are_reported(tmp_path):
    result = probe(script(tmp_path, "fails", HOSTILE["fails"][0]))
    assert result.failure.message == "exited with status 3"
    assert result.stderr == "broken\n"


def test_invalid_metadata_keeps_its_problems(tmp_path):
    result = probe(script(tmp_path, "bad", HOSTILE["invalid-atip"][0]))
    assert result.failure.kind == "invalid"
    assert {p.location for p in result.failure.problems} == {"$"}
    assert "missing required field" in result.failure.message


def test_not_executable(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\necho\n")
    assert probe(plain).failure.kind == "not-executable"
    assert probe(tmp_path / "missing").failure.kind == "not-executable"


def test_children_holding_the_pipes_are_killed_and_the_answer_kept(tmp_path):
    mark = marker()
    tool = script(
        tmp_path,
        "forks",
        f"#!/bin/sh\nsh -c 'while :; do sleep 1; done' {mark} &\necho '{GOOD}'\n",
    )
    start = time.monotonic()
    result = probe(tool, timeout=60.0)
    assert time.monotonic() - start < BUSY  # did not wait for the child (to the timeout)
    assert result.ok, result.failure
    assert running(mark) == []


def test_a_hung_group_leaves_no_process(tmp_path):
    mark = marker()
    tool = script(
        tmp_path,
        "hang-tree",
        (
            "#!/bin/sh\ntrap '' TERM\n"
            f"sh -c 'trap \"\" TERM; sleep 300' {mark}-a &\n"
            f"sh -c 'sleep 300' {mark}-b &\n"
            "wait\n"
        ),
    )
    result = probe(tool, timeout=0.5)
    assert result.failure.kind == "timeout"
    assert running(mark) == []


def test_writes_stay_in_the_sandbox(tmp_path, monkeypatch):
    home = tmp_path / "real-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    tool = script(
        tmp_path,
        "writer",
        (
            "#!/bin/sh\n"
            'touch in-cwd "$HOME/in-home" "$XDG_CONFIG_HOME/in-config"\n'
            f"echo '{json.dumps({**minimal(), 'x-where': '__CWD__'})}' | sed \"s#__CWD__#$PWD#\"\n"
        ),
    )
    before = sorted(p.name for p in tmp_path.iterdir())
    result = probe(tool)
    assert result.ok, result.failure
    workdir = Path(result.tool.extensions["x-where"])
    assert workdir != tmp_path
    assert not workdir.exists()  # the sandbox is gone, with what was written into it
    assert list(home.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_environment_is_minimal(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    tool = script(
        tmp_path,
        "env",
        (
            "#!/usr/bin/env python3\nimport json, os\n"
            f"doc = {minimal()!r}\ndoc['x-env'] = dict(os.environ)\nprint(json.dumps(doc))\n"
        ),
    )
    result = probe(tool)
    env = result.tool.extensions["x-env"]
    assert "SECRET_TOKEN" not in env
    assert env["HOME"] != os.environ["HOME"]
    assert set(env) <= {
        "PATH",
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "TERM",
        "NO_COLOR",
        "PWD",
        "SHLVL",
        "_",
        "LC_CTYPE",
    }


@pytest.mark.parametrize("name", ["legacy-tool", "deploy", "cloudctl"])
def test_examples_probe_clean(name):
    result = probe(EXAMPLES / "bin" / name)
    assert result.ok, result.failure
    assert result.tool.name == name


def test_partial_discovery_flags_reach_the_tool():
    result = probe(EXAMPLES / "bin" / "cloudctl", commands=["dns"], depth=1)
    assert result.argv[1:] == ["--agent", "--commands=dns", "--depth=1"]
    tool = result.tool
    assert list(tool.commands) == ["dns"]
    assert (tool.partial, tool.total_commands, tool.included_commands) == (True, 24, 1)
