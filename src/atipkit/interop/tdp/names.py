"""TDP tool names from the bridge's: TDP names are letters, digits and `_`, the bridge's
may hold `-`, and rewriting one must never take another's name.
"""

from __future__ import annotations

from collections.abc import Iterable


def tdp_names(bridge_names: Iterable[str]) -> dict[str, str]:
    """Bridge name → TDP name: `-` spelled `_`, since TDP names are letters, digits and
    underscores. Where two names meet (`a-b` and `a_b`), the one that needed no rewriting
    keeps it and the other ends in a short hash of its bridge name (`bridge.names.unique`,
    the one de-duplication of every name atipkit gives), so adding a command never renames
    another. Stays within 64 characters, like the bridge's names."""
    from atipkit.bridge.names import unique

    wanted = {name: name.replace("-", "_") for name in bridge_names}
    return unique(wanted, rank=lambda n: (n != wanted[n], n), words=lambda n: (n,))
