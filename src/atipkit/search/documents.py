"""What the index knows of each command: one document per command a compile would make
a tool of (`bridge.flatten.invocable`), built from the metadata alone.

A document is a few fields, each a bag of terms, which the index weighs separately
(BM25F, `atipkit.search.index`): the command's name and path, its description, the
prose its page opens with (`x-atipkit.prose`, which `atip scan --infer` records:
decision 290; the tool's own for its root command), its parameters (names, flags,
descriptions, allowed values), its examples, the patterns that run it, and its tool's
description and prose. Global options are left out: the same on every command, they
would only make documents longer.
"""

from __future__ import annotations

import shlex
from typing import Any

import msgspec

from atipkit.model import (
    Argument,
    Command,
    CommandPath,
    Option,
    Tool,
    iter_commands,
    walk_commands,
)
from atipkit.search.terms import terms

FIELDS = ("name", "description", "prose", "parameters", "examples", "patterns", "tool")
"""A document's fields, in the order of `CommandDoc.fields`."""


class CommandDoc(msgspec.Struct, frozen=True, array_like=True):
    """One command as the index holds it: `fields` are the terms of each of `FIELDS`."""

    tool: str
    path: CommandPath
    description: str
    fields: list[list[str]]
    tool_description: str = ""  # what the re-ranker reads a command's description with
    prose: str = ""  # the opening of its page's DESCRIPTION, as recorded (decision 290)

    @property
    def command(self) -> str:
        """The command path, space-joined ("" for the tool's root command)."""
        return " ".join(self.path)

    @property
    def terms(self) -> list[str]:
        """Every term of every field."""
        return [term for field in self.fields for term in field]


def prose_of(node: Tool | Command) -> str:
    """The prose inference recorded for a tool or command (`x-atipkit.prose`), if any."""
    extension: Any = node.extensions.get("x-atipkit")
    prose = extension.get("prose") if isinstance(extension, dict) else None
    return prose if isinstance(prose, str) else ""


def command_documents(tool: Tool) -> list[CommandDoc]:
    """The documents of every invocable, visible command of `tool`, in document order."""
    from atipkit.bridge.flatten import invocable  # building only: a search needs no bridge

    patterns = _pattern_text(tool)
    tool_prose = prose_of(tool)
    tool_terms = terms(f"{tool.description} {tool_prose}")
    out = []
    for path, command, hidden in walk_commands(tool, False, _hidden):
        if hidden or not invocable(command):
            continue
        prose = prose_of(command) or ("" if path else tool_prose)
        fields = [
            terms(" ".join((tool.name, *path))),
            terms(command.description),
            terms(prose),
            terms(_parameter_text(command)),
            terms(" ".join(command.examples)),
            terms(" ".join(patterns.get(path, ()))),
            tool_terms if path else [],
        ]
        out.append(
            CommandDoc(tool.name, path, command.description, fields, tool.description, prose)
        )
    return out


def _hidden(parent: bool, _key: str, command: Command) -> bool:
    return parent or command.hidden


def _parameter_text(command: Command) -> str:
    parts: list[str] = []
    specs: list[Argument | Option] = [*command.arguments, *command.options]
    for spec in specs:
        parts += (spec.name, spec.description or "")
        parts += (flag.lstrip("-") for flag in getattr(spec, "flags", ()))
        parts += (str(value) for value in spec.enum or ())
    return " ".join(parts)


def _pattern_text(tool: Tool) -> dict[CommandPath, list[str]]:
    """The words of each pattern, under every command its steps run."""
    paths = {path for path, _ in iter_commands(tool)}
    out: dict[CommandPath, list[str]] = {}
    for pattern in tool.patterns:
        words = [pattern.name, pattern.description, *pattern.tags]
        for step in pattern.steps:
            path = _step_path(step.command, tool.name, paths)
            if path is not None:
                out.setdefault(path, []).extend((*words, step.description or ""))
    return out


def _step_path(line: str, name: str, paths: set[CommandPath]) -> CommandPath | None:
    """The longest command path a step's command line starts with, if it runs `name`."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    if not words or words[0] != name:
        return None
    for end in range(len(words), 0, -1):
        if tuple(words[1:end]) in paths:
            return tuple(words[1:end])
    return () if () in paths else None
