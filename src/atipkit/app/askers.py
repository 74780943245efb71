"""Who a served call asks when its command asks (`Context.confirm`,
`Context.require_approval`), in place of the terminal it does not have.

- MCP (`ElicitingAsker`): the human at the client, through form elicitation, the one
  way atipkit's MCP servers ask (`atipkit.serve.mcp.ask_yes_no`, the gateway's too).
  Yes is yes; no, or declining, is the `False` a "n" at the terminal gives, and the
  command decides what that means; dismissing the question stops the call (E2003).
  A client that offers no elicitation cannot be asked: the call stops with
  HumanHandoff (exit 101), saying so, unless the server was started with `--yes`.
  A session of the 2026-07-28 protocol has no requests from server to client: the
  question becomes the call's `InputRequiredResult` (`_InputNeeded`), and when the
  client calls again with the answer among its `input_responses` (keyed by a digest
  of the question), the command runs again from its start and finds it there. So a
  command should ask before it changes anything, as it would at a terminal.
  A human-in-the-loop approval is asked the same way; `--yes` never gives it.
- HTTP (`QueryAsker`): nobody; the request answers in advance with the `yes` query
  parameter (as `--yes` does), and a call that asks without it stops with E1006
  (exit 2, status 400) naming the question and the parameter. A human-in-the-loop
  approval cannot come over HTTP: HumanHandoff, as before.

The command runs in a thread of its own (`served.run_call`); `ElicitingAsker` waits
there while the server's event loop asks.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from atipkit.app.errors import AuthError, HumanHandoff, InputError, Suggestion
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.command import CommandSpec

__all__ = ["YES_PARAM", "ElicitingAsker", "QueryAsker"]

YES_PARAM = "yes"
"""The HTTP query parameter that answers yes to a command's questions."""


class _InputNeeded(HumanHandoff):
    """A question for a 2026-07-28 session, which the server sends as the call's
    `InputRequiredResult` (`request`) instead of an envelope. Retryable, so no
    idempotency key keeps it as the call's outcome."""

    def __init__(self, message: str, title: str, answered: dict[str, str]) -> None:
        import hashlib

        super().__init__(
            f"an answer is needed: {message}", is_retryable=True, details={"question": message}
        )
        self.key = "atipkit-" + hashlib.sha256(message.encode()).hexdigest()[:16]
        self.question = message
        self.title = title
        self.answered = answered
        """The answers of the rounds before, carried in `request_state` (the client's
        to echo, and its to answer anyway: no more trusted than `input_responses`)."""

    def request(self) -> Any:
        """The `InputRequiredResult` that asks it, the answers so far as its state."""
        import mcp.types as types

        from atipkit.serve.mcp import yes_no_schema

        ask = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=self.question, requested_schema=yes_no_schema(self.title)
            )
        )
        state = json.dumps(self.answered) if self.answered else None
        return types.InputRequiredResult(input_requests={self.key: ask}, request_state=state)


class ElicitingAsker:
    """Asks the human at an MCP client, from the command's thread. `yes`: the person
    who started the server answered yes to every question in advance (`--yes`).
    `responses` and `state`: the answers a 2026-07-28 client sent with this call, and
    those of the rounds before (`_InputNeeded.answered`, echoed)."""

    def __init__(
        self,
        ctx: Any,
        token: Any,
        *,
        yes: bool = False,
        responses: Any = None,
        state: str | None = None,
    ) -> None:
        from atipkit.serve.mcp import yes_no_answer

        self.ctx = ctx
        self.token = token
        self.yes = yes
        self.answered = _answers(state)
        self.answered.update({k: yes_no_answer(v) for k, v in dict(responses or {}).items()})

    def _ask(self, message: str, title: str) -> str | None:
        """The answer, or None when this client cannot be asked."""
        import anyio.from_thread

        from atipkit.serve.mcp import ask_yes_no, can_elicit, in_rounds

        if in_rounds(self.ctx):
            needed = _InputNeeded(message, title, self.answered)
            if needed.key not in self.answered:
                raise needed
            return self.answered[needed.key]
        if not can_elicit(self.ctx):
            return None
        try:
            return anyio.from_thread.run(ask_yes_no, self.ctx, message, title, token=self.token)
        except Exception as exc:  # the client failed to answer: nobody said yes
            raise AuthError(
                f"the client did not answer the question: {exc}",
                code=ErrorCode.DECLINED,
                details={"question": message},
            ) from None

    def _why_not(self) -> str:
        capabilities = getattr(getattr(self.ctx, "session", None), "client_capabilities", None)
        if capabilities is None or capabilities.elicitation is None:
            return "the client did not offer it"
        return "this session carries no requests from server to client"

    def confirm(self, tool: str, question: str, *, default: bool) -> bool:
        if self.yes:
            return True
        answer = self._ask(f"{tool}: {question}", "Yes")
        if answer is None:
            raise HumanHandoff(
                f"{tool} asks {question!r}, and this MCP client cannot be asked: the "
                f"server asks through elicitation, and {self._why_not()}",
                suggestion=Suggestion(
                    "Use an MCP client that supports elicitation, or ask the user to run "
                    "the command in a terminal (or to serve the app with --yes).",
                    action="ask_human",
                ),
                details={"question": question},
            )
        if answer == "cancel":
            raise AuthError(
                f"{tool}: the question {question!r} was dismissed without an answer",
                code=ErrorCode.DECLINED,
                suggestion=Suggestion("Ask again only if the user wants it.", action="abort"),
                details={"question": question, "answer": "cancel"},
            )
        return answer == "yes"

    def approve(self, tool: str, reason: str) -> bool | None:
        answer = self._ask(f"{tool} needs your approval: {reason}. Go ahead?", "Approve")
        return None if answer is None else answer == "yes"


def _answers(state: str | None) -> dict[str, str]:
    """The answers a `request_state` carries; nothing from one that is not ours."""
    try:
        found = json.loads(state) if state else {}
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {
        k: v
        for k, v in found.items()
        if isinstance(k, str) and k.startswith("atipkit-") and v in ("yes", "no", "cancel")
    }


class QueryAsker:
    """The HTTP API's: the request's `yes` parameter has answered already, so a
    question that reaches it is one nobody answered."""

    def __init__(self, spec: CommandSpec) -> None:
        self.spec = spec

    def confirm(self, tool: str, question: str, *, default: bool) -> bool:
        from atipkit.app.http import url_path

        raise InputError(
            f"{tool} asks {question!r}: answer yes with the query parameter {YES_PARAM}=true",
            code=ErrorCode.NO_TERMINAL,
            suggestion=Suggestion(
                f"Send the request again with ?{YES_PARAM}=true once the user agrees.",
                example=f"POST {url_path(self.spec)}?{YES_PARAM}=true",
            ),
            details={"question": question, "param": YES_PARAM},
        )

    def approve(self, tool: str, reason: str) -> bool | None:
        return None  # no HTTP request carries a human's approval
