"""`atip import mcp`: an MCP server's tools as an ATIP document (`atipkit.interop.mcp`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from atipkit.app import (
    Argument,
    Context,
    DataFormatError,
    DependencyError,
    Document,
    InputError,
    NotFoundError,
    Option,
    TimeoutExpired,
    ToolError,
)
from atipkit.cli import _errors as errors
from atipkit.cli._effects import imports
from atipkit.cli.interop import import_group

if TYPE_CHECKING:
    from atipkit.interop.mcp import Endpoint, McpError


@import_group.command("mcp", effects=imports(network=True, subprocess=True, stdin="none"))
def import_mcp(
    ctx: Context,
    command: Annotated[
        list[str],
        Argument(help="The stdio server's command line, after -- (e.g. -- npx -y server)."),
    ] = [],  # noqa: B006 - the framework copies defaults, never mutates them
    url: Annotated[
        str | None, Option(help="A streamable-HTTP server's URL (instead of a command).")
    ] = None,
    name: Annotated[
        str | None, Option(help="The ATIP tool's name (default: the server's own name).")
    ] = None,
    out: Annotated[
        Path | None, Option(help="Also write the document to this file.", dir_okay=False)
    ] = None,
    header: Annotated[
        list[str],
        Option(
            help="An HTTP header 'Name: value' for --url (repeatable). Values are recorded "
            "in the document as given; write ${VAR} to read one from the environment."
        ),
    ] = [],  # noqa: B006
    env: Annotated[
        list[str],
        Option(
            help="NAME=VALUE in the stdio server's environment (repeatable; recorded as "
            "given, ${VAR} read from the environment)."
        ),
    ] = [],  # noqa: B006
) -> Document:
    """Describe an MCP server's tools as ATIP metadata.

    Connects with the MCP SDK's client (a command after --, started over stdio, or --url
    for streamable HTTP), lists every tool (all pages) and writes one command per tool:
    inputSchema properties become options (--<property>), annotations become effects
    (MCP's defaults where a hint is absent). The document's x-mcp records how to reach
    the server, so `atip run --tool FILE` can call its tools. The result is the document
    (--plain > FILE saves it as it is; --out writes it atomically). Exit codes: 2 neither
    or both of --url and a command, or a bad --header/--env/--name; 10 the command does
    not exist; 40 the server fails to start, answer or initialize, or the mcp extra is
    missing; 50 --timeout (default 30 s: starting, handshake and listing) ran out; 65 the
    server's tools cannot be described (the message names the tool and why).
    """
    from atipkit.interop.mcp import FETCH_TIMEOUT, McpError, check_tool_name, describe, fetch
    from atipkit.model import count_commands, dumps

    endpoint = _endpoint(command, url, header, env)
    if name is not None:
        try:
            check_tool_name(name)
        except ValueError as exc:
            raise InputError(f"--name: {exc}", details={"param": "name"}) from None
    try:
        listing = fetch(endpoint, timeout=ctx.settings.timeout or FETCH_TIMEOUT)
        tool = describe(listing, name=name)
    except McpError as exc:
        raise _failure(exc, endpoint) from None
    text = dumps(tool) + b"\n"
    if out is not None:
        errors.write_out(out, text)
        ctx.info(f"wrote {out} ({count_commands(tool)} commands)")
    return Document(text)


def _endpoint(command: list[str], url: str | None, headers: list[str], env: list[str]) -> Endpoint:
    """Where the server is, from the command line; a usage error (2) for what cannot be."""
    from atipkit.interop.mcp import Endpoint

    if bool(command) == (url is not None):
        raise InputError(
            "give either --url URL or the server's command after --, not "
            + ("both" if command else "neither"),
            suggestion="atip import mcp -- python server.py, or atip import mcp --url "
            "http://127.0.0.1:8000/mcp",
        )
    try:
        if url is not None:
            if env:
                raise ValueError("--env is for a server started from a command, not --url")
            return Endpoint.http(url, headers=dict(_pairs(headers, ":", "--header")))
        if headers:
            raise ValueError("--header is for --url, not a server started from a command")
        return Endpoint.stdio(command, env=dict(_pairs(env, "=", "--env")), cwd=os.getcwd())
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _pairs(items: list[str], separator: str, flag: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, found, value = item.partition(separator)
        if not found or not key.strip():
            shape = "'Name: value'" if separator == ":" else "NAME=VALUE"
            raise ValueError(f"{flag} {item!r}: expected {shape}")
        out.append((key.strip(), value.strip() if separator == ":" else value))
    return out


def _failure(exc: McpError, endpoint: Endpoint) -> ToolError:
    """The `atip` error an import failure means (exit codes in the docstring above).
    Whatever is not one of the kinds below is `ServerFailed`: `fetch` and `describe` raise
    no other (`BadExtension` comes from reading a document's x-mcp, which an import
    does not)."""
    from atipkit.interop.mcp import (
        MissingVariable,
        NotDescribable,
        SdkMissing,
        ServerNotFound,
        ServerTimeout,
    )

    where = {"server": endpoint.where}
    if isinstance(exc, SdkMissing):
        return errors.missing_extra(str(exc), "pip install 'atipkit[mcp]'")
    if isinstance(exc, ServerNotFound):
        return NotFoundError(
            str(exc),
            details=where,
            suggestion="Check the command after --: it must be a program on PATH or a path.",
        )
    if isinstance(exc, ServerTimeout):
        return TimeoutExpired(
            str(exc),
            details={**where, "seconds": exc.seconds},
            suggestion="Give it longer with --timeout, or check that the command starts an "
            "MCP server on stdio (it must not print anything else on stdout).",
        )
    if isinstance(exc, NotDescribable):
        details = {**where, "reason": str(exc)}
        if exc.tool is not None:
            details["tool"] = exc.tool
        return DataFormatError(
            f"cannot describe the server's tools: {exc}",
            details=details,
            suggestion="The server's tool listing must be fixed; nothing was written.",
        )
    if isinstance(exc, MissingVariable):
        return DependencyError(
            str(exc),
            details={**where, "variable": exc.name},
            suggestion=f"Set {exc.name} in the environment, or give the value itself.",
        )
    stderr = getattr(exc, "stderr", "")
    return DependencyError(
        str(exc),
        details={**where, **({"stderr": stderr} if stderr else {})},
        suggestion="Run the server's command yourself to see why it does not start, "
        "or check the URL.",
    )
