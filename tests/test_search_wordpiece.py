"""`atipkit.search.wordpiece`: the encoder's tokenizer in the standard library, checked
against Hugging Face `tokenizers` (the test extra installs it) over the model's own
tokenizer.json: every code point, every text an index embeds, hostile Unicode and
Hypothesis' texts give the same ids (decision 640). Its vocabulary is kept in the cache
in a compact form, rebuilt where missing, damaged or foreign, never an error."""

from __future__ import annotations

import json
import os
import unicodedata
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atipkit.search import CommandIndex, cachefile, embed, rerank, wordpiece
from tests.test_search_rerank import shelf

try:
    TOKENIZER: Path | None = embed.model_files()[1]
except embed.ModelMissing:
    TOKENIZER = None
try:
    import tokenizers
except ImportError:
    tokenizers = None

needs_reference = pytest.mark.skipif(
    TOKENIZER is None or tokenizers is None,
    reason="the model's files and tokenizers (pip install 'atipkit[test]') are needed",
)
#: the code points a Python string holds that `tokenizers` takes (it refuses surrogates)
POINTS = [point for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF]


@pytest.fixture(scope="module")
def reference() -> Any:
    assert TOKENIZER is not None
    assert tokenizers is not None
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.enable_truncation(embed.MAX_TOKENS)  # as the encoder reads texts
    return tokenizer


@pytest.fixture(scope="module")
def ours() -> wordpiece.WordPiece:
    assert TOKENIZER is not None
    return wordpiece.load(TOKENIZER, embed.TOKENIZER_SHA256, None, embed.MAX_TOKENS)


def same_ids(reference: Any, ours: wordpiece.WordPiece, texts: list[str]) -> None:
    theirs = [encoding.ids for encoding in reference.encode_batch(texts)]
    differ = [(t, a, ours.encode(t)) for t, a in zip(texts, theirs, strict=True)]
    assert [d for d in differ if d[1] != d[2]][:3] == []


# -- the same ids as `tokenizers` ---------------------------------------------------------


@needs_reference
def test_every_code_point_is_normalized_and_split_as_tokenizers_does(reference, ours):
    """Words between `a`s show each character's class (removed, a space, punctuation
    split off, a CJK ideograph spaced out, an accent stripped, lowercased); alone
    between spaces, its ids. Where Python's Unicode tables are older than Rust's (a
    lowercase or NFD newer than Python's), the words differ, but those characters are
    in no word piece, so the ids do not. (The ids of words alike are the other tests'.)"""
    normalizer, splitter = reference.normalizer, reference.pre_tokenizer
    lower, nfd = tokenizers.normalizers.Lowercase(), tokenizers.normalizers.NFD()
    newer: list[int] = []
    for start in range(0, len(POINTS), 8192):
        points = POINTS[start : start + 8192]
        text = "a" + "a".join(map(chr, points)) + "a"
        theirs = [word for word, _ in splitter.pre_tokenize_str(normalizer.normalize_str(text))]
        if wordpiece._words(text) != theirs:
            for point in points:
                char = chr(point)
                alone = "a" + char + "a"
                words = [w for w, _ in splitter.pre_tokenize_str(normalizer.normalize_str(alone))]
                if wordpiece._words(alone) != words:
                    assert lower.normalize_str(char) != char.lower() or nfd.normalize_str(
                        char
                    ) != unicodedata.normalize("NFD", char), (
                        f"U+{point:04X}: {words} / {wordpiece._words(alone)}"
                    )
                    newer.append(point)
    assert len(newer) < 100  # Unicode 15 and 16's new case pairs, on Python 3.11
    same_ids(reference, ours, [f"a{chr(p)}a x{chr(p)} {chr(p)}" for p in newer])


@needs_reference
def test_the_texts_an_index_embeds_and_the_queries_give_the_same_ids(reference, ours):
    index = CommandIndex.from_tools(shelf())
    texts = [rerank.command_text(entry) for entry in index.commands()]
    queries = json.loads((Path(__file__).parent / "fixtures/search/queries.json").read_text())
    texts += [query["query"] for query in queries]
    texts += json.loads(
        (Path(__file__).parent / "fixtures/rerank/minilm_reference.json").read_text()
    )["texts"]
    assert len(texts) > 150
    same_ids(reference, ours, texts)


HOSTILE = [
    "",
    "   ",
    "\t\n\r\x0b\x0c\x85\x1c\x1f\x7f\x00",
    "list files",
    "Héllo WÖRLD naïve café Ångström",
    "a\u0301\u0316b e\u0302\u0323 \u0344 \u0f73 \u1734",  # combining marks, reordered
    "ΣΑΣ σας ΌΣΟΣ ΣΣ Σ",  # final sigma is not a thing here
    "İstanbul ǅ ß ﬁ ẞ Ω K",  # expanding lowercase, compatibility characters
    "日本語のテキスト 中文字 漢字 한국어 \U00020000\U0002f800 \uf900",
    "emoji 🥰🎉 👩‍👩‍👧 🇫🇷 ✌🏽 test",
    "zero\u200bwidth\u200c\u200d\ufeff\u2060 soft\xadhyphen bidi\u202e\u2066x",
    "odd\u00a0spaces\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000end",
    "\ufffd replacement \U000e0001 tag \ue000 private \U000f0000 \U0010fffd",
    "a[CLS]b [cls] [MASK]x [SEP][SEP] [UNK] [PAD]y [[CLS]]",
    "don't stop-me now!! ¿qué? «quote» „x“ — – … ‰ ※ ⁂ 〈〉 ＂",
    "x" * 100,
    "x" * 101,
    "é" * 101,
    "supercalifragilisticexpialidocious " * 3,
    "word " * 300,  # truncated to 256 ids
    "\u0600\u06dd\u070f\u180e arabic \u0645\u0631\u062d\u0628\u0627",
    "unassigned \u0378 \U0001fffe \U000e0fff",
]


@needs_reference
def test_hostile_unicode_gives_the_same_ids(reference, ours):
    same_ids(reference, ours, HOSTILE)
    assert len(ours.encode("word " * 300)) == embed.MAX_TOKENS


@needs_reference
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
            st.text(st.characters(max_codepoint=0x2FFF, blacklist_categories=("Cs",)), max_size=30),
            st.sampled_from(
                ["[CLS]", "[SEP]", "[MASK]", " ", "\u0301", "Σ", "ﬁ", "🥰", "\u3000", "##"]
            ),
            st.text("abcdeéxyzXYZ-_.'", min_size=1, max_size=120),
        ),
        max_size=8,
    ).map("".join)
)
def test_any_text_gives_the_ids_tokenizers_gives(reference, ours, text):
    assert ours.encode(text) == reference.encode(text).ids


@needs_reference
def test_a_lone_surrogate_is_removed_where_tokenizers_would_refuse_it(reference, ours):
    """A command line's undecodable bytes reach Python as lone surrogates
    (surrogateescape); `tokenizers` refuses such a string, this removes them, as its
    clean-text step removes every other character of category C."""
    assert ours.encode("list\udcff files\ud800") == reference.encode("list files").ids


# -- the vocabulary kept in the cache ------------------------------------------------------


@needs_reference
def test_the_vocabulary_is_kept_compact_and_rebuilt_where_damaged(tmp_path, ours):
    assert TOKENIZER is not None
    cache = tmp_path / "cache" / "wordpiece.bin"
    text = "change file permissions recursively, über-naïve 日本"
    expected = ours.encode(text)

    def load(path: Path = TOKENIZER) -> wordpiece.WordPiece:
        return wordpiece.load(path, embed.TOKENIZER_SHA256, cache, embed.MAX_TOKENS)

    assert not cache.exists()
    assert load().encode(text) == expected  # read from the JSON, and written
    # read back without tokenizer.json at all; past `_BISECTIONS` lookups by its dict
    cached = load(tmp_path / "missing.json")
    assert cached.encode(text) == expected
    many = [f"word{i}x{i % 7} über{i}" for i in range(wordpiece._BISECTIONS)]
    assert [cached.encode(t) for t in many] == [ours.encode(t) for t in many]
    assert cached._vocabulary._table is not None

    damaged = bytearray(cache.read_bytes())
    damaged[-100] ^= 0xFF  # in the ids: found by the block's CRC
    for broken in (bytes(damaged), cache.read_bytes()[:1000], b"", b"atipkit-cache\n{}\n"):
        cache.write_bytes(broken)
        assert load().encode(text) == expected
        assert load(tmp_path / "missing.json").encode(text) == expected  # rebuilt

    foreign = cachefile.read(cache, "wordpiece-vocabulary", 1)
    sections = {name: bytes(foreign.section(name)) for name in ("words", "starts", "ids")}
    meta = {**foreign.meta, "tokenizer": "sha256:" + "0" * 64}
    cachefile.write(cache, "wordpiece-vocabulary", 1, meta, sections)
    with pytest.raises(FileNotFoundError):  # written for another tokenizer.json: not used
        load(tmp_path / "missing.json")
    assert load().encode(text) == expected


@needs_reference
def test_a_vocabulary_file_whose_ids_leave_the_vocabulary_is_rebuilt(tmp_path, ours):
    """Right CRCs, made for this tokenizer.json, but an id no embedding row has: a negative
    one would index the weights from their end, silently, and a large one fail the
    search. Such a file is built again from the JSON."""
    assert TOKENIZER is not None
    cache = tmp_path / "wordpiece.bin"
    text = "change file permissions recursively"
    expected = ours.encode(text)
    wordpiece.load(TOKENIZER, embed.TOKENIZER_SHA256, cache, embed.MAX_TOKENS)
    saved = cachefile.read(cache, "wordpiece-vocabulary", 1)
    sections = {name: bytes(saved.section(name)) for name in ("words", "starts", "ids")}
    size = len(sections["ids"]) // 4
    for bad in (-1, size + len(saved.meta["added"]), 2**31 - 1):
        ids = saved.array("ids", "i")
        ids[:] = array("i", [bad] * size)
        cachefile.write(
            cache, "wordpiece-vocabulary", 1, saved.meta, {**sections, "ids": ids.tobytes()}
        )
        assert (
            wordpiece.load(TOKENIZER, embed.TOKENIZER_SHA256, cache, embed.MAX_TOKENS).encode(text)
            == expected
        )
        added = dict.fromkeys(saved.meta["added"], bad)
        cachefile.write(cache, "wordpiece-vocabulary", 1, {**saved.meta, "added": added}, sections)
        assert (
            wordpiece.load(TOKENIZER, embed.TOKENIZER_SHA256, cache, embed.MAX_TOKENS).encode(text)
            == expected
        )


@needs_reference
def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, ours):
    assert TOKENIZER is not None
    if os.geteuid() == 0:
        blocked = tmp_path / "file"  # root writes anywhere: a file where a folder must be
        blocked.write_text("")
        cache = blocked / "wordpiece.bin"
    else:
        tmp_path.chmod(0o500)
        cache = tmp_path / "wordpiece.bin"
    tokenizer = wordpiece.load(TOKENIZER, embed.TOKENIZER_SHA256, cache, embed.MAX_TOKENS)
    assert tokenizer.encode("list files") == ours.encode("list files")


def test_a_tokenizer_of_another_form_is_refused(tmp_path):
    vocabulary = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "list": 4, "##s": 5}
    added = [
        {
            "id": i,
            "content": t,
            "normalized": False,
            "lstrip": False,
            "rstrip": False,
            "single_word": False,
        }
        for t, i in vocabulary.items()
        if t.startswith("[")
    ]
    config: dict[str, Any] = {
        "added_tokens": added,
        "normalizer": dict(wordpiece._NORMALIZER),
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"single": wordpiece._TEMPLATE},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocabulary,
        },
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(config))
    tokenizer = wordpiece.load(path, "sha256:x", None, 8)
    assert tokenizer.encode("Lists [CLS] LIST, x") == [2, 4, 5, 2, 4, 1, 1, 3]
    assert tokenizer.encode("list " * 20) == [2, 4, 4, 4, 4, 4, 4, 3]
    for change in (
        {"normalizer": {**config["normalizer"], "lowercase": False}},
        {"pre_tokenizer": {"type": "Whitespace"}},
        {"model": {**config["model"], "type": "BPE"}},
        {"model": {**config["model"], "unk_token": "[NONE]"}},
        {"model": {**config["model"], "vocab": {**vocabulary, "a\nb": 6}}},
        {"added_tokens": [{**added[0], "normalized": True}, *added[1:]]},
        {"model": None},
    ):
        path.write_text(json.dumps({**config, **change}))
        with pytest.raises(wordpiece.Unsupported):
            wordpiece.load(path, "sha256:x", None, 8)
