"""What the index knows of each command: one document per command a compile would make
a tool of (`bridge.flatten.invocable`), built from the metadata alone.

A document is a bag of terms in which a field's weight is how often its terms are
repeated (BM25 has no fields of its own): the command's name and path and its
description count most, then the patterns that use the command, then the tool's own
description, its parameters (names, flags, descriptions, allowed values) and examples.
Global options are left out: the same on every command, they would only make documents
longer.
"""

from __future__ import annotations

import shlex

import msgspec

from atipkit.model import Command, CommandPath, Tool, iter_commands, walk_commands
from atipkit.search.terms import terms

NAME_WEIGHT = 3
DESCRIPTION_WEIGHT = 3
PATTERN_WEIGHT = 2
OTHER_WEIGHT = 1


class CommandDoc(msgspec.Struct, frozen=True, array_like=True):
    """One command as the index holds it."""

    tool: str
    path: CommandPath
    description: str
    terms: list[str]
    tool_description: str = ""  # what the re-ranker reads a command's description with

    @property
    def command(self) -> str:
        """The command path, space-joined ("" for the tool's root command)."""
        return " ".join(self.path)


def command_documents(tool: Tool) -> list[CommandDoc]:
    """The documents of every invocable, visible command of `tool`, in document order."""
    from atipkit.bridge.flatten import invocable  # building only: a search needs no bridge

    patterns = _pattern_text(tool)
    tool_terms = terms(tool.description)
    out = []
    for path, command, hidden in walk_commands(tool, False, _hidden):
        if hidden or not invocable(command):
            continue
        bag = terms(" ".join((tool.name, *path))) * NAME_WEIGHT
        bag += terms(command.description) * DESCRIPTION_WEIGHT
        bag += terms(" ".join(patterns.get(path, ()))) * PATTERN_WEIGHT
        bag += tool_terms * OTHER_WEIGHT
        bag += terms(_parameter_text(command)) * OTHER_WEIGHT
        bag += terms(" ".join(command.examples)) * OTHER_WEIGHT
        out.append(CommandDoc(tool.name, path, command.description, bag, tool.description))
    return out


def _hidden(parent: bool, _key: str, command: Command) -> bool:
    return parent or command.hidden


def _parameter_text(command: Command) -> str:
    parts: list[str] = []
    for spec in (*command.arguments, *command.options):
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
