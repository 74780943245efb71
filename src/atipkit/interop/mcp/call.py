"""Running a command of an imported MCP tool: the `tools/call` request and its result.

`request` is pure: the command's MCP name (its `x-mcp.name`) and the call's values back
under the property names they came from, each checked against the parameter's schema
first (the one a compile showed the model), so a model's mistake gets the same ATDF
error (`InvalidArguments`) a command-line tool's would, before any server starts.
`send` sends such a request to a server, and `call` does both for the server the tool's
`x-mcp` names; they answer what came back: the text, whether the tool reported an error,
and its structured content. `McpCaller` is the executor's way to them: it is passed in
(`Executor(remote=[McpCaller()])`), since the executor sits below this package.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import msgspec

from atipkit.bridge.flatten import ParamRef
from atipkit.execute.argv import ArgumentProblem, InvalidArguments
from atipkit.execute.runner import DEFAULT_TIMEOUT
from atipkit.interop.mcp.describe import EXTENSION
from atipkit.interop.mcp.endpoint import Endpoint
from atipkit.interop.mcp.errors import BadExtension
from atipkit.model import CommandPath, Option, Tool, get_command


class CallResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a tool call answered."""

    text: str
    """The text blocks of the result, in order; other blocks as a one-line note each."""
    is_error: bool
    """The tool said it failed (`isError`)."""
    structured_content: Any = None
    seconds: float = 0.0


def is_mcp(tool: Tool) -> bool:
    """Whether `tool`'s commands run on an MCP server (its `x-mcp` names one). A shim
    (a document that describes a binary by its hash) never does: whoever can publish a
    shim for a binary must not be able to make a call start some other program."""
    return EXTENSION in tool.extensions and not tool.binary


def endpoint_of(tool: Tool) -> Endpoint:
    """The server `tool`'s `x-mcp` names (`BadExtension` if it names none)."""
    return Endpoint.from_extension(tool.extensions.get(EXTENSION), f"$.{EXTENSION}")


def request(tool: Tool, path: CommandPath, values: Mapping[ParamRef, Any]) -> dict[str, Any]:
    """The `tools/call` request for command `path` of `tool` with `values` (as a parsed
    tool call holds them); raises `InvalidArguments`."""
    command = get_command(tool, path)
    extension = command.extensions.get(EXTENSION)
    name = extension.get("name") if isinstance(extension, dict) else None
    if not isinstance(name, str) or not name:
        key = " ".join(path)
        raise BadExtension(f"$.commands.{key}.{EXTENSION}.name", "expected the MCP tool's name")
    options = {o.name: o for o in command.options}
    problems: list[ArgumentProblem] = []
    arguments: dict[str, Any] = {}
    for ref, value in values.items():
        spec = options.get(ref.name) if ref.kind == "option" else None
        if spec is None:
            problems.append(
                ArgumentProblem(
                    ref.name,
                    f"{name} has no parameter {ref.name!r}",
                    None,
                    "no such parameter",
                    None,
                )
            )
            continue
        problem = _check(spec, value)
        if problem is not None:
            problems.append(problem)
        arguments[spec.name] = value
    for spec in command.options:
        if spec.required and spec.name not in arguments:
            problems.append(
                ArgumentProblem(spec.name, "is required", None, _expected(_schema(spec)), None)
            )
    if problems:
        raise InvalidArguments(" ".join((tool.name, *path)), problems)
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


def call(
    tool: Tool,
    path: CommandPath,
    values: Mapping[ParamRef, Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> CallResult:
    """Call command `path` of the imported MCP tool `tool` with `values`, on the server
    its `x-mcp` names (started for this call when it is a command), within `timeout`
    seconds. Raises `InvalidArguments` for values that do not fit, `BadExtension`, and
    the errors of `atipkit.interop.mcp.session` for a server that cannot be reached."""
    sent = request(tool, path, values)
    return send(endpoint_of(tool), sent, timeout=timeout)


def send(
    endpoint: Endpoint, sent: Mapping[str, Any], *, timeout: float = DEFAULT_TIMEOUT
) -> CallResult:
    """Send `sent`, a `tools/call` request as `request` builds it (its values already
    checked), to the server at `endpoint` within `timeout` seconds."""
    from atipkit.interop.mcp.session import call_tool

    params = sent["params"]
    started = time.monotonic()
    raw = call_tool(endpoint, params["name"], params["arguments"], timeout=timeout)
    return result_of(raw, seconds=time.monotonic() - started)


class McpCaller:
    """How `atipkit.execute.Executor` runs the tools of MCP servers: pass it as
    `Executor(tools, remote=[McpCaller()])` (`atip run` and `atip mcp serve` do). It
    claims every tool whose `x-mcp` names a server (`is_mcp`: never a shim), and sends
    each call as `tools/call` on the server the tool names."""

    def claims(self, tool: Tool) -> bool:
        return is_mcp(tool)

    def prepare(self, tool: Tool, path: CommandPath, values: Mapping[ParamRef, Any]) -> McpCall:
        """Raises `InvalidArguments` and `BadExtension`."""
        return McpCall(request(tool, path, values), endpoint_of(tool))


class McpCall:
    """One `tools/call`, ready to send (`atipkit.execute.remote.RemoteCall`)."""

    def __init__(self, sent: dict[str, Any], endpoint: Endpoint) -> None:
        self.request = sent
        self.endpoint = endpoint
        self.argv = list(endpoint.command) if endpoint.transport == "stdio" else [endpoint.url]
        self.target = f"{sent['params']['name']} on {endpoint.where}"

    def send(self, *, timeout: float) -> CallResult:
        return send(self.endpoint, self.request, timeout=timeout)


def result_of(raw: Mapping[str, Any], *, seconds: float = 0.0) -> CallResult:
    """A `CallToolResult` (JSON) as text: text blocks as they are; an image, audio or
    binary resource as a note of its type and size; a text resource's text; a link's URI.
    A result with structured content and no text gives the content as JSON."""
    parts = [_block(b) for b in raw.get("content") or [] if isinstance(b, dict)]
    structured = raw.get("structuredContent")
    if not parts and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False)]
    return CallResult(
        text="\n".join(parts),
        is_error=raw.get("isError") is True,
        structured_content=structured,
        seconds=seconds,
    )


def _block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mimeType', 'unknown type')}, {size} bytes]"
    if kind == "resource":
        resource = block.get("resource") or {}
        if "text" in resource:
            return str(resource["text"])
        size = len(str(resource.get("blob", ""))) * 3 // 4
        return f"[resource {resource.get('uri', '')} {resource.get('mimeType', '')}, {size} bytes]"
    if kind == "resource_link":
        return f"[link {block.get('uri', '')}: {block.get('name', '')}]"
    return f"[{kind} content]"


# -- checking values -----------------------------------------------------------------------


def _schema(spec: Option) -> dict[str, Any]:
    """The parameter's schema as a compile shows it to the model."""
    from atipkit.bridge.params import parameter_schema

    return parameter_schema(spec)


def _check(spec: Option, value: Any) -> ArgumentProblem | None:
    from atipkit import _jsontext
    from atipkit._schema_errors import schema_errors, where
    from atipkit.schema import parameter_validator

    schema = _schema(spec)
    lone = _jsontext.lone_surrogate(value)
    if lone is not None:
        return ArgumentProblem(
            spec.name,
            f"{lone.removeprefix('$').lstrip('.')}: a string holds a lone UTF-16 surrogate "
            "(half a pair, no character), which no JSON message can carry".lstrip(": "),
            None,
            _expected(schema),
            None,
        )
    try:
        validator = parameter_validator(schema)
    except ValueError:  # a schema that does not compile (atip validate says so): the server judges
        return None
    errors = schema_errors(validator, value)
    if not errors:
        return None
    first = errors[0]
    return ArgumentProblem(
        spec.name,
        f"{where(first.instance_path, '').lstrip('.')}: {first.message}".lstrip(": "),
        value,
        _expected(schema),
        None,
    )


def _expected(schema: dict[str, Any]) -> str:
    shown = json.dumps({k: v for k, v in schema.items() if k not in ("description", "default")})
    return "a value of schema " + (shown if len(shown) <= 200 else shown[:197] + "...")
