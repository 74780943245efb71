"""`atip serve`: serve a built registry over HTTP (`--registry`). The Tool Discovery
Protocol (`--tdp`) will be a second thing this command serves: each is an app of
`atipkit.serve`, chosen here by option."""

from __future__ import annotations

import json
import os

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import serves
from atipkit.introspect.click import AtipCommand


@click.command(cls=AtipCommand, effects=serves())
@click.option(
    "--registry",
    "registry_dir",
    type=click.Path(file_okay=False, exists=True),
    help="The registry directory to serve (what atip registry build wrote); required.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on; 0 picks a free one.",
)
@click.option("--json", "as_json", is_flag=True, help="Say where it listens as one JSON line.")
@click.pass_context
def serve_command(
    ctx: click.Context, registry_dir: str | None, host: str, port: int, as_json: bool
) -> None:
    """Serve a static registry over HTTP for development, until interrupted.

    ETag and Last-Modified with 304 answers, HEAD, the registry's content types and
    Cache-Control, JSON 404s, no directory listings. The first line on stdout says where
    it listens; requests are logged on stderr. Exit status: 0 stopped, 1 cannot listen on
    the address, 2 usage error (no --registry, not a directory, the serve extra missing).
    """
    from atipkit import serve

    if registry_dir is None:
        raise click.UsageError("give --registry DIR: the directory atip registry build wrote")
    try:
        serve.require_extra()
    except serve.ServeError as exc:
        click.echo(f"atip serve: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    from atipkit.serve.registry import registry_app

    root = os.path.abspath(registry_dir)
    try:
        sock = serve.listen(host, port)
    except serve.ServeError as exc:
        click.echo(f"atip serve: {exc}", err=True)
        ctx.exit(EXIT_INVALID)
    url = serve.url(sock)
    if as_json:
        click.echo(json.dumps({"registry": root, "url": url}))
    else:
        click.echo(f"serving the registry {root} at {url} (Ctrl-C to stop)")
    serve.run(registry_app(root), sock)
    ctx.exit(EXIT_OK)
