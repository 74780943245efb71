"""Finding the few right commands among thousands.

`CommandIndex` ranks commands by BM25F over what their metadata says: names,
descriptions, the prose inference recorded, parameters, examples and patterns.
`KeywordIndex` is the lighter ranking `atipkit.app`'s deferred MCP mode uses, which
needs no extra packages. `CommandIndex` is imported lazily: `import atipkit.search`
loads neither its module nor PyStemmer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atipkit.search.keyword import KeywordIndex, words

if TYPE_CHECKING:
    from atipkit.search.index import CommandIndex, Hit

__all__ = ["CommandIndex", "Hit", "KeywordIndex", "words"]


def __getattr__(name: str) -> Any:
    if name in ("CommandIndex", "Hit"):
        from atipkit.search import index

        return getattr(index, name)
    raise AttributeError(f"module 'atipkit.search' has no attribute {name!r}")
