"""Helpers of the sandbox's tests: each isolation mode, processes found by a marker, a
loopback listener that counts what reaches it."""

from __future__ import annotations

import os
import socket
import stat
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from atipkit import sandbox
from atipkit.sandbox import session

MODES = ("bwrap", "unshare", "none")
ISOLATED = ("bwrap", "unshare")


def use_mode(mode: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Make `mode` the sandbox's (ATIP_SANDBOX), in a session set of this test's own; skip
    when this machine does not allow it."""
    fresh = session._Sessions()
    monkeypatch.setattr(session, "_sessions", fresh)
    monkeypatch.setenv(sandbox.ENV, mode)
    got = sandbox.isolation()
    if got != mode:
        fresh.close_all()
        pytest.skip(f"{mode} is not available here ({fresh.reasons.get(mode, '')})")
    return mode


def mode_fixture(modes: tuple[str, ...]) -> Callable[..., Iterator[str]]:
    """A fixture over `modes`, each made the sandbox's for the test (skipped where this
    machine does not allow it): `mode = mode_fixture(MODES)` in a test module."""

    @pytest.fixture(params=modes)
    def fixture(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
        yield use_mode(request.param, monkeypatch)
        session._sessions.close_all()

    return fixture


def marker() -> str:
    """A string no other test's process carries."""
    return f"atipmark{uuid.uuid4().hex[:12]}"


def running(mark: str) -> list[int]:
    """The processes whose command line or environment holds `mark` (this one aside)."""
    found = []
    needle = mark.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                if needle in (entry / part).read_bytes():
                    found.append(int(entry.name))
                    break
            except OSError:
                continue
    return found


def script(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class Listener:
    """A listener (`tcp` on loopback, or `unix`) that counts the connections it accepts."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.listen(64)
        sock.settimeout(0.2)
        self.accepted = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @classmethod
    def tcp(cls, host: str = "127.0.0.1") -> Listener:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.bind((host, 0))
        return cls(sock)

    @classmethod
    def unix(cls, path: Path) -> Listener:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        return cls(sock)

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stopped.set()
        self.thread.join()
        self.sock.close()
