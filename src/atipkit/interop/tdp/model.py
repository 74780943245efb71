"""The manifest as types: what `parse` returns, the same whichever JSON shape it was read
from, so that readers of either shape and `to_atip` share one vocabulary.
"""

from __future__ import annotations

from typing import Any

import msgspec

PROTOCOL_VERSION = "1.0"
"""The protocol version `manifest` writes (`parse` reads any 1.x)."""


class _Struct(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    pass


class Scenario(_Struct, frozen=True):
    """Who serves the tools (`ScenarioInfo`). `extra`: fields this reader does not know."""

    name: str
    version: str = ""
    description: str = ""
    base_url: str = ""
    extra: dict[str, Any] = {}


class Example(_Struct, frozen=True):
    description: str = ""
    input: dict[str, Any] = {}
    extra: dict[str, Any] = {}


class Metadata(_Struct, frozen=True):
    """`ToolMetadata`, zero values for what the manifest leaves out (proto3 semantics)."""

    enabled_by_default: bool = False
    requires_approval: bool = False
    timeout_seconds: int = 0
    rate_limit_per_minute: int = 0
    cost_estimate: str = ""
    long_running: bool = False
    idempotent: bool = False
    tags: list[str] = []
    examples: list[Example] = []
    extra: dict[str, Any] = {}


class ToolDefinition(_Struct, frozen=True):
    """One TDP tool. `parameters` is plain JSON Schema (wrapped values unwrapped, JSON
    Schema's own key names); `extensions` holds its `x-*` keys, `extra` unknown ones."""

    name: str
    description: str = ""
    category: str = ""
    parameters: dict[str, Any] = {}
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    extensions: dict[str, Any] = {}
    extra: dict[str, Any] = {}


class Category(_Struct, frozen=True):
    id: str
    name: str = ""
    description: str = ""
    icon: str = ""
    extra: dict[str, Any] = {}


class ToolManifest(_Struct, frozen=True):
    """A `ToolManifest`, the same whichever JSON shape it was read from."""

    protocol_version: str
    scenario: Scenario
    tools: list[ToolDefinition] = []
    categories: list[Category] = []
    generated_at: str = ""
    extensions: dict[str, Any] = {}
    extra: dict[str, Any] = {}


Manifest = ToolManifest
"""`ToolManifest` by its name before decision 391, kept for a release."""
