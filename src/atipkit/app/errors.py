"""Errors an agent can reason about (PRD §10), and the exit codes they map to.

Every failure of a command, whether the author raised it or the framework met it (a bad
flag, a missing input, a timeout), ends as one `ToolError`: a stable `code`, a `category`,
a one-line `message`, an optional `Suggestion` for the agent's next attempt, whether a
retry may succeed, and `details` for machines. Its class fixes the exit status (SPEC-NOTES
23), so an agent that only sees `$?` still knows what kind of failure it met.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar, Literal

from atipkit.errors import AtipError, ErrorCode

__all__ = [
    "AuthError",
    "ConflictError",
    "DataFormatError",
    "DefinitionError",
    "DependencyError",
    "ErrorCategory",
    "ExitCode",
    "HumanHandoff",
    "InputError",
    "InternalError",
    "NotFoundError",
    "PermissionDeniedError",
    "StateError",
    "Suggestion",
    "TemporaryError",
    "TimeoutExpired",
    "ToolError",
    "from_exception",
]


class DefinitionError(AtipError, TypeError):
    """A command that cannot be defined as written: an unsupported type, a flag that
    collides with a global one, two variadic arguments. Raised when the command is
    built, so the author sees it before any user does. (Not a `ToolError`: it is the
    author's mistake, never a call's.)"""


class ExitCode:
    """The exit statuses of PRD §8.4, meaning for meaning (SPEC-NOTES 23)."""

    OK = 0
    USAGE = 2
    NOT_FOUND = 10
    CONFLICT = 20
    PERMISSION = 30
    DEPENDENCY = 40
    TIMEOUT = 50
    DATA_FORMAT = 65
    INTERNAL = 70
    TEMPORARY = 75
    HUMAN_HANDOFF = 101


class ErrorCategory(StrEnum):
    INPUT = "input"
    AUTH = "auth"
    STATE = "state"
    RUNTIME = "runtime"
    INTERNAL = "internal"


Action = Literal["retry_with_modified_input", "use_different_tool", "abort", "retry", "ask_human"]
Applicability = Literal["machine_applicable", "maybe_incorrect", "has_placeholders"]


class Suggestion:
    """What the agent should do differently (PRD §10.2)."""

    __slots__ = ("action", "applicability", "example", "fix")

    def __init__(
        self,
        fix: str,
        *,
        action: Action = "retry_with_modified_input",
        example: str | None = None,
        applicability: Applicability = "maybe_incorrect",
    ) -> None:
        self.fix = fix
        self.action = action
        self.example = example
        self.applicability = applicability

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "fix": self.fix}
        if self.example is not None:
            out["example"] = self.example
        out["applicability"] = self.applicability
        return out

    def __repr__(self) -> str:
        return f"Suggestion({self.fix!r}, action={self.action!r})"


class _Nothing:
    def __repr__(self) -> str:
        return "NOTHING"


_NOTHING: Any = _Nothing()
NOTHING = _NOTHING


class ToolError(AtipError):
    """Base of every error a command reports. Raise a subclass; the class decides the
    category, the exit status and whether a retry may help, and each instance may
    override `code` (an `ErrorCode`, or a code of the tool's own) and `is_retryable`.
    An `AtipError`: the answer a command gives, in the one tree of atipkit's errors."""

    category: ClassVar[ErrorCategory] = ErrorCategory.INTERNAL
    exit_code: ClassVar[int] = ExitCode.INTERNAL
    default_code: ClassVar[ErrorCode] = ErrorCode.INTERNAL
    retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | str | None = None,
        suggestion: Suggestion | str | None = None,
        is_retryable: bool | None = None,
        details: dict[str, Any] | None = None,
        result: Any = _NOTHING,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = str(code or self.default_code)  # a plain str in the envelope, as before
        if isinstance(suggestion, str):
            suggestion = Suggestion(suggestion)
        self.suggestion = suggestion
        self.is_retryable = self.retryable if is_retryable is None else is_retryable
        self.details = details or {}
        self.result = result
        """What the command produced before it failed (a validation report, what was
        uploaded before the upload that failed), or `NOTHING`. The failure envelope
        carries it as `result`; text output renders it before the error."""

    @property
    def has_result(self) -> bool:
        return self.result is not _NOTHING

    def to_dict(self) -> dict[str, Any]:
        """The `error` object of the envelope (PRD §10.3); keys in a fixed order."""
        out: dict[str, Any] = {
            "code": self.code,
            "category": self.category.value,
            "message": self.message,
        }
        if self.suggestion is not None:
            out["suggestion"] = self.suggestion.to_dict()
        out["is_retryable"] = self.is_retryable
        if self.details:
            out["details"] = self.details
        out["exit_code"] = self.exit_code
        return out


class InputError(ToolError):
    """E1xxx: the call itself is wrong (a bad value, a missing argument). Exit 2."""

    category = ErrorCategory.INPUT
    exit_code = ExitCode.USAGE
    default_code = ErrorCode.USAGE


class DataFormatError(InputError):
    """Input data that cannot be read as what it should be (malformed JSON, a model
    that does not validate, input too large). Exit 65."""

    exit_code = ExitCode.DATA_FORMAT
    default_code = ErrorCode.DATA_FORMAT


class AuthError(ToolError):
    """E2xxx: not allowed. Exit 30."""

    category = ErrorCategory.AUTH
    exit_code = ExitCode.PERMISSION
    default_code = ErrorCode.PERMISSION


PermissionDeniedError = AuthError


class HumanHandoff(ToolError):
    """A human must act (approve, answer a prompt) before this can go on. Exit 101."""

    category = ErrorCategory.AUTH
    exit_code = ExitCode.HUMAN_HANDOFF
    default_code = ErrorCode.HUMAN_HANDOFF


class StateError(ToolError):
    """E3xxx: the world is not as the command needs it. Exit 20 (conflict) unless a
    subclass says otherwise."""

    category = ErrorCategory.STATE
    exit_code = ExitCode.CONFLICT
    default_code = ErrorCode.STATE


class NotFoundError(StateError):
    """The resource named does not exist. Exit 10."""

    exit_code = ExitCode.NOT_FOUND
    default_code = ErrorCode.NOT_FOUND


class ConflictError(StateError):
    """The resource is in a state that conflicts with the request. Exit 20."""

    default_code = ErrorCode.CONFLICT


class DependencyError(ToolError):
    """E4xxx: something the command relies on (a service, a program) failed. Exit 40."""

    category = ErrorCategory.RUNTIME
    exit_code = ExitCode.DEPENDENCY
    default_code = ErrorCode.DEPENDENCY


class TimeoutExpired(ToolError):
    """The command ran out of time. Exit 50; a retry, with backoff, may succeed."""

    category = ErrorCategory.RUNTIME
    exit_code = ExitCode.TIMEOUT
    default_code = ErrorCode.TIMEOUT
    retryable = True


class TemporaryError(ToolError):
    """A passing failure; retrying may succeed. Exit 75."""

    category = ErrorCategory.RUNTIME
    exit_code = ExitCode.TEMPORARY
    default_code = ErrorCode.TEMPORARY
    retryable = True


class InternalError(ToolError):
    """A bug: an exception the command did not expect. Exit 70."""


def from_exception(exc: BaseException) -> ToolError:
    """The `ToolError` for any exception a command let escape.

    The OS errors whose meaning is unambiguous keep it (a missing file is 'not found',
    a refused permission is 'permission'); anything else is an internal error that
    names the exception's type, never its traceback.
    """
    if isinstance(exc, ToolError):
        return exc
    text = str(exc) or type(exc).__name__
    details = {"exception": type(exc).__name__}
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(text, details=details)
    if isinstance(exc, PermissionError):
        return AuthError(text, details=details)
    if isinstance(exc, TimeoutError):
        return TimeoutExpired(text, details=details)
    if isinstance(exc, ConnectionError):
        return DependencyError(text, is_retryable=True, details=details)
    return InternalError(
        f"{type(exc).__name__}: {text}",
        details=details,
        suggestion=Suggestion(
            "This is a bug in the tool, not in the call; report it.", action="abort"
        ),
    )
