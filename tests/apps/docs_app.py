"""An app for the documentation tests: every kind of parameter the framework takes, every
piece of governance a command can declare, a nested group, a hidden command and option,
and a description written to break roff and Markdown.

Run it as a program: `python -m tests.apps.docs_app docs man`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from atipkit.app import (
    App,
    Argument,
    ClosedWorld,
    Context,
    Destructive,
    Idempotent,
    OpenWorld,
    Option,
    ReadOnly,
    StdinOr,
)

app = App(
    "docs-demo",
    version="2.1.0",
    description="Track tasks in a local store. Every command answers in JSON with --json.",
    homepage="https://example.invalid/docs-demo",
)


class Priority(enum.Enum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


class Task(BaseModel):
    title: str = Field(description="What to do")
    priority: Priority = Priority.NORMAL
    tags: list[str] = []


@dataclass
class Window:
    start: int
    end: int = 0


HOSTILE = """Remove tasks for good.

.TH INJECTED 7
'quoted line at the start
A backslash \\fB here\\fR and C:\\temp\\new stay as typed.
# not a heading
---
Dashes: --force and -x are flags; read-only is a word. ~user ^caret `tick`
Unicode: café ✓ 😀."""


@app.command(
    "list",
    annotations=ReadOnly | ClosedWorld,
    examples=[
        {"args": ["--priority", "high", "--tag", "work"], "description": "Urgent work tasks"},
        "docs-demo list --json --max-items 5",
    ],
    error_codes={"E3101": "The store does not exist yet"},
)
def list_(
    store: Annotated[
        Path, Option("-s", help="The store directory", exists=True, file_okay=False)
    ] = Path("."),
    priority: Priority = Priority.NORMAL,
    status: Literal["open", "done", "any"] = "open",
    tag: Annotated[list[str], Option(help="Only tasks with this tag")] = [],  # noqa: B006
    limit: Annotated[int, Option("-n", help="How many", min=1, max=500)] = 50,
    ratio: Annotated[float, Option(help="Share to sample", min=0.0, max=1.0)] = 1.0,
    owner: Annotated[
        str | None,
        Option(help="Owner login", pattern=r"^[a-z][a-z0-9-]*$", min_length=2, max_length=39),
    ] = None,
    verbose_ids: Annotated[bool, Option(help="Show full ids")] = False,
    secret: Annotated[str, Option(hidden=True, help="INTERNAL-ONLY")] = "",
) -> list[dict]:
    """List tasks.

    Args:
        priority: Lowest priority to show.
        status: Which tasks.
    """
    return []


@app.command(
    name="purge",
    help=HOSTILE,
    annotations=Destructive | OpenWorld,
    human_in_the_loop=True,
    dry_run=True,
    auth=["tasks:write", "tasks:admin"],
    cost_hint="high",
    timeout=30,
    error_codes={"E3201": "Nothing matched", "E2201": "The store is locked by another user"},
    examples=[{"args": ["--older-than", "30"], "description": "Purge month-old tasks"}],
)
def purge(
    older_than: Annotated[int, Option(help="Age in days", min=1)],
    ctx: Context,
    only: Annotated[list[Priority], Option(help="Only these priorities")] = [],  # noqa: B006
) -> dict:
    if ctx.dry_run:
        ctx.plan("delete", f"tasks older than {older_than} days")
    return {"purged": 0}


@app.command(paginated=25, max_tokens=2000, annotations=Idempotent)
def search(
    query: Annotated[str, Argument(help="Words to look for")],
    window: Annotated[Window | None, Option(help="Creation time window")] = None,
) -> list[str]:
    """Search the tasks' text."""
    return []


@app.command(deprecated=True)
def count(
    text: Annotated[StdinOr[str], Argument(help="Text to count the tasks of")],
) -> dict:
    """Count tasks in a text (use search instead)."""
    return {"count": len(text.splitlines())}


@app.command(hidden=True)
def debug_dump() -> dict:
    """Dump the internal state (hidden)."""
    return {}


task = app.group("task", help="One task at a time")


@task.command()
def add(
    new: Annotated[Task, Argument(help="The task, as JSON")],
    files: Annotated[list[Path], Argument(help="Files to attach")] = [],  # noqa: B006
) -> Task:
    """Add a task."""
    return new


label = task.group("label", help="Labels of a task")


@label.command("set", annotations=Idempotent | ClosedWorld)
def set_(
    task_id: Annotated[int, Argument(help="The task's number")],
    names: Annotated[list[str], Argument(help="Label names")],
    replace: bool = True,
) -> dict:
    """Set a task's labels.

    Args:
        replace: Replace the labels it has instead of adding to them.
    """
    return {"task": task_id, "labels": names}


if __name__ == "__main__":
    app()
