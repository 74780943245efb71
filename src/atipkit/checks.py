"""Semantic checks: the rules of a valid ATIP document that JSON Schema cannot express.

They run on a schema-valid `Tool` and return `Problem`s with stable codes (listed in
docs/reference/problem-codes.md). Errors make a document invalid; warnings are advice that
`atip validate --strict` turns into failures.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from atipkit import schema
from atipkit.model import (
    UNSET,
    Argument,
    Authentication,
    Command,
    CommandPath,
    Effects,
    Option,
    Tool,
    UnsetType,
    count_commands,
    get_command,
    walk_commands,
)
from atipkit.problems import PathPart, Problem, error, json_path, warning
from atipkit.protocol import FEATURES, PROTOCOL_VERSION, needs_newer_agent
from atipkit.typetable import fits

MAX_ROOT_DESCRIPTION = 200
KNOWN_COST_ESTIMATES = frozenset({"none", "low", "medium", "high", "variable"})
KNOWN_AUTH_TYPES = frozenset({"token", "oauth", "api-key", "certificate", "none"})
_HASH_FILE = re.compile(r"(sha256-)?([0-9a-fA-F]{64})\.json")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")


def check_tool(tool: Tool, *, filename: str | None = None) -> list[Problem]:
    """Every semantic problem of a schema-valid document. `filename`, when given, is
    compared with `binary.hash` for files named by a hash (RFC 0.6 §4.5)."""
    problems: list[Problem] = []
    problems += _check_version(tool)
    problems += _check_identity(tool, filename)
    if len(tool.description) > MAX_ROOT_DESCRIPTION:
        problems.append(
            warning(
                "description.too-long",
                f"description is {len(tool.description)} characters; keep it within "
                f"{MAX_ROOT_DESCRIPTION} (RFC 0.6 §3.2)",
                "$.description",
            )
        )
    problems += _check_options(tool.global_options, ["globalOptions"], {})
    global_flags = {flag: opt.name for opt in tool.global_options for flag in opt.flags}
    problems += _check_auth(tool.authentication, ["authentication"])
    problems += _check_effects(tool.effects, ["effects"])
    cut = tool.filter.depth if tool.partial and tool.filter and tool.filter.depth else None
    for where, path, command, declared in _walk(tool):
        # at the cut depth of a depth-limited document, a group looks like a leaf
        at_cut = cut is not None and len(path) == cut
        problems += _check_command(where, path, command, declared or at_cut, global_flags)
    problems += _check_partial(tool)
    problems += _check_patterns(tool)
    problems += _check_compiled(tool)
    return problems


def _check_version(tool: Tool) -> list[Problem]:
    problems = []
    declared = tool.atip.protocol
    if declared.is_newer:
        problems.append(
            warning(
                "version.newer",
                f"ATIP {declared} is newer than {PROTOCOL_VERSION}, the version atipkit "
                "implements; fields it does not know are ignored",
                "$.atip",
            )
        )
    wanted = tool.atip.min_agent_version
    if wanted and needs_newer_agent(wanted):
        problems.append(
            warning(
                "version.agent-too-old",
                f"the document asks for an agent of ATIP {wanted} or later; atipkit "
                f"implements {PROTOCOL_VERSION}, so every call of this tool asks for "
                "confirmation",
                "$.atip.minAgentVersion",
            )
        )
    for index, feature in enumerate(tool.atip.features):
        where = json_path(["atip", "features", index])
        since = FEATURES.get(feature)
        if since is None:
            make = warning if declared.is_newer else error
            known = ", ".join(FEATURES)
            problems.append(
                make("features.unknown", f"unknown feature {feature!r}; known: {known}", where)
            )
        elif since > (declared.major, declared.minor):
            problems.append(
                warning(
                    "features.too-new",
                    f"feature {feature!r} appeared in ATIP {since[0]}.{since[1]}, but the "
                    f"document declares {declared}",
                    where,
                )
            )
    return problems


def _check_identity(tool: Tool, filename: str | None) -> list[Problem]:
    problems: list[Problem] = []
    binary = tool.binary
    if binary:
        if tool.name != binary.name:
            problems.append(
                error(
                    "binary.name-mismatch",
                    f"name {tool.name!r} differs from binary.name {binary.name!r}",
                    "$.name",
                )
            )
        if binary.version and tool.version != binary.version:
            problems.append(
                error(
                    "binary.version-mismatch",
                    f"version {tool.version!r} differs from binary.version {binary.version!r}",
                    "$.version",
                )
            )
        checksum = tool.trust and tool.trust.integrity and tool.trust.integrity.checksum
        if checksum and checksum.startswith("sha256:") and checksum != binary.hash:
            problems.append(
                error(
                    "binary.checksum-mismatch",
                    "trust.integrity.checksum names another binary than binary.hash",
                    "$.trust.integrity.checksum",
                )
            )
    if tool.trust:
        legacy, current = tool.trust.signature, tool.trust.shim_integrity
        if legacy and current and current.signature and current.signature != legacy:
            problems.append(
                error(
                    "trust.signature-conflict",
                    "trust.signature and trust.shimIntegrity.signature describe different signers",
                    "$.trust.signature",
                )
            )
    if filename is None:
        return problems
    match = _HASH_FILE.fullmatch(os.path.basename(filename))
    if match is None:
        return problems
    prefix, hex_digits = match.groups()
    if hex_digits != hex_digits.lower():
        problems.append(
            warning(
                "binary.filename-case",
                "the file is named by a hash in uppercase; registries look hashes up in "
                "lowercase only",
            )
        )
    elif binary and binary.hex != hex_digits:
        problems.append(
            error(
                "binary.hash-mismatch",
                f"binary.hash is sha256:{binary.hex} but the file is named for sha256:{hex_digits}",
                "$.binary.hash",
            )
        )
    elif not binary and not prefix:
        problems.append(
            error(
                "binary.missing",
                "a file named by a binary's hash must be a shim with binary.hash",
                "$",
            )
        )
    return problems


def _walk(tool: Tool) -> Iterator[tuple[list[PathPart], CommandPath, Command, bool]]:
    """Commands with their JSON location, argv path and whether any scope on the way
    declares effects."""

    def step(state: tuple[list[PathPart], bool], key: str, command: Command) -> Any:
        where, declared = state
        return [*where, "commands", key], declared or declares(command.effects)

    root: tuple[list[PathPart], bool] = ([], declares(tool.effects))
    for path, command, (where, declared) in walk_commands(tool, root, step):
        yield where, path, command, declared


def declares(effects: Effects | UnsetType) -> bool:
    """Whether an effects object states anything at all (extensions do not count)."""
    return bool(effects and msgspec.structs.replace(effects, extensions={}) != _NO_EFFECTS)


_NO_EFFECTS = Effects()


def _check_command(
    where: list[PathPart],
    path: CommandPath,
    command: Command,
    declared: bool,
    global_flags: dict[str, str],
) -> list[Problem]:
    problems: list[Problem] = []
    if where[-1] == "" and len(where) > 2:
        problems.append(
            error(
                "command.root-nested",
                "the root command '' may only appear in the top-level commands",
                json_path(where),
            )
        )
    if where[-1] == "" and command.commands:
        problems.append(
            error(
                "command.root-has-subcommands",
                "the root command '' cannot have subcommands: they would be top-level commands",
                json_path(where),
            )
        )
    if command.arguments:
        problems += _check_arguments(command.arguments, [*where, "arguments"])
    if command.options:
        problems += _check_options(command.options, [*where, "options"], global_flags)
    if command.authentication:
        problems += _check_auth(command.authentication, [*where, "authentication"])
    if command.effects:
        problems += _check_effects(command.effects, [*where, "effects"])
    if not command.commands and not declared:
        name = " ".join(path) or "(root)"
        problems.append(
            warning(
                "effects.missing",
                f"command {name!r} declares no effects; agents must assume the worst",
                json_path(where),
            )
        )
    return problems


def _duplicate_names(
    params: Sequence[Argument | Option], where: list[PathPart], code: str
) -> list[Problem]:
    """Parameters of one kind sharing a name: a tool call could not tell them apart."""
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for index, param in enumerate(params):
        if param.name in first:
            kind = "argument" if isinstance(param, Argument) else "option"
            problems.append(
                error(
                    code,
                    f"{kind} {param.name!r} is defined twice; first at "
                    f"{json_path([*where, first[param.name]])}",
                    json_path([*where, index, "name"]),
                )
            )
        first.setdefault(param.name, index)
    return problems


def _check_arguments(arguments: list[Argument], where: list[PathPart]) -> list[Problem]:
    problems = _duplicate_names(arguments, where, "arguments.duplicate-name")
    variadic: int | None = None
    optional: str | None = None
    for index, arg in enumerate(arguments):
        here = [*where, index]
        if arg.variadic:
            if variadic is not None:
                problems.append(
                    error(
                        "arguments.two-variadic",
                        f"only one argument may be variadic; {arguments[variadic].name!r} is too",
                        json_path([*here, "variadic"]),
                    )
                )
            variadic = index
        if not arg.required:
            optional = optional or arg.name
        elif optional is not None:
            problems.append(
                warning(
                    "arguments.required-after-optional",
                    f"required argument {arg.name!r} follows optional argument {optional!r}; "
                    "positions become ambiguous",
                    json_path(here),
                )
            )
        problems += _check_parameter(arg, here)
    return problems


def _check_options(
    options: list[Option], where: list[PathPart], global_flags: dict[str, str]
) -> list[Problem]:
    problems = _duplicate_names(options, where, "options.duplicate-name")
    flags: dict[str, str] = {}
    for index, opt in enumerate(options):
        here = [*where, index]
        for flag in opt.flags:
            if flag in flags:
                owner = flags[flag]
                problems.append(
                    error(
                        "flags.duplicate",
                        f"flag {flag!r} is also used by option {owner!r}"
                        if owner != opt.name
                        else f"flag {flag!r} is listed twice",
                        json_path([*here, "flags"]),
                    )
                )
            elif flag in global_flags:
                problems.append(
                    warning(
                        "flags.shadows-global",
                        f"flag {flag!r} shadows global option {global_flags[flag]!r}",
                        json_path([*here, "flags"]),
                    )
                )
            flags.setdefault(flag, opt.name)
        problems += _check_parameter(opt, here)
    names = {opt.name for opt in options}
    for index, opt in enumerate(options):
        for other in opt.exclusive or []:
            if other not in names:
                problems.append(
                    error(
                        "options.exclusive-unknown",
                        f"exclusive names {other!r}, which is not an option of this command",
                        json_path([*where, index, "exclusive"]),
                    )
                )
    return problems


def _check_parameter(param: Argument | Option, where: list[PathPart]) -> list[Problem]:
    problems: list[Problem] = []
    kind = "argument" if isinstance(param, Argument) else "option"
    if not param.description:
        problems.append(
            warning(
                "description.missing",
                f"{kind} {param.name!r} has no description; models guess without one",
                json_path(where),
            )
        )
    if param.enum:
        wrong = [v for v in param.enum if not fits(v, param.type)]
        if wrong and param.type != "array":
            problems.append(
                error(
                    "enum.type",
                    f"enum value {wrong[0]!r} is not of type {param.type!r}",
                    json_path([*where, "enum"]),
                )
            )
    if param.default is UNSET or param.default is None:
        return problems
    values = (
        param.default if param.variadic and isinstance(param.default, list) else [param.default]
    )
    for value in values:
        if not fits(value, param.type):
            problems.append(
                error(
                    "default.type",
                    f"default {value!r} is not of type {param.type!r}",
                    json_path([*where, "default"]),
                )
            )
            break
        if param.enum and value not in param.enum:
            problems.append(
                error(
                    "default.enum",
                    f"default {value!r} is not one of the enum values",
                    json_path([*where, "default"]),
                )
            )
            break
    return problems


COMPILE_BUDGET_SECONDS = 0.5
"""How long compiling one document's patterns and parameter schemas may take. As people
write them each takes microseconds; a hostile one takes up to 50 ms (`.{65535}` compiles
to megabytes before the engine's size limit refuses it), so 16 KB of them took 10 s, and
a tool on PATH could stall `atip scan` for hours. The rest are left to the calls that use
them, which compile their own in full, with one warning."""


def _check_compiled(tool: Tool) -> list[Problem]:
    """Every parameter's `pattern` and `schema` compiled (`_check_parameter_schemas`),
    within `COMPILE_BUDGET_SECONDS`."""
    problems: list[Problem] = []
    deadline = time.monotonic() + COMPILE_BUDGET_SECONDS
    left = 0
    for where, param in _compiled_parameters(tool):
        if left or time.monotonic() > deadline:
            left += 1
            continue
        problems += _check_parameter_schemas(param, where)
    if left:
        problems.append(
            warning(
                "pattern.unchecked",
                f"{left} parameters' patterns or schemas were not compiled: compiling this "
                f"document's took over {COMPILE_BUDGET_SECONDS:g} s; a call checks each it "
                "uses in full",
                "$",
            )
        )
    return problems


def _compiled_parameters(tool: Tool) -> Iterator[tuple[list[PathPart], Argument | Option]]:
    """The parameters with a `pattern` (arguments only) or a `schema`: few have either."""
    for i, opt in enumerate(tool.global_options):
        if opt.schema:
            yield ["globalOptions", i], opt
    for where, _path, command, _declared in _walk(tool):
        for i, arg in enumerate(command.arguments or ()):
            if arg.pattern or arg.schema:
                yield [*where, "arguments", i], arg
        for i, opt in enumerate(command.options or ()):
            if opt.schema:
                yield [*where, "options", i], opt


def _check_parameter_schemas(param: Argument | Option, where: list[PathPart]) -> list[Problem]:
    """An argument's `pattern` must be a regular expression, as JSON Schema reads it: a
    compile hands it to the model provider and `atip run` checks values against it, so a
    document with one that is not is invalid. A parameter's `schema` that no validator
    accepts is a warning: MCP servers send odd schemas (`"description": 42`) that are
    kept as they are; the values of such a parameter go to the server unchecked."""
    problems: list[Problem] = []
    pattern = getattr(param, "pattern", UNSET)
    if pattern:
        try:
            schema.pattern_validator(pattern)
        except ValueError:
            problems.append(
                error(
                    "pattern.invalid",
                    f"pattern {pattern!r} is not a regular expression (ECMA 262, as JSON "
                    "Schema reads it), or one too large to compile (over 10 MB as an "
                    "automaton): no value can be checked against it",
                    json_path([*where, "pattern"]),
                )
            )
    if param.schema:
        try:
            schema.parameter_validator(param.schema)
        except ValueError as exc:
            problems.append(
                warning(
                    "parameter-schema.invalid",
                    f"schema is not a JSON Schema a validator accepts ({schema.first_line(exc)}): "
                    "values are not checked against it, and a model provider may refuse it",
                    json_path([*where, "schema"]),
                )
            )
    return problems


def _check_auth(auth: Authentication | UnsetType, where: list[PathPart]) -> list[Problem]:
    if not auth:
        return []
    return [
        warning(
            "auth.unknown-type",
            f"authentication type {method.type!r} is none of {', '.join(sorted(KNOWN_AUTH_TYPES))}",
            json_path([*where, "methods", index, "type"]),
        )
        for index, method in enumerate(auth.methods)
        if method.type not in KNOWN_AUTH_TYPES
    ]


def _check_effects(effects: Effects | UnsetType, where: list[PathPart]) -> list[Problem]:
    if not effects or not effects.cost or not effects.cost.estimate:
        return []
    if effects.cost.estimate in KNOWN_COST_ESTIMATES:
        return []
    return [
        warning(
            "effects.cost-estimate",
            f"cost estimate {effects.cost.estimate!r} is none of "
            f"{', '.join(sorted(KNOWN_COST_ESTIMATES))}",
            json_path([*where, "cost", "estimate"]),
        )
    ]


def _check_partial(tool: Tool) -> list[Problem]:
    problems: list[Problem] = []
    stated = {
        "filter": tool.filter,
        "totalCommands": tool.total_commands,
        "includedCommands": tool.included_commands,
        "omitted": tool.omitted,
    }
    if not tool.partial:
        problems += [
            error(
                "partial.inconsistent",
                f"{key} is only meaningful with partial: true",
                json_path([key]),
            )
            for key, value in stated.items()
            if value is not UNSET
        ]
        return problems
    if not tool.omitted:
        problems.append(
            warning(
                "partial.no-omitted",
                "partial document without omitted; agents must treat missing commands as unknown",
                "$",
            )
        )
    included = count_commands(tool)
    if tool.included_commands is not UNSET and tool.included_commands != included:
        problems.append(
            error(
                "partial.included-count",
                f"includedCommands is {tool.included_commands} but the document has {included}",
                "$.includedCommands",
            )
        )
    if tool.total_commands is not UNSET and tool.total_commands < included:
        problems.append(
            error(
                "partial.total-count",
                f"totalCommands ({tool.total_commands}) is less than the {included} "
                "commands present",
                "$.totalCommands",
            )
        )
    reason = tool.omitted.reason if tool.omitted else None
    flt = tool.filter or None
    if reason == "filtered" and not (flt and flt.commands):
        problems.append(
            error(
                "partial.filter-missing",
                "omitted.reason is 'filtered' but filter.commands is empty",
                "$.omitted.reason",
            )
        )
    if reason == "depth-limited" and not (flt and flt.depth):
        problems.append(
            error(
                "partial.filter-missing",
                "omitted.reason is 'depth-limited' but filter.depth is not set",
                "$.omitted.reason",
            )
        )
    if flt and flt.depth:
        deepest = _depth(tool.commands)
        if deepest > flt.depth:
            problems.append(
                error(
                    "partial.too-deep",
                    f"filter.depth is {flt.depth} but commands nest {deepest} levels deep",
                    "$.filter.depth",
                )
            )
    if flt and flt.commands:
        problems += [
            warning(
                "partial.filter-unknown",
                f"filter.commands names {name!r}, which is not a command of the document",
                json_path(["filter", "commands", index]),
            )
            for index, name in enumerate(flt.commands)
            if not _exists(tool, name)
        ]
    return problems


def _exists(tool: Tool, path: str) -> bool:
    try:
        get_command(tool, path)
    except KeyError:
        return False
    return True


def _depth(commands: dict[str, Command]) -> int:
    deepest, stack = 0, [(commands, 1)]
    while stack:
        level, depth = stack.pop()
        for command in level.values():
            deepest = max(deepest, depth)
            stack.append((command.commands, depth + 1))
    return deepest


def _check_patterns(tool: Tool) -> list[Problem]:
    problems: list[Problem] = []
    for index, pattern in enumerate(tool.patterns):
        declared = set(pattern.variables)
        for step_index, step in enumerate(pattern.steps):
            missing = [v for v in _PLACEHOLDER.findall(step.command) if v not in declared]
            if not missing:
                continue
            make = error if pattern.executable else warning
            problems.append(
                make(
                    "pattern.undeclared-variable",
                    f"placeholder {{{missing[0]}}} is not declared in variables"
                    + (
                        "; an executable pattern must declare every variable"
                        if pattern.executable
                        else ""
                    ),
                    json_path(["patterns", index, "steps", step_index, "command"]),
                )
            )
    return problems
