"""Fused ranking: BM25 and a sentence encoder, each ranking the commands, and the two
rankings met by reciprocal-rank fusion (`CommandIndex.search(query, rerank=True)`, or
`rerank=None` where the `rerank` extra is installed: `atip search`'s default).

BM25 matches words, and a task told in a person's words often shares none with the
command that does it ("open a shell inside a running container" is `kubectl exec`,
"Execute a command in a container"). A sentence encoder (`atipkit.search.embed`,
all-MiniLM-L6-v2) puts both near each other. A query is answered in two steps:

1. Two rankings: BM25's best `DEPTH` commands, and the `DEPTH` commands whose vectors
   are nearest the query's (cosine, ties by name) — so a command that shares no word
   with the query can still be found.
2. Fusion: each command scores the sum over the rankings it is in of its weight there
   / (`K` + its rank there) (reciprocal-rank fusion, Cormack, Clarke and Buettcher 2009;
   their k is 60, the gold set's dev split prefers 10: decision 300; the encoder's
   ranking weighs 1.6 to BM25's 1 there: decision 468); best first, ties by name.
   Ranks, not scores, meet: BM25's scores have no scale a cosine can be added to (the
   CombSUM of min-max normalized scores this replaced let one ranking's spread
   decide), and RRF has nothing to fit but `K`.

What the encoder reads of a command is `"<tool> <command path>: <description>"`, and for
a subcommand the tool's own description after it (`"(kubectl: kubectl controls the
Kubernetes cluster manager)"`): "Sync a repository" says little until it is gh's. Where
the command's page has prose (`x-atipkit.prose`, decision 290), each of its first
`PASSAGES` passages (sentences packed up to `PASSAGE_WORDS` words, `"<tool> <command
path>: <passage>"`) is a vector too, and the command's similarity to a query is its
description's cosine plus `PASSAGE_SHARE` times its best passage's (or its
description's again, where it has none): one vector of a whole paragraph says less than
the sentence that matches, and the description alone leaves out what the page says the
command is for (decision 546). The vectors of an index that has a
directory (the machine index, in `<cache>/search/`) are kept beside it in `vectors.bin`
(`cachefile`'s sections, read without msgspec), keyed by the sha256 of each text: when
the index is updated, only new or changed texts are embedded; the rest are read back,
and a search of an index they were made for (`CommandIndex.digest`) reads them as they
are, without decoding an entry (decision 584). An index built in memory
embeds its commands once, at its first fused query, and so does one whose directory
cannot be written (`Semantic.unsaved` says why).
"""

from __future__ import annotations

import json
import re
import time
import weakref
from array import array
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from atipkit import paths
from atipkit.search import cachefile
from atipkit.search.embed import DIMENSIONS, GELU, MODEL, WEIGHTS_SHA256, Encoder, ModelMissing

if TYPE_CHECKING:
    from atipkit.search.hits import CommandEntry, Hit

DEPTH = 100  # commands taken from each ranking
K = 10  # reciprocal-rank fusion's constant: 60 in Cormack et al. 2009; 10 on dev
WEIGHTS = (1.0, 1.6)  # what a rank counts in BM25's ranking and in the encoder's (dev)
PASSAGE_WORDS = 25  # a passage: whole sentences up to this many words (dev)
PASSAGES = 2  # the passages embedded of a command's prose, from its start (dev, cost)
PASSAGE_SHARE = 0.7  # what a command's best passage adds to its description's cosine (dev)
#: word pieces an indexed text is read to, [CLS] and [SEP] counted: 4.7 % of the pieces
#: lie past it, whose cost is more than their worth on dev (decision 731)
PIECES = 48
_FILE = "vectors.bin"
_KIND = "search-vectors"
_FORMAT = 3  # 2: passages after the commands (decision 546); 3: sections (decision 584)
_OLD_FILE = "vectors.msgpack"  # formats 1 and 2, removed when a vectors.bin is written
_KEY_BYTES = 16  # of a text's sha256: its key
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_MODEL_KEY = f"{MODEL}@{WEIGHTS_SHA256[:16]}+{GELU}:{PIECES}"


class Ranked(Protocol):
    """What fusion needs of an index: `atipkit.search.index.CommandIndex`, which calls
    this module (and is not imported by it, so the two stay one-way)."""

    @property
    def directory(self) -> Path | None: ...

    def __len__(self) -> int: ...

    def commands(self) -> list[CommandEntry]: ...

    def prose(self) -> list[str]: ...

    def digest(self) -> str | None: ...

    def ranked(self, query: str, limit: int = ...) -> list[tuple[int, float]]: ...

    def place(self, position: int) -> int: ...

    def hit(self, position: int, score: float) -> Hit: ...


@dataclass(kw_only=True)
class Semantic:
    """The command vectors of one index, and how they were had. (A dataclass: a fused
    search of a saved index imports no msgspec, decision 584.)"""

    vectors: Any  # numpy float32 array, one unit row per command in index order
    embedded: int  # texts embedded to bring the vectors up to date (0: all reused)
    seconds: float
    unsaved: str | None = None  # why the vectors could not be kept beside the index, if not
    passages: Any = None  # numpy float32 array, one unit row per passage, by owner
    owners: Any = None  # the distinct commands that have passages, ascending (numpy int)
    starts: Any = None  # where each owner's passages start among `passages`

    def similarity(self, query: Any) -> Any:
        """Each command's similarity to the unit vector `query`: its description's cosine
        plus `PASSAGE_SHARE` times its best passage's, or its description's again where
        it has no passage (so commands without prose rank among themselves as before)."""
        import numpy as np

        cosine = self.vectors @ query
        best = cosine.copy()
        if self.passages is not None and len(self.passages):
            best[self.owners] = np.maximum.reduceat(self.passages @ query, self.starts)
        return cosine + PASSAGE_SHARE * best


class _Saved(NamedTuple):
    """A vectors file as read: what its rows were made for, the command (row) of each
    passage, and the rows. The texts' keys are decoded only when the index changed."""

    made: str  # `_made`: the index's digest and how its texts were cut, when it had one
    owners: list[int]  # the command (its row) of each passage
    matrix: Any  # numpy float32 rows: the commands' in index order, then the passages'
    file: cachefile.CacheFile

    def keys(self) -> list[bytes]:
        """Each row's key (`_key` of its text). Raises ValueError when damaged."""
        raw = bytes(self.file.section("keys"))
        if len(raw) != _KEY_BYTES * len(self.matrix):
            raise ValueError(f"{self.file.path}: the keys are damaged")
        return [raw[i : i + _KEY_BYTES] for i in range(0, len(raw), _KEY_BYTES)]


_STATES: weakref.WeakKeyDictionary[Ranked, Semantic] = weakref.WeakKeyDictionary()


@cache
def encoder() -> Encoder:
    """The process's encoder, loaded once. Raises `embed.ModelMissing`."""
    cache = paths.cache_dir()
    return Encoder(digests=cache / "digests.json", vocabulary=cache / "wordpiece.bin")


def command_text(entry: CommandEntry) -> str:
    """What the encoder reads of a command."""
    text = f"{entry.tool} {entry.command}" if entry.command else entry.tool
    if entry.description:
        text += f": {entry.description}"
    if entry.command and entry.tool_description:
        text += f" ({entry.tool}: {entry.tool_description})"
    return text


def passages(prose: str) -> list[str]:
    """`prose` cut into passages of whole sentences, each up to `PASSAGE_WORDS` words (a
    sentence half as long again is cut into pieces that long)."""
    out: list[list[str]] = []
    current: list[str] = []
    for sentence in _SENTENCE_END.split(prose.strip()):
        words = sentence.split()
        while len(words) > PASSAGE_WORDS * 3 // 2:
            if current:
                out.append(current)
                current = []
            out.append(words[:PASSAGE_WORDS])
            words = words[PASSAGE_WORDS:]
        if current and len(current) + len(words) > PASSAGE_WORDS:
            out.append(current)
            current = []
        current += words
    if current:
        out.append(current)
    return [" ".join(words) for words in out]


def passage_texts(entry: CommandEntry, prose: str) -> list[str]:
    """What the encoder reads of a command's prose: its first `PASSAGES` passages, each
    named as its command. The later ones ranked no better on dev and cost more to embed
    than the commands' own texts (decision 546)."""
    label = f"{entry.tool} {entry.command}" if entry.command else entry.tool
    return [f"{label}: {passage}" for passage in passages(prose)[:PASSAGES]]


def semantic(index: Ranked) -> Semantic:
    """The vectors of `index`'s commands, up to date, kept with the index object (and
    beside it on disk when it has a directory). Raises `embed.ModelMissing` when the
    `rerank` extra is not installed."""
    state = _STATES.get(index)
    if state is None:
        state = _STATES[index] = _vectors(index)
    return state


def unavailable() -> str | None:
    """Why the fused ranking cannot run here (the `rerank` extra, or its model files, are
    missing: `embed.ModelMissing`'s message), or None when it can: the encoder is then
    loaded."""
    try:
        encoder()
    except ModelMissing as exc:
        return str(exc)
    return None


def search(index: Ranked, query: str, limit: int) -> list[Hit]:
    """The `limit` best commands for `query`, BM25's and the encoder's rankings fused
    (see above); a hit's `score` is its fused score. Ties go by name (`place`), and only
    the hits returned are decoded."""
    import numpy as np

    state = semantic(index)
    if limit < 1 or not len(index):
        return []
    similarity = state.similarity(encoder().encode([query])[0])
    depth = min(DEPTH, len(similarity))
    nearest = np.argpartition(-similarity, depth - 1)[:depth].tolist()
    nearest.sort(key=lambda i: (-float(similarity[i]), index.place(i)))
    lexical = [position for position, _score in index.ranked(query, DEPTH)]
    fused: dict[int, float] = {}
    for weight, ranking in zip(WEIGHTS, (lexical, nearest), strict=True):
        for rank, i in enumerate(ranking, 1):
            fused[i] = fused.get(i, 0.0) + weight / (K + rank)
    best = sorted(fused.items(), key=lambda pair: (-pair[1], index.place(pair[0])))
    return [index.hit(i, score) for i, score in best[:limit]]


def _vectors(index: Ranked) -> Semantic:
    """Every command's vectors, its description's and its passages': read back as saved
    when they were made for this index (its digest and this cut), else read back where a
    text is unchanged and embedded where it is new, and saved beside the index when it
    has a directory."""
    start = time.monotonic()
    model = encoder()  # first: without numpy, `ModelMissing` says what to install
    import numpy as np

    directory = index.directory
    made = _made(index.digest())
    saved = _load(np, directory) if directory is not None else None
    if (
        saved is not None
        and made is not None
        and saved.made == made  # a row a text, one a command of this index
        and len(saved.matrix) - len(saved.owners) == len(index)
    ):
        return _state(np, len(index), saved.matrix, saved.owners, 0, start)
    commands = index.commands()
    texts = [command_text(entry) for entry in commands]
    keys = [_key(text) for text in texts]
    owners: list[int] = []
    for row, (entry, prose) in enumerate(zip(commands, index.prose(), strict=True)):
        found = passage_texts(entry, prose) if prose else []
        texts += found
        keys += [_key(passage) for passage in found]
        owners += [row] * len(found)
    vectors, embedded, unsaved = None, 0, None
    if directory is not None:
        from filelock import FileLock

        try:
            directory.mkdir(parents=True, exist_ok=True)
            with FileLock(str(directory / "vectors.lock")):
                # another process may have just embedded them; else those of format 2
                known = _known(_load(np, directory)) or _known_before(np, directory)
                vectors, embedded = _fill(np, model, texts, keys, known)
                _save(directory, made, keys, owners, vectors)
        except OSError as exc:  # a cache that cannot be written: the vectors stay in memory
            unsaved = f"{directory}: {exc.strerror or exc}"
    if vectors is None:
        vectors, embedded = _fill(np, model, texts, keys, _known(saved))
    return _state(np, len(commands), vectors, owners, embedded, start, unsaved)


def _made(digest: str | None) -> str | None:
    """What a vectors file's rows are made for: the index's texts (its digest) and how
    they are cut into passages; None for an index never saved."""
    if digest is None:
        return None
    # the recipe itself, not a hash of it: a warm search loads no OpenSSL (decision 721)
    return json.dumps([_FORMAT, _MODEL_KEY, PASSAGE_WORDS, PASSAGES, digest])


def _key(text: str) -> bytes:
    import hashlib  # only where texts are keyed: when the index changed

    return hashlib.sha256(text.encode()).digest()[:_KEY_BYTES]


def _state(
    np: Any,
    count: int,
    matrix: Any,
    owners: list[int],
    embedded: int,
    start: float,
    unsaved: str | None = None,
) -> Semantic:
    """The vectors as a query reads them: the `count` commands' rows, then the
    passages' rows, grouped by their command in index order."""
    rows = np.asarray(owners, dtype=np.int64)
    firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else rows
    return Semantic(
        vectors=matrix[:count],
        embedded=embedded,
        seconds=time.monotonic() - start,
        unsaved=unsaved,
        passages=matrix[count:],
        owners=rows[firsts],
        starts=firsts,
    )


def _fill(
    np: Any, model: Encoder, texts: list[str], keys: list[bytes], known: dict[bytes, Any]
) -> tuple[Any, int]:
    vectors = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    missing: dict[bytes, list[int]] = {}
    for i, key in enumerate(keys):
        row = known.get(key)
        if row is None:
            missing.setdefault(key, []).append(i)
        else:
            vectors[i] = row
    if missing:
        fresh = model.encode([texts[rows[0]] for rows in missing.values()], PIECES)
        for vector, rows in zip(fresh, missing.values(), strict=True):
            vectors[rows] = vector
    return vectors, len(missing)


def _load(np: Any, directory: Path) -> _Saved | None:
    """The saved vectors and what they were made for; None when the file is missing,
    damaged, of another format or of another model (a cache: what is missing is
    embedded again). The rows are the file's bytes, not a copy."""
    try:
        file = cachefile.read(directory / _FILE, _KIND, _FORMAT)
        made, count = file.meta.get("made"), file.meta.get("commands")
        owners = file.array("owners", "i").tolist()
        matrix = np.frombuffer(file.section("vectors"), dtype=np.float32)
    except (OSError, ValueError):
        return None
    if (
        file.meta.get("model") != _MODEL_KEY
        or not isinstance(made, str)
        or type(count) is not int
        or len(matrix) != (count + len(owners)) * DIMENSIONS
        or owners != sorted(owners)
        or (owners and not 0 <= owners[0] <= owners[-1] < count)
    ):
        return None
    return _Saved(made, owners, matrix.reshape(-1, DIMENSIONS), file)


def _known(saved: _Saved | None) -> dict[bytes, Any]:
    """The saved vectors by key; none when their keys are damaged."""
    if saved is None:
        return {}
    try:
        keys = saved.keys()
    except ValueError:
        return {}
    return dict(zip(keys, saved.matrix, strict=True))


def _known_before(np: Any, directory: Path) -> dict[bytes, Any]:
    """The vectors of a format-2 file (`vectors.msgpack`) by key, read once, when the
    first `vectors.bin` is written: an upgrade embeds nothing again."""
    import msgspec

    try:
        saved = msgspec.msgpack.decode((directory / _OLD_FILE).read_bytes())
        keys, raw = saved["keys"], saved["vectors"]
        if (saved["format"], saved["model"]) != (2, _MODEL_KEY):
            return {}
        matrix = np.frombuffer(raw, dtype=np.float32).reshape(len(keys), DIMENSIONS)
        return {bytes.fromhex(key): row for key, row in zip(keys, matrix, strict=True)}
    except (OSError, msgspec.DecodeError, LookupError, TypeError, ValueError):
        return {}


def _save(
    directory: Path, made: str | None, keys: list[bytes], owners: list[int], vectors: Any
) -> None:
    """The vectors and their keys, written atomically; the file of the formats before
    is removed (its 11 MB would otherwise stay in the cache)."""
    cachefile.write(
        directory / _FILE,
        _KIND,
        _FORMAT,
        {"model": _MODEL_KEY, "made": made or "", "commands": len(keys) - len(owners)},
        {
            "owners": bytes(array("i", owners)),
            "keys": b"".join(keys),
            "vectors": vectors.tobytes(),
        },
    )
    (directory / _OLD_FILE).unlink(missing_ok=True)
