"""A manifest → one ATIP document (`to_atip`).

The scenario becomes the tool and each TDP tool a command named as the tool. Metadata
becomes effects only where the meaning is the same, or, when the manifest came from
atipkit (`x-atip`), the exact effects it was written from; everything else TDP says
(approval, enabled, rate limit, tags, examples, categories, base URL, unknown fields)
is kept under `x-tdp`, never dropped. Both JSON shapes of one manifest give
byte-identical documents, since they parse to the same `ToolManifest`.
"""

from __future__ import annotations

from typing import Any

from atipkit.checks import KNOWN_COST_ESTIMATES
from atipkit.interop.tdp.effects import atip_effects, effects_json
from atipkit.interop.tdp.errors import ManifestError
from atipkit.interop.tdp.model import Category, Example, ToolDefinition, ToolManifest
from atipkit.interop.tdp.options import to_options
from atipkit.model import Tool, from_dict, is_tool_name
from atipkit.problems import error
from atipkit.protocol import PROTOCOL_VERSION as ATIP_VERSION


def to_atip(manifest: ToolManifest) -> Tool:
    """The ATIP document of one scenario: each TDP tool a command named as the tool, its
    parameters options (`--name`), its metadata effects where the meaning is the same
    (`idempotent`, `timeout_seconds` → `duration.timeout`, `cost_estimate` →
    `cost.estimate`) or, with `x-atip`, the exact effects it was generated from. The rest
    (approval, enabled, rate limit, tags, examples, categories, base URL) is under `x-tdp`.

    Raises `ManifestError` when the scenario's name cannot name an ATIP tool."""
    scenario = manifest.scenario
    if not is_tool_name(scenario.name):
        raise ManifestError(
            [
                error(
                    "tdp.invalid-name",
                    f"scenario name {scenario.name!r} cannot name an ATIP tool (no spaces, "
                    "slashes or control characters)",
                    "$.scenario.name",
                )
            ]
        )
    commands = {t.name: _command(t) for t in manifest.tools}
    x_tdp: dict[str, Any] = {"protocol_version": manifest.protocol_version}
    if manifest.generated_at:
        x_tdp["generated_at"] = manifest.generated_at
    given: dict[str, Any] = {"version": scenario.version, "base_url": scenario.base_url}
    given = {k: v for k, v in given.items() if v}
    if scenario.extra:
        given["extra"] = scenario.extra
    if given:
        x_tdp["scenario"] = given
    if manifest.categories:
        x_tdp["categories"] = [_category_json(c) for c in manifest.categories]
    extra = {**manifest.extensions, **manifest.extra}
    if extra:
        x_tdp["extra"] = extra
    document = {
        "atip": {"version": ATIP_VERSION},
        "name": scenario.name,
        "version": scenario.version or "0.0.0",
        "description": scenario.description
        or f"Tools of the {scenario.name} scenario (Tool Discovery Protocol)",
        "commands": commands,
        "x-tdp": x_tdp,
    }
    return from_dict(document)


def _category_json(category: Category) -> dict[str, Any]:
    out: dict[str, Any] = {"id": category.id}
    for key in ("name", "description", "icon"):
        if getattr(category, key):
            out[key] = getattr(category, key)
    if category.extra:
        out["extra"] = category.extra
    return out


def _command(tool: ToolDefinition) -> dict[str, Any]:
    from atipkit.bridge.safety import suffix

    meta = tool.metadata
    atip = tool.extensions.get("x-atip")
    stated = isinstance(atip, dict) and isinstance(atip.get("effects"), dict)
    description = tool.description
    if stated:
        effects = atip_effects(atip["effects"], ["x-atip", "effects"])  # type: ignore[index]  # `stated`: a dict
        tail = suffix(effects)
        if tail and description.endswith(tail):  # the bridge's suffix: compiling adds it again
            description = description[: -len(tail)].rstrip()
        effects_out = effects_json(effects)
    else:
        effects_out = {"idempotent": meta.idempotent}
        if meta.timeout_seconds:
            effects_out["duration"] = {"timeout": f"{meta.timeout_seconds}s"}
        if meta.cost_estimate in KNOWN_COST_ESTIMATES:
            effects_out["cost"] = {"estimate": meta.cost_estimate}
    x_meta: dict[str, Any] = {
        "enabled_by_default": meta.enabled_by_default,
        "requires_approval": meta.requires_approval,
        "long_running": meta.long_running,
    }
    if meta.timeout_seconds and stated:
        x_meta["timeout_seconds"] = meta.timeout_seconds
    if meta.cost_estimate and (stated or meta.cost_estimate not in KNOWN_COST_ESTIMATES):
        x_meta["cost_estimate"] = meta.cost_estimate
    if meta.rate_limit_per_minute:
        x_meta["rate_limit_per_minute"] = meta.rate_limit_per_minute
    if meta.tags:
        x_meta["tags"] = meta.tags
    if meta.examples:
        x_meta["examples"] = [_example_json(e) for e in meta.examples]
    if meta.extra:
        x_meta["extra"] = meta.extra
    x_tdp: dict[str, Any] = {"name": tool.name}
    if tool.category:
        x_tdp["category"] = tool.category
    x_tdp["metadata"] = x_meta
    options, leftover = to_options(tool.parameters)
    if leftover:
        x_tdp["parameters"] = leftover
    extra = {**tool.extensions, **tool.extra}
    if extra:
        x_tdp["extra"] = extra
    command: dict[str, Any] = {"description": description}
    if options:
        command["options"] = options
    command["effects"] = effects_out
    command["x-tdp"] = x_tdp
    return command


def _example_json(example: Example) -> dict[str, Any]:
    out: dict[str, Any] = {"description": example.description, "input": example.input}
    if example.extra:
        out["extra"] = example.extra
    return out
