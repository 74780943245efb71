"""What a call's report is (`Outcome.report()`, also `atip run`'s result), as a JSON
Schema: a module of its own so that a server declaring it as its tools' `outputSchema`
(the MCP gateway, answering its first `tools/list` before anything runs) need not import
the executor (decision 481)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from atipkit.policy.decision import Action

__all__ = ["REPORT_SCHEMA", "Stop"]

Stop = Literal["denied", "unconfirmed", "invalid-arguments", "input-refused", "not-started"]


_STRINGS = {"type": "array", "items": {"type": "string"}}
REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "call": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "tool": {"type": ["string", "null"]},
                "command": _STRINGS,
            },
            "required": ["name", "tool", "command"],
        },
        "decision": {"enum": list(get_args(Action))},
        "reasons": _STRINGS,
        "argv": {"anyOf": [_STRINGS, {"type": "null"}]},
        "exitCode": {"type": ["integer", "null"]},
        "isError": {"type": "boolean"},
        "text": {"type": "string"},
        "isolation": {"type": "string"},
        "stopped": {"enum": list(get_args(Stop))},
        "request": {"type": "object"},
        "structuredContent": {},
    },
    "required": ["call", "decision", "reasons", "argv", "exitCode", "isError", "text"],
}
"""The JSON Schema of `Outcome.report()`: what a server that answers with the report
declares as its tools' `outputSchema` (the MCP gateway)."""
