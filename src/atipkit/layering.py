"""Layering metadata from several sources (RFC 0.1 §3.4.2 and §3.6): pure functions.

Overrides are JSON merge patches (RFC 7386) on the document; patterns come in layers —
the tool's own, then system, local, user and project files — and a later layer replaces
an earlier pattern of the same name.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def layer_patterns(
    layers: Iterable[tuple[str, list[dict[str, Any]]]],
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Patterns from `(source, patterns)` layers, lowest precedence first; a pattern keeps
    its first position and takes the content of the last layer that names it. Returns the
    patterns and, for each, the source it came from."""
    merged: dict[str, dict[str, Any]] = {}
    origin: dict[str, str] = {}
    for source, patterns in layers:
        for pattern in patterns:
            name = pattern.get("name")
            if isinstance(name, str):
                merged[name] = pattern
                origin[name] = source
    return list(merged.values()), origin
