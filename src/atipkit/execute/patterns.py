"""Running executable patterns (RFC 0.6 §3.9) as safely as single calls.

Each step is split into words with shlex *before* variables are substituted, and each
variable fills the words it stands in, so a value can never add a word, an option or a
command. The words are then read back through the tool's metadata into a command and
values, so every step is checked by the policy like any call, and runs through the same
executor. A pattern that is not `executable` is never run; a step that fails stops it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from atipkit.bridge.calls import ToolCall
from atipkit.bridge.flatten import ParamRef
from atipkit.errors import AtipError
from atipkit.execute.argv import UnknownCommandLine, parse_argv, value_of
from atipkit.execute.executor import Executor, Outcome
from atipkit.model import UNSET, Argument, Option, Pattern, Tool, get_command

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")


class PatternError(AtipError, ValueError):
    """A pattern that cannot be run: not executable, a variable missing or wrong, or a
    step that is not a command the metadata knows."""


def find_pattern(tool: Tool, name: str) -> Pattern:
    for pattern in tool.patterns:
        if pattern.name == name:
            return pattern
    raise PatternError(f"{tool.name} has no pattern {name!r}")


def plan(
    pattern: Pattern, variables: Mapping[str, Any], tools: Mapping[str, Tool]
) -> list[ToolCall]:
    """The steps of `pattern` as calls, variables substituted word by word and checked."""
    if not pattern.executable:
        raise PatternError(f"pattern {pattern.name!r} is advisory (executable: false)")
    values = _variables(pattern, variables)
    steps = []
    for index, step in enumerate(pattern.steps):
        try:
            words = shlex.split(step.command)
        except ValueError as exc:
            raise PatternError(f"step {index + 1}: {exc}") from None
        if not words or words[0] not in tools:
            raise PatternError(
                f"step {index + 1}: {words[0] if words else ''!r} is not a known tool"
            )
        tool = tools[words[0]]
        # Read the step with its placeholders still in: the author's text alone decides
        # which word is an option and which a value. Then fill the values in.
        marked = [_PLACEHOLDER.sub(lambda m: _mark(m.group(1)), w) for w in words[1:]]
        try:
            path, raw = parse_argv(tool, marked, convert=False)
            parsed = {ref: _fill(tool, path, ref, value, values) for ref, value in raw.items()}
        except UnknownCommandLine as exc:
            raise PatternError(f"step {index + 1}: {exc}") from None
        steps.append(
            ToolCall(
                id=f"{pattern.name}:{index + 1}",
                index=index,
                name=" ".join((tool.name, *path)),
                arguments={},
                tool=tool.name,
                path=path,
                values=parsed,
            )
        )
    return steps


_MARK = re.compile("\x00([A-Za-z_][A-Za-z0-9_-]*)\x00")


def _mark(name: str) -> str:
    """A stand-in for a placeholder that no parser can take for an option."""
    return f"\x00{name}\x00"


def _fill(
    tool: Tool, path: tuple[str, ...], ref: ParamRef, raw: Any, values: Mapping[str, str]
) -> Any:
    spec = _spec(tool, path, ref)
    if spec is None:  # a flag: `True`
        return raw
    if isinstance(raw, list):
        return [_fill_one(spec, item, values) for item in raw]
    return _fill_one(spec, raw, values)


def _fill_one(spec: Argument | Option, raw: Any, values: Mapping[str, str]) -> Any:
    if not isinstance(raw, str):
        return raw
    if (
        "\x00" in raw
        and not _MARK.fullmatch(raw)
        and spec.type not in ("string", "file", "directory", "url")
    ):
        raise UnknownCommandLine(f"{spec.name}: a variable can only be the whole value")
    text = _MARK.sub(lambda m: values[m.group(1)], raw)
    return value_of(spec, text)


def _spec(tool: Tool, path: tuple[str, ...], ref: ParamRef) -> Argument | Option | None:
    command = get_command(tool, path)
    pools: dict[str, Sequence[Argument | Option]] = {
        "argument": command.arguments,
        "option": command.options,
        "global": tool.global_options,
    }
    spec = next((s for s in pools[ref.kind] if s.name == ref.name), None)
    if isinstance(spec, Option) and spec.type == "boolean" and not spec.variadic:
        return None
    return spec


def run_pattern(
    executor: Executor, pattern: Pattern, variables: Mapping[str, Any], *, dry_run: bool = False
) -> list[Outcome]:
    """Run the steps in order through `executor`; stop after the first that fails."""
    outcomes = []
    for call in plan(pattern, variables, executor.tools):
        outcome = executor.execute(call, dry_run=dry_run)
        outcomes.append(outcome)
        if outcome.is_error:
            break
    return outcomes


def _variables(pattern: Pattern, given: Mapping[str, Any]) -> dict[str, str]:
    used = {m for step in pattern.steps for m in _PLACEHOLDER.findall(step.command)}
    undeclared = sorted(used - set(pattern.variables))
    if undeclared:
        raise PatternError(f"undeclared variable(s): {', '.join(undeclared)}")
    unknown = sorted(set(given) - set(pattern.variables))
    if unknown:
        raise PatternError(f"unknown variable(s): {', '.join(unknown)}")
    out = {}
    for name, spec in pattern.variables.items():
        value = given.get(name, spec.default)
        if value is UNSET or value is None:
            if name in used:
                raise PatternError(f"variable {name!r} is required")
            continue
        ok = {
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, int | float) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
        }.get(spec.type, isinstance(value, str))
        if not ok:
            raise PatternError(f"variable {name!r}: {value!r} is not a {spec.type}")
        if spec.enum and value not in spec.enum:
            raise PatternError(f"variable {name!r}: {value!r} is not one of {spec.enum}")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if "\x00" in text:
            raise PatternError(f"variable {name!r} contains a NUL byte")
        out[name] = text
    return out
