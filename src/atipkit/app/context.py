"""`Context`: what a command may ask of the call it runs in.

A function that wants it declares a parameter of type `Context` (any name); it never
becomes a flag or a schema property:

    @app.command(dry_run=True)
    def clean(path: Path, ctx: Context) -> dict:
        for f in stale(path):
            if ctx.dry_run:
                ctx.plan("delete", str(f))
            else:
                f.unlink()
        return {"cleaned": ...}

Prompts read the terminal (`/dev/tty`), never stdin, which may carry data (PRD §8.2);
where there is no terminal, or `--no-input` was given, they fail with a structured
error instead of hanging. A call that came through a server has no terminal: its
server passes an `Asker` instead (MCP asks the client's user through elicitation; HTTP
says which parameter answers yes).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

from atipkit.app.errors import AuthError, HumanHandoff, InputError, Suggestion
from atipkit.app.flags import CallSettings
from atipkit.errors import ErrorCode

__all__ = ["Asker", "Context"]


class Asker(Protocol):
    """Who a served call asks in place of the terminal."""

    def confirm(self, tool: str, question: str, *, default: bool) -> bool:
        """The answer to a yes/no question, or the `ToolError` that says why there is
        none."""
        ...

    def approve(self, tool: str, reason: str) -> bool | None:
        """A human's approval (True), refusal (False), or None: nobody can be asked."""
        ...


class Context:
    """The call a command runs in: its settings, diagnostics, dry-run plan, prompts."""

    def __init__(
        self,
        *,
        tool: str,
        settings: CallSettings,
        interactive: bool,
        err: IO[str] | None = None,
        echo_warnings: bool = False,
        asker: Asker | None = None,
    ) -> None:
        self.tool = tool
        """`app.command` (dotted), as in the envelope's `meta.tool`."""
        self.settings = settings
        self.interactive = interactive
        """Whether a human can be asked (a terminal is reachable and prompts are allowed)."""
        self.warnings: list[str] = []
        self.actions: list[dict[str, Any]] = []
        self.cleanups: list[Callable[[], object]] = []
        self.sink: Path | None = None
        """Where a `StdoutOr` parameter given `-` points: its content is the result."""
        """Run when the call ends, whatever the outcome (temporary input files)."""
        self.audit_events: list[dict[str, Any]] = []
        """Audit events of this call (`atipkit.app.audit`), written when it ends."""
        self.confirmed_by: str | None = None
        """How a destructive command was confirmed: `terminal`, `--yes`, `approval`."""
        self.secrets: list[str] = []
        """Values read from secret files: never written to output, errors or logs."""
        self._err = err
        self._echo_warnings = echo_warnings
        self._asker = asker

    @property
    def dry_run(self) -> bool:
        return self.settings.dry_run

    @property
    def detailed(self) -> bool:
        """`--response-format detailed`: the caller wants the long form."""
        return self.settings.response_format == "detailed"

    @property
    def verbose(self) -> int:
        return self.settings.verbose

    @property
    def quiet(self) -> bool:
        return self.settings.quiet

    def warn(self, message: str) -> None:
        """A warning: in `meta.warnings` of the envelope, and on stderr for humans."""
        message = self._withheld(message)
        self.warnings.append(message)
        if self._echo_warnings and not self.settings.quiet and self._err is not None:
            self._err.write(f"warning: {message}\n")

    def info(self, message: str) -> None:
        """A note for people (a summary, what was skipped): on stderr in text and plain
        output, never in JSON output (machines find the same facts in the result), never
        with `--quiet`."""
        if self._echo_warnings and not self.settings.quiet and self._err is not None:
            self._err.write(f"{self._withheld(message)}\n")

    def log(self, message: str, *, level: int = 1) -> None:
        """A diagnostic on stderr, shown from `-v` (level 1), `-vv` (2), ...; never on
        stdout, never with `--quiet`."""
        if self._err is not None and not self.settings.quiet and self.settings.verbose >= level:
            self._err.write(f"{self._withheld(message)}\n")

    def _withheld(self, message: str) -> str:
        if not self.secrets:
            return message
        from atipkit.app.secrets import withhold

        return str(withhold(message, self.secrets))

    @property
    def progress_stream(self) -> IO[str] | None:
        """Where a progress display may draw: stderr, when it is a terminal and the output
        is for people (text or plain); None on a pipe, with `--json` and with `--quiet`,
        where nothing at all is drawn."""
        err = self._err
        if err is None or self.settings.quiet or not self._echo_warnings or not _isatty(err):
            return None
        return err

    def progress(self, message: str | None) -> None:
        """A progress line for people: rewritten in place on `progress_stream`, never
        written anywhere else. None clears it."""
        err = self.progress_stream
        if err is None:
            return
        err.write("\r\x1b[K" + (message or ""))
        err.flush()

    def plan(self, action: str, target: str | None = None, **details: Any) -> None:
        """Record what the command would do; with `--dry-run` the plan is the result."""
        entry: dict[str, Any] = {"action": action}
        if target is not None:
            entry["target"] = target
        if details:
            entry["details"] = details
        self.actions.append(entry)

    def confirm(self, question: str, *, default: bool = False) -> bool:
        """Ask a yes/no question on the terminal. `--yes` answers yes; with no terminal
        or with `--no-input`, the call fails with exit 2 and says to pass `--yes`.
        Through a server, its `Asker` answers (or says why nobody can)."""
        if self.settings.yes:
            self.audit_events.append({"event": "confirmation_override", "question": question})
            return True
        if self._asker is not None:
            return self._asker.confirm(self.tool, question, default=default)
        answer = self._ask(f"{question} [{'Y/n' if default else 'y/N'}]: ", secret=False)
        answer = answer.strip().lower()
        if not answer:
            return default
        return answer in ("y", "yes")

    def prompt(self, question: str, *, secret: bool = False) -> str:
        """Ask for a value on the terminal (`secret` hides what is typed)."""
        return self._ask(f"{question}: ", secret=secret)

    def require_approval(self, reason: str) -> None:
        """Human-in-the-loop: go on only if a human at the terminal (or the server's
        `Asker`) says yes. `--yes` does not count (PRD §14.4): without a human this is
        exit 101."""
        approved = None if self._asker is None else self._asker.approve(self.tool, reason)
        if approved is False:
            raise AuthError(
                "declined by the human asked", code=ErrorCode.DECLINED, details={"reason": reason}
            )
        if approved:
            self.confirmed_by = "approval"
            return
        if not self.interactive:
            raise HumanHandoff(
                f"{self.tool} needs a human's approval: {reason}",
                suggestion=Suggestion(
                    "Ask the user to run this command themselves, in a terminal.",
                    action="ask_human",
                ),
                details={"reason": reason},
            )
        answer = self._ask(f"{reason}. Go ahead? [y/N]: ", secret=False).strip().lower()
        if answer not in ("y", "yes"):
            raise AuthError(
                "declined at the prompt", code=ErrorCode.DECLINED, details={"reason": reason}
            )
        self.confirmed_by = "approval"

    def _ask(self, text: str, *, secret: bool) -> str:
        if not self.interactive:
            raise InputError(
                "this needs an answer and there is no terminal to ask"
                + (" (--no-input)" if self.settings.no_input else ""),
                code=ErrorCode.NO_TERMINAL,
                suggestion=Suggestion("Pass --yes to answer yes.", example=None),
            )
        return _ask_tty(text, secret=secret)


def _isatty(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def terminal_available() -> bool:
    """Whether `/dev/tty` can be opened: a controlling terminal exists, so a human may
    be there even when stdin and stdout are pipes."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


def _ask_tty(text: str, *, secret: bool) -> str:
    if secret:
        import getpass

        return getpass.getpass(text)  # getpass reads /dev/tty itself when it can
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        raise InputError("the terminal could not be opened", code=ErrorCode.NO_TERMINAL) from None
    try:
        os.write(fd, text.encode("utf-8"))
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = os.read(fd, 1024)
            if not chunk:
                raise InputError(
                    "no answer (end of input on the terminal)", code=ErrorCode.NO_TERMINAL
                )
            answer += chunk
    except OSError:
        raise InputError("the terminal could not be read", code=ErrorCode.NO_TERMINAL) from None
    finally:
        os.close(fd)
    return answer.decode("utf-8", errors="replace").rstrip("\r\n")
