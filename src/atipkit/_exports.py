"""Names a package re-exports, each imported from its module on first use (PEP 562), so
importing the package costs almost nothing: `atipkit`, `atipkit.app`, `atipkit.registry`.

A package lists its exports once, as the imports of its `if TYPE_CHECKING:` block, each in
the explicit re-export form (`from atipkit.model import Tool as Tool`). Type checkers and
IDEs read that block; `lazy_exports` reads the same lines from the package's source, at
the first name asked for (`__all__` too), not at import (decision 396). Anything else in
the block is refused, so an export cannot be half-declared.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, init_file: str, *eager: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's `__getattr__` and `__dir__`: `init_file` is its `__init__.py`, whose
    TYPE_CHECKING imports are the exports; `eager` names the ones it imports at once
    (`__version__`). `__all__` is all of them. A name, once imported, is kept in the
    package, so it is looked up once."""
    table: dict[str, str] = {}

    def exports() -> dict[str, str]:
        if not table:  # two threads may both read it: the same table, written twice
            with open(init_file, encoding="utf-8") as file:
                table.update(declared_exports(file.read(), init_file))
        return table

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = __dir__()
        elif name in exports():
            value = getattr(importlib.import_module(table[name]), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*exports(), *eager])

    return __getattr__, __dir__


def declared_exports(source: str, where: str = "<package>") -> dict[str, str]:
    """Each name the `if TYPE_CHECKING:` block of `source` re-exports → its module.

    The block holds only `from MODULE import NAME as NAME` statements (one name or a
    parenthesised list, comments allowed); a name given twice, an alias that renames, or
    any other statement raises `ImportError` naming the line's text."""
    lines = [line.split("#", 1)[0].rstrip() for line in source.splitlines()]
    try:
        start = lines.index("if TYPE_CHECKING:") + 1
    except ValueError:
        raise ImportError(f"{where}: no `if TYPE_CHECKING:` block lists the exports") from None
    block: list[str] = []
    for line in lines[start:]:
        if line and not line[0].isspace():
            break
        block.append(line)
    words = " ".join(block).replace("(", " ").replace(")", " ").replace(",", " ").split()
    found: dict[str, str] = {}
    module = ""
    at = 0
    while at < len(words):
        if words[at] == "from" and at + 2 < len(words) and words[at + 2] == "import":
            module, at = words[at + 1], at + 3
            continue
        name, alias = words[at], words[at + 1 : at + 3]
        if not module or alias != ["as", name] or not name.isidentifier():
            raise ImportError(
                f"{where}: the TYPE_CHECKING block re-exports as `from M import Name as Name`,"
                f" not {' '.join(words[at : at + 3])!r}"
            )
        if name in found:
            raise ImportError(f"{where}: {name!r} is exported twice")
        found[name] = module
        at += 3
    return found
