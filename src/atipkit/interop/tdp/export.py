"""ATIP tools → a TDP manifest (`manifest`), through the bridge.

One TDP tool per invocable command, named by the bridge's name table with `-` spelled
`_` (`tdp_names`), its parameters the bridge's neutral JSON Schema, its description the
bridge's with the safety suffix, its metadata derived from the command's effective
effects (`metadata`). The exact ATIP facts (effects, command path, the name `atip
compile` gives) ride along under `x-atip`, and command groups become categories.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from atipkit.interop.tdp.effects import effects_json
from atipkit.interop.tdp.metadata import tool_metadata
from atipkit.interop.tdp.model import PROTOCOL_VERSION, Scenario
from atipkit.model import Tool, get_command

if TYPE_CHECKING:
    from atipkit.bridge.flatten import FlatTool, Target


def tdp_names(bridge_names: Iterable[str]) -> dict[str, str]:
    """Bridge name → TDP name: `-` spelled `_`, since TDP names are letters, digits and
    underscores. Where two names meet (`a-b` and `a_b`), the one that needed no rewriting
    keeps it and the other ends in a short hash of its bridge name (`bridge.names.unique`,
    the one de-duplication of every name atipkit gives), so adding a command never renames
    another. Stays within 64 characters, like the bridge's names."""
    from atipkit.bridge.names import unique

    wanted = {name: name.replace("-", "_") for name in bridge_names}
    return unique(wanted, rank=lambda n: (n != wanted[n], n), words=lambda n: (n,))


def manifest(
    tools: Tool | Iterable[Tool],
    *,
    scenario: Scenario | Mapping[str, str] | None = None,
    generated_at: dt.datetime | None = None,
    extensions: bool = True,
    include_hidden: bool = False,
) -> dict[str, Any]:
    """The ToolManifest of `tools` as snake_case JSON-ready data.

    `scenario` (name, version, description, base_url) defaults to the tool itself when
    there is one, else to atipkit. `extensions=False` leaves out the `x-atip` key of each
    tool, for consumers that refuse unknown fields. Two tools of one name are both listed,
    the second under its key (`bridge.names.tool_keys`), as a compile names it.
    """
    from atipkit.bridge.flatten import flatten
    from atipkit.bridge.names import assign_names, distinct_tools

    batch = distinct_tools([tools] if isinstance(tools, Tool) else tools)
    by_name = {tool.name: tool for tool in batch}
    flat = flatten(batch, include_hidden=include_hidden)
    names = tdp_names(f.name for f in flat)
    groups = {f.name: _group(f.binding.targets[""]) for f in flat}
    ordered = list(dict.fromkeys(groups.values()))
    bridge_ids = assign_names(ordered)
    group_ids = tdp_names(bridge_ids[words] for words in ordered)
    category_id = {words: group_ids[bridge_ids[words]] for words in ordered}
    entries = [
        _tool_entry(f, names[f.name], category_id[groups[f.name]], by_name, extensions)
        for f in flat
    ]
    categories = [_category(words, category_id[words], by_name) for words in ordered]
    moment = (generated_at or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return {
        "protocol_version": PROTOCOL_VERSION,
        "scenario": _scenario(scenario, batch),
        "tools": entries,
        "categories": categories,
        "generated_at": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def _group(target: Target) -> tuple[str, ...]:
    """The command group a command belongs to: `gh pr create` → `gh pr`; a top-level
    command (and the root) → the tool."""
    return (target.tool, *target.path[:-1]) if len(target.path) > 1 else (target.tool,)


def atip_scenario(described: str, name: str | None = None) -> dict[str, str]:
    """The scenario of tools atipkit serves together, where no one tool names it: `name`
    (default `atip`) at atipkit's version, its description saying which tools
    (`described`)."""
    from atipkit._version import __version__

    return {
        "name": name or "atip",
        "version": __version__,
        "description": f"Command-line tools described by ATIP ({described})",
    }


def _scenario(scenario: Scenario | Mapping[str, str] | None, tools: list[Tool]) -> dict[str, str]:
    if scenario is None:
        if len(tools) == 1:
            scenario = {
                "name": tools[0].name,
                "version": tools[0].version,
                "description": tools[0].description,
            }
        else:
            scenario = atip_scenario(", ".join(t.name for t in tools) or "none")
    if isinstance(scenario, Scenario):
        scenario = msgspec.structs.asdict(scenario)
    if not isinstance(scenario, Mapping) or not scenario.get("name"):
        raise ValueError("scenario needs a non-empty 'name'")
    out = {
        "name": str(scenario["name"]),
        "version": str(scenario.get("version") or "0.0.0"),
        "description": str(scenario.get("description") or ""),
    }
    if scenario.get("base_url"):
        out["base_url"] = str(scenario["base_url"])
    return out


def _category(words: tuple[str, ...], id_: str, tools: Mapping[str, Tool]) -> dict[str, str]:
    tool = tools[words[0]]
    group = get_command(tool, words[1:]) if len(words) > 1 else tool
    description = group.description
    return {"id": id_, "name": " ".join(words), "description": description}


def _tool_entry(
    flat: FlatTool, name: str, category: str, tools: Mapping[str, Tool], extensions: bool
) -> dict[str, Any]:
    target = flat.binding.targets[""]
    tool = tools[target.tool]
    command = get_command(tool, target.path)
    entry: dict[str, Any] = {
        "name": name,
        "description": flat.description,
        "category": category,
        "parameters": _parameters(flat.input_schema),
        "metadata": tool_metadata(flat, tool, command, target),
    }
    if extensions:
        entry["x-atip"] = {
            "name": flat.name,
            "tool": tool.name,
            "version": tool.version,
            "command": list(target.path),
            "parameters": {k: {"kind": r.kind, "name": r.name} for k, r in target.params.items()},
            "effects": effects_json(flat.effects),
        }
    return entry


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The bridge's neutral schema, with TDP's one restriction: `enum` lists strings
    (`ParameterSchema.enum` is `string[]`, and a proto consumer cannot read numbers
    there). Other allowed values are said in the description, as for Gemini."""
    out = dict(schema)
    enum = out.get("enum")
    if isinstance(enum, list) and not all(isinstance(v, str) for v in enum):
        del out["enum"]
        allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in enum)
        out["description"] = f"{out.get('description', '')} (one of {allowed})".strip()
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _parameters(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _parameters(out["items"])
    return out
