"""From command trees to flat tools (RFC 0.6 §8.2 Rule 3), provider-neutral.

Strategy A, `discrete` (the default): one tool per invocable command.
Strategy B, `action`: one tool per group, with an `action` parameter naming the command;
a group with a single command, and the root command, stay discrete.

Every flat tool carries its `Binding`: for each action (`""` without one) the tool's key
in the batch (its name, unless an earlier tool has that name: `names.tool_keys`), the
command path and, for each property key of its schema, the argument or option it stands
for. Tool calls are mapped back through bindings alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from atipkit.bridge import params as P
from atipkit.bridge.names import assign_names, distinct_tools, numbered
from atipkit.bridge.safety import combine, suffix
from atipkit.model import (
    UNSET,
    Argument,
    Command,
    CommandPath,
    Effects,
    Option,
    Tool,
    merge_effects,
    walk_commands,
)

Strategy = Literal["discrete", "action"]
ParamKind = Literal["argument", "option", "global"]
ACTION = "action"


class ParamRef(msgspec.Struct, frozen=True):
    """Which parameter of the command a property stands for."""

    kind: ParamKind
    name: str


class Target(msgspec.Struct, frozen=True):
    """One command a compiled tool can run, and what its property keys mean. `tool` is
    the tool's key in the batch compiled (`names.tool_keys`): its name, unless another
    tool given before it has that name."""

    tool: str
    path: CommandPath
    params: dict[str, ParamRef]
    required: tuple[str, ...] = ()


class Binding(msgspec.Struct, frozen=True):
    """How a compiled tool name maps back: action → target (`""` when there is no action)."""

    name: str
    targets: dict[str, Target]


class Parameter(msgspec.Struct, frozen=True):
    key: str
    ref: ParamRef
    spec: Argument | Option
    required: bool
    schema: dict[str, Any]


class FlatTool(msgspec.Struct, frozen=True):
    """A provider-neutral tool: what every provider module renders."""

    name: str
    title: str
    summary: str  # description without the safety suffix
    safety: str  # the suffix, e.g. "[⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE]"
    effects: Effects
    input_schema: dict[str, Any]  # neutral JSON Schema, type object
    binding: Binding

    @property
    def separator(self) -> str:
        """Between summary and safety suffix: a space, or a line for multi-line summaries."""
        return "\n" if "\n" in self.summary else " "

    @property
    def description(self) -> str:
        return f"{self.summary}{self.separator}{self.safety}".strip()


class _Command(msgspec.Struct, frozen=True):
    tool: Tool
    path: CommandPath
    command: Command
    effects: Effects
    parameters: tuple[Parameter, ...]


def flatten(
    tools: Iterable[Tool], *, strategy: Strategy = "discrete", include_hidden: bool = False
) -> list[FlatTool]:
    """Every invocable command of `tools` as flat tools, named uniquely across all. Two
    tools of one name stay two: the second is named by its key (`names.tool_keys`), and
    its targets say that key."""
    commands = [c for tool in distinct_tools(tools) for c in _commands(tool, include_hidden)]
    if strategy == "discrete":
        groups = [[c] for c in commands]
    else:
        by_parent: dict[tuple[str, CommandPath], list[_Command]] = {}
        for c in commands:
            parent = c.path[:-1] if c.path else None
            key = (c.tool.name, c.path if parent is None else parent)
            by_parent.setdefault(key, []).append(c)
        groups = []
        for members in by_parent.values():
            if len(members) == 1 or not members[0].path:
                groups.extend([m] for m in members)
            else:
                groups.append(members)
    words = [_words(group) for group in groups]
    names = assign_names(words)
    return [
        _discrete(g[0], names[w]) if len(g) == 1 else _grouped(g, names[w])
        for g, w in zip(groups, words, strict=True)
    ]


def _words(group: list[_Command]) -> tuple[str, ...]:
    first = group[0]
    path = first.path if len(group) == 1 else first.path[:-1]
    return (first.tool.name, *path)


def _commands(tool: Tool, include_hidden: bool) -> list[_Command]:
    """Leaves, and groups that take parameters of their own, in document order, with
    their effective effects carried down the tree (one merge per command)."""

    def step(state: tuple[Effects, bool], _key: str, command: Command) -> tuple[Effects, bool]:
        effects, hidden = state
        return merge_effects(effects, command.effects), hidden or command.hidden

    out = []
    schemas = _SchemaCache()
    start = (merge_effects(tool.effects, UNSET), False)
    for path, command, (effects, hidden) in walk_commands(tool, start, step):
        if (hidden and not include_hidden) or not invocable(command):
            continue
        out.append(_Command(tool, path, command, effects, _parameters(tool, command, schemas)))
    return out


def invocable(command: Command) -> bool:
    """Whether a command becomes a tool of its own: a leaf, or a group that takes
    parameters itself (`git remote` lists; `git remote add` adds). A bare group is only
    a heading. The search index counts commands by the same rule, so a hit is always a
    tool a compile has."""
    return not command.commands or bool(command.arguments or command.options)


class _SchemaCache(dict[int, tuple[dict[str, Any], Argument | Option]]):
    """Parameter schemas computed once per flatten; global options recur in every command.
    Keyed by object identity, with the object kept alive so the id cannot be reused."""

    def schema(self, spec: Argument | Option) -> dict[str, Any]:
        hit = self.get(id(spec))
        if hit is None:
            hit = self[id(spec)] = (P.parameter_schema(spec), spec)
        return hit[0]


def _parameters(tool: Tool, command: Command, schemas: _SchemaCache) -> tuple[Parameter, ...]:
    """Arguments, then options, then global options; each under a distinct, stable key:
    an option or global named like an earlier parameter gets a `_option`/`_global` tail."""
    out: list[Parameter] = []
    taken: set[str] = set()
    sources: list[tuple[ParamKind, list[Any]]] = [
        ("argument", command.arguments),
        ("option", command.options),
        ("global", tool.global_options),
    ]
    own_flags = {f for o in command.options for f in o.flags}
    for kind, specs in sources:
        for spec in specs:
            if kind == "global" and own_flags.intersection(spec.flags):
                continue  # the command's own option with that flag wins
            key = P.property_key(spec.name)
            if key in taken and kind != "argument":
                key = P.property_key(f"{spec.name}_{kind}")
            key = numbered(key, taken)
            out.append(
                Parameter(key, ParamRef(kind, spec.name), spec, spec.required, schemas.schema(spec))
            )
    return tuple(out)


def _summary(command: Command) -> str:
    text = command.description.strip() or "(no description)"
    if command.deprecated:
        text += " (deprecated)"
    if command.examples:
        stop = "" if text.endswith((".", "!", "?", ":")) else "."
        text += f"{stop} Example: `{command.examples[0]}`"
    return text


def _discrete(c: _Command, name: str) -> FlatTool:
    properties = {p.key: p.schema for p in c.parameters}
    required = [p.key for p in c.parameters if p.required]
    target = Target(
        c.tool.name,
        c.path,
        {p.key: p.ref for p in c.parameters},
        tuple(required),
    )
    return FlatTool(
        name=name,
        title=" ".join((c.tool.name, *c.path)),
        summary=_summary(c.command),
        safety=suffix(c.effects),
        effects=c.effects,
        input_schema=P.object_schema(properties, required),
        binding=Binding(name, {"": target}),
    )


def _grouped(group: list[_Command], name: str) -> FlatTool:
    """One tool for several commands of one parent: the union of their parameters (a key
    shared only where the parameter is the same), `action` required, the rest optional,
    and each action's own safety flags and required keys in the description."""
    first = group[0]
    parent = first.path[:-1]
    actions = [" ".join(c.path[len(parent) :]) for c in group]
    properties: dict[str, dict[str, Any]] = {
        ACTION: {"type": "string", "enum": actions, "description": "The command to run"}
    }
    owner: dict[str, tuple[ParamRef, dict[str, Any]]] = {}
    targets: dict[str, Target] = {}
    lines = []
    for action, c in zip(actions, group, strict=True):
        keys: dict[str, ParamRef] = {}
        required = []
        for p in c.parameters:
            schema = p.schema
            key = p.key
            if key == ACTION or (key in owner and owner[key] != (p.ref, schema)):
                key = P.property_key(f"{action}_{p.key}")
            owner.setdefault(key, (p.ref, schema))
            properties.setdefault(key, schema)
            keys[key] = p.ref
            if p.required:
                required.append(key)
        targets[action] = Target(c.tool.name, c.path, keys, tuple(required))
        needs = f" (requires: {', '.join(required)})" if required else ""
        lines.append(f"- {action}: {_summary(c.command)} {suffix(c.effects)}".rstrip() + needs)
    effects = combine([c.effects for c in group])
    parent_command = _parent(first.tool, parent)
    head = parent_command.description.strip() if parent_command else first.tool.description
    return FlatTool(
        name=name,
        title=" ".join((first.tool.name, *parent)),
        summary=f"{head}. Actions:\n" + "\n".join(lines),
        safety=suffix(effects),
        effects=effects,
        input_schema=P.object_schema(properties, [ACTION]),
        binding=Binding(name, targets),
    )


def _parent(tool: Tool, path: CommandPath) -> Command | None:
    node, command = tool.commands, None
    for word in path:
        command = node[word]
        node = command.commands
    return command
