"""The Tool Discovery Protocol (spec/tool-discovery-protocol-1.0.md, SPEC-NOTES 22): ATIP
tools as a TDP manifest, and TDP manifests as ATIP documents.

A scenario answers `GET /api/v1/tools` with a manifest: flat tools, each with a JSON Schema
of its parameters and orchestration metadata (approval, timeout, cost, retries).

    from atipkit.interop import tdp

    data = tdp.manifest(tool)              # snake_case JSON-ready data, one tool a command
    again = tdp.to_atip(tdp.parse(data))   # an ATIP document; what ATIP cannot say: x-tdp
    remote = tdp.fetch("http://localhost:8080")   # GET /api/v1/tools, cached

One concept a module:

- `model`: the manifest as types (`ToolManifest`, `ToolDefinition`, ...), what `parse` returns;
- `errors`: `ManifestError` (with the JSON path), `UnsupportedProtocol`,
  `ManifestStatusError`;
- `effects`: ATIP effects in and out of `x-atip.effects`;
- `metadata`: a tool's orchestration metadata from a command's effects;
- `examples`: a command's example lines as the tool calls they stand for;
- `export`: ATIP tools → a manifest (`manifest`), through the bridge, named by
  `tdp_names`;
- `reader`: JSON in the snake_case or the proto3 shape → `ToolManifest` (`parse`);
- `options`: a parameter schema as ATIP options;
- `document`: a `ToolManifest` → one ATIP document (`to_atip`);
- `remote`: the endpoint, caching by the server's `Cache-Control`, and `fetch` over HTTP;
- `preferences`: the user's preferences merged into a manifest (`merge_preferences`).

Importing this package imports no HTTP client, bridge or JSON Schema validator; each is
imported by the function that needs it.
"""

from __future__ import annotations

from atipkit._http import HttpError, NetworkError
from atipkit.interop.tdp.document import to_atip
from atipkit.interop.tdp.effects import atip_effects
from atipkit.interop.tdp.errors import ManifestError, ManifestStatusError, UnsupportedProtocol
from atipkit.interop.tdp.export import atip_scenario, manifest, tdp_names
from atipkit.interop.tdp.metadata import LONG_RUNNING as LONG_RUNNING
from atipkit.interop.tdp.model import (
    PROTOCOL_VERSION,
    Category,
    Example,
    Manifest,
    Metadata,
    Scenario,
    ToolDefinition,
    ToolManifest,
)
from atipkit.interop.tdp.preferences import (
    Preferences,
    ToolPreference,
    enabled_tools,
    load_preferences,
    merge_preferences,
    read_preferences,
)
from atipkit.interop.tdp.reader import MAX_DEPTH as MAX_DEPTH
from atipkit.interop.tdp.reader import MAX_TOOLS as MAX_TOOLS
from atipkit.interop.tdp.reader import SUPPORTED_MAJOR as SUPPORTED_MAJOR
from atipkit.interop.tdp.reader import parse
from atipkit.interop.tdp.remote import CACHE_CONTROL, ENDPOINT, clear_cache, fetch, manifest_url
from atipkit.interop.tdp.remote import DEFAULT_TTL as DEFAULT_TTL

__all__ = [
    "CACHE_CONTROL",
    "ENDPOINT",
    "PROTOCOL_VERSION",
    "Category",
    "Example",
    "HttpError",
    "Manifest",
    "ManifestError",
    "ManifestStatusError",
    "Metadata",
    "NetworkError",
    "Preferences",
    "Scenario",
    "ToolDefinition",
    "ToolManifest",
    "ToolPreference",
    "UnsupportedProtocol",
    "atip_effects",
    "atip_scenario",
    "clear_cache",
    "enabled_tools",
    "fetch",
    "load_preferences",
    "manifest",
    "manifest_url",
    "merge_preferences",
    "parse",
    "read_preferences",
    "tdp_names",
    "to_atip",
]
