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
    dumps,
)
from atipkit.protocol import PROTOCOL_VERSION

__all__ = [
    "AtipArgument",
    "AtipCommand",
    "AtipGroup",
    "agent_option",
    "tool_from_click",
    "tool_from_typer",
]


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
    commands: dict[str, Command]
    ctx = _context(command, name)
    if _is_group(command):
        commands = _subcommands(command, ctx)
        global_options = [_option(p) for p in _params(command, skip, "option")]
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


# Click-shaped objects are recognized by what they offer, not by class identity: Typer
# ships its own copy of Click, whose classes are not `click`'s.


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands") and hasattr(command, "get_command")


def _context(command: Any, name: str, parent: Any = None) -> Any:
    return command.context_class(command, info_name=name, parent=parent)


def _kind(param: Any) -> str:
    return getattr(param, "param_type_name", "")


def _subcommands(group: Any, ctx: Any) -> dict[str, Command]:
    out: dict[str, Command] = {}
    for sub_name in group.list_commands(ctx):
        sub = group.get_command(ctx, sub_name)
        if sub is None:
            continue
        out[sub_name] = _command(sub, _context(sub, sub_name, ctx))
    return out


def _command(command: Any, ctx: Any) -> Command:
    effects = getattr(command, "effects", None)
    return Command(
        description=_summary(command),
        arguments=[_argument(p) for p in _params(command, ("help",), "argument")],
        options=[_option(p) for p in _params(command, ("help",), "option")],
        effects=effects if effects else UNSET,
        deprecated=bool(command.deprecated),
        hidden=command.hidden,
        commands=_subcommands(command, ctx) if _is_group(command) else {},
    )


def _params(command: Any, skip: tuple[str, ...], kind: str) -> list[Any]:
    return [
        p
        for p in command.params
        if _kind(p) == kind
        and p.name not in skip
        and not p.is_eager
        and not getattr(p, "hidden", False)
    ]


def _summary(command: Any) -> str:
    text = command.help or command.short_help or ""
    return " ".join(text.split("\n\n", 1)[0].split())


def annotation_type(annotation: Any) -> tuple[AtipType, list[Any] | UnsetType]:
    """An ATIP type from a Python annotation: int, float, bool, str, Path, an Enum, a
    Literal of strings, and Optional/list of those."""
    import enum
    import pathlib
    import typing

    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        values = list(typing.get_args(annotation))
        return ("enum", values) if all(isinstance(v, str) for v in values) else ("string", UNSET)
    if origin in (typing.Union, type(int | str)):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return annotation_type(members[0]) if members else ("string", UNSET)
    if origin in (list, tuple, set, frozenset):
        args = typing.get_args(annotation)
        return annotation_type(args[0]) if args else ("string", UNSET)
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return "boolean", UNSET
        if issubclass(annotation, int):
            return "integer", UNSET
        if issubclass(annotation, float):
            return "number", UNSET
        if issubclass(annotation, pathlib.PurePath):
            return "file", UNSET
        if issubclass(annotation, enum.Enum):
            return "enum", [str(m.value) for m in annotation]
    return "string", UNSET


def _type(param: Any) -> tuple[AtipType, list[Any] | UnsetType]:
    ptype: Any = getattr(param, "type", None)
    kind = type(ptype).__name__
    if ptype is None and hasattr(param, "type_descriptor"):  # Typer 0.29+ (its own Click)
        if _kind(param) == "option" and param.is_flag and not param.count:
            return "boolean", UNSET
        return annotation_type(param.type_descriptor.annotation)
    if _kind(param) == "option" and param.is_flag and not param.count:
        return "boolean", UNSET
    if hasattr(ptype, "choices") and kind.endswith("Choice"):
        return "enum", [str(getattr(c, "value", c)) for c in ptype.choices]
    if kind in ("IntParamType", "IntRange") or getattr(param, "count", False):
        return "integer", UNSET
    if kind in ("FloatParamType", "FloatRange"):
        return "number", UNSET
    if kind == "BoolParamType":
        return "boolean", UNSET
    if kind == "Path":
        return ("directory" if ptype.dir_okay and not ptype.file_okay else "file"), UNSET
    if kind == "File":
        return "file", UNSET
    return "string", UNSET


def _default(param: Any) -> Any:
    value = param.default
    if value is None or callable(value):
        return UNSET
    if _kind(param) == "option" and param.is_flag and value is False:
        return UNSET
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, str | int | float | bool | list):
        return value
    return UNSET


def _variadic(param: Any) -> bool:
    return bool(getattr(param, "multiple", False)) or param.nargs == -1 or param.nargs > 1


def _argument(param: Any) -> Argument:
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


def _option(param: Any) -> Option:
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


def agent_option(*, version: str, name: str | None = None, description: str | None = None) -> Any:
    """A Click decorator: `@agent_option(version="1.0")` on the top-level group or command
    gives it an `--agent` flag that prints its ATIP metadata and exits."""

    def show(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if not value or ctx.resilient_parsing:
            return
        root = ctx.find_root()
        tool = tool_from_click(
            root.command,
            name=name or root.info_name or "tool",
            version=version,
            description=description,
        )
        click.echo(dumps(tool).decode())
        ctx.exit(0)

    return click.option(
        "--agent",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=show,
        help="Print ATIP metadata as JSON and exit.",
    )


def tool_from_typer(app: Any, *, name: str, version: str, description: str | None = None) -> Tool:
    """A Typer app as an ATIP tool, through the Click command Typer builds."""
    import typer.main

    command: Any = typer.main.get_command(app)  # Typer 0.29+: its own Click, the same shape
    return tool_from_click(command, name=name, version=version, description=description)
