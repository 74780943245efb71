"""A small notes app for the MCP tests: run as a real process (`python
tests/apps/mcp_app.py mcp serve ...`) and imported for `tool_definitions`.

Each command stands for one thing the server must get right: a read-only command with
declared effects, a failure with its own exit code, a human-in-the-loop command, a
dry-run, a timeout, pagination, a hidden command, a nested group, and a command whose
return annotation lies."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from atipkit.app import (
    App,
    Argument,
    ClosedWorld,
    Context,
    Destructive,
    Idempotent,
    NotFoundError,
    Option,
    ReadOnly,
)

app = App("jot", version="3.1.4", description="Keep short notes on this machine")

NOTES = {"groceries": "eggs, milk", "todo": "write the MCP tests"}


@dataclass
class Note:
    title: str
    body: str = ""


@app.command(annotations=ReadOnly | ClosedWorld)
def grep(
    phrase: Annotated[str, Argument(help="Words to look for")],
    ignore_case: Annotated[bool, Option(help="Match upper and lower case alike")] = False,
) -> list[dict]:
    """Search the bodies of all notes for lines containing a phrase."""
    want = phrase.lower() if ignore_case else phrase
    return [
        {"title": title, "line": body}
        for title, body in NOTES.items()
        if want in (body.lower() if ignore_case else body)
    ]


@app.command(annotations=ReadOnly | ClosedWorld)
def show(title: Annotated[str, Argument(help="The note's title")]) -> Note:
    """Show one note."""
    if title not in NOTES:
        raise NotFoundError(f"no note called {title!r}", suggestion="List them with: jot grep ''")
    return Note(title, NOTES[title])


@app.command(annotations=Destructive | Idempotent, dry_run=True)
def purge(older_than: Annotated[int, Option(help="Days", min=1)], ctx: Context) -> dict:
    """Delete every note older than some days, for good."""
    for title in sorted(NOTES):
        ctx.plan("delete", title)
    if ctx.dry_run:
        return {"deleted": []}
    return {"deleted": sorted(NOTES)}


@app.command(human_in_the_loop=True)
def publish(title: str) -> dict:
    """Publish a note to the team's wiki."""
    return {"published": title}


@app.command(timeout=0.5)
def sync(seconds: float = 5.0) -> dict:
    """Synchronise with the server (slow)."""
    time.sleep(seconds)
    return {"synced": True}


@app.command(paginated=3, annotations=ReadOnly | ClosedWorld)
def numbers(n: int) -> Iterator[int]:
    """Count from zero."""
    yield from range(n)


@app.command(annotations=ReadOnly | ClosedWorld)
def count() -> int:
    """How many notes there are."""
    print("counting notes")  # a careless author's debugging line, on stdout
    return len(NOTES)


@app.command(hidden=True)
def internal() -> dict:
    """A maintenance command not offered to agents."""
    return {"internal": True}


@app.command()
def broken() -> int:
    """Say how many notes there are (but answers text: the annotation is wrong)."""
    return "two"  # type: ignore[return-value]


tags = app.group("tag", help="Tags of notes")


@tags.command(annotations=Idempotent)
def add(title: str, tag: Annotated[list[str], Option(help="Tags to add")]) -> dict:
    """Tag a note."""
    return {"title": title, "tags": tag}


if __name__ == "__main__":
    app()
