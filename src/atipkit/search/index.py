"""BM25F over command documents: the search behind `atip search`, budgeted compiles,
deferred tools and the MCP gateway's `search_tools`.

Each field of a document (`documents.FIELDS`) has its own weight and length
normalisation; a term's weighted, normalised frequencies over the fields add up to one
pseudo-frequency, saturated once (k1), times the term's Lucene IDF (decision 291). Every
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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from atipkit.errors import AtipError
from atipkit.search.hits import CommandEntry, Hit
from atipkit.search.terms import terms

if TYPE_CHECKING:
    from atipkit.model import Tool
    from atipkit.search.documents import CommandDoc

DEFAULT_LIMIT = 10
_FILE = "index.msgpack"
_FORMAT = 4  # 4: BM25F over fields (decision 291)
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
    """A query read a posting that names no command: the saved index was written by
    something else (damage is the checksum's, at load). The caller rebuilds it."""


class _Postings(msgspec.Struct, frozen=True):
    """The score matrix, column by term: the documents of term `t` are
    `indices[indptr[t]:indptr[t + 1]]`, their scores the same slice of `scores`."""

    vocabulary: dict[str, int]
    indptr: array[int]
    indices: array[int]
    scores: array[float]


class _Saved(msgspec.Struct, frozen=True):
    format: int
    entries: list[CommandEntry]
    vocabulary: dict[str, int]
    indptr: bytes
    indices: bytes
    scores: bytes
    checksum: int  # CRC-32 of indptr, indices and scores: damage that still decodes


def _checksum(indptr: bytes, indices: bytes, scores: bytes) -> int:
    import zlib

    return zlib.crc32(scores, zlib.crc32(indices, zlib.crc32(indptr)))


class CommandIndex:
    """Commands ranked by BM25 for a query. Build one with `from_tools` or
    `from_documents`; `save` and `load` keep it in a directory."""

    def __init__(self, entries: Sequence[CommandEntry], postings: _Postings | None) -> None:
        self._entries = list(entries)
        self._postings = postings
        self._directory: Path | None = None

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
        if not documents:
            return cls(entries, None)
        return cls(entries, _bm25f(documents))

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

        Raises `DamagedIndex` when a posting it reads names no command (a loaded index
        written by something else)."""
        if rerank is None:
            from atipkit.search import rerank as fusion

            rerank = fusion.unavailable() is None
        if rerank:
            from atipkit.search import rerank as fusion

            return fusion.search(self, query, limit)
        postings = self._postings
        if limit < 1 or postings is None:
            return []
        totals: dict[int, float] = {}
        for term in terms(query):
            column = postings.vocabulary.get(term)
            if column is None:
                continue
            start, end = postings.indptr[column], postings.indptr[column + 1]
            for doc, score in zip(
                postings.indices[start:end], postings.scores[start:end], strict=True
            ):
                totals[doc] = totals.get(doc, 0.0) + score
        if any(not 0 <= doc < len(self._entries) for doc in totals):
            raise DamagedIndex(f"{self._directory}: a posting names no command")
        best = heapq.nsmallest(
            limit,
            ((-score, self._entries[doc].name, doc) for doc, score in totals.items() if score > 0),
        )
        return [self.hit(doc, -negative) for negative, _name, doc in best]

    def hit(self, position: int, score: float) -> Hit:
        """The command at `position` (in index order) as a hit scoring `score`."""
        entry = self._entries[position]
        return Hit(entry.tool, entry.command, entry.name, round(score, 4), entry.description)

    def save(self, directory: Path) -> None:
        """The index as one file in `directory`, written atomically."""
        from atipkit._atomic import write_atomic

        postings = self._postings or _Postings({}, array("q", [0]), array("i"), array("f"))
        indptr, indices = postings.indptr.tobytes(), postings.indices.tobytes()
        scores = postings.scores.tobytes()
        saved = _Saved(
            format=_FORMAT,
            entries=self._entries,
            vocabulary=postings.vocabulary,
            indptr=indptr,
            indices=indices,
            scores=scores,
            checksum=_checksum(indptr, indices, scores),
        )
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(directory / _FILE, msgspec.msgpack.encode(saved))
        self._directory = directory

    @classmethod
    def load(cls, directory: Path) -> CommandIndex:
        """An index `save` wrote. Raises `OSError` or `ValueError` when it is missing,
        damaged or of another format (a cache: the caller rebuilds it)."""
        path = directory / _FILE
        try:
            saved = msgspec.msgpack.decode(path.read_bytes(), type=_Saved)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise ValueError(f"{path}: {exc}") from None
        if saved.format != _FORMAT:
            raise ValueError(f"{path}: format {saved.format}, expected {_FORMAT}")
        if _checksum(saved.indptr, saved.indices, saved.scores) != saved.checksum:
            raise ValueError(f"{path}: the postings are damaged (checksum)")
        postings = _Postings(
            saved.vocabulary,
            array("q", saved.indptr),
            array("i", saved.indices),
            array("f", saved.scores),
        )
        _check(postings, len(saved.entries), path)
        index = cls(saved.entries, postings if saved.entries else None)
        index._directory = directory
        return index


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
    vocabulary: dict[str, int] = {}
    indptr, indices, scores = array("q", [0]), array("i"), array("f")
    for term, (docs, values) in found.items():
        idf = math.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
        vocabulary[term] = len(vocabulary)
        indices.extend(docs)
        scores.extend(idf * v / (K1 + v) for v in values)
        indptr.append(len(indices))
    return _Postings(vocabulary, indptr, indices, scores)


def _check(postings: _Postings, documents: int, path: Path) -> None:
    """The shape of a loaded index and its vocabulary's columns (a query reads a column
    unchecked). The postings' values are covered by the checksum (damage) and checked
    as a query reads them (a file written by something else), so a load costs no pass
    over every posting."""
    indptr = postings.indptr
    columns = postings.vocabulary.values()
    if (
        not indptr
        or len(postings.indices) != len(postings.scores)
        or indptr[0] != 0
        or indptr[-1] != len(postings.indices)
        or (columns and not (min(columns) >= 0 and max(columns) < len(indptr) - 1))
    ):
        raise ValueError(f"{path}: the index is inconsistent")
