"""ATDF descriptors → one ATIP tool.

A document is one descriptor, a JSON array of them, or an object with a `tools` array.
Each descriptor is checked against the schema of its flavour (SPEC-NOTES 24) before
anything else, and the first one that fails stops the import with its problems, each
naming its JSON path. Then every descriptor becomes a command of one tool:

- with `x-atip` (an enhanced descriptor atipkit exported), the command is restored
  exactly: its path, group, arguments, options, effects, and the tool around it;
- without, it is a top-level command keyed by its `tool_id`/`id`, each input an option
  `--<name>`; its effects stay unknown (ATDF states none, and nothing is guessed), and
  what ATIP cannot say (`when_to_use`, `outputs`, `metadata`, `examples`, ...) is kept
  in the command's `x-atdf` extension, where exporting it again finds it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from atipkit import _jsontext
from atipkit.bridge.names import numbered
from atipkit.errors import AtipError
from atipkit.interop.atdf import extension
from atipkit.interop.atdf.datatypes import AtdfParameter
from atipkit.interop.atdf.export import FOREIGN
from atipkit.interop.atdf.schemas import AtdfError, check_descriptor
from atipkit.model import UNSET, Tool, is_tool_name, to_tool_name
from atipkit.problems import PathPart, error, json_path
from atipkit.protocol import PROTOCOL_VERSION

_FLAG_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_DESCRIPTION = 200
#: Descriptor fields with a place in ATIP; every other one is kept under `x-atdf`.
_MAPPED = frozenset({"tool_id", "id", "description", "how_to_use", extension.KEY})

Where = tuple[PathPart, ...]


class ToolNameError(AtipError, ValueError):
    """No usable name for the imported tool: none given and none in `x-atip`, or one
    that cannot name an executable (empty, whitespace, a slash)."""


def read_atdf(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES,
) -> Tool:
    """Import an ATDF file (`-` for stdin), at most `max_bytes` long. The tool is named
    `name`, else as its `x-atip` says, else after the file (`weather.atdf.json` →
    `weather`). `OSError` when the file cannot be read; a `DocumentError` (`AtdfError`,
    `MalformedJSON`, `DocumentTooLarge`) when it is not ATDF or too large or deep."""
    source = "<stdin>" if str(path) == "-" else os.fspath(path)
    data = _jsontext.read_bytes(path, max_bytes=max_bytes)
    stem = None if str(path) == "-" else _name_from_file(Path(path).name)
    return loads_atdf(data, name=name, default_name=stem, source=source)


def loads_atdf(
    data: bytes | str,
    *,
    name: str | None = None,
    default_name: str | None = None,
    source: str | None = None,
) -> Tool:
    """Import ATDF from JSON text; see `import_atdf`."""
    document = _jsontext.decode(data, source)
    return import_atdf(document, name=name, default_name=default_name, source=source)


def import_atdf(
    document: Any,
    *,
    name: str | None = None,
    default_name: str | None = None,
    source: str | None = None,
) -> Tool:
    """One ATIP tool from decoded ATDF. Its name: `name`, else the `x-atip` one, else
    `default_name`; `ToolNameError` when there is none or it is unusable. `AtdfError`
    (exit 65 in the CLI) names the first descriptor that is not valid ATDF."""
    if name is not None:
        _check_name(name)  # a usage error comes before any problem of the document
    _jsontext.check_depth(document, source)
    return _import(document, name, default_name, source)


def _import(document: Any, name: str | None, default: str | None, source: str | None) -> Tool:
    from atipkit.validation import validate

    entries = _descriptors(document, source)
    for where, descriptor in entries:
        problems = check_descriptor(descriptor, where)
        if problems:
            raise AtdfError(problems, source)
    restored = extension.Restored(source)
    plain: list[tuple[Where, dict[str, Any]]] = []
    for where, descriptor in entries:
        if extension.KEY in descriptor:
            restored.add(descriptor[extension.KEY], where)
        else:
            plain.append((where, descriptor))
    header = dict(restored.header or {})
    tool_name = name or header.get("name") or default
    if not tool_name:
        raise ToolNameError("the ATDF document does not say what the tool is called; name it")
    _check_name(tool_name)
    commands = restored.commands
    for where, descriptor in plain:
        key: str = descriptor["tool_id"] if "tool_id" in descriptor else descriptor["id"]  # checked
        if key in commands:
            raise AtdfError(
                [error("atdf.duplicate", f"{key!r} names two commands", json_path(where))],
                source,
            )
        commands[key] = _command(descriptor, where, source)
    if not header:
        header = {
            "atip": {"version": PROTOCOL_VERSION},
            "version": _version(entries),
            "description": _description(entries),
        }
    doc = {**header, "name": tool_name, "commands": commands}
    report = validate(doc)
    if not report.ok or report.tool is None:  # a hand-edited x-atip, or a bug
        first = report.errors[0]
        at = (*restored.first, extension.KEY) if restored.header else entries[0][0]
        raise AtdfError(
            [
                error(
                    "atdf.invalid-atip",
                    f"the ATIP document it gives is invalid at {first.location}: {first.message}",
                    json_path(at),
                )
            ],
            source,
        )
    return report.tool


def _check_name(name: str) -> None:
    if not is_tool_name(name):
        raise ToolNameError(f"{name!r} cannot name a tool: no whitespace, '/' or '\\'")


def _descriptors(document: Any, source: str | None) -> list[tuple[Where, Any]]:
    if isinstance(document, list):
        entries: list[tuple[Where, Any]] = [((i,), d) for i, d in enumerate(document)]
        where: Where = ()
    elif isinstance(document, dict) and "tools" in document and "how_to_use" not in document:
        tools = document["tools"]
        if not isinstance(tools, list):
            got = _jsontext.json_type(tools)
            raise AtdfError(
                [error("atdf.type", f"expected an array of descriptors, got {got}", "$.tools")],
                source,
            )
        entries = [(("tools", i), d) for i, d in enumerate(tools)]
        where = ("tools",)
    elif isinstance(document, dict):
        return [((), document)]
    else:
        got = _jsontext.json_type(document)
        raise AtdfError(
            [
                error(
                    "atdf.type",
                    "expected an ATDF descriptor, an array of them or an object with a "
                    f"'tools' array, got {got}",
                )
            ],
            source,
        )
    if not entries:
        raise AtdfError([error("atdf.empty", "no descriptors", json_path(where))], source)
    return entries


def _command(descriptor: dict[str, Any], where: Where, source: str | None) -> dict[str, Any]:
    how = descriptor["how_to_use"]
    options: list[dict[str, Any]] = []
    names: dict[str, int] = {}
    flags: set[str] = set()
    for index, item in enumerate(how["inputs"]):
        here = (*where, "how_to_use", "inputs", index, "name")
        if item["name"] in names:
            first = json_path((*where, "how_to_use", "inputs", names[item["name"]]))
            message = f"input {item['name']!r} is given twice; first at {first}"
            raise AtdfError([error("atdf.duplicate", message, json_path(here))], source)
        names[item["name"]] = index
        options.append(_option(item, index, flags))
    command: dict[str, Any] = {"description": descriptor["description"]}
    if options:
        command["options"] = options
    foreign = {k: v for k, v in descriptor.items() if k not in _MAPPED}
    foreign["outputs"] = how["outputs"]
    command[FOREIGN] = foreign
    return command


def _option(item: dict[str, Any], index: int, taken: set[str]) -> dict[str, Any]:
    """An input as an option `--<name>` (a name no flag can spell is made one that can;
    the option keeps the input's name, which is what a tool call uses)."""
    word = _FLAG_UNSAFE.sub("-", item["name"]).strip("-") or f"input-{index + 1}"
    flag = numbered(f"--{word}", taken, sep="-")
    param = AtdfParameter(item["type"], item.get("schema"))
    option: dict[str, Any] = {"name": item["name"], "flags": [flag], "type": param.type}
    if item.get("description"):
        option["description"] = item["description"]
    if item.get("required") is True:
        option["required"] = True
    if param.enum is not None:
        option["enum"] = param.enum
    if param.default is not UNSET:
        option["default"] = param.default
    if param.schema is not None:
        option["schema"] = param.schema
    if param.foreign:
        option[FOREIGN] = param.foreign
    return option


def _version(entries: list[tuple[Where, Any]]) -> str:
    """The `metadata.version` of the first descriptor that states one; else unknown."""
    for _, descriptor in entries:
        metadata = descriptor.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("version"), str):
            version: str = metadata["version"].strip()
            if version:
                return version
    return "unknown"


def _description(entries: list[tuple[Where, Any]]) -> str:
    if len(entries) == 1:
        text: str = entries[0][1]["description"]
        return text
    ids = [d.get("tool_id", d.get("id")) for _, d in entries]
    text = f"{len(ids)} tools described in ATDF: {', '.join(ids)}"
    return text if len(text) <= _MAX_DESCRIPTION else text[: _MAX_DESCRIPTION - 3] + "..."


def _name_from_file(filename: str) -> str | None:
    """`weather.atdf.json` → `weather`; characters no tool name may hold become `-`."""
    stem = filename.split(".", 1)[0]
    return to_tool_name(stem) or None
