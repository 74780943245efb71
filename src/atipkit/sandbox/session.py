"""The host's side of the sandbox: which isolation this machine allows, the helper
sessions, and running a program through one.

A *session* is one helper process (`_helper.py serve`), started on first use — inside
bubblewrap, or entering the namespaces itself (`unshare`), or, where neither works, on the
host — and kept for the life of this process (at most `IDLE_SESSIONS` idle ones: another
set of visible paths is another session). Its server forks *wardens* on request and
hands this side a socket to each; idle ones are kept. Each program is one message to an
idle warden (its pipes travel as SCM_RIGHTS), which starts it and answers `done` once the
program has exited — or this side said `kill` — and everything it left is dead.
Starting a program costs neither a new sandbox nor a fork of Python: that is what keeps
a cold scan of a thousand executables as fast as without isolation (bench/scan.py).

Which isolation: `ATIP_SANDBOX` = `auto` (default: bwrap, else unshare, else none),
`bwrap`, `unshare` or `none`. A mode is used only once its helper has started and
checked from inside that the network has no interface but loopback and the root is read
only; otherwise the next is tried, and falling back to `none` is said once (a
`SandboxWarning`).
"""

from __future__ import annotations

import array
import atexit
import collections
import contextlib
import errno
import functools
import json
import os
import select
import shutil
import socket
import subprocess
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

import msgspec

from atipkit._process import Captured, collect, kill_group
from atipkit.errors import AtipError
from atipkit.sandbox import plan as layout

Isolation = Literal["bwrap", "unshare", "none"]
MODES: tuple[Isolation, ...] = ("bwrap", "unshare", "none")
ENV = "ATIP_SANDBOX"
START_TIMEOUT = 10.0
"""Seconds a helper may take to start and answer `ready`."""
KILL_WAIT = 0.5
"""Seconds to wait for a warden's `done` (it takes milliseconds; 2 s at most for a
process stuck in the kernel); then it is taken for stopped by the program, and the
server kills it and what it left."""
IDLE_SESSIONS = 2
CLOSE_WAIT = 5.0
"""Seconds a session's server may take to exit once closed (its wardens finishing)."""
FIRST_WORD = 5.0
"""Seconds within which the server answers for a new warden: no answer means the session
is broken (a program stopped it?), and a new one is started."""


class SandboxError(AtipError):
    """The sandbox could not be started, or the program's session went away."""


class SandboxWarning(UserWarning):
    """Programs run without namespaces: see docs/agent-builders/sandbox.md, 'Not guaranteed'."""


def base_env() -> dict[str, str]:
    """The environment every sandboxed program gets (the helper adds HOME, the XDG
    directories and TMPDIR, all in its own throwaway directory)."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    max_bytes: int,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    cpu: float | None = None,
) -> Captured:
    """Run `argv` (its first item an absolute path) in the sandbox: a throwaway working
    directory, HOME and XDG directories, `base_env` plus `env`, stdin fed from `stdin`
    (else /dev/null); stopped at `timeout` seconds of wall clock, past `max_bytes` of
    output, or (given `cpu`) when one of its processes has used `cpu` seconds of CPU
    (rounded up to whole seconds; `stopped` is "timeout" for either clock). Everything
    the program started is dead when this returns. Raises `OSError` when it cannot be
    started (missing, not executable) and `SandboxError` when the sandbox cannot."""
    mounts = layout.mounts([argv[0]], env)
    for attempt in range(2):
        session = _sessions.acquire(mounts)
        try:
            return session.run(list(argv), dict(env or {}), timeout, max_bytes, stdin, cpu)
        except _Gone:
            session.close()
            if attempt:
                raise SandboxError("the sandbox session ended twice in a row") from None
        finally:
            _sessions.release(session)
    raise AssertionError("unreachable")


def prepare(executables: Sequence[str], env: Mapping[str, str] | None = None) -> threading.Thread:
    """Start, in a thread, the session that `run` of `executables` with `env` will use
    (the thread, started): a helper's start (an interpreter, bubblewrap, the checks of
    its namespaces) is most of a process's first run, and begun early it overlaps the
    caller's own work (`atip gen` imports its inference modules meanwhile). A `run`
    meanwhile waits for that start rather than making another; one that cannot start
    is left for `run` to report."""

    def start() -> None:
        with contextlib.suppress(SandboxError, OSError):
            _sessions.release(_sessions.acquire(layout.mounts(list(executables), env)))

    thread = threading.Thread(target=start, name="atipkit-sandbox-start", daemon=True)
    thread.start()
    return thread


def isolation() -> Isolation:
    """The isolation programs get here (deciding it, once, if nothing has run yet)."""
    return _sessions.mode()


def used() -> Isolation | None:
    """The isolation programs got in this process; None if none has run."""
    return _sessions.decided.get(_requested())


def wrap(argv: Sequence[str], *, cwd: str) -> tuple[list[str], Isolation]:
    """`argv` as a command that runs it isolated (for the runner: its own stdio, a
    terminal if it has one), `cwd` writable; and which isolation. Raises `SandboxError`
    where there are no namespaces, and for `/` as `cwd` (nothing would be read-only);
    `FileNotFoundError` when `cwd` is no directory, as a run without isolation would."""
    cwd = os.path.realpath(cwd)  # what is mounted: a link to it is not in the sandbox
    if cwd == "/":
        raise SandboxError("with / as the working directory, every file would be writable")
    if not os.path.isdir(cwd):
        raise FileNotFoundError(errno.ENOENT, "no such working directory", cwd)
    mode = isolation()
    if mode == "none":
        raise SandboxError(f"no namespaces here: {_sessions.reasons.get(_requested(), '')}")
    mounts = layout.mounts([argv[0]], writable=[cwd])
    if mode == "bwrap":
        prefix = layout.bwrap_argv(mounts, features=_bwrap_features(), cwd=cwd)
        return [*prefix, "--die-with-parent", "--", *argv], mode
    plan = {"unshare": True, "mounts": mounts, "tmp_size": layout.TMP_SIZE, "cwd": cwd}
    helper = [layout.interpreter(), "-I", "-S", layout.HELPER]
    return [*helper, "exec", json.dumps(plan), "--", *argv], mode


def _requested() -> str:
    value = os.environ.get(ENV, "auto").strip().lower() or "auto"
    return value if value in (*MODES, "auto") else "auto"


@functools.cache
def _bwrap_features() -> frozenset[str]:
    """The options of the installed bubblewrap that older ones lack."""
    try:
        done = subprocess.run(
            ["bwrap", "--help"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(o for o in ("--disable-userns", "--size") if o in done.stdout)


def _tempdir() -> str:
    import tempfile

    return tempfile.gettempdir()


def verify(mode: Isolation, checks: dict) -> None:
    """What a helper saw from inside must be what `mode` promises: no network interface
    but loopback, a read-only root; else `SandboxError` (and the next mode is tried)."""
    if mode == "none":
        return
    if set(checks.get("interfaces", [])) - {"lo"}:
        raise SandboxError(f"{mode}: a network interface is reachable")
    if checks.get("rootWritable", True):
        raise SandboxError(f"{mode}: the root filesystem is writable")


def _decode(data: bytes) -> dict:
    """A message from the helper; {} for anything that is not a JSON object (what
    arrives on its sockets is input like any other)."""
    try:
        message = json.loads(data) if data else {}
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deep
        return {}
    return message if isinstance(message, dict) else {}


class _Gone(Exception):
    """The session's helper is gone (the request could not be sent)."""


class _Session:
    """One helper process and its control socket."""

    def __init__(self, mode: Isolation, mounts: tuple[layout.Mount, ...]) -> None:
        self.mode = mode
        self.root = ""  # the server's directory, from its `ready`
        self.users = 0
        self.lock = threading.Lock()
        self.idle: list[_Link] = []  # wardens waiting for a program
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        helper_plan = {
            "unshare": mode == "unshare",
            "isolated": mode != "none",
            "mounts": mounts,
            "tmp_size": layout.TMP_SIZE,
        }
        argv = [
            layout.interpreter(),
            "-I",
            "-S",
            layout.HELPER,
            "serve",
            str(theirs.fileno()),
            json.dumps(helper_plan),
        ]
        if mode == "bwrap":
            prefix = layout.bwrap_argv(mounts, features=_bwrap_features(), as_pid_1=True)
            argv = [*prefix, "--", *argv]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=[theirs.fileno()],
                env={"PATH": os.defpath, "LANG": "C.UTF-8", "TMPDIR": _tempdir()},
                start_new_session=True,
            )
        except OSError as exc:
            control.close()
            raise SandboxError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        finally:
            theirs.close()
        self.control = control
        try:
            self._ready()
        except BaseException:
            self.close()
            raise

    def _ready(self) -> None:
        ready, _, _ = select.select([self.control], [], [], START_TIMEOUT)
        message = self.control.recv(65536) if ready else b""
        answer = _decode(message)
        if not answer.get("ready"):
            assert self.proc.stderr is not None
            kill_group(self.proc.pid)  # all of it: what is left would hold stderr open
            self.proc.wait()
            said = self.proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
            reason = answer.get("error") or (said[-1] if said else "no answer")
            raise SandboxError(f"{self.mode}: {reason}")
        self.root = str(answer.get("root", ""))
        checks = answer.get("checks")
        self.checks: dict = checks if isinstance(checks, dict) else {}
        verify(self.mode, self.checks)
        assert self.proc.stderr is not None
        self.proc.stderr.close()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(
        self,
        argv: list[str],
        extra: dict[str, str],
        timeout: float,
        max_bytes: int,
        stdin: bytes | None,
        cpu: float | None = None,
    ) -> Captured:
        start = time.monotonic()
        asked = {"argv": argv, "env": base_env(), "extra": extra, "stdin": stdin is not None}
        request = json.dumps({**asked, "cpu": cpu}).encode()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if stdin is not None else (None, None)
        passed = [out_w, err_w] + ([in_r] if in_r is not None else [])
        mine = [out_r, err_r] + ([in_w] if in_w is not None else [])
        try:
            warded = self._send(request, passed)
        except BaseException:
            for fd in mine:
                os.close(fd)
            raise
        finally:
            for fd in passed:
                os.close(fd)
        try:
            captured = collect(
                warded, out_r, err_r, in_w, stdin, start=start, timeout=timeout, max_bytes=max_bytes
            )
        finally:
            if warded.reusable:
                with self.lock:
                    self.idle.append(warded.link)
            else:
                warded.link.sock.close()
        if warded.error is not None:
            raise OSError(warded.error.get("error", 0), warded.error.get("message", "cannot run"))
        if warded.spun and captured.stopped is None:  # stopped by its CPU limit
            return msgspec.structs.replace(captured, stopped="timeout", exit_code=None)
        return captured

    def _send(self, request: bytes, fds: list[int]) -> _Warded:
        """Hand the request to an idle warden (or a new one); a warden that died since
        its last program is dropped and the next tried."""
        for _ in range(3):
            link = self._warden()
            try:
                link.sock.sendmsg(
                    [request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
                )
            except OSError:
                link.sock.close()
                continue
            return _Warded(link, self)
        raise _Gone

    def _warden(self) -> _Link:
        """An idle warden, or a new one from the server (`_Gone` if it does not answer)."""
        with self.lock:
            if self.idle:
                return self.idle.pop()
            try:
                self.control.send(b'{"warden": true}')
                ready, _, _ = select.select([self.control], [], [], FIRST_WORD)
                if not ready:
                    raise _Gone
                data, ancillary, _, _ = self.control.recvmsg(
                    4096, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC
                )
            except OSError:
                raise _Gone from None
            fds = [
                fd
                for level, kind, payload in ancillary
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
                for fd in array.array("i", payload[: len(payload) - len(payload) % 4])
            ]
            warden = _decode(data).get("warden")
            if len(fds) != 1 or type(warden) is not int:
                for fd in fds:
                    os.close(fd)
                raise _Gone
            return _Link(socket.socket(fileno=fds[0]), warden)

    def stuck(self, warden: int) -> None:
        """Ask the server to kill a warden that did not finish, and what it left."""
        with contextlib.suppress(OSError), self.lock:
            self.control.send(json.dumps({"stuck": warden}).encode())

    def close(self) -> None:
        """End the session: its server exits when the socket closes, once its wardens
        are done; if it does not within `CLOSE_WAIT` (stopped by a program?), its
        process group is killed, namespace and all. Its directory on the host (without
        namespaces) is removed whatever became of it."""
        with self.lock:
            for link in self.idle:
                link.sock.close()
            self.idle.clear()
        self.control.close()
        try:
            self.proc.wait(timeout=CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            kill_group(self.proc.pid)
            self.proc.wait()
        if self.mode == "none" and self.root:
            from atipkit.sandbox._helper import remove  # ctypes and libc: only here

            remove(self.root)


class _Link(NamedTuple):
    """A socket to a warden, and the warden's pid (in the session)."""

    sock: socket.socket
    warden: int


class _Warded:
    """A program started by a warden: its `done` (exit status, or why it could not
    start) arrives on the warden's socket once everything it started is dead; `kill` is
    one message back. A warden gone without a word was killed, by the program it ran or
    with the whole session: so was the program."""

    def __init__(self, link: _Link, session: _Session) -> None:
        self.link = link
        self.session = session
        self.exited: int | None = None
        self.error: dict | None = None  # the program could not be started: why
        self.finished = False  # `done` received, or the warden is gone
        self.reusable = False  # `done` said everything died: the warden serves again
        self.spun = False  # `done` said its CPU limit ended it

    @property
    def fd(self) -> int | None:
        return None if self.finished else self.link.sock.fileno()

    def _next(self, timeout: float | None) -> dict | None:
        """The next message, waiting up to `timeout` (None: forever); None on timeout or
        when the warden is gone (then `finished`). A warden's only word is `done`: one
        that says anything else is broken, and is killed with what it ran."""
        if self.finished:
            return None
        ready, _, _ = select.select([self.link.sock], [], [], timeout)
        if not ready:
            return None
        try:
            data = self.link.sock.recv(65536)
        except OSError:
            data = b""
        self.finished = True
        message = _decode(data)
        try:
            status = message.get("exit")
            exited = None if status is None else os.waitstatus_to_exitcode(status)
        except (TypeError, ValueError, OverflowError):
            message = {}  # no wait status
        error = message.get("error")
        if message.get("done") is not True or not isinstance(error, int | None):
            if data:
                self.session.stuck(self.link.warden)
            if self.exited is None:
                self.exited = -9  # its warden was killed: so was it
            return None
        self.reusable = not message.get("left")
        self.spun = message.get("cpu") is True
        if error is not None:
            self.error, self.exited = message, 127
        elif exited is not None:
            self.exited = exited
        return message

    def poll(self) -> int | None:
        while self.exited is None and not self.finished and self._next(0) is not None:
            pass
        return self.exited

    def wait(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while self.exited is None:
            left = deadline - time.monotonic()
            if left <= 0 or self.finished:
                raise subprocess.TimeoutExpired("sandboxed program", timeout)
            self._next(left)
        return self.exited

    def kill(self) -> int | None:
        if not self.finished:
            try:
                self.link.sock.send(b"kill")
            except OSError:
                self.finished = True
        deadline = time.monotonic() + KILL_WAIT
        while not self.finished and time.monotonic() < deadline:
            self._next(deadline - time.monotonic())
        if not self.finished:
            self.session.stuck(self.link.warden)
            self.finished = True
        return self.exited


class _Sessions:
    """The sessions of this process, by isolation and mounts; the isolation decided per
    requested mode (`ATIP_SANDBOX`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sessions: collections.OrderedDict[tuple, _Session] = collections.OrderedDict()
        self.decided: dict[str, Isolation] = {}
        self.reasons: dict[str, str] = {}
        self.warned = False
        self.owner = os.getpid()

    def mode(self) -> Isolation:
        session = self.acquire(layout.mounts([]))
        self.release(session)
        return session.mode

    def acquire(self, mounts: tuple[layout.Mount, ...]) -> _Session:
        requested = _requested()
        with self.lock:
            if self.owner != os.getpid():  # a forked child: the parent's sessions are not ours
                self.sessions.clear()
                self.owner = os.getpid()
            mode = self.decided.get(requested)
            session = self.sessions.get((mode, mounts)) if mode else None
            if session is None or not session.alive:
                if session is not None:
                    self.sessions.pop((mode, mounts))
                session = self._start(requested, mounts)
                self.sessions[(session.mode, mounts)] = session
            self.sessions.move_to_end((session.mode, mounts))
            session.users += 1
            return session

    def _start(self, requested: str, mounts: tuple[layout.Mount, ...]) -> _Session:
        decided = self.decided.get(requested)
        if decided is not None:
            return _Session(decided, mounts)
        order: tuple[Isolation, ...] = (
            MODES if requested == "auto" else (requested, "none")  # type: ignore[assignment]  # not auto: one Isolation
        )
        reasons = []
        for mode in dict.fromkeys(order):
            if mode == "bwrap" and shutil.which("bwrap") is None:
                reasons.append("bwrap is not installed")
                continue
            try:
                session = _Session(mode, mounts)
            except SandboxError as exc:
                reasons.append(str(exc))
                continue
            self.decided[requested] = mode
            if mode == "none":
                self.reasons[requested] = "; ".join(reasons) or f"{ENV}=none"
                if reasons and not self.warned:
                    self.warned = True
                    warnings.warn(
                        "programs run without namespaces (no private /tmp, read-only "
                        "filesystem or network isolation): " + "; ".join(reasons),
                        SandboxWarning,
                        stacklevel=4,
                    )
            return session
        raise SandboxError("cannot start the sandbox: " + "; ".join(reasons))

    def release(self, session: _Session) -> None:
        with self.lock:
            session.users -= 1
            idle = [k for k, s in self.sessions.items() if s.users == 0]
            for key in idle[: max(0, len(idle) - IDLE_SESSIONS)]:
                self.sessions.pop(key).close()

    def close_all(self) -> None:
        with self.lock:
            if self.owner == os.getpid():
                for session in self.sessions.values():
                    session.close()
            self.sessions.clear()


_sessions = _Sessions()
atexit.register(_sessions.close_all)
