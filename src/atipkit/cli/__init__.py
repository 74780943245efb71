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
which module defines which top-level names, in the order `--help` lists them, and with
which summary, so that `atip --help` imports none of them (decision 521); a group
belongs to the module of its first commands (`shim` to trust.py, `registry` to
registry.py), which names the modules of its other commands the same way.
"""

from __future__ import annotations

import sys
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


COMMANDS: dict[str, dict[str, str]] = {
    "discover": {
        "scan": "Find ATIP tools on PATH and record them in the registry.",
        "list": "List the tools in the registry.",
        "show": "Show a tool's ATIP metadata: its commands and what each may do.",
        "refresh": "Ask tools for their metadata again, ignoring what is cached.",
    },
    "validate": {"validate": "Validate ATIP tool metadata and shims."},
    "search": {"search": "Find the commands of this machine's tools that fit a task."},
    "compile": {"compile": "Compile ATIP metadata into tool definitions for a model provider."},
    "run": {
        "run": "Run one tool call: map it to its command, apply the policy, build argv, run it."
    },
    "gen": {"gen": "Generate ATIP metadata from a tool's --help and man page."},
    "trust": {
        "verify": (
            "Verify a tool's binary against its metadata: checksums, signatures, provenance."
        ),
        "shim": "Sign and verify shim files.",
    },
    "registry": {"registry": "Remote shim registries: look up, list, build, publish."},
    "serve": {
        "serve": (
            "Serve a static registry, the Tool Discovery Protocol, or both, until interrupted."
        )
    },
    "gateway": {"mcp": "ATIP tools as MCP tools, for agents that only speak MCP."},
    "apps": {"app": "Serve a tool written with atipkit.app from its Python file."},
    "interop": {
        "import": "Describe tools from other formats as ATIP documents: MCP, ATDF, TDP.",
        "export": "Write ATIP tools in other formats: ATDF.",
    },
    "crawl": {"crawl": "Generate shims for the binaries that package sources publish."},
    "review": {"review": "Shims atip crawl --review queued: list, show, approve, reject."},
    "schema": {"schema": "Print the JSON Schema (draft 2020-12) for ATIP 0.6 metadata or shims."},
    "completion": {
        "completion": (
            "Print the script that completes atip's commands and options in bash, zsh or fish."
        )
    },
}
"""The module of atipkit.cli → the top-level names it defines and the line `atip --help`
lists each with, in `--help` order. The lines are the commands' own summaries, written
here so that `atip --help` imports no command module; `app.check()` (tests/test_cli.py)
fails where one drifts from its command's docstring."""

for _module, _summaries in COMMANDS.items():
    app.lazy(f"atipkit.cli.{_module}", tuple(_summaries), summaries=_summaries)
cli = app.click_group
"""The Click group, for Click's test runner."""


_torn_down = True  # whether the process ends through the interpreter's teardown


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Console entry point: the command's exit status, and the process ends there."""
    code = app.main(argv)
    if _torn_down:
        sys.exit(code)
    _leave(code)


def no_teardown() -> None:
    """Said by a command that leaves nothing to the interpreter's teardown (no file
    unflushed, no object whose finalizer must run): its process then ends without
    freeing every module and object, which cost a fused `atip search` process about a
    sixteenth of itself (decision 720). Only `main` acts on it; the atexit handlers
    still run."""
    global _torn_down
    _torn_down = False


def _leave(code: int) -> NoReturn:
    """End the process with `code`: the atexit handlers run (helper processes stopped,
    weakref finalizers, logging) and the output flushed, as the interpreter's exit does,
    but no module is torn down. Where another thread still runs, the interpreter's own
    exit waits for it, as it always did."""
    import atexit
    import os

    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            code = 120  # the interpreter's own status when its last flush fails
    os._exit(code)
