"""The function-calling lifecycle (RFC 0.6 §7): a model's tool calls in, results out.

`parse_tool_calls` accepts a provider's response as plain JSON-like data or as the
official SDK's object (anything with `model_dump`). It is total: a call the compile cannot
map (unknown name or action, unknown or missing parameter, arguments that are not JSON)
comes back with `error` set, so the agent can tell the model what to fix instead of
failing the turn. Calls keep the model's order and ids; Gemini, which may give none, is
correlated by position.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from atipkit import _jsontext
from atipkit.bridge.compile import Compiled, Provider
from atipkit.bridge.flatten import ACTION, ParamRef, Target
from atipkit.errors import DocumentError, MalformedJSON
from atipkit.model import CommandPath


class ToolCall(msgspec.Struct, kw_only=True):
    """One call of a compiled tool, mapped back to its command."""

    id: str | None
    index: int
    name: str
    arguments: dict[str, Any]
    tool: str | None = None
    path: CommandPath | None = None
    action: str | None = None
    values: dict[ParamRef, Any] = {}
    error: str | None = None
    unknown: list[str] = []
    """Arguments the tool has no parameter for (with `error`): the model's keys."""
    missing: list[str] = []
    """Required parameters the call leaves out (with `error`)."""

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_tool_calls(provider: Provider, response: Any, compiled: Compiled) -> list[ToolCall]:
    """Every tool call in `response`, in order, resolved through `compiled`'s bindings."""
    data = _plain(response)
    raw = list(_extract(provider, data))
    return [
        _resolve(i, call_id, name, args, compiled) for i, (call_id, name, args) in enumerate(raw)
    ]


def _plain(obj: Any) -> Any:
    """SDK objects (pydantic models) as plain data; plain data unchanged."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", by_alias=False)
    if isinstance(obj, list):
        return [_plain(o) for o in obj]
    return obj


def _get(obj: Any, *names: str) -> Any:
    """The first of `names` present in a dict (snake_case SDK dumps, camelCase REST)."""
    if isinstance(obj, dict):
        for name in names:
            if obj.get(name) is not None:
                return obj[name]
    return None


def _extract(provider: Provider, data: Any) -> Iterable[tuple[str | None, str, Any]]:
    if provider == "openai":
        messages: list[Any]
        if isinstance(data, dict) and "choices" in data:
            messages = [c.get("message") or {} for c in data["choices"]]
        elif isinstance(data, dict):
            messages = [data]
        else:
            messages = [{"tool_calls": data}]
        for message in messages:
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                yield call.get("id"), function.get("name", ""), function.get("arguments")
    elif provider == "openai-responses":
        items = data.get("output", []) if isinstance(data, dict) else data
        for item in items or []:
            if item.get("type") == "function_call":
                yield (
                    item.get("call_id") or item.get("id"),
                    item.get("name", ""),
                    item.get("arguments"),
                )
    elif provider == "anthropic":
        blocks = data.get("content", []) if isinstance(data, dict) else data
        for block in blocks or []:
            if block.get("type") == "tool_use":
                yield block.get("id"), block.get("name", ""), block.get("input")
    elif provider.startswith("gemini"):
        parts: list[Any]
        if isinstance(data, dict) and "candidates" in data:
            candidate = (data["candidates"] or [{}])[0]
            parts = (candidate.get("content") or {}).get("parts") or []
        elif isinstance(data, dict):
            parts = data.get("parts") or []
        else:
            parts = data or []
        for part in parts:
            call = _get(part, "function_call", "functionCall")
            if call:
                yield call.get("id"), call.get("name", ""), call.get("args")
    else:  # mcp: tools/call params, or a list of them
        for params in data if isinstance(data, list) else [data]:
            yield params.get("id"), params.get("name", ""), params.get("arguments")


def _resolve(
    index: int, call_id: str | None, name: str, raw_args: Any, compiled: Compiled
) -> ToolCall:
    call = ToolCall(id=call_id, index=index, name=name, arguments={})
    try:  # the one gate of JSON text: size, syntax, lone surrogates, nesting
        if isinstance(raw_args, str):
            raw_args = _jsontext.decode(raw_args) if raw_args.strip() else {}
        else:  # decoded by the provider's SDK: nesting still bounded before any walk
            _jsontext.check_depth(raw_args)
    except MalformedJSON as exc:
        call.error = f"arguments are not valid JSON: {exc}"
        return call
    except DocumentError as exc:  # too large or too deep
        call.error = f"arguments: {exc}"
        return call
    if raw_args is None:
        raw_args = {}
    if not isinstance(raw_args, dict):
        call.error = "arguments must be a JSON object"
        return call
    call.arguments = dict(raw_args)
    binding = compiled.bindings.get(name)
    if binding is None:
        call.error = f"unknown tool {name!r}"
        return call
    args = dict(raw_args)
    action = ""
    if set(binding.targets) != {""}:
        action = args.pop(ACTION, None)
        if action not in binding.targets:
            choices = ", ".join(sorted(binding.targets))
            call.error = f"'action' must be one of {choices}; got {action!r}"
            return call
        call.action = action
    target: Target = binding.targets[action]
    call.tool, call.path = target.tool, target.path
    values: dict[ParamRef, Any] = {}
    unknown = []
    for key, value in args.items():
        ref = target.params.get(key)
        if ref is None:
            if value is not None:
                unknown.append(key)
        elif value is not None:  # strict mode sends null for an omitted optional parameter
            values[ref] = value
    present = {key for key, value in args.items() if value is not None}
    missing = [key for key in target.required if key not in present]
    call.unknown, call.missing = unknown, missing
    if unknown:
        where = f" for action {action!r}" if action else ""
        call.error = f"unknown parameter(s) {', '.join(map(repr, unknown))}{where}"
    elif missing:
        call.error = f"missing required parameter(s) {', '.join(map(repr, missing))}"
    call.values = values
    return call


# -- results --------------------------------------------------------------------------------


def _text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def tool_result_messages(
    provider: Provider, results: Sequence[tuple[ToolCall, Any, bool]]
) -> list[dict[str, Any]]:
    """The message(s) that return results to the model, for calls of one turn, in order.

    `results` holds `(call, result, is_error)`; `result` is text or JSON-able data.
    OpenAI takes one message per call, Anthropic and Gemini one message holding them all.
    """
    if provider == "openai":
        return [{"role": "tool", "tool_call_id": c.id, "content": _text(r)} for c, r, _ in results]
    if provider == "openai-responses":
        return [
            {"type": "function_call_output", "call_id": c.id, "output": _text(r)}
            for c, r, _ in results
        ]
    if provider == "anthropic":
        blocks = []
        for call, result, is_error in results:
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": _text(result),
            }
            if is_error:
                block["is_error"] = True
            blocks.append(block)
        return [{"role": "user", "content": blocks}]
    if provider.startswith("gemini"):
        parts = []
        for call, result, is_error in results:
            response: dict[str, Any] = {"error" if is_error else "result": result}
            part: dict[str, Any] = {"name": call.name, "response": response}
            if call.id:
                part["id"] = call.id
            parts.append({"function_response": part})
        return [{"role": "user", "parts": parts}]
    return [
        {"content": [{"type": "text", "text": _text(r)}], "isError": bool(e)} for _, r, e in results
    ]


def tool_result_message(
    provider: Provider, call: ToolCall, result: Any, *, is_error: bool = False
) -> dict[str, Any]:
    """The message returning one call's result (see `tool_result_messages` for several)."""
    return tool_result_messages(provider, [(call, result, is_error)])[0]
