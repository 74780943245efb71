"""The files the search keeps in its cache: named binary sections behind a one-line JSON
header, so that a search reads them with the standard library alone.

A search of an up-to-date index is a short process: importing msgspec would cost it more
than the query (decision 582), so the saved index and the state it was built from are
not msgpack. A file is

    atipkit-cache\\n
    {"kind": ..., "format": ..., "byteorder": ..., "meta": {...},
     "sections": [[name, length], ...], "crc32": ...}\\n
    the sections' bytes, each (and the header) padded to 8 bytes

A CRC-32 for each 64 KiB block after the header finds damage that still reads, block by
block as the reader asks for the bytes: a search verifies the few blocks its query reads
of a 3 MB index (checking all of them cost it more than the query), and the caller
rebuilds what the file held (it is a cache). Arrays are in the writer's
byte order, which the header names; a file from a machine of the other order is refused
like a damaged one.
"""

from __future__ import annotations

import json
import mmap
import os
import sys
import zlib
from array import array as _array
from pathlib import Path
from typing import Any, Literal, overload

from atipkit._atomic import write_atomic

_MAGIC = b"atipkit-cache\n"
_ALIGN = 8
_MAX_HEADER = 1 << 20
_BLOCK = 1 << 16


class CacheFile:
    """A file `write` wrote: its `meta` and its sections, each a memoryview over the
    file's bytes (no copy), verified as they are asked for."""

    def __init__(
        self,
        path: Path,
        meta: dict[str, Any],
        body: memoryview,
        table: dict[str, tuple[int, int]],
        blocks: list[int],
    ) -> None:
        self.path = path
        self.meta = meta
        self._body, self._table, self._blocks = body, table, blocks
        self._verified: set[int] = set()

    def fingerprint(self) -> str:
        """What the file holds, named by its section table and its blocks' CRCs: two
        files with the same fingerprint hold the same bytes (but for a CRC collision in
        every changed block), and `write` returns the fingerprint of what it wrote. A
        reader tells which file another was made from without hashing either's bytes."""
        table = [[name, length] for name, (_offset, length) in self._table.items()]
        return _fingerprint(table, self._blocks)

    def _bounds(self, name: str) -> tuple[int, int]:
        try:
            return self._table[name]
        except KeyError:
            raise ValueError(f"{self.path}: no section {name!r}") from None

    def verify(self, name: str, start: int = 0, stop: int | None = None) -> None:
        """Check bytes `start:stop` of section `name` against their blocks' CRCs, each
        block once. Raises ValueError when one differs: the file is damaged."""
        offset, length = self._bounds(name)
        stop = length if stop is None else min(stop, length)
        if start >= stop:
            return
        for block in range((offset + start) // _BLOCK, (offset + stop - 1) // _BLOCK + 1):
            if block in self._verified:
                continue
            data = self._body[block * _BLOCK : (block + 1) * _BLOCK]
            if zlib.crc32(data) != self._blocks[block]:
                raise ValueError(f"{self.path}: damaged (checksum of block {block})")
            self._verified.add(block)

    def section(self, name: str, *, verify: bool = True) -> memoryview:
        """Section `name`'s bytes, verified unless not `verify` (then the caller verifies
        what it reads). Raises ValueError when the file has none or it is damaged."""
        offset, length = self._bounds(name)
        if verify:
            self.verify(name)
        return self._body[offset : offset + length]

    @overload
    def array(
        self, name: str, typecode: Literal["q", "i"], *, verify: bool = True
    ) -> _array[int]: ...
    @overload
    def array(self, name: str, typecode: Literal["f"], *, verify: bool = True) -> _array[float]: ...
    def array(
        self, name: str, typecode: Literal["q", "i", "f"], *, verify: bool = True
    ) -> _array[Any]:
        """Section `name` as an array of `typecode`'s items (a copy: one memcpy, where
        reading items from a memoryview costs a query half as much again). Raises
        ValueError as `section` does, or when its length is no whole number of items."""
        items = _array(typecode)
        try:
            items.frombytes(self.section(name, verify=verify))
        except ValueError:
            raise ValueError(f"{self.path}: section {name!r} is not of {typecode!r}") from None
        return items


def write(
    path: Path, kind: str, format: int, meta: dict[str, Any], sections: dict[str, bytes]
) -> str:
    """Write `sections` (in order) and `meta` to `path` atomically, as `kind`, `format`,
    and return its `CacheFile.fingerprint`. A cache: no fsync (`durable=False`); readers
    still see the old file or the new."""
    body = bytearray()
    table: list[list[Any]] = []
    for name, data in sections.items():
        table.append([name, len(data)])
        body += data
        body += bytes(-len(body) % _ALIGN)
    blocks = [zlib.crc32(body[i : i + _BLOCK]) for i in range(0, len(body), _BLOCK)]
    header = {
        "kind": kind,
        "format": format,
        "byteorder": sys.byteorder,
        "meta": meta,
        "sections": table,
        "blocks": blocks,
    }
    line = json.dumps(header, separators=(",", ":")).encode()
    line += b" " * (-(len(_MAGIC) + len(line) + 1) % _ALIGN) + b"\n"  # sections aligned
    write_atomic(path, _MAGIC + line + bytes(body), durable=False)
    return _fingerprint(table, blocks)


def _fingerprint(table: list[list[Any]], blocks: list[int]) -> str:
    # the table and the CRCs as they are, not their sha256: no stronger for the hash
    # (a changed block whose CRC-32 is the same is the same file to both), and a warm
    # fused search then loads no OpenSSL (decision 721)
    return json.dumps([table, blocks], separators=(",", ":"))


def _mapped(path: Path) -> bytes | mmap.mmap:
    """The file's bytes: mapped where a mapped file can still be replaced (POSIX; the
    writers only ever rename a new file over it), which spares a fused search copying
    its 10 MB of vectors into fresh pages (decision 722); read elsewhere."""
    with path.open("rb") as file:
        if os.name != "posix" or os.fstat(file.fileno()).st_size == 0:
            return file.read()
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def read(path: Path, kind: str, format: int) -> CacheFile:
    """The file at `path`, if `write` wrote it as `kind`, `format` on a machine of this
    byte order. Raises OSError (unreadable) or ValueError (anything else: another kind
    or format, a damaged header; damaged sections as they are read); the caller
    rebuilds what it held."""
    data = _mapped(path)
    if data[: len(_MAGIC)] != _MAGIC:
        raise ValueError(f"{path}: not an atipkit cache file")
    end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + _MAX_HEADER)
    if end < 0:
        raise ValueError(f"{path}: its header is damaged")
    try:
        header = json.loads(data[len(_MAGIC) : end])
        found = (header["kind"], header["format"], header["byteorder"])
        table, blocks, meta = header["sections"], header["blocks"], header["meta"]
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise ValueError(f"{path}: its header is damaged ({exc})") from None
    if found != (kind, format, sys.byteorder):
        raise ValueError(f"{path}: {found}, expected {(kind, format, sys.byteorder)}")
    body = memoryview(data)[end + 1 :]
    if (
        not isinstance(meta, dict)
        or not isinstance(table, list)
        or not isinstance(blocks, list)
        or len(blocks) != -(-len(body) // _BLOCK)
    ):
        raise ValueError(f"{path}: its header is damaged")
    sections: dict[str, tuple[int, int]] = {}
    offset = 0
    for item in table:
        if not (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and type(item[1]) is int
            and 0 <= item[1] <= len(body) - offset
        ):
            raise ValueError(f"{path}: its section table is damaged")
        name, length = item
        sections[name] = (offset, length)
        offset += length + (-(offset + length) % _ALIGN)
    return CacheFile(path, meta, body, sections, blocks)
