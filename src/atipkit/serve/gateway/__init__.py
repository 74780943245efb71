"""The MCP gateway: ATIP tools for agents that only speak MCP (`atip mcp serve`).

    atip mcp serve --only gh,kubectl            # stdio: one MCP tool a command
    atip mcp serve --all --policy policy.json   # every tool in the registry
    atip mcp serve --all --deferred             # search_tools, get_tool_schema, run_tool
    atip mcp serve --tool imported.json --transport http --port 8080

What a client sees, and why:

- Tools come from the bridge's MCP compiler (`atipkit.bridge.compile_tools(..., "mcp")`),
  the same names, input schemas, safety suffixes and hints that `atip compile --provider
  mcp` prints, so a command is described once for every consumer. A call is mapped back
  through the compile's bindings, never by splitting the name.
- A call runs through `atipkit.execute.Executor`: the policy decides (`--policy`), argv is
  built from the command's own arguments and options, the command runs with its declared
  timeout, and its output goes through the result filter (secrets redacted, terminal
  escapes stripped, long output cut in the middle) before the client sees it. The answer
  is the filtered text, `isError` when the command failed or did not run, and
  `structuredContent` with what happened: decision, reasons, argv, exit code.
- What the policy wants confirmed (a destructive command, a billable one over budget) is
  asked through MCP elicitation, when the client offers it: the human at the client says
  yes or no. A client that cannot be asked gets a denial that says how to allow the call
  (`--yes` when starting the gateway, or a policy that allows it). Nothing the policy
  denies runs, `--yes` or not.
- The list follows the registry: the gateway checks `registry.json` and the `--tool`
  files every `interval` seconds, rebuilds the catalog when they change, and tells clients
  when the list of tools changed — `notifications/tools/list_changed` to handshake-era
  sessions that have listed tools, a `ToolsListChanged` event on `subscriptions/listen`
  streams (2026-07-28).
- `tools/list` is paginated (`PAGE_SIZE` tools a page; a cursor names the catalog it came
  from, so a cursor from before a change is refused, not silently misread).

Deferred mode lists three tools instead, those of `atipkit.serve.deferred`, which
`atipkit.app`'s servers list too: `search_tools` (words → the best matching commands,
ranked by `atipkit.search`'s BM25), `get_tool_schema` (a name → the tool definition, as
`tools/list` would give it) and `run_tool` (a name and its arguments → the same answer as
calling the tool directly; `call_tool`, its name before 0.2, is still answered). Both
transports are `atipkit.serve.mcp`'s.
"""

from atipkit.serve.deferred import RUN_TOOL, SCHEMA_TOOL, SEARCH_TOOL
from atipkit.serve.gateway.catalog import GatewayCatalog
from atipkit.serve.gateway.selection import (
    GatewayError,
    Loaded,
    Selection,
    Unavailable,
    fingerprint,
    load,
)
from atipkit.serve.gateway.server import INTERVAL, PAGE_SIZE, Gateway

Catalog = GatewayCatalog
"""Deprecated: `GatewayCatalog`'s name before 0.2 (the app framework had a `Catalog`
too), kept until 0.3."""

CALL_TOOL = "call_tool"
"""Deprecated: `RUN_TOOL`'s name before 0.2, still answered (not listed) until 0.3."""

__all__ = [
    "CALL_TOOL",
    "INTERVAL",
    "PAGE_SIZE",
    "RUN_TOOL",
    "SCHEMA_TOOL",
    "SEARCH_TOOL",
    "Catalog",
    "Gateway",
    "GatewayCatalog",
    "GatewayError",
    "Loaded",
    "Selection",
    "Unavailable",
    "fingerprint",
    "load",
]
