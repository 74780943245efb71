"""Names that every consumer accepts, unique within one batch (SPEC-NOTES 16, 21).

Function names: `<tool>_<path joined by "_">`; the root command is the tool's name alone.
`-` is kept, any other character outside `[A-Za-z0-9_-]` becomes `_`, a leading digit
gets a `_` in front (Gemini wants a letter or `_` first), and a name over 64 characters
keeps a readable prefix and ends in a short hash of the command path.

Every de-duplication of names is here. `unique`: where several things want one name, the
best ranked keeps it and each other gets a short hash of its own words as a suffix, so
adding a thing never renames one that had its name. It settles function names
(`assign_names`: the one whose name needed the least rewriting keeps it), TDP names
(`atipkit.interop.tdp.tdp_names`) and the names of the tools of one batch (`tool_keys`:
the first given keeps it). `numbered`: where names are handed out in a fixed order (a
command's parameters, flags, operation ids), the first keeps it and each later one is
numbered (`x_2`, `--x-2`). A tool's key is what its functions are named after and what
a call's `tool` says: two tools that claim one name stay two tools, neither shadowing
the other.

Nothing maps a name back by splitting it: compiles return a table from name to command.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from atipkit.model import Tool

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_CHARS = 6
K = TypeVar("K", bound=Hashable)


def _digest(words: tuple[str, ...]) -> str:
    return hashlib.sha256("\0".join(words).encode()).hexdigest()[:_HASH_CHARS]


def raw_name(words: tuple[str, ...]) -> str:
    """The name before any rewriting: the words joined by `_`."""
    return "_".join(w for w in words if w)


def safe_name(words: tuple[str, ...]) -> str:
    """`words` (tool name, then the command path) as a provider-safe name, not yet
    deduplicated."""
    name = _UNSAFE.sub("_", raw_name(words)) or "_"
    if not (name[0].isalpha() or name[0] == "_"):
        name = "_" + name
    if len(name) > MAX_NAME:
        name = with_hash(name, words)
    return name


def with_hash(name: str, words: tuple[str, ...], salt: int = 0) -> str:
    """`name` cut to leave room for `_` and a hash of the words (salted on a clash)."""
    prefix = name[: MAX_NAME - _HASH_CHARS - 1].rstrip("_-") or "_"
    return f"{prefix}_{_digest((*words, *([''] * salt)))}"


def unique(
    wanted: Mapping[K, str],
    *,
    rank: Callable[[K], Any],
    words: Callable[[K], tuple[str, ...]],
) -> dict[K, str]:
    """Key → a name no other key has. Each key wants a name (`wanted`); where several
    want one, the least by `rank` keeps it and each other gets `with_hash(name,
    words(key))`, salted until no key has it. A name nobody else wants is never changed."""
    groups: dict[str, list[K]] = {}
    for key, name in wanted.items():
        groups.setdefault(name, []).append(key)
    taken = set(groups)
    out: dict[K, str] = {}
    for name, group in groups.items():
        ranked = sorted(group, key=rank)
        out[ranked[0]] = name
        for key in ranked[1:]:
            salt = 0
            while (suffixed := with_hash(name, words(key), salt)) in taken:
                salt += 1
            taken.add(suffixed)
            out[key] = suffixed
    return out


def numbered(base: str, taken: set[str], *, sep: str = "_", limit: int | None = None) -> str:
    """`base`, or the first of `base<sep>2`, `base<sep>3`, ... that `taken` does not hold
    (`base` cut so that each stays within `limit` characters); added to `taken`."""
    name, n = base, 2
    while name in taken:
        suffix = f"{sep}{n}"
        name = (base if limit is None else base[: limit - len(suffix)]) + suffix
        n += 1
    taken.add(name)
    return name


def assign_names(candidates: Iterable[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Unique names for every tuple of words (tool name + command path); the same words
    given twice are one command and get one name. Where two would get one name, the one
    whose name needed the least rewriting keeps it: exact spelling first, then shallower."""
    wanted = {words: safe_name(words) for words in candidates}
    return unique(
        wanted,
        rank=lambda w: (wanted[w] != raw_name(w), len(w), w),
        words=lambda w: w,
    )


def tool_keys(tools: Sequence[Tool]) -> list[str]:
    """Each tool's key in one batch: its name, or, for a tool whose name an earlier tool
    of the batch has, the name with a short hash of its document (so a key stays the same
    whatever else is in the batch). Without duplicates, the keys are the names."""
    names = [tool.name for tool in tools]
    if len(set(names)) == len(names):
        return names
    keys = unique(
        dict(enumerate(names)),
        rank=lambda i: i,
        words=lambda i: (names[i], _document_digest(tools[i])),
    )
    return [keys[i] for i in range(len(tools))]


def _document_digest(tool: Tool) -> str:
    import msgspec

    return hashlib.sha256(msgspec.json.encode(tool)).hexdigest()


def distinct_tools(tools: Iterable[Tool]) -> list[Tool]:
    """`tools` with each named by its key (`tool_keys`): the same tools when their names
    are distinct, else renamed copies of the later claimants. Every consumer of a batch
    (flatten, the search index, the TDP manifest) takes it through this, so they agree on
    which tool a name means; the executor keeps the documents as they are, under the
    same keys, so its policy sees each tool's own name."""
    import msgspec

    batch = list(tools)
    return [
        tool if key == tool.name else msgspec.structs.replace(tool, name=key)
        for tool, key in zip(batch, tool_keys(batch), strict=True)
    ]


def name_clashes(tools: Sequence[Tool], sources: Sequence[str] | None = None) -> list[str]:
    """One line for each tool whose name an earlier tool of the batch has: both sources
    (`sources[i]` says where tool i came from; by default its position) and the key its
    functions are named after instead."""
    keys = tool_keys(tools)
    first: dict[str, int] = {}
    out = []
    for i, (tool, key) in enumerate(zip(tools, keys, strict=True)):
        if key == tool.name:
            first.setdefault(key, i)
            continue
        j = first.get(tool.name, i)
        where = sources if sources is not None else [f"tool #{n + 1}" for n in range(len(tools))]
        out.append(
            f"two tools are named {tool.name!r} ({where[j]} and {where[i]}): the first "
            f"keeps the name, the second is called {key!r} here"
        )
    return out
