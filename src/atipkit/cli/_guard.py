"""`--allow-host` and `--allow-origin`, the options of every `atip` command that serves
HTTP (`atip serve`, `atip mcp serve`): who `atipkit.serve.guard` lets through besides
loopback names and the server's own pages."""

from __future__ import annotations

from typing import Annotated

from atipkit.app import Option

AllowHost = Annotated[
    list[str],
    Option(
        help="HTTP: also answer requests whose Host is this name (repeatable); loopback "
        "names and the address listened on are always answered."
    ),
]
AllowOrigin = Annotated[
    list[str],
    Option(
        help="HTTP: let web pages of this origin (http://host:port, or * for any) call the "
        "server and read its answers, with CORS (repeatable; default: none, not even "
        "another port of localhost)."
    ),
]
