"""The flags the framework gives commands without their declaring them (PRD §8.1, §8.3,
§8.7).

They are ordinary Click options with reserved destinations, so Click parses, validates
and documents them, and "last one wins" among `--output`/`--json`/`--jsonl`/`--text`/
`--plain` falls out of Click giving them one destination. `CallSettings` is what they
amount to once parsed, whatever surface (CLI, MCP, HTTP) the call came through.

Most flags mean something for every command (the output mode, `--timeout`, truncation).
The others are offered only where the command's declarations say they do something
(`Offered`): `--dry-run` where it plans, `--idempotency-key` where a retry could do the
work twice, `--yes`/`--no-input` where it may ask, `--limit`/`--cursor` where it pages,
`--null` where it reads lists. A flag that would do nothing is not offered, so neither
`--help` nor `--agent` promises it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import click

from atipkit.errors import ErrorCode

__all__ = [
    "OUTPUT_MODES",
    "CallSettings",
    "Offered",
    "answer_flag",
    "global_flags",
    "not_offered",
    "reserved_flags",
]

OutputMode = Literal["auto", "json", "jsonl", "text", "plain"]
OUTPUT_MODES: tuple[str, ...] = ("auto", "json", "jsonl", "text", "plain")
RESPONSE_FORMATS = ("concise", "detailed")
PREFIX = "_g_"
"""Click destinations of the global flags: never a Python parameter name of a command
(the definition check refuses parameters starting with `_`)."""


class CallSettings(NamedTuple):
    """The global flags of one call."""

    output: OutputMode = "auto"
    quiet: bool = False
    verbose: int = 0
    dry_run: bool = False
    no_color: bool = False
    timeout: float | None = None
    idempotency_key: str | None = None
    response_format: Literal["concise", "detailed"] = "concise"
    yes: bool = False
    no_input: bool = False
    print0: bool = False
    null: bool = False
    max_items: int | None = None
    max_bytes: int | None = None
    limit: int | None = None
    cursor: str | None = None
    fields: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()

    @classmethod
    def pop_from(cls, values: dict[str, Any]) -> CallSettings:
        """Take the global flags out of Click's values, leaving the command's own."""
        found = {
            key[len(PREFIX) :]: values.pop(key) for key in list(values) if key.startswith(PREFIX)
        }
        return cls(**{k: v for k, v in found.items() if v is not None or k in _NULLABLE})


_NULLABLE = frozenset({"timeout", "idempotency_key", "max_items", "max_bytes", "limit", "cursor"})


class Offered(NamedTuple):
    """Which of the flags that mean something only for some commands one command takes
    (`CommandSpec.offered` decides, from what the command declares)."""

    dry_run: bool = False
    """`--dry-run`: the command plans (`dry_run=True`)."""
    idempotency_key: bool = False
    """`--idempotency-key`: the command is not declared idempotent."""
    prompts: bool = False
    """`--yes` and `--no-input`: the command may ask (not declared `prompts: false`)."""
    paginated: bool = False
    """`--limit` and `--cursor`."""
    null: bool = False
    """`--null`: the command reads a list from stdin."""
    select: bool = False
    """`--fields/--select` and `--filter`: the command may return a list of records."""


NONE = Offered()
"""Only the flags of every command."""
EVERY = Offered(
    dry_run=True, idempotency_key=True, prompts=True, paginated=True, null=True, select=True
)
"""All flags offered: what no command's own parameter may use."""

_WHY_NOT = {
    "dry_run": (
        ErrorCode.NO_DRY_RUN,
        "does not support --dry-run: it would do the work",
        "Run it without --dry-run once you mean it.",
    ),
    "idempotency_key": (
        ErrorCode.USAGE,
        "takes no --idempotency-key: it is idempotent, so a retry does what the first call did",
        "Retry without --idempotency-key.",
    ),
    "yes": (ErrorCode.USAGE, "takes no --yes: it never asks", "Drop --yes."),
    "no_input": (ErrorCode.USAGE, "takes no --no-input: it never asks", "Drop --no-input."),
    "limit": (ErrorCode.USAGE, "is not paginated", "Drop --limit and --cursor: it returns all."),
    "cursor": (ErrorCode.USAGE, "is not paginated", "Drop --limit and --cursor: it returns all."),
    "null": (ErrorCode.USAGE, "reads no list from stdin", "Drop --null."),
    "fields": (
        ErrorCode.USAGE,
        "returns no list of records to take fields of",
        "Drop --fields.",
    ),
    "filter": (ErrorCode.USAGE, "returns no list of records to filter", "Drop --filter."),
}


def not_offered(flag: str) -> tuple[str, str, str] | None:
    """`(error code, why, suggestion)` when `flag` is one of the framework's flags that
    only some commands take (the why follows the command's name), or None."""
    for option in global_flags(EVERY, timeout=None, envvar="X"):
        if flag in option.opts:
            return _WHY_NOT.get((option.name or "")[len(PREFIX) :])
    return None


def _opt(*decls: str, dest: str, **kwargs: Any) -> click.Option:
    return click.Option([*decls, PREFIX + dest], **kwargs)


def global_flags(
    offered: Offered = NONE, *, timeout: float | None, envvar: str, output: str = "auto"
) -> list[click.Option]:
    """The options to add to one command: those of every command, and those `offered`
    says it takes. `timeout` is the command's own default; `envvar` is the app's prefix
    for `PREFIX_OUTPUT` and friends; `output` the app's default output mode."""
    modes = click.Choice(OUTPUT_MODES)
    flags = [
        _opt(
            "-o",
            "--output",
            dest="output",
            type=modes,
            default=output,
            envvar=f"{envvar}_OUTPUT",
            help="Output format: auto (text on a terminal, JSON otherwise), json, jsonl, "
            "text, plain.",
        ),
        _opt("--json", dest="output", flag_value="json", help="Same as --output json."),
        _opt("--jsonl", dest="output", flag_value="jsonl", help="Same as --output jsonl."),
        _opt("--text", dest="output", flag_value="text", help="Same as --output text."),
        _opt("--plain", dest="output", flag_value="plain", help="Same as --output plain."),
        _opt("-q", "--quiet", dest="quiet", is_flag=True, help="Print only the result."),
        _opt(
            "-v",
            "--verbose",
            dest="verbose",
            count=True,
            help="More diagnostics on stderr (repeat for more).",
        ),
        _opt(
            "--no-color",
            dest="no_color",
            is_flag=True,
            help="No colors (also when NO_COLOR is set).",
        ),
        _opt(
            "--timeout",
            dest="timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=timeout,
            envvar=f"{envvar}_TIMEOUT",
            help="Give up after this many seconds (exit 50).",
        ),
        _opt(
            "--response-format",
            dest="response_format",
            type=click.Choice(RESPONSE_FORMATS),
            default="concise",
            envvar=f"{envvar}_RESPONSE_FORMAT",
            help="How much detail the result carries.",
        ),
        _opt(
            "--print0",
            dest="print0",
            is_flag=True,
            help="End each item of plain output with NUL instead of a newline.",
        ),
        _opt(
            "--max-items",
            dest="max_items",
            type=click.IntRange(min=1),
            help="Return at most this many items (the rest is reported, not lost).",
        ),
        _opt(
            "--max-bytes",
            dest="max_bytes",
            type=click.IntRange(min=1),
            help="Return at most this many bytes of result.",
        ),
    ]
    if offered.dry_run:
        flags.append(
            _opt(
                "--dry-run",
                dest="dry_run",
                is_flag=True,
                help="Show what would be done, and do nothing.",
            )
        )
    if offered.idempotency_key:
        flags.append(
            _opt(
                "--idempotency-key",
                dest="idempotency_key",
                metavar="KEY",
                help="Run at most once per KEY: a retry with the same key and arguments "
                "answers the first result again.",
            )
        )
    if offered.prompts:
        flags += [
            _opt("--yes", dest="yes", is_flag=True, help="Answer yes to confirmations."),
            _opt(
                "--no-input",
                dest="no_input",
                is_flag=True,
                envvar=f"{envvar}_NO_INPUT",
                help="Never prompt; fail where a prompt would be needed.",
            ),
        ]
    if offered.paginated:
        flags += [
            _opt("--limit", dest="limit", type=click.IntRange(min=1), help="Items per page."),
            _opt(
                "--cursor",
                dest="cursor",
                help="Where to continue (from meta.pagination.next_cursor).",
            ),
        ]
    if offered.null:
        flags.append(_opt("--null", dest="null", is_flag=True, help="Input records end with NUL."))
    if offered.select:
        flags += [
            _opt(
                "--fields",
                "--select",
                dest="fields",
                multiple=True,
                metavar="A,B.C",
                help="Keep only these fields of each record (dotted for nested ones).",
            ),
            _opt(
                "--filter",
                dest="filter",
                multiple=True,
                metavar="EXPR",
                help="Keep the records where FIELD OP VALUE holds (OP: = != < <= > >= ~ !~; "
                "repeat: all must hold).",
            ),
        ]
    return flags


SELECT_FLAGS = frozenset({"--fields", "--select", "--filter"})
"""The flags of field selection: a command's own parameter may take one of them."""

ACTION_FLAGS = ("--help-agent", "--schema", "-h", "--help")
"""Flags every command takes that print something and exit (added by the command)."""


def answer_flag(decls: list[str], answer: Callable[[], str], help: str) -> click.Option:
    """A flag that prints `answer()` and exits 0 before anything else is parsed or
    checked (`--schema`, `--help-agent`, `--version`): asking what a command is must work
    even when the rest of the line would not. `answer` imports what it needs, so the
    flags cost nothing until asked for."""

    def callback(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if value and not ctx.resilient_parsing:
            click.echo(answer())
            ctx.exit(0)

    return click.Option(
        decls, is_flag=True, is_eager=True, expose_value=False, callback=callback, help=help
    )


@functools.cache
def reserved_flags(*, paginated: bool, null: bool) -> frozenset[str]:
    """Every flag a command's own parameters must not use: all the framework's, offered
    or not (a command's own `--dry-run` or `--yes` would read as the framework's), but
    `--limit`/`--cursor`/`--null` where the command does not page or read lists, and
    never `--fields`/`--select`/`--filter`: a command with one of its own keeps it, and
    is not offered the framework's (`SELECT_FLAGS`)."""
    out: set[str] = set(ACTION_FLAGS)
    reserved = EVERY._replace(paginated=paginated, null=null, select=False)
    for option in global_flags(reserved, timeout=None, envvar="X"):
        out.update(option.opts)
        out.update(option.secondary_opts)
    return frozenset(out)


def output_from_argv(args: list[str], default: str = "auto") -> str:
    """The output mode asked for in raw `args`, for errors raised before Click parsed
    them (a usage error must still come out as an envelope when JSON was asked for).
    Last one wins, as in parsing; `--` ends the options."""
    mode = default
    it = iter(range(len(args)))
    for i in it:
        arg = args[i]
        if arg == "--":
            break
        if arg in ("--json", "--jsonl", "--text", "--plain"):
            mode = arg[2:]
        elif arg in ("-o", "--output") and i + 1 < len(args):
            if args[i + 1] in OUTPUT_MODES:
                mode = args[i + 1]
            next(it, None)
        elif arg.startswith("--output="):
            value = arg.split("=", 1)[1]
            mode = value if value in OUTPUT_MODES else mode
        elif arg.startswith("-o") and arg[2:] in OUTPUT_MODES:
            mode = arg[2:]
    return mode
