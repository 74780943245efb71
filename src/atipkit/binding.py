"""What a call runs: the tools of one session under their keys, each with the binary it
was described from.

A tool resolved on PATH or from the registry is described by one binary, hashed when it
was resolved (`Resolved.evidence`: path and hash). Its calls run that file — its real
path, never its name looked up on PATH again — and only while it is still that binary:
the executor checks it before every call (`Executor._verify`), so a binary replaced since
it was described is never run as if it were the one described.

`bind` puts the tools of one session together (`atip run`, the MCP gateway): each under
its key (`bridge.names.tool_keys`: its name, unless an earlier tool has that name), with
the executable its calls run and its evidence, and a line for each name claimed twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from atipkit.model import Tool
    from atipkit.policy import Evidence


class Bound(NamedTuple):
    """The tools of one session as an `Executor` takes them: the documents (each keeps
    its own name), the executable and the evidence of each by key, where each came from,
    and one line for each name claimed twice."""

    tools: list[Tool]
    executables: dict[str, str]
    evidence: dict[str, Evidence]
    sources: list[str]
    clashes: list[str]


def bind(entries: Iterable[tuple[Tool, str, Evidence]]) -> Bound:
    """`(tool, source, evidence)` in the order given → `Bound`. A tool given again with
    the same name and executable (`--tool gh --tool /usr/bin/gh`) is the same tool and
    kept once; any other tool whose name an earlier one has is kept under its own key,
    and reported."""
    from atipkit.bridge.names import name_clashes, tool_keys

    tools: list[Tool] = []
    sources: list[str] = []
    facts: list[Evidence] = []
    seen: set[tuple[str, str]] = set()
    for tool, source, evidence in entries:
        if evidence.path is not None:
            if (tool.name, evidence.path) in seen:
                continue
            seen.add((tool.name, evidence.path))
        tools.append(tool)
        sources.append(source)
        facts.append(evidence)
    keys = tool_keys(tools)
    return Bound(
        tools,
        {key: e.path for key, e in zip(keys, facts, strict=True) if e.path is not None},
        dict(zip(keys, facts, strict=True)),
        sources,
        name_clashes(tools, sources),
    )
