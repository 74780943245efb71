"""Running a child process under control: the one loop behind the probe and the runner.

The child's stdout and stderr are read together against a deadline and a size cap, stdin
is fed from memory (or closed), and when anything ends — the answer, the deadline, the
cap — the child is killed with everything it started: `run_captured` starts it here, in a
session and process group of its own, never through a shell, and kills the group; the
sandbox (`atipkit.sandbox`) starts it through its helper and kills every descendant. Both
are a `Child` to `collect`.
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
from typing import Literal, Protocol

import msgspec

#: After the child itself exits, how long its output pipes may stay open (grandchildren
#: that inherited them) before everything it started is killed.
EXIT_GRACE = 0.1

Stopped = Literal["timeout", "too-large"]


class Captured(msgspec.Struct, frozen=True):
    exit_code: int | None  # None when stopped
    stdout: bytes
    stderr: bytes
    stopped: Stopped | None
    seconds: float


class Child(Protocol):
    """A started program, as `collect` drives it."""

    @property
    def fd(self) -> int | None:
        """A descriptor that becomes readable when `poll` may have news (None: poll)."""

    def poll(self) -> int | None:
        """The exit code if the program has exited (negative: the signal that ended it)."""

    def wait(self, timeout: float) -> int:
        """Wait for the exit code; `subprocess.TimeoutExpired` after `timeout` seconds."""

    def kill(self) -> int | None:
        """Kill the program and everything it started, reap them; its exit code (None
        when it was killed before it exited)."""


class _Group:
    """A child started here: its own session and process group, killed whole."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.exited: int | None = None

    @property
    def fd(self) -> int | None:
        return None

    def poll(self) -> int | None:
        self.exited = self.proc.poll()
        return self.exited

    def wait(self, timeout: float) -> int:
        self.exited = self.proc.wait(timeout)
        return self.exited

    def kill(self) -> int | None:
        kill_group(self.proc.pid)
        code = self.proc.wait()
        return code if self.exited is not None else None


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
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if stdin is not None else (subprocess.DEVNULL, None)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=in_r,
            stdout=out_w,
            stderr=err_w,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        for fd in (out_r, err_r, in_w):
            if fd is not None:
                os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, in_r):
            if fd is not None and fd >= 0:
                os.close(fd)
    return collect(
        _Group(proc), out_r, err_r, in_w, stdin, start=start, timeout=timeout, max_bytes=max_bytes
    )


def collect(
    child: Child,
    out_fd: int,
    err_fd: int,
    in_fd: int | None,
    stdin: bytes | None,
    *,
    start: float,
    timeout: float,
    max_bytes: int,
) -> Captured:
    """Feed `stdin` to `in_fd` (closed when fed), read `out_fd` and `err_fd`, and end the
    child (`Child.kill`) whatever happens; the descriptors are closed."""
    pipes = _Pipes(out_fd, err_fd, in_fd)
    try:
        stopped, stdout, stderr = _collect(child, pipes, stdin, start + timeout, max_bytes)
    except BaseException:  # a signal (a caller's deadline), Ctrl-C: no child left behind
        child.kill()
        raise
    finally:
        pipes.close_all()
    code = child.kill()
    return Captured(
        exit_code=None if stopped else code,
        stdout=stdout,
        stderr=stderr,
        stopped=stopped,
        seconds=time.monotonic() - start,
    )


class _Pipes:
    """The child's three pipes, each closed once."""

    def __init__(self, out_fd: int, err_fd: int, in_fd: int | None) -> None:
        self.out, self.err, self.into = out_fd, err_fd, in_fd
        self.open = {fd for fd in (out_fd, err_fd, in_fd) if fd is not None}

    def close(self, fd: int) -> None:
        if fd in self.open:
            self.open.discard(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def close_all(self) -> None:
        for fd in list(self.open):
            self.close(fd)


def _collect(
    child: Child, pipes: _Pipes, stdin: bytes | None, deadline: float, max_bytes: int
) -> tuple[Stopped | None, bytes, bytes]:
    """Feed and read the child until its output ends (or it exits and `EXIT_GRACE`
    passes), the deadline passes or the output exceeds `max_bytes`: why it was stopped
    (if it was), its stdout and stderr."""
    chunks: dict[int, list[bytes]] = {pipes.out: [], pipes.err: []}
    total = 0
    stopped: Stopped | None = None
    exited_at: float | None = None
    pending = memoryview(stdin or b"")
    news = child.fd  # registered until the child has exited (`fd` may be None by then)
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if news is not None:
            selector.register(news, selectors.EVENT_READ)
        if pipes.into is not None:
            os.set_blocking(pipes.into, False)
            if pending:
                selector.register(pipes.into, selectors.EVENT_WRITE)
            else:
                pipes.close(pipes.into)
        while any(key.fd in chunks for key in selector.get_map().values()):
            now = time.monotonic()
            if exited_at is None and child.poll() is not None:
                exited_at = now
                if news is not None:
                    selector.unregister(news)
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
                elif key.fd == pipes.into:
                    pending = _feed(pipes, selector, pending)
            if total > max_bytes:
                stopped = "too-large"
                break
    if pipes.into is not None:
        pipes.close(pipes.into)
    if stopped is None and exited_at is None:
        try:  # the pipes closed; let the child finish exiting before it is killed
            child.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stopped = "timeout"
    return stopped, b"".join(chunks[pipes.out]), b"".join(chunks[pipes.err])


def _feed(pipes: _Pipes, selector: selectors.BaseSelector, pending: memoryview) -> memoryview:
    assert pipes.into is not None
    try:
        written = os.write(pipes.into, pending[:65536])
    except BlockingIOError:
        return pending
    except OSError:  # the child stopped reading: the rest is dropped
        written = len(pending)
    pending = pending[written:]
    if not pending:
        selector.unregister(pipes.into)
        pipes.close(pipes.into)
    return pending


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid`: the child and everything it left in it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
