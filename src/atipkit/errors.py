"""One exception hierarchy for the whole library, and the codes its errors carry.

Every failure that a caller may want to handle has its own type, and every type derives
from `AtipError`, so `except atipkit.AtipError` catches all of them and nothing else. A
type that was a `ValueError`, `LookupError`, `ImportError` or `TimeoutError` before it
joined the tree stays one too, so the callers that catch the builtin keep working.
Exceptions that never leave their module (control flow, named `_...`) and warnings are
outside the tree.

Document errors carry the `Problem`s that explain them: where (file and JSON path, or line
and column) and what was expected.

The app framework's `atipkit.app.ToolError` (what a command reports to an agent: a code,
a category, an exit status) is an `AtipError` as well: one root, two branches. The
library's errors say what went wrong in a call to atipkit; a `ToolError` is the answer a
command gives its caller, and the commands of `atip` turn the first into the second at
their edge. Its `code` is an `ErrorCode`: every code any error carries is a member, with
what it means, and the reference page lists them from here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atipkit.problems import Problem


class ErrorCode(StrEnum):
    """The stable codes of `ToolError`s: agents branch on them, so they never change
    meaning. A member is its string (`ErrorCode.USAGE == "E1001"`), so JSON is as before.

    The first digit is the category (1 input, 2 auth, 3 state, 4 runtime, 5 internal);
    `x0xx` codes are the framework's, `x01x` codes those `atip` adds."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> ErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    USAGE = "E1001", "The call itself is wrong: an unknown option, a missing argument."
    BAD_VALUE = "E1002", "A value its parameter does not accept."
    DATA_FORMAT = (
        "E1003",
        "Input data that cannot be read: malformed JSON, not UTF-8, a model that does "
        "not validate.",
    )
    MISSING_INPUT = "E1004", "Input the command needs is missing (stdin named and none there)."
    BAD_CURSOR = "E1005", "A cursor this query did not give."
    NO_TERMINAL = "E1006", "An answer is needed and there is no terminal to ask."
    INPUT_TOO_LARGE = "E1007", "Input over the size cap."
    NO_DRY_RUN = "E1008", "`--dry-run` given to a command that does not support it."
    BAD_CONFIG = "E1009", "A configuration file that cannot be used."
    BAD_REGISTRY = (
        "E1010",
        "registry.json, an override or a pattern file cannot be read as what it should be.",
    )
    PERMISSION = "E2001", "Not allowed."
    HUMAN_HANDOFF = "E2002", "A human must act (approve, answer) before this can go on."
    DECLINED = "E2003", "Declined at the prompt."
    COMPROMISED = (
        "E2010",
        "A binary whose hash is not the one its metadata (or the shim's lookup key) names.",
    )
    NOT_VERIFIED = (
        "E2011",
        "A signature or provenance that was required, or asked for, does not verify.",
    )
    DENIED = "E2012", "A policy denies the call."
    ACCESS_DENIED = (
        "E2013",
        "A registry answered 401 or 403: the credentials are missing, or were refused.",
    )
    STATE = "E3000", "The world is not as the command needs it."
    NOT_FOUND = (
        "E3001",
        "What was named does not exist (for `atip`: no executable of that name on PATH, "
        "and no shim for it).",
    )
    CONFLICT = "E3002", "The resource is in a state that conflicts with the request."
    KEY_REUSED = "E3003", "An idempotency key reused with other arguments."
    NO_METADATA = (
        "E3011",
        "The executable exists, but nothing describes it (no `--agent`, no shim).",
    )
    DEPENDENCY = "E4001", "Something the command relies on (a service, a program) failed."
    TIMEOUT = "E4002", "The command ran out of time."
    TEMPORARY = "E4003", "A passing failure; retrying may succeed."
    MISSING_EXTRA = (
        "E4010",
        "An optional package the command needs is not installed (`pip install atipkit[...]`).",
    )
    INTERNAL = "E5001", "A bug: an exception the command did not expect."
    RESULT_MISMATCH = (
        "E5002",
        "A result that does not match the command's declared output schema (the tool's bug).",
    )


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
