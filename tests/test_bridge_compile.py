"""Compiling ATIP to provider tools: names, parameters, safety, dialects, limits — and the
official SDKs accept every tool compiled from the fixtures."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import atipkit
from atipkit.bridge import Compiler, compile_tools, safety_prompt
from atipkit.bridge.names import assign_names
from atipkit.bridge.safety import fit, utf16_len
from tests.helpers import EXAMPLES, FIXTURES, minimal

VALID_DOCS = [
    p
    for p in [*sorted((FIXTURES / "rfc").glob("*.json")), *sorted(EXAMPLES.rglob("*.json"))]
    if atipkit.validate_file(p).ok
]
TOOLS = [atipkit.load(p) for p in VALID_DOCS]
IDS = [p.name for p in VALID_DOCS]


def tool_from(commands: dict[str, Any], **extra: Any) -> atipkit.Tool:
    return atipkit.from_dict(minimal(commands=commands, **extra))


# -- the official SDKs accept what we produce --------------------------------------------


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
@pytest.mark.parametrize("strategy", ["discrete", "action"])
def test_gemini_declarations_validate_in_google_genai(tool, strategy):
    from google.genai import types

    for provider in ("gemini", "gemini-json-schema"):
        compiled = compile_tools(tool, provider, strategy=strategy)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the SDK only warns about an unknown type
            for declaration in compiled.tools:
                types.FunctionDeclaration.model_validate(declaration)  # forbids unknown keys
                if provider == "gemini":
                    assert_gemini_subset(declaration["parameters"])
            types.Tool.model_validate(compiled.payload()[0])


GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}


def assert_gemini_subset(schema: dict[str, Any]) -> None:
    """SPEC-NOTES 20: one type per schema (nullable instead of type arrays), no
    additionalProperties, string enums only."""
    assert schema["type"] in GEMINI_TYPES
    assert "additionalProperties" not in schema
    if "enum" in schema:
        assert schema["type"] == "STRING"
        assert all(isinstance(v, str) for v in schema["enum"])
    for child in schema.get("properties", {}).values():
        assert_gemini_subset(child)
    if "items" in schema:
        assert_gemini_subset(schema["items"])


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
def test_mcp_tools_validate_in_the_mcp_sdk(tool):
    import mcp.types

    for item in compile_tools(tool, "mcp").tools:
        parsed = mcp.types.Tool.model_validate(item)
        hints = parsed.annotations
        assert None not in (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        )


def _typed_dict_check(typed_dict: Any, value: Any) -> None:
    from pydantic import TypeAdapter

    TypeAdapter(typed_dict).validate_python(value, strict=True)


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
@pytest.mark.parametrize("strict", [False, True])
def test_openai_and_anthropic_param_types_accept_the_tools(tool, strict):
    from anthropic.types import ToolParam
    from openai.types.chat import ChatCompletionFunctionToolParam
    from openai.types.responses import FunctionToolParam

    for item in compile_tools(tool, "openai", strict=strict).tools:
        _typed_dict_check(ChatCompletionFunctionToolParam, item)
    for item in compile_tools(tool, "openai-responses", strict=strict).tools:
        _typed_dict_check(FunctionToolParam, item)
    for item in compile_tools(tool, "anthropic", strict=strict).tools:
        _typed_dict_check(ToolParam, item)


# -- OpenAI strict mode, checked against its documented rules -----------------------------

STRICT_KEYWORDS = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "description",
    "pattern",
    "const",
    "anyOf",
    "format",
    "minimum",
    "maximum",
}


def assert_openai_strict(schema: dict[str, Any], depth: int = 1) -> None:
    """Structured Outputs' rules: objects list every property as required and forbid
    additional ones; a nullable value says so with a type array (and `null` in its enum);
    arrays have `items`; only supported keywords; nesting within 10 levels."""
    assert depth <= 10
    assert set(schema) <= STRICT_KEYWORDS, set(schema) - STRICT_KEYWORDS
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if "object" in types:
        assert schema["additionalProperties"] is False
        assert sorted(schema["required"]) == sorted(schema["properties"])
        for child in schema["properties"].values():
            assert_openai_strict(child, depth + 1)
    if "array" in types:
        assert_openai_strict(schema["items"], depth + 1)
    if "enum" in schema and "null" in types:
        assert None in schema["enum"]


@pytest.mark.parametrize("tool", TOOLS, ids=IDS)
@pytest.mark.parametrize("strategy", ["discrete", "action"])
def test_every_openai_strict_schema_follows_the_rules(tool, strategy):
    compiled = compile_tools(tool, "openai", strict=True, strategy=strategy)
    for item in compiled.tools:
        assert item["function"]["strict"] is True
        assert_openai_strict(item["function"]["parameters"])


# -- names (SPEC-NOTES 16, 21) -------------------------------------------------------------


def test_names_of_colliding_paths_are_distinct_and_stable():
    leaf = {"description": "d", "effects": {"network": False}}
    colliding = {
        "a_b": leaf,
        "a-b": leaf,
        "a b": leaf,
        "a": {"description": "g", "commands": {"b": leaf}},
    }
    compiled = compile_tools(tool_from(colliding), "openai")
    table = compiled.table
    assert len(table) == 4
    assert table["t_a_b"] == ("a_b",)  # spelled exactly: keeps the plain name
    assert table["t_a-b"] == ("a-b",)  # `-` is kept
    assert {table[n] for n in table} == {("a_b",), ("a-b",), ("a b",), ("a", "b")}
    again = compile_tools(tool_from(dict(reversed(colliding.items()))), "openai").table
    assert again == table  # independent of document order


def test_adding_a_command_does_not_rename_an_exact_one():
    before = assign_names([("t", "a_b")])
    after = assign_names([("t", "a_b"), ("t", "a b")])
    assert before[("t", "a_b")] == after[("t", "a_b")] == "t_a_b"


@given(st.lists(st.text(min_size=1, max_size=90), min_size=1, max_size=4))
def test_every_name_is_valid_for_every_provider(words):
    name = assign_names([("tool", *words)])[("tool", *words)]
    assert 1 <= len(name) <= 64
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    assert name[0].isalpha() or name[0] == "_"


def test_root_command_is_named_by_the_tool_and_digits_get_an_underscore():
    curl = atipkit.load(EXAMPLES / "shims" / next((EXAMPLES / "shims").glob("*")).name)
    assert list(compile_tools(curl, "openai").table) == ["curl"]
    seven = atipkit.from_dict(minimal(name="7z", commands={"": {"description": "archive"}}))
    assert list(compile_tools(seven, "gemini").table) == ["_7z"]


# -- parameters ------------------------------------------------------------------------------


def test_parameters_order_types_required_and_distinct_keys():
    tool = tool_from(
        {
            "run": {
                "description": "r",
                "arguments": [
                    {"name": "target", "type": "file", "description": "What to run"},
                    {
                        "name": "rest",
                        "type": "string",
                        "variadic": True,
                        "required": False,
                        "description": "More",
                    },
                ],
                "options": [
                    {
                        "name": "target",
                        "flags": ["--target"],
                        "type": "url",
                        "description": "Where",
                    },
                    {
                        "name": "mode",
                        "flags": ["-m"],
                        "type": "enum",
                        "enum": ["a", "b"],
                        "default": "a",
                        "description": "Mode",
                    },
                    {
                        "name": "count",
                        "flags": ["-n"],
                        "type": "integer",
                        "required": True,
                        "description": "How many",
                    },
                ],
            }
        },
        globalOptions=[
            {"name": "verbose", "flags": ["-v"], "type": "boolean", "description": "Talk"}
        ],
    )
    compiled = compile_tools(tool, "anthropic")
    schema = compiled.tools[0]["input_schema"]
    assert list(schema["properties"]) == [
        "target",
        "rest",
        "target_option",
        "mode",
        "count",
        "verbose",
    ]
    assert schema["required"] == ["target", "count"]  # arguments by default, options if said
    props = schema["properties"]
    assert props["target"] == {"type": "string", "description": "What to run (file path)"}
    assert props["rest"]["type"] == "array"
    assert props["rest"]["items"] == {"type": "string"}
    assert props["target_option"]["description"] == "Where (URL)"
    assert props["mode"]["enum"] == ["a", "b"]
    assert props["mode"]["default"] == "a"
    assert 'Default: "a"' in props["mode"]["description"]
    assert props["count"]["type"] == "integer"
    binding = compiled.bindings["t_run"].targets[""]
    assert binding.params["target"].kind == "argument"
    assert binding.params["target_option"].kind == "option"
    assert binding.params["verbose"].kind == "global"


def test_gemini_subset():
    tool = tool_from(
        {
            "run": {
                "description": "r",
                "options": [
                    {
                        "name": "level",
                        "flags": ["-l"],
                        "type": "integer",
                        "enum": [1, 2, 3],
                        "description": "Level",
                    },
                    {
                        "name": "fmt",
                        "flags": ["-f"],
                        "type": "enum",
                        "enum": ["json", "yaml"],
                        "description": "Format",
                    },
                ],
            }
        }
    )
    schema = compile_tools(tool, "gemini").tools[0]["parameters"]
    text = json.dumps(schema)
    assert "additionalProperties" not in text
    assert schema["type"] == "OBJECT"
    assert "enum" not in schema["properties"]["level"]  # string enums only
    assert "one of 1, 2, 3" in schema["properties"]["level"]["description"]
    assert schema["properties"]["fmt"]["enum"] == ["json", "yaml"]


# -- safety (SPEC-NOTES 17, 18) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("effects", "expected"),
    [
        (
            {
                "destructive": True,
                "reversible": False,
                "idempotent": False,
                "cost": {"billable": True},
            },
            "[⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE | ⚠️ NOT IDEMPOTENT | 💰 BILLABLE]",
        ),
        ({"network": False, "filesystem": {"write": False}}, "[🔒 READ-ONLY]"),
        ({"network": False}, ""),  # read-only needs both stated
        ({"idempotent": True, "reversible": True}, ""),
    ],
)
def test_safety_suffix(effects, expected):
    tool = tool_from({"x": {"description": "Do it", "effects": effects}})
    description = compile_tools(tool, "openai").tools[0]["function"]["description"]
    assert description == f"Do it {expected}".strip()
    assert "\u26a0\ufe0f" in description or "⚠️" not in expected


def test_suffix_comes_from_effective_effects():
    tool = tool_from(
        {
            "repo": {
                "description": "g",
                "effects": {"destructive": True},
                "commands": {"delete": {"description": "Delete it"}},
            }
        }
    )
    assert compile_tools(tool, "mcp").tools[0]["description"] == "Delete it [⚠️ DESTRUCTIVE]"


@given(st.text(min_size=0, max_size=3000))
def test_openai_descriptions_are_cut_before_the_whole_suffix(text):
    tail = "[⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE]"
    out, cut = fit(text, tail, 1024)
    assert utf16_len(out) <= 1024
    assert out.endswith(tail)
    if cut:
        assert out[: -len(tail) - 1].endswith("...")


def test_a_long_description_is_cut_and_reported():
    tool = tool_from({"x": {"description": "🚀" * 700, "effects": {"destructive": True}}})
    compiled = compile_tools(tool, "openai")
    description = compiled.tools[0]["function"]["description"]
    assert utf16_len(description) <= 1024
    assert description.endswith("... [⚠️ DESTRUCTIVE]")
    assert [(w.code, w.location) for w in compiled.warnings] == [("openai.description-cut", "t_x")]
    untouched = compile_tools(tool, "anthropic").tools[0]["description"]
    assert untouched == "🚀" * 700 + " [⚠️ DESTRUCTIVE]"


def test_action_strategy_keeps_each_actions_safety():
    gh = atipkit.load(EXAMPLES / "tools" / "gh.json")
    compiled = compile_tools(gh, "openai", strategy="action")
    pr = next(t for t in compiled.tools if t["function"]["name"] == "gh_pr")
    lines = pr["function"]["description"].splitlines()
    assert lines[-1] == "[⚠️ NOT REVERSIBLE | ⚠️ NOT IDEMPOTENT]"  # the worst case
    assert any(line.startswith("- merge:") and "NOT REVERSIBLE" in line for line in lines)
    assert any(line.startswith("- list:") and "⚠️" not in line for line in lines)
    assert compiled.table["gh_pr"] == {
        "create": ("pr", "create"),
        "list": ("pr", "list"),
        "merge": ("pr", "merge"),
    }


def test_mcp_annotations():
    tool = tool_from(
        {
            "ls": {
                "description": "l",
                "effects": {"filesystem": {"write": False}, "network": False, "destructive": False},
            },
            "rm": {"description": "r", "effects": {"destructive": True, "idempotent": True}},
            "up": {"description": "u", "effects": {"network": True, "destructive": False}},
        }
    )
    hints = {t["name"]: t["annotations"] for t in compile_tools(tool, "mcp").tools}
    assert hints["t_ls"] == {
        "title": "t ls",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert hints["t_rm"]["destructiveHint"] is True
    assert hints["t_rm"]["idempotentHint"] is True
    assert hints["t_up"]["readOnlyHint"] is False
    assert hints["t_up"]["destructiveHint"] is False
    assert hints["t_up"]["openWorldHint"] is True


# -- limits -----------------------------------------------------------------------------


def test_more_than_128_tools_is_reported():
    commands = {f"c{i}": {"description": "d"} for i in range(130)}
    compiled = compile_tools(tool_from(commands), "openai")
    assert [w.code for w in compiled.warnings] == ["openai.too-many-tools"]


def test_anthropic_strict_budget_falls_back_per_tool():
    options = [
        {"name": f"o{i}", "flags": [f"--o{i}"], "type": "string", "description": "o"}
        for i in range(10)
    ]
    commands = {f"c{i}": {"description": "d", "options": options} for i in range(4)}
    compiled = compile_tools(tool_from(commands), "anthropic", strict=True)
    strict = [t.get("strict", False) for t in compiled.tools]
    assert strict == [True, True, False, False]  # 10 + 10 optional fit in 24; 30 do not
    assert [(w.code, w.location) for w in compiled.warnings] == [
        ("anthropic.strict-limit", "t_c2"),
        ("anthropic.strict-limit", "t_c3"),
    ]


def test_openai_strict_limit_falls_back():
    values = [f"v{i}" for i in range(1001)]
    tool = tool_from(
        {
            "x": {
                "description": "d",
                "options": [
                    {
                        "name": "v",
                        "flags": ["-v"],
                        "type": "enum",
                        "enum": values,
                        "description": "v",
                    }
                ],
            }
        }
    )
    compiled = compile_tools(tool, "openai", strict=True)
    assert compiled.tools[0]["function"]["strict"] is False
    assert compiled.warnings[0].code == "openai.strict-limit"


def test_hidden_commands_and_groups_without_parameters_are_not_tools():
    tool = tool_from(
        {
            "g": {
                "description": "group",
                "commands": {
                    "a": {"description": "a"},
                    "secret": {"description": "s", "hidden": True},
                },
            }
        }
    )
    assert list(compile_tools(tool, "openai").table) == ["t_g_a"]
    assert set(compile_tools(tool, "openai", include_hidden=True).table) == {"t_g_a", "t_g_secret"}


def test_safety_prompt():
    gh = atipkit.load(FIXTURES / "rfc" / "rfc06-14.1-gh.json")
    prompt = safety_prompt(compile_tools(gh, "openai").flat)
    assert prompt.startswith("# Tool safety")
    destructive = prompt.split("## Destructive")[1].split("##")[0]
    assert "`gh_repo_delete`" in destructive
    assert "`gh_pr_list`" not in destructive
    calm = tool_from({"x": {"description": "d", "effects": {"network": False}}})
    assert safety_prompt(compile_tools(calm, "openai").flat) == ""


def test_safety_prompt_takes_atip_tools_as_appendix_a_does():
    """RFC 0.6 Appendix A hands `generateSafetyPrompt` ATIP tools; a compile, its
    compiler and its flat tools give the same text, naming tools as the compile does."""
    gh = atipkit.load(FIXTURES / "rfc" / "rfc06-14.1-gh.json")
    calm = tool_from({"x": {"description": "d", "effects": {"network": False}}})
    compiled = compile_tools([gh, calm], "anthropic")
    expected = safety_prompt(compiled.flat)
    assert "`gh_repo_delete`" in expected.split("## Destructive")[1].split("##")[0]
    assert safety_prompt([gh, calm]) == expected
    assert safety_prompt(compiled) == expected
    assert safety_prompt(Compiler([gh, calm])) == expected
    assert safety_prompt(gh) == safety_prompt(compile_tools(gh).flat)
    assert safety_prompt(calm) == ""
    with pytest.raises(TypeError, match="not dict"):
        safety_prompt([{"name": "gh"}])


def test_unknown_provider_is_refused():
    with pytest.raises(ValueError, match="unknown provider"):
        compile_tools(TOOLS[0], "cohere")  # type: ignore[arg-type]


def test_a_shared_compiler_gives_what_one_shot_compiles_give():
    from atipkit.bridge import Compiler

    gh = atipkit.load(EXAMPLES / "tools" / "gh.json")
    compiler = Compiler(gh, strategy="action")
    for provider in ("openai", "openai-responses", "anthropic", "gemini", "mcp"):
        for strict in (False, True):
            shared = compiler.compile(provider, strict=strict)
            alone = compile_tools(gh, provider, strict=strict, strategy="action")
            assert shared.tools == alone.tools
            assert shared.table == alone.table
