"""The one way atipkit runs a tool to learn about it: `tool --agent`, sandboxed.

SPEC-NOTES 14: an argv list (never a shell), stdin closed, a fresh empty working directory,
a throwaway HOME and XDG directories, a minimal explicit environment, its own session and
process group, killed whole on timeout (default 2 s), and stdout and stderr capped (default
16 MiB together). The session has no controlling terminal, so a tool that opens /dev/tty
fails instead of waiting for a person. Whatever the tool writes into its working directory
or HOME is deleted with them.

The result is the validated metadata or a typed failure; probing never raises for what
the tool does.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from atipkit import _jsontext
from atipkit.errors import DocumentError
from atipkit.model import Tool
from atipkit.problems import Problem
from atipkit.validation import validate

DEFAULT_TIMEOUT = 2.0
STDERR_KEPT = 4096
#: After the tool itself exits, how long its output pipes may stay open (children that
#: inherited them) before the whole group is killed.
EXIT_GRACE = 0.1

FailureKind = Literal[
    "not-executable", "timeout", "exit-code", "too-large", "not-json", "not-atip", "invalid"
]


class ProbeFailure(msgspec.Struct, frozen=True):
    kind: FailureKind
    message: str
    problems: list[Problem] = []


class ProbeResult(msgspec.Struct, frozen=True):
    executable: str
    argv: list[str]
    seconds: float
    tool: Tool | None = None
    failure: ProbeFailure | None = None
    stderr: str = ""  # the last STDERR_KEPT bytes, for diagnostics

    @property
    def ok(self) -> bool:
        return self.tool is not None


def agent_argv(
    executable: str, *, commands: Sequence[str] | None = None, depth: int | None = None
) -> list[str]:
    argv = [executable, "--agent"]
    if commands:
        argv.append("--commands=" + ",".join(commands))
    if depth is not None:
        argv.append(f"--depth={depth}")
    return argv


def probe(
    executable: str | os.PathLike[str],
    *,
    commands: Sequence[str] | None = None,
    depth: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES,
    env: Mapping[str, str] | None = None,
) -> ProbeResult:
    """Run `executable --agent` in the sandbox and validate what it prints.

    A bare name is looked up on PATH; a relative path is made absolute first, since the
    tool runs in a directory of its own."""
    path = _locate(os.fspath(executable))
    argv = agent_argv(path, commands=commands, depth=depth)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="atip-probe-") as sandbox:
        try:
            code, stdout, stderr, stopped = _run(argv, Path(sandbox), timeout, max_bytes, env)
        except OSError as exc:
            failure = ProbeFailure("not-executable", f"cannot run {path}: {exc.strerror or exc}")
            return ProbeResult(path, argv, time.monotonic() - start, failure=failure)
    seconds = time.monotonic() - start
    tail = stderr[-STDERR_KEPT:].decode("utf-8", "replace")

    def failed(kind: FailureKind, message: str, problems: list[Problem] | None = None):
        failure = ProbeFailure(kind, message, problems or [])
        return ProbeResult(path, argv, seconds, failure=failure, stderr=tail)

    if stopped == "timeout":
        return failed("timeout", f"no answer within {timeout:g} s; the process group was killed")
    if stopped == "too-large":
        return failed("too-large", f"output exceeded {max_bytes:,} bytes; stopped")
    if code != 0:
        return failed("exit-code", f"exited with status {code}")
    try:
        data = _jsontext.decode(stdout, path)
    except DocumentError as exc:
        return failed("not-json", f"output is not JSON: {exc.problems[0].format()}", exc.problems)
    if not isinstance(data, dict) or "atip" not in data:
        return failed("not-atip", "output is JSON but not ATIP metadata (no 'atip' field)")
    report = validate(data, source=path)
    if not report.ok or report.tool is None:
        first = report.errors[0].format() if report.errors else "invalid"
        return failed("invalid", f"invalid ATIP metadata: {first}", report.errors)
    return ProbeResult(path, argv, seconds, tool=report.tool, stderr=tail)


def _locate(executable: str) -> str:
    if os.sep in executable:
        return os.path.abspath(executable)
    return shutil.which(executable) or executable


def sandbox_env(sandbox: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment whose home and XDG directories are inside `sandbox`."""
    dirs = {name: sandbox / name for name in ("home", "config", "data", "cache", "state", "tmp")}
    for directory in dirs.values():
        directory.mkdir(mode=0o700)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(dirs["home"]),
        "XDG_CONFIG_HOME": str(dirs["config"]),
        "XDG_DATA_HOME": str(dirs["data"]),
        "XDG_CACHE_HOME": str(dirs["cache"]),
        "XDG_STATE_HOME": str(dirs["state"]),
        "TMPDIR": str(dirs["tmp"]),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    env.update(extra or {})
    return env


def _run(
    argv: list[str],
    sandbox: Path,
    timeout: float,
    max_bytes: int,
    extra_env: Mapping[str, str] | None,
) -> tuple[int | None, bytes, bytes, str | None]:
    """Run and collect output; returns (exit code, stdout, stderr, why it was stopped)."""
    workdir = sandbox / "work"
    workdir.mkdir(mode=0o700)
    env = sandbox_env(sandbox, extra_env)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        env=env,
        start_new_session=True,  # own session and group, no controlling terminal
        close_fds=True,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    deadline = time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    total = 0
    stopped: str | None = None
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        for fd in (out_fd, err_fd):
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if now >= deadline:
                stopped = "timeout"
                break
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                break  # children keep the pipes open; the tool itself has answered
            limit = deadline - now if exited_at is None else EXIT_GRACE
            for key, _ in selector.select(timeout=min(limit, 0.05)):
                try:
                    data = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    selector.unregister(key.fd)
                    continue
                chunks[key.fd].append(data)
                total += len(data)
            if total > max_bytes:
                stopped = "too-large"
                break
    if stopped is None and exited_at is None:
        # the pipes closed; let the tool finish exiting before its group is killed
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stopped = "timeout"
    _kill_group(proc)
    code = proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    stdout, stderr = b"".join(chunks[out_fd]), b"".join(chunks[err_fd])
    return (None if stopped else code), stdout, stderr, stopped


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the whole process group: the tool and every child it left in it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
