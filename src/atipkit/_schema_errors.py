"""What a JSON Schema validator (jsonschema-rs) found wrong with a value, said the one way
atipkit says it to callers and models: errors in document order, each at a place written
`arguments.name[0].key`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def schema_errors(validator: Any, value: Any) -> list[Any]:
    """The validator's errors for `value`, in the order of the places they are at (the
    first is the one to report)."""
    return sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.instance_path)))


def where(path: Iterable[str | int], root: str = "arguments") -> str:
    """A place in a value: `root`, then `.key` for keys and `[n]` for indexes."""
    return root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
