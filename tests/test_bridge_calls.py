"""The lifecycle: a call synthesized from each compiled schema, sent back in each provider's
response shape (plain JSON and the official SDK objects), parses to the same command and
values; results go back in messages the SDKs accept."""

from __future__ import annotations

import json
from typing import Any

import pytest

import atipkit
from atipkit.bridge import (
    Compiled,
    ParamRef,
    compile_tools,
    parse_tool_calls,
    tool_result_messages,
)
from atipkit.bridge.flatten import ACTION
from tests.helpers import EXAMPLES, FIXTURES

ROUND_TRIP = {
    name: atipkit.load(path)
    for name, path in {
        "gh-0.6": FIXTURES / "rfc" / "rfc06-14.1-gh.json",
        "gh-0.1": FIXTURES / "rfc" / "rfc01-8.1-gh.json",
        "kubectl": FIXTURES / "rfc" / "rfc01-8.2-kubectl.json",
        "kubectl-example": EXAMPLES / "tools" / "kubectl.json",
    }.items()
}
PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"]


def tool_schema(compiled: Compiled, item: dict[str, Any]) -> dict[str, Any]:
    """The parameters schema of one compiled tool, whatever the provider's shape."""
    if compiled.provider == "openai":
        return item["function"]["parameters"]
    for key in ("parameters", "input_schema", "inputSchema", "parameters_json_schema"):
        if key in item:
            return item[key]
    raise KeyError(item)


def tool_name(compiled: Compiled, item: dict[str, Any]) -> str:
    return item["function"]["name"] if compiled.provider == "openai" else item["name"]


def sample(schema: dict[str, Any], key: str) -> Any:
    """A value that fits a property schema, read off the schema itself (any dialect)."""
    kind = schema.get("type")
    kinds = [k.lower() for k in (kind if isinstance(kind, list) else [kind])]
    kinds = [k for k in kinds if k != "null"] or ["string"]
    if schema.get("enum"):
        return next(v for v in schema["enum"] if v is not None)
    if kinds[0] == "array":
        return [sample(schema.get("items", {"type": "string"}), key)]
    return {"integer": 7, "number": 2.5, "boolean": True}.get(kinds[0], f"{key}-value")


def synthesize(compiled: Compiled) -> list[tuple[str, dict[str, Any], Any]]:
    """One call per command: every parameter the command takes gets a value (in strict
    schemas half of the optional ones are sent as null, as models do); returns
    (tool name, arguments, expected values by parameter)."""
    calls = []
    for item in compiled.tools:
        name = tool_name(compiled, item)
        schema = tool_schema(compiled, item)
        binding = compiled.bindings[name]
        for action, target in binding.targets.items():
            args: dict[str, Any] = {ACTION: action} if action else {}
            expected: dict[ParamRef, Any] = {}
            for n, (key, ref) in enumerate(target.params.items()):
                value = sample(schema["properties"][key], key)
                if compiled.strict and n % 2 and key not in target.required:
                    args[key] = None  # strict: an omitted optional parameter is null
                    continue
                args[key] = value
                expected[ref] = value
            if compiled.strict and compiled.provider == "openai" and not action:
                for key in schema["properties"]:  # strict sends every property
                    args.setdefault(key, None)
            calls.append((name, args, (target.tool, target.path, action or None, expected)))
    return calls


def response(provider: str, calls: list[tuple[str, dict[str, Any], Any]]) -> dict[str, Any]:
    """The calls as the provider's API returns them (complete enough for its SDK)."""
    if provider == "openai":
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{i}",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                            for i, (name, args, _) in enumerate(calls)
                        ],
                    },
                }
            ],
        }
    if provider == "openai-responses":
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": "m",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "function_call",
                    "id": f"fc_{i}",
                    "call_id": f"call_{i}",
                    "name": name,
                    "arguments": json.dumps(args),
                    "status": "completed",
                }
                for i, (name, args, _) in enumerate(calls)
            ],
        }
    if provider == "anthropic":
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
                for i, (name, args, _) in enumerate(calls)
            ],
        }
    if provider.startswith("gemini"):
        return {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"function_call": {"name": name, "args": args}}
                            for name, args, _ in calls
                        ],
                    }
                }
            ]
        }
    return [{"name": name, "arguments": args} for name, args, _ in calls]  # type: ignore[return-value]


def sdk_object(provider: str, data: Any) -> Any:
    """The same response as the official SDK's own object."""
    if provider == "openai":
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(data)
    if provider == "openai-responses":
        from openai.types.responses import Response

        return Response.model_validate(data)
    if provider == "anthropic":
        from anthropic.types import Message

        return Message.model_validate(data)
    if provider.startswith("gemini"):
        from google.genai import types

        return types.GenerateContentResponse.model_validate(data)
    import mcp.types

    return [mcp.types.CallToolRequestParams.model_validate(d) for d in data]


@pytest.mark.parametrize("doc", ROUND_TRIP, ids=str)
@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("strategy", ["discrete", "action"])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("shape", ["json", "sdk"])
def test_round_trip(doc, provider, strategy, strict, shape):
    compiled = compile_tools(ROUND_TRIP[doc], provider, strict=strict, strategy=strategy)
    calls = synthesize(compiled)
    commands = {path for path, _ in atipkit.iter_commands(ROUND_TRIP[doc])}
    assert {c[2][1] for c in calls} >= {p for p in commands if not _is_group(doc, p)}
    data = response(provider, calls)
    parsed = parse_tool_calls(
        provider, sdk_object(provider, data) if shape == "sdk" else data, compiled
    )
    assert len(parsed) == len(calls)
    for call, (name, _args, (tool, path, action, expected)) in zip(parsed, calls, strict=True):
        assert call.error is None, (name, call.error)
        assert (call.name, call.tool, call.path, call.action) == (name, tool, path, action)
        assert call.values == expected
    if provider.startswith("gemini"):
        assert [c.index for c in parsed] == list(range(len(calls)))  # correlated by position
    elif provider != "mcp":
        assert [c.id for c in parsed] == [
            f"call_{i}" if "openai" in provider else f"toolu_{i}" for i in range(len(calls))
        ]


def _is_group(doc: str, path: tuple[str, ...]) -> bool:
    command = atipkit.get_command(ROUND_TRIP[doc], path)
    return bool(command.commands) and not (command.arguments or command.options)


# -- what the model gets wrong becomes an error on the call, not an exception -------------


@pytest.fixture(scope="module")
def gh() -> Compiled:
    return compile_tools(ROUND_TRIP["gh-0.6"], "anthropic")


@pytest.fixture(scope="module")
def gh_actions() -> Compiled:
    return compile_tools(ROUND_TRIP["gh-0.6"], "openai", strategy="action")


def anthropic_call(name: str, args: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "id": "t1", "name": name, "input": args}]}


@pytest.mark.parametrize(
    ("name", "args", "error"),
    [
        ("gh_nope", {}, "unknown tool 'gh_nope'"),
        ("gh_repo_delete", {}, "missing required parameter(s) 'repo'"),
        ("gh_repo_delete", {"repo": "a/b", "force": True}, "unknown parameter(s) 'force'"),
        ("gh_repo_delete", ["a/b"], "arguments must be a JSON object"),
    ],
)
def test_calls_the_compile_cannot_map(gh, name, args, error):
    [call] = parse_tool_calls("anthropic", anthropic_call(name, args), gh)
    assert call.error == error
    assert not call.ok


def test_arguments_that_are_not_json(gh_actions):
    data = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "gh_pr", "arguments": "{oops"},
                        }
                    ]
                }
            }
        ]
    }
    [call] = parse_tool_calls("openai", data, gh_actions)
    assert call.error.startswith("arguments are not valid JSON")


@pytest.mark.parametrize("provider", ["openai", "mcp"])
def test_arguments_nested_past_the_json_limit_are_a_call_error_not_a_crash(provider):
    compiled = compile_tools([ROUND_TRIP["gh-0.6"]], provider)
    name = (
        compiled.tools[0]["function"]["name"] if provider == "openai" else compiled.tools[0]["name"]
    )
    deep = "[" * 100_000 + "]" * 100_000
    if provider == "openai":  # arguments as JSON text
        arguments: Any = '{"x": ' + deep + "}"
        data: Any = {
            "tool_calls": [{"id": "c", "function": {"name": name, "arguments": arguments}}]
        }
    else:  # arguments already decoded (an SDK's), 500 deep
        nested: Any = []
        for _ in range(500):
            nested = [nested]
        data = {"name": name, "arguments": {"x": nested}}
    [call] = parse_tool_calls(provider, data, compiled)
    assert "nested too deeply: more than 64 levels" in call.error
    assert call.error.startswith("arguments: ")


def test_a_lone_surrogate_in_json_text_arguments_is_named(gh_actions):
    text = '{"title": "a\\ud800"}'
    data = {"tool_calls": [{"id": "c", "function": {"name": "gh_pr", "arguments": text}}]}
    [call] = parse_tool_calls("openai", data, gh_actions)
    assert call.error == (
        "arguments are not valid JSON: line 1, column 13: invalid JSON: \\ud800 is half a "
        "UTF-16 surrogate pair, no character"
    )


def test_actions_are_checked(gh_actions):
    def call(args: dict[str, Any]):
        data = {
            "choices": [
                {
                    "message": {
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "gh_pr", "arguments": json.dumps(args)},
                            }
                        ]
                    }
                }
            ]
        }
        return parse_tool_calls("openai", data, gh_actions)[0]

    assert (
        call({"action": "close"}).error == "'action' must be one of create, list, merge; "
        "got 'close'"
    )
    assert (
        call({"action": "list", "title": "x"}).error
        == "unknown parameter(s) 'title' for action 'list'"
    )
    ok = call({"action": "list", "state": "open"})
    assert (ok.path, ok.values) == (("pr", "list"), {ParamRef("option", "state"): "open"})


# -- results ------------------------------------------------------------------------------


def two_calls(provider: str) -> tuple[Compiled, list[Any]]:
    compiled = compile_tools(ROUND_TRIP["gh-0.6"], provider)
    calls = [(n, a, x) for n, a, x in synthesize(compiled) if n in ("gh_pr_list", "gh_repo_delete")]
    return compiled, parse_tool_calls(provider, response(provider, calls), compiled)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_result_messages_keep_order_and_ids_and_satisfy_the_sdks(provider):
    from pydantic import TypeAdapter

    _, calls = two_calls(provider)
    messages = tool_result_messages(
        provider, [(calls[0], {"prs": []}, False), (calls[1], "permission denied", True)]
    )
    if provider == "openai":
        from openai.types.chat import ChatCompletionToolMessageParam

        assert [m["tool_call_id"] for m in messages] == [c.id for c in calls]
        for m in messages:
            TypeAdapter(ChatCompletionToolMessageParam).validate_python(m, strict=True)
    elif provider == "openai-responses":
        from openai.types.responses.response_input_item_param import FunctionCallOutput

        assert [m["call_id"] for m in messages] == [c.id for c in calls]
        for m in messages:
            TypeAdapter(FunctionCallOutput).validate_python(m, strict=True)
    elif provider == "anthropic":
        from anthropic.types import MessageParam

        [message] = messages
        TypeAdapter(MessageParam).validate_python(message, strict=True)
        blocks = message["content"]
        assert [b["tool_use_id"] for b in blocks] == [c.id for c in calls]
        assert "is_error" not in blocks[0]
        assert blocks[1]["is_error"] is True
    elif provider.startswith("gemini"):
        from google.genai import types

        [message] = messages
        content = types.Content.model_validate(message)
        names = [p.function_response.name for p in content.parts]
        assert names == ["gh_pr_list", "gh_repo_delete"]  # by position
        assert content.parts[1].function_response.response == {"error": "permission denied"}
    else:
        import mcp.types

        results = [mcp.types.CallToolResult.model_validate(m) for m in messages]
        assert [r.is_error for r in results] == [False, True]
        assert json.loads(results[0].content[0].text) == {"prs": []}
