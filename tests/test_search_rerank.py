"""`atipkit.search.rerank` and `atip search`'s fused ranking: BM25 and the sentence
encoder met by reciprocal-rank fusion, the default when the extra is installed, with the
real model (all-MiniLM-L6-v2 from the package the `rerank` extra installs; the test extra
installs it too) and real vectors.

The encoder is checked against vectors sentence-transformers itself computed for the
same model (tests/fixtures/rerank/minilm_reference.json, computed once with PyTorch,
which the tests do not need). Where the model is needed and the extra is not installed,
a test is skipped and says so; the tests of what happens without it always run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import atipkit
from atipkit import scan
from atipkit.search import CommandIndex, cachefile, embed, rerank
from atipkit.search import index as index_module
from atipkit.search.documents import command_documents
from atipkit.search.machine import index_dir, machine_index
from atipkit.search.terms import terms
from atipkit.trust import digest
from tests.helpers import ATIP, atip, atip_answer, envelope_of, machine_env, minimal
from tests.test_discovery import tool_script

REFERENCE = Path(__file__).parent / "fixtures" / "rerank" / "minilm_reference.json"


def _missing() -> str | None:
    try:
        import numpy  # noqa: F401

        embed.model_files()
    except ImportError as exc:
        return f"the rerank extra is not installed ({exc}): pip install 'atipkit[rerank]'"
    return None


needs_model = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def names(hits: list[Any]) -> list[str]:
    return [hit.name for hit in hits]


# -- the encoder ---------------------------------------------------------------------------


@needs_model
def test_the_encoder_gives_the_vectors_sentence_transformers_gives():
    import numpy as np

    reference = json.loads(REFERENCE.read_text())
    assert reference["weights_sha256"] == embed.WEIGHTS_SHA256
    expected = np.array(reference["vectors"], dtype=np.float32)
    together = rerank.encoder().encode(reference["texts"])  # padded to the longest
    alone = np.stack([rerank.encoder().encode([text])[0] for text in reference["texts"]])
    assert together.shape == (len(reference["texts"]), embed.DIMENSIONS)
    # GELU's tanh form (decision 730) moves a vector by 3e-4 at most
    for vectors in (together, alone):
        assert np.abs(vectors - expected).max() < 5e-4
        assert (vectors * expected).sum(axis=1).min() > 0.999995
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert rerank.encoder().encode([]).shape == (0, embed.DIMENSIONS)


@needs_model
def test_a_query_copies_no_weight_and_batches_run_on_every_core(monkeypatch):
    """One text reads the mapped weights as they are; more than a batch is worth the
    transposed copies (decision 466), and the batches share the cores, a thread each
    (decision 467). All give the same vectors."""
    import threading

    import numpy as np

    encoder = embed.Encoder()
    # two whole batches: past one, a thread each (four cost twice the CPU; decision 713)
    texts = [f"command {i}: does thing number {i}" for i in range(2 * embed._BATCH)]
    alone = np.stack([encoder.encode([text])[0] for text in texts])
    layer = encoder._layers[0]
    assert not any(m.flags.owndata for m in (layer.out, layer.up, layer.down))
    threads: set[int] = set()
    forward = embed.Encoder._forward

    def noted(self: embed.Encoder, *args: Any) -> Any:
        threads.add(threading.get_ident())
        return forward(self, *args)

    monkeypatch.setattr(embed.Encoder, "_forward", noted)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    batch = encoder.encode(texts)
    assert np.abs(batch - alone).max() < 1e-5
    assert len(threads) == 2


def _tanh_gelu(np: Any, x: Any) -> Any:
    """GELU's tanh form in float64."""
    import math

    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def test_gelu_in_place_is_the_tanh_form_and_the_block_cuts_no_row():
    """The GELU of the feed-forward block (decision 730) is its tanh form to float32's
    rounding, within 4.7e-4 of x Phi(x) with the exact erf, over the range a layer's
    activations reach and past where tanh saturates; and a batch whose token rows are
    no multiple of `_ROWS` is run whole, its last block short."""
    import math

    np = pytest.importorskip("numpy")
    x = np.linspace(-16, 16, 3 * 1536 + 7, dtype=np.float32).reshape(-1, 1)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel().tolist()])
    got = x.copy()
    embed._gelu(np, got, np.empty_like(x))
    assert np.abs(got.ravel() - _tanh_gelu(np, x).ravel()).max() < 2e-6
    assert 1e-4 < np.abs(got.ravel() - exact).max() < 4.8e-4

    rng = np.random.default_rng(0)
    rows = embed._ROWS + 5
    x = rng.standard_normal((rows, embed.DIMENSIONS)).astype(np.float32)
    up = rng.standard_normal((embed.DIMENSIONS, embed._INTERMEDIATE)).astype(np.float32) / 20
    down = rng.standard_normal((embed._INTERMEDIATE, embed.DIMENSIONS)).astype(np.float32) / 40
    biases = (
        np.full(embed._INTERMEDIATE, 0.1, np.float32),
        np.full(embed.DIMENSIONS, -0.2, np.float32),
    )
    layer = embed._Layer(*[None] * 5, up, biases[0], down, biases[1], None)  # type: ignore[arg-type]
    out = np.full_like(x, np.nan)
    embed._feed_forward(np, x, layer, embed._Block.empty(np, embed._ROWS), out=out)
    inner = (x @ up + biases[0]).astype(np.float64)
    expected = _tanh_gelu(np, inner) @ down + biases[1]
    assert np.abs(out - expected).max() < 1e-4


@needs_model
def test_the_model_files_are_the_published_ones_and_checked_once(tmp_path, monkeypatch):
    # a package carrying other bytes under the model's file names is refused
    fake = tmp_path / "site" / "fake_carrier" / "model"
    fake.mkdir(parents=True)
    (fake.parent / "__init__.py").write_text("raise SystemExit('never imported')\n")
    (fake / "model.safetensors").write_bytes(b"not the weights")
    (fake / "tokenizer.json").write_text("{}")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(
        embed, "CARRIERS", (("fake-carrier", "fake_carrier", "model"), *embed.CARRIERS)
    )
    assert embed.model_files()[0] == fake / "model.safetensors"
    with pytest.raises(embed.ModelMissing, match="sha256"):
        embed.Encoder()
    assert "fake_carrier" not in sys.modules  # found by its files, never run

    # the real files: hashed once, then known by their state
    monkeypatch.setattr(embed, "CARRIERS", embed.CARRIERS[1:])
    digests = tmp_path / "digests.json"
    monkeypatch.setattr(digest, "_memory", {})  # as a new process: nothing known yet
    embed.Encoder(digests=digests)
    assert len(json.loads(digests.read_text())["digests"]) == 2
    monkeypatch.setattr(digest, "_memory", {})  # as the next process: only the store knows
    monkeypatch.setattr(digest, "hash_file", lambda path, _: pytest.fail(f"{path} hashed again"))
    embed.Encoder(digests=digests)


# -- ranking -------------------------------------------------------------------------------

#: Commands as a machine describes them: the NAME lines of their man pages.
SHELF = {
    "cp": "copy files and directories",
    "mv": "move (rename) files",
    "rm": "remove files or directories",
    "mkdir": "make directories",
    "df": "report file system space usage",
    "du": "estimate file space usage",
    "kill": "send a signal to a process",
    "ps": "report a snapshot of the current processes",
    "sleep": "delay for a specified amount of time",
    "timeout": "run a command with a time limit",
    "gzip": "compress or expand files",
    "tar": "an archiving utility",
    "sort": "sort lines of text files",
    "whoami": "print effective user name",
    "ssh": "OpenSSH remote login client",
    "curl": "transfer a URL",
}


def shelf() -> list[atipkit.Tool]:
    return [
        atipkit.from_dict(
            minimal(name=name, description=text, commands={"": {"description": text}})
        )
        for name, text in SHELF.items()
    ]


@needs_model
@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("how much room is left on my disks", "df"),
        ("give up after thirty seconds", "timeout"),
        ("log into a server", "ssh"),
        ("fetch a web page", "curl"),
        ("duplicate a folder", "cp"),
    ],
)
def test_a_task_in_other_words_is_found_first_with_rerank_and_not_without(query, wanted):
    tools = shelf()
    [document] = [d for t in tools for d in command_documents(t) if d.tool == wanted]
    assert not set(terms(query)) & set(document.terms)  # not one word in common
    index = CommandIndex.from_tools(tools)
    assert wanted not in names(index.search(query, 10, rerank=False))
    hits = index.search(query, 3, rerank=True)
    assert names(hits)[0] == wanted
    assert hits[0].description == SHELF[wanted]
    assert hits[0].score >= hits[1].score >= hits[2].score


@needs_model
def test_rerank_keeps_what_bm25_finds_and_its_shape():
    index = CommandIndex.from_tools(shelf())
    hits = index.search("compress or expand files", 5, rerank=True)
    assert names(hits)[0] == "gzip"  # the exact words and the meaning agree
    assert len(hits) == 5
    assert all(0 < hit.score <= round(sum(rerank.WEIGHTS) / (rerank.K + 1), 4) for hit in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    every = index.search("compress or expand files", 100, rerank=True)
    assert sorted(names(every)) == sorted(SHELF)  # each command once
    assert index.search("compress", 0, rerank=True) == []
    assert CommandIndex.from_tools([]).search("anything", 5, rerank=True) == []
    # a query of stop words only: BM25 has nothing, the meaning still ranks
    assert index.search("the", 3, rerank=False) == []
    assert len(index.search("the", 3, rerank=True)) == 3


@needs_model
def test_the_two_rankings_meet_by_reciprocal_rank():
    """Each command scores the sum of weight / (K + rank) over the rankings it is in:
    BM25's (weight 1) and the encoder's (cosine of the texts `command_text` gives; weight
    1.6, decision 468), each `DEPTH` deep."""
    import numpy as np

    index = CommandIndex.from_tools(shelf())
    query = "compress files to save disk space"
    commands = index.commands()
    vectors = rerank.encoder().encode([rerank.command_text(c) for c in commands])
    cosine = vectors @ rerank.encoder().encode([query])[0]
    meaning = sorted(range(len(commands)), key=lambda i: (-cosine[i], commands[i].name))
    words = [h.name for h in index.search(query, rerank.DEPTH, rerank=False)]
    assert 0 < len(words) < len(commands)  # some commands are in one ranking only
    expected = {c.name: 0.0 for c in commands}
    for rank, i in enumerate(meaning, 1):
        expected[commands[i].name] += 1.6 / (rerank.K + rank)
    for rank, name in enumerate(words, 1):
        expected[name] += 1 / (rerank.K + rank)
    order = sorted(expected, key=lambda name: (-expected[name], name))
    hits = index.search(query, len(commands), rerank=True)
    assert names(hits) == order
    assert [h.score for h in hits] == [round(expected[n], 4) for n in order]
    assert np.isclose(hits[0].score, 2.6 / (rerank.K + 1), atol=1e-4)  # gzip: first in both


@needs_model
def test_auto_is_fused_with_the_extra_and_bm25_without(monkeypatch):
    """`rerank=None` is `atip search`'s auto; the library's default is BM25 (decision 368)."""
    index = CommandIndex.from_tools(shelf())
    query = "give up after thirty seconds"
    assert rerank.unavailable() is None
    assert index.search(query, 5, rerank=None) == index.search(query, 5, rerank=True)
    assert names(index.search(query, 1, rerank=None)) == ["timeout"]
    assert index.search(query, 5) == index.search(query, 5, rerank=False) == []

    # the model's files absent: the module's own ModelMissing, and BM25 alone
    monkeypatch.setattr(embed, "CARRIERS", (("no-such-carrier", "atipkit_no_such_carrier", "m"),))
    rerank.encoder.cache_clear()
    try:
        assert "no-such-carrier" in (rerank.unavailable() or "")
        assert index.search(query, 5, rerank=None) == index.search(query, 5, rerank=False) == []
        assert index.search("compress", 5, rerank=None) == index.search("compress", 5)
        with pytest.raises(embed.ModelMissing):
            index.search(query, 5, rerank=True)
    finally:
        rerank.encoder.cache_clear()


@needs_model
def test_a_subcommand_is_read_with_its_tool():
    kubectl = atipkit.from_dict(
        minimal(
            name="kubectl",
            description="kubectl controls the Kubernetes cluster manager",
            commands={"exec": {"description": "Execute a command in a container"}},
        )
    )
    [entry] = CommandIndex.from_tools([kubectl]).commands()
    assert rerank.command_text(entry) == (
        "kubectl exec: Execute a command in a container "
        "(kubectl: kubectl controls the Kubernetes cluster manager)"
    )
    [root] = CommandIndex.from_tools(shelf()[:1]).commands()
    assert rerank.command_text(root) == "cp: copy files and directories"


FILLER = (
    "The ledger keeps each entry in the order it was written, and a reader may open it "
    "at any page without locking it for the others. "
)
DEEP = "Sprinkles the lawn and the flower beds at dawn."


def with_prose(tool: atipkit.Tool, prose: str) -> atipkit.Tool:
    return msgspec.structs.replace(tool, extensions={"x-atipkit": {"prose": prose}})


@needs_model
def test_a_passage_of_the_prose_finds_its_command():
    """What the page says a command is for, past its description, is a vector of its own
    (decision 546): a task told in other words finds it. Only the first `PASSAGES`
    passages are embedded."""
    ledger = minimal(name="ledger", commands={"": {"description": "keep the ledger"}})
    query = "irrigate the garden"
    for before, found in ((1, True), (rerank.PASSAGES, False)):
        prose = FILLER * before + DEEP  # FILLER is one passage
        tools = [*shelf(), with_prose(atipkit.from_dict(ledger), prose)]
        index = CommandIndex.from_tools(tools)
        assert "ledger" not in names(index.search(query, 10, rerank=False))  # no word shared
        assert (names(index.search(query, 1, rerank=True)) == ["ledger"]) is found
        state = rerank.semantic(index)
        assert len(state.vectors) == len(tools)
        assert len(state.passages) == min(before + 1, rerank.PASSAGES)
        assert state.owners.tolist() == [len(tools) - 1]  # ledger's, in index order
    assert rerank.passage_texts(index.commands()[-1], DEEP) == [f"ledger: {DEEP}"]


@needs_model
def test_an_indexed_text_is_read_to_its_first_pieces_and_a_query_whole():
    """The index's texts are embedded from their first `rerank.PIECES` word pieces
    (decision 731), [CLS] and [SEP] counted: a long description's vector is that of its
    text cut there. A query is read whole."""
    import itertools

    import numpy as np

    encoder = rerank.encoder()
    words = list(itertools.islice(itertools.cycle(["keep", "the", "books", "of", "a", "sale"]), 80))
    text = "ledger: " + " ".join(words)  # "ledger", ":" and one piece a word
    assert len(encoder._tokenizer.encode(text)) == 84
    cut = "ledger: " + " ".join(words[: rerank.PIECES - 4])
    assert len(encoder._tokenizer.encode(cut)) == rerank.PIECES
    assert np.abs(encoder.encode([text], rerank.PIECES) - encoder.encode([cut])).max() < 1e-5
    assert np.abs(encoder.encode([text]) - encoder.encode([cut])).max() > 1e-3

    ledger = minimal(name="ledger", commands={"": {"description": " ".join(words)}})
    index = CommandIndex.from_tools([*shelf(), atipkit.from_dict(ledger)])
    row = [entry.tool for entry in index.commands()].index("ledger")
    assert rerank.command_text(index.commands()[row]) == text
    vector = rerank.semantic(index).vectors[row]
    assert np.abs(vector - encoder.encode([cut])[0]).max() < 1e-5


def test_prose_is_cut_into_passages_of_whole_sentences():
    words = " ".join(f"w{i}" for i in range(60))
    assert rerank.passages("") == []
    assert rerank.passages("One two. Three four? Five.") == ["One two. Three four? Five."]
    long = "A b c d e f g h i j. " * 3  # 30 words: two sentences fit in 25, not three
    assert rerank.passages(long) == [
        "A b c d e f g h i j. A b c d e f g h i j.",
        "A b c d e f g h i j.",
    ]
    cut = rerank.passages(f"Short one. {words}")
    assert cut[0] == "Short one."
    assert len(cut[1].split()) == rerank.PASSAGE_WORDS
    assert " ".join(cut[1:]) == words  # a long sentence in pieces, every word kept


# -- the vectors beside the machine index --------------------------------------------------


@pytest.fixture
def machine(tmp_path, isolated_home) -> Path:
    bin_dir = tmp_path / "bin"
    for name, text in (("alpha", "Feed the zebra"), ("beta", "Ride the horse")):
        tool_script(bin_dir, name, minimal(name=name, commands={"go": {"description": text}}))
    scan([str(bin_dir)])
    return bin_dir


@needs_model
def test_each_command_is_embedded_once_and_kept_beside_the_index(machine, monkeypatch):
    index, _ = machine_index()
    state = rerank.semantic(index)
    assert state.embedded == 2
    assert (index_dir() / "vectors.bin").is_file()
    encoded: list[str] = []
    encode = embed.Encoder.encode

    def counted(self: embed.Encoder, texts: list[str], *args: Any) -> Any:
        encoded.extend(texts)
        return encode(self, texts, *args)

    monkeypatch.setattr(embed.Encoder, "encode", counted)
    decoded: list[int] = []
    entry = index_module._StoredEntries.__getitem__

    def read(self: Any, position: Any) -> Any:
        decoded.append(position)
        return entry(self, position)

    monkeypatch.setattr(index_module._StoredEntries, "__getitem__", read)
    again, report = machine_index()  # a new search: the index and the vectors are read back
    assert report.updated is False
    assert again is not index
    hits = again.search("look after an animal", 1, rerank=None)  # fused: auto
    assert names(hits)[0] == "alpha_go"
    assert rerank.semantic(again).embedded == 0
    assert encoded == ["look after an animal"]  # the query, and nothing else
    assert len(decoded) == 1  # the hit's entry alone: the vectors were made for this index
    # read back as saved, a row a command in index order: the file's matrix, not a copy
    assert not rerank.semantic(again).vectors.flags.owndata
    assert (rerank.semantic(again).vectors == state.vectors).all()

    tool_script(machine, "gamma", minimal(name="gamma", commands={"go": {"description": "x"}}))
    scan([str(machine)])
    updated, report = machine_index()
    assert report.updated
    assert rerank.semantic(updated).embedded == 1  # only the new command

    path = index_dir() / "vectors.bin"
    whole = path.read_bytes()
    for damaged in (b"\x93damaged", whole[:-100], whole[:-8] + b"\x00" * 8):
        path.write_bytes(damaged)  # garbage, cut short, a row's bytes changed
        fresh, _ = machine_index()
        assert rerank.semantic(fresh).embedded == 3  # a damaged cache is embedded again

    # written by something else, checksums right and made for this index, a command short:
    # embedded again, not read as if its passages' rows were commands'
    fresh, _ = machine_index()
    state = rerank.semantic(fresh)
    made = rerank._made(fresh.digest())
    keys = [bytes(16)] * (len(fresh) - 1)
    rerank._save(index_dir(), made, keys, [], state.vectors[: len(fresh) - 1].copy())
    hostile, _ = machine_index()
    assert rerank.semantic(hostile).embedded == len(hostile)


@needs_model
def test_atip_search_fused_and_bm25_as_processes(tmp_path):
    env = machine_env(tmp_path)
    bin_dir = tmp_path / "bin"
    for name, text in (("alpha", "Feed the zebra"), ("beta", "Ride the horse")):
        tool_script(bin_dir, name, minimal(name=name, commands={"go": {"description": text}}))
    code, _, _ = atip_answer(env, "scan", "--path", str(bin_dir))
    assert code == 0

    code, out, _ = atip_answer(env, "search", "look after an animal", "--json")
    assert code == 0, out
    result = out["result"]
    assert set(result) == {"query", "hits", "ranking", "index", "rerank"}
    assert result["ranking"] == "fused"  # the default, with the extra
    assert result["rerank"]["model"] == embed.MODEL
    assert result["rerank"]["embedded"] == 2
    assert [h["name"] for h in result["hits"]] == ["alpha_go", "beta_go"]
    assert out["meta"]["warnings"] == []
    for flags in (["--ranking", "fused"], ["--rerank"]):
        code, out, _ = atip_answer(env, "search", "look after an animal", *flags, "--json")
        assert (code, out["result"]["ranking"]) == (0, "fused")
        assert out["result"]["rerank"]["embedded"] == 0  # read back, none embedded
        assert [h["name"] for h in out["result"]["hits"]] == ["alpha_go", "beta_go"]
    assert any("--rerank is deprecated" in w for w in out["meta"]["warnings"])
    code, out, _ = atip_answer(env, "search", "look after an animal", "--ranking", "bm25", "--json")
    assert (code, out["result"]["ranking"]) == (0, "bm25")
    assert set(out["result"]) == {"query", "hits", "ranking", "index"}
    assert out["result"]["hits"] == []  # BM25 alone: no word in common
    code, out, _ = atip_answer(env, "search", "zebra", "--rerank", "--ranking", "bm25", "--json")
    assert (code, out["error"]["code"]) == (2, "E1002")  # a contradiction is refused

    done = subprocess.run(
        [*ATIP, "search", "look after an animal", "--text"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.split()[1] == "alpha_go"  # the text form: score, name, description


@needs_model
def test_vectors_that_cannot_be_kept_are_embedded_in_memory(tmp_path):
    """A lock or directory the vectors cannot be written to must not turn a re-ranked
    search into an internal error: the commands are embedded for this search alone, and
    the result and a warning say why."""
    env = machine_env(tmp_path)
    bin_dir = tmp_path / "bin"
    for name, text in (("alpha", "Feed the zebra"), ("beta", "Ride the horse")):
        tool_script(bin_dir, name, minimal(name=name, commands={"go": {"description": text}}))
    assert atip_answer(env, "scan", "--path", str(bin_dir))[0] == 0
    assert atip_answer(env, "search", "zebra", "--ranking", "bm25")[0] == 0  # the index only
    search_dir = tmp_path / "cache" / "search"
    (search_dir / "vectors.lock").mkdir()  # as root, a mode would not stop the write

    for _ in range(2):  # nothing kept: the next search embeds them again
        code, out, _ = atip_answer(env, "search", "look after an animal", "--json")
        assert code == 0, out
        result = out["result"]
        assert [h["name"] for h in result["hits"]] == ["alpha_go", "beta_go"]
        assert result["rerank"]["embedded"] == 2
        assert result["rerank"]["unsaved"].startswith(str(search_dir))
        assert any("vectors could not be kept" in w for w in out["meta"]["warnings"])
    assert not (search_dir / "vectors.bin").exists()

    (search_dir / "vectors.lock").rmdir()
    code, out, _ = atip_answer(env, "search", "look after an animal", "--json")
    assert (code, out["result"]["rerank"]["unsaved"]) == (0, None)
    assert out["meta"]["warnings"] == []


def test_atip_search_runs_the_encoder_on_one_blas_thread_unless_told(machine, monkeypatch):
    """A query's products are too small to share between BLAS threads; the process
    says so to numpy before importing it, and a user's own setting wins."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert atip("search", "zebra", "--ranking", "bm25").exit_code == 0
    assert "OPENBLAS_NUM_THREADS" not in os.environ  # BM25 alone imports no numpy
    assert atip("search", "zebra").exit_code == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert atip("search", "zebra").exit_code == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"


# -- without the extra ---------------------------------------------------------------------


def test_without_the_rerank_extra_atip_search_is_bm25_and_says_so(machine, monkeypatch):
    """Asked for, the fused ranking without its extra is exit 40 and what to install; by
    default, the search is BM25's alone and the result says so and why."""
    rerank.encoder.cache_clear()
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` fails
    for flags in (["--ranking", "fused"], ["--rerank"]):
        result = atip("search", "zebra", *flags)
        out = envelope_of(result)
        assert (result.exit_code, out["error"]["code"]) == (40, "E4010")
        assert out["error"]["message"].startswith("atip search --ranking fused: ")
        assert "atipkit[rerank]" in out["error"]["suggestion"]["fix"]
    result = atip("search", "zebra")
    out = envelope_of(result)
    assert result.exit_code == 0  # BM25 alone needs none of it
    assert out["result"]["ranking"] == "bm25"
    assert "numpy" in out["result"]["unfused"]
    assert [h["name"] for h in out["result"]["hits"]] == ["alpha_go"]
    assert out["meta"]["warnings"] == []  # a choice the install made, not a fault
    with pytest.raises(ImportError):
        CommandIndex.from_tools(shelf()).search("zebra", 3, rerank=True)

    monkeypatch.undo()  # numpy again
    monkeypatch.setattr(embed, "CARRIERS", (("no-such-carrier", "atipkit_no_such_carrier", "m"),))
    rerank.encoder.cache_clear()
    result = atip("search", "zebra", "--ranking", "fused")
    out = envelope_of(result)
    assert (result.exit_code, out["error"]["code"]) == (40, "E4010")
    result = atip("search", "zebra")
    assert (result.exit_code, envelope_of(result)["result"]["ranking"]) == (0, "bm25")
    if _missing() is None:  # with the packages there, the model is what is missing
        assert "no-such-carrier" in envelope_of(result)["result"]["unfused"]
    rerank.encoder.cache_clear()


WATCHED = ("numpy", "tokenizers", "atipkit.search.embed", "atipkit.search.rerank")
#: Needed to build or update an index, not to search a saved one.
BUILDING = ("filelock", "atipkit.bridge")


def test_import_atipkit_and_bm25_search_load_no_model(machine, tmp_path):
    """Nor does a BM25 search from a saved index load what only building one needs."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, atipkit, atipkit.search, atipkit.search.index, atipkit.search.machine;"
            f" print([m for m in {WATCHED!r} if m in sys.modules])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"

    machine_index()  # built: a search loads it
    watch = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('LOADED', [m for m in"
        f" {(*WATCHED, *BUILDING)!r} if m in sys.modules], file=sys.stderr))\n"
        "from atipkit.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", watch, "search", "zebra", "--ranking", "bm25", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "LOADED []" in done.stderr


@needs_model
def test_a_fused_search_imports_neither_tokenizers_nor_msgspec(machine):
    """The query's word pieces come from `wordpiece` and its vocabulary from the cache,
    the model files' digests from a store read by `json` (decisions 640 and 641): a
    warm fused search imports neither, nor does it read tokenizer.json. Nor does it
    load OpenSSL: what the vectors were made for is compared, not hashed (decision 721)."""
    machine_index()
    watch = (
        "import atexit, sys\n"
        "opened = []\n"
        "sys.addaudithook(lambda event, args: event == 'open'"
        " and str(args[0]).endswith('tokenizer.json') and opened.append(args[0]))\n"
        "atexit.register(lambda: print('LOADED', [m for m in ('tokenizers', 'msgspec', '_hashlib')"
        " if m in sys.modules], 'OPENED', opened, file=sys.stderr))\n"
        "from atipkit.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for run in ("first", "warm"):
        done = subprocess.run(
            [sys.executable, "-c", watch, "search", "zebra", "--ranking", "fused", "--json"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stdout
        assert json.loads(done.stdout)["result"]["ranking"] == "fused"
        if run == "warm":
            assert "LOADED [] OPENED []" in done.stderr
    assert (index_dir().parent / "wordpiece.bin").is_file()


@needs_model
def test_vectors_of_an_old_format_are_embedded_again_and_removed(machine):
    """A vectors file of another format or model is refused and everything is embedded
    again; the msgpack file of formats 1 and 2 is removed when format 3 is written
    (decision 584)."""
    index, _ = machine_index()
    state = rerank.semantic(index)
    path = index_dir() / "vectors.bin"
    saved = cachefile.read(path, "search-vectors", 3)
    sections = {name: bytes(saved.section(name)) for name in saved._table}
    old = index_dir() / "vectors.msgpack"
    for format, meta in ((2, saved.meta), (3, {**saved.meta, "model": "another"})):
        cachefile.write(path, "search-vectors", format, meta, sections)
        old.write_bytes(msgspec.msgpack.encode({"format": 2, "vectors": b""}))
        again, _ = machine_index()
        assert rerank.semantic(again).embedded == 2
        assert cachefile.read(path, "search-vectors", rerank._FORMAT).meta == saved.meta
        assert not old.exists()
    assert (rerank.semantic(again).vectors == state.vectors).all()

    # the file of format 2, as the code before wrote it: its vectors are read, not embedded
    keys = [key.hex() for key in saved_keys(path)]
    path.unlink()
    before = {"format": 2, "model": rerank._MODEL_KEY, "keys": keys, "owners": []}
    before |= {"prose": "", "vectors": state.vectors.tobytes()}
    old.write_bytes(msgspec.msgpack.encode(before))
    again, _ = machine_index()
    assert rerank.semantic(again).embedded == 0
    assert (rerank.semantic(again).vectors == state.vectors).all()
    assert path.is_file()
    assert not old.exists()


def saved_keys(path: Path) -> list[bytes]:
    raw = bytes(cachefile.read(path, "search-vectors", rerank._FORMAT).section("keys"))
    return [raw[i : i + 16] for i in range(0, len(raw), 16)]


def test_the_prose_is_kept_with_the_index_and_read_when_asked(tmp_path):
    ledger = minimal(name="ledger", commands={"": {"description": "keep the ledger"}})
    tools = [*shelf()[:2], with_prose(atipkit.from_dict(ledger), DEEP)]
    index = CommandIndex.from_tools(tools)
    assert index.prose() == ["", "", DEEP]
    index.save(tmp_path)
    loaded = CommandIndex.load(tmp_path)
    assert loaded._prose is None  # a search by words never reads it
    assert loaded.prose() == ["", "", DEEP]
    path = tmp_path / "index.bin"
    saved = cachefile.read(path, "search-index", 6)
    sections = {name: bytes(saved.section(name)) for name in saved._table}
    for wrong in (b"\x93damaged", b'["a"]', b'["", "", 3]'):  # checksums right
        cachefile.write(path, "search-index", 6, saved.meta, {**sections, "prose": wrong})
        assert CommandIndex.load(tmp_path).search("ledger", rerank=False)  # words still
        assert CommandIndex.load(tmp_path).prose() == ["", "", ""]  # no passages, no error


@needs_model
def test_saved_passages_are_cut_again_when_the_cut_changes(tmp_path, monkeypatch):
    """The saved passages are reused only for the prose and the cut they came from."""
    ledger = minimal(name="ledger", commands={"": {"description": "keep the ledger"}})
    tools = [*shelf()[:2], with_prose(atipkit.from_dict(ledger), FILLER * 3 + DEEP)]
    index = CommandIndex.from_tools(tools)
    index.save(tmp_path)
    assert len(rerank.semantic(index).passages) == rerank.PASSAGES == 2
    assert len(rerank.semantic(CommandIndex.load(tmp_path)).passages) == 2  # as saved
    monkeypatch.setattr(rerank, "PASSAGES", 1)
    again = rerank.semantic(CommandIndex.load(tmp_path))
    assert (len(again.passages), again.embedded) == (1, 0)  # cut again, nothing new
