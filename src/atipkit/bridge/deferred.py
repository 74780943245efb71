"""Deferred tools: every command defined in the request, none in the model's context
until a search finds it (issue 11).

A machine with hundreds of commands cannot put them all in front of a model: their
schemas would fill its context and its choice gets worse with every tool it must weigh.
Two providers let a request define tools that stay out of the context until a search
loads them; this module renders a compile that way.

- **OpenAI Responses API**: each ATIP tool becomes a `namespace` (its name and
  description are all the model sees up front) holding the tool's commands as the compile
  renders them, each with `defer_loading: true`, and the hosted `{"type": "tool_search"}`
  tool loads them. A call comes back as a `function_call` item with the function's `name`
  and its `namespace`; compiled names are unique across the compile, so
  `parse_tool_calls` maps it back by name as it maps any call.
- **Anthropic**: every compiled tool gets `defer_loading: true`, and a custom search tool
  (`search_tools`, as MCP's deferred mode names its own; not deferred: the API refuses a
  request whose tools are all deferred) is answered by the agent itself with
  `anthropic_search_result`: a
  `tool_result` of `tool_reference` blocks, which the API expands into the definitions.
  The ranking is atipkit's own (`atipkit.search.CommandIndex`, over the commands'
  metadata, BM25 as the index ranks by default), not the API's.

Shapes are those of the official SDKs' types (`openai.types.responses.NamespaceToolParam`,
`ToolSearchToolParam`; `anthropic.types.ToolParam`, `ToolResultBlockParam`,
`ToolReferenceBlockParam`), which the tests validate against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from atipkit.bridge.compile import Compiled, Provider
from atipkit.bridge.names import assign_names, distinct_tools
from atipkit.model import Tool

DEFERRED_PROVIDERS: tuple[Provider, ...] = ("openai-responses", "anthropic")
"""The providers whose APIs load deferred tools through a search."""
SEARCH_TOOL = "search_tools"
"""The name of the Anthropic search tool the agent answers, and of the search tool of
MCP's deferred mode (`atipkit.serve.deferred`): one name wherever atipkit defers."""
OLD_SEARCH_TOOL = "atip_search_tools"
"""Deprecated: the Anthropic search tool's name before 0.2. An agent whose recorded
conversations name it passes `search_tool=OLD_SEARCH_TOOL` until 0.3 (decision 367)."""
DEFAULT_LIMIT = 5  # what Anthropic's own search tools return by default
MAX_LIMIT = 20


class HitLike(Protocol):
    """What the search answer needs of a hit (`atipkit.search.Hit` is one)."""

    @property
    def tool(self) -> str: ...

    @property
    def command(self) -> str: ...  # the command path, space-joined; "" for the root


class Searcher(Protocol):
    """Anything that ranks commands for a query (`atipkit.search.CommandIndex` does)."""

    def search(self, query: str, limit: int) -> Sequence[HitLike]: ...

    def __len__(self) -> int: ...


def deferred_tools(
    compiled: Compiled, tools: Tool | Iterable[Tool], *, search_tool: str = SEARCH_TOOL
) -> list[dict[str, Any]]:
    """What the request takes as `tools` when `compiled`'s commands are to be found by
    search rather than loaded up front.

    `tools` are the ATIP tools `compiled` was compiled from: their names and descriptions
    are what the model sees before it searches (OpenAI's namespaces, the list in the
    Anthropic search tool's description). `search_tool` renames the Anthropic search tool
    should a compiled command already have its name. The provider is `compiled`'s: the
    deferred functions are exactly what that compile rendered. Raises `ValueError` for a
    provider that cannot defer, a compile of tools not among `tools`, or a search tool
    name a command has.
    """
    if compiled.provider not in DEFERRED_PROVIDERS:
        raise ValueError(
            f"provider {compiled.provider!r} cannot defer loading; "
            f"expected one of {', '.join(DEFERRED_PROVIDERS)}"
        )
    groups = _by_tool(compiled, tools)
    if compiled.provider == "openai-responses":
        return [*_namespaces(compiled, groups), {"type": "tool_search"}]
    if search_tool in compiled.bindings:
        raise ValueError(
            f"a compiled command is named {search_tool!r}, as the search tool is; "
            "give the search tool another name"
        )
    deferred = [{**tool, "defer_loading": True} for tool in compiled.tools]
    return [_search_tool(search_tool, [tool for tool, _ in groups.values()]), *deferred]


def anthropic_search_result(
    index: Searcher,
    compiled: Compiled,
    tool_use_id: str,
    query: object,
    limit: object = DEFAULT_LIMIT,
) -> dict[str, Any]:
    """The `tool_result` block answering a call of the search tool: a `tool_reference`
    for each of the best matching commands, which the API loads for the model.

    `query` and `limit` are the call's input as the model sent them; like
    `parse_tool_calls`, this never raises for the model's mistakes: a query that is not
    words is an `is_error` result saying so, a `limit` that is not a whole number is the
    default, and any limit is kept within 1 and `MAX_LIMIT`. Hits are mapped to the names
    of `compiled` by their command (so an `action` compile references the group tool), and
    a hit `compiled` has no tool for is passed over: the API refuses a reference to a tool
    the request does not define. The index may hold more than `compiled` (a compile of some
    commands), so the references are the first `limit` defined names of the whole ranking,
    not what is defined among its first `limit` hits.
    """
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
    if not isinstance(query, str) or not query.strip():
        block["content"] = "'query' must be words saying what you want to do"
        block["is_error"] = True
        return block
    names = command_names(compiled)
    ranked = (names.get((hit.tool, hit.command)) for hit in index.search(query, len(index)))
    unique = list(dict.fromkeys(name for name in ranked if name is not None))[: _limit(limit)]
    if unique:
        block["content"] = [{"type": "tool_reference", "tool_name": name} for name in unique]
    else:
        block["content"] = f"No command matches {query!r}; search again with other words."
    return block


def command_names(compiled: Compiled) -> dict[tuple[str, str], str]:
    """(tool, command path space-joined, as a search hit gives them) → the name of the
    compiled tool that runs the command (a group tool's for each of its actions)."""
    return {
        (target.tool, " ".join(target.path)): name
        for name, binding in compiled.bindings.items()
        for target in binding.targets.values()
    }


def _limit(value: object) -> int:
    if isinstance(value, float) and value.is_integer():  # JSON has one kind of number
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return DEFAULT_LIMIT
    return min(max(value, 1), MAX_LIMIT)


def _by_tool(compiled: Compiled, tools: Tool | Iterable[Tool]) -> dict[str, tuple[Tool, list[int]]]:
    """Each ATIP tool that has commands in `compiled`, in compile order, with the indices
    of its compiled tools. Every target of one compiled tool is a command of one tool, named
    by its key (`names.distinct_tools`), as the compile named it."""
    given = {
        tool.name: tool for tool in distinct_tools([tools] if isinstance(tools, Tool) else tools)
    }
    out: dict[str, tuple[Tool, list[int]]] = {}
    for i, flat in enumerate(compiled.flat):
        name = next(iter(flat.binding.targets.values())).tool
        if name not in given:
            raise ValueError(f"{flat.name!r} is a command of {name!r}, not among the tools given")
        out.setdefault(name, (given[name], []))[1].append(i)
    return out


def _namespaces(
    compiled: Compiled, groups: dict[str, tuple[Tool, list[int]]]
) -> list[dict[str, Any]]:
    """One namespace a tool, named as a compile would name its root command (so every
    provider accepts it, and two tools never share one)."""
    names = assign_names((name,) for name in groups)
    return [
        {
            "type": "namespace",
            "name": names[(name,)],
            "description": tool.description,
            "tools": [{**compiled.tools[i], "defer_loading": True} for i in indices],
        }
        for name, (tool, indices) in groups.items()
    ]


def _search_tool(name: str, tools: list[Tool]) -> dict[str, Any]:
    """The search tool, never deferred. Its description lists the tools that can be
    searched: with every command deferred, it is all the model knows of them up front."""
    listed = "".join(f"\n- {t.name}: {_first_line(t.description)}" for t in tools)
    return {
        "name": name,
        "description": (
            "Find the commands that fit a task among the command-line tools below; the "
            "commands found become tools you can call. Say what you want to do in a few "
            "words ('list open pull requests'); search again with other words when nothing "
            f"fits.\nTools:{listed or ' none'}"
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do, in words"},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "description": f"At most this many commands (default {DEFAULT_LIMIT})",
                },
            },
            "required": ["query"],
        },
    }


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "(no description)"
