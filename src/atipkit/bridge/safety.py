"""Safety information that must survive translation (RFC 0.6 §8.2 Rule 1, SPEC-NOTES 17-18).

No provider has a field for side effects, so they travel in the description, as a suffix
that is never cut: `"{description} [⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE]"`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from atipkit.model import UNSET, Cost, Effects, FilesystemEffects, Interactive

DESTRUCTIVE = "⚠️ DESTRUCTIVE"
NOT_REVERSIBLE = "⚠️ NOT REVERSIBLE"
NOT_IDEMPOTENT = "⚠️ NOT IDEMPOTENT"
BILLABLE = "💰 BILLABLE"
READ_ONLY = "🔒 READ-ONLY"
ELLIPSIS = "..."


def flags(effects: Effects) -> list[str]:
    """The safety flags of effective effects, in the order of SPEC-NOTES 17."""
    out = []
    if effects.destructive is True:
        out.append(DESTRUCTIVE)
    if effects.reversible is False:
        out.append(NOT_REVERSIBLE)
    if effects.idempotent is False:
        out.append(NOT_IDEMPOTENT)
    if effects.cost and effects.cost.billable is True:
        out.append(BILLABLE)
    if is_read_only(effects):
        out.append(READ_ONLY)
    return out


def is_read_only(effects: Effects) -> bool:
    """Read-only as the RFC means it: no network and no file writes, both stated."""
    written = effects.filesystem.write if effects.filesystem else UNSET
    return effects.network is False and written is False


def suffix(effects: Effects) -> str:
    marks = flags(effects)
    return f"[{' | '.join(marks)}]" if marks else ""


def utf16_len(text: str) -> int:
    """Length as OpenAI counts it: UTF-16 code units (an emoji outside the BMP is 2)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def fit(description: str, tail: str, limit: int | None, sep: str = " ") -> tuple[str, bool]:
    """`description` + `tail` within `limit` UTF-16 units, cutting the description (never
    the tail) and ending the cut with `...`. Returns the text and whether it was cut."""
    joined = f"{description}{sep}{tail}".strip() if tail else description
    if limit is None or utf16_len(joined) <= limit:
        return joined, False
    room = limit - utf16_len(ELLIPSIS) - (utf16_len(tail) + 1 if tail else 0)
    kept, used = [], 0
    for ch in description:
        width = 2 if ord(ch) > 0xFFFF else 1
        if used + width > room:
            break
        kept.append(ch)
        used += width
    cut = "".join(kept).rstrip() + ELLIPSIS
    return (f"{cut}{sep}{tail}" if tail else cut), True


def combine(all_effects: Sequence[Effects]) -> Effects:
    """The worst case of several commands' effects, for a tool that runs any of them
    (strategy B): a risk that one has, the combination has; a guarantee holds only if
    every one gives it."""

    def any_true(values: Iterable[Any]) -> Any:
        values = list(values)
        if True in values:
            return True
        return False if values and all(v is False for v in values) else UNSET

    def all_true(values: Iterable[Any]) -> Any:
        values = list(values)
        if False in values:
            return False
        return True if values and all(v is True for v in values) else UNSET

    def sub(field: str, name: str) -> list[Any]:
        return [
            getattr(getattr(e, field), name) if getattr(e, field) else UNSET for e in all_effects
        ]

    return Effects(
        filesystem=FilesystemEffects(
            read=any_true(sub("filesystem", "read")),
            write=any_true(sub("filesystem", "write")),
            delete=any_true(sub("filesystem", "delete")),
        ),
        network=any_true(e.network for e in all_effects),
        subprocess=any_true(e.subprocess for e in all_effects),
        idempotent=all_true(e.idempotent for e in all_effects),
        reversible=all_true(e.reversible for e in all_effects),
        destructive=any_true(e.destructive for e in all_effects),
        cost=Cost(billable=any_true(sub("cost", "billable"))),
        interactive=Interactive(
            prompts=any_true(sub("interactive", "prompts")),
            tty=any_true(sub("interactive", "tty")),
        ),
    )
