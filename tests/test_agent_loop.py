"""examples/agent_loop.py driven by recorded provider responses (no network): the SDKs'
own response types carry them, and the requests the loop sends are checked."""

from __future__ import annotations

import ast
import importlib.util
from typing import Any

import pytest

from atipkit.execute import Executor
from tests.helpers import EXAMPLES
from tests.test_execute import notes  # noqa: F401  (the fixture)


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("agent_loop", EXAMPLES / "agent_loop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Recorded:
    """Stands where the provider's client would: returns recorded responses, in order,
    as the SDK's own objects, and keeps what it was sent."""

    def __init__(self, parse: Any, responses: list[dict[str, Any]]) -> None:
        self.parse = parse
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.messages = self
        self.chat = self
        self.completions = self

    def create(self, **request: Any) -> Any:
        self.requests.append(request)
        return self.parse(self.responses.pop(0))


def anthropic_turns() -> list[dict[str, Any]]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    base = {
        "type": "message",
        "role": "assistant",
        "model": "m",
        "stop_sequence": None,
        "usage": usage,
    }
    return [
        {
            **base,
            "id": "msg_1",
            "stop_reason": "tool_use",
            "content": [
                {"type": "text", "text": "Adding, listing, then deleting."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "notes_add",
                    "input": {"text": "buy milk"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "notes_list", "input": {}},
                {"type": "tool_use", "id": "toolu_3", "name": "notes_rm", "input": {}},
            ],
        },
        {
            **base,
            "id": "msg_2",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Done: one note, deletion refused."}],
        },
    ]


def openai_turns() -> list[dict[str, Any]]:
    base = {"object": "chat.completion", "created": 0, "model": "m"}
    return [
        {
            **base,
            "id": "c1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {
                                    "name": "notes_add",
                                    "arguments": '{"text": "buy milk"}',
                                },
                            },
                            {
                                "id": "call_2",
                                "type": "function",
                                "function": {"name": "notes_rm", "arguments": "{}"},
                            },
                        ],
                    },
                }
            ],
        },
        {
            **base,
            "id": "c2",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Added it."},
                }
            ],
        },
    ]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_agent_loop_runs_tools_under_the_policy(notes, provider):  # noqa: F811
    tool, exe, store = notes
    example = load_example()
    if provider == "anthropic":
        from anthropic.types import Message

        client = Recorded(Message.model_validate, anthropic_turns())
    else:
        from openai.types.chat import ChatCompletion

        client = Recorded(ChatCompletion.model_validate, openai_turns())
    seen = []
    answer = example.run_agent(
        "Note that I need milk",
        provider=provider,
        client=client,
        tools=[tool],
        executor=Executor(tool, executables=exe),
        model="m",
        on_outcome=seen.append,
    )
    assert answer in ("Done: one note, deletion refused.", "Added it.")
    assert store.read_text() == "buy milk\n"
    assert [o.decision.action for o in seen][-1] == "deny"  # rm: destructive, unconfirmed

    first, second = client.requests
    names = [
        t["name"] if provider == "anthropic" else t["function"]["name"] for t in first["tools"]
    ]
    assert "notes_rm" in names
    system = first["system"] if provider == "anthropic" else first["messages"][0]["content"]
    assert system.startswith(example.SYSTEM)
    assert system.count("what you did.") == 1
    assert "`notes_rm`" in system.split("## Destructive")[1]
    replies = second["messages"][-1]
    if provider == "anthropic":
        blocks = replies["content"]
        assert [b["tool_use_id"] for b in blocks] == ["toolu_1", "toolu_2", "toolu_3"]
        assert blocks[1]["content"] == "buy milk\n"
        assert blocks[2]["is_error"] is True
    else:
        tail = second["messages"][-2:]
        assert [m["tool_call_id"] for m in tail] == ["call_1", "call_2"]
        assert tail[1]["content"].startswith("denied by policy")


def test_the_agent_loop_imports_from_atipkit_alone():
    """An agent builder's one import: no name from a subpackage of atipkit."""
    tree = ast.parse((EXAMPLES / "agent_loop.py").read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert {m for m in modules if m and m.startswith("atipkit")} == {"atipkit"}
