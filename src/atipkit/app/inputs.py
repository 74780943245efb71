"""Reading `StdinOr[T]`: one parameter that takes a file, a URL, `-` or piped stdin
(PRD §13); the marker itself is in `markers`.

    def count(data: Annotated[StdinOr[str], Argument(help="Text to count")]) -> int: ...

    $ count notes.txt          # the file
    $ count https://x/notes    # the URL (http and https only)
    $ count -                  # stdin
    $ cat notes.txt | count    # stdin, because it is piped
    $ count                    # on a terminal: the error 'missing input', never a hang

The function receives `T` itself: `str` (text, UTF-8), `bytes`, `list[str]` (lines, or
NUL-separated records with `--null`), a JSON value (`dict`, `list[dict]`, a model), or
`Path`: the file named, or, for stdin and URLs, a temporary file holding what was read
(removed when the call returns). Over MCP and HTTP there is no stdin and no caller's file
system: the parameter takes the data itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from atipkit.app.errors import DataFormatError, DependencyError, InputError, NotFoundError
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.context import Context
    from atipkit.app.markers import StdinSpec

__all__ = ["decode", "read_source", "sink", "spool", "stdin_binary"]


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def read_source(
    given: str | None, *, stdin: BinaryIO | None, limit: int, stdin_is_tty: bool
) -> tuple[bytes, str, Path | None]:
    """The bytes behind a `StdinOr` argument, where they came from (for messages), and
    the file's path when they came from one."""
    if given is None:
        if stdin is None or stdin_is_tty:
            raise InputError(
                "missing input: give a file, a URL or '-', or pipe data to stdin",
                code=ErrorCode.MISSING_INPUT,
                suggestion="Pass the input as an argument, or pipe it: cat FILE | TOOL ...",
            )
        return _read_capped(stdin, limit, "stdin"), "stdin", None
    if given == "-":
        if stdin is None:
            raise InputError(
                "'-' names stdin, and there is none here", code=ErrorCode.MISSING_INPUT
            )
        return _read_capped(stdin, limit, "stdin"), "stdin", None
    if _is_url(given):
        return _fetch(given, limit), given, None
    path = Path(given)
    try:
        with open(path, "rb") as handle:
            return _read_capped(handle, limit, given), given, path
    except FileNotFoundError:
        raise NotFoundError(
            f"no such file: {given}",
            suggestion="Check the path, or pass '-' to read stdin.",
            details={"path": given},
        ) from None
    except IsADirectoryError:
        raise InputError(f"{given} is a directory, not a file", code=ErrorCode.BAD_VALUE) from None


def _read_capped(handle: BinaryIO, limit: int, name: str) -> bytes:
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise DataFormatError(
            f"{name}: input larger than {limit} bytes",
            code=ErrorCode.INPUT_TOO_LARGE,
            details={"limit_bytes": limit},
        )
    return data


def _fetch(url: str, limit: int) -> bytes:
    from atipkit._http import Fetcher, HttpError, ResponseTooLarge

    try:
        with Fetcher() as fetcher:
            response = fetcher.get(url, max_bytes=limit)
    except ResponseTooLarge as exc:
        raise DataFormatError(
            str(exc), code=ErrorCode.INPUT_TOO_LARGE, details={"limit_bytes": limit}
        ) from None
    except HttpError as exc:
        raise DependencyError(str(exc), is_retryable=True, details={"url": url}) from None
    if response.status == 404:
        raise NotFoundError(f"{url}: 404 Not Found", details={"url": url})
    if response.status >= 400:
        raise DependencyError(
            f"{url}: HTTP {response.status}",
            is_retryable=response.status >= 500,
            details={"url": url, "status": response.status},
        )
    return response.content


def decode(data: bytes, spec: StdinSpec, source: str, *, null: bool) -> Any:
    """The value the function receives for `data` read from `source`."""
    if spec.want == "bytes":
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(
            f"{source}: not UTF-8 text (byte {exc.start}: 0x{data[exc.start]:02x})",
            code=ErrorCode.DATA_FORMAT,
        ) from None
    if spec.want == "text":
        return text
    if spec.want == "lines":
        if null:
            return [r for r in text.split("\0") if r]
        return text.splitlines()
    from atipkit import _jsontext
    from atipkit.errors import DocumentError

    try:  # bounded in depth like all JSON atipkit reads
        return _jsontext.decode(text, source)
    except DocumentError as exc:
        raise DataFormatError(str(exc), code=ErrorCode.DATA_FORMAT) from None


def spool(data: bytes, ctx: Context) -> Path:
    """`data` in a private temporary file (a `StdinOr[Path]` fed from stdin, a URL or
    JSON), removed when the call ends."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="atipkit-input-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    path = Path(name)
    ctx.cleanups.append(path.unlink)
    return path


def stdin_binary() -> BinaryIO | None:
    stream = sys.stdin
    if stream is None or stream.closed:
        return None
    return getattr(stream, "buffer", None)


def sink(ctx: Context) -> Path:
    """The temporary file a `StdoutOr` parameter given `-` writes to: its content is the
    call's result."""
    ctx.sink = spool(b"", ctx)
    return ctx.sink
