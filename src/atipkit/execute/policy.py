"""Deciding whether a call may run: allow, deny (why) or confirm (why).

The effect, trust and omitted-command rules are the bridge Validator's (one place for
them); this adds what only an executor knows — the values (paths), how many billable calls
already ran, delegation (RFC 0.6 §10.2) — and walks up the chain of narrowed policies,
keeping the strictest answer.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from atipkit.bridge.flatten import ParamRef
from atipkit.bridge.validator import Validator
from atipkit.model import UNSET, CommandPath, Effects, Tool, effective_effects, get_command
from atipkit.policy import Policy

Action = Literal["allow", "deny", "confirm"]
_RANK = {"allow": 0, "confirm": 1, "deny": 2}


class Decision(msgspec.Struct, frozen=True):
    action: Action
    reasons: list[str] = []

    @property
    def allowed(self) -> bool:
        return self.action == "allow"


def decide(
    policy: Policy,
    tool: Tool,
    path: CommandPath,
    values: Mapping[ParamRef, Any] | None = None,
    *,
    billable_used: int = 0,
    cwd: str | None = None,
    trust_level: int | None = None,
) -> Decision:
    """The strictest decision of `policy` and every policy it was narrowed from.
    `trust_level` is the binary's verified `TrustLevel`, when it was verified."""
    decisions = []
    current: Policy | None = policy
    while current is not None:
        decisions.append(_decide_one(current, tool, path, values or {}, billable_used, cwd))
        if trust_level is not None:
            decisions.append(_verification(current, trust_level))
        current = current.parent
    action = max((d.action for d in decisions), key=_RANK.__getitem__)
    reasons = [r for d in decisions if d.action == action for r in d.reasons]
    return Decision(action, list(dict.fromkeys(reasons)))


def _decide_one(
    policy: Policy,
    tool: Tool,
    path: CommandPath,
    values: Mapping[ParamRef, Any],
    billable_used: int,
    cwd: str | None,
) -> Decision:
    denied: list[str] = []
    confirm: list[str] = []
    for problem in Validator(tool, policy).check_command(tool.name, path):
        if (
            problem.code == "policy.billable"
            and policy.billable_budget is not None
            and billable_used < policy.billable_budget
        ):
            continue  # within the budget
        (denied if problem.is_error else confirm).append(problem.message)
    try:
        effects: Effects | None = effective_effects(tool, path)
    except KeyError:
        effects = None  # an omitted command: the Validator said what that means
    if policy.delegation:
        denied += _delegation(policy, tool, path, effects)
    denied += _paths(policy, tool, path, values, cwd)
    if denied:
        return Decision("deny", denied)
    return Decision("confirm", confirm) if confirm else Decision("allow")


def _verification(policy: Policy, level: int) -> Decision:
    from atipkit.trust.levels import TrustLevel

    verified = TrustLevel(level)
    if verified is TrustLevel.COMPROMISED:
        return Decision("deny", ["the binary does not match its metadata (COMPROMISED)"])
    if policy.minimum_verification and verified < TrustLevel[policy.minimum_verification]:
        return Decision(
            "deny",
            [f"the binary is {verified.name}; the policy requires {policy.minimum_verification}"],
        )
    return Decision("allow")


def _delegation(
    policy: Policy, tool: Tool, path: CommandPath, effects: Effects | None
) -> list[str]:
    assert policy.delegation is not None
    rules = policy.delegation
    words = [tool.name, *path]
    out = []
    if rules.allowed_tools is not None and tool.name not in rules.allowed_tools:
        out.append(f"{tool.name} is not among the delegated tools")
    for prefix in rules.denied_commands:
        denied = prefix.split()
        if words[: len(denied)] == denied:
            out.append(f"{' '.join(words)!r} is denied by delegation ({prefix!r})")
    for effect, allowed in rules.effect_restrictions.items():
        if allowed:
            continue
        value = _effect(effects, effect) if effects is not None else True  # unknown: no
        if value is True:
            out.append(f"delegation forbids {effect} commands")
    return out


def _effect(effects: Effects, name: str) -> Any:
    if name == "billable":
        return effects.cost.billable if effects.cost else UNSET
    if name.startswith("filesystem."):
        return (
            getattr(effects.filesystem, name.split(".", 1)[1], UNSET)
            if effects.filesystem
            else UNSET
        )
    return getattr(effects, name, UNSET)


def _paths(
    policy: Policy,
    tool: Tool,
    path: CommandPath,
    values: Mapping[ParamRef, Any],
    cwd: str | None,
) -> list[str]:
    if not (policy.path_allow or policy.path_deny) or not values:
        return []
    try:
        command = get_command(tool, path)
    except KeyError:
        return []
    kinds = {("argument", a.name): a.type for a in command.arguments}
    kinds |= {("option", o.name): o.type for o in command.options}
    kinds |= {("global", o.name): o.type for o in tool.global_options}
    out = []
    for ref, value in values.items():
        if kinds.get((ref.kind, ref.name)) not in ("file", "directory"):
            continue
        for item in value if isinstance(value, list) else [value]:
            full = os.path.normpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(str(item))))
            if any(fnmatch.fnmatch(full, os.path.expanduser(g)) for g in policy.path_deny):
                out.append(f"{ref.name}: {full} is a denied path")
            elif policy.path_allow and not any(
                fnmatch.fnmatch(full, os.path.expanduser(g)) for g in policy.path_allow
            ):
                out.append(f"{ref.name}: {full} is outside the allowed paths")
    return out
