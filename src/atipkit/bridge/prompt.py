"""The safety summary for a system prompt (RFC 0.6 Appendix A, `generateSafetyPrompt`).

The appendix hands it ATIP tools; an agent that already compiled hands it the compile.
Both are accepted, and both name the tools as the compile does, so the prompt and the
tool definitions the model sees agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from atipkit.bridge.compile import Compiled, Compiler
from atipkit.bridge.flatten import FlatTool, flatten
from atipkit.model import Effects, Interactive, Tool

SECTIONS = (
    "Destructive (permanently destroys data; confirm first)",
    "Not reversible (cannot be undone)",
    "Not idempotent (do not retry blindly)",
    "Billable (may cost money)",
    "Network access",
    "Interactive (reads stdin, prompts or needs a terminal)",
)

Tools = Tool | Compiled | Compiler | Iterable[Tool | FlatTool]


def safety_prompt(tools: Tools) -> str:
    """A markdown summary of what the tools may do: one section per risk, listing the
    tools by their compiled names; empty when there is nothing to say.

    `tools` is an ATIP tool, ATIP tools, a `Compiled` or `Compiler`, or the `FlatTool`s
    of a compile. ATIP tools are flattened together (the default discrete strategy), so
    their names are those `compile_tools(tools)` gives."""
    sections: dict[str, list[str]] = {title: [] for title in SECTIONS}
    for tool in _flat(tools):
        for title, hit in zip(SECTIONS, _risks(tool.effects), strict=True):
            if hit:
                sections[title].append(tool.name)
    lines = [
        f"## {title}\n" + "\n".join(f"- `{n}`" for n in names)
        for title, names in sections.items()
        if names
    ]
    if not lines:
        return ""
    return "# Tool safety\n\n" + "\n\n".join(lines) + "\n"


def _flat(tools: Tools) -> list[FlatTool]:
    if isinstance(tools, Tool):
        return flatten([tools])
    if isinstance(tools, Compiled | Compiler):
        return list(tools.flat)
    atip: list[Tool] = []
    flat: list[FlatTool] = []
    for item in tools:
        if isinstance(item, Tool):
            atip.append(item)
        elif isinstance(item, FlatTool):
            flat.append(item)
        else:
            raise TypeError(
                f"safety_prompt takes ATIP tools or compiled (flat) tools, "
                f"not {type(item).__name__}"
            )
    return flatten(atip) + flat if atip else flat


def _risks(effects: Effects) -> tuple[bool, ...]:
    interactive = effects.interactive or Interactive()
    return (
        effects.destructive is True,
        effects.reversible is False,
        effects.idempotent is False,
        bool(effects.cost and effects.cost.billable is True),
        effects.network is True,
        interactive.stdin in ("required", "password")
        or interactive.prompts is True
        or interactive.tty is True,
    )
