"""`atip schema`: print the canonical JSON Schema that `atip validate` applies."""

from __future__ import annotations

import click

from atipkit.cli._effects import read_only
from atipkit.introspect.click import AtipCommand
from atipkit.schema import SCHEMA_FILES, schema_text


@click.command(cls=AtipCommand, effects=read_only(reads_files=False, stdin="none"))
@click.option(
    "--kind",
    type=click.Choice(sorted(SCHEMA_FILES)),
    default="metadata",
    show_default=True,
    help="Which schema: tool metadata (`tool --agent`) or a shim file.",
)
def schema_command(kind: str) -> None:
    """Print the JSON Schema (draft 2020-12) for ATIP 0.6 metadata or shims.

    The shim schema refers to the metadata schema by its $id,
    https://atip.dev/schema/0.6.json; save both to validate shims elsewhere.
    """
    click.echo(schema_text(kind), nl=False)  # type: ignore[arg-type]
