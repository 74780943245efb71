"""An MCP server's tools as one ATIP document: pure, over the data `tools/list` gave.

- The server (`serverInfo`, `instructions`) → the tool's name, version, title,
  description, homepage; how to reach it → the tool's `x-mcp`, with the negotiated
  protocol version, the server info and instructions as given.
- Each MCP tool → one command keyed by its name; `inputSchema` → options
  (`atipkit.interop.mcp.schemas`); annotations → effects (`effects`); what ATIP cannot
  say (the original name, title, annotations as given, `outputSchema`, `execution`,
  icons, `_meta`, the input schema's other keywords) → the command's `x-mcp`.

A name that is not a valid command key (MCP's 1–128 characters of `[A-Za-z0-9_.-]`, not
starting with `-`) is rewritten into one, and the command's `x-mcp.name` keeps the
original for the call. The document is validated before it is returned; whatever makes
it invalid is reported as `NotDescribable`, naming the tool.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import msgspec

from atipkit import _jsontext
from atipkit.bridge.names import numbered
from atipkit.errors import DocumentTooLarge
from atipkit.interop.mcp.endpoint import Endpoint
from atipkit.interop.mcp.errors import NotDescribable
from atipkit.interop.mcp.schemas import options
from atipkit.model import (
    UNSET,
    AtipVersion,
    Command,
    Effects,
    FilesystemEffects,
    Tool,
    Trust,
    is_tool_name,
    to_tool_name,
)
from atipkit.protocol import PROTOCOL_VERSION

EXTENSION = "x-mcp"
MAX_TOOLS = 10_000
"""More tools than this are refused: no agent can choose among them."""
MAX_KEY = 128
MAX_DESCRIPTION = 200
"""The root description's length the RFC asks for (SPEC-NOTES 2); the instructions are
kept whole in `x-mcp`."""

MCP_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
"""What MCP says an absent annotation means (the specification's `ToolAnnotations`)."""

_KEY = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,127}\Z")
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class Listing(msgspec.Struct, kw_only=True):
    """What a server said about itself and its tools, as plain JSON data (the wire's
    camelCase names): what `describe` turns into ATIP, and what `fetch` gets."""

    endpoint: Endpoint
    protocol_version: str
    server_info: dict[str, Any] | None = None
    instructions: str | None = None
    tools: list[dict[str, Any]] = []


def describe(listing: Listing, *, name: str | None = None) -> Tool:
    """The ATIP document of the server in `listing`; `name` overrides the tool's name
    (`ValueError` if it is not one). Raises `NotDescribable` for tools ATIP cannot hold."""
    if len(listing.tools) > MAX_TOOLS:
        raise NotDescribable(
            None, f"the server lists {len(listing.tools)} tools; at most {MAX_TOOLS} are read"
        )
    for index, raw in enumerate(listing.tools):
        if not isinstance(raw, dict):
            raise NotDescribable(None, f"tool {index + 1} of the listing is not an object")
        try:
            _jsontext.check_depth(raw)
        except DocumentTooLarge as exc:
            said = raw.get("name") if isinstance(raw.get("name"), str) else None
            raise NotDescribable(said, exc.problems[0].format()) from None
        lone = _jsontext.lone_surrogate(raw)
        if lone is not None:  # the SDK refuses them on the wire; a caller may not
            where = f"tool {index + 1} of the listing, {lone}"
            raise NotDescribable(None, f"{where}: a string holds a lone UTF-16 surrogate")
    if _jsontext.lone_surrogate([listing.server_info, listing.instructions]) is not None:
        raise NotDescribable(None, "the server's info holds a lone UTF-16 surrogate")
    info = listing.server_info if isinstance(listing.server_info, dict) else {}
    tool_name = _tool_name(name, info, listing.endpoint)
    keys = command_keys([t.get("name") for t in listing.tools])
    commands = {key: _command(raw) for key, raw in zip(keys, listing.tools, strict=True)}
    extension: dict[str, Any] = {
        **listing.endpoint.to_extension(),
        "protocolVersion": listing.protocol_version,
    }
    if info:
        extension["serverInfo"] = info
    if listing.instructions:
        extension["instructions"] = listing.instructions
    tool = Tool(
        atip=AtipVersion(version=PROTOCOL_VERSION, features=["trust-v1"]),
        name=tool_name,
        version=_text(info.get("version")) or "unknown",
        description=_description(info, listing.instructions, tool_name),
        title=_text(info.get("title")) or UNSET,
        homepage=_text(info.get("websiteUrl")) or UNSET,
        trust=Trust(source="native", verified=False),
        commands=commands,
        extensions={EXTENSION: extension},
    )
    _check(tool)
    return tool


# -- names ---------------------------------------------------------------------------------


def command_keys(names: list[Any]) -> list[str]:
    """A command key for each tool, in order: its own name where that is a valid
    key, else a rewrite of it that no other tool has. Two tools of one name, or a tool
    without a name, cannot be told apart by a call: `NotDescribable`."""
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name:
            raise NotDescribable(None, f"a tool has no name (found {repr(name)[:60]})")
        if name in seen:
            raise NotDescribable(name, "two tools have this name; a call could not choose")
        seen.add(name)
    keys: list[str] = []
    taken = {n for n in names if _KEY.match(n)}
    for name in names:
        if _KEY.match(name):
            keys.append(name)
            continue
        base = _KEY_UNSAFE.sub("_", name)
        if base.startswith("-"):
            base = "_" + base[1:]
        if len(base) > MAX_KEY:
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
            base = f"{base[: MAX_KEY - 9]}_{digest}"
        keys.append(numbered(base, taken, limit=MAX_KEY))
    return keys


def check_tool_name(name: str) -> str:
    """`name` if it can name an ATIP tool (no spaces, slashes or control characters),
    else `ValueError`."""
    if not is_tool_name(name):
        raise ValueError(f"not a tool name: {name!r} (no spaces, slashes or control characters)")
    return name


def _tool_name(given: str | None, info: dict[str, Any], endpoint: Endpoint) -> str:
    if given is not None:
        return check_tool_name(given)
    # the server's own name; else the last word of its command that is not an option
    # (`server.py` of `python server.py`), or its URL's host
    word = next((w for w in reversed(endpoint.command) if not w.startswith("-")), "")
    for candidate in (
        _text(info.get("name")),
        word.rstrip("/").rsplit("/", 1)[-1],
        endpoint.url.split("//", 1)[-1].split("/", 1)[0] if endpoint.url else "",
    ):
        cleaned = to_tool_name(candidate)
        if cleaned:
            return cleaned[:MAX_KEY]
    return "mcp-server"


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _description(info: dict[str, Any], instructions: str | None, name: str) -> str:
    """One line: the server's description, else the first line of its instructions,
    else its title, cut to the RFC's 200 characters."""
    first = (instructions or "").strip().split("\n", 1)[0]
    text = _text(info.get("description")) or first.strip() or _text(info.get("title"))
    text = " ".join(text.split()) or f"The tools of the MCP server {name}"
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 3] + "..."


# -- one tool ------------------------------------------------------------------------------


def _command(raw: dict[str, Any]) -> Command:
    name = raw["name"]
    opts, extras = options(name, raw.get("inputSchema"))
    annotations = raw.get("annotations")
    if annotations is not None and not isinstance(annotations, dict):
        raise NotDescribable(name, "annotations must be an object")
    extension: dict[str, Any] = {"name": name}
    for key in ("title", "annotations", "outputSchema", "execution", "icons", "_meta"):
        if raw.get(key) is not None:
            extension[key] = raw[key]
    if extras:
        extension["inputSchema"] = extras
    description = _text(raw.get("description")) or _text(raw.get("title")) or name
    return Command(
        description=description,
        options=opts,
        effects=effects(annotations or {}),
        extensions={EXTENSION: extension},
    )


def effects(annotations: dict[str, Any]) -> Effects:
    """A tool's effects from its MCP annotations, never safer than they say.

    An absent hint means what MCP says it means (`MCP_DEFAULTS`: may destroy, not
    idempotent, open world), so those are stated, not left unknown: unknown would let a
    policy run what every MCP client treats as destructive without asking. `readOnlyHint`
    true means no writes and no deletes, nothing destroyed (unless `destructiveHint` is
    explicitly true: the cautious hint wins), and safe to repeat (unless
    `idempotentHint` is explicitly false). `openWorldHint` is `network`. What MCP does not
    say (files read, subprocesses, reversibility, cost, duration) stays unknown."""
    stated = {k: v for k, v in annotations.items() if k in MCP_DEFAULTS and isinstance(v, bool)}
    hints = {**MCP_DEFAULTS, **stated}
    if hints["readOnlyHint"]:
        return Effects(
            filesystem=FilesystemEffects(write=False, delete=False),
            network=hints["openWorldHint"],
            idempotent=stated.get("idempotentHint", True),
            destructive=stated.get("destructiveHint", False),
        )
    return Effects(
        network=hints["openWorldHint"],
        idempotent=hints["idempotentHint"],
        destructive=hints["destructiveHint"],
    )


def _check(tool: Tool) -> None:
    """The document must validate; a fault names the MCP tool it comes from."""
    from atipkit.model import to_dict
    from atipkit.problems import json_path
    from atipkit.validation import validate

    report = validate(to_dict(tool))
    if report.ok:
        return
    problem = report.errors[0]
    mcp_name = None
    for key, command in tool.commands.items():
        prefix = json_path(["commands", key])
        if problem.location == prefix or problem.location.startswith((prefix + ".", prefix + "[")):
            mcp_name = command.extensions[EXTENSION]["name"]
    raise NotDescribable(mcp_name, f"not valid ATIP: {problem.location}: {problem.message}")
