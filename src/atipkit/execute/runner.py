"""Running an invocation (RFC 0.6 §3.6 and §6): pipes by default, a PTY when the command
needs a terminal, never a shell.

stdin follows `effects.interactive.stdin`: `none` gets /dev/null; `optional` gets the data
if any; `required` is refused without data, before anything starts; `password` is never
taken from the model — it comes from a credential callback or the run is refused. The
timeout is the caller's, else the command's `duration.timeout`, else 60 s; on timeout the
whole process group is killed. Output is capped and the result says what was cut. With
`isolate`, it runs in the sandbox's namespaces (RFC §11.1: "use sandboxing for untrusted
tools"), where nothing it starts outlives it.
"""

from __future__ import annotations

import os
import select
import termios
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import msgspec

from atipkit._duration import parse_duration
from atipkit._process import kill_group, run_captured
from atipkit.errors import AtipError
from atipkit.execute.argv import Invocation
from atipkit.model import Effects

if TYPE_CHECKING:
    from ptyprocess import PtyProcess

DEFAULT_TIMEOUT = 60.0
MAX_OUTPUT = 4 * 1024 * 1024


class RunRefused(AtipError):
    """The invocation was not started: its input requirements cannot be met."""


class IsolationUnavailable(RunRefused):
    """Isolation was asked for and cannot be given here (no namespaces, `/` as the
    working directory): the invocation was not started, never run unisolated."""


class RunResult(msgspec.Struct, frozen=True, kw_only=True):
    argv: list[str]
    exit_code: int | None  # None when it was stopped
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    truncated: bool = False
    tty: bool = False
    isolation: str | None = None  # what isolated it (`bwrap`, `unshare`), when asked

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def timeout_of(effects: Effects) -> float:
    """Seconds a command may take: its `duration.timeout`, else `DEFAULT_TIMEOUT`."""
    stated = effects.duration.timeout if effects.duration else None
    return parse_duration(stated) if stated else DEFAULT_TIMEOUT


def run(
    invocation: Invocation,
    effects: Effects,
    *,
    stdin: bytes | str | None = None,
    credential: Callable[[], bytes | None] | None = None,
    timeout: float | None = None,
    max_output: int = MAX_OUTPUT,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    isolate: bool = False,
) -> RunResult:
    """Run `invocation` as its effects require. Raises `RunRefused` before starting when
    the input it needs is missing, and `OSError` when the executable cannot be started.

    `isolate=True` runs it in the sandbox (`atipkit.sandbox`): new user, mount, PID,
    network, IPC and UTS namespaces, no capability; no network at all, loopback
    included; the filesystem read-only except the working directory (`cwd`, else this
    process's), which stays writable; `/tmp`, `/var/tmp`, `/run`, `/dev/shm` and `$HOME`
    empty throwaways (but for PATH directories and the executable's, read-only); its
    environment as without `isolate`. When it ends or is killed, everything it started
    dies with it, in whatever session. Where the kernel allows no namespaces, it is
    refused (`RunRefused`) rather than run unisolated, and so is `/` as the working
    directory; `RunResult.isolation` names what isolated it (`bwrap` or `unshare`)."""
    interactive = effects.interactive or None
    mode = interactive.stdin if interactive and interactive.stdin else "optional"
    data = _bytes_of(stdin)
    if mode == "password":
        if data is not None:
            raise RunRefused("a password is never taken from the model")
        data = credential() if credential else None
        if data is None:
            raise RunRefused("the command asks for a password and no credential is available")
    elif mode == "required" and data is None:
        raise RunRefused("the command needs input on stdin and none was given")
    elif mode == "none" and data is not None:
        raise RunRefused("the command reads no input; stdin data was given")
    if timeout is None:
        timeout = timeout_of(effects)
    full_env = {**(os.environ if env is None else env), **invocation.env}
    argv, isolation = invocation.argv, None
    if isolate:
        from atipkit import sandbox

        try:
            argv, isolation = sandbox.wrap(argv, cwd=os.path.abspath(cwd or os.getcwd()))
        except sandbox.SandboxError as exc:
            raise IsolationUnavailable(
                f"isolation was asked for and cannot be given: {exc}"
            ) from None
    if interactive and interactive.tty:
        result = _run_pty(invocation.argv, argv, data, timeout, max_output, cwd, full_env)
        return msgspec.structs.replace(result, isolation=isolation)
    captured = run_captured(
        argv, cwd=cwd, env=full_env, timeout=timeout, max_bytes=max_output, stdin=data
    )
    return RunResult(
        isolation=isolation,
        argv=invocation.argv,
        exit_code=captured.exit_code,
        stdout=_cut(captured.stdout, max_output),
        stderr=_cut(captured.stderr, max_output),
        seconds=captured.seconds,
        timed_out=captured.stopped == "timeout",
        truncated=captured.stopped == "too-large",
    )


def _bytes_of(stdin: bytes | str | None) -> bytes | None:
    """Input given as text, as bytes: UTF-8, with the bytes a command line could not
    decode given back as they were (`surrogateescape`, as Python read them); a lone
    surrogate any other way (`"\\ud800"` from JSON) is no text and is refused."""
    if not isinstance(stdin, str):
        return stdin
    try:
        return stdin.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise RunRefused(
            f"the input is not text: a lone UTF-16 surrogate at character {exc.start}"
        ) from None


def _cut(data: bytes, limit: int) -> str:
    return data[:limit].decode("utf-8", "replace")


#: A terminal program is typed to one line at a time, each once it has been quiet this long
#: (it has prompted) and is not running (`_busy`): a program that sets up its terminal
#: flushes input typed too early.
TYPING_PAUSE = 0.1
#: Quiet this long, a program is typed to even if it runs (one that polls its terminal).
BUSY_PAUSE = 5.0
#: Once the input is all typed and ended, a program still waiting quietly this long gets
#: end of input again (at most `MORE_EOFS` times), as a person presses Ctrl-D again: a
#: terminal gives one end-of-file per EOF character, and some readers want a second
#: (Python's `input()` after a partial line).
EOF_AGAIN = 0.5
MORE_EOFS = 8


def _run_pty(
    shown: list[str],
    argv: list[str],
    data: bytes | None,
    timeout: float,
    max_output: int,
    cwd: str | None,
    env: Mapping[str, str],
) -> RunResult:
    """A terminal for programs that insist on one (prompts read from /dev/tty). The input
    is typed line by line as the program asks, then ended as a terminal ends it; stdout
    and stderr arrive mixed, as on a real terminal. `argv` is run, `shown` reported."""
    from ptyprocess import PtyProcess

    start = time.monotonic()
    child = PtyProcess.spawn(argv, cwd=cwd, env=dict(env), echo=False)
    try:
        out, timed_out, truncated = _converse(child, data, start + timeout, max_output)
    finally:  # also when a signal (a caller's deadline) cuts in: no child left behind
        kill_group(child.pid)
        child.close(force=True)
    code = None if timed_out or truncated else child.exitstatus
    text = b"".join(out)[:max_output].decode("utf-8", "replace").replace("\r\n", "\n")
    return RunResult(
        argv=shown,
        exit_code=code,
        stdout=text,
        stderr="",
        seconds=time.monotonic() - start,
        timed_out=timed_out,
        truncated=truncated,
        tty=True,
    )


def _busy(pid: int) -> bool:
    """Whether process `pid` is running or runnable (`R`) or in disk I/O (`D`), not asleep
    as one waiting on its terminal for input is. On a busy machine a program still
    starting is quiet for longer than `TYPING_PAUSE`: a line typed then came before its
    prompt, and `getpass` flushed it (decision 712). Unknown (no /proc): not busy."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rsplit(b")", 1)[1].split()[0] in (b"R", b"D")
    except (OSError, IndexError):
        return False


def typed(data: bytes | None, eof: bytes) -> list[bytes]:
    """What is typed, in turns: each line of `data`, then end of input as a terminal
    ends it. The EOF character sends a partial line without a newline, and ends input
    only at the start of a line: so twice after a partial line, once after a whole one.
    Nothing at all without `data` (the program may read no input)."""
    if data is None:
        return []
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith((b"\n", b"\r")):
        lines[-1] += eof  # sends the partial line as it is
    return [*lines, eof]


def _converse(
    child: PtyProcess, data: bytes | None, deadline: float, max_output: int
) -> tuple[list[bytes], bool, bool]:
    """Type the input line by line as the program pauses (then end of input), and read
    what it writes: the output, and whether the deadline or the cap stopped it."""
    try:
        eof = termios.tcgetattr(child.fd)[6][termios.VEOF]
    except (termios.error, OSError):
        eof = b"\x04"
    eof = eof if isinstance(eof, bytes) else bytes([eof])
    turns = typed(data, eof)
    more = MORE_EOFS if data is not None else 0
    out: list[bytes] = []
    total, timed_out, truncated = 0, False, False
    last_event = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline:
            timed_out = True
            break
        quiet = now - last_event
        if (turns and quiet >= TYPING_PAUSE and (quiet >= BUSY_PAUSE or not _busy(child.pid))) or (
            not turns and more and quiet >= EOF_AGAIN
        ):
            if not turns:
                more -= 1
            try:
                child.write(turns.pop(0) if turns else eof)
            except OSError:  # the program is gone: nothing reads it
                turns, more = [], 0
            last_event = now
        ready, _, _ = select.select([child.fd], [], [], min(deadline - now, TYPING_PAUSE / 2))
        if not ready:
            if not child.isalive():
                break
            continue
        try:
            chunk = os.read(child.fd, 65536)
        except OSError:  # EIO: the terminal closed
            break
        if not chunk:
            break
        out.append(chunk)
        last_event = time.monotonic()
        total += len(chunk)
        if total > max_output:
            truncated = True
            break
    return out, timed_out, truncated
