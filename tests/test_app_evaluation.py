"""atipkit.app's evaluation harness (PRD §16, Phase 3 item 4): calls recorded by real
processes of tests/apps/safe_app.py, analysed, and played back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from atipkit.app.evaluation import analyze, replay

SAFE = Path(__file__).parent / "apps" / "safe_app.py"
ROOT = Path(__file__).parent.parent


@pytest.fixture
def session(tmp_path, monkeypatch) -> Path:
    """A recorded session: seven calls by an agent that gets some parameters wrong."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("SAFE_RECORD", raising=False)
    path = tmp_path / "session.jsonl"
    victim = tmp_path / "victim"
    victim.write_text("x")
    env = {
        **os.environ,
        "SAFE_RECORD": str(path),
        "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]),
    }
    calls = [
        ["repos", "--fields", "nmae"],
        ["repos", "--fields", "name"],
        ["repos", "--filter", "stars"],
        ["events", "--colour"],
        ["word", "--n", "two"],
        ["wipe", str(victim), "--yes"],
        ["login", "ann", "--token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
    ]
    for argv in calls:
        subprocess.run(
            [sys.executable, str(SAFE), *argv, "--json"],
            env=env,
            capture_output=True,
            start_new_session=True,
            timeout=60,
        )
    return path


def test_each_call_is_recorded_with_its_outcome_and_no_secret(session):
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    assert [e["tool"] for e in entries] == [
        "safe.repos",
        "safe.repos",
        "safe.repos",
        "safe.events",
        "safe.word",
        "safe.wipe",
        "safe.login",
    ]
    assert [e["exit_code"] for e in entries] == [2, 0, 2, 2, 2, 0, 2]
    assert entries[0]["param"] == "fields"
    assert entries[0]["code"] == "E1002"
    assert entries[3]["param"] == "--colour"
    assert entries[4]["param"] == "n"
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in session.read_text()
    assert entries[6]["argv"][-2] == "--token=[REDACTED:github-token]"
    assert all(e["version"] == "3.0.0" and e["duration_ms"] > 0 for e in entries)


def test_analysis_gives_invalid_parameter_rates_and_the_parameters_at_fault(session):
    report = analyze(session)
    assert report["calls"] == 7
    assert report["invalid"] == 5
    assert report["invalid_rate"] == round(5 / 7, 4)
    assert report["error_codes"] == {"E1002": 3, "E1001": 2}  # most frequent first
    repos = report["commands"]["safe.repos"]
    assert repos == {
        "calls": 3,
        "failed": 2,
        "invalid": 2,
        "invalid_rate": 0.6667,
        "invalid_params": {"fields": 1, "filter": 1},
    }
    assert report["commands"]["safe.wipe"]["invalid_rate"] == 0.0


def test_replay_runs_read_only_calls_again_and_skips_the_rest_unless_told(session, tmp_path):
    from tests.apps.safe_app import app

    results = replay(app, session)
    assert [r.now for r in results] == [2, 0, 2, 2, 2, None, None]
    assert all(r.same for r in results)
    assert results[5].skipped == "not read-only (unsafe=True runs it)"
    assert not (tmp_path / "victim").exists()  # deleted by the recorded call
    (tmp_path / "victim").write_text("back")
    unsafe = replay(app, session, unsafe=True)
    assert unsafe[5].now == 0
    assert not (tmp_path / "victim").exists()


def test_replay_reports_a_call_whose_outcome_changed(tmp_path):
    from tests.apps.safe_app import app

    recorded = tmp_path / "old.jsonl"
    line = {"app": "safe", "tool": "safe.repos", "argv": ["repos", "--fields", "name"]}
    recorded.write_text(json.dumps({**line, "exit_code": 2}) + "\nnot json\n")
    (changed,) = replay(app, recorded)
    assert changed.recorded == 2
    assert changed.now == 0
    assert not changed.same


def test_the_module_runs_as_a_command(session):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "atipkit.app.evaluation", "analyze", str(session)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout)["invalid"] == 5
    usage = subprocess.run(
        [sys.executable, "-m", "atipkit.app.evaluation", "bogus"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert usage.returncode == 2
    assert "analyze FILE" in usage.stderr
