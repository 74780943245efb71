"""The `atip` command. Thin: every command parses its arguments, calls the public API and
renders the result (human lines on stdout, diagnostics on stderr, `--json` for machines).

`atip` is itself an ATIP tool: `atip --agent` prints its own metadata, derived from this
very command tree, so it cannot drift from the real options.

Exit codes: 0 success, 1 the input is invalid, 2 usage error (bad option, unreadable file).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from atipkit._version import __version__
from atipkit.introspect.click import AtipGroup

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2

DESCRIPTION = (
    "Discover, validate and describe command-line tools for AI agents "
    "(Agent Tool Introspection Protocol)"
)


def _print_agent(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from atipkit.cli.agent import metadata_json

    click.echo(metadata_json())
    ctx.exit(EXIT_OK)


@click.group(
    cls=AtipGroup,
    help=DESCRIPTION,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "-V", "--version", prog_name="atip")
@click.option(
    "--agent",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_agent,
    help="Print atip's own ATIP metadata as JSON and exit.",
)
def cli() -> None:
    pass


def _register() -> None:
    from atipkit.cli.compile import compile_command
    from atipkit.cli.crawl import crawl_command
    from atipkit.cli.discover import list_command, refresh_command, scan_command, show_command
    from atipkit.cli.gen import gen_command
    from atipkit.cli.publish import build_command, publish_command
    from atipkit.cli.registry import registry_group
    from atipkit.cli.run import run_command
    from atipkit.cli.schema import schema_command
    from atipkit.cli.serve import serve_command
    from atipkit.cli.trust import shim_group, verify_command
    from atipkit.cli.validate import validate_command

    cli.add_command(scan_command, "scan")
    cli.add_command(list_command, "list")
    cli.add_command(show_command, "show")
    cli.add_command(refresh_command, "refresh")
    cli.add_command(validate_command, "validate")
    cli.add_command(compile_command, "compile")
    cli.add_command(run_command, "run")
    cli.add_command(gen_command, "gen")
    cli.add_command(verify_command, "verify")
    cli.add_command(shim_group, "shim")
    registry_group.add_command(build_command, "build")
    registry_group.add_command(publish_command, "publish")
    cli.add_command(registry_group, "registry")
    cli.add_command(serve_command, "serve")
    cli.add_command(crawl_command, "crawl")
    cli.add_command(schema_command, "schema")


_register()


def main(argv: list[str] | None = None) -> Any:
    """Console entry point."""
    try:
        return cli.main(args=argv, prog_name="atip")
    except BrokenPipeError:  # `atip validate … | head`: the reader left; so do we, quietly
        sys.stderr.close()
        sys.exit(EXIT_INVALID)
