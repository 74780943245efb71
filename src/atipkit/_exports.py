"""Names a package re-exports, each imported from its module on first use (PEP 562), so
importing the package costs almost nothing: `atipkit`, `atipkit.app`, `atipkit.registry`."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's `__getattr__` and `__dir__`: `exports` maps a module to the names it
    gives; a name, once imported, is kept in the package, so it is looked up once."""
    where = {name: module for module, given in exports.items() for name in given}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return list(names)

    return __getattr__, __dir__
