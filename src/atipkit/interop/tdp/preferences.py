"""The user's preferences over a scenario's tools, merged into its manifest as a TDP
consumer does ("Merge tool definitions with user preferences", then "pass enabled tools
to the LLM").

Preferences are by scenario name, then by TDP tool name, in config.json's `tdp` section:

    {"tdp": {"preferences": {"agent-manager": {
        "spawn_agent": {"enabled": false},
        "list_agents": {"enabled": true, "requires_approval": true}}}}}

`enabled` replaces the server's `enabled_by_default`; `requires_approval` can add an
approval the server does not ask for, never waive one it asks for (waiving is the
policy's to decide, as for every call).
"""

from __future__ import annotations

from typing import Any

import msgspec

from atipkit.errors import DocumentError
from atipkit.interop.tdp.model import ToolDefinition, ToolManifest
from atipkit.problems import error


class ToolPreference(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the user says of one tool; None: nothing, the server's value holds."""

    enabled: bool | None = None
    requires_approval: bool | None = None


Preferences = dict[str, dict[str, ToolPreference]]
"""By scenario name, then by TDP tool name."""


def read_preferences(data: Any, source: str = "config.json: tdp.preferences") -> Preferences:
    """Preferences from decoded JSON; a `DocumentError` naming the place (`$.SCENARIO.
    TOOL`) and what was expected when they are not (an unknown key, a value that is not
    a boolean)."""

    def refuse(message: str, location: str) -> DocumentError:
        return DocumentError([error("tdp.bad-preferences", message, location)], source)

    if not isinstance(data, dict):
        raise refuse("expected an object of scenarios", "$")
    out: Preferences = {}
    for scenario, tools in data.items():
        if not isinstance(tools, dict):
            raise refuse("expected an object of tools", f"$.{scenario}")
        out[scenario] = {}
        for name, preference in tools.items():
            try:
                out[scenario][name] = msgspec.convert(preference, ToolPreference)
            except msgspec.ValidationError as exc:
                message, _, where = str(exc).partition(" - at `$")
                raise refuse(message, f"$.{scenario}.{name}{where.rstrip('`')}") from None
    return out


def load_preferences() -> Preferences:
    """config.json's `tdp.preferences` (none when it has none); a `DocumentError` when
    they cannot be used: preferences that are misspelt must not silently not apply."""
    from atipkit import paths

    section = paths.user_config().get("tdp")
    found = section.get("preferences") if isinstance(section, dict) else None
    if section is not None and not isinstance(section, dict):
        raise DocumentError(
            [error("tdp.bad-preferences", "expected an object", "$.tdp")], "config.json"
        )
    return {} if found is None else read_preferences(found)


def merge_preferences(
    manifest: ToolManifest, preferences: Preferences, *, drop_disabled: bool = False
) -> ToolManifest:
    """`manifest` with the user's preferences for its scenario merged into each tool's
    metadata: `enabled` replaces `enabled_by_default`; `requires_approval` is true when
    the server or the user asks for approval. With `drop_disabled`, the tools the user
    disabled are left out — not those the server leaves off by default, since proto3
    reads an `enabled_by_default` left out as false."""
    mine = preferences.get(manifest.scenario.name, {})
    if not mine:
        return manifest
    tools = [
        _merged(tool, mine.get(tool.name))
        for tool in manifest.tools
        if not (drop_disabled and tool.name in mine and mine[tool.name].enabled is False)
    ]
    return msgspec.structs.replace(manifest, tools=tools)


def enabled_tools(manifest: ToolManifest) -> list[ToolDefinition]:
    """The tools to pass to the model: those enabled (by default, or by the user's
    preferences once `merge_preferences` has merged them)."""
    return [tool for tool in manifest.tools if tool.metadata.enabled_by_default]


def _merged(tool: ToolDefinition, preference: ToolPreference | None) -> ToolDefinition:
    if preference is None:
        return tool
    meta = tool.metadata
    merged = msgspec.structs.replace(
        meta,
        enabled_by_default=meta.enabled_by_default
        if preference.enabled is None
        else preference.enabled,
        requires_approval=meta.requires_approval or bool(preference.requires_approval),
    )
    return msgspec.structs.replace(tool, metadata=merged)
