"""Exact ATIP metadata from a live argparse parser — no help text is parsed.

    parser = argparse.ArgumentParser(prog="shipit", description="Ship packages.")
    ...
    add_agent_flag(parser, version="1.2.0", effects={"push": Effects(network=True)})
    parser.parse_args()   # `shipit --agent` now prints ATIP metadata and exits

Subparsers become commands, `choices` enums, `nargs` required/variadic, `type` the ATIP
type, mutually exclusive groups `exclusive`; suppressed help hides a parameter.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Mapping
from typing import Any

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
    dumps,
)
from atipkit.protocol import PROTOCOL_VERSION

__all__ = ["add_agent_flag", "tool_from_argparse"]

_SKIP = (argparse._HelpAction, argparse._VersionAction)


def tool_from_argparse(
    parser: argparse.ArgumentParser,
    *,
    version: str,
    name: str | None = None,
    description: str | None = None,
    effects: Mapping[str, Effects] | None = None,
) -> Tool:
    """The parser as an ATIP tool. `effects` maps command paths (`"push"`, `"remote add"`,
    `""` for the tool itself) to their effects."""
    effects = dict(effects or {})
    name = name or parser.prog
    own_options, own_arguments, subparsers = _split(parser)
    if subparsers is not None:
        commands = _commands(subparsers, (), effects)
        global_options = own_options
        tool_effects = effects.get("", UNSET)
    else:
        root = Command(
            description=_describe(parser, name),
            arguments=own_arguments,
            options=own_options,
            effects=effects.get("", UNSET),
        )
        commands, global_options, tool_effects = {"": root}, [], UNSET
    return Tool(
        atip=AtipVersion(version=PROTOCOL_VERSION),
        name=name,
        version=version,
        description=description or _describe(parser, name),
        trust=Trust(source="native", verified=False),
        effects=tool_effects,
        global_options=global_options,
        commands=commands,
    )


def add_agent_flag(
    parser: argparse.ArgumentParser,
    *,
    version: str,
    effects: Mapping[str, Effects] | None = None,
    name: str | None = None,
) -> None:
    """Give an existing parser an `--agent` flag that prints its ATIP metadata."""

    class AgentAction(argparse.Action):
        def __call__(self, parser_: Any, namespace: Any, values: Any, option: Any = None) -> None:
            tool = tool_from_argparse(parser, version=version, effects=effects, name=name)
            sys.stdout.write(dumps(tool).decode() + "\n")
            parser.exit(0)

    parser.add_argument("--agent", nargs=0, action=AgentAction, help=argparse.SUPPRESS)


def _describe(parser: argparse.ArgumentParser, fallback: str) -> str:
    text = parser.description or parser.usage or fallback
    return " ".join(text.split("\n\n")[0].split())


def _split(parser: argparse.ArgumentParser) -> tuple[list[Option], list[Argument], Any]:
    options: list[Option] = []
    arguments: list[Argument] = []
    subparsers = None
    groups = {id(a): g for g in parser._mutually_exclusive_groups for a in g._group_actions}
    for action in parser._actions:
        if isinstance(action, _SKIP) or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._SubParsersAction):
            subparsers = action
        elif action.option_strings:
            option = _option(action)
            group = groups.get(id(action))
            if group is not None:
                option.exclusive = [
                    _option_name(a)
                    for a in group._group_actions
                    if a is not action and a.help != argparse.SUPPRESS
                ]
            options.append(option)
        else:
            arguments.append(_argument(action))
    return options, arguments, subparsers


def _commands(
    action: argparse._SubParsersAction, path: tuple[str, ...], effects: Mapping[str, Effects]
) -> dict[str, Command]:
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    out: dict[str, Command] = {}
    seen: set[int] = set()
    for sub_name, sub in action.choices.items():
        if id(sub) in seen:  # an alias of a command already listed
            continue
        seen.add(id(sub))
        sub_path = (*path, sub_name)
        options, arguments, nested = _split(sub)
        out[sub_name] = Command(
            description=" ".join((helps.get(sub_name) or sub.description or sub_name).split()),
            arguments=arguments,
            options=options,
            effects=effects.get(" ".join(sub_path), UNSET),
            commands=_commands(nested, sub_path, effects) if nested is not None else {},
        )
    return out


def _type(action: argparse.Action) -> tuple[AtipType, list[Any] | Any]:
    if isinstance(action, argparse._CountAction):  # nargs=0, but it counts
        return "integer", UNSET
    if (
        isinstance(
            action,
            argparse._StoreConstAction | argparse._StoreTrueAction | argparse._StoreFalseAction,
        )
        or action.nargs == 0
    ):
        return "boolean", UNSET
    if action.choices is not None:
        values = list(action.choices)
        if all(isinstance(v, str) for v in values):
            return "enum", values
    kind = action.type
    if kind is int:
        return "integer", UNSET
    if kind is float:
        return "number", UNSET
    if isinstance(kind, argparse.FileType) or kind in (pathlib.Path, pathlib.PurePath):
        return "file", UNSET
    return "string", UNSET


def _variadic(action: argparse.Action) -> bool:
    return (
        action.nargs in ("*", "+", argparse.REMAINDER)
        or (isinstance(action.nargs, int) and action.nargs > 1)
        or isinstance(action, argparse._AppendAction)
    )


def _default(action: argparse.Action, atip_type: str) -> Any:
    value = action.default
    if value is None or value is argparse.SUPPRESS or atip_type == "boolean":
        return UNSET
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, str | int | float | list) else UNSET


def _option_name(action: argparse.Action) -> str:
    longs = [o for o in action.option_strings if o.startswith("--")]
    return longs[0][2:] if longs else action.dest


def _option(action: argparse.Action) -> Option:
    atip_type, values = _type(action)
    return Option(
        name=_option_name(action),
        flags=list(action.option_strings),
        type=atip_type,
        description=" ".join((action.help or "").split()) or UNSET,
        required=bool(action.required),
        default=_default(action, atip_type),
        variadic=_variadic(action),
        enum=values,
    )


def _argument(action: argparse.Action) -> Argument:
    atip_type, values = _type(action)
    return Argument(
        name=action.metavar if isinstance(action.metavar, str) else action.dest,
        type=atip_type,
        description=" ".join((action.help or "").split()) or action.dest,
        required=action.nargs not in ("?", "*", argparse.REMAINDER),
        default=_default(action, atip_type),
        variadic=_variadic(action),
        enum=values,
    )
