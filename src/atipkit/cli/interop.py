"""`atip import` and `atip export`: the groups that turn other formats into ATIP documents
and back. Each format's commands live in a module of their own (`cli/atdf.py`,
`cli/tdp.py`, `cli/mcp.py`), imported when one is asked for (decision 310), and attach
themselves here."""

from __future__ import annotations

from atipkit.cli import app

import_group = app.group(
    "import", help="Describe tools from other formats as ATIP documents: MCP, ATDF, TDP."
)
export_group = app.group("export", help="Write ATIP tools in other formats: ATDF.")
import_group.lazy("atipkit.cli.mcp", ("mcp",))
import_group.lazy("atipkit.cli.atdf", ("atdf",))
import_group.lazy("atipkit.cli.tdp", ("tdp",))
export_group.lazy("atipkit.cli.atdf", ("atdf",))
