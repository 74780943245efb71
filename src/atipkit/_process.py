"""Running a child process under control: the one loop behind the probe and the runner.

The child gets its own session and process group (no controlling terminal) and is never
run through a shell. Its stdout and stderr are read together against a deadline and a
size cap, stdin is fed from memory (or closed), and when anything ends — the answer, the
deadline, the cap — the whole group is killed with SIGKILL, so no child it forked is left.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

#: After the child itself exits, how long its output pipes may stay open (grandchildren
#: that inherited them) before the whole group is killed.
EXIT_GRACE = 0.1

Stopped = Literal["timeout", "too-large"]


class Captured(msgspec.Struct, frozen=True):
    exit_code: int | None  # None when stopped
    stdout: bytes
    stderr: bytes
    stopped: Stopped | None
    seconds: float


def run_captured(
    argv: list[str],
    *,
    cwd: str | Path | None,
    env: Mapping[str, str],
    timeout: float,
    max_bytes: int,
    stdin: bytes | None = None,
) -> Captured:
    """Run `argv`; raises `OSError` only when it cannot be started at all."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        close_fds=True,
    )
    try:
        stopped, code, stdout, stderr = _collect(proc, stdin, start + timeout, max_bytes)
    except BaseException:  # a signal (a caller's deadline), Ctrl-C: no child left behind
        kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
    return Captured(
        exit_code=None if stopped else code,
        stdout=stdout,
        stderr=stderr,
        stopped=stopped,
        seconds=time.monotonic() - start,
    )


def _collect(
    proc: subprocess.Popen[bytes], stdin: bytes | None, deadline: float, max_bytes: int
) -> tuple[Stopped | None, int, bytes, bytes]:
    """Feed, read and reap the child: why it was stopped (if it was), its exit code, its
    stdout and stderr. The whole group is killed before this returns."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    total = 0
    stopped: Stopped | None = None
    exited_at: float | None = None
    pending = memoryview(stdin or b"")
    with selectors.DefaultSelector() as selector:
        for fd in (out_fd, err_fd):
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
            if pending:
                selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
        while any(key.fd in chunks for key in selector.get_map().values()):
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if now >= deadline:
                stopped = "timeout"
                break
            if exited_at is not None and now - exited_at > EXIT_GRACE:
                break  # grandchildren keep the pipes open; the child itself is done
            limit = deadline - now if exited_at is None else EXIT_GRACE
            for key, _ in selector.select(timeout=min(limit, 0.05)):
                if key.fd in chunks:
                    try:
                        data = os.read(key.fd, 65536)
                    except BlockingIOError:
                        continue
                    if not data:
                        selector.unregister(key.fd)
                        continue
                    chunks[key.fd].append(data)
                    total += len(data)
                else:
                    pending = _feed(proc, selector, pending)
            if total > max_bytes:
                stopped = "too-large"
                break
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    if stopped is None and exited_at is None:
        try:  # the pipes closed; let the child finish exiting before its group is killed
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stopped = "timeout"
    kill_group(proc.pid)
    code = proc.wait()
    return stopped, code, b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _feed(
    proc: subprocess.Popen[bytes], selector: selectors.BaseSelector, pending: memoryview
) -> memoryview:
    assert proc.stdin is not None
    try:
        written = os.write(proc.stdin.fileno(), pending[:65536])
    except BlockingIOError:
        return pending
    except (BrokenPipeError, OSError):  # the child stopped reading: the rest is dropped
        written = len(pending)
    pending = pending[written:]
    if not pending:
        selector.unregister(proc.stdin.fileno())
        proc.stdin.close()
    return pending


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid`: the child and everything it left in it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
