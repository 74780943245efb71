"""The plain baseline of issue 21: each tool's whole rendered man page, and nothing else,
as one document, ranked by standard BM25 (k1 1.2, b 0.75, Lucene's IDF) over the terms
atipkit's own index uses (`atipkit.search.terms`: the same split, stop words and
Snowball stems). `bench/search.py --mode plain` ranks the gold queries by it next to
atipkit's BM25F, so the two are compared on the same queries and the same tools.

A tool's page is the one inference reads for it (`ManPages.beside(path).find(name,
file name)`), rendered by groff as inference renders it (`render_many`), bold and
italic overstrikes taken out. A tool without a page has no document and is never
found; several names of one page (gzip, gunzip, zcat) are a document each, as `man`
would show each of them the same page. The rendered pages are kept in `--home`
(`plain-pages.json`, by page file), so only the first run renders them.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

K1 = 1.2
B = 0.75
_OVERSTRIKE = re.compile(".\x08")


@dataclass(frozen=True)
class PlainHit:
    """A tool found by its page: its root command (the plain page knows no other)."""

    tool: str
    command: str
    name: str
    score: float


class PlainIndex:
    """Standard BM25 over one document a tool: `pages` maps a tool's name to its text,
    or to its terms already made."""

    def __init__(self, pages: Mapping[str, str | list[str]]) -> None:
        from atipkit.search.terms import terms

        self.names = sorted(pages)
        self.lengths: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for number, name in enumerate(self.names):
            page = pages[name]
            words = terms(page) if isinstance(page, str) else page
            self.lengths.append(len(words))
            for term, frequency in Counter(words).items():
                self.postings.setdefault(term, []).append((number, frequency))
        self.average = sum(self.lengths) / (len(self.lengths) or 1) or 1.0

    def __len__(self) -> int:
        return len(self.names)

    def search(self, query: str, limit: int, *, rerank: bool = False) -> list[PlainHit]:
        """The tools whose pages fit `query` best, at most `limit`, ties by name."""
        from atipkit.search.terms import terms

        if rerank:
            raise ValueError("the plain baseline is BM25 alone")
        count = len(self.names)
        totals: dict[int, float] = {}
        for term in terms(query):
            found = self.postings.get(term, [])
            idf = math.log(1 + (count - len(found) + 0.5) / (len(found) + 0.5))
            for doc, frequency in found:
                norm = K1 * (1 - B + B * self.lengths[doc] / self.average)
                totals[doc] = totals.get(doc, 0.0) + idf * frequency * (K1 + 1) / (frequency + norm)
        best = sorted(totals.items(), key=lambda item: (-item[1], self.names[item[0]]))
        return [PlainHit(self.names[d], "", self.names[d], s) for d, s in best[:limit]]


class PooledIndex:
    """atipkit's BM25F with a tool-level document pooled from the page (decision 743):
    a command that matches the query scores its own BM25F plus `weight` times its
    tool's plain BM25 score over one document a tool — the tool's page where it has
    one, else every term of its commands' documents. Everything else is the index's."""

    def __init__(
        self,
        index: Any,
        documents: Sequence[Any],
        pages: Mapping[str, str],
        weight: float = 0.15,
    ) -> None:
        from atipkit.search.terms import terms

        ours: dict[str, list[str]] = {}
        for doc in documents:  # the index's own (`CommandIndex.from_documents`)
            ours.setdefault(doc.tool, []).extend(doc.terms)
        pooled: dict[str, str | list[str]] = {
            tool: terms(pages[tool]) if tool in pages else words for tool, words in ours.items()
        }
        self.index, self.tools, self.weight = index, PlainIndex(pooled), weight

    def search(self, query: str, limit: int, *, rerank: bool = False) -> list[Any]:
        if rerank:
            raise ValueError("measured fused in decision 743 only")
        tools = {hit.tool: hit.score for hit in self.tools.search(query, len(self.tools))}
        entries = self.index.commands()
        scored = [
            (score + self.weight * tools.get(entries[doc].tool, 0.0), doc)
            for doc, score in self.index.ranked(query, len(self.index))
        ]
        scored.sort(key=lambda pair: (-pair[0], self.index.place(pair[1])))
        return [self.index.hit(doc, score) for score, doc in scored[:limit]]


def page_texts(tools: Sequence[Any], entries: dict[str, Any], home: Path) -> dict[str, str]:
    """Each tool's rendered page by its name (tools without one left out), the rendered
    pages cached in `home`."""
    from atipkit.infer import manpage

    pages = manpage.ManPages.load()
    found: dict[str, str] = {}
    for tool in tools:
        entry = entries.get(tool.name)
        path = getattr(entry, "path", None)
        where = pages.beside(path) if path else pages
        page = where.find(tool.name, *([os.path.basename(path)] if path else []))
        if page is not None:
            found[tool.name] = str(page)
    cache = home / "plain-pages.json"
    rendered: dict[str, str] = json.loads(cache.read_text()) if cache.exists() else {}
    missing = sorted(set(found.values()) - rendered.keys())
    sources = {p: manpage._page_source(Path(p)) for p in missing}  # as inference reads it
    readable = [p for p in missing if sources[p] is not None]
    texts = manpage.render_many([str(sources[p]) for p in readable])
    rendered.update({p: _OVERSTRIKE.sub("", t) for p, t in zip(readable, texts, strict=True)})
    rendered.update({p: "" for p in missing if sources[p] is None})
    if missing:
        cache.write_text(json.dumps(rendered))
    return {name: rendered[page] for name, page in found.items() if rendered[page]}
