"""Tool names that every provider accepts, unique within one compile (SPEC-NOTES 16, 21).

`<tool>_<path joined by "_">`; the root command is the tool's name alone. `-` is kept, any
other character outside `[A-Za-z0-9_-]` becomes `_`, a leading digit gets a `_` in front
(Gemini wants a letter or `_` first), and a name over 64 characters keeps a readable prefix
and ends in a short hash of the command path. Where two commands would get one name, the
one whose name needed the least rewriting keeps it and the others get the hash suffix, so
adding a command never renames an existing one whose name is its own.

Nothing maps a name back by splitting it: compiles return a table from name to command.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASH_CHARS = 6


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


def assign_names(candidates: Iterable[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Unique names for every tuple of words (tool name + command path)."""
    wanted: dict[str, list[tuple[str, ...]]] = {}
    for words in candidates:
        wanted.setdefault(safe_name(words), []).append(words)
    names: dict[tuple[str, ...], str] = {}
    taken = set(wanted)
    for name, group in wanted.items():
        # the least rewritten keeps the plain name: exact spelling first, then shallower
        ranked = sorted(group, key=lambda w: (safe_name(w) != raw_name(w), len(w), w))
        names[ranked[0]] = name
        for words in ranked[1:]:
            salt = 0
            unique = with_hash(name, words)
            while unique in taken:  # a hash suffix that is already someone's name
                salt += 1
                unique = with_hash(name, words, salt)
            taken.add(unique)
            names[words] = unique
    return names
