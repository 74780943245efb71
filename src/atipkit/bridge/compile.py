"""Compiling ATIP tools for a provider: flatten, render, check the provider's limits.

Limits are reported as warnings that name the tool, and so are two tools of one name
(`names.name_clashes`: both are compiled, the second's functions named after its key) and
two commands that want one function name (`deploy x` and a tool `deploy_x`: one keeps it,
the other's ends in a short hash, and the table maps each back to its own command).
Where a strict-mode limit is exceeded the tools concerned fall back to non-strict and the
warning says so; an OpenAI description over 1024 UTF-16 units is cut before its safety
suffix (SPEC-NOTES 18).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal, get_args

import msgspec

from atipkit.bridge import anthropic, gemini, mcp, openai
from atipkit.bridge.flatten import Binding, FlatTool, Strategy, flatten
from atipkit.bridge.names import name_clashes, safe_name
from atipkit.bridge.safety import fit
from atipkit.model import CommandPath, Tool
from atipkit.problems import Problem, warning

Provider = Literal["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"]
PROVIDERS: tuple[str, ...] = get_args(Provider)


class Compiled(msgspec.Struct):
    """The result of a compile: provider tool definitions, and how to map calls back."""

    provider: Provider
    strict: bool
    strategy: Strategy
    tools: list[dict[str, Any]]
    flat: list[FlatTool]
    warnings: list[Problem]
    bindings: dict[str, Binding]

    @property
    def table(self) -> dict[str, CommandPath | dict[str, CommandPath]]:
        """Name → command path (name → action → path for grouped tools)."""
        out: dict[str, CommandPath | dict[str, CommandPath]] = {}
        for name, binding in self.bindings.items():
            if set(binding.targets) == {""}:
                out[name] = binding.targets[""].path
            else:
                out[name] = {a: t.path for a, t in binding.targets.items()}
        return out

    def payload(self) -> list[dict[str, Any]]:
        """What the provider's request takes as `tools` (Gemini wraps its declarations)."""
        if self.provider.startswith("gemini"):
            return [{"function_declarations": self.tools}]
        return self.tools


class Compiler:
    """Flattens tools once and compiles them for any number of providers.

    Flattening (names, parameters, effective effects) does not depend on the provider and
    is most of the work; an agent that talks to several providers, or recompiles per
    request, keeps one `Compiler`. `sources` says where each tool came from (a file, a
    tool name), for the warning about two tools of one name.
    """

    def __init__(
        self,
        tools: Tool | Iterable[Tool],
        *,
        strategy: Strategy = "discrete",
        include_hidden: bool = False,
        sources: Sequence[str] | None = None,
    ) -> None:
        if strategy not in ("discrete", "action"):
            raise ValueError(f"unknown strategy {strategy!r}; expected 'discrete' or 'action'")
        batch = [tools] if isinstance(tools, Tool) else list(tools)
        self.strategy: Strategy = strategy
        self.flat = flatten(batch, strategy=strategy, include_hidden=include_hidden)
        self.clashes = [
            warning("names.claimed-twice", line, "") for line in name_clashes(batch, sources)
        ] + _function_clashes(self.flat)

    def compile(
        self,
        provider: Provider = "openai",
        *,
        strict: bool = False,
        only: Collection[str] | None = None,
    ) -> Compiled:
        """`provider`'s tool definitions; `strict` applies to OpenAI and Anthropic.

        `only` names the tools to render (the rest are left out, their names kept as the
        whole compile gives them): a context budget picks commands this way, and the
        request-wide limits (OpenAI's tool count, Anthropic's strict budget) are then
        those of the tools sent."""
        flat = self.flat if only is None else [t for t in self.flat if t.name in only]
        return self.render(provider, flat, strict=strict)

    def render(
        self, provider: Provider, flat: Sequence[FlatTool], *, strict: bool = False
    ) -> Compiled:
        """`provider`'s definitions of `flat`: tools of this compiler, or changed copies
        of them (a context budget sends some as briefs: `search.budget`), with this
        compile's warnings."""
        if provider not in PROVIDERS:
            raise ValueError(
                f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}"
            )
        flat = list(flat)
        warnings: list[Problem] = list(self.clashes)
        rendered = _render(flat, provider, strict, warnings)
        return Compiled(
            provider=provider,
            strict=strict,
            strategy=self.strategy,
            tools=rendered,
            flat=flat,
            warnings=warnings,
            bindings={t.name: t.binding for t in flat},
        )


def compile_tools(
    tools: Tool | Iterable[Tool],
    provider: Provider = "openai",
    *,
    strict: bool = False,
    strategy: Strategy = "discrete",
    include_hidden: bool = False,
    sources: Sequence[str] | None = None,
) -> Compiled:
    """Compile one or more ATIP tools into `provider`'s tool definitions (a one-shot
    `Compiler`). Raises `ValueError` for an unknown provider or strategy."""
    compiler = Compiler(tools, strategy=strategy, include_hidden=include_hidden, sources=sources)
    return compiler.compile(provider, strict=strict)


def _function_clashes(flat: list[FlatTool]) -> list[Problem]:
    """A warning for each function that did not get the name its words give, because
    another command has it."""
    names = {tool.name: tool for tool in flat}
    out = []
    for tool in flat:
        [first, *_] = tool.binding.targets.items()
        action, target = first
        words = (target.tool, *(target.path[:-1] if action else target.path))
        wanted = safe_name(words)
        holder = names.get(wanted)
        if wanted != tool.name and holder is not None:
            out.append(
                warning(
                    "names.function-clash",
                    f"{holder.title!r} and {tool.title!r} both want the name {wanted!r}: "
                    f"{tool.title!r} is called {tool.name!r}",
                    tool.name,
                )
            )
    return out


def _render(
    flat: list[FlatTool], provider: Provider, strict: bool, warnings: list[Problem]
) -> list[dict[str, Any]]:
    if provider in ("openai", "openai-responses"):
        if len(flat) > openai.MAX_TOOLS:
            warnings.append(
                warning(
                    "openai.too-many-tools",
                    f"{len(flat)} tools; OpenAI accepts at most {openai.MAX_TOOLS} per request "
                    "(compile fewer commands, or use --strategy action)",
                    "",
                )
            )
        render = openai.chat_tool if provider == "openai" else openai.responses_tool
        out = []
        for tool in flat:
            description, cut = fit(
                tool.summary, tool.safety, openai.MAX_DESCRIPTION, tool.separator
            )
            if cut:
                warnings.append(
                    warning(
                        "openai.description-cut",
                        f"description cut to {openai.MAX_DESCRIPTION} UTF-16 units; the safety "
                        "flags were kept",
                        tool.name,
                    )
                )
            tool_strict = strict
            if strict and (over := openai.strict_limits(openai.parameters(tool, strict=True))):
                tool_strict = False
                warnings.append(
                    warning(
                        "openai.strict-limit",
                        f"strict schema has {', '.join(over)}; compiled non-strict",
                        tool.name,
                    )
                )
            out.append(render(tool, description, strict=tool_strict))
        return out
    if provider == "anthropic":
        return _anthropic(flat, strict, warnings)
    if provider in ("gemini", "gemini-json-schema"):
        json_schema = provider == "gemini-json-schema"
        return [gemini.declaration(t, t.description, json_schema=json_schema) for t in flat]
    return [mcp.tool(t, t.description) for t in flat]


def _anthropic(flat: list[FlatTool], strict: bool, warnings: list[Problem]) -> list[dict[str, Any]]:
    """Strict tool use has per-request budgets; tools that do not fit go non-strict."""
    out = []
    tools = optional = unions = 0
    for tool in flat:
        tool_strict = strict
        if strict:
            n_optional, n_unions = anthropic.optional_count(tool), anthropic.union_count(tool)
            over = []
            if tools + 1 > anthropic.MAX_STRICT_TOOLS:
                over.append(f"more than {anthropic.MAX_STRICT_TOOLS} strict tools")
            if optional + n_optional > anthropic.MAX_STRICT_OPTIONAL:
                over.append(f"more than {anthropic.MAX_STRICT_OPTIONAL} optional parameters")
            if unions + n_unions > anthropic.MAX_STRICT_UNIONS:
                over.append(f"more than {anthropic.MAX_STRICT_UNIONS} union-typed parameters")
            if over:
                tool_strict = False
                warnings.append(
                    warning(
                        "anthropic.strict-limit",
                        f"strict budget of the request exceeded ({'; '.join(over)}); "
                        "compiled non-strict",
                        tool.name,
                    )
                )
            else:
                tools, optional, unions = tools + 1, optional + n_optional, unions + n_unions
        out.append(anthropic.tool(tool, tool.description, strict=tool_strict))
    return out
