"""A TDP tool's orchestration metadata from an ATIP command's effects.

TDP asks what an orchestrator needs before a call (approval, a timeout, the cost, whether
it runs long, retries are safe); ATIP states effects. Each field is derived from the
effects the command states, never guessed from unknown ones, and the tags spell the
bridge's safety flags as words.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from atipkit._duration import parse_duration
from atipkit.checks import KNOWN_COST_ESTIMATES
from atipkit.interop.tdp.examples import example_input
from atipkit.model import UNSET, Effects, Tool

if TYPE_CHECKING:
    from atipkit.bridge.flatten import FlatTool, Target
    from atipkit.model import Command

LONG_RUNNING = 30.0
"""A command whose typical duration (else its timeout) reaches this many seconds is
`long_running`."""


def tool_metadata(flat: FlatTool, tool: Tool, command: Command, target: Target) -> dict[str, Any]:
    """The `metadata` of the TDP tool that `flat` (the bridge's tool for `command`)
    becomes: only the fields its effects and examples give, as snake_case JSON."""
    effects = flat.effects
    meta: dict[str, Any] = {
        "enabled_by_default": not command.deprecated,
        "requires_approval": _requires_approval(effects),
    }
    if effects.duration and effects.duration.timeout:
        seconds = parse_duration(effects.duration.timeout)
        meta["timeout_seconds"] = max(1, math.ceil(seconds))
    if effects.cost and effects.cost.estimate in KNOWN_COST_ESTIMATES:
        estimate = effects.cost.estimate  # TDP's words are ATIP's but `none`: that is low
        meta["cost_estimate"] = "low" if estimate == "none" else estimate
    long_running = _long_running(effects)
    if long_running is not None:
        meta["long_running"] = long_running
    if effects.idempotent is not UNSET:
        meta["idempotent"] = effects.idempotent
    tags = _tags(effects, command)
    if tags:
        meta["tags"] = tags
    examples = []
    for line in command.examples:
        given = example_input(line, tool, target, flat.input_schema)
        if given is not None:
            examples.append({"description": line, "input": given})
    if examples:
        meta["examples"] = examples
    return meta


def _requires_approval(effects: Effects) -> bool:
    """What a person should approve first: a command that destroys data, cannot be undone
    or costs money, as its effects state (unknown effects do not count)."""
    billable = bool(effects.cost and effects.cost.billable is True)
    return effects.destructive is True or effects.reversible is False or billable


_TYPICAL = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h|d)\b")


def _long_running(effects: Effects) -> bool | None:
    """From the typical duration (its upper bound: `1-5s` is 5 s), else the timeout;
    None when neither says a time."""
    duration = effects.duration
    if not duration:
        return None
    if duration.typical:
        found = _TYPICAL.findall(duration.typical)
        if found:
            number, unit = found[-1]
            return parse_duration(number + unit) >= LONG_RUNNING
    if duration.timeout:
        return parse_duration(duration.timeout) >= LONG_RUNNING
    return None


def _tags(effects: Effects, command: Command) -> list[str]:
    from atipkit.bridge import safety

    words = {
        safety.DESTRUCTIVE: "destructive",
        safety.NOT_REVERSIBLE: "not-reversible",
        safety.NOT_IDEMPOTENT: "not-idempotent",
        safety.BILLABLE: "billable",
        safety.READ_ONLY: "read-only",
    }
    tags = [words[flag] for flag in safety.flags(effects)]
    if effects.network is True:
        tags.append("network")
    interactive = effects.interactive
    if interactive and (
        interactive.prompts is True
        or interactive.tty is True
        or interactive.stdin in ("required", "password")
    ):
        tags.append("interactive")
    if command.deprecated:
        tags.append("deprecated")
    return tags
