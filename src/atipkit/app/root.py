"""The app's own flags, before any command: `--agent [--commands A,B] [--depth N]`,
`--schema`, `--help-agent`, `--version`.

`--agent` answers with ATIP 0.6 metadata (RFC 0.6 §3.1): valid JSON on stdout, exit 0,
no side effects, and partial discovery done by the app itself (feature
`partial-discovery`), with the `partial`/`omitted` fields an agent needs to know what it
is not seeing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from atipkit.app.flags import answer_flag

if TYPE_CHECKING:
    from atipkit.app.app import App

__all__ = ["root_callback", "root_options"]


def _split(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise click.BadParameter("name at least one command")
    return names


def root_options(app: App) -> list[click.Parameter]:
    def schema() -> str:
        from atipkit.app.schema import app_schema, dumps

        return dumps(app_schema(app), indent=True)

    def help_agent() -> str:
        from atipkit.app.schema import app_compact_help, dumps

        return dumps(app_compact_help(app))

    return [
        click.Option(
            ["--agent"], is_flag=True, help="Print ATIP metadata (JSON) for agents and exit."
        ),
        click.Option(
            ["--commands"],
            metavar="A,B",
            callback=_split,
            help="With --agent: only these command subtrees.",
        ),
        click.Option(
            ["--depth"],
            type=click.IntRange(min=1),
            help="With --agent: only this many levels of commands.",
        ),
        answer_flag(["--schema"], schema, "Print the JSON Schema of every command and exit."),
        answer_flag(
            ["--help-agent"], help_agent, "Print a compact, minified overview for agents and exit."
        ),
        answer_flag(
            ["-V", "--version"],
            lambda: f"{app.name} {app.version}",
            "Print the version and exit.",
        ),
    ]


def root_callback(
    app: App, agent: bool, commands: list[str] | None, depth: int | None, **_: Any
) -> None:
    ctx = click.get_current_context()
    if not agent:
        if commands is not None or depth is not None:
            raise click.UsageError("--commands and --depth go with --agent", ctx)
        if ctx.invoked_subcommand is None:
            click.echo(ctx.get_help())
            ctx.exit(0)
        return
    if ctx.invoked_subcommand is not None:
        raise click.UsageError("--agent describes the tool; it takes no command", ctx)
    from atipkit.model import dumps

    try:
        tool = app.tool(commands=commands, depth=depth)
    except KeyError as exc:
        raise click.BadParameter(str(exc.args[0]), ctx, param_hint="'--commands'") from None
    click.echo(dumps(tool).decode())
    ctx.exit(0)
