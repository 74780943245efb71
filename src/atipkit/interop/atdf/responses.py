"""An executor's `Outcome` as an ATDF enriched response (`enriched_response_schema.json`).

A failed call becomes `status: error` with `data.code` (one of `codes`), a message, and
details an agent can act on: the `field` at fault, what was `received`, the `expected`
conditions (with valid examples where there are some), what each check found
(`validation_results`) and a `solution`. A successful call becomes `status: success`
with the filtered output. What reaches the model is only what the executor already let
through its result filter (`Outcome.text`), never the raw stdout or stderr.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING, Any

from atipkit.interop.atdf import codes
from atipkit.interop.atdf.schemas import require_valid

if TYPE_CHECKING:
    from atipkit.execute.executor import Outcome

Details = dict[str, Any]


def enriched_response(outcome: Outcome, *, now: dt.datetime | None = None) -> dict[str, Any]:
    """The enriched response for one outcome; `now` (default: the current time) is its
    `meta.timestamp`. Checked against the schema before it is returned."""
    call = outcome.call
    meta: dict[str, Any] = {"timestamp": _timestamp(now), "tool_name": call.name}
    if call.id:
        meta["call_id"] = call.id
    if outcome.result is not None:
        meta["exit_code"] = outcome.result.exit_code
        meta["seconds"] = round(outcome.result.seconds, 3)
    if outcome.is_error:
        code, message, details = _failure(outcome)
        data: dict[str, Any] = {"code": code, "message": message, "details": details}
        response = {"status": "error", "data": data, "meta": meta}
    else:
        response = {"status": "success", "data": _success(outcome), "meta": meta}
    require_valid(response, "enriched-response", "enriched response")
    return response


def _timestamp(now: dt.datetime | None) -> str:
    moment = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _title(outcome: Outcome) -> str:
    call = outcome.call
    return " ".join((call.tool, *(call.path or ()))) if call.tool else call.name


def _success(outcome: Outcome) -> dict[str, Any]:
    argv = outcome.invocation.argv if outcome.invocation else None
    if outcome.result is None:
        return {"message": f"dry run: {_title(outcome)} was not run", "argv": argv}
    return {
        "message": f"{_title(outcome)} succeeded",
        "output": outcome.text,
        "exit_code": outcome.result.exit_code,
        "argv": argv,
    }


def _failure(outcome: Outcome) -> tuple[str, str, Details]:
    call, result, stopped = outcome.call, outcome.result, outcome.stopped
    if stopped == "invalid-arguments":  # before `ok`: unknown or missing parameters too
        return _invalid_arguments(outcome)
    if not call.ok:
        return _invalid_call(outcome)
    if stopped in ("denied", "unconfirmed"):
        return _denied(outcome, confirm=stopped == "unconfirmed")
    if stopped == "input-refused":
        return (
            codes.INPUT_REFUSED,
            outcome.text,
            _details(
                "stdin",
                {"arguments": call.arguments},
                [outcome.text.removeprefix("not run: ")],
                "Its input cannot come from this call: ask the user to run it, or use "
                "another command.",
            ),
        )
    if stopped == "not-started":
        executable = outcome.invocation.argv[0] if outcome.invocation else call.name
        return (
            codes.NOT_STARTED,
            outcome.text,
            _details(
                "executable",
                {"executable": executable},
                [f"{executable} is installed and can be run"],
                f"{executable} could not be started: the values are not at fault, so do not "
                "retry with others; tell the user it is missing.",
            ),
        )
    if result is None:  # the call names a tool the executor was not given
        return (
            codes.UNKNOWN_TOOL,
            outcome.text.removeprefix("error: "),
            _details(
                "name",
                {"name": call.name, "tool": call.tool},
                ["the call names one of the tools given"],
                "Call one of the tools you were given.",
            ),
        )
    received = {"exit_code": result.exit_code, "output": outcome.text}
    if result.timed_out:
        return (
            codes.TIMED_OUT,
            f"{_title(outcome)} timed out after {result.seconds:.1f} s",
            _details(
                "duration",
                {**received, "seconds": round(result.seconds, 3)},
                ["the command finishes within its timeout"],
                "Ask for less (a narrower scope, fewer items) and retry, or ask the user to "
                "run it without a time limit.",
            ),
        )
    if result.truncated and result.exit_code is None:
        return (
            codes.OUTPUT_TOO_LARGE,
            f"{_title(outcome)} wrote more output than the cap and was stopped",
            _details(
                "output",
                received,
                ["the output stays under the cap"],
                "Ask for less output (filters, limits, a narrower scope) and retry.",
            ),
        )
    return (
        codes.NON_ZERO_EXIT,
        f"{_title(outcome)} exited with status {result.exit_code}",
        _details(
            "exit_code",
            received,
            ["exit status 0"],
            "Read the output for the reason; fix the values or the situation it names, then retry.",
        ),
    )


def _details(
    field: str,
    received: dict[str, Any],
    conditions: list[str],
    solution: str,
    *,
    examples: dict[str, Any] | None = None,
    results: dict[str, bool] | None = None,
) -> Details:
    expected: dict[str, Any] = {"conditions": conditions}
    if examples:
        expected["examples"] = {"valid": examples}
    details: Details = {"field": field, "received": received, "expected": expected}
    if results:
        details["validation_results"] = results
    details["solution"] = solution
    return details


def _invalid_call(outcome: Outcome) -> tuple[str, str, Details]:
    call = outcome.call
    reason = call.error or "the call does not fit any tool"
    return (
        codes.INVALID_CALL,
        reason,
        _details(
            "name",
            {"name": call.name, "arguments": call.arguments},
            [reason],
            "Call one of the tools you were given, with the arguments its schema lists.",
        ),
    )


def _denied(outcome: Outcome, *, confirm: bool) -> tuple[str, str, Details]:
    call = outcome.call
    reasons = [r.removeprefix("not confirmed: ") for r in outcome.decision.reasons]
    received = {"name": call.name, "command": list(call.path or ()), "arguments": call.arguments}
    if confirm:
        return (
            codes.CONFIRMATION_REQUIRED,
            f"{_title(outcome)} needs a person's confirmation, and it was not given",
            _details(
                "name",
                received,
                ["a person confirms the call"],
                "Ask the user whether to run it, or use a safer command.",
                results=dict.fromkeys(reasons, False),
            ),
        )
    return (
        codes.DENIED_BY_POLICY,
        f"{_title(outcome)} is denied by the policy: {'; '.join(reasons)}",
        _details(
            "name",
            received,
            ["the policy allows the call"],
            "Do not retry: the policy forbids it. Tell the user what you meant to do, or "
            "use another command.",
            results=dict.fromkeys(reasons, False),
        ),
    )


def _invalid_arguments(outcome: Outcome) -> tuple[str, str, Details]:
    """The executor's `problems`, one for each value that does not fit (the same as the
    ATDF error in `text` that the model reads); an outcome stopped for invalid arguments
    has at least one."""
    call, problems = outcome.call, outcome.problems
    fixes = "; ".join(
        f"{p.parameter} must be {p.expected}"
        + (f", e.g. {json.dumps(p.example, ensure_ascii=False)}" if p.example is not None else "")
        for p in problems
    )
    return (
        codes.INVALID_ARGUMENTS,
        "; ".join(f"{p.parameter}: {p.message}" for p in problems),
        _details(
            problems[0].parameter,
            {p.parameter: p.received for p in problems},
            [f"{p.parameter}: {p.expected}" for p in problems],
            f"Call {call.name} again with valid values: {fixes}.",
            examples={p.parameter: p.example for p in problems if p.example is not None},
            results={p.parameter: False for p in problems},
        ),
    )
