"""`atip schema`: print the canonical JSON Schema that `atip validate` applies."""

from __future__ import annotations

from typing import Annotated, Literal

from atipkit.app import Document, Option
from atipkit.cli import app
from atipkit.cli._effects import read_only


@app.command(effects=read_only(reads_files=False, stdin="none"))
def schema(
    kind: Annotated[
        Literal["metadata", "shim"],
        Option(help="Which schema: tool metadata (`tool --agent`) or a shim file."),
    ] = "metadata",
) -> Document:
    """Print the JSON Schema (draft 2020-12) for ATIP 0.6 metadata or shims.

    The shim schema refers to the metadata schema by its $id,
    https://atip.dev/schema/0.6.json; save both to validate shims elsewhere
    (`atip schema --plain > atip-0.6.schema.json` writes the file exactly).
    """
    from atipkit.schema import schema_text

    return Document(schema_text(kind))
