"""Tool call → argv, proven by parsing it back with a reference parser built from the same
metadata (getopt semantics: `--flag value`, `--flag=value`, `-fvalue`, `--`)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import atipkit
from atipkit.bridge import ParamRef
from atipkit.execute import InvalidArguments, build_argv
from atipkit.model import Argument, Option, Tool
from tests.helpers import EXAMPLES, FIXTURES

DOCS = [
    atipkit.load(p)
    for p in [
        FIXTURES / "rfc" / "rfc06-14.1-gh.json",
        FIXTURES / "rfc" / "rfc01-8.1-gh.json",
        FIXTURES / "rfc" / "rfc01-8.2-kubectl.json",
        FIXTURES / "rfc" / "rfc01-8.3-terraform.json",
        EXAMPLES / "shims" / next((EXAMPLES / "shims").glob("*.json")).name,
    ]
]
COMMANDS = [
    (tool, path)
    for tool in DOCS
    for path, command in atipkit.iter_commands(tool)
    if not command.commands
]
INJECTIONS = [
    "--output=/etc/passwd",
    "-rf",
    "$(id)",
    "`id`",
    ";",
    "a; rm -rf /",
    "\n-x",
    "--",
    "-",
    "'",
    '"',
    "--force",
    "-o",
    "a b",
    "*",
    "~",
    "\\",
]


class ParseError(Exception):
    pass


def parse(tool: Tool, path: tuple[str, ...], argv: list[str]) -> dict[ParamRef, Any]:
    """An independent reading of argv: what a getopt-style program would see."""
    command = atipkit.get_command(tool, path)
    tokens = argv[1:]
    values: dict[ParamRef, Any] = {}

    def take(options: list[Option], kind: str, i: int) -> int | None:
        token = tokens[i]
        for opt in options:
            ref = ParamRef(kind, opt.name)
            for flag in opt.flags:
                value: Any
                if token == flag:
                    if opt.type == "boolean":
                        values[ref] = True
                        return i + 1
                    if i + 1 >= len(tokens):
                        raise ParseError(f"{flag} needs a value")
                    value, nxt = tokens[i + 1], i + 2
                elif token.startswith(flag + "=") and len(flag) > 2:
                    value, nxt = token[len(flag) + 1 :], i + 1
                elif len(flag) == 2 and token.startswith(flag) and len(token) > 2:
                    value, nxt = token[2:], i + 1
                else:
                    continue
                value = convert(opt, value)
                if opt.variadic:
                    values.setdefault(ref, []).append(value)
                else:
                    values[ref] = value
                return nxt
        return None

    i = 0
    while i < len(tokens) and tokens[i].startswith("-"):  # globals before the path
        nxt = take(tool.global_options, "global", i)
        if nxt is None:
            break  # not a global: the command's own (the root command has no path words)
        i = nxt
    for word in path:
        if i >= len(tokens) or tokens[i] != word:
            raise ParseError(f"expected command word {word!r}")
        i += 1
    positionals: list[str] = []
    dashdash = False
    while i < len(tokens):
        token = tokens[i]
        if not dashdash and token == "--":
            dashdash, i = True, i + 1
        elif not dashdash and token.startswith("-") and token != "-":
            nxt = take(command.options, "option", i)
            if nxt is None:
                raise ParseError(f"unknown option {token!r}")
            i = nxt
        else:
            positionals.append(token)
            i += 1
    for n, arg in enumerate(command.arguments):
        if not positionals:
            break
        if arg.variadic:
            rest = len(command.arguments) - n - 1
            taken, positionals = (
                positionals[: len(positionals) - rest],
                positionals[len(positionals) - rest :],
            )
            values[ParamRef("argument", arg.name)] = [convert(arg, t) for t in taken]
        else:
            values[ParamRef("argument", arg.name)] = convert(arg, positionals.pop(0))
    if positionals:
        raise ParseError(f"left over: {positionals}")
    return values


def convert(spec: Argument | Option, text: str) -> Any:
    if spec.type == "integer":
        return int(text)
    if spec.type == "number":
        return float(text)
    return text


def strategy(spec: Argument | Option) -> st.SearchStrategy[Any]:
    if spec.enum:
        base: st.SearchStrategy[Any] = st.sampled_from(spec.enum)
    elif spec.type == "integer":
        base = st.integers(-(10**12), 10**12)
    elif spec.type == "number":
        base = st.floats(allow_nan=False, allow_infinity=False, width=64)
    elif spec.type == "boolean":
        base = st.just(True)
    else:
        base = st.one_of(
            st.sampled_from(INJECTIONS),
            # lone surrogates (Cs) are refused: test_invalid_values_say_what_to_fix
            st.text(
                st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=12
            ),
        )
    return st.lists(base, min_size=1, max_size=3) if spec.variadic else base


@st.composite
def calls(draw: st.DrawFn) -> tuple[Tool, tuple[str, ...], dict[ParamRef, Any]]:
    tool, path = draw(st.sampled_from(COMMANDS))
    command = atipkit.get_command(tool, path)
    values: dict[ParamRef, Any] = {}
    params: list[tuple[str, Argument | Option]] = [
        *(("argument", a) for a in command.arguments),
        *(("option", o) for o in command.options),
        *(("global", g) for g in tool.global_options),
    ]
    optional_seen = False
    for kind, spec in params:
        if kind == "argument" and not spec.required:
            # a later positional can only be given if every earlier one is
            if optional_seen or not draw(st.booleans()):
                optional_seen = True
                continue
        elif not spec.required and not draw(st.booleans()):
            continue
        values[ParamRef(kind, spec.name)] = draw(strategy(spec))
    return tool, path, values


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_argv_parses_back_to_the_same_values(call):
    tool, path, values = call
    invocation = build_argv(tool, path, values)
    assert invocation.argv[0] == tool.name
    assert parse(tool, path, invocation.argv) == values


@pytest.mark.parametrize("hostile", INJECTIONS)
def test_injections_never_set_an_option(hostile):
    gh = DOCS[0]
    values = {ParamRef("option", "title"): hostile}
    argv = build_argv(gh, ("pr", "create"), values).argv
    assert parse(gh, ("pr", "create"), argv) == values  # only `title`, with that exact value
    repo = build_argv(gh, ("repo", "delete"), {ParamRef("argument", "repo"): hostile}).argv
    assert parse(gh, ("repo", "delete"), repo) == {ParamRef("argument", "repo"): hostile}


def test_rendering_rules():
    kubectl = DOCS[2]
    argv = build_argv(
        kubectl,
        ("get",),
        {
            ParamRef("global", "namespace"): "prod",
            ParamRef("argument", "resource"): ["pods", "-weird"],
            ParamRef("option", "all-namespaces"): True,
            ParamRef("option", "selector"): "-app=web",
        },
    ).argv
    assert argv == [
        "kubectl",
        "--namespace",
        "prod",
        "get",
        "--selector=-app=web",
        "--all-namespaces",
        "--",
        "pods",
        "-weird",
    ]
    quiet = build_argv(
        kubectl,
        ("get",),
        {ParamRef("argument", "resource"): "pods", ParamRef("option", "all-namespaces"): False},
    ).argv
    assert quiet == ["kubectl", "get", "pods"]  # false booleans are left out


def test_variadic_options_repeat_their_flag_and_env_vars_can_carry_values():
    curl = DOCS[4]
    invocation = build_argv(
        curl,
        (),
        {
            ParamRef("option", "header"): ["A: 1", "B: 2"],
            ParamRef("argument", "url"): ["https://x"],
        },
    )
    assert invocation.argv == ["curl", "--header", "A: 1", "--header", "B: 2", "https://x"]
    gh = atipkit.from_dict(
        {
            **atipkit.to_dict(DOCS[0]),
            "globalOptions": [
                {
                    "name": "token",
                    "flags": ["--token"],
                    "type": "string",
                    "envVar": "GH_TOKEN",
                    "description": "t",
                }
            ],
        }
    )
    hidden = build_argv(
        gh, ("pr", "list"), {ParamRef("global", "token"): "s3cret"}, via_env={"token"}
    )
    assert "s3cret" not in hidden.argv
    assert hidden.env == {"GH_TOKEN": "s3cret"}


@pytest.mark.parametrize(
    ("values", "parameter", "fragment"),
    [
        ({}, "repo", "is required"),
        ({ParamRef("argument", "repo"): 42}, "repo", "42 is not a string"),
        ({ParamRef("argument", "repo"): "a\x00b"}, "repo", "NUL byte"),
        ({ParamRef("argument", "repo"): "a\ud800"}, "repo", "lone UTF-16 surrogate"),
        ({ParamRef("argument", "repo"): ["\udfff"]}, "repo", "is not a string"),
        (
            {ParamRef("argument", "repo"): "a", ParamRef("option", "yes"): True},
            "yes",
            "no option 'yes'",
        ),
    ],
)
def test_invalid_values_say_what_to_fix(values, parameter, fragment):
    with pytest.raises(InvalidArguments) as info:
        build_argv(DOCS[0], ("repo", "delete"), values)
    [problem] = info.value.problems
    assert problem.parameter == parameter
    assert fragment in problem.message


def with_pattern(pattern: str) -> Tool:
    """A tool whose one command takes one argument restricted by `pattern`."""
    return atipkit.from_dict(
        {
            "atip": {"version": "0.6"},
            "name": "t",
            "version": "1",
            "description": "t",
            "commands": {
                "go": {
                    "description": "go",
                    "arguments": [{"name": "word", "type": "string", "pattern": pattern}],
                }
            },
        }
    )


def test_a_pattern_that_is_no_regular_expression_makes_an_argument_problem_not_a_crash():
    """`(` reached `re.search` and raised re.error: `atip run` exit 70, and the gateway
    answered with the exception's text."""
    with pytest.raises(InvalidArguments) as info:
        build_argv(with_pattern("("), ("go",), {ParamRef("argument", "word"): "hi"})
    [problem] = info.value.problems
    assert problem.message == (
        "cannot be checked: the tool's metadata gives the pattern '(', which is not a "
        "regular expression or too large to compile (atip validate reports it)"
    )
    # ECMA 262 reads it; nested counted repeats compile past jsonschema-rs's size limit
    # (0.61 compiles the flat `^[\p{L}\p{N}_.-]{1,255}$` that older releases refused)
    big = r"^(?:[\p{L}\p{N}]{1,255}){1,255}$"
    with pytest.raises(InvalidArguments) as info:
        build_argv(with_pattern(big), ("go",), {ParamRef("argument", "word"): "hi"})
    assert info.value.problems[0].message.startswith("cannot be checked: ")


def test_patterns_are_json_schemas_and_linear_in_the_value():
    """Read as JSON Schema and the providers read them (ECMA 262), and matched in linear
    time: `^(a+)+$` backtracks exponentially in Python's `re` (a value of 30 `a`s and a
    `b` took minutes)."""
    tool = with_pattern("^(a+)+$")
    word = ParamRef("argument", "word")
    assert build_argv(tool, ("go",), {word: "aaaa"}).argv == ["t", "go", "aaaa"]
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    started = time.thread_time()
    with pytest.raises(InvalidArguments, match="does not match the pattern"):
        build_argv(tool, ("go",), {word: "a" * 100_000 + "b"})
    assert time.thread_time() - started < 1
    digits = with_pattern("^\\p{Nd}+$")  # Unicode classes, as ECMA 262 with the u flag
    assert build_argv(digits, ("go",), {word: "٣4"}).argv == ["t", "go", "٣4"]


def test_a_lone_surrogate_is_shown_escaped_in_the_atdf_error():
    with pytest.raises(InvalidArguments) as info:
        build_argv(with_pattern("."), ("go",), {ParamRef("argument", "word"): "a\ud800"})
    answer = info.value.to_atdf()
    assert answer["errors"][0]["context"]["received"] == "a\\ud800"
    json.dumps(answer, ensure_ascii=False).encode("utf-8")  # text a model can be sent


def test_atdf_error_shape_validates():

    import jsonschema

    from atipkit.interop.atdf.schemas import load_schema

    schema = load_schema("error")  # the shipped copy of the specification's file
    with pytest.raises(InvalidArguments) as info:
        build_argv(DOCS[0], ("pr", "list"), {ParamRef("option", "state"): "shut"})
    payload = info.value.to_atdf("urn:atip:call:1")
    error = payload["errors"][0]
    assert (error["parameter_name"], error["suggested_value"]) == ("state", "open")
    assert error["context"]["received"] == "shut"
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(payload)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_parse_argv_reads_back_what_build_argv_writes(call):
    from atipkit.execute.argv import parse_argv

    tool, path, values = call
    argv = build_argv(tool, path, values).argv
    assert parse_argv(tool, argv[1:]) == (path, values)


def test_an_array_option_given_twice_reads_back_as_its_list():
    """A non-variadic `array` option is written once per item (`--tag a --tag b`); it
    reads back as the list, not as its last item."""
    from atipkit.execute.argv import parse_argv
    from atipkit.model import from_dict

    tool = from_dict(
        {
            "atip": {"version": "0.6"},
            "name": "t",
            "version": "1",
            "description": "d",
            "commands": {
                "tag": {
                    "description": "Tag",
                    "options": [{"name": "tag", "flags": ["--tag"], "type": "array"}],
                }
            },
        }
    )
    values = {ParamRef("option", "tag"): ["a", "b"]}
    argv = build_argv(tool, ("tag",), values).argv
    assert argv[1:] == ["tag", "--tag", "a", "--tag", "b"]
    assert parse_argv(tool, argv[1:]) == (("tag",), values)
