"""The `atip` command, built on `atipkit.app` like any agent-native tool.

Thin: every command parses its arguments (the framework does that from type hints),
calls the public API and returns what it found; the framework writes it as the JSON
envelope for machines (`--json`, or any pipe) or as text for people (a terminal), and
turns failures into structured errors with the exit codes of SPEC-NOTES 23. `atip
--agent` is the framework's, so atip's own ATIP metadata is derived from the very
functions that run, and cannot drift from them.

Commands register themselves when their module is imported, and a module is imported only
when one of its commands is asked for (`Group.lazy`, decision 310): `atip search` imports
search.py and what it uses, not the bridge, the gateway or the crawler. `COMMANDS` says
which module defines which top-level names, in the order `--help` lists them; a group
belongs to the module of its first commands (`shim` to trust.py, `registry` to
registry.py), which names the modules of its other commands the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from atipkit._version import __version__
from atipkit.app import App

DESCRIPTION = (
    "Discover, validate and describe command-line tools for AI agents "
    "(Agent Tool Introspection Protocol)"
)

app = App(
    "atip",
    version=__version__,
    description=DESCRIPTION,
    homepage="https://atip.dev",
    env_prefix="ATIP",
    builtins=("docs",),
    # atip's settings are the RFC's (~/.config/agent-tools/config.json, registries.json);
    # a second configuration system beside them would only confuse.
    config=False,
)

# Exit statuses of the commands not yet on atipkit.app (removed when the last one moves).
EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2


COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("discover", ("scan", "list", "show", "refresh")),
    ("validate", ("validate",)),
    ("search", ("search",)),
    ("compile", ("compile",)),
    ("run", ("run",)),
    ("gen", ("gen",)),
    ("trust", ("verify", "shim")),
    ("registry", ("registry",)),
    ("serve", ("serve",)),
    ("gateway", ("mcp",)),
    ("apps", ("app",)),
    ("interop", ("import", "export")),
    ("crawl", ("crawl",)),
    ("review", ("review",)),
    ("schema", ("schema",)),
    ("completion", ("completion",)),
)
"""(the module of atipkit.cli, the top-level names it defines), in `--help` order."""

for _module, _names in COMMANDS:
    app.lazy(f"atipkit.cli.{_module}", _names)
cli = app.click_group
"""The Click group, for Click's test runner."""


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Console entry point."""
    app(argv)
