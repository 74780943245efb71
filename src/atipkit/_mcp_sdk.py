"""The official MCP SDK as atipkit needs it: the `mcp` package, version 2 or later (the
`mcp` extra). Serving an app over MCP (`atipkit.app.mcp`) and talking to MCP servers
(`atipkit.interop.mcp`) both check it here, before they import anything of it; each turns
`SdkUnavailable` into its own error. The check reads the installed package's metadata, so
it imports nothing (version 1 has other modules, which would fail less clearly).
"""

from __future__ import annotations

from atipkit.errors import AtipError


class SdkUnavailable(AtipError):
    """The `mcp` package is missing, or older than version 2; `found` is its version."""

    def __init__(self, purpose: str, found: str | None) -> None:
        self.found = found
        super().__init__(
            f"{purpose} needs the mcp package, version 2 or later"
            + (f" (found {found})" if found else "")
        )


def require_sdk(purpose: str) -> None:
    """`SdkUnavailable` unless the `mcp` package, version 2 or later, is installed;
    `purpose` (what needs it, e.g. "serving MCP") begins its message."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found: str | None = version("mcp")
    except PackageNotFoundError:
        found = None
    major = found.split(".", 1)[0] if found else ""
    if not major.isdigit() or int(major) < 2:
        raise SdkUnavailable(purpose, found)
