"""Deferred mode: many commands offered over MCP as three tools, for `atipkit.app`'s
servers and the gateway alike.

A client of an app with hundreds of commands, or of a machine with thousands, lists three
tools instead of one a command: `search_tools` (words → the best matching commands, each
with its name, title, description and hints), `get_tool_schema` (a name → the full tool
definition, as `tools/list` would give it) and `run_tool` (a name and its arguments →
the command's answer). The schema is its own tool, not part of each hit, so a search costs
a few lines a hit and the model pays for a schema only for the command it picks.

This module holds what the two servers share: the names (and the old names still
accepted), the input schemas, the three definitions, and the handling of a call up to
the point where a command runs — checking the arguments, searching, looking a name up
with near misses. What differs stays with each server: how a command runs (an app's
function, an executable under a policy) and how an answer or a refusal is worded on the
wire (an app's envelope, the gateway's text). `handle` therefore returns what to do
(`Answered`, `Refusal` or `Run`) and the server renders it.

`search_tools` ranks by words, the same on every install: the gateway by
`atipkit.search.CommandIndex`'s BM25 (the library's default ranking), an app by
`KeywordIndex` (an app needs no search extra); never by the sentence encoder, which only
`atip search` chooses (decisions 197, 368).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from atipkit.bridge.deferred import SEARCH_TOOL  # one name wherever atipkit defers
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.model import Effects

__all__ = [
    "ALIASES",
    "LOOKUP_HINTS",
    "NAME_SCHEMA",
    "RUN_TOOL",
    "SCHEMA_TOOL",
    "SEARCH_LIMIT",
    "SEARCH_SCHEMA",
    "SEARCH_TOOL",
    "TOOLS",
    "Answered",
    "Refusal",
    "Run",
    "Searchable",
    "canonical",
    "definitions",
    "handle",
    "input_schema",
    "run_schema",
]

SCHEMA_TOOL = "get_tool_schema"
RUN_TOOL = "run_tool"
TOOLS = (SEARCH_TOOL, SCHEMA_TOOL, RUN_TOOL)
"""The three tools deferred mode lists, in the order it lists them."""
ALIASES: Mapping[str, str] = {"call_tool": RUN_TOOL}
"""Old names still answered, never listed: the gateway's `call_tool` until atipkit 0.3
(decision 366)."""
SEARCH_LIMIT = 10

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "Words from what the command does, its name or its parameters.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": SEARCH_LIMIT,
            "description": "At most this many commands.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

_NAME = {"type": "string", "minLength": 1, "description": f"A name from {SEARCH_TOOL}."}

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": _NAME},
    "required": ["name"],
    "additionalProperties": False,
}


def run_schema(options: dict[str, Any] | None = None) -> dict[str, Any]:
    """`run_tool`'s input: a name, the command's arguments, and, where the server takes
    per-call flags (an app's `--dry-run`, ...), their schema as `options`."""
    properties: dict[str, Any] = {
        "name": _NAME,
        "arguments": {
            "type": "object",
            "default": {},
            "description": f"The command's arguments, as its input schema says ({SCHEMA_TOOL}).",
        },
    }
    if options is not None:
        properties["options"] = options
    return {
        "type": "object",
        "properties": properties,
        "required": ["name"],
        "additionalProperties": False,
    }


SEARCH_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string"},
                    "annotations": {"type": "object"},
                },
                "required": ["name", "title", "description", "annotations"],
            },
        }
    },
    "required": ["tools"],
}
"""What `search_tools` answers: `{"tools": [hit, ...]}`."""

LOOKUP_HINTS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
"""The hints of a tool that only looks things up (search, schema)."""


def canonical(name: str) -> str | None:
    """The deferred tool `name` stands for (an old name gives the new one), or None."""
    name = ALIASES.get(name, name)
    return name if name in TOOLS else None


def input_schema(name: str, run_input: dict[str, Any]) -> dict[str, Any] | None:
    """The input schema of deferred tool `name` (or an old name of one), or None;
    `run_input` is the server's `run_tool` input schema."""
    tool = canonical(name)
    if tool is None:
        return None
    return {SEARCH_TOOL: SEARCH_SCHEMA, SCHEMA_TOOL: NAME_SCHEMA, RUN_TOOL: run_input}[tool]


def definitions(
    *,
    searched: str,
    search_title: str,
    run_title: str,
    count: int,
    effects: Effects,
    run_input: dict[str, Any],
    run_answer: str = "",
    search_words: str = "their names or their parameters",
    outputs: Mapping[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The three tools, as `tools/list` answers with them. `searched` says what is
    searched ("commands of notes"), `count` how many commands; `effects` are those of all
    commands together (`bridge.safety.combine`): `run_tool` may run any of them, so its
    hints and safety suffix are the worst case. `run_answer` ends `run_tool`'s
    description (what a call answers); `outputs` gives each tool its `outputSchema`, for
    servers whose answers have one."""
    from atipkit.bridge.mcp import annotations as hints
    from atipkit.bridge.safety import suffix

    run_text = (
        f"Run one of the {count} commands by name: find it with {SEARCH_TOOL}, read its "
        f"input schema with {SCHEMA_TOOL}, pass its arguments here.{run_answer}"
    )
    tools: list[dict[str, Any]] = [
        {
            "name": SEARCH_TOOL,
            "title": search_title,
            "description": f"Find {searched} ({count} in all) by words from what they do, "
            f"{search_words}. Answers the best matches first, each with its name, "
            "description and hints.",
            "inputSchema": SEARCH_SCHEMA,
            "annotations": {"title": search_title, **LOOKUP_HINTS},
        },
        {
            "name": SCHEMA_TOOL,
            "title": "Get a command's schema",
            "description": "The full definition of one command (input schema, hints), by "
            f"the name {SEARCH_TOOL} gave.",
            "inputSchema": NAME_SCHEMA,
            "annotations": {"title": "Get a command's schema", **LOOKUP_HINTS},
        },
        {
            "name": RUN_TOOL,
            "title": run_title,
            "description": f"{run_text} {suffix(effects)}".strip(),
            "inputSchema": run_input,
            "annotations": {"title": run_title, **hints(effects)},
        },
    ]
    for tool in tools:
        if outputs is not None and tool["name"] in outputs:
            tool["outputSchema"] = outputs[tool["name"]]
    return tools


# Handling a call ------------------------------------------------------------------------


class Searchable(Protocol):
    """What deferred mode needs of a server's catalog."""

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        """The best `limit` commands for `query` by its words, each with its name, title,
        description and annotations."""
        ...

    def definition_of(self, name: str) -> dict[str, Any] | None:
        """The tool definition of command `name`, or None when there is none."""
        ...

    def command_names(self) -> Iterable[str]:
        """Every name `definition_of` answers for (the near misses are among them)."""
        ...


@dataclass(frozen=True)
class Answered:
    """The answer to a search or a schema call, as JSON values."""

    value: dict[str, Any]


@dataclass(frozen=True)
class Refusal:
    """A call deferred mode refuses: arguments its schema refuses (`code` E1001 when
    the whole value is wrong, E1002 for one parameter) or an unknown command name. The
    model reads `message` and fixes the call; `details` are for programs."""

    message: str
    code: str
    details: dict[str, Any] = field(default_factory=dict)
    suggestion: str | None = None


@dataclass(frozen=True)
class Run:
    """Run command `name` with `arguments` (and `options`, the per-call flags, if any):
    the server's own business."""

    name: str
    arguments: dict[str, Any]
    options: dict[str, Any] | None = None


def handle(
    tool: str, arguments: Any, catalog: Searchable, run_input: dict[str, Any]
) -> Answered | Refusal | Run:
    """What to answer to a call of deferred tool `tool` (`canonical`'s name) with
    `arguments`: the search's hits, a command's definition, a refusal, or the command to
    run. `run_input` is the server's `run_tool` input schema."""
    refused = check(input_schema(tool, run_input) or run_input, arguments)
    if refused is not None:
        return refused
    if tool == SEARCH_TOOL:
        limit = arguments.get("limit", SEARCH_LIMIT)
        return Answered({"tools": catalog.search(arguments["query"], limit)})
    name = arguments["name"]
    definition = catalog.definition_of(name)
    if definition is None:
        return unknown(name, catalog.command_names())
    if tool == SCHEMA_TOOL:
        return Answered(definition)
    return Run(name, arguments.get("arguments", {}), arguments.get("options"))


def unknown(name: str, known: Iterable[str]) -> Refusal:
    """No command is called `name`: say so, with the nearest names."""
    close = difflib.get_close_matches(name, list(known), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    details: dict[str, Any] = {"param": "name", "name": name}
    if close:
        details["did_you_mean"] = close
    return Refusal(
        f"no command is called {name!r}{hint}",
        ErrorCode.BAD_VALUE,
        details,
        f"Find the command's name with {SEARCH_TOOL}.",
    )


def check(schema: dict[str, Any], value: Any) -> Refusal | None:
    """A `Refusal` naming the first place where `schema` refuses `value`, or None."""
    validator = _validator(_frozen(schema))
    if validator.is_valid(value):
        return None
    from atipkit._schema_errors import schema_errors, where

    errors = schema_errors(validator, value)
    first = errors[0]
    details: dict[str, Any] = {"errors": [e.message for e in errors]}
    if first.instance_path:
        details["param"] = str(first.instance_path[0])
    return Refusal(
        f"{where(first.instance_path)}: {first.message}",
        ErrorCode.BAD_VALUE if first.instance_path else ErrorCode.USAGE,
        details,
    )


def _frozen(schema: dict[str, Any]) -> str:
    import json

    return json.dumps(schema, sort_keys=True)


@functools.lru_cache(maxsize=32)
def _validator(schema: str) -> Any:
    import json

    import jsonschema_rs

    return jsonschema_rs.validator_for(json.loads(schema))
