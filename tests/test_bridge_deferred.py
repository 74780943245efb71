"""Deferred tools (`atipkit.bridge.deferred`): the shapes the official SDKs' types define,
a whole search-then-call exchange with each provider (SDK objects built locally, no
network), the search answered by the real `CommandIndex`, and `atip compile --deferred`
run as a process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

import pytest

import atipkit
from atipkit.bridge import (
    DEFERRED_PROVIDERS,
    PROVIDERS,
    SEARCH_TOOL,
    anthropic_search_result,
    compile_tools,
    deferred_tools,
    parse_tool_calls,
    tool_result_messages,
)
from atipkit.bridge.deferred import DEFAULT_LIMIT, MAX_LIMIT
from atipkit.partial import select
from atipkit.search import CommandIndex
from tests.helpers import EXAMPLES, minimal
from tests.test_bridge_compile import IDS, TOOLS

EXAMPLE_TOOLS = [
    atipkit.load(EXAMPLES / "tools" / f"{n}.json") for n in ("gh", "kubectl", "terraform")
]
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
WITH_COMMANDS = [(t, i) for t, i in zip(TOOLS, IDS, strict=True) if compile_tools(t).tools]


def assert_shape(typed_dict: Any, value: Any) -> None:
    """`value` is what the SDK's TypedDict describes: it validates strictly, has every
    required key and no key the type does not define (pydantic ignores those)."""
    from pydantic import TypeAdapter

    TypeAdapter(typed_dict).validate_python(value, strict=True)
    keys = typed_dict.__required_keys__ | typed_dict.__optional_keys__
    assert typed_dict.__required_keys__ <= set(value) <= keys, (set(value) - keys, value)


# -- the shapes, against the SDKs' types ---------------------------------------------------


@pytest.mark.parametrize("tool", [t for t, _ in WITH_COMMANDS], ids=[i for _, i in WITH_COMMANDS])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("strategy", ["discrete", "action"])
def test_openai_namespaces_are_what_the_sdk_types_define(tool, strict, strategy):
    from openai.types.responses import (
        FunctionToolParam,
        NamespaceToolParam,
        ToolParam,
        ToolSearchToolParam,
    )
    from openai.types.responses.namespace_tool_param import ToolFunction
    from pydantic import TypeAdapter

    compiled = compile_tools(tool, "openai-responses", strict=strict, strategy=strategy)
    *namespaces, search = deferred_tools(compiled, tool)
    assert search == {"type": "tool_search"}
    assert_shape(ToolSearchToolParam, search)
    [namespace] = namespaces  # one tool, one namespace
    assert_shape(NamespaceToolParam, namespace)
    TypeAdapter(list[ToolParam]).validate_python([*namespaces, search], strict=True)
    assert (namespace["name"], namespace["description"]) == (tool.name, tool.description)
    # the functions are the compile's own, deferred
    assert namespace["tools"] == [{**t, "defer_loading": True} for t in compiled.tools]
    for function in namespace["tools"]:
        assert_shape(ToolFunction, function)
        assert_shape(FunctionToolParam, function)


@pytest.mark.parametrize("tool", [t for t, _ in WITH_COMMANDS], ids=[i for _, i in WITH_COMMANDS])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("strategy", ["discrete", "action"])
def test_anthropic_deferred_tools_are_what_the_sdk_types_define(tool, strict, strategy):
    from anthropic.types import ToolParam

    compiled = compile_tools(tool, "anthropic", strict=strict, strategy=strategy)
    search, *deferred = deferred_tools(compiled, tool)
    assert_shape(ToolParam, search)
    assert search["name"] == SEARCH_TOOL
    assert "defer_loading" not in search  # the API refuses a request whose tools all defer
    assert f"- {tool.name}: " in search["description"]
    assert deferred == [{**t, "defer_loading": True} for t in compiled.tools]
    for item in deferred:
        assert_shape(ToolParam, item)


def test_tools_without_commands_leave_only_the_search():
    """A document that describes no command (the RFC's fragments) defers nothing."""
    empty = next(t for t in TOOLS if not compile_tools(t).tools)
    openai = compile_tools(empty, "openai-responses")
    assert deferred_tools(openai, empty) == [{"type": "tool_search"}]
    [search] = deferred_tools(compile_tools(empty, "anthropic"), empty)
    assert search["description"].endswith("Tools: none")


def test_the_request_payload_is_accepted_by_the_sdk_models():
    """The response models read what a request sends: the namespace as the
    `tool_search_output` of a hosted search returns it, and every tool of the request."""
    from openai.types.responses import NamespaceTool, Response, ToolSearchTool

    compiled = compile_tools(EXAMPLE_TOOLS, "openai-responses", strict=True)
    payload = deferred_tools(compiled, EXAMPLE_TOOLS)
    response = Response.model_validate(_response([], tools=payload))
    assert [type(t) for t in response.tools] == [NamespaceTool] * 3 + [ToolSearchTool]
    assert [t.name for t in response.tools[:3]] == ["gh", "kubectl", "terraform"]
    assert all(f.defer_loading for t in response.tools[:3] for f in t.tools)


# -- OpenAI: a hosted search loads a namespace, the model calls a function in it -----------


def _response(output: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-5.4",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": tools or [],
        "output": output,
    }


@pytest.mark.parametrize("strategy", ["discrete", "action"])
@pytest.mark.parametrize("shape", ["sdk", "json"])
def test_openai_round_trip_through_a_namespace(strategy, shape):
    from openai.types.responses import Response
    from openai.types.responses.response_input_param import FunctionCallOutput

    compiled = compile_tools(EXAMPLE_TOOLS, "openai-responses", strategy=strategy)
    payload = deferred_tools(compiled, EXAMPLE_TOOLS)
    gh = next(t for t in payload if t.get("name") == "gh")
    name, arguments = (
        ("gh_pr_merge", {"number": 42, "squash": True})
        if strategy == "discrete"
        else ("gh_pr", {"action": "merge", "number": 42, "squash": True})
    )
    assert name in [f["name"] for f in gh["tools"]]
    data = _response(
        [
            {
                "type": "tool_search_call",
                "id": "tsc_1",
                "call_id": None,
                "execution": "server",
                "status": "completed",
                "arguments": {"paths": ["gh"]},
            },
            {
                "type": "tool_search_output",
                "id": "tso_1",
                "call_id": None,
                "execution": "server",
                "status": "completed",
                "tools": [gh],  # the hosted search hands back the namespace it loaded
            },
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "namespace": "gh",
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            },
        ],
        tools=payload,
    )
    response = Response.model_validate(data) if shape == "sdk" else data
    if shape == "sdk":
        assert response.output[2].namespace == "gh"
    [call] = parse_tool_calls("openai-responses", response, compiled)
    assert (call.ok, call.id, call.tool, call.path) == (True, "call_1", "gh", ("pr", "merge"))
    assert {ref.name: value for ref, value in call.values.items()} == {
        "number": 42,
        "squash": True,
    }
    [reply] = tool_result_messages("openai-responses", [(call, "merged", False)])
    assert_shape(FunctionCallOutput, reply)


def test_namespaces_group_each_tools_commands_in_compile_order():
    compiled = compile_tools(EXAMPLE_TOOLS, "openai-responses")
    *namespaces, _ = deferred_tools(compiled, reversed(EXAMPLE_TOOLS))  # any order of tools
    assert [(n["name"], n["description"]) for n in namespaces] == [
        (t.name, t.description) for t in EXAMPLE_TOOLS
    ]
    assert [f for n in namespaces for f in n["tools"]] == [
        {**t, "defer_loading": True} for t in compiled.tools
    ]


def test_namespace_names_are_valid_and_distinct_when_tool_names_are_not():
    """Tool names may hold characters a name may not (a dot) and two may then meet."""
    tools = [
        atipkit.from_dict(minimal(name="a.b", description="Dotted")),
        atipkit.from_dict(minimal(name="a_b", description="Underscored")),
    ]
    compiled = compile_tools(tools, "openai-responses")
    *namespaces, _ = deferred_tools(compiled, tools)
    names = [n["name"] for n in namespaces]
    assert len(set(names)) == 2
    assert all(NAME.match(n) for n in names)
    assert "a_b" in names  # spelled exactly, it keeps its name
    assert [n["description"] for n in namespaces] == ["Dotted", "Underscored"]


# -- Anthropic: the agent answers the search, the model calls what it found ----------------


def _message(*blocks: dict[str, Any]) -> Any:
    from anthropic.types import Message

    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-8",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": list(blocks),
        }
    )


@pytest.mark.parametrize("strategy", ["discrete", "action"])
def test_anthropic_round_trip_through_the_search_tool(strategy):
    from anthropic.types import MessageParam, ToolReferenceBlockParam, ToolResultBlockParam

    compiled = compile_tools(EXAMPLE_TOOLS, "anthropic", strategy=strategy)
    payload = deferred_tools(compiled, EXAMPLE_TOOLS)
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    defined = {t["name"] for t in payload}

    # 1. the model searches
    query = {"query": "merge a pull request", "limit": 3}
    searching = _message(
        {"type": "text", "text": "Let me find a tool for that."},
        {"type": "tool_use", "id": "toolu_1", "name": SEARCH_TOOL, "input": query},
    )
    [search] = parse_tool_calls("anthropic", searching, compiled)
    assert search.name == SEARCH_TOOL
    assert not search.ok  # not a command: the agent answers it
    result = anthropic_search_result(
        index, compiled, search.id, search.arguments.get("query"), search.arguments.get("limit")
    )
    assert_shape(ToolResultBlockParam, result)
    for block in result["content"]:
        assert_shape(ToolReferenceBlockParam, block)
    from pydantic import TypeAdapter

    TypeAdapter(MessageParam).validate_python({"role": "user", "content": [result]}, strict=True)
    found = [block["tool_name"] for block in result["content"]]
    assert result["tool_use_id"] == "toolu_1"
    assert "is_error" not in result
    assert set(found) <= defined  # a reference to a tool the request lacks is a 400
    assert len(found) <= 3
    merge = "gh_pr_merge" if strategy == "discrete" else "gh_pr"
    assert found[0] == merge

    # 2. the API loaded it; the model calls it
    arguments = {"number": 42, "squash": True}
    if strategy == "action":
        arguments["action"] = "merge"
    calling = _message({"type": "tool_use", "id": "toolu_2", "name": merge, "input": arguments})
    [call] = parse_tool_calls("anthropic", calling, compiled)
    assert (call.ok, call.id, call.tool, call.path) == (True, "toolu_2", "gh", ("pr", "merge"))


def test_search_answers_are_ranked_and_limited_by_the_real_index():
    compiled = compile_tools(EXAMPLE_TOOLS, "anthropic")
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    result = anthropic_search_result(index, compiled, "toolu_1", "merge a pull request")
    expected = [hit.name for hit in index.search("merge a pull request", DEFAULT_LIMIT)]
    assert [b["tool_name"] for b in result["content"]] == expected
    assert expected[0] == "gh_pr_merge"


def test_limits_from_the_model_are_kept_within_bounds():
    widget = atipkit.from_dict(
        minimal(
            name="widgets",
            commands={
                f"w{i}": {"description": f"Polish widget number {i}", "effects": {"network": False}}
                for i in range(30)
            },
        )
    )
    compiled = compile_tools(widget, "anthropic")
    index = CommandIndex.from_tools([widget])

    def count(limit: object) -> int:
        result = anthropic_search_result(index, compiled, "toolu_1", "polish widget", limit)
        return len(result["content"])

    assert count(1000) == MAX_LIMIT
    assert count(0) == count(-3) == 1
    assert count(7) == count(7.0) == 7
    assert count(10**400) == count(1e300) == MAX_LIMIT
    assert count("lots") == count(None) == count(True) == count(2.5) == DEFAULT_LIMIT
    assert count(float("inf")) == count(float("nan")) == count("7") == DEFAULT_LIMIT


@pytest.mark.parametrize("query", [None, "", "   ", 42, ["merge"]])
def test_a_query_that_is_not_words_is_an_error_result(query):
    from anthropic.types import ToolResultBlockParam

    compiled = compile_tools(EXAMPLE_TOOLS, "anthropic")
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    result = anthropic_search_result(index, compiled, "toolu_1", query)
    assert_shape(ToolResultBlockParam, result)
    assert result["is_error"] is True
    assert "query" in result["content"]


def test_no_match_says_so_without_references():
    """The index ranks by words (BM25, its default) even where the rerank extra runs,
    whose meaning would always find something nearest (decision 368)."""
    compiled = compile_tools(EXAMPLE_TOOLS, "anthropic")
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    result = anthropic_search_result(index, compiled, "toolu_1", "xyzzy plugh")
    assert "is_error" not in result
    assert isinstance(result["content"], str)
    assert "No command matches" in result["content"]


def test_hits_the_request_does_not_define_are_left_out():
    """An index over every command, a compile of some: referencing a tool the request
    lacks would make the API refuse it."""
    gh = EXAMPLE_TOOLS[0]
    compiled = compile_tools(select(gh, commands=["pr"]), "anthropic")
    index = CommandIndex.from_tools([gh])
    assert "gh_issue_create" in [h.name for h in index.search("create an issue", 5)]
    result = anthropic_search_result(index, compiled, "toolu_1", "create an issue", 5)
    found = [b["tool_name"] for b in result["content"]]
    assert found
    assert "gh_issue_create" not in found
    assert set(found) <= set(compiled.bindings)


def test_the_references_are_the_best_defined_commands_of_the_whole_ranking():
    """The defined match ranks below `limit` commands the request lacks: it is still found,
    and still `limit` references at most (it was 'No command matches')."""
    from atipkit.model import loads
    from tests.helpers import FIXTURES

    gh, kubectl = (
        loads((FIXTURES / "search" / f"{n}.json").read_bytes()) for n in ("gh", "kubectl")
    )
    compiled = compile_tools(select(gh, commands=["pr"]), "anthropic")
    index = CommandIndex.from_tools([gh, kubectl])
    first = [h.name for h in index.search("create", 5)]
    assert "gh_pr_create" not in first
    assert not set(first) & set(compiled.bindings)
    result = anthropic_search_result(index, compiled, "toolu_1", "create", 5)
    found = [b["tool_name"] for b in result["content"]]
    assert "gh_pr_create" in found
    assert len(found) <= 5
    assert set(found) <= set(compiled.bindings)


# -- what cannot be deferred ---------------------------------------------------------------


@pytest.mark.parametrize("provider", sorted(set(PROVIDERS) - set(DEFERRED_PROVIDERS)))
def test_other_providers_cannot_defer(provider):
    compiled = compile_tools(EXAMPLE_TOOLS, provider)
    with pytest.raises(ValueError, match="cannot defer"):
        deferred_tools(compiled, EXAMPLE_TOOLS)


@pytest.mark.parametrize("provider", DEFERRED_PROVIDERS)
def test_the_tools_compiled_must_be_given(provider):
    compiled = compile_tools(EXAMPLE_TOOLS, provider)
    with pytest.raises(ValueError, match="'kubectl', not among the tools given"):
        deferred_tools(compiled, EXAMPLE_TOOLS[0])


def test_a_command_named_like_the_search_tool_renames_it():
    search_like = atipkit.from_dict(
        minimal(name="search", commands={"tools": {"description": "Search the tools"}})
    )
    compiled = compile_tools(search_like, "anthropic")
    assert SEARCH_TOOL in compiled.bindings
    with pytest.raises(ValueError, match="give the search tool another name"):
        deferred_tools(compiled, search_like)
    search, *_ = deferred_tools(compiled, search_like, search_tool="find_commands")
    assert search["name"] == "find_commands"


def test_one_search_tool_name_wherever_atipkit_defers_and_the_old_one_on_request():
    from atipkit.bridge.deferred import OLD_SEARCH_TOOL
    from atipkit.serve import deferred as mcp_deferred

    assert SEARCH_TOOL == mcp_deferred.SEARCH_TOOL == "search_tools"
    compiled = compile_tools(EXAMPLE_TOOLS, "anthropic")
    search, *_ = deferred_tools(compiled, EXAMPLE_TOOLS, search_tool=OLD_SEARCH_TOOL)
    assert search["name"] == "atip_search_tools"


# -- atip compile --deferred ------------------------------------------------------------


def atip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atipkit", *args], capture_output=True, text=True, timeout=60
    )


FILES = [str(EXAMPLES / "tools" / f"{n}.json") for n in ("gh", "kubectl", "terraform")]


@pytest.mark.usefixtures("isolated_home")
@pytest.mark.parametrize("provider", DEFERRED_PROVIDERS)
def test_cli_deferred_gives_what_the_library_gives(provider):
    done = atip("compile", *FILES, "--provider", provider, "--deferred", "--strict", "--plain")
    assert done.returncode == 0, done.stderr
    compiled = compile_tools(EXAMPLE_TOOLS, provider, strict=True)
    assert json.loads(done.stdout) == deferred_tools(compiled, EXAMPLE_TOOLS)


@pytest.mark.usefixtures("isolated_home")
def test_cli_deferred_table_and_envelope():
    done = atip("compile", FILES[0], "--provider", "anthropic", "--deferred", "--table", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["tools"][0]["name"] == SEARCH_TOOL
    assert result["table"]["gh_pr_merge"] == "pr merge"


@pytest.mark.usefixtures("isolated_home")
def test_cli_deferred_refuses_a_command_named_as_the_search_tool(tmp_path):
    """The document's conflict with --deferred: a usage error, not an internal one (70)."""
    doc = minimal(name="search", commands={"tools": {"description": "Search the tools"}})
    path = tmp_path / "search.json"
    path.write_text(json.dumps(doc))
    done = atip("compile", str(path), "--provider", "anthropic", "--deferred", "--json")
    assert done.returncode == 2, done.stdout
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "E1001"
    assert error["details"] == {"param": "deferred", "tool": SEARCH_TOOL}
    assert (
        atip("compile", str(path), "--provider", "openai-responses", "--deferred").returncode == 0
    )


@pytest.mark.usefixtures("isolated_home")
@pytest.mark.parametrize("provider", sorted(set(PROVIDERS) - set(DEFERRED_PROVIDERS)))
def test_cli_deferred_with_another_provider_is_a_usage_error(provider):
    done = atip("compile", FILES[0], "--provider", provider, "--deferred", "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "E1001"
    assert error["message"] == (
        f"--deferred works with --provider openai-responses or anthropic, not {provider}"
    )
    assert error["details"] == {"param": "deferred", "provider": provider}
