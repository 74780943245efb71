"""Keyword ranking over a modest set of documents (a few thousand commands).

Each document is a few named fields (a name, a description, its parameters); a word of
the query found in a document scores its rarity across documents (inverse document
frequency) times the weight of the best field it is found in. No stemming beyond a plain
plural `s`, no synonyms: what the metadata itself says is what matches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def split(text: str) -> list[str]:
    """The lower-case words of `text`, as they are: `camelCase`, `snake_case` and
    `kebab-case` split, anything but letters and digits a separator."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def words(text: str) -> list[str]:
    """`split(text)`, with a plain plural `s` dropped so `notes` meets `note`."""
    out = []
    for word in split(text):
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


class KeywordIndex:
    """`documents[i]` maps field names to text; `weights` gives each field's weight (a
    field without one weighs 1); `keys[i]` orders documents that score the same."""

    def __init__(
        self,
        documents: Sequence[Mapping[str, str]],
        weights: Mapping[str, float],
        keys: Sequence[str],
    ) -> None:
        if len(keys) != len(documents):
            raise ValueError("one key a document")
        self.keys = list(keys)
        self.docs: list[dict[str, float]] = []
        frequency: dict[str, int] = {}
        for fields in documents:
            found: dict[str, float] = {}
            for field, text in fields.items():
                weight = weights.get(field, 1.0)
                for word in words(text):
                    found[word] = max(found.get(word, 0.0), weight)
            self.docs.append(found)
            for word in found:
                frequency[word] = frequency.get(word, 0) + 1
        total = len(self.docs)
        self.idf = {word: math.log(1 + total / n) for word, n in frequency.items()}

    def search(self, query: str, limit: int) -> list[int]:
        """The indices of the documents sharing words with `query`, best first (at most
        `limit`); documents sharing none are not among them."""
        wanted = set(words(query))
        scored = []
        for index, doc in enumerate(self.docs):
            score = sum(doc[w] * self.idf[w] for w in wanted if w in doc)
            if score > 0:
                scored.append((-score, self.keys[index], index))
        scored.sort()
        return [index for _score, _key, index in scored[:limit]]
