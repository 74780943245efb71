"""TDP tool names from the bridge's: TDP names are letters, digits and `_`, the bridge's
may hold `-`, and rewriting one must never take another's name.
"""

from __future__ import annotations

from collections.abc import Iterable


def tdp_names(bridge_names: Iterable[str]) -> dict[str, str]:
    """Bridge name → TDP name: `-` spelled `_`, since TDP names are letters, digits and
    underscores. Where two names meet (`a-b` and `a_b`), the one that needed no rewriting
    keeps it and the other ends in a short hash of its bridge name, so adding a command
    never renames another. Stays within 64 characters, like the bridge's names."""
    from atipkit.bridge.names import with_hash

    wanted: dict[str, list[str]] = {}
    for name in bridge_names:
        wanted.setdefault(name.replace("-", "_"), []).append(name)
    taken = set(wanted)
    out: dict[str, str] = {}
    for plain, group in wanted.items():
        ranked = sorted(group, key=lambda n: (n != plain, n))
        out[ranked[0]] = plain
        for name in ranked[1:]:
            salt = 0
            while (unique := with_hash(plain, (name,), salt)) in taken:
                salt += 1
            taken.add(unique)
            out[name] = unique
    return out
