"""Calls that reach an app through one of its servers (MCP, HTTP).

The two servers differ in how a call arrives, not in what it is. Both accept the same
global flags (those a single call may decide; output is always the envelope and nobody
can be asked), both run the call through the one pipeline (`invoke.call`) in a daemon
thread of its own, given up at the command's timeout, and both answer with the same
envelope bytes. The flags are read with the command line's own Click types, so a value
refused there is refused here.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from atipkit.app.errors import (
    AuthError,
    ConflictError,
    InputError,
    InternalError,
    Suggestion,
    TimeoutExpired,
    ToolError,
    from_exception,
)
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    import asyncio
    import socket

    import click

    from atipkit.app.app import App
    from atipkit.app.command import CommandSpec
    from atipkit.app.context import Asker
    from atipkit.app.flags import CallSettings
    from atipkit.app.invoke import CallOutcome
    from atipkit.serve.guard import Rules

__all__ = [
    "answer",
    "call_flags",
    "encoded",
    "flags_schema",
    "guard_rules",
    "listen",
    "run_call",
    "settings_from",
]

IDEMPOTENCY_KEY_MAX = 255


@functools.cache
def call_flags() -> dict[str, tuple[dict[str, Any], click.ParamType]]:
    """Each flag a served call may set: its JSON Schema (documents and errors state it)
    and the Click type that reads it, the command line's own."""
    import click

    from atipkit.app.flags import RESPONSE_FORMATS

    count = {"type": "integer", "minimum": 1}
    return {
        "dry_run": (
            {"type": "boolean", "default": False, "description": "Show what would be done."},
            click.BOOL,
        ),
        "limit": ({**count, "description": "Items per page."}, click.IntRange(min=1)),
        "cursor": (
            {"type": "string", "description": "Where to continue (meta.pagination.next_cursor)."},
            click.STRING,
        ),
        "max_items": (
            {**count, "description": "Return at most this many items (meta.truncation)."},
            click.IntRange(min=1),
        ),
        "max_bytes": (
            {**count, "description": "Return at most this many bytes of result."},
            click.IntRange(min=1),
        ),
        "response_format": (
            {
                "type": "string",
                "enum": list(RESPONSE_FORMATS),
                "default": "concise",
                "description": "How much detail the result carries.",
            },
            click.Choice(RESPONSE_FORMATS),
        ),
        "idempotency_key": (
            {
                "type": "string",
                "minLength": 1,
                "maxLength": IDEMPOTENCY_KEY_MAX,
                "description": "Run at most once per key: a retry with the same key and "
                "arguments answers the first outcome again, with meta.replayed true.",
            },
            click.STRING,
        ),
    }


def flags_schema() -> dict[str, Any]:
    """The flags as one JSON object's schema (MCP's `_meta` and `run_tool.options`)."""
    return {
        "type": "object",
        "description": "Global flags of the call, as on the command line (--dry-run, ...).",
        "properties": {name: dict(schema) for name, (schema, _type) in call_flags().items()},
        "additionalProperties": False,
    }


def settings_from(
    pairs: Iterable[tuple[str, Any]], *, where: str, timeout: float | None
) -> CallSettings:
    """The `CallSettings` of one served call from its flags, as (name, value) pairs (HTTP
    query parameters may repeat, so not a mapping). Unknown, repeated or invalid flags are
    an `InputError` (exit 2) naming the flag: a misspelt `dry-run` must never run the real
    thing."""
    import click

    from atipkit.app.flags import CallSettings

    known = call_flags()
    values: dict[str, Any] = {}
    for name, raw in pairs:
        if name not in known:
            close = difflib.get_close_matches(name.replace("-", "_"), list(known), n=2)
            raise InputError(
                f"{where}: unknown flag {name!r}",
                code=ErrorCode.USAGE,
                suggestion=f"Did you mean {' or '.join(close)}?"
                if close
                else "The flags are: " + ", ".join(known),
                details={"param": name, "known": list(known), "did_you_mean": close},
            )
        if name in values:
            raise InputError(
                f"{where}: flag {name!r} given twice",
                code=ErrorCode.BAD_VALUE,
                details={"param": name},
            )
        schema, ctype = known[name]
        try:
            value = ctype.convert(raw, None, None)
            if name == "idempotency_key" and not 0 < len(value) <= IDEMPOTENCY_KEY_MAX:
                ctype.fail(f"1 to {IDEMPOTENCY_KEY_MAX} characters, got {len(value)}")
        except click.BadParameter as exc:
            raise InputError(
                f"{where}: {name}: {exc.message}",
                code=ErrorCode.BAD_VALUE,
                details={"param": name, "expected": schema},
            ) from None
        values[name] = value
    return CallSettings(output="json", no_input=True, timeout=timeout, **values)


def answer(
    app: App, tool: str, started: float, *, result: Any = None, error: ToolError | None = None
) -> CallOutcome:
    """The outcome of a call the server answers itself (a refusal before any command
    ran, a timeout, a search), with the `meta` a command's call would have."""
    from atipkit.app.invoke import CallOutcome

    meta = app.bare_meta(tool)
    meta["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return CallOutcome(result=result, error=error, meta=meta)


def encoded(outcome: CallOutcome) -> bytes:
    """The outcome's envelope as JSON. A result JSON cannot hold is the command's bug,
    answered as the command line answers it: an internal error (and if the error's own
    details cannot be written either, one without them)."""
    from atipkit.app.output import encode

    try:
        return encode(outcome.envelope())
    except TypeError as exc:
        outcome.error = from_exception(exc)
    try:
        return encode(outcome.envelope())
    except TypeError as exc:
        outcome.error = InternalError(str(exc), details={"exception": "TypeError"})
        return encode(outcome.envelope())


def listen(host: str, port: int) -> socket.socket:
    """A listening socket for a server, or why there is none as the error that means it:
    the address in use is a conflict (exit 20), a port not allowed is a permission error
    (30), anything else (not an address of this machine) a bad `--host` (2)."""
    import errno

    from atipkit import serve as servers

    try:
        return servers.listen(host, port)
    except servers.ServeError as exc:
        where = {"host": host, "port": port}
        if exc.errno == errno.EADDRINUSE:
            raise ConflictError(
                f"{host}:{port} is already in use",
                suggestion="Pick another --port (0 picks a free one), or stop what listens there.",
                details=where,
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise AuthError(str(exc), suggestion="Use a port above 1023.", details=where) from None
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_VALUE,
            suggestion="Check --host: an address of this machine, such as 127.0.0.1.",
            details={"param": "host", **where},
        ) from None


def guard_rules(host: str, hosts: Iterable[str], origins: Iterable[str]) -> Rules:
    """Who a server on `host` answers (`atipkit.serve.guard`), from `--allow-host` and
    `--allow-origin`; a value that cannot be one is a usage error (exit 2)."""
    from atipkit.serve.guard import GuardError, Rules

    try:
        return Rules(host, hosts=hosts, origins=origins)
    except GuardError as exc:
        param = "allow_origin" if "origin" in str(exc) else "allow_host"
        raise InputError(str(exc), code=ErrorCode.BAD_VALUE, details={"param": param}) from None


async def run_call(
    spec: CommandSpec, arguments: Any, settings: CallSettings, asker: Asker | None = None
) -> CallOutcome:
    """Run one call in a daemon thread of its own and wait for it without blocking the
    server, at most the command's timeout (then the answer is `TimeoutExpired`, exit 50,
    and the thread, which cannot be stopped from outside, runs on, its result dropped).
    Never raises: even the function's `sys.exit()` is an outcome, not the server's end.
    `asker` answers the command's questions (`Context.confirm`), from that thread.

    Not a worker pool's thread: those are not daemons, so a command that never returns
    would keep the process from exiting when its client goes."""
    import asyncio  # here: a server has it imported, a command line need not

    from atipkit.app.invoke import call

    started = time.perf_counter()

    def work() -> CallOutcome:
        try:
            return call(spec, arguments, settings=settings, asker=asker)
        except BaseException as exc:  # sys.exit() in a command
            return answer(spec.app, spec.tool_name, started, error=from_exception(exc))

    try:
        return await asyncio.wait_for(_in_thread(work), spec.timeout)
    except TimeoutError:
        seconds = spec.timeout or 0
        error = TimeoutExpired(
            f"gave up after {seconds:g} s",
            details={"timeout_seconds": seconds},
            suggestion=Suggestion("Retry with backoff, or narrow the request.", action="retry"),
        )
        return answer(spec.app, spec.tool_name, started, error=error)


async def _in_thread(work: Callable[[], CallOutcome]) -> CallOutcome:
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[CallOutcome] = loop.create_future()

    def settle(outcome: CallOutcome) -> None:
        if not future.done():  # not abandoned
            future.set_result(outcome)

    def target() -> None:
        outcome = work()
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=target, name="atipkit-call", daemon=True).start()
    return await future
