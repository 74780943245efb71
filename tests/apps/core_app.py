"""An app that exercises every parameter kind and every framework promise; the core tests
run it in-process and as a real process (`python tests/apps/core_app.py ...`)."""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from atipkit.app import (
    App,
    Argument,
    AuthError,
    ClosedWorld,
    ConflictError,
    Context,
    DataFormatError,
    DependencyError,
    Destructive,
    Document,
    HumanHandoff,
    Idempotent,
    InputError,
    InternalError,
    NotFoundError,
    Option,
    ReadOnly,
    StateError,
    StdinOr,
    StdoutOr,
    TemporaryError,
    TimeoutExpired,
)

app = App("core", version="2.1.0", description="A test app for atipkit.app")


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Note:
    title: str
    tags: list[str]
    body: str = ""


@app.command(
    annotations=ReadOnly | ClosedWorld,
    examples=[{"args": ["*.py", "--max-depth", "2"], "description": "Python files"}],
    error_codes={"E3001": "The root does not exist"},
)
def find(
    pattern: Annotated[str, Argument(help="Glob pattern to match")],
    root: Annotated[Path, Option(help="Where to look", exists=True, file_okay=False)] = Path("."),
    max_depth: Annotated[int, Option("-d", help="How deep to go", min=1, max=100)] = 10,
    hidden: bool = False,
    color: Color = Color.RED,
    mode: Literal["fast", "slow"] = "fast",
    tag: list[str] = [],  # noqa: B006 - a default the framework copies, never mutates
    limit: int | None = None,
) -> list[dict]:
    """Find files matching a pattern.

    Args:
        hidden: Include hidden files.
        tag: Only files with these tags.
        limit: At most this many.
    """
    found = sorted(p.name for p in root.glob(pattern) if hidden or not p.name.startswith("."))
    rows = [{"name": n, "color": color.value, "mode": mode, "tags": tag} for n in found]
    return rows[:limit] if limit is not None else rows


@app.command(annotations=Destructive | ClosedWorld, dry_run=True)
def remove(name: Annotated[str, Argument(help="The note to remove")], ctx: Context) -> dict:
    """Remove a note."""
    if ctx.dry_run:
        ctx.plan("delete", name, reason="asked")
        return {"would_remove": name}
    raise NotFoundError(f"no note {name!r}", suggestion="List the notes first.")


@app.command(annotations=ReadOnly, paginated=True)
def count(n: Annotated[int, Argument(help="How many")]) -> Iterator[dict]:
    """Count from 0 to n-1, one record each."""
    for i in range(n):
        yield {"i": i}


@app.command(annotations=ReadOnly)
def ticks(n: Annotated[int, Argument(help="How many")]) -> Iterator[dict]:
    """Yield n records, unpaginated: a stream."""
    for i in range(n):
        yield {"tick": i}


@app.command(annotations=Idempotent)
def add(note: Annotated[Note, Argument(help="The note, as JSON")]) -> Note:
    """Add a note."""
    return note


@app.command(annotations=ReadOnly | ClosedWorld)
def wc(data: Annotated[StdinOr[str], Argument(help="Text: a file, a URL, - or stdin")]) -> dict:
    """Count the words of a text."""
    return {"words": len(data.split()), "lines": len(data.splitlines())}


@app.command(annotations=ReadOnly | ClosedWorld)
def lines(items: Annotated[StdinOr[list[str]], Argument(help="Records")]) -> list[str]:
    """Echo the records read, upper-cased."""
    return [item.upper() for item in items]


@app.command(annotations=ReadOnly | ClosedWorld)
def size(source: Annotated[StdinOr[Path], Argument(help="A file, or data on stdin")]) -> dict:
    """The size of a file in bytes."""
    return {"bytes": source.stat().st_size, "exists": source.exists()}


@app.command(annotations=ReadOnly | ClosedWorld, max_tokens=20)
def words(n: int) -> list[str]:
    """n words, to overflow a token budget."""
    return [f"word{i}" for i in range(n)]


@app.command(annotations=Destructive, human_in_the_loop=True)
def purge(ctx: Context) -> dict:
    """Delete everything (a human must approve)."""
    return {"purged": True}


@app.command()
def ask(ctx: Context) -> dict:
    """Ask a question on the terminal."""
    return {"answer": ctx.confirm("Proceed?")}


@app.command(timeout=0.5)
def sleep(seconds: float) -> dict:
    """Sleep, to test timeouts."""
    time.sleep(seconds)
    return {"slept": seconds}


@app.command()
def tick(counter: Path, ctx: Context) -> dict:
    """Append a line to a file and say how many lines it has (a visible side effect)."""
    ctx.log("ticking")
    ctx.log("ticking, in detail", level=2)
    with counter.open("a") as f:
        f.write("x\n")
    ctx.warn("ticked")
    return {"ticks": len(counter.read_text().splitlines())}


@app.command(annotations=ReadOnly | ClosedWorld)
def status(ctx: Context) -> dict:
    """Say how things are; more with --response-format detailed."""
    out = {"state": "ok"}
    if ctx.detailed:
        out["checks"] = ["disk", "network"]
    return out


def _report_text(report: dict) -> str:
    return "".join(f"{name}: {'ok' if good else 'BAD'}\n" for name, good in report.items())


@app.command(annotations=ReadOnly | ClosedWorld, text=_report_text)
def check(names: list[str], ctx: Context) -> dict:
    """Check names; a name starting with 'x' is bad, and the call fails with the report."""
    report = {}
    for i, name in enumerate(names):
        ctx.progress(f"checking {i + 1}/{len(names)}")
        report[name] = not name.startswith("x")
    ctx.progress(None)
    ctx.info(f"{len(names)} names checked")
    bad = [n for n, good in report.items() if not good]
    if bad:
        raise DataFormatError(f"{len(bad)} of {len(names)} names are bad", result=report)
    return report


@app.command(annotations=ReadOnly | ClosedWorld)
def manifest() -> Document:
    """A JSON document, written verbatim by --plain and --text."""
    return Document('{\n  "tools": [1, 2]\n}\n')


@app.command(annotations=ClosedWorld)
def export(
    dest: Annotated[StdoutOr[Path], Option(help="Where to write the notes")] = Path("-"),
) -> dict:
    """Write the notes to a file, or to the result with '-'."""
    dest.write_text("note one\nnote two\n")
    return {"wrote": str(dest)}


_FAILURES = {
    "dependency": DependencyError,
    "temporary": TemporaryError,
    "auth": AuthError,
    "conflict": ConflictError,
    "state": StateError,
    "timeout": TimeoutExpired,
    "handoff": HumanHandoff,
    "data": DataFormatError,
    "input": InputError,
    "internal": InternalError,
    "notfound": NotFoundError,
}


@app.command()
def fail(kind: Literal[tuple(_FAILURES)]) -> dict:  # type: ignore[valid-type]
    """Raise the error of one kind."""
    raise _FAILURES[kind](f"failed: {kind}")


@app.command()
def crash() -> dict:
    """Raise an unexpected exception."""
    raise ZeroDivisionError("division by zero")


@app.command()
def env() -> dict:
    """The environment variables this app reads, as the process sees them."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("CORE_")}


notes = app.group("notes", help="Notes, nested")


@notes.command(annotations=Idempotent)
def tag(
    name: str,
    labels: Annotated[list[str], Argument(help="Labels to add")],
    force: Annotated[bool, Option(help="Even if tagged")] = False,
) -> dict:
    """Tag a note."""
    return {"name": name, "labels": labels, "force": force}


if __name__ == "__main__":
    app()
