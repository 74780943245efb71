"""Where a command's result goes and how it looks (PRD §7.4, §8.2, §8.6, §10.3).

- `json`: one envelope, `{"ok", "result" | "error", "meta"}`, on stdout, for success and
  failure alike; nothing else on stdout.
- `jsonl`: one JSON value per line, as a generator yields them; a failure is a last line
  `{"ok": false, "error": ...}`.
- `text`: for people: tables for lists of records, `key: value` for records; errors on
  stderr. Colors (through `rich`, when it is installed) only on a terminal, never with
  `--no-color` or `NO_COLOR`.
- `plain`: for `grep`, `cut` and `xargs`: one item a line, tab-separated fields, no
  decoration; `--print0` ends items with NUL instead.
- `auto`: `text` on a terminal, `json` otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from atipkit.app.errors import InputError, ToolError
from atipkit.errors import ErrorCode

__all__ = [
    "Document",
    "encode",
    "envelope",
    "error_envelope",
    "render_error",
    "render_result",
    "resolve",
]


def resolve(requested: str, *, isatty: bool, print0: bool) -> str:
    """The mode a call runs in. `--print0` asks for plain items: with `auto` it picks
    `plain`; with JSON output asked for explicitly it is a usage error."""
    if print0:
        if requested in ("json", "jsonl"):
            raise InputError(
                f"--print0 ends plain items with NUL; it does not go with --output {requested}",
                code=ErrorCode.USAGE,
                suggestion="Drop --print0, or use --plain.",
            )
        return "plain" if requested == "auto" else requested
    if requested == "auto":
        return "text" if isatty else "json"
    return requested


class Document:
    """A result that is a document in its own right (a JSON Schema, a list of tool
    definitions, a shim): written verbatim by `plain` output, so `tool cmd --plain > file`
    saves exactly the document, and by `text` output unless the command renders it for
    people (`text=`, which gets the decoded value); carried decoded as the envelope's
    `result` in JSON output."""

    __slots__ = ("content", "media_type")

    def __init__(self, content: bytes | str, media_type: str = "application/json") -> None:
        self.content = content.encode("utf-8") if isinstance(content, str) else content
        self.media_type = media_type

    @property
    def is_json(self) -> bool:
        return self.media_type == "application/json" or self.media_type.endswith("+json")

    def value(self) -> Any:
        """What the envelope carries: the decoded JSON, or the text."""
        if self.is_json:
            import json

            return json.loads(self.content)
        return self.content.decode("utf-8", errors="replace")

    def text(self) -> str:
        text = self.content.decode("utf-8", errors="replace")
        return text if text.endswith("\n") else text + "\n"

    def __repr__(self) -> str:
        return f"Document({len(self.content)} bytes, {self.media_type!r})"


def _default(obj: Any) -> Any:
    """What `json` cannot write itself, as what it can: the types a command may return."""
    import dataclasses
    import datetime
    import enum
    import pathlib

    if isinstance(obj, Document):
        return obj.value()
    if isinstance(obj, enum.Enum):
        return obj.value
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if isinstance(obj, datetime.date | datetime.time):  # datetimes too
        return obj.isoformat()
    if isinstance(obj, set | frozenset):
        try:
            return sorted(obj)  # the same set writes the same bytes in every process
        except TypeError:
            return sorted(obj, key=repr)
    if isinstance(obj, bytes | bytearray):
        import base64

        return base64.b64encode(obj).decode()
    dump = getattr(obj, "model_dump", None)
    if callable(dump):  # pydantic
        return dump(mode="json")
    if type(obj).__module__ in ("uuid", "decimal"):
        return str(obj)
    if any(c.__module__ == "msgspec" and c.__name__ == "Struct" for c in type(obj).__mro__):
        import msgspec

        return msgspec.to_builtins(obj)
    raise TypeError(f"a {type(obj).__name__} cannot be written as JSON")


def encode(value: Any) -> bytes:
    """Compact JSON, keys in the order the command gave them; dataclasses, enums, dates,
    paths, sets (sorted), UUIDs, decimals, bytes (base64), msgspec Structs and pydantic
    models included, non-finite floats as `null`. Raises `TypeError` for anything else,
    which the caller reports as a bug.

    The standard `json` module, not msgspec: importing msgspec would cost every call of
    every command ten milliseconds (bench/app_startup.py)."""
    import json

    try:
        text = json.dumps(
            value, default=_default, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except ValueError as exc:
        if "circular" in str(exc).lower():
            raise TypeError(str(exc)) from None
        return encode(_finite(value))  # NaN or infinity somewhere: JSON has no word for them
    return text.encode("utf-8", "surrogatepass")


def _finite(value: Any) -> Any:
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    default = _default(value) if not isinstance(value, str | int | bool | type(None)) else value
    return value if default is value else _finite(default)


def envelope(result: Any, meta: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "result": result, "meta": meta}


def error_envelope(error: ToolError, meta: dict[str, Any]) -> dict[str, Any]:
    """The failure envelope; `result` only when the command produced something before it
    failed (`ToolError(result=...)`)."""
    if error.has_result:
        return {"ok": False, "error": error.to_dict(), "result": error.result, "meta": meta}
    return {"ok": False, "error": error.to_dict(), "meta": meta}


# Rendering ------------------------------------------------------------------------------


def render_result(
    mode: str,
    result: Any,
    meta: dict[str, Any],
    out: IO[str],
    *,
    color: bool,
    print0: bool,
    text: Callable[[Any], str] | None = None,
    clean: Callable[[str], str] | None = None,
) -> None:
    """Write a successful result. Streams (`Iterator`s) are written item by item as they
    come, except in `json` mode, where the caller has collected them into the envelope.
    `text` is the command's own rendering for people (`@app.command(text=...)`).
    `clean` is what each text of the result goes through in `text` and `plain` output
    (the safety policy's: terminal escapes removed, instructions to a model marked); a
    `Document` in `plain` output is written verbatim all the same (`> file` saves it)."""
    wash: Callable[[str], str] = clean or _same
    if mode == "json":
        out.write(encode(envelope(result, meta)).decode() + "\n")
    elif isinstance(result, Document) and mode == "plain":
        out.write(result.text())
    elif isinstance(result, Document) and mode == "text" and not text:
        out.write(wash(result.text()))
    elif mode == "jsonl":
        for item in _items(result):
            out.write(encode(item).decode() + "\n")
            out.flush()
    elif mode == "plain":
        end = "\0" if print0 else "\n"
        for item in _items(result):
            out.write(_plain(item, wash) + end)
    elif isinstance(result, Iterator):  # a stream, for people: each item as it comes
        for item in result:
            if text is not None:
                out.write(wash(text(item)))
            else:
                _text(item, out, color=color, wash=wash)
            out.flush()
    elif text is not None:
        out.write(wash(text(result.value() if isinstance(result, Document) else result)))
    else:
        _text(result, out, color=color, wash=wash)


def _same(text: str) -> str:
    return text


def _items(result: Any) -> Iterable[Any]:
    if result is None:
        return ()
    if isinstance(result, Document):
        result = result.value()
    if isinstance(result, list | tuple | Iterator):
        return result
    return (result,)


def _plain(item: Any, wash: Callable[[str], str]) -> str:
    if isinstance(item, dict):
        return "\t".join(wash(_plain_field(v)) for v in item.values())
    if isinstance(item, list | tuple):
        return "\t".join(wash(_plain_field(v)) for v in item)
    return wash(_plain_field(item))


def _plain_field(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    if hasattr(value, "value") and not isinstance(value, dict):  # Enum
        return str(value.value)
    return encode(value).decode()


def _records(result: Any) -> list[dict[str, Any]] | None:
    """`result` as a list of flat records (for a table), if it is one."""
    if not isinstance(result, list) or not result:
        return None
    rows = [_as_mapping(r) for r in result]
    if not all(isinstance(r, dict) for r in rows):
        return None
    return rows


def _as_mapping(value: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return value


def _text(result: Any, out: IO[str], *, color: bool, wash: Callable[[str], str] = _same) -> None:
    result = _as_mapping(result)
    if result is None:
        return
    if color:
        try:
            _rich(result, out, wash)
            return
        except ImportError:
            pass
    rows = _records(result)
    if rows is not None:
        out.write(_table(rows, wash))
    elif isinstance(result, dict):
        keys = {key: wash(str(key)) for key in result}
        width = max((len(k) for k in keys.values()), default=0)
        for key, value in result.items():
            out.write(f"{keys[key] + ':':<{width + 1}} {wash(_plain_field(value))}\n")
    elif isinstance(result, list | tuple):
        for item in result:
            out.write(wash(_plain_field(_as_mapping(item))) + "\n")
    else:
        out.write(wash(_plain_field(result)) + "\n")


def _table(rows: list[dict[str, Any]], wash: Callable[[str], str] = _same) -> str:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    cells = [[wash(_plain_field(row.get(c))) for c in columns] for row in rows]
    columns = [wash(str(c)) for c in columns]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _rich(result: Any, out: IO[str], wash: Callable[[str], str]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out, highlight=True)
    rows = _records(result)
    if rows is not None:
        table = Table(show_edge=False, header_style="bold")
        columns: list[str] = []
        for row in rows:
            columns.extend(k for k in row if k not in columns)
        for column in columns:
            table.add_column(wash(str(column)))
        for row in rows:
            table.add_row(*(wash(_plain_field(row.get(c))) for c in columns))
        console.print(table)
    elif isinstance(result, dict):
        table = Table(show_header=False, show_edge=False, box=None)
        table.add_column(style="bold")
        table.add_column()
        for key, value in result.items():
            table.add_row(wash(str(key)), wash(_plain_field(value)))
        console.print(table)
    else:
        console.print(wash(_plain_field(result)), markup=False)


def render_error(
    mode: str,
    error: ToolError,
    meta: dict[str, Any],
    out: IO[str],
    err: IO[str],
    clean: Callable[[str], str] | None = None,
) -> None:
    """A failure: an envelope on stdout in `json`, a last line in `jsonl`, and lines on
    stderr for people otherwise (through `clean`, as a result's text: a message may
    quote what a hostile file said)."""
    wash: Callable[[str], str] = clean or _same
    if mode == "json":
        out.write(encode(error_envelope(error, meta)).decode() + "\n")
        return
    if mode == "jsonl":
        out.write(encode({"ok": False, "error": error.to_dict()}).decode() + "\n")
        return
    err.write(f"error: {wash(error.message)} [{error.code}]\n")
    if error.suggestion is not None:
        err.write(f"  fix: {wash(error.suggestion.fix)}\n")
        if error.suggestion.example:
            err.write(f"  example: {wash(error.suggestion.example)}\n")


def color_allowed(stream: IO[str], no_color: bool) -> bool:
    if no_color or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
