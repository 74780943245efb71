"""atip's own ATIP metadata (`atip --agent`), built from the live command tree."""

from __future__ import annotations

from atipkit._version import __version__
from atipkit.introspect.click import tool_from_click
from atipkit.model import Tool, dumps


def metadata() -> Tool:
    from atipkit.cli import DESCRIPTION, cli

    return tool_from_click(cli, name="atip", version=__version__, description=DESCRIPTION)


def metadata_json() -> str:
    return dumps(metadata()).decode()
