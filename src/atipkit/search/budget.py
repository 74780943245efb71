"""Compiling within a context budget: the commands that fit a task, and a map of the rest.

`fit_budget(tools, provider, budget, query=...)` ranks every command by the query
(`CommandIndex`), then takes the best ones whose compiled definitions fit in `budget`
tokens (`atipkit.search.tokens`), after room is kept for an *overview*: for each tool
with commands left out, a depth-1 ATIP document (its top-level commands, each with its
description only) marked `partial`, with `totalCommands`, `includedCommands` and
`omitted` (RFC 0.6 §3.1.1). Its `omitted.reason` is `size-limited`, and its
`safetyAssumption` says what the left-out commands may do: `known-unsafe` when any of
them is destructive, `known-safe` when every one states it is not, `unknown` otherwise.
The agent reads the overview, and asks for a command it needs (`atip compile --commands`).

Without a query, commands are taken in document order, shallow ones first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from atipkit.bridge.compile import Compiled, Compiler, Provider
from atipkit.bridge.flatten import invocable
from atipkit.bridge.names import distinct_tools
from atipkit.errors import AtipError
from atipkit.model import (
    UNSET,
    Command,
    CommandPath,
    Effects,
    Omitted,
    PartialFilter,
    SafetyAssumption,
    Tool,
    count_commands,
    merge_effects,
    to_dict,
    walk_commands,
)
from atipkit.search.index import CommandIndex
from atipkit.search.tokens import count_each, count_tokens

if TYPE_CHECKING:
    from atipkit.bridge.flatten import FlatTool


class BudgetTooSmall(AtipError, ValueError):
    """Not even the overview of the tools fits in the budget."""

    def __init__(self, budget: int, needed: int) -> None:
        super().__init__(
            f"a budget of {budget} tokens cannot hold even the overview of these tools "
            f"({needed} tokens)"
        )
        self.budget = budget
        self.needed = needed


class TokenCount(msgspec.Struct, kw_only=True):
    budget: int
    tools: int  # the definitions sent
    overview: int  # the overview documents
    total: int  # tools + overview: within the budget
    full: int  # every command compiled, for comparison


class Budgeted(msgspec.Struct, kw_only=True):
    """A compile that fits a budget: the chosen commands and the overview of the rest."""

    compiled: Compiled
    overview: list[Tool]
    tokens: TokenCount

    def to_builtins(self) -> dict[str, Any]:
        """What `atip compile --budget` prints: `tools` as the provider takes them,
        `overview` as ATIP documents, `tokens`."""
        return {
            "tools": self.compiled.payload(),
            "overview": [to_dict(tool) for tool in self.overview],
            "tokens": msgspec.to_builtins(self.tokens),
        }


def fit_budget(
    tools: Sequence[Tool],
    provider: Provider,
    budget: int,
    *,
    query: str | None = None,
    strict: bool = False,
) -> Budgeted:
    """The most relevant commands of `tools` that fit in `budget` tokens with the
    overview of the rest. Raises `BudgetTooSmall` when the overview alone does not fit,
    `ValueError` for a budget below 1 or an unknown provider."""
    if budget < 1:
        raise ValueError(f"the budget must be 1 token or more, got {budget}")
    compiler = Compiler(tools)
    tools = distinct_tools(tools)  # as the compile names them: two of one name stay two
    full = compiler.compile(provider, strict=strict)
    costs = dict(zip([t.name for t in full.flat], count_each(full.tools), strict=True))
    ranked = _ranked(tools, compiler, query)
    whole = _sent(full)
    if len(ranked) == len(full.tools) and whole <= budget:  # all of it: nothing to describe
        tokens = TokenCount(budget=budget, tools=whole, overview=0, total=whole, full=whole)
        return Budgeted(compiled=full, overview=[], tokens=tokens)
    room = budget - _overview_tokens(tools, compiler.flat, set())
    if room < 0:
        raise BudgetTooSmall(budget, budget - room)
    chosen: list[str] = []
    for name in ranked:
        if costs[name] <= room:
            chosen.append(name)
            room -= costs[name]
    while True:  # the exact count: a subset may compile a little differently (strictness)
        compiled = compiler.compile(provider, strict=strict, only=set(chosen))
        overview = _overview(tools, compiler.flat, set(chosen))
        used, described = _sent(compiled), _tokens([to_dict(t) for t in overview])
        if used + described <= budget or not chosen:
            break
        chosen.pop()
    if used + described > budget:
        raise BudgetTooSmall(budget, used + described)
    tokens = TokenCount(
        budget=budget,
        tools=used,
        overview=described,
        total=used + described,
        full=whole,
    )
    return Budgeted(compiled=compiled, overview=overview, tokens=tokens)


def _ranked(tools: Sequence[Tool], compiler: Compiler, query: str | None) -> list[str]:
    """Command names, most relevant first; only commands that match, given a query."""
    if query:
        index = CommandIndex.from_tools(tools)
        # BM25 alone: every matching command, ranked (fusion ranks its candidates only)
        hits = index.search(query, limit=max(len(index), 1), rerank=False)
        return [hit.name for hit in hits]
    return [t.name for t in sorted(compiler.flat, key=lambda t: _depth(t))]


def _depth(tool: FlatTool) -> int:
    return min(len(target.path) for target in tool.binding.targets.values())


def _overview_tokens(tools: Sequence[Tool], flat: list[FlatTool], chosen: set[str]) -> int:
    return _tokens([to_dict(tool) for tool in _overview(tools, flat, chosen)])


def _sent(compiled: Compiled) -> int:
    """Tokens of the definitions as the provider's request takes them (Gemini's
    wrapped in `function_declarations`), as `atip compile` prints them."""
    return _tokens(compiled.payload()) if compiled.tools else 0


def _tokens(values: list[Any]) -> int:
    """Tokens of a list as printed; nothing sent costs nothing (not the 1 of `[]`, which
    made the overview alone need one token more than `BudgetTooSmall.needed` said)."""
    return count_tokens(values) if values else 0


def _overview(tools: Sequence[Tool], flat: list[FlatTool], chosen: set[str]) -> list[Tool]:
    """A depth-1 partial document for every tool with commands left out.

    Hidden commands are not listed (no compile offers them), but they are left out as
    much as any other, so the safety assumption counts them."""
    sent: dict[str, set[CommandPath]] = {}
    left_out: set[str] = set()
    for function in flat:
        target = next(iter(function.binding.targets.values()))
        if function.name in chosen:
            sent.setdefault(target.tool, set()).add(target.path)
        else:
            left_out.add(target.tool)
    out = []
    for tool in tools:
        if tool.name not in left_out:
            continue
        commands = {
            key: Command(description=c.description)
            for key, c in tool.commands.items()
            if not c.hidden
        }
        assumption = _assumption(tool, sent.get(tool.name, set()))
        total = count_commands(tool)
        narrowed: list[str] | None = None
        if tool.partial:  # already a part (atip compile --commands): what it left out counts
            total = tool.total_commands or total
            narrowed = (tool.filter.commands if tool.filter else None) or None
            assumption = _together(
                assumption, tool.omitted.safety_assumption if tool.omitted else "unknown"
            )
        out.append(
            Tool(
                atip=tool.atip,
                name=tool.name,
                version=tool.version,
                description=tool.description,
                commands=commands,
                partial=True,
                filter=PartialFilter(commands=narrowed or UNSET, depth=1),
                total_commands=total,
                included_commands=len(commands),
                omitted=Omitted(reason="size-limited", safety_assumption=assumption),
            )
        )
    return out


def _assumption(tool: Tool, sent: set[CommandPath]) -> SafetyAssumption:
    """What the invocable commands of `tool` not sent may do, hidden ones included, by
    their effective effects (a group's `destructive` holds for its commands)."""

    def step(effects: Effects, _key: str, command: Command) -> Effects:
        return merge_effects(effects, command.effects)

    start = merge_effects(tool.effects, UNSET)
    stated = [
        effects.destructive
        for path, command, effects in walk_commands(tool, start, step)
        if invocable(command) and path not in sent
    ]
    if any(value is True for value in stated):
        return "known-unsafe"
    if all(value is False for value in stated):
        return "known-safe"
    return "unknown"


def _together(ours: SafetyAssumption, before: SafetyAssumption) -> SafetyAssumption:
    """The assumption for commands left out twice: by an earlier selection (`before`),
    and by the budget."""
    if "known-unsafe" in (ours, before):
        return "known-unsafe"
    if ours == before == "known-safe":
        return "known-safe"
    return "unknown"
