"""`atip export atdf` and `atip import atdf`: ATIP tools as Agent Tool Description Format
descriptors, and ATDF documents as an ATIP tool. Thin: the work is
`atipkit.interop.atdf`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Argument,
    Context,
    DataFormatError,
    Document,
    InputError,
    Option,
    Suggestion,
)
from atipkit.cli import _errors as errors
from atipkit.cli._effects import imports, resolving
from atipkit.cli.interop import export_group, import_group
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.errors import DocumentError


def _text(result: Any) -> str:
    """The document itself, or where it was written."""
    if isinstance(result, dict) and "written" in result:
        return f"wrote {result['written']}\n"
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def _invalid(exc: DocumentError, name: str, advice: str) -> DataFormatError:
    problems = [p.to_dict() for p in exc.problems]
    return DataFormatError(
        str(exc),
        details={"file": exc.source or name, "problems": problems},
        suggestion=advice,
    )


@export_group.command("atdf", effects=resolving(stdin="optional"), text=_text)
def export_atdf(
    ctx: Context,
    tools: Annotated[
        list[str],
        Argument(
            help="ATIP documents, - for stdin, or tool names to resolve (registry, probe, shim)."
        ),
    ],
    enhanced: Annotated[
        bool,
        Option(
            help="Enhanced descriptors (schema 2.0.0): metadata, prerequisites, examples, "
            "input schemas, and x-atip, from which `atip import atdf` restores the tool."
        ),
    ] = False,
    out: Annotated[
        Path | None,
        Option(help="Write the descriptors to this file (atomically) instead.", dir_okay=False),
    ] = None,
) -> Any:
    """Describe ATIP tools in the Agent Tool Description Format.

    One descriptor per invocable command, named as `atip compile` names it; all tools'
    descriptors in one JSON array, each valid under the ATDF schema of its flavour. Basic
    descriptors carry the safety flags in their description and when_to_use; enhanced
    ones (--enhanced) also carry the exact ATIP metadata under x-atip. The result is the
    array (`--plain > tools.atdf.json` saves it); with --out FILE it is written there
    atomically and the result says where. Exit status: 0; 2 usage (an unreadable file,
    two tools of one name, --out cannot be written); 10 a name that is neither a file
    nor a known tool; 30 no permission to read a file or to write --out; 65 an invalid
    ATIP document.
    """
    from atipkit.cli._resolve import document
    from atipkit.errors import DocumentError
    from atipkit.interop.atdf import export_atdf as export
    from atipkit.interop.atdf.export import SameNameError

    documents = [document(name, ctx) for name in tools]
    try:
        descriptors = export(documents, enhanced=enhanced)
    except DocumentError as exc:  # an x-atdf extension ATDF does not accept
        raise _invalid(exc, tools[0], "Fix or remove the x-atdf extension it names.") from None
    except SameNameError as exc:  # not any ValueError: a bug's is exit 70, not usage
        raise InputError(str(exc), details={"tools": tools}) from None
    if not descriptors:
        ctx.warn("no invocable command (hidden ones are left out): the list is empty")
    text = json.dumps(descriptors, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        return Document(text)
    errors.write_out(
        out, text.encode(), advice="Name a file in a directory you may write to with --out."
    )
    ctx.info(f"wrote {out} ({len(descriptors)} descriptors)")
    return {
        "written": str(out),
        "descriptors": len(descriptors),
        "flavour": "enhanced" if enhanced else "basic",
    }


@import_group.command("atdf", effects=imports(network=False, subprocess=False), text=_text)
def import_atdf(
    ctx: Context,
    file: Annotated[
        str,
        Argument(
            help="An ATDF document: one descriptor, an array of them, or an object with a "
            "'tools' array; - for stdin."
        ),
    ],
    name: Annotated[
        str | None,
        Option(help="The tool's name (default: as x-atip says, else the file's name)."),
    ] = None,
    out: Annotated[
        Path | None,
        Option(help="Write the ATIP document to this file (atomically) instead.", dir_okay=False),
    ] = None,
) -> Any:
    """Describe the tools of an ATDF document as one ATIP tool.

    Each descriptor (basic or enhanced, `tool_id` or `id`) is checked against its ATDF
    schema first; the first invalid one fails the import with its JSON path. Each becomes
    a command: restored exactly from x-atip where atip exported it, else a command named
    by its id whose inputs are `--<name>` options, its effects unknown (never guessed),
    and what ATIP cannot say kept under x-atdf. The result is the ATIP document, valid
    under the ATIP schema; with --out FILE it is written there atomically and the result
    says where. Exit status: 0; 2 usage (no name for the tool from stdin, a name that
    cannot name a tool, an unreadable file, --out cannot be written); 10 no such file;
    30 no permission to read FILE or write --out; 65 not JSON, not ATDF, too large or too
    deeply nested (the message names the JSON path and what was expected).
    """
    from atipkit.cli._resolve import file_error
    from atipkit.errors import DocumentError
    from atipkit.interop.atdf import ToolNameError, read_atdf
    from atipkit.model import count_commands, dumps

    try:
        tool = read_atdf(file, name=name)
    except OSError as exc:
        raise file_error(exc, file, "Name an ATDF file, or - for stdin.") from None
    except ToolNameError as exc:
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_VALUE,
            details={"param": "name"},
            suggestion=Suggestion(
                "Name the tool with --name.", example=f"atip import atdf {file} --name mytool"
            ),
        ) from None
    except DocumentError as exc:
        raise _invalid(
            exc, file, "Fix the document where the message says; the ATDF schemas are in atipkit."
        ) from None
    text = dumps(tool) + b"\n"
    _warn(ctx, text)
    if out is None:
        return Document(text)
    errors.write_out(out, text, advice="Name a file in a directory you may write to with --out.")
    commands = count_commands(tool)
    ctx.info(f"wrote {out} ({commands} commands)")
    return {"written": str(out), "tool": tool.name, "commands": commands}


def _warn(ctx: Context, document: bytes) -> None:
    """The imported document's warnings, commands without effects counted in one line
    (every command of a plain ATDF document has none)."""
    from atipkit.validation import validate

    warnings = validate(document).warnings
    unstated = sum(1 for w in warnings if w.code == "effects.missing")
    if unstated:
        ctx.warn(
            f"{unstated} command(s) state no effects (ATDF has no field for them): agents "
            "must assume the worst"
        )
    for problem in warnings:
        if problem.code != "effects.missing":
            ctx.warn(f"{problem.location}: {problem.message}")
