"""The one way atipkit runs a tool to learn about it: `tool --agent`, sandboxed.

SPEC-NOTES 14: an argv list (never a shell), stdin closed, a fresh empty working directory,
a throwaway HOME and XDG directories, a minimal explicit environment, its own session,
killed with everything it started on timeout (default 2 s), and stdout and stderr capped
(default 16 MiB together). The session has no controlling terminal, so a tool that opens
/dev/tty fails instead of waiting for a person. Whatever the tool writes into its working
directory or HOME is deleted with them. Where the kernel allows it, it runs in
namespaces: no network, a read-only filesystem, a private /tmp (`atipkit.sandbox`).

The result is the validated metadata or a typed failure; probing never raises for what
the tool does.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from atipkit import _jsontext
from atipkit._process import Captured
from atipkit.errors import DocumentError
from atipkit.model import Tool
from atipkit.problems import Problem

DEFAULT_TIMEOUT = 2.0
STDERR_KEPT = 4096

FailureKind = Literal[
    "not-executable",
    "timeout",
    "exit-code",
    "too-large",
    "not-json",
    "not-atip",
    "invalid",
    "denied",
    "sandbox",
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
    tool runs in a directory of its own.

    A command on the deny list (`atipkit.deny`: reboot, mkfs.*, ...) is never run, by
    any caller: the result is the failure `denied`."""
    from atipkit.deny import configured

    path = _locate(os.fspath(executable))
    argv = agent_argv(path, commands=commands, depth=depth)
    if configured().denies(path):
        message = f"{os.path.basename(path)} is on the deny list: never run (atipkit.deny)"
        return ProbeResult(path, argv, 0.0, failure=ProbeFailure("denied", message))
    from atipkit import sandbox  # its helper's machinery: only where a program is run

    start = time.monotonic()
    try:
        captured = sandbox.run(argv, timeout=timeout, max_bytes=max_bytes, env=env)
    except OSError as exc:
        failure = ProbeFailure("not-executable", f"cannot run {path}: {exc.strerror or exc}")
        return ProbeResult(path, argv, time.monotonic() - start, failure=failure)
    except sandbox.SandboxError as exc:
        failure = ProbeFailure("sandbox", f"cannot sandbox {path}: {exc}")
        return ProbeResult(path, argv, time.monotonic() - start, failure=failure)
    seconds = time.monotonic() - start
    code, stdout, stopped = captured.exit_code, captured.stdout, captured.stopped
    tail = captured.stderr[-STDERR_KEPT:].decode("utf-8", "replace")

    def failed(kind: FailureKind, message: str, problems: list[Problem] | None = None):
        failure = ProbeFailure(kind, message, problems or [])
        return ProbeResult(path, argv, seconds, failure=failure, stderr=tail)

    if stopped == "timeout":
        return failed("timeout", f"no answer within {timeout:g} s; killed, with all it started")
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
    from atipkit.validation import validate_decoded  # the schema: not for a search

    report = validate_decoded(data, source=path, raw=stdout)
    if not report.ok or report.tool is None:
        first = report.errors[0].format() if report.errors else "invalid"
        return failed("invalid", f"invalid ATIP metadata: {first}", report.errors)
    return ProbeResult(path, argv, seconds, tool=report.tool, stderr=tail)


def _locate(executable: str) -> str:
    if os.sep in executable:
        return os.path.abspath(executable)
    return shutil.which(executable) or executable


def run_sandboxed(
    executable: str | os.PathLike[str],
    args: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    cpu: float | None = None,
) -> Captured:
    """Run `executable args...` in the same sandbox as the probe (for `--help`,
    `--version` and the like); raises `OSError` if it, or the sandbox, cannot be
    started. `env` adds to the sandbox's minimal environment (a crawled package's
    `LD_LIBRARY_PATH`, say); `stdin` is fed to the program (a man page to groff), else
    stdin is /dev/null. `cpu` stops it when one of its processes has used that many
    seconds of CPU (`timeout` is then the wall-clock ceiling: `sandbox.run`)."""
    from atipkit import sandbox

    path = _locate(os.fspath(executable))
    try:
        return sandbox.run(
            [path, *args], timeout=timeout, max_bytes=max_bytes, env=env, stdin=stdin, cpu=cpu
        )
    except sandbox.SandboxError as exc:
        raise OSError(f"cannot sandbox {path}: {exc}") from exc
