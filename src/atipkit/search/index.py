"""BM25F over command documents: the search behind `atip search`, budgeted compiles,
deferred tools and the MCP gateway's `search_tools`.

Each field of a document (`documents.FIELDS`) has its own weight and length
normalisation; a term's weighted, normalised frequencies over the fields add up to one
pseudo-frequency, saturated once (k1), times the term's Lucene IDF (decision 291), a
page indexed under several names counted once (decision 707). Every
(term, document) score is computed when the index is built, so a query only adds up
the postings of its few terms, kept as plain arrays: a query needs neither numpy nor
scipy (whose import alone costs more than any search), which keeps `atip search` quick
from a cold process. Building is cheap too (the expensive part is reading the metadata, which
`atipkit.search.machine` caches per binary), so the index is rebuilt whole whenever its
documents change.

A hit's `name` is the tool name a compile of the same tools gives the command (strategy
`discrete`): names are assigned by `bridge.names.assign_names` over the same words, so
a hit can be handed to a model, or looked up in a compile's table, as it is.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, overload

from atipkit.errors import AtipError
from atipkit.search import cachefile
from atipkit.search.hits import CommandEntry, Hit
from atipkit.search.terms import terms

if TYPE_CHECKING:
    from atipkit.model import Tool
    from atipkit.search.documents import CommandDoc

DEFAULT_LIMIT = 10
_FILE = "index.bin"
_KIND = "search-index"
_FORMAT = 6  # 6: IDF over distinct pages (decision 707); 5: sections read without msgspec
K1 = 1.5
FIELD_WEIGHTS = {
    "name": 3.0,
    "description": 2.0,
    "prose": 1.0,
    "parameters": 0.3,
    "examples": 1.0,
    "patterns": 2.0,
    "tool": 1.0,
}
"""How much a term found in each field counts (tuned on the dev split only)."""
FIELD_B = {"name": 0.5, "description": 0.75, "prose": 0.75, "parameters": 0.75}
"""Each field's length normalisation; 0.75 (Lucene's b) where not given."""


class DamagedIndex(AtipError, ValueError):
    """A query read a posting or an entry that names no command: the saved index was
    written by something else (damage is the checksum's, at load). The caller rebuilds
    it."""


def _encoded(term: str) -> bytes:
    return term.encode("utf-8", "surrogatepass")  # a query may hold undecodable argv


class _Postings:
    """The score matrix, column by term: the documents of column `c` are
    `indices[indptr[c]:indptr[c + 1]]`, their scores the same slice of `scores`.

    `terms` holds every term between newlines, in column order, and `starts` where each
    begins (its newline): a term is found by one scan at C speed and its column by
    bisection, where a vocabulary decoded into a dict cost a loaded index more than a
    query (decision 582). When loaded, the
    arrays are the file's bytes copied, whose blocks a query verifies as it reads them
    (`saved`)."""

    __slots__ = ("indices", "indptr", "saved", "scores", "starts", "terms")

    def __init__(
        self,
        terms: bytes,
        starts: Sequence[int],
        indptr: Sequence[int],
        indices: Sequence[int],
        scores: Sequence[float],
        saved: cachefile.CacheFile | None = None,
    ) -> None:
        self.terms, self.starts = terms, starts
        self.indptr, self.indices, self.scores = indptr, indices, scores
        self.saved = saved

    def column(self, term: str) -> int | None:
        found = self.terms.find(b"\n" + _encoded(term) + b"\n")
        if found < 0:
            return None
        column = bisect_left(self.starts, found)
        if column >= len(self.starts) or self.starts[column] != found:
            raise DamagedIndex(f"{self.saved and self.saved.path}: the terms are damaged")
        return column

    def postings(self, column: int) -> zip[tuple[int, float]]:
        """The (document, score) pairs of `column`. Raises DamagedIndex when a loaded
        file's bytes under them are damaged."""
        start, end = self.indptr[column], self.indptr[column + 1]
        if self.saved is not None:
            try:
                self.saved.verify("indices", 4 * start, 4 * end)
                self.saved.verify("scores", 4 * start, 4 * end)
            except ValueError as exc:
                raise DamagedIndex(str(exc)) from None
        return zip(self.indices[start:end], self.scores[start:end], strict=True)


class _StoredEntries(Sequence[CommandEntry]):
    """The entries of a loaded index, each decoded from its JSON when it is read: a
    query reads its hits' few, not the thousands a machine has."""

    def __init__(self, saved: cachefile.CacheFile) -> None:
        self._saved = saved
        self._blob = saved.section("entries", verify=False)
        self._offsets = saved.array("offsets", "q")
        self._path = saved.path

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, position: int) -> CommandEntry: ...
    @overload
    def __getitem__(self, position: slice) -> list[CommandEntry]: ...
    def __getitem__(self, position: int | slice) -> CommandEntry | list[CommandEntry]:
        if isinstance(position, slice):
            return [self[i] for i in range(len(self))[position]]
        import json

        if not -len(self) <= position < len(self):
            raise IndexError(position)
        position %= len(self)
        start, end = self._offsets[position], self._offsets[position + 1]
        try:
            self._saved.verify("entries", start, end)
            fields = json.loads(bytes(self._blob[start:end]))
            entry = CommandEntry(*fields)
            if not all(isinstance(field, str) for field in fields):
                raise TypeError("an entry's fields are strings")
        except (ValueError, TypeError, RecursionError) as exc:
            raise DamagedIndex(f"{self._path}: entry {position} is damaged ({exc})") from None
        return entry

    def __iter__(self) -> Iterator[CommandEntry]:
        return (self[i] for i in range(len(self)))


class CommandIndex:
    """Commands ranked by BM25 for a query. Build one with `from_tools` or
    `from_documents`; `save` and `load` keep it in a directory."""

    def __init__(
        self,
        entries: Sequence[CommandEntry],
        postings: _Postings | None,
        order: Sequence[int] | None = None,
        prose: Sequence[str] | None = None,
    ) -> None:
        self._entries = entries if isinstance(entries, _StoredEntries) else list(entries)
        self._postings = postings
        # each command's place among all by (name, position): how ties are broken
        self._order = order if order is not None else _order(self._entries)
        self._prose = list(prose) if prose is not None else None
        self._saved: cachefile.CacheFile | None = None
        self._directory: Path | None = None
        self._digest: str | None = None

    @classmethod
    def from_tools(cls, tools: Iterable[Tool]) -> CommandIndex:
        """The index of `tools`' commands, each tool named by its key in the batch, as a
        compile of the same tools names it (`bridge.names.distinct_tools`)."""
        from atipkit.bridge.names import distinct_tools
        from atipkit.search.documents import command_documents  # building only

        batch = distinct_tools(tools)
        return cls.from_documents([doc for tool in batch for doc in command_documents(tool)])

    @classmethod
    def from_documents(cls, documents: Sequence[CommandDoc]) -> CommandIndex:
        from atipkit.bridge.names import assign_names  # building only

        names = assign_names((doc.tool, *doc.path) for doc in documents)
        entries = [
            CommandEntry(
                doc.tool,
                doc.command,
                names[(doc.tool, *doc.path)],
                doc.description,
                doc.tool_description,
            )
            for doc in documents
        ]
        prose = [doc.prose for doc in documents]
        if not documents:
            return cls(entries, None, prose=prose)
        return cls(entries, _bm25f(documents), prose=prose)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def names(self) -> list[str]:
        """Every command's tool name, in index order."""
        return [entry.name for entry in self._entries]

    @property
    def directory(self) -> Path | None:
        """The directory the index was saved in or loaded from; None for one built in
        memory. The re-ranker keeps its command vectors there."""
        return self._directory

    def commands(self) -> list[CommandEntry]:
        """Every command, in index order."""
        return list(self._entries)

    def prose(self) -> list[str]:
        """Every command's page prose (`documents.CommandDoc.prose`), in index order: what
        the re-ranker embeds passage by passage (decision 546). A section of its own in a
        saved index, decoded only when asked, so a BM25 search never reads it; "" for each
        command where it is damaged."""
        if self._prose is None:
            import json

            self._prose = [""] * len(self._entries)
            if self._saved is not None:
                try:
                    prose = json.loads(bytes(self._saved.section("prose")))
                except (ValueError, RecursionError):
                    prose = []
                if (
                    isinstance(prose, list)
                    and len(prose) == len(self._entries)
                    and all(isinstance(text, str) for text in prose)
                ):
                    self._prose = prose
        return list(self._prose)

    def digest(self) -> str | None:
        """What names this index's saved file (`cachefile.CacheFile.fingerprint`: its
        blocks' CRCs, no byte hashed), or None for an index never saved: vectors made for
        it are read back as they are, without decoding an entry (decision 584)."""
        if self._digest is None and self._saved is not None:
            self._digest = self._saved.fingerprint()
        return self._digest

    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, *, rerank: bool | None = False
    ) -> list[Hit]:
        """The commands that fit `query`, best first, at most `limit`; ties go by name,
        so the order is stable.

        `rerank=False`, the default, ranks by BM25 alone: a command must share a term
        with the query (a query of stop words only, or of words no command has, finds
        nothing), and the answer is the same on every install (decisions 197, 368).
        `rerank=True` fuses that ranking with a sentence encoder's
        (`atipkit.search.rerank`; the `rerank` extra, else `embed.ModelMissing`, an
        ImportError): a hit need not share a word with the query, and its score is the
        fused one. `rerank=None` is fused when the extra is installed
        (`rerank.unavailable()` is None) and BM25 alone otherwise: `atip search`'s
        `--ranking auto`, the one caller that chooses it.

        Raises `DamagedIndex` when a posting or an entry it reads names no command (a
        loaded index written by something else)."""
        if rerank is None:
            from atipkit.search import rerank as fusion

            rerank = fusion.unavailable() is None
        if rerank:
            from atipkit.search import rerank as fusion

            return fusion.search(self, query, limit)
        return [self.hit(doc, score) for doc, score in self.ranked(query, limit)]

    def ranked(self, query: str, limit: int = DEFAULT_LIMIT) -> list[tuple[int, float]]:
        """BM25's best `limit` commands for `query` as (position in index order, score),
        best first, ties by name: `search(rerank=False)` before its hits are made, which
        the re-ranker fuses without decoding an entry it does not return."""
        postings = self._postings
        if limit < 1 or postings is None:
            return []
        totals: dict[int, float] = {}
        for term in terms(query):
            column = postings.column(term)
            if column is None:
                continue
            for doc, score in postings.postings(column):
                totals[doc] = totals.get(doc, 0.0) + score
        count = len(self._entries)
        if any(not 0 <= doc < count for doc in totals):
            raise DamagedIndex(f"{self._directory}: a posting names no command")
        order = self._order
        best = heapq.nsmallest(
            limit, ((-score, order[doc], doc) for doc, score in totals.items() if score > 0)
        )
        return [(doc, -negative) for negative, _place, doc in best]

    def place(self, position: int) -> int:
        """The command at `position`'s place among all sorted by name: how ties are
        broken, without decoding an entry."""
        return self._order[position]

    def hit(self, position: int, score: float) -> Hit:
        """The command at `position` (in index order) as a hit scoring `score`."""
        entry = self._entries[position]
        return Hit(entry.tool, entry.command, entry.name, round(score, 4), entry.description)

    def save(self, directory: Path) -> None:
        """The index as one file in `directory`, written atomically."""
        import json

        postings = self._postings or _Postings(
            b"\n", array("q"), array("q", [0]), array("i"), array("f")
        )
        blob = bytearray()
        offsets = array("q", [0])
        for entry in self._entries:
            fields = [entry.tool, entry.command, entry.name, entry.description]
            blob += json.dumps([*fields, entry.tool_description]).encode()
            offsets.append(len(blob))
        directory.mkdir(parents=True, exist_ok=True)
        self._digest = cachefile.write(
            directory / _FILE,
            _KIND,
            _FORMAT,
            {"commands": len(self._entries)},
            {  # what a load verifies first, in the fewest blocks
                "terms": postings.terms,
                "starts": bytes(array("q", postings.starts)),
                "indptr": bytes(array("q", postings.indptr)),
                "order": bytes(array("i", self._order)),
                "offsets": bytes(offsets),
                "indices": bytes(array("i", postings.indices)),
                "scores": bytes(array("f", postings.scores)),
                "entries": bytes(blob),
                "prose": json.dumps(self.prose()).encode(),  # read by the re-ranker alone
            },
        )
        self._directory = directory

    @classmethod
    def load(cls, directory: Path) -> CommandIndex:
        """An index `save` wrote. Raises `OSError` or `ValueError` when it is missing,
        damaged or of another format (a cache: the caller rebuilds it); damage in the
        postings and entries is found as a query reads them (`DamagedIndex`). Nothing is
        decoded but the file's header: the arrays are read in place and an entry is
        decoded when a query reads it."""
        path = directory / _FILE
        saved = cachefile.read(path, _KIND, _FORMAT)
        postings = _Postings(
            bytes(saved.section("terms")),
            saved.array("starts", "q"),
            saved.array("indptr", "q"),
            saved.array("indices", "i", verify=False),
            saved.array("scores", "f", verify=False),
            saved,
        )
        entries = _StoredEntries(saved)
        order = saved.array("order", "i")
        _check(postings, entries, order, path)
        index = cls(entries, postings if len(entries) else None, order)
        index._directory, index._saved = directory, saved
        return index


def _order(entries: Sequence[CommandEntry]) -> array[int]:
    """Each entry's place among all sorted by (name, position)."""
    ranked = sorted(range(len(entries)), key=lambda i: (entries[i].name, i))
    order = array("i", bytes(4 * len(ranked)))
    for place, position in enumerate(ranked):
        order[position] = place
    return order


def _bm25f(documents: Sequence[CommandDoc]) -> _Postings:
    """Every (term, document) score of BM25F over `documents`' fields: one pass over
    their terms, then one over the distinct (term, document) pairs."""
    import math
    from collections import Counter, defaultdict

    from atipkit.search.documents import FIELDS

    count = len(documents)
    weights = [FIELD_WEIGHTS[f] for f in FIELDS]
    slopes = [FIELD_B.get(f, 0.75) for f in FIELDS]
    totals = [0] * len(FIELDS)
    for doc in documents:
        for number, field in enumerate(doc.fields):
            totals[number] += len(field)
    averages = [total / count or 1.0 for total in totals]
    pages = _pages(documents)
    found: dict[str, tuple[list[int], list[float]]] = {}
    for position, doc in enumerate(documents):
        pseudo: defaultdict[str, float] = defaultdict(float)
        for number, field in enumerate(doc.fields):
            if not field or not weights[number]:
                continue
            b = slopes[number]
            scale = weights[number] / (1 - b + b * len(field) / averages[number])
            for term, frequency in Counter(field).items():
                pseudo[term] += frequency * scale
        for term, weight in pseudo.items():
            docs, values = found.setdefault(term, ([], []))
            docs.append(position)
            values.append(weight)
    vocabulary: list[bytes] = []
    starts, place = array("q"), 0
    indptr, indices, scores = array("q", [0]), array("i"), array("f")
    for term, (docs, values) in found.items():
        encoded = _encoded(term)
        if b"\n" in encoded:  # `split` keeps letters and digits only: never so
            continue
        # pages holding the term, over the count of documents, not of pages: counting
        # pages there too ranked worse on dev (decision 707)
        df = len({pages[doc] for doc in docs})
        idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
        vocabulary.append(encoded)
        starts.append(place)
        place += len(encoded) + 1
        indices.extend(docs)
        scores.extend(idf * v / (K1 + v) for v in values)
        indptr.append(len(indices))
    terms = b"\n" + b"".join(t + b"\n" for t in vocabulary)
    return _Postings(terms, starts, indptr, indices, scores)


def _pages(documents: Sequence[CommandDoc]) -> list[int]:
    """Each document's page: documents alike in every field but their name are one page
    (a multi-call binary's names, `gzip` and `gunzip`; `pip`, `pip3` and `pip3.11`), so
    a word of a page indexed under five names is no commoner than a word of one
    (decision 707). A document with nothing but its name is a page of its own."""
    from atipkit.search.documents import FIELDS

    named = FIELDS.index("name")
    seen: dict[tuple[tuple[str, ...], ...], int] = {}
    out = []
    for position, doc in enumerate(documents):
        body = tuple(tuple(field) for number, field in enumerate(doc.fields) if number != named)
        out.append(seen.setdefault(body, len(seen)) if any(body) else -1 - position)
    return out


def _check(postings: _Postings, entries: _StoredEntries, order: Sequence[int], path: Path) -> None:
    """The shape of a loaded index (a query reads a column's bounds unchecked). The
    values are covered by the checksum (damage) and checked as a query reads them (a
    file written by something else), so a load costs no pass over them."""
    indptr, offsets = postings.indptr, entries._offsets
    if (
        not indptr
        or len(postings.indices) != len(postings.scores)
        or indptr[0] != 0
        or indptr[-1] != len(postings.indices)
        or postings.terms.count(b"\n") != len(indptr)
        or len(postings.starts) != len(indptr) - 1
        or not postings.terms.startswith(b"\n")
        or not offsets
        or offsets[0] != 0
        or offsets[-1] != len(entries._blob)
        or len(order) != len(entries)
    ):
        raise ValueError(f"{path}: the index is inconsistent")
