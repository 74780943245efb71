"""From parsed flags to `invoke.run` and back to stdout, stderr and the exit status.

Usage errors (an unknown flag, a bad value, a missing argument) are Click's to detect and
ours to report: `usage_error` turns each into an `InputError` that names the parameter
and what it expects, so a caller that asked for JSON gets an envelope even for a call
that never reached the function (PRD §10, issue: "parser usage errors become ok: false
envelopes with exit 2").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from atipkit.app.context import terminal_available
from atipkit.app.errors import InputError, ToolError, from_exception
from atipkit.app.flags import PREFIX, CallSettings, not_offered
from atipkit.app.inputs import decode, read_source, sink, spool, stdin_binary
from atipkit.app.invoke import CallOutcome, deadline, run
from atipkit.app.output import color_allowed, render_error, render_result, resolve
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.command import CommandSpec
    from atipkit.app.params import Param

__all__ = ["dispatch", "usage_error"]


def dispatch(spec: CommandSpec, **values: Any) -> None:
    """Click's callback for every command: run it and leave with its exit status."""
    settings = CallSettings.pop_from(values)
    out, err = sys.stdout, sys.stderr
    isatty = bool(out is not None and out.isatty())
    try:
        mode = resolve(settings.output, isatty=isatty, print0=settings.print0)
    except ToolError as exc:
        mode = "json" if settings.output in ("json", "jsonl") else "text"
        render_error(mode, exc, spec.app.bare_meta(spec.tool_name), out, err)
        raise click.exceptions.Exit(exc.exit_code) from None
    interactive = not settings.no_input and terminal_available()
    from atipkit.app.safety import mode_of, text_cleaner

    policy = mode_of(spec.app)

    def prepare(ctx: Any) -> dict[str, Any]:
        from atipkit.app.safety import confirm_destructive, mode_of

        spec.app.check_config(spec)
        prepared = {
            p.name: _from_cli(spec, p, values.get(p.name), ctx) for p in spec.signature.params
        }
        ctx.confirmed_by = confirm_destructive(spec, ctx, mode_of(spec.app))
        return prepared

    outcome = CallOutcome()
    try:
        with deadline(settings.timeout):
            outcome = run(
                spec,
                settings,
                prepare,
                interactive=interactive,
                err=err,
                echo_warnings=mode in ("text", "plain"),
                stream=mode != "json",
            )
            failed = outcome.error
            # A failure that carries what was done before it shows that first, to people
            # and to streams; in JSON it is the failure envelope's `result`.
            clean = None
            if mode in ("text", "plain"):
                # a result read whole was screened: unflagged, it holds no instructions
                unread = isinstance(outcome.result, Iterator) or failed is not None
                possible = unread or bool(outcome.meta.get("flagged"))
                clean = text_cleaner(policy, instructions=possible)
            if failed is None or (failed.has_result and mode != "json"):
                color = mode == "text" and color_allowed(out, settings.no_color)
                render_result(
                    mode,
                    outcome.result if failed is None else failed.result,
                    outcome.meta,
                    out,
                    color=color,
                    print0=settings.print0,
                    text=spec.text,
                    clean=clean,
                )
    except click.exceptions.Exit:
        raise
    except Exception as exc:  # a stream that failed, or the deadline while writing
        outcome.error = from_exception(exc)
    if outcome.error is not None:
        clean = text_cleaner(policy) if mode in ("text", "plain") else None
        render_error(mode, outcome.error, outcome.meta, out, err, clean)
    if os.environ.get(f"{spec.app.env_prefix}_RECORD"):  # the evaluation harness
        from atipkit.app.evaluation import note

        note(spec.tool_name, outcome.error)
    elif mode == "jsonl" and outcome.meta.get("truncation") and not settings.quiet:
        err.write(f"truncated: {outcome.meta['truncation']}\n")
    out.flush()
    raise click.exceptions.Exit(outcome.exit_code)


def _from_cli(spec: CommandSpec, param: Param, raw: Any, ctx: Any) -> Any:
    if param.sink and raw == "-":
        return sink(ctx)
    if param.stdin is None:
        return param.from_cli(raw)
    want = param.stdin.want
    if want == "path" and raw not in (None, "-") and not str(raw).startswith(("http:", "https:")):
        from pathlib import Path

        path = Path(raw)
        if not path.is_file():
            read_source(raw, stdin=None, limit=0, stdin_is_tty=True)  # the precise error
        return path
    stdin = stdin_binary()
    stdin_is_tty = bool(sys.stdin is not None and sys.stdin.isatty())
    data, source, _path = read_source(
        raw, stdin=stdin, limit=spec.app.max_input_bytes, stdin_is_tty=stdin_is_tty
    )
    if want == "path":
        return spool(data, ctx)
    value = decode(data, param.stdin, source, null=ctx.settings.null)
    return param.shape.from_json(value) if want == "json" else value


def usage_error(exc: click.ClickException) -> ToolError:
    """A Click error as an `InputError`: which parameter, what it expects, and, for an
    unknown flag or command, the near misses."""

    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command", None)
    spec: CommandSpec | None = getattr(command, "spec", None)
    details: dict[str, Any] = {}
    suggestion = None
    message = exc.format_message()
    refused = not_offered(exc.option_name) if isinstance(exc, click.NoSuchOption) else None
    if isinstance(exc, click.NoSuchOption) and refused is not None and spec is not None:
        # a framework flag this command does not take: say why, not just "no such option"
        code, why, suggestion = refused
        details["option"] = exc.option_name
        message = f"{spec.display_name} {why}"
    elif isinstance(exc, click.NoSuchOption):
        details["option"] = exc.option_name
        if exc.possibilities:
            details["did_you_mean"] = sorted(exc.possibilities)
            suggestion = f"Did you mean {' or '.join(sorted(exc.possibilities))}?"
        else:
            suggestion = "Run with --help to see the options."
        code = ErrorCode.USAGE
    elif getattr(exc, "command_name", None):  # no such command: UnknownCommand, Click's own
        details["command"] = exc.command_name  # type: ignore[attr-defined]  # getattr: it has one
        close = list(getattr(exc, "possibilities", None) or ())
        message = exc.message
        where = ctx.command_path if ctx is not None else ""
        if close:
            details["did_you_mean"] = close
            suggestion = f"Did you mean {' or '.join(f'{where} {c}'.strip() for c in close)}?"
        else:
            suggestion = f"Run '{where} --help' to see the commands."
        code = ErrorCode.USAGE
    elif isinstance(exc, click.BadParameter):
        code = (
            ErrorCode.BAD_VALUE if not isinstance(exc, click.MissingParameter) else ErrorCode.USAGE
        )
        param = exc.param
        name = getattr(param, "name", None)
        if name:
            details["param"] = name[len(PREFIX) :] if name.startswith(PREFIX) else name
            expected = _expected(spec, name)
            if expected is not None:
                details["expected"] = expected
        if isinstance(exc, click.MissingParameter) and spec is not None:
            suggestion = f"Give {details.get('param', 'it')}; see: {spec.display_name} --help"
    else:
        code = ErrorCode.USAGE
        suggestion = "Run with --help to see the usage."
    if ctx is not None:
        details["usage"] = ctx.get_usage()
    return InputError(message, code=code, suggestion=suggestion, details=details)


def _expected(spec: CommandSpec | None, name: str) -> Any:
    if spec is None:
        return None
    for param in spec.signature.params:
        if param.name == name:
            return param.json_schema()
    return None
