"""The tool calls an ATIP command's example lines stand for, as a manifest's examples.

ATIP examples are command lines (`gh pr create --title x`); TDP examples are inputs
(`{"title": "x"}`). Reading one into the other is a small command-line parser over the
command's own flags and arguments, strict on purpose: a line that is not exactly one
valid call (an unknown flag, a placeholder where a number goes) gives no example, so
every example a manifest shows is true.
"""

from __future__ import annotations

import math
import shlex
from typing import TYPE_CHECKING, Any

from atipkit.model import Tool, get_command

if TYPE_CHECKING:
    from atipkit.bridge.flatten import Target
    from atipkit.model import Option

_BAD = object()


def example_input(
    line: str, tool: Tool, target: Target, schema: dict[str, Any]
) -> dict[str, Any] | None:
    """The tool call an ATIP example command line stands for, or None when the line
    cannot be read as exactly one call of this command (an unknown flag, bundled short
    flags, a value of the wrong type, a placeholder where a number goes) or the call
    does not satisfy the parameter schema: an example is given only where it is true."""
    from atipkit.bridge.flatten import ParamRef

    try:
        words = shlex.split(line)
    except ValueError:
        return None
    head = [tool.name, *target.path]
    if words[: len(head)] != head:
        return None
    command = get_command(tool, target.path)
    keys = {ref: key for key, ref in target.params.items()}
    flags: dict[str, tuple[str, Option]] = {}
    for kind, specs in (("option", command.options), ("global", tool.global_options)):
        for spec in specs:
            key = keys.get(ParamRef(kind, spec.name))  # type: ignore[arg-type]
            if key is not None:
                for flag in spec.flags:
                    flags.setdefault(flag, (key, spec))
    positional = [
        (keys[ParamRef("argument", a.name)], a)
        for a in command.arguments
        if ParamRef("argument", a.name) in keys
    ]
    values: dict[str, Any] = {}
    rest, index, position, only_positional = words[len(head) :], 0, 0, False
    while index < len(rest):
        word = rest[index]
        index += 1
        if not only_positional and word == "--":
            only_positional = True
            continue
        if not only_positional and word.startswith("-") and len(word) > 1 and not _numeric(word):
            flag, eq, inline = word.partition("=")
            if flag not in flags:
                return None
            key, spec = flags[flag]
            if spec.type == "boolean":
                value = _typed(inline, "boolean", None) if eq else True
            else:
                if eq:
                    raw = inline
                elif index < len(rest):
                    raw, index = rest[index], index + 1
                else:
                    return None
                value = _typed(raw, spec.type, spec.enum)
            if value is _BAD or not _store(
                values, key, value, spec.variadic or spec.type == "array"
            ):
                return None
            continue
        if position >= len(positional):
            return None
        key, arg = positional[position]
        value = _typed(word, arg.type, arg.enum)
        if value is _BAD or not _store(values, key, value, arg.variadic or arg.type == "array"):
            return None
        if not arg.variadic:
            position += 1
    try:
        import jsonschema_rs

        return values if jsonschema_rs.is_valid(schema, values) else None
    except (ValueError, jsonschema_rs.ValidationError):  # a schema it cannot compile
        return None


def _numeric(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def _typed(raw: str, atip_type: str, enum: list[Any] | Any) -> Any:
    value: Any = raw
    if atip_type == "integer":
        try:
            value = int(raw)
        except ValueError:
            return _BAD
    elif atip_type == "number":
        try:
            value = int(raw) if raw.lstrip("-").isdigit() else float(raw)
        except ValueError:
            return _BAD
        if isinstance(value, float) and not math.isfinite(value):
            return _BAD
    elif atip_type == "boolean":
        value = {"true": True, "false": False}.get(raw.lower(), _BAD)
    if enum and atip_type != "array" and value not in enum:
        return _BAD
    return value


def _store(values: dict[str, Any], key: str, value: Any, many: bool) -> bool:
    if many:
        values.setdefault(key, []).append(value)
        return True
    if key in values:
        return False
    values[key] = value
    return True
