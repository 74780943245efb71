"""`atip gen`: an inferred shim for a tool that does not speak ATIP."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from atipkit.app import (
    Argument,
    Context,
    Document,
    InternalError,
    NotFoundError,
    Option,
)
from atipkit.cli import _errors as errors
from atipkit.cli import app
from atipkit.cli._effects import discovering


@app.command(effects=discovering())
def gen(
    ctx: Context,
    tool: Annotated[str, Argument(help="A tool name on PATH, or a path to one.")],
    depth: Annotated[
        int, Option(help="How deep to read subcommands (1 = the tool only).", min=1, max=5)
    ] = 2,
    man: Annotated[bool, Option(help="Also read the man page.")] = True,
    budget: Annotated[
        float | None,
        Option(
            help="Seconds after which a tool that hangs is stopped (default 300). The work "
            "is counted in runs and pages, not time: a busy machine reads as much, slower.",
            min=1,
            max=600,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        Option(help="Write the shim into this directory as <sha256>.json.", file_okay=False),
    ] = None,
) -> Document:
    """Generate ATIP metadata from a tool's --help and man page.

    Every run of the tool goes through the sandbox of the probe. The result is the shim,
    marked `trust.source: inferred`, which validates under the ATIP schema; `--plain >
    FILE` saves it as it is, and `--out DIR` writes it as DIR/<sha256>.json. A shim
    with commands left unread says so (`_generation.incomplete`, and `cut`: `time` for
    --budget, `steps` for a tree too big to read whole), and so does a warning.
    """
    _start_sandbox(tool)  # its helper starts while the inference modules are imported
    from atipkit.infer.generate import CEILING, generate_shim
    from atipkit.model import count_commands, dumps
    from atipkit.validation import validate

    try:
        shim = generate_shim(tool, depth=depth, budget=budget or CEILING, man=man)
    except FileNotFoundError as exc:
        raise NotFoundError(
            str(exc),
            details={"tool": tool},
            suggestion="Check the name, or give the path to the executable.",
        ) from None
    generation = shim.extensions.get("_generation", {})
    if generation.get("incomplete"):
        why = "--budget stopped it" if generation.get("cut") == "time" else "too many to read"
        ctx.warn(f"some of {tool}'s commands are listed without their options ({why})")
    text = dumps(shim)
    report = validate(text)
    if not report.ok:  # a bug if it happens: say it plainly rather than write it
        raise InternalError(
            f"generated metadata is invalid: {report.errors[0].format()}",
            details={"problems": [p.to_dict() for p in report.errors]},
            suggestion="This is a bug in atip gen; report it with the tool's --help output.",
        )
    if out is not None:
        assert shim.binary
        path = out / f"{shim.binary.hex}.json"
        errors.write_out(path, text + b"\n", advice="Name a directory you may write to with --out.")
        ctx.info(f"wrote {path} ({count_commands(shim)} commands)")
    return Document(text + b"\n")


def _start_sandbox(tool: str) -> None:
    """Start the sandbox `generate_shim` will run `tool` in, by the path it will run it
    by (decision 616); nothing when there is no such tool (`generate_shim` says so)."""
    import shutil

    from atipkit import sandbox

    launch = tool if os.sep in tool else shutil.which(tool)
    if launch is not None:
        sandbox.prepare([os.path.abspath(launch)])
