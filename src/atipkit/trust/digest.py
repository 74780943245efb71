"""Hashes of binaries, and hash strings that are checked before they are used.

A hash names a file or a URL (SPEC-NOTES 13), so anything that is not exactly 64 lowercase
hex digits is refused before it reaches the filesystem or the network: `../../etc/passwd`
never becomes a path.

Hashing a large binary costs; verifying it again should not. `file_digest` remembers each
digest with the file's fingerprint (real path, device, inode, size, mtime and ctime) — in
memory and in `digests.json` in the cache directory — and hashes again only when the file
changed. The ctime is part of it because anyone can put an mtime back (`touch -r`), and
nobody can put a ctime back: a binary rewritten in place to the same size is hashed anew.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Literal, NamedTuple

from atipkit.errors import AtipError

Algorithm = Literal["sha256", "sha512"]
_HEX = re.compile(r"[0-9a-f]{64}\Z")
_CHECKSUM = re.compile(r"(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})\Z")
_CHUNK = 1 << 20


class BadHash(AtipError, ValueError):
    """A string that is not a hash in the canonical form."""


def sha256_hex(value: str) -> str:
    """`"sha256:<hex>"` or `"<hex>"` → `"<hex>"`; `BadHash` for anything else."""
    hex_digits = value.removeprefix("sha256:")
    if not _HEX.match(hex_digits):
        raise BadHash(f"not a sha256 hash (64 lowercase hex digits): {value[:80]!r}")
    return hex_digits


def parse_checksum(value: str) -> tuple[Algorithm, str]:
    """`"sha256:<64 hex>"` or `"sha512:<128 hex>"` → (algorithm, hex); else `BadHash`."""
    if not _CHECKSUM.match(value):
        raise BadHash(f"not a checksum ('sha256:' or 'sha512:' + lowercase hex): {value[:80]!r}")
    algorithm, hex_digits = value.split(":", 1)
    return algorithm, hex_digits  # type: ignore[return-value]  # the pattern: sha256/sha512


def hash_file(path: str | os.PathLike[str], algorithm: Algorithm = "sha256") -> str:
    """The `algo:<hex>` of a file, streamed (binaries can be large); never cached."""
    import hashlib  # not at import: loading OpenSSL cost a fused search 14 M instructions

    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return f"{algorithm}:{digest.hexdigest()}"


def sha256_file(path: str | os.PathLike[str]) -> str:
    return hash_file(path, "sha256")


class _Seen(NamedTuple):
    """A file's state when its digest was taken, and the digest."""

    size: int
    mtime_ns: int
    inode: int
    digest: str
    ctime_ns: int = 0
    device: int = 0


_memory: dict[tuple[str, str], _Seen] = {}
_lock = threading.Lock()


def file_digest(
    path: str | os.PathLike[str], algorithm: Algorithm = "sha256", *, cache: Path | None = None
) -> str:
    """The digest of a file, reusing a remembered one while the file is unchanged."""
    from atipkit import paths

    real = os.path.realpath(path)
    st = os.stat(real)
    key = (real, algorithm)
    seen = _memory.get(key)
    if seen is None:
        seen = _read(cache or paths.cache_dir() / "digests.json").get(f"{algorithm}:{real}")
    if seen and _state(seen) == _state_of(st):
        _memory[key] = seen
        return seen.digest
    digest = hash_file(real, algorithm)
    fresh = _Seen(st.st_size, st.st_mtime_ns, st.st_ino, digest, st.st_ctime_ns, st.st_dev)
    _memory[key] = fresh
    _remember(cache or paths.cache_dir() / "digests.json", f"{algorithm}:{real}", fresh)
    return digest


def _state(seen: _Seen) -> tuple[int, ...]:
    return (seen.device, seen.inode, seen.size, seen.mtime_ns, seen.ctime_ns)


def _state_of(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(path: Path) -> dict[str, _Seen]:
    """The store's digests by `algorithm:path`; none when it is missing or not one
    (then it is written anew). JSON read by the standard library: a fused search checks
    the model's files here, and importing msgspec cost it 15 ms (decision 641)."""
    try:
        data = json.loads(path.read_bytes())
        found = data.get("digests", {})
        return {key: _seen(value) for key, value in found.items()}
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return {}


def _seen(value: Any) -> _Seen:
    """One entry of the store; ValueError unless its fields have their types (an int is
    no bool), as msgspec read them before."""
    fields = _Seen._fields
    if not isinstance(value, dict) or not {"size", "mtime_ns", "inode", "digest"} <= value.keys():
        raise ValueError("not a digest entry")
    seen = _Seen(**{name: value[name] for name in fields if name in value})
    if not isinstance(seen.digest, str) or any(
        type(getattr(seen, name)) is not int for name in fields if name != "digest"
    ):
        raise ValueError("not a digest entry")
    return seen


def _remember(path: Path, key: str, seen: _Seen) -> None:
    from filelock import FileLock

    from atipkit._atomic import write_atomic

    with _lock, contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            store = _read(path)
            store[key] = seen
            digests = {name: entry._asdict() for name, entry in store.items()}
            write_atomic(path, json.dumps({"digests": digests}, separators=(",", ":")).encode())
