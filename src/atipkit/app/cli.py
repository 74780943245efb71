"""The Click view of a command: its options, listed apart from the flags every command
has, and the answers `--schema` and `--help-agent` print. What runs when the command is
called is `dispatch`'s, imported only then, so `tool X --help` loads neither the input
readers, the runner nor the renderers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from atipkit.app.flags import PREFIX, answer_flag

if TYPE_CHECKING:
    from atipkit.app.command import CommandSpec

__all__ = ["AppCommand", "action_options", "callback"]


class AppCommand(click.Command):
    """A Click command that knows its spec, and lists its own options apart from the
    flags every command has."""

    def __init__(self, spec: CommandSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        own: list[tuple[str, str]] = []
        common: list[tuple[str, str]] = []
        help_option = self.get_help_option(ctx)  # named "help" or not, by Click's version
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            is_global = (param.name or "").startswith(PREFIX) or param is help_option
            (common if is_global or param.name in _ACTIONS else own).append(record)
        if own:
            with formatter.section("Options"):
                formatter.write_dl(own)
        if common:
            with formatter.section("Global options"):
                formatter.write_dl(common)


_ACTIONS = ("_a_schema", "_a_help_agent")


def action_options(spec: CommandSpec) -> list[click.Option]:
    """`--schema` and `--help-agent`: print what the command is, and exit."""

    def schema() -> str:
        from atipkit.app.schema import command_schema, dumps

        return dumps(command_schema(spec, pretty=True), indent=True)

    def help_agent() -> str:
        from atipkit.app.schema import compact_help, dumps

        return dumps(compact_help(spec))

    return [
        answer_flag(
            ["--schema", "_a_schema"], schema, "Print this command's JSON Schema and exit."
        ),
        answer_flag(
            ["--help-agent", "_a_help_agent"],
            help_agent,
            "Print a compact, minified description for agents and exit.",
        ),
    ]


def callback(spec: CommandSpec) -> Any:
    """Click's callback for `spec`: `dispatch.dispatch`, imported when it is called."""

    def call(**values: Any) -> None:
        from atipkit.app.dispatch import dispatch

        dispatch(spec, **values)

    return call
