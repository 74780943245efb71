"""`atip gen`'s own time, and each run of a tool bounded by its CPU seconds (issue 20,
decisions 616-622): the sandbox starts while gen imports, groff renders the page while
the tool is asked, the index of pages is kept in order; a run that waits for a busy
machine's CPU is not cut, one that spins or sleeps still is. Real programs, the real
sandbox.
"""

from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path

import pytest

from atipkit import sandbox
from atipkit.infer import generate
from atipkit.infer.generate import generate_shim
from atipkit.infer.manpage import ManPages
from atipkit.probe import run_sandboxed
from atipkit.sandbox import session
from tests.helpers import BUSY
from tests.test_infer_budget import _left_behind
from tests.test_scan_infer import isolate, man_page


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolate(tmp_path, monkeypatch)


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


# -- atip gen's own time -------------------------------------------------------------------------


def test_a_sandbox_prepared_early_is_the_one_the_run_uses():
    true = shutil.which("true")
    assert true is not None
    session._sessions.close_all()
    sandbox.prepare([true]).join(timeout=60)
    started = list(session._sessions.sessions.values())
    assert len(started) == 1
    assert started[0].alive
    assert run_sandboxed(true, [], timeout=30).exit_code == 0
    assert list(session._sessions.sessions.values()) == started  # none started again


def test_the_page_is_rendered_while_the_tool_is_asked(tmp_path, env, monkeypatch):
    """The tool's `--help` waits up to 1.5 s for the page's rendering to begin: read one
    after the other, it would answer before the page was asked for."""
    marker = tmp_path / "rendering"
    tool = script(
        tmp_path / "bin" / "frob",
        f'if [ "$1" = --help ]; then i=0\n'
        f"  while [ ! -e {marker} ] && [ $i -lt 30 ]; do sleep 0.05; i=$((i+1)); done\n"
        f"  [ -e {marker} ] && echo 'Usage: frob [--together]' || echo 'Usage: frob [--alone]'\n"
        "fi\n",
    )
    man_page(tmp_path, "frob")
    read = generate.read_man_file

    def rendering(*args, **kwargs):
        marker.touch()
        return read(*args, **kwargs)

    monkeypatch.setattr(generate, "read_man_file", rendering)
    shim = generate_shim(str(tool))
    names = {o.name for o in shim.commands[""].options}
    assert "together" in names
    assert "alone" not in names
    assert "man" in shim.extensions["_generation"]["sources"]  # the page was read too


def test_the_index_of_pages_is_kept_by_name_in_order(tmp_path, env):
    for name in ("zeta", "alpha", "mid", "beta"):
        man_page(tmp_path, name)
    cache = tmp_path / "cache" / "agent-tools" / "manpages.json"
    assert ManPages.load().find("mid") is not None
    data = json.loads(cache.read_text())
    assert data["version"] == 2
    assert list(data["pages"]) == sorted(data["pages"])
    data["version"] = 1  # an index of the form before: listed again, rewritten in order
    data["pages"] = dict(reversed(list(data["pages"].items())))
    cache.write_text(json.dumps(data))
    assert ManPages.load().prefixed("") == {
        n: tmp_path / "man" / "man1" / f"{n}.1" for n in ("alpha", "beta", "mid", "zeta")
    }
    assert list(json.loads(cache.read_text())["pages"]) == ["alpha", "beta", "mid", "zeta"]


# -- each run bounded by its CPU seconds, the wall clock a ceiling ------------------------------


def test_a_run_that_spins_is_stopped_by_its_cpu_seconds_long_before_its_ceiling(tmp_path):
    spin = script(tmp_path / "spin", "while :; do :; done\n")
    captured = run_sandboxed(spin, [], timeout=120, cpu=1)
    assert captured.stopped == "timeout"
    assert captured.exit_code is None
    assert captured.seconds < 60  # a second of CPU, however busy the machine


def test_what_a_run_starts_inherits_the_limit(tmp_path):
    """A child that spins is stopped by its own CPU seconds; the program goes on."""
    spin = script(tmp_path / "spin", "(while :; do :; done) &\nwait\necho parent went on\n")
    captured = run_sandboxed(spin, [], timeout=120, cpu=1)
    assert captured.seconds < 60
    assert captured.stdout == b"parent went on\n"
    assert captured.stopped is None  # the program itself was not stopped


def test_a_run_that_sleeps_is_stopped_by_the_wall_clock_and_leaves_nothing(tmp_path):
    sleeper = script(tmp_path / "sleeper", "sleep 6001.25 &\nsleep 6001.25\n")
    start = time.monotonic()
    captured = run_sandboxed(sleeper, [], timeout=1, cpu=2)
    assert time.monotonic() - start < 1 + BUSY
    assert captured.stopped == "timeout"
    assert _left_behind() == []


def test_a_run_slower_than_the_old_two_seconds_is_read_whole(tmp_path, env):
    """What a busy machine does to a program that needs little CPU for its help: it
    answers after 2 s of wall clock, where the old per-run timeout had cut it."""
    slow = script(
        tmp_path / "bin" / "slow",
        "sleep 2.5\necho 'Usage: slow [--frob]'\necho\necho '  --frob   frobnicate'\n",
    )
    shim = generate_shim(str(slow), man=False)
    assert [o.name for o in shim.commands[""].options] == ["frob"]


def test_a_cpu_limit_the_host_gave_badly_is_no_limit():
    from atipkit.sandbox import _helper

    for given in (None, "2", True, 0, -1, float("nan"), float("inf"), 10**9):
        assert _helper._cpu_seconds(given) is None
    assert _helper._cpu_seconds(0.2) == 1  # whole seconds, at least one
    assert _helper._cpu_seconds(2) == 2
    assert _helper._spun(None, 5.0, 2) is False  # still running: killed by the host
    assert _helper._spun(signal.SIGXCPU, 2.0, 2) is True  # wait status of SIGXCPU
    assert _helper._spun(signal.SIGKILL, 0.1, 2) is False  # killed, not for its CPU
