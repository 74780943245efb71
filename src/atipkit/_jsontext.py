"""Reading untrusted JSON text: bounded in size and depth, with exact error positions.

Everything that turns bytes from outside (files, stdin, a probed tool's stdout, a registry,
an HTTP body, a model's call arguments) into Python objects goes through `decode`, so every
caller gets the same limits and the same one-line errors. JSON that arrives already
decoded (an MCP SDK's message, a mapping handed to the library) is held to the same
nesting limit by `check_depth` before anything walks it.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from typing import Any, BinaryIO

import msgspec

from atipkit._limits import MAX_DEPTH as MAX_DEPTH
from atipkit._limits import MAX_DOCUMENT_BYTES as MAX_DOCUMENT_BYTES
from atipkit.errors import DocumentTooLarge, MalformedJSON
from atipkit.problems import PathPart, Problem, error, json_path

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()
_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)")
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
"""A JSON string (skipped whole) or a bracket: what counting the depth of text looks at."""
_LONE_HIGH_SURROGATE = re.compile(
    rb"(?<!\\)(?:\\\\)*(\\u[dD][89abAB][0-9a-fA-F]{2})(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)
"""The escape of a UTF-16 high surrogate without its low half (escaped backslashes
before it counted), which msgspec reports as "truncated"."""


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

    Raises `MalformedJSON` (with line and column) for bad syntax, bad UTF-8, a lone
    UTF-16 surrogate escape (`"\\ud800"`, which is no character) or empty input, and
    `DocumentTooLarge` for nesting deeper than `MAX_DEPTH` (naming where) or, given
    `max_bytes`, for text longer than that in UTF-8 (text handed over in memory rather
    than read with `read_bytes`: a public parser's argument, a response body).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if max_bytes is not None and len(raw) > max_bytes:
        raise _too_large(source, len(raw), max_bytes)
    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a BOM may be ignored (RFC 8259 §8.1)
    if not raw.strip():
        raise _malformed(raw, len(raw), "empty document; expected a JSON object", source)
    try:
        value = _decoder.decode(raw)
    except RecursionError:  # deeper than msgspec follows (~1 000): say where it passes ours
        line, column = line_column(raw, _too_deep_offset(raw))
        problem = _too_deep(f"line {line}, column {column}", MAX_DEPTH)
        raise DocumentTooLarge([problem], source) from None
    except (UnicodeDecodeError, msgspec.DecodeError) as exc:
        # bad UTF-8: msgspec before 0.23 raised UnicodeDecodeError, 0.23 a DecodeError
        # with no offset ("Invalid UTF-8 encoded string"); Python's decoder says where,
        # and the first fault of the text is the one named
        text = str(exc) if isinstance(exc, msgspec.DecodeError) else ""
        match = _BYTE_OFFSET.search(text)
        offset = int(match.group(1)) if match else len(raw)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            if bad.start <= offset:
                byte = raw[bad.start]
                msg = f"not UTF-8: byte 0x{byte:02x} cannot start or continue a character"
                raise _malformed(raw, bad.start, msg, source) from None
        if isinstance(exc, UnicodeDecodeError):
            raise  # pragma: no cover - msgspec and Python disagree about UTF-8
        reason = _BYTE_OFFSET.sub("", text).removeprefix("JSON is malformed: ").strip()
        if reason == "Input data was truncated":
            lone = _LONE_HIGH_SURROGATE.search(raw)
            if lone is None:
                reason = "unexpected end of input"
            else:
                offset = lone.start(1)
                reason = f"{lone.group(1).decode()} is half a UTF-16 surrogate pair, no character"
        raise _malformed(raw, offset, f"invalid JSON: {reason}", source) from None
    check_depth(value, source)
    return value


def check_depth(value: Any, source: str | None = None, *, limit: int = MAX_DEPTH) -> None:
    """Refuse `value` (decoded JSON: dicts, lists, tuples) nested deeper than `limit`
    arrays and objects, with `DocumentTooLarge` naming the JSON path where it passes the
    limit. Iterative, one level at a time, linear in the number of values (under half
    the time msgspec takes to decode them): a hostile value cannot exhaust the stack here,
    and what walks it recursively afterwards is safe."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    for _depth in range(limit):
        level = [
            child
            for node in level
            for child in (node.values() if isinstance(node, dict) else node)
            # exact types first: the leaves, nearly every value, cost one set lookup
            if type(child) in _EXACT
            or (type(child) not in _LEAVES and isinstance(child, _CONTAINERS))
        ]
        if not level:
            return
    path = json_path(_path_to_depth(value, limit))
    raise DocumentTooLarge([_too_deep(path, limit)], source)


_CONTAINERS = (dict, list, tuple)
_EXACT = frozenset(_CONTAINERS)
_LEAVES = frozenset({str, int, float, bool, type(None)})


def lone_surrogate(value: Any) -> str | None:
    """The JSON path of the first string in `value` (a key or a value, at any depth)
    holding a lone UTF-16 surrogate (`"\\ud800"`, as a lenient JSON parser or a Python
    caller may hand over): no character, so no UTF-8 text, argv or JSON message can carry
    it. None when every string is text.

    msgspec's encoder finds out first, in C (encoding is strict UTF-8): the walk, which
    costs several times as much, runs only to say where, or for values the encoder does
    not take (nested deeper than it follows, say). It keeps each value's parent and key,
    not its path, so it stays linear at any depth."""
    try:
        _encoder.encode(value)
    except Exception:  # a lone surrogate (UnicodeEncodeError), or a value it cannot take
        pass
    else:
        return None
    steps: list[tuple[int, PathPart]] = []
    """(the step to its parent, key) of each value met; the root is step -1."""
    stack: list[tuple[Any, int]] = [(value, -1)]
    while stack:
        node, step = stack.pop()
        if isinstance(node, str):
            if not _is_text(node):
                return _path_of(steps, step)
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and not _is_text(key):
                    return _path_of(steps, step)
                steps.append((step, key))
                stack.append((child, len(steps) - 1))
        elif isinstance(node, list | tuple):
            for index, child in enumerate(node):
                steps.append((step, index))
                stack.append((child, len(steps) - 1))
    return None


def _path_of(steps: list[tuple[int, PathPart]], step: int) -> str:
    path: list[PathPart] = []
    while step >= 0:
        step, key = steps[step]
        path.append(key)
    return json_path(path[::-1])


def _is_text(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path_to_depth(value: Any, limit: int) -> list[PathPart]:
    """The path of the first container (depth first, in document order) that lies
    deeper than `limit`; only called once one is known to exist."""
    stack: list[tuple[Any, list[PathPart]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if len(path) >= limit:
            return path
        items = list(node.items() if isinstance(node, dict) else enumerate(node))
        for key, child in reversed(items):
            if isinstance(child, dict | list | tuple):
                stack.append((child, [*path, key]))
    return []  # pragma: no cover - check_depth found one


def _too_deep(location: str, limit: int) -> Problem:
    message = f"JSON is nested too deeply: more than {limit} levels of arrays and objects"
    return error("json.too-deep", message, location)


def _too_deep_offset(raw: bytes) -> int:
    """The byte offset of the first bracket that opens level `MAX_DEPTH + 1` of JSON
    text, strings skipped (one linear scan, run only for text msgspec found too deep)."""
    depth = 0
    for token in _TOKENS.finditer(raw):
        first = raw[token.start()]
        if first in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                return token.start()
        elif first in b"]}":
            depth -= 1
    return len(raw)  # pragma: no cover - msgspec found it too deep


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
