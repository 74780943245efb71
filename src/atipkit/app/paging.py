"""Pages and budgets for large results (PRD §8.7, §19.3.3).

- Pagination (`@app.command(paginated=True)`, `--limit`, `--cursor`): the command
  returns all its items, as a list or, better, a generator; the framework takes one page
  of them, reading a generator no further than the page needs. `meta.pagination.next_cursor`
  continues where the page ended. A cursor is bound to the command and the arguments it
  came from: given to another query it is refused, not misread.
- Truncation (`--max-items`, `--max-bytes`, `@app.command(max_tokens=N)`): a list keeps
  its longest prefix within the budget, a string its longest prefix in whole characters.
  `meta.truncation` says what was cut, why, how much was returned and of how much, and
  how to get the rest. Everything is decided from the JSON encoding alone, so the same
  result and budget always cut in the same place.

Tokens are estimated as ceil(bytes / 4) of the compact JSON encoding, the usual rule of
thumb for English and JSON under BPE tokenizers; the estimate is deterministic and needs
no tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from atipkit.app.errors import InputError
from atipkit.app.output import encode
from atipkit.errors import ErrorCode

__all__ = ["Cursor", "estimate_tokens", "paginate", "truncate"]

BYTES_PER_TOKEN = 4


def estimate_tokens(n_bytes: int) -> int:
    return -(-n_bytes // BYTES_PER_TOKEN)


class Cursor:
    """An opaque position in one query's results: an offset and the query's fingerprint."""

    @staticmethod
    def fingerprint(tool: str, arguments: dict[str, Any]) -> str:
        import hashlib

        text = encode([tool, sorted((k, v) for k, v in arguments.items())])
        return hashlib.sha256(text).hexdigest()[:16]

    @staticmethod
    def make(offset: int, fingerprint: str) -> str:
        import base64

        raw = f"{offset}:{fingerprint}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def read(cursor: str, fingerprint: str) -> int:
        import base64

        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            offset_text, found = base64.urlsafe_b64decode(padded).decode().split(":", 1)
            offset = int(offset_text)
        except (ValueError, UnicodeDecodeError):
            raise InputError(
                f"not a cursor this command gave: {cursor!r}",
                code=ErrorCode.BAD_CURSOR,
                suggestion="Use meta.pagination.next_cursor from the previous page.",
            ) from None
        if found != fingerprint or offset < 0:
            raise InputError(
                "this cursor belongs to another query (other command or arguments)",
                code=ErrorCode.BAD_CURSOR,
                suggestion="Repeat the same arguments with the cursor, or drop --cursor.",
            )
        return offset


def paginate(
    result: Any, *, limit: int | None, cursor: str | None, fingerprint: str
) -> tuple[Any, dict[str, Any]]:
    """One page of `result` (a list or an iterable) and the `meta.pagination` object."""
    offset = Cursor.read(cursor, fingerprint) if cursor else 0
    if isinstance(result, list | tuple):
        total: int | None = len(result)
        end = len(result) if limit is None else offset + limit
        page = list(result[offset:end])
        more = end < len(result)
    else:
        import itertools

        iterator = iter(result)
        stop = None if limit is None else offset + limit + 1
        items = list(itertools.islice(iterator, offset, stop))
        more = limit is not None and len(items) > limit
        page = items[:limit] if limit is not None else items
        total = None if more else offset + len(page)
        _close(iterator)
    meta: dict[str, Any] = {"offset": offset, "limit": limit, "returned": len(page)}
    meta["total"] = total
    meta["next_cursor"] = Cursor.make(offset + len(page), fingerprint) if more else None
    return page, meta


def _close(iterator: Iterator[Any]) -> None:
    close = getattr(iterator, "close", None)
    if callable(close):
        close()


def truncate(
    result: Any,
    *,
    max_items: int | None,
    max_bytes: int | None,
    max_tokens: int | None,
) -> tuple[Any, dict[str, Any] | None]:
    """`result` within the budgets, and `meta.truncation` when anything was cut (else
    None). Lists and iterators keep a prefix of items (an iterator is read no further
    than the budget allows, so its total stays unknown: `null`); strings keep a prefix
    of characters; anything else is never cut."""
    budget, reason = _budget(max_bytes, max_tokens)
    if isinstance(result, list | tuple | Iterator):
        if max_items is None and budget is None:
            return result, None
        return _cut_items(result, max_items, budget, reason)
    if isinstance(result, str) and budget is not None:
        return _cut_text(result, budget, reason)
    return result, None


def _budget(max_bytes: int | None, max_tokens: int | None) -> tuple[int | None, str | None]:
    """The tighter of the two byte budgets and its name."""
    options = []
    if max_bytes is not None:
        options.append((max_bytes, "max_bytes"))
    if max_tokens is not None:
        options.append((max_tokens * BYTES_PER_TOKEN, "max_tokens"))
    if not options:
        return None, None
    return min(options)


def _cut_items(
    items: Any, max_items: int | None, budget: int | None, reason: str | None
) -> tuple[list[Any], dict[str, Any] | None]:
    total = len(items) if isinstance(items, list | tuple) else None
    iterator = iter(items)
    kept: list[Any] = []
    size = 2  # the brackets
    why = None
    for item in iterator:
        if max_items is not None and len(kept) >= max_items:
            why = "max_items"
            break
        if budget is not None:
            grow = len(encode(item)) + (1 if kept else 0)
            if size + grow > budget:
                why = reason
                break
            size += grow
        kept.append(item)
    _close(iterator)
    if why is None:
        return kept, None
    return kept, {
        "truncated": True,
        "reason": why,
        "returned_items": len(kept),
        "total_items": total,
    }


def _cut_text(text: str, budget: int, reason: str | None) -> tuple[str, dict[str, Any] | None]:
    encoded = text.encode("utf-8")
    if len(encoded) + 2 <= budget:  # the quotes
        return text, None
    cut = encoded[: max(0, budget - 2)].decode("utf-8", errors="ignore")
    return cut, {
        "truncated": True,
        "reason": reason,
        "returned_bytes": len(cut.encode("utf-8")),
        "total_bytes": len(encoded),
    }
