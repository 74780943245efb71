"""ATIP effects in and out of a manifest's JSON.

Writing puts a command's exact effects under a tool's `x-atip.effects`, and reading
takes them back from there; both go through the model's own serializer and checks, so
what rides along is ATIP as the document format spells it.
"""

from __future__ import annotations

from typing import Any

from atipkit import _jsontext
from atipkit.errors import DocumentError
from atipkit.interop.tdp.errors import ManifestError
from atipkit.model import AtipVersion, Effects, Tool, from_dict, to_dict
from atipkit.problems import PathPart, error, json_path
from atipkit.protocol import PROTOCOL_VERSION as ATIP_VERSION


def effects_json(effects: Effects) -> dict[str, Any]:
    """Effects as ATIP writes them (camelCase, extensions in place), by the model's own
    serializer."""
    carrier = Tool(
        atip=AtipVersion(version=ATIP_VERSION),
        name="x",
        version="0",
        description="",
        effects=effects,
    )
    out: dict[str, Any] = to_dict(carrier).get("effects", {})
    return out


def atip_effects(value: Any, where: list[PathPart], source: str | None = None) -> Effects:
    """ATIP effects from JSON (an `x-atip.effects`), checked by the model; errors name
    their path inside the manifest."""
    if not isinstance(value, dict):
        got = _jsontext.json_type(value)
        problem = error("tdp.invalid", f"expected an object, got {got}", json_path(where))
        raise ManifestError([problem], source)
    carrier = {
        "atip": {"version": ATIP_VERSION},
        "name": "x",
        "version": "0",
        "description": "",
        "effects": value,
    }
    try:
        tool = from_dict(carrier)
    except DocumentError as exc:
        problem = exc.problems[0]
        location = json_path(where) + problem.location.removeprefix("$.effects")
        raise ManifestError([error("tdp.invalid", problem.message, location)], source) from None
    return tool.effects or Effects()
