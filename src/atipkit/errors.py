"""One exception hierarchy for the whole library.

Every failure that a caller may want to handle has its own type, and every type derives
from `AtipError`, so `except atipkit.AtipError` catches all of them and nothing else.
Document errors carry the `Problem`s that explain them: where (file and JSON path, or line
and column) and what was expected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atipkit.problems import Problem


class AtipError(Exception):
    """Base class of every error raised by atipkit."""


class DocumentError(AtipError, ValueError):
    """An ATIP document that cannot be accepted.

    `problems` lists every error found (at least one); `source` names the file or stream
    it came from. `str()` gives the first problem as one line, ready for a terminal.
    """

    def __init__(self, problems: list[Problem], source: str | None = None) -> None:
        if not problems:
            raise ValueError("a DocumentError needs at least one problem")
        self.problems = problems
        self.source = source
        super().__init__(problems[0].format(source))


class MalformedJSON(DocumentError):
    """The bytes are not a JSON text: bad syntax, bad UTF-8, or empty.

    `line` and `column` (1-based, column counted in characters) point at the fault.
    """

    def __init__(
        self, problems: list[Problem], source: str | None = None, *, line: int, column: int
    ) -> None:
        self.line = line
        self.column = column
        super().__init__(problems, source)


class DocumentTooLarge(DocumentError):
    """The document exceeds a size or nesting limit; it was not (fully) read."""


class UnsupportedVersion(DocumentError):
    """The document declares an ATIP major version this library does not implement."""


class InvalidDocument(DocumentError):
    """Well-formed JSON that violates the ATIP schema or the model's rules."""
