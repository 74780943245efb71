"""A small shelf app for the servers' resources, prompts and questions: run as a real
process (`python tests/apps/served_app.py mcp serve`, `atip app serve served_app.py`),
and imported for what it defines. No `if __name__ == "__main__"`: `atip app serve`
needs none.

Its books live in the file SHELF names (an environment variable), so a test can see
whether a command that asked went on or stopped."""

from __future__ import annotations

import json
import os
from enum import Enum
from pathlib import Path
from typing import Annotated

from atipkit.app import App as _App
from atipkit.app import Argument, Context, Destructive, NotFoundError, Option, ReadOnly

app = _App(
    "shelf",
    version="0.9",
    description="A shelf of books",
    default_output="json",
    permissions={"fs": "write"},
    mcp_transport="stdio",
)


def _books() -> dict[str, str]:
    path = os.environ.get("SHELF")
    if path and Path(path).exists():
        books: dict[str, str] = json.loads(Path(path).read_text())
        return books
    return {"dune": "Herbert", "emma": "Austen"}


def _save(books: dict[str, str]) -> None:
    Path(os.environ["SHELF"]).write_text(json.dumps(books))


class Tone(Enum):
    KIND = "kind"
    BLUNT = "blunt"


@app.command(annotations=ReadOnly, effects={"interactive": {"prompts": False}})
def list_() -> list[str]:
    """The titles on the shelf."""
    return sorted(_books())


@app.command(annotations=Destructive)
def clear(ctx: Context) -> dict:
    """Take every book off the shelf (asks first)."""
    books = _books()
    if not ctx.confirm(f"Remove all {len(books)} books?"):
        return {"removed": 0}
    _save({})
    return {"removed": len(books)}


@app.command(annotations=ReadOnly)
def sort(ctx: Context) -> dict:
    """Say how the shelf would be sorted (asks twice)."""
    return {"by_author": ctx.confirm("Sort by author?"), "by_year": ctx.confirm("Sort by year?")}


@app.command(human_in_the_loop=True)
def donate(title: str) -> dict:
    """Give a book away (a human approves)."""
    books = _books()
    books.pop(title, None)
    _save(books)
    return {"donated": title}


@app.resource("shelf://titles", mime_type="application/json")
def titles() -> list[str]:
    """Every title, sorted."""
    return sorted(_books())


@app.resource("shelf://book/{title}")
def book(title: str) -> str:
    """One book's author."""
    books = _books()
    if title not in books:
        raise NotFoundError(f"no book {title!r} on the shelf")
    return books[title]


@app.resource("shelf://cover/{title}/{size}", mime_type="image/x-test")
def cover(title: str, size: int) -> bytes:
    """A (fake) cover of some size."""
    return bytes([size % 256]) * 3


@app.prompt(title="Review a book")
def review(
    title: Annotated[str, Argument(help="The book to review")],
    words: Annotated[int, Option(help="How long the review is", min=10)] = 100,
    tone: Tone = Tone.KIND,
) -> list[object]:
    """Ask for a review of one book."""
    return [
        f"Review {title!r} by {_books().get(title, 'someone')} in about {words} words.",
        {"role": "assistant", "content": f"I will be {tone.value}."},
    ]


@app.prompt()
def broken() -> int:
    """A prompt whose function returns no messages (the app's bug)."""
    return 3
