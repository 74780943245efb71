"""An app for the HTTP API tests: one command for each answer the server can give.

Run as `python -m tests.apps.http_app ...` (the tests start `api serve` this way, and run
the same commands on the command line to compare). `HTTP_APP_COUNTER` names a file that
`tick` and `remove` count their real runs in: the side effect that shows whether a call
ran or was answered without running.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from atipkit.app import (
    App,
    Argument,
    ClosedWorld,
    Context,
    DataFormatError,
    Destructive,
    InputError,
    NotFoundError,
    Option,
    ReadOnly,
)

app = App(
    "httpdemo",
    version="0.3.0",
    description="A small app served over HTTP by the tests",
    max_input_bytes=4096,
)


def bump() -> int:
    """Count one real run in the counter file; the new count."""
    path = Path(os.environ["HTTP_APP_COUNTER"])
    count = int(path.read_text() or 0) + 1 if path.exists() else 1
    path.write_text(str(count))
    return count


@app.command(annotations=ReadOnly | ClosedWorld)
def greet(
    name: Annotated[str, Argument(help="Who to greet")],
    times: Annotated[int, Option(help="How many times", min=1, max=5)] = 1,
) -> dict:
    """Greet someone.

    A blank name is refused by the command itself, the same way on every surface.
    """
    if not name.strip():
        raise InputError(
            "name: must not be blank",
            code="E1002",
            suggestion="Give a name with at least one visible character.",
            details={"param": "name"},
        )
    return {"greeting": " ".join([f"hello {name}"] * times)}


@app.command()
def tick(label: str) -> dict:
    """Count one run in the counter file."""
    return {"label": label, "count": bump()}


@app.command(annotations=Destructive, dry_run=True)
def remove(name: str, ctx: Context) -> dict:
    """Remove an item (counted), or plan to with a dry run."""
    if name == "missing":
        raise NotFoundError(f"no item {name!r}", suggestion="List the items first.")
    if ctx.dry_run:
        ctx.plan("delete", name)
        return None  # type: ignore[return-value]
    return {"removed": name, "count": bump()}


@app.command(paginated=3, annotations=ReadOnly)
def numbers(n: int) -> Iterator[int]:
    """The numbers below n, three a page."""
    yield from range(n)


@app.command()
def parse(text: str) -> dict:
    """Read key=value text."""
    if "=" not in text:
        raise DataFormatError(f"not key=value: {text!r}", details={"text": text})
    key, value = text.split("=", 1)
    return {key: value}


@app.command(timeout=0.5)
def slow(seconds: float) -> dict:
    """Sleep, then answer (its timeout is half a second)."""
    time.sleep(seconds)
    return {"slept": seconds}


@app.command(human_in_the_loop=True)
def deploy(target: str) -> dict:
    """Deploy, once a human said yes."""
    return {"deployed": target}


@app.command()
def opaque() -> dict:
    """Return what JSON cannot hold (a bug of the command's)."""
    return {"value": object()}


@app.command(hidden=True)
def bail() -> dict:
    """Call sys.exit, which must not end a server."""
    raise SystemExit(3)


@app.command(hidden=True)
def internal() -> dict:
    """Not listed anywhere."""
    return {"hidden": True}


pr = app.group("pr", help="Pull requests")


@pr.command()
def create(title: str, draft: bool = False) -> dict:
    """Create a pull request."""
    return {"title": title, "draft": draft}


if __name__ == "__main__":
    app()
