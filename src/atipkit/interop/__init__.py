"""The neighbouring formats, in and out of ATIP.

- `atipkit.interop.atdf`: Agent Tool Description Format descriptors (basic and enhanced)
  and its error responses;
- `atipkit.interop.tdp`: the HTTP Tool Discovery Protocol's manifests;
- `atipkit.interop.mcp`: MCP servers described as ATIP tools (`x-mcp`), and their calls.

Each module converts between its format and the `atipkit.model.Tool` every other part of
atipkit works with; what a format cannot say is kept under an `x-` extension, never
dropped. Optional dependencies (the MCP SDK, httpx) are imported where they are used.
"""
