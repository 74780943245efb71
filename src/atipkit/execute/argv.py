"""From a tool call to the exact argv that runs it (RFC 0.6 §6.1). Never a shell.

Order: the executable, the global options (before the command path: `git -C dir`,
`terraform -chdir=dir`), the command path, the command's options in declared order, then
the arguments in order, variadic ones expanded. Booleans appear only when true; variadic
options repeat their flag; a long option whose value starts with `-` is written
`--opt=value` and a short one `-ovalue`, so the value cannot be read as an option; `--`
precedes the arguments when one of them starts with `-`. Each value is one argv element,
so nothing a model sends can add an option or split into two.

Values are checked first against the metadata (type, enum, pattern, required); every
problem names the parameter, what was received, what was expected and a valid example,
and renders as an ATDF enriched error for the model.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from typing import Any

import msgspec

from atipkit import _jsontext, schema
from atipkit.bridge.calls import ToolCall
from atipkit.bridge.flatten import ParamRef, Target
from atipkit.errors import AtipError
from atipkit.model import UNSET, Argument, CommandPath, Option, Tool, get_command

_EXAMPLES = {
    "string": "text",
    "file": "input.txt",
    "directory": "./",
    "url": "https://example.com",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": ["value"],
    "enum": None,
}


class ArgumentProblem(msgspec.Struct, frozen=True):
    """What is wrong with one parameter of a call, and how to fix it."""

    parameter: str
    message: str
    received: Any
    expected: str
    example: Any


class InvalidArguments(AtipError, ValueError):
    """A call whose values do not fit the command; `problems` says what to fix."""

    def __init__(self, tool_name: str, problems: list[ArgumentProblem]) -> None:
        self.tool_name = tool_name
        self.problems = problems
        super().__init__("; ".join(f"{p.parameter}: {p.message}" for p in problems))

    def to_atdf(self, instance: str | None = None) -> dict[str, Any]:
        """The ATDF enriched error response (schema: spec/atdf/error_atdf.json)."""
        instance = instance or f"urn:uuid:{uuid.uuid4()}"
        return {
            "status": "error",
            "errors": [
                {
                    "type": "https://atip.dev/errors/invalid-argument",
                    "title": f"Invalid value for {p.parameter}",
                    "detail": p.message,
                    "instance": instance,
                    "tool_name": self.tool_name,
                    "parameter_name": p.parameter,
                    "suggested_value": None if p.example is None else _text(p.example),
                    "context": {
                        "received": p.received,
                        "expected": p.expected,
                        "example": p.example,
                    },
                    "code": "invalid-argument",
                }
                for p in self.problems
            ],
        }


class Invocation(msgspec.Struct, frozen=True):
    """Exactly what will run: argv and the extra environment for options passed that way."""

    tool: str
    path: CommandPath
    argv: list[str]
    env: dict[str, str] = {}


def build_argv(
    tool: Tool,
    path: CommandPath,
    values: Mapping[ParamRef, Any],
    *,
    executable: str | None = None,
    via_env: Collection[str] = (),
) -> Invocation:
    """The invocation of command `path` of `tool` with `values`; raises `InvalidArguments`.

    Options named in `via_env` that declare an `envVar` are passed in the environment
    instead of argv (for secrets that should not appear in process listings)."""
    command = get_command(tool, path)
    specs: dict[ParamRef, Argument | Option] = {}
    for arg in command.arguments:
        specs[ParamRef("argument", arg.name)] = arg
    for opt in command.options:
        specs[ParamRef("option", opt.name)] = opt
    for opt in tool.global_options:
        specs.setdefault(ParamRef("global", opt.name), opt)
    problems = [_unknown(ref.name, ref.kind) for ref in values if ref not in specs]
    problems += [
        p for ref, spec in specs.items() if (p := _check(spec, values.get(ref, UNSET))) is not None
    ]
    if problems:
        raise InvalidArguments(" ".join((tool.name, *path)), problems)

    env: dict[str, str] = {}
    argv = [executable or tool.name]
    for opt in tool.global_options:
        ref = ParamRef("global", opt.name)
        if ref in values:
            argv += _render_option(opt, values[ref], via_env, env)
    argv += list(path)
    for opt in command.options:
        ref = ParamRef("option", opt.name)
        if ref in values:
            argv += _render_option(opt, values[ref], via_env, env)
    positionals: list[str] = []
    for arg in command.arguments:
        ref = ParamRef("argument", arg.name)
        if ref in values:
            value = values[ref]
            items = value if isinstance(value, list) else [value]
            positionals += [_text(v) for v in items]
    if any(p.startswith("-") for p in positionals):
        argv.append("--")
    argv += positionals
    return Invocation(tool=tool.name, path=path, argv=argv, env=env)


def call_problems(tool: Tool, call: ToolCall) -> InvalidArguments | None:
    """What is wrong with the arguments of a call that named its command but did not fit
    it (unknown or missing parameters), with every other problem of its values: the same
    error as for a bad value, so the model reads one kind of answer (issue 24)."""
    if call.path is None or not (call.unknown or call.missing):
        return None
    problems = [_unknown(key, received=call.arguments.get(key)) for key in call.unknown]
    try:
        build_argv(tool, call.path, call.values)
    except InvalidArguments as exc:
        problems += exc.problems
    return InvalidArguments(" ".join((tool.name, *call.path)), problems) if problems else None


def _render_option(
    opt: Option, value: Any, via_env: Collection[str], env: dict[str, str]
) -> list[str]:
    if opt.type == "boolean" and not opt.variadic:
        return [_flag(opt)] if value is True else []
    if opt.name in via_env and opt.env_var:
        env[opt.env_var] = ",".join(map(_text, value)) if isinstance(value, list) else _text(value)
        return []
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        out += _pair(opt, _text(item))
    return out


def _flag(opt: Option) -> str:
    """The flag to write: the first long one (`--x`, or Go-style `-xy`), else the first."""
    return next((f for f in opt.flags if len(f) > 2), opt.flags[0])


def _pair(opt: Option, text: str) -> list[str]:
    flag = _flag(opt)
    if not text.startswith("-"):
        return [flag, text]
    return [f"{flag}={text}"] if len(flag) > 2 else [f"{flag}{text}"]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


# -- checking values ------------------------------------------------------------------------


def _unknown(name: str, kind: str = "parameter", received: Any = None) -> ArgumentProblem:
    return ArgumentProblem(
        name, f"the command has no {kind} {name!r}", received, "absent (no such parameter)", None
    )


def _example(spec: Argument | Option) -> Any:
    if spec.enum:
        return spec.enum[0]
    if spec.default is not UNSET and spec.default is not None:
        return spec.default
    base = _EXAMPLES[spec.type]
    return [base] if spec.variadic and not isinstance(base, list) else base


def _expected(spec: Argument | Option) -> str:
    kind = {
        "file": "a file path",
        "directory": "a directory path",
        "url": "a URL",
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "array": "a list of strings",
        "enum": "one of the allowed values",
    }[spec.type]
    if spec.enum:
        kind = "one of " + ", ".join(map(repr, spec.enum))
    return f"a list of {kind}" if spec.variadic and spec.type != "array" else kind


def _check(spec: Argument | Option, value: Any) -> ArgumentProblem | None:
    def problem(message: str, received: Any = value) -> ArgumentProblem:
        return ArgumentProblem(
            spec.name,
            message,
            None if received is UNSET else received,
            _expected(spec),
            _example(spec),
        )

    if value is UNSET or value is None:
        return problem("is required") if spec.required else None
    items = value if spec.variadic or spec.type == "array" else [value]
    if (spec.variadic or spec.type == "array") and not isinstance(value, list):
        items = [value]  # one value for a list parameter: taken as a list of one
    if spec.variadic and not items:
        return problem("needs at least one value") if spec.required else None
    for item in items:
        if not _fits(spec, item):
            return problem(f"{item!r} is not {_expected(spec)}")
        if isinstance(item, str) and "\x00" in item:
            return problem("contains a NUL byte, which no command line can carry")
        if isinstance(item, str) and _jsontext.lone_surrogate(item) is not None:
            return problem(
                "contains a lone UTF-16 surrogate (half a pair, no character), which no "
                "command line can carry",
                item.encode("utf-8", "backslashreplace").decode(),  # shown, not echoed
            )
        if spec.enum and item not in spec.enum:
            return problem(f"{item!r} is not one of {', '.join(map(repr, spec.enum))}")
        pattern = getattr(spec, "pattern", UNSET)
        if pattern and isinstance(item, str):
            try:
                matcher = schema.pattern_validator(pattern)
            except ValueError:
                return problem(
                    f"cannot be checked: the tool's metadata gives the pattern {pattern!r}, "
                    "which is not a regular expression or too large to compile (atip "
                    "validate reports it)"
                )
            if not matcher.is_valid(item):
                return problem(f"{item!r} does not match the pattern {pattern!r}")
    return None


def _fits(spec: Argument | Option, item: Any) -> bool:
    kind = spec.type
    if kind == "boolean":
        return isinstance(item, bool)
    if isinstance(item, bool):
        return False
    if kind == "integer":
        return isinstance(item, int) or (isinstance(item, float) and item.is_integer())
    if kind == "number":
        return isinstance(item, int | float)
    if kind == "enum":
        return isinstance(item, str | int | float)
    return isinstance(item, str)


# -- reading a command line back ------------------------------------------------------------


class UnknownCommandLine(AtipError, ValueError):
    """Words that do not form a command of the tool as its metadata describes it."""


def parse_argv(
    tool: Tool, words: list[str], *, convert: bool = True
) -> tuple[CommandPath, dict[ParamRef, Any]]:
    """The command and values that `words` (after the tool's name) stand for, read the way
    `build_argv` writes them (getopt conventions: `--opt value`, `--opt=value`,
    `-ovalue`, `--`). With `convert=False` values stay text. Raises `UnknownCommandLine`
    for what the metadata does not know."""
    values: dict[ParamRef, Any] = {}
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "--":
        nxt = _take(tool.global_options, "global", words, i, values, convert)
        if nxt is None:
            break
        i = nxt
    path: tuple[str, ...] = ()
    node = tool.commands
    while i < len(words) and words[i] in node and words[i] != "":
        path = (*path, words[i])
        node = node[words[i]].commands
        i += 1
    try:
        command = get_command(tool, path)
    except KeyError:
        raise UnknownCommandLine(
            f"{tool.name} has no command {' '.join(words[: i + 1])!r}"
        ) from None
    positionals: list[str] = []
    dashdash = False
    while i < len(words):
        word = words[i]
        if not dashdash and word == "--":
            dashdash, i = True, i + 1
        elif not dashdash and word.startswith("-") and word != "-":
            nxt = _take(command.options, "option", words, i, values, convert)
            if nxt is None:
                nxt = _take(tool.global_options, "global", words, i, values, convert)
            if nxt is None:
                raise UnknownCommandLine(
                    f"unknown option {word!r} for {' '.join((tool.name, *path))!r}"
                )
            i = nxt
        else:
            positionals.append(word)
            i += 1
    for n, arg in enumerate(command.arguments):
        if not positionals:
            break
        if arg.variadic:
            keep = len(command.arguments) - n - 1
            split = max(len(positionals) - keep, 0)
            taken, positionals = positionals[:split], positionals[split:]
            values[ParamRef("argument", arg.name)] = [_value(arg, t, convert) for t in taken]
        else:
            values[ParamRef("argument", arg.name)] = _value(arg, positionals.pop(0), convert)
    if positionals:
        raise UnknownCommandLine(f"unexpected argument(s) {positionals!r}")
    return path, values


def example_call(tool: Tool, target: Target, line: str) -> dict[str, Any] | None:
    """The arguments of a tool call (keyed as `target`'s schema keys them) that an ATIP
    example command line stands for, or None when the line is not a call of exactly that
    command as `parse_argv` reads command lines: another tool or command, an unknown flag,
    a value of the wrong type, not shell words. Exporters give an example only where it is
    true (ATDF, the Tool Discovery Protocol)."""
    import os
    import shlex

    try:
        words = shlex.split(line, comments=True)  # `tool sub  # what it does`
        if not words or os.path.basename(words[0]) != tool.name:
            return None
        path, values = parse_argv(tool, words[1:])
    except ValueError:  # an open quote (shlex), or not a command line (UnknownCommandLine)
        return None
    keys = {ref: key for key, ref in target.params.items()}
    if path != target.path or not set(values) <= set(keys):
        return None
    return {keys[ref]: value for ref, value in values.items()}


def value_of(spec: Argument | Option, text: str) -> Any:
    """A word of a command line as the parameter's type (`UnknownCommandLine` if not)."""
    return _value(spec, text)


def _take(
    options: list[Option],
    kind: str,
    words: list[str],
    i: int,
    values: dict[ParamRef, Any],
    convert: bool,
) -> int | None:
    word = words[i]
    for opt in options:
        for flag in opt.flags:
            if word == flag:
                if opt.type == "boolean" and not opt.variadic:
                    values[ParamRef(kind, opt.name)] = True  # type: ignore[arg-type]  # kind: argument/option/global
                    return i + 1
                if i + 1 >= len(words):
                    raise UnknownCommandLine(f"{flag} needs a value")
                text, nxt = words[i + 1], i + 2
            elif len(flag) > 2 and word.startswith(flag + "="):
                text, nxt = word[len(flag) + 1 :], i + 1
            elif len(flag) == 2 and word.startswith(flag) and len(word) > 2:
                text, nxt = word[2:], i + 1
            else:
                continue
            ref = ParamRef(kind, opt.name)  # type: ignore[arg-type]  # kind: argument/option/global
            value = _value(opt, text, convert)
            if opt.variadic or opt.type == "array":  # `--tag a --tag b`, as build_argv writes
                values.setdefault(ref, []).append(value)
            else:
                values[ref] = value
            return nxt
    return None


def _value(spec: Argument | Option, text: str, convert: bool = True) -> Any:
    if not convert:
        return text
    try:
        if spec.type == "integer":
            return int(text)
        if spec.type == "number":
            return float(text)
    except ValueError:
        raise UnknownCommandLine(f"{spec.name}: {text!r} is not a {spec.type}") from None
    return text
