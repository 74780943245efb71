"""Hashes of binaries, and hash strings that are checked before they are used.

A hash names a file or a URL (SPEC-NOTES 13), so anything that is not exactly 64 lowercase
hex digits is refused before it reaches the filesystem or the network: `../../etc/passwd`
never becomes a path.
"""

from __future__ import annotations

import hashlib
import os
import re

_HEX = re.compile(r"[0-9a-f]{64}\Z")
_CHUNK = 1 << 20


class BadHash(ValueError):
    """A string that is not a sha256 hash in the canonical form."""


def sha256_hex(value: str) -> str:
    """`"sha256:<hex>"` or `"<hex>"` → `"<hex>"`; `BadHash` for anything else."""
    hex_digits = value.removeprefix("sha256:")
    if not _HEX.match(hex_digits):
        raise BadHash(f"not a sha256 hash (64 lowercase hex digits): {value[:80]!r}")
    return hex_digits


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The `sha256:<hex>` of a file, read in chunks (binaries can be large)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"
