"""The progress display of a sweep (`atip scan`): a `rich.progress` bar per pass.

A scan over a whole PATH runs for a minute or two; a bare counter redrawn for each of
2 000 tools said neither how fast it went, nor how long was left, nor what it waited on.
Each pass (probing, inferring) gets a bar with its count, rate and time left, and the
tool it waits on: the one running longest, which is what a stalled sweep is stuck on.
rich redraws ten times a second whatever the number of tools. This module (and rich with
it) is imported only when there is a terminal to draw on (`Context.progress_stream`): a
pipe, `--json` and `--quiet` get nothing at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from atipkit.infer.coverage import Step

_LABELS = {"probe": "probing", "infer": "inferring"}


class _Rate(ProgressColumn):
    """Tools a second (rich's own speed column counts bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:5.1f}/s")


class _Display:
    """The bars of one sweep, fed its `Step`s from any thread."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}
        self.running: dict[str, dict[str, float]] = {}
        self.lock = threading.Lock()

    def step(self, step: Step) -> None:
        with self.lock:
            task = self.tasks.get(step.phase)
            if task is None:
                task = self.progress.add_task(_LABELS[step.phase], total=step.total, tool="")
                self.tasks[step.phase] = task
            running = self.running.setdefault(step.phase, {})
            if step.finished:
                running.pop(step.name, None)
            else:
                running.setdefault(step.name, time.monotonic())
            waiting = min(running, key=running.__getitem__) if running else ""
            self.progress.update(task, completed=step.done, total=step.total, tool=waiting)


@contextmanager
def sweep_progress(stream: IO[str], *, color: bool) -> Iterator[Callable[[Step], None]]:
    """Bars on `stream` (a terminal) while the block runs, fed by the callback it
    yields; gone when it ends, for the summary to take their place."""
    console = Console(file=stream, force_terminal=True, no_color=not color, highlight=False)
    progress = Progress(
        TextColumn("{task.description:9}"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[tool]}", style="dim"),
        console=console,
        transient=True,
    )
    with progress:
        yield _Display(progress).step
