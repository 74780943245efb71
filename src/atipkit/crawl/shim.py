"""Assembling a crawled shim, in layers, each over the one before:

1. what inference read from the binary's `--help` and man page (`infer.generate`), when
   the binary can run here;
2. the manifest's template, written by a person: it wins, field by field (RFC 7386 merge,
   `null` deletes an inferred field), with options and arguments merged by parameter —
   options with the same `name` or a shared flag, arguments with the same `name` or else
   at the same position (placeholders like `<jq filter>` rarely give the name a person
   would) — so a template that describes three options of curl keeps the two hundred
   others inference found;
3. the manifest's `description` and `homepage`, and what the crawler knows for certain:
   `binary` (hash, name, version, platform), `trust` (`community` when a person wrote a
   template, else `inferred`; never `verified`), `_generation` (how, when, from what).

Pure functions over JSON-ready data; the result is validated before it is written.
"""

from __future__ import annotations

import copy
from typing import Any

from atipkit.crawl.artifacts import Artifact
from atipkit.layering import merge_patch
from atipkit.problems import Problem
from atipkit.protocol import PROTOCOL_VERSION

_PARAMETERS = ("options", "globalOptions", "arguments")
_CRAWLER_OWNED = ("atip", "name", "version", "binary", "trust")
_PLACEHOLDER_HASH = "sha256:" + "0" * 64


def merge_template(inferred: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """`template` over `inferred` (see the module's docstring); neither is changed."""
    merged: dict[str, Any] = _merge(inferred, template, "")  # a dict over a dict
    return merged


def _merge(base: Any, patch: Any, key: str) -> Any:
    if key in _PARAMETERS and isinstance(patch, list) and isinstance(base, list):
        return _merge_parameters(base, patch, positional=key == "arguments")
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(base) if isinstance(base, dict) else {}
    for name, value in patch.items():
        if value is None:
            result.pop(name, None)
        else:
            result[name] = _merge(result.get(name), value, name)
    return result


def _merge_parameters(
    base: list[Any], patch: list[Any], *, positional: bool
) -> list[dict[str, Any]]:
    out = [copy.deepcopy(p) for p in base if isinstance(p, dict)]
    named = {item.get("name") for item in patch}
    for position, item in enumerate(patch):
        flags = set(item.get("flags") or ())
        same = [
            i
            for i, p in enumerate(out)
            if p.get("name") == item.get("name") or flags & set(p.get("flags") or ())
        ]
        if not same and positional and position < len(out):
            same = [position] if out[position].get("name") not in named else []
        if not same:
            out.append(copy.deepcopy(item))
            continue
        out[same[0]] = merge_patch(out[same[0]], item)
        for index in reversed(same[1:]):  # inferred duplicates of what the template names
            del out[index]
    return out


def template_problems(template: dict[str, Any], name: str) -> list[Problem]:
    """The errors of a template, located in it: a template must make a valid shim on its
    own, since it is the whole shim for a platform whose binary cannot run here."""
    from atipkit.validation import validate

    skeleton = {
        "atip": {"version": PROTOCOL_VERSION},
        "name": name,
        "version": "0",
        "description": name,
        "binary": {"hash": _PLACEHOLDER_HASH, "name": name},
        "trust": {"source": "community", "verified": False},
        "commands": {},
    }
    return validate({**skeleton, **template}).errors


def assemble(
    *,
    name: str,
    description: str | None,
    homepage: str | None,
    template: dict[str, Any] | None,
    inferred: dict[str, Any] | None,
    artifact: Artifact,
    hash_: str,
    timestamp: str,
) -> dict[str, Any]:
    """The shim for one binary, as JSON-ready data (validate it before writing)."""
    generation = (inferred or {}).get("_generation") or {}
    base = {
        k: v
        for k, v in (inferred or {}).items()
        if k not in _CRAWLER_OWNED and not k.startswith("_")
    }
    doc = merge_template(base, template) if template else base
    doc.setdefault("commands", {})
    doc["description"] = description or doc.get("description") or name
    if homepage:
        doc["homepage"] = homepage
    doc.update(
        atip={"version": PROTOCOL_VERSION},
        name=name,
        version=artifact.version,
        binary={
            "hash": hash_,
            "name": name,
            "version": artifact.version,
            "platform": artifact.platform,
        },
        trust={"source": "community" if template else "inferred", "verified": False},
    )
    methods = (["template"] if template else []) + (
        [generation.get("method", "help-parsing")] if inferred is not None else []
    )
    doc["_generation"] = {
        "method": "+".join(methods),
        "timestamp": timestamp,
        "source": artifact.origin,
        "confidence": _confidence(template, inferred, generation),
        **({"inputs": generation["sources"]} if generation.get("sources") else {}),
    }
    return doc


def _confidence(
    template: dict[str, Any] | None, inferred: dict[str, Any] | None, generation: dict[str, Any]
) -> str:
    """`high` for a template alone (a person wrote every word), `medium` for a template
    with inferred gaps, else what inference said of itself."""
    if template:
        return "high" if inferred is None else "medium"
    return str(generation.get("confidence", "low"))
