"""The groups every app has: `mcp` (serve, export), `api` (serve, export-openapi) and
`docs` (skill, llms, llms-full, man). Built only when one of them is called, and their
modules imported only then, so they cost an app nothing at startup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import click

if TYPE_CHECKING:
    from atipkit.app.app import App

__all__ = ["group"]


def group(app: App, name: str) -> click.Group:
    return {"mcp": _mcp, "api": _api, "docs": _docs}[name](app)


def _guard_options(command: Any) -> Any:
    """`--allow-host` and `--allow-origin` (`atipkit.serve.guard`), for an HTTP server."""
    command = click.option(
        "--allow-origin",
        multiple=True,
        metavar="ORIGIN",
        help="HTTP: let web pages of this origin (http://host:port, or * for any) call the "
        "server, with CORS (repeatable; default: none).",
    )(command)
    return click.option(
        "--allow-host",
        multiple=True,
        metavar="NAME",
        help="HTTP: also answer requests whose Host is this name (repeatable); loopback "
        "names and the address listened on always are.",
    )(command)


def _mcp(app: App) -> click.Group:
    @click.group(name="mcp", help="Serve or export the commands as MCP tools.")
    def mcp() -> None:
        pass

    @mcp.command("serve")
    @click.option(
        "--transport",
        type=click.Choice(["stdio", "http"]),
        default=app.mcp_transport,
        show_default=True,
        help="stdio, or streamable HTTP (default: the app's mcp_transport).",
    )
    @click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address.")
    @click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
    @click.option(
        "--deferred",
        is_flag=True,
        help="Offer search_tools and run_tool instead of one tool a command (large apps).",
    )
    @click.option(
        "--yes",
        is_flag=True,
        help="Answer yes to the commands' questions without asking the client "
        "(approvals of human-in-the-loop commands are still asked).",
    )
    @_guard_options
    def serve(
        transport: Literal["stdio", "http"],
        host: str,
        port: int,
        deferred: bool,
        yes: bool,
        allow_host: tuple[str, ...],
        allow_origin: tuple[str, ...],
    ) -> None:
        """Run an MCP server whose tools are this app's commands, and which serves its
        resources and prompts."""
        from atipkit.app.mcp import serve as run_server

        run_server(
            app,
            transport=transport,
            host=host,
            port=port,
            deferred=deferred,
            allow_hosts=allow_host,
            allow_origins=allow_origin,
            yes=yes,
        )

    @mcp.command("export")
    @click.option("--deferred", is_flag=True, help="The tools of the deferred mode.")
    def export(deferred: bool) -> None:
        """Print the MCP tool definitions (tools/list) as JSON."""
        from atipkit.app.mcp import tool_definitions
        from atipkit.app.schema import dumps

        click.echo(dumps({"tools": tool_definitions(app, deferred=deferred)}, indent=True))

    return mcp


def _api(app: App) -> click.Group:
    @click.group(name="api", help="Serve the commands over HTTP, or export their OpenAPI.")
    def api() -> None:
        pass

    @api.command("serve")
    @click.option("--host", default="127.0.0.1", show_default=True, help="Address.")
    @click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
    @_guard_options
    def serve(
        host: str, port: int, allow_host: tuple[str, ...], allow_origin: tuple[str, ...]
    ) -> None:
        """Serve every command as POST /v1/COMMAND, answering with the JSON envelope."""
        from atipkit.app.http import serve as run_server

        run_server(app, host=host, port=port, allow_hosts=allow_host, allow_origins=allow_origin)

    @api.command("export-openapi")
    def export_openapi() -> None:
        """Print the OpenAPI 3.1 document of the HTTP API."""
        from atipkit.app.http import openapi
        from atipkit.app.schema import dumps

        click.echo(dumps(openapi(app), indent=True))

    return api


def _docs(app: App) -> click.Group:
    @click.group(name="docs", help="Documentation generated from the commands themselves.")
    def group_() -> None:
        pass

    outputs = {
        "skill": ("skill_md", "SKILL.md: what an agent needs to use this tool."),
        "llms": ("llms_txt", "llms.txt: a short index for language models."),
        "llms-full": ("llms_full_txt", "llms-full.txt: every command in full."),
        "man": ("man_page", "A man page (roff); view with: man -l FILE."),
    }
    for name, (render, help_text) in outputs.items():
        group_.add_command(_doc_command(app, name, render, help_text))
    return group_


def _doc_command(app: App, name: str, render: str, help_text: str) -> click.Command:
    @click.command(name=name, help=help_text)
    def command() -> None:
        from atipkit.app import docs

        click.echo(getattr(docs, render)(app), nl=False)

    return command
