"""Compiling within a context budget: the commands that fit a task, and a map of the rest.

`fit_budget(tools, provider, budget, query=...)` ranks every command by the query
(`CommandIndex`), then takes the best ones whose compiled definitions fit in `budget`
tokens (`atipkit.search.tokens`): the best ones whole, while they take at most a quarter
of the room, the next ones as *briefs* (the first sentence of the description, the
required parameters, the safety flags; the binding whole), so that many more candidates
reach the model, each callable, and the one it needs can be compiled whole on request.
Room is kept first for an *overview*: for each tool with commands left out, a depth-1
ATIP document (its top-level commands, each with its description only) marked
`partial`, with `totalCommands`, `includedCommands` and `omitted` (RFC 0.6 §3.1.1).
Its `omitted.reason` is `size-limited`, and its `safetyAssumption` says what the
left-out commands may do: `known-unsafe` when any of them is destructive, `known-safe`
when every one states it is not, `unknown` otherwise.
The agent reads the overview, and asks for a command it needs (`atip compile --commands`).

Without a query, commands are taken in document order, shallow ones first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from atipkit.bridge.compile import Compiled, Compiler, Provider
from atipkit.bridge.flatten import invocable
from atipkit.bridge.names import distinct_tools
from atipkit.bridge.params import object_schema
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
    get_command,
    merge_effects,
    to_dict,
    walk_commands,
)
from atipkit.search.index import CommandIndex
from atipkit.search.tokens import count_each, count_tokens

if TYPE_CHECKING:
    from atipkit.bridge.flatten import FlatTool

WHOLE_SHARE = 0.25
"""The share of the room (the budget less the overview) that whole definitions may take
before the next commands go as briefs (decision 512)."""


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
    briefs: list[str] = []
    """The names of `compiled`'s tools sent as briefs (decision 513), best first."""

    def to_builtins(self) -> dict[str, Any]:
        """What `atip compile --budget` prints: `tools` as the provider takes them,
        `briefs`, `overview` as ATIP documents, `tokens`."""
        return {
            "tools": self.compiled.payload(),
            "briefs": list(self.briefs),
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
    briefs = _briefs(tools, compiler.flat)
    brief_costs = dict(
        zip(briefs, count_each(_definitions(compiler, provider, briefs)), strict=True)
    )
    chosen, whole_ones = _choose(ranked, costs, brief_costs, room)
    while True:  # the exact count: a subset may compile a little differently (strictness)
        flat = [f if f.name in whole_ones else briefs[f.name] for f in compiler.flat]
        compiled = compiler.render(provider, [f for f in flat if f.name in chosen], strict=strict)
        overview = _overview(tools, compiler.flat, set(chosen))
        used, described = _sent(compiled), _tokens([to_dict(t) for t in overview])
        if used + described <= budget or not chosen:
            break
        whole_ones.discard(chosen.pop())
    if used + described > budget:
        raise BudgetTooSmall(budget, used + described)
    tokens = TokenCount(
        budget=budget,
        tools=used,
        overview=described,
        total=used + described,
        full=whole,
    )
    briefed = [name for name in chosen if name not in whole_ones]
    return Budgeted(compiled=compiled, overview=overview, tokens=tokens, briefs=briefed)


def _choose(
    ranked: list[str], costs: dict[str, int], brief_costs: dict[str, int], room: int
) -> tuple[list[str], set[str]]:
    """The commands sent, best first, and which of them go whole (the rest as briefs).

    Best first, each command goes whole while the whole ones stay within `WHOLE_SHARE`
    of the room (the best one whole whenever it fits at all), else as a brief if that
    fits; room left when the candidates run out makes briefs whole, best first."""
    chosen: list[str] = []
    whole: set[str] = set()
    allowance = room * WHOLE_SHARE
    for name in ranked:
        if costs[name] <= (room if not chosen else min(room, allowance)):
            whole.add(name)
            allowance -= costs[name]
            room -= costs[name]
        elif brief_costs[name] <= room:
            room -= brief_costs[name]
        else:
            continue
        chosen.append(name)
    for name in chosen:
        extra = costs[name] - brief_costs[name]
        if name not in whole and extra <= room:
            whole.add(name)
            room -= extra
    return chosen, whole


def _briefs(tools: Sequence[Tool], flat: list[FlatTool]) -> dict[str, FlatTool]:
    """Each command's brief: its required parameters alone, and its description's first
    sentence with how many parameters were left out; name, safety flags and binding are
    the whole definition's, so a call made from a brief maps back as any other."""
    by_key = {tool.name: tool for tool in tools}
    out = {}
    for function in flat:
        target = function.binding.targets[""]
        properties = function.input_schema.get("properties", {})
        kept = {key: properties[key] for key in target.required if key in properties}
        command = get_command(by_key[target.tool], target.path)
        summary = _lead(command.description) + (" (deprecated)" if command.deprecated else "")
        if left := len(properties) - len(kept):
            summary += f" (+{left} more parameters)"
        schema = object_schema(kept, [key for key in target.required if key in kept])
        out[function.name] = msgspec.structs.replace(function, summary=summary, input_schema=schema)
    return out


def _lead(description: str) -> str:
    """The first sentence of a description, on one line."""
    text = " ".join(description.split())
    end = re.search(r"[.!?](?=\s)", text)
    return (text[: end.end()] if end else text) or "(no description)"


def _definitions(compiler: Compiler, provider: Provider, flat: dict[str, FlatTool]) -> list[Any]:
    """Each definition of `flat` alone, as the provider's request takes it."""
    return compiler.render(provider, list(flat.values())).tools


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
