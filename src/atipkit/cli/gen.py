"""`atip gen`: an inferred shim for a tool that does not speak ATIP."""

from __future__ import annotations

import os

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import discovering
from atipkit.introspect.click import AtipArgument, AtipCommand


@click.command(cls=AtipCommand, effects=discovering())
@click.argument("tool", cls=AtipArgument, help="A tool name on PATH, or a path to one.")
@click.option(
    "--depth",
    type=click.IntRange(1, 5),
    default=2,
    show_default=True,
    help="How deep to read subcommands (1 = the tool only).",
)
@click.option("--man/--no-man", default=True, show_default=True, help="Also read the man page.")
@click.option(
    "--budget",
    type=click.FloatRange(1, 600),
    default=10.0,
    show_default=True,
    help="Seconds for the whole generation.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Write the shim into this directory as <sha256>.json.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the shim (the default output).")
@click.pass_context
def gen_command(
    ctx: click.Context,
    tool: str,
    depth: int,
    man: bool,
    budget: float,
    out_dir: str | None,
    as_json: bool,
) -> None:
    """Generate ATIP metadata from a tool's --help and man page.

    Every run of the tool goes through the sandbox of the probe. The result is marked
    `trust.source: inferred` and validates under the ATIP schema.
    """
    from atipkit._atomic import write_atomic
    from atipkit.infer.generate import generate_shim
    from atipkit.model import count_commands, dumps
    from atipkit.validation import validate

    try:
        shim = generate_shim(tool, depth=depth, budget=budget, man=man)
    except FileNotFoundError as exc:
        click.echo(f"atip gen: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    text = dumps(shim)
    report = validate(text)
    if not report.ok:  # a bug if it happens: say it plainly rather than write it
        for problem in report.errors:
            click.echo(f"atip gen: generated metadata is invalid: {problem.format()}", err=True)
        ctx.exit(EXIT_INVALID)
    if out_dir:
        assert shim.binary
        path = os.path.join(out_dir, f"{shim.binary.hex}.json")
        write_atomic(path, text + b"\n")
        click.echo(f"wrote {path} ({count_commands(shim)} commands)", err=True)
    if as_json or not out_dir:
        click.echo(text.decode())
    ctx.exit(EXIT_OK)
