"""Exact ATIP metadata from a live Click command tree, with no help-text parsing.

A Click author adds effects where they declare the command, through Click's own `cls=`
hook, and gets `--agent` output that can never drift from the real options:

    @cli.command(cls=AtipCommand, effects=Effects(network=False, idempotent=True))
    @click.argument("path", cls=AtipArgument, help="File to read")
    def show(path): ...

    print(atipkit.dumps(tool_from_click(cli, name="mytool", version="1.0")).decode())
"""

from __future__ import annotations

from typing import Any

import click

from atipkit.model import (
    UNSET,
    Argument,
    AtipType,
    AtipVersion,
    Command,
    Effects,
    Option,
    Tool,
    Trust,
    UnsetType,
)
from atipkit.protocol import PROTOCOL_VERSION

__all__ = ["AtipArgument", "AtipCommand", "AtipGroup", "tool_from_click"]


class AtipCommand(click.Command):
    """A Click command that declares its ATIP effects."""

    def __init__(self, *args: Any, effects: Effects | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.effects = effects


class AtipGroup(click.Group):
    """A Click group whose subcommands default to `AtipCommand`."""

    command_class = AtipCommand

    def __init__(self, *args: Any, effects: Effects | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.effects = effects


class AtipArgument(click.Argument):
    """A Click argument with a description (plain Click arguments have no `help`)."""

    def __init__(self, *args: Any, help: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = help


def tool_from_click(
    command: click.Command,
    *,
    name: str,
    version: str,
    description: str | None = None,
    skip: tuple[str, ...] = ("help",),
) -> Tool:
    """Describe a Click command or group as an ATIP tool.

    The group's own non-eager options become `globalOptions`; eager ones (`--help`,
    `--version`, `--agent`) are actions, not options, and are left out, as are hidden
    parameters and the parameters named in `skip`.
    """
    ctx = click.Context(command, info_name=name)
    commands: dict[str, Command]
    if isinstance(command, click.Group):
        commands = _subcommands(command, ctx)
        global_options = [_option(p) for p in _params(command, skip, click.Option)]
        tool_effects = getattr(command, "effects", None) or UNSET
    else:
        commands = {"": _command(command, ctx)}
        global_options, tool_effects = [], UNSET
    uses_interactive = any(c.effects and c.effects.interactive for c in _all(commands.values()))
    features = ["trust-v1", *(["interactive-effects"] if uses_interactive else [])]
    return Tool(
        atip=AtipVersion(version=PROTOCOL_VERSION, features=sorted(features)),
        name=name,
        version=version,
        description=description or _summary(command),
        trust=Trust(source="native", verified=False),
        effects=tool_effects,
        global_options=global_options,
        commands=commands,
    )


def _all(commands: Any) -> list[Command]:
    out: list[Command] = []
    stack = list(commands)
    while stack:
        command = stack.pop()
        out.append(command)
        stack.extend(command.commands.values())
    return out


def _subcommands(group: click.Group, ctx: click.Context) -> dict[str, Command]:
    out: dict[str, Command] = {}
    for sub_name in group.list_commands(ctx):
        sub = group.get_command(ctx, sub_name)
        if sub is None:
            continue
        out[sub_name] = _command(sub, click.Context(sub, info_name=sub_name, parent=ctx))
    return out


def _command(command: click.Command, ctx: click.Context) -> Command:
    effects = getattr(command, "effects", None)
    return Command(
        description=_summary(command),
        arguments=[_argument(p) for p in _params(command, ("help",), click.Argument)],
        options=[_option(p) for p in _params(command, ("help",), click.Option)],
        effects=effects if effects else UNSET,
        deprecated=bool(command.deprecated),
        hidden=command.hidden,
        commands=_subcommands(command, ctx) if isinstance(command, click.Group) else {},
    )


def _params(command: click.Command, skip: tuple[str, ...], kind: type) -> list[Any]:
    return [
        p
        for p in command.params
        if isinstance(p, kind)
        and p.name not in skip
        and not p.is_eager
        and not getattr(p, "hidden", False)
    ]


def _summary(command: click.Command) -> str:
    text = command.help or command.short_help or ""
    return " ".join(text.split("\n\n", 1)[0].split())


def _type(param: click.Parameter) -> tuple[AtipType, list[Any] | UnsetType]:
    ptype = param.type
    if isinstance(param, click.Option) and param.is_flag and not param.count:
        return "boolean", UNSET
    if isinstance(ptype, click.Choice):
        return "enum", [str(c) for c in ptype.choices]
    if isinstance(ptype, click.types.IntParamType) or getattr(param, "count", False):
        return "integer", UNSET
    if isinstance(ptype, click.types.FloatParamType):
        return "number", UNSET
    if isinstance(ptype, click.types.BoolParamType):
        return "boolean", UNSET
    if isinstance(ptype, click.Path):
        return ("directory" if ptype.dir_okay and not ptype.file_okay else "file"), UNSET
    if isinstance(ptype, click.File):
        return "file", UNSET
    return "string", UNSET


def _default(param: click.Parameter) -> Any:
    value = param.default
    if value is None or callable(value):
        return UNSET
    if isinstance(param, click.Option) and param.is_flag and value is False:
        return UNSET
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, str | int | float | bool | list):
        return value
    return UNSET


def _variadic(param: click.Parameter) -> bool:
    return bool(getattr(param, "multiple", False)) or param.nargs == -1 or param.nargs > 1


def _argument(param: click.Argument) -> Argument:
    atip_type, values = _type(param)
    return Argument(
        name=param.name or param.human_readable_name,
        type=atip_type,
        description=getattr(param, "help", None) or UNSET,
        required=param.required,
        default=_default(param),
        variadic=_variadic(param),
        enum=values,
    )


def _option(param: click.Option) -> Option:
    atip_type, values = _type(param)
    longs = [f for f in param.opts if f.startswith("--")]
    return Option(
        name=longs[0][2:] if longs else (param.name or param.opts[0].lstrip("-")),
        flags=list(param.opts),
        type=atip_type,
        description=param.help or UNSET,
        required=param.required,
        default=_default(param),
        variadic=_variadic(param),
        enum=values,
        env_var=param.envvar if isinstance(param.envvar, str) else UNSET,
    )
