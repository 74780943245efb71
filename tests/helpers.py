"""Shared test helpers: fixture locations and a minimal valid document to mutate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = Path(__file__).parent.parent / "examples"
SIGSTORE = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "sigstore"
"""Real Sigstore bundles (../shared/fixtures): beside the repository in the workplace,
absent from a clone elsewhere, where the tests that read them are skipped."""
BUSY = 10.0
"""Wall-clock seconds a shared machine may add to a step: two cores under the suite's
workers and others' load (decision 710). A wall-clock bound adds it only where what the
bound catches costs far more (a drip of minutes, a hang); a bound on the figure itself is
a lower bound, or CPU seconds, which contention does not add to."""
STARTUP = 60.0
"""How long a server the tests start may take to listen or answer its first request: what
a test checks is what it answers, not how soon a busy machine started it. 15 s did not
do under the suite's workers and others' load (decision 710)."""
needs_sigstore = pytest.mark.skipif(
    not SIGSTORE.is_dir(), reason="shared/fixtures/sigstore is not beside the repo"
)


def fixture_paths(folder: str) -> list[Path]:
    return sorted((FIXTURES / folder).glob("*.json"))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def minimal(**extra: Any) -> dict[str, Any]:
    """A valid 0.6 document with one fully described command, to mutate in tests."""
    doc: dict[str, Any] = {
        "atip": {"version": "0.6"},
        "name": "t",
        "version": "1.0",
        "description": "A test tool",
        "commands": {
            "run": {
                "description": "Run it",
                "options": [
                    {
                        "name": "verbose",
                        "flags": ["-v", "--verbose"],
                        "type": "boolean",
                        "description": "Say more",
                    },
                ],
                "effects": {"network": False, "filesystem": {"write": False}},
            }
        },
    }
    doc.update(extra)
    return doc


def minisign_keys(tmp_path: Path) -> tuple[Path, Path]:
    import minisign

    pair = minisign.KeyPair.generate()
    secret, public = tmp_path / "test.key", tmp_path / "test.pub"
    secret.write_text(f"untrusted comment: test key\n{pair.secret_key.to_base64().decode()}\n")
    public.write_text(f"untrusted comment: test key\n{pair.public_key.to_base64().decode()}\n")
    return secret, public


def ssh_key(tmp_path: Path, name: str) -> tuple[Path, str]:
    key = tmp_path / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key, Path(f"{key}.pub").read_text().strip()


def atip(*args: str, input: str | bytes | None = None) -> Any:
    """`atip ARGS` in-process, through Click's runner: its stdout is not a terminal, so
    the answer is the JSON envelope unless ARGS ask for text."""
    from click.testing import CliRunner

    from atipkit.cli import cli

    return CliRunner().invoke(cli, list(args), input=input)


def envelope_of(result: Any) -> dict[str, Any]:
    """The envelope a run printed: one JSON line, and nothing else, on stdout."""
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.output
    envelope: dict[str, Any] = json.loads(lines[0])
    return envelope


#: The settings and token of the machine's that no test may see (or leak).
ATIP_VARIABLES = (
    "ATIP_REGISTRIES",
    "ATIP_OFFLINE",
    "ATIP_REFRESH",
    "ATIP_GITHUB_API",
    "ATIP_PYPI_INDEX",
    "ATIP_NPM_REGISTRY",
    "ATIP_APT_SOURCES",
    "GITHUB_TOKEN",
)


def machine_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of an `atip` process on a machine of the test's own: its home,
    registry, configuration and cache under `tmp_path`, none of the machine's ATIP_*
    settings or token (`ATIP_VARIABLES`), and this interpreter's import path (the tests'
    atipkit)."""
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "ATIP_CACHE_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    for name in (*ATIP_VARIABLES, "XDG_CACHE_HOME"):
        env.pop(name, None)
    return {**env, **extra}


def app_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of an `atipkit.app` tool's process (a server of tests/apps): its
    home, state and configuration under `tmp_path`, and this interpreter's import path."""
    return {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": os.pathsep.join(sys.path),
        **extra,
    }


#: `atip` as a process of this interpreter.
ATIP = [sys.executable, "-m", "atipkit.cli"]


def atip_run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`atip ARGS` as a process in `env` (`machine_env`'s): time enough to load the
    re-ranker's model."""
    return subprocess.run([*ATIP, *args], env=env, capture_output=True, text=True, timeout=300)


def atip_answer(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    """`atip ARGS` as a process: its exit status, the one JSON line it printed, and its
    stderr."""
    done = atip_run(env, *args)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, (done.stdout, done.stderr)
    return done.returncode, json.loads(lines[0]), done.stderr


@dataclass
class Measured:
    """An `atip` process that has ended: what it printed, how long it took, and the most
    memory it held (the peak resident set of it or of a child it waited for, whichever
    is larger: `wait4`'s rusage)."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float

    def envelope(self) -> dict[str, Any]:
        lines = self.stdout.splitlines()
        assert len(lines) == 1, (self.stdout, self.stderr)
        envelope: dict[str, Any] = json.loads(lines[0])
        return envelope


_MEASURE = """
import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def atip_measured(env: dict[str, str], *args: str, timeout: float = 120) -> Measured:
    """`atip ARGS` as a process, with its peak memory (its rusage from `wait4`), killed
    past `timeout`. A small Python process starts it and reads its rusage: Linux counts
    into a child's peak the memory of the process it was forked from (at exec), which
    here would be this test process's."""
    import signal
    import tempfile
    import time

    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as report,
    ):
        started = time.monotonic()
        wrapper = subprocess.Popen(
            [sys.executable, "-c", _MEASURE, report.name, *ATIP, *args],
            env=env,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        try:
            wrapper.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(wrapper.pid, signal.SIGKILL)
            wrapper.wait()
            raise
        seconds = time.monotonic() - started
        returncode, peak_kib = (int(v) for v in report.read().split())
        out.seek(0)
        err.seek(0)
        return Measured(
            returncode, out.read().decode(), err.read().decode(), seconds, peak_kib / 1024
        )


def directories_listed(monkeypatch: pytest.MonkeyPatch, function: str) -> list[str]:
    """The paths `os.<function>` (`listdir`, `scandir`) is called with from here on: how a
    test sees whether a cache spared a directory listing."""
    listed: list[str] = []
    real = getattr(os, function)

    def counting(path: Any) -> Any:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(os, function, counting)
    return listed
