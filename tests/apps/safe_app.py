"""An app for the framework's safety, selection and checks (PRD §8.7, §14, §16); the
tests run it as a real process (`python tests/apps/safe_app.py ...`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from atipkit.app import (
    App,
    Argument,
    ClosedWorld,
    Context,
    Destructive,
    InputError,
    Option,
    ReadOnly,
)

app = App("safe", version="3.0.0", description="A test app for safety and selection")


@dataclass
class Owner:
    login: str
    admin: bool


@dataclass
class Repo:
    name: str
    stars: int
    owner: Owner
    topics: list[str]
    updated: str


REPOS = [
    Repo("atip", 120, Owner("ann", True), ["agents", "cli"], "2026-01-05"),
    Repo("tooli", 45, Owner("bob", False), ["cli"], "2025-11-30"),
    Repo("notes", 3, Owner("ann", True), [], "2026-02-10"),
]


@app.command(annotations=ReadOnly | ClosedWorld, examples=[{"args": ["--fields", "name"]}])
def repos() -> list[Repo]:
    """List the repositories."""
    return REPOS


@app.command(annotations=ReadOnly | ClosedWorld, paginated=2)
def events(n: Annotated[int, Argument(help="How many")] = 7) -> Iterator[dict]:
    """Yield events, paged; records without a declared schema."""
    for i in range(n):
        yield {"id": i, "kind": "push" if i % 2 else "issue", "meta": {"size": i * 10}}


@app.command(annotations=ReadOnly | ClosedWorld)
def word(n: int = 3) -> list[str]:
    """Words, no records."""
    return ["w"] * n


@app.command(annotations=ReadOnly | ClosedWorld)
def show(path: Annotated[Path, Argument(help="A file whose text is shown")]) -> dict:
    """Show a file's text as a record (what a hostile file says comes through here)."""
    return {"path": path.name, "text": path.read_text()}


@app.command(annotations=ReadOnly | ClosedWorld)
def cat(path: Annotated[Path, Argument(help="A file whose lines are listed")]) -> list[dict]:
    """A file's lines, as records."""
    return [{"n": i, "line": line} for i, line in enumerate(path.read_text().splitlines())]


@app.command(annotations=ReadOnly | ClosedWorld)
def check(text: str) -> dict:
    """Refuse the text, quoting it (an error message carries what it was given)."""
    raise InputError(f"not valid: {text}")


@app.command(annotations=Destructive | ClosedWorld, dry_run=True)
def wipe(target: Annotated[Path, Argument(help="A file to delete")], ctx: Context) -> dict:
    """Delete a file."""
    if ctx.dry_run:
        ctx.plan("delete", str(target))
        return {"deleted": None}
    target.unlink()
    return {"deleted": target.name}


@app.command(effects={"destructive": True, "interactive": {"prompts": True}})
def run(word: str, ctx: Context) -> dict:
    """Run anything (declared destructive, as the worst case), confirming by itself."""
    return {"ran": word, "asked": ctx.confirm(f"run {word}?") if word == "ask" else False}


@app.command(annotations=ClosedWorld)
def login(
    user: str,
    token: Annotated[str, Option(secret=True, help="The API token")],
    echo: bool = False,
) -> dict:
    """Log in with a token read from a file (--token-file)."""
    if token == "fail":
        raise ValueError(f"bad token {token}")
    out = {"user": user, "length": len(token)}
    if echo:
        out["echo"] = f"token is {token}"
    return out


@app.command(annotations=ReadOnly | ClosedWorld)
def env() -> dict:
    """The environment variables this app reads."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("SAFE_")}


if __name__ == "__main__":
    app()
