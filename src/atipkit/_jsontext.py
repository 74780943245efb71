"""Reading untrusted JSON text: bounded in size and depth, with exact error positions.

Everything that turns bytes from outside (files, stdin, a probed tool's stdout, a registry)
into Python objects goes through `decode`, so every caller gets the same limits and the
same one-line errors.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from typing import Any, BinaryIO

import msgspec

from atipkit.errors import DocumentTooLarge, MalformedJSON
from atipkit.problems import Problem, error

#: Largest document accepted by default: room for ~20 000 commands, small enough that a
#: hostile file cannot exhaust memory. The probe caps a tool's stdout at the same size.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024

_decoder = msgspec.json.Decoder()
_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)")


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int = MAX_DOCUMENT_BYTES) -> bytes:
    """Read a document file or stdin (`-`), refusing anything over `max_bytes`.

    The size is checked before reading where the file system knows it, and reading stops
    one byte past the limit otherwise (pipes, /proc), so memory stays bounded either way.
    `OSError` (missing file, a directory, no permission) propagates: it is the caller's
    usage error, not a property of the document.
    """
    if str(path) == "-":
        return _read_capped(sys.stdin.buffer, "<stdin>", max_bytes)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "is a directory", str(path))
        if stat.S_ISREG(st.st_mode) and st.st_size > max_bytes:
            raise _too_large(str(path), st.st_size, max_bytes)
        return _read_capped(f, str(path), max_bytes)


def _read_capped(stream: BinaryIO, source: str, max_bytes: int) -> bytes:
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _too_large(source, None, max_bytes)
    return data


def _too_large(source: str | None, size: int | None, max_bytes: int) -> DocumentTooLarge:
    actual = f"{size:,} bytes" if size is not None else "more than that"
    return DocumentTooLarge(
        [error("json.too-large", f"document is {actual}; the limit is {max_bytes:,} bytes")],
        source,
    )


def decode(data: bytes | str, source: str | None = None, *, max_bytes: int | None = None) -> Any:
    """Decode one JSON text into Python objects.

    Raises `MalformedJSON` (with line and column) for bad syntax, bad UTF-8 or empty
    input, and `DocumentTooLarge` for nesting deeper than the interpreter can follow or,
    given `max_bytes`, for text longer than that in UTF-8 (text handed over in memory
    rather than read with `read_bytes`: a public parser's argument, a response body).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise _too_large(source, len(raw), max_bytes)
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a BOM may be ignored (RFC 8259 §8.1)
    if not raw.strip():
        raise _malformed(raw, len(raw), "empty document; expected a JSON object", source)
    try:
        return _decoder.decode(raw)
    except UnicodeDecodeError:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            byte = raw[exc.start]
            msg = f"not UTF-8: byte 0x{byte:02x} cannot start or continue a character"
            raise _malformed(raw, exc.start, msg, source) from None
        raise  # pragma: no cover - msgspec and Python disagree about UTF-8
    except RecursionError:
        problem = error("json.too-deep", "JSON is nested too deeply to read")
        raise DocumentTooLarge([problem], source) from None
    except msgspec.DecodeError as exc:
        text = str(exc)
        match = _BYTE_OFFSET.search(text)
        offset = int(match.group(1)) if match else len(raw)
        reason = _BYTE_OFFSET.sub("", text).removeprefix("JSON is malformed: ").strip()
        if reason == "Input data was truncated":
            reason = "unexpected end of input"
        raise _malformed(raw, offset, f"invalid JSON: {reason}", source) from None


def _malformed(raw: bytes, offset: int, message: str, source: str | None) -> MalformedJSON:
    line, column = line_column(raw, offset)
    problem = error("json.malformed", message, f"line {line}, column {column}")
    return MalformedJSON([problem], source, line=line, column=column)


def line_column(raw: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of a byte offset; columns count characters, not bytes."""
    offset = max(0, min(offset, len(raw)))
    line_start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", "replace")) + 1
    return raw.count(b"\n", 0, offset) + 1, column


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def not_an_object(value: Any) -> Problem:
    """The problem with a document whose top level is not a JSON object."""
    got = json_type(value)
    return error("schema.type", f"expected a JSON object at the top level, got {got}")
