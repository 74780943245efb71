"""Security audit events the framework itself emits (PRD §14.6): one JSON line each, in
the project's audit log format (`atipkit.execute.audit.AuditLog`: appended with one
`write`, so parallel calls never interleave).

- `destructive`: a destructive command ran (not a dry run), how it was confirmed, its
  outcome.
- `confirmation_override`: `--yes` answered a confirmation a human would have been asked.
- `policy_denial`: a call refused for want of a human: no terminal to ask, declined at
  the prompt, or `--yes` not accepted for a command that needs approval.

The log is `$XDG_STATE_HOME/APP/audit.jsonl` (beside the idempotency keys), or the file
`PREFIX_AUDIT_LOG` names; `PREFIX_AUDIT_LOG=off` writes none. Arguments are recorded
with secret parameters replaced by `[secret]` and known secret shapes (tokens, keys)
redacted, so the log never holds a secret.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.command import CommandSpec
    from atipkit.app.context import Context
    from atipkit.app.invoke import CallOutcome

__all__ = ["SECRET", "audit_path", "record"]

SECRET = "[secret]"
_DENIALS = (ErrorCode.HUMAN_HANDOFF, ErrorCode.DECLINED, ErrorCode.NO_TERMINAL)


def audit_path(spec: CommandSpec) -> Path | None:
    app = spec.app
    chosen = os.environ.get(f"{app.env_prefix}_AUDIT_LOG", "").strip()
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen)
    from atipkit.app.idempotency import state_dir

    return state_dir(app.name) / "audit.jsonl"


def events(
    spec: CommandSpec, ctx: Context, outcome: CallOutcome, *, destructive: bool, mode: str
) -> list[dict[str, Any]]:
    """The events of one call, in the order they happened."""
    out = list(ctx.audit_events)
    error = outcome.error
    if error is not None and error.code in _DENIALS and (destructive or spec.human_in_the_loop):
        out.append({"event": "policy_denial", "code": str(error.code), "reason": error.message})
    elif destructive and not ctx.dry_run and not outcome.meta.get("replayed"):
        out.append(
            {
                "event": "destructive",
                "confirmed": ctx.confirmed_by or "not asked",
                "ok": error is None,
                "exit_code": outcome.exit_code,
            }
        )
    common = {"tool": spec.tool_name, "version": spec.app.version, "policy": mode}
    return [{**common, **event} for event in out]


def record(
    spec: CommandSpec,
    ctx: Context,
    outcome: CallOutcome,
    values: dict[str, Any] | None,
    *,
    destructive: bool,
    mode: str,
) -> None:
    """Append the call's events to the audit log. A log that cannot be written is a
    warning in `meta.warnings`, never a failed call: the work is done by then."""
    found = events(spec, ctx, outcome, destructive=destructive, mode=mode)
    path = audit_path(spec) if found else None
    if path is None:
        return
    arguments = _arguments(spec, values or {})
    from atipkit.execute.audit import AuditLog

    log = AuditLog(path)
    try:
        for event in found:
            log.record(**event, arguments=arguments)
    except OSError as exc:
        outcome.meta.setdefault("warnings", []).append(
            f"the audit log {path} could not be written: {exc.strerror or exc}"
        )


def _arguments(spec: CommandSpec, values: dict[str, Any]) -> dict[str, Any]:
    import json

    from atipkit.app.output import encode
    from atipkit.bridge.result_filter import ResultFilter

    secret = {p.name for p in spec.signature.params if p.marker.secret}
    shown = {k: (SECRET if k in secret else v) for k, v in values.items()}
    try:
        plain = json.loads(encode(shown))
    except TypeError:
        plain = {k: repr(v) for k, v in shown.items()}
    cleaned = ResultFilter(max_chars=None).structure(plain)
    return cleaned if isinstance(cleaned, dict) else {"redacted": cleaned}
