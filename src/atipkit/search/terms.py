"""The words the BM25 index matches on: what a query and a command's metadata share.

Text is split by `keyword.split`, as `keyword.words` splits it (`camelCase`,
`snake_case`, `kebab-case`), English stop words are dropped, and every word is reduced
to its Snowball stem (PyStemmer), so "compressing", "compressed" and "compression"
meet. Nothing else: no synonyms and no per-tool tables; what the metadata says is what
matches.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from atipkit.search.keyword import split

if TYPE_CHECKING:
    from collections.abc import Callable


@cache
def _stem() -> Callable[[str], str]:
    import Stemmer

    return cache(Stemmer.Stemmer("english").stemWord)


#: Lucene's English stop words (the list bm25s ships as `STOPWORDS_EN`), written out.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)


def terms(text: str) -> list[str]:
    """The index terms of `text`, in order, repeats kept (they are term frequency)."""
    stem = _stem()
    return [stem(w) for w in split(text) if w not in STOPWORDS]
