"""`x-atip`: what an enhanced descriptor carries so that ATIP → ATDF → ATIP loses nothing.

ATDF has no word for a command path, flags, positional arguments, effects or a command
tree; its fields are views of the ATIP metadata, worded for a model. The enhanced schema
allows extra keys, so every exported descriptor keeps the exact ATIP objects it was made
from, self-contained (a descriptor copied out of the list still restores its command):

    "x-atip": {
      "tool":    {...the ATIP document without its commands and `_*` keys...},
      "path":    ["pr", "create"],
      "parents": [{...the "pr" group without its subcommands...}],
      "command": {...the command without its subcommands...},
      "inputs":  {"title": {"kind": "option", "name": "title"}, ...}
    }

`inputs` says which argument, option or global option each ATDF input stands for (the
bridge's property keys). Importing, a descriptor with `x-atip` is restored from it alone.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from atipkit.bridge.flatten import ParamRef
from atipkit.interop.atdf.schemas import AtdfError, check_with, compile_schema
from atipkit.model import CommandPath
from atipkit.problems import PathPart, error, json_path

KEY = "x-atip"

SHAPE: dict[str, Any] = {
    "type": "object",
    "required": ["tool", "path", "parents", "command", "inputs"],
    "properties": {
        "tool": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}},
        },
        "path": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "parents": {"type": "array", "items": {"type": "object"}},
        "command": {"type": "object"},
        "inputs": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["kind", "name"],
                "properties": {
                    "kind": {"enum": ["argument", "option", "global"]},
                    "name": {"type": "string", "minLength": 1},
                },
            },
        },
    },
}


@functools.cache
def _shape() -> Any:
    return compile_schema(SHAPE)


def _without_commands(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k != "commands"}


def encode(document: dict[str, Any], path: CommandPath, params: dict[str, ParamRef]) -> dict:
    """The extension of the descriptor for command `path` of `document` (the tool as
    `atipkit.model.to_dict` gives it). The document's own `_*` keys (a cache's stamps)
    are internal and stay behind (SPEC-NOTES 8)."""
    parents = []
    node = document.get("commands", {})
    for word in path[:-1]:
        parents.append(_without_commands(node[word]))
        node = node[word].get("commands", {})
    command = node[path[-1] if path else ""]
    header = {k: v for k, v in document.items() if k != "commands" and not k.startswith("_")}
    return {
        "tool": header,
        "path": list(path),
        "parents": parents,
        "command": _without_commands(command),
        "inputs": {key: {"kind": ref.kind, "name": ref.name} for key, ref in params.items()},
    }


class Restored:
    """ATIP documents being put back together from the `x-atip` of descriptors."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self.header: dict[str, Any] | None = None
        self.commands: dict[str, Any] = {}
        self.first: tuple[PathPart, ...] = ()
        """Where the descriptor the tool's header came from is."""
        self._seen: dict[CommandPath, tuple[PathPart, ...]] = {}

    def add(self, extension: Any, where: tuple[PathPart, ...]) -> CommandPath:
        """Put one descriptor's command in its place; its path."""
        here = (*where, KEY)
        problems = check_with(_shape(), extension, here)
        if problems:
            raise AtdfError(problems, self.source)
        path: CommandPath = tuple(extension["path"])
        parents, command = extension["parents"], extension["command"]
        if len(parents) != max(len(path) - 1, 0):
            self._fail(
                f"{len(parents)} parents for a command {len(path)} deep; expected "
                f"{max(len(path) - 1, 0)}",
                (*here, "parents"),
            )
        for at, obj in [((*here, "command"), command)] + [
            ((*here, "parents", i), p) for i, p in enumerate(parents)
        ]:
            if "commands" in obj:
                self._fail("unexpected 'commands': each command is its own descriptor", at)
        name = extension["tool"]["name"]
        if self.header is None:
            self.header, self.first = dict(extension["tool"]), where
        elif name != self.header["name"]:
            self._fail(
                f"a command of tool {name!r}, but {json_path(self.first)} is of "
                f"{self.header['name']!r}; import one tool at a time",
                (*here, "tool", "name"),
            )
        if path in self._seen:
            self._fail(
                f"command {' '.join(path) or '(root)'!r} is described twice; first at "
                f"{json_path(self._seen[path])}",
                (*here, "path"),
            )
        self._seen[path] = where
        self._place(path, parents, command)
        return path

    def _place(self, path: CommandPath, parents: list[dict[str, Any]], command: dict) -> None:
        node = self.commands
        for depth, word in enumerate(path[:-1]):
            entry = node.setdefault(word, dict(parents[depth]))
            node = entry.setdefault("commands", {})
        key = path[-1] if path else ""
        below = node.get(key, {}).get("commands")  # placed earlier as a parent
        node[key] = {**command, "commands": below} if below else dict(command)

    def _fail(self, message: str, where: tuple[PathPart, ...]) -> None:
        raise AtdfError([error("atdf.x-atip", message, json_path(where))], self.source)
