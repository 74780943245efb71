"""Deciding whether a call may run: allow, confirm (why) or deny (why).

The one place the rules are applied. The bridge's `Validator` reports the findings as
problems, the executor (and so `atip run` and the MCP gateway) acts on the decision. Every
rule reads facts atipkit established itself (`Evidence`), never a document's claims about
itself, and the answer is the strictest of the policy and every policy it was narrowed
from.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from atipkit.model import UNSET, CommandPath, Effects, Tool, effective_effects, get_command
from atipkit.policy.evidence import Evidence, TrustLevel, source_trust
from atipkit.policy.rules import COST_ORDER, TRUST_ORDER, Policy
from atipkit.protocol import PROTOCOL_VERSION, needs_newer_agent

Action = Literal["allow", "confirm", "deny"]
_RANK: dict[Action, int] = {"allow": 0, "confirm": 1, "deny": 2}


class Finding(msgspec.Struct, frozen=True):
    """One rule that a call does not pass: what it asks for (confirmation or denial), a
    stable code (`policy.destructive`, `policy.trust`, ...) and why, in words."""

    action: Literal["confirm", "deny"]
    code: str
    message: str


class Decision(msgspec.Struct, frozen=True):
    action: Action
    reasons: list[str] = []
    """Why, for the strictest action: the messages of the findings that ask for it."""
    findings: list[Finding] = []
    """Every rule the call does not pass, confirmations beside a denial included."""
    isolate: bool = False
    """The call may run only in the sandbox (a policy's `isolate`)."""

    @property
    def allowed(self) -> bool:
        return self.action == "allow"

    @classmethod
    def of(cls, findings: list[Finding], *, isolate: bool = False) -> Decision:
        """The strictest action the findings ask for, and their reasons."""
        findings = list(dict.fromkeys(findings))
        if not findings:
            return cls("allow", isolate=isolate)
        action = max((f.action for f in findings), key=_RANK.__getitem__)
        reasons = [f.message for f in findings if f.action == action]
        return cls(action, list(dict.fromkeys(reasons)), findings, isolate)


def decide(
    policy: Policy,
    tool: Tool,
    path: CommandPath,
    values: Mapping[Any, Any] | None = None,
    *,
    evidence: Evidence | None = None,
    billable_used: int = 0,
    audited: bool = True,
    cwd: str | None = None,
) -> Decision:
    """The strictest decision of `policy` and every policy it was narrowed from, for
    running `tool`'s command `path` with `values` (keyed by `atipkit.bridge.ParamRef`).
    `evidence` is what atipkit verified about the tool (without it, the tool is a
    document handed over: trusted `low` at most, its binary unverified); `billable_used`
    the billable calls already run; `audited` whether the call goes to an audit log."""
    findings: list[Finding] = []
    level = evidence.level if evidence is not None else None
    isolate = False
    for rules in policy.chain():
        findings += _findings(rules, tool, path, values or {}, evidence, billable_used, cwd)
        if rules.audit_all_calls and not audited:
            findings.append(
                Finding("deny", "policy.audit", "the policy requires an audit log of every call")
            )
        isolate = (
            isolate
            or rules.isolate == "always"
            or (rules.isolate == "unverified" and level is not TrustLevel.VERIFIED)
        )
    return Decision.of(findings, isolate=isolate)


def _findings(
    policy: Policy,
    tool: Tool,
    path: CommandPath,
    values: Mapping[Any, Any],
    evidence: Evidence | None,
    billable_used: int,
    cwd: str | None,
) -> list[Finding]:
    out = _trust(policy, tool, evidence) + _agent_version(tool)
    try:
        effects: Effects | None = effective_effects(tool, path)
    except KeyError:
        effects = None
        out += _omitted(tool, path)
    if effects is not None:
        out += _effects(policy, effects, billable_used)
        out += _approval(tool, path)
    if policy.delegation is not None:
        out += _delegation(policy, tool, path, effects)
    out += _paths(policy, tool, path, values, cwd)
    return out


def _agent_version(tool: Tool) -> list[Finding]:
    """A document for a newer agent than atipkit (§3.2.1 `minAgentVersion`) may state its
    safety in terms atipkit does not know: what it says is not enough to run unasked."""
    wanted = tool.atip.min_agent_version
    if not wanted or not needs_newer_agent(wanted):
        return []
    return [
        Finding(
            "confirm",
            "policy.agent-too-old",
            f"{tool.name}'s metadata asks for an agent of ATIP {wanted} or later; atipkit "
            f"implements {PROTOCOL_VERSION}; confirm",
        )
    ]


def _approval(tool: Tool, path: CommandPath) -> list[Finding]:
    """A command imported from a Tool Discovery Protocol manifest whose server, or the
    user's preferences, ask for approval (`x-tdp.metadata.requires_approval`): read by
    its key, as any document may carry it, so the policy imports no interop format."""
    stated = get_command(tool, path).extensions.get("x-tdp") if path else None
    metadata = stated.get("metadata") if isinstance(stated, dict) else None
    if not isinstance(metadata, dict) or metadata.get("requires_approval") is not True:
        return []
    name = " ".join((tool.name, *path))
    return [
        Finding(
            "confirm",
            "policy.requires-approval",
            f"{name!r} requires approval (its Tool Discovery Protocol metadata); confirm",
        )
    ]


def _omitted(tool: Tool, path: CommandPath) -> list[Finding]:
    """A command the document does not describe: what its omission means (§3.1.1)."""
    name = " ".join((tool.name, *path))
    if not tool.partial:
        return [Finding("deny", "policy.unknown-command", f"{tool.name} has no command {name!r}")]
    assumption = tool.omitted.safety_assumption if tool.omitted else "unknown"
    if assumption == "known-safe":
        return []
    return [
        Finding(
            "confirm",
            "policy.omitted-command",
            f"{name!r} is not in the loaded metadata (omitted, safety {assumption}); confirm",
        )
    ]


def _trust(policy: Policy, tool: Tool, evidence: Evidence | None) -> list[Finding]:
    """Source trust, approval, signatures and the binary's verified level."""
    out = []
    facts = evidence or Evidence()
    rank = source_trust(facts, tool)
    if TRUST_ORDER.index(rank) < TRUST_ORDER.index(policy.minimum_trust):
        out.append(
            Finding(
                "deny",
                "policy.trust",
                f"{tool.name}'s metadata is trusted {rank} ({_origin(facts)}); the policy "
                f"requires {policy.minimum_trust}",
            )
        )
    if policy.approved_registries is not None and not (
        facts.origin == "registry"
        and facts.registry is not None
        and _same_url(facts.registry, policy.approved_registries)
    ):
        out.append(
            Finding(
                "deny",
                "policy.approval",
                f"{tool.name} is not approved: only tools described by shims from "
                f"{', '.join(policy.approved_registries) or 'no registry'} may run "
                f"({_origin(facts)})",
            )
        )
    level = facts.level
    if level is TrustLevel.COMPROMISED:
        why = f": {facts.verification}" if facts.verification else ""
        out.append(
            Finding(
                "deny",
                "policy.compromised",
                f"the binary does not match its metadata (COMPROMISED){why}",
            )
        )
    required = policy.minimum_verification
    if required is not None and level is not TrustLevel.COMPROMISED:
        if level is None:
            out.append(
                Finding(
                    "deny",
                    "policy.verification",
                    f"the binary was not verified; the policy requires {required}",
                )
            )
        elif level < TrustLevel[required]:
            why = f" ({facts.verification})" if facts.verification else ""
            out.append(
                Finding(
                    "deny",
                    "policy.verification",
                    f"the binary is {level.name}{why}; the policy requires {required}",
                )
            )
    rules = policy.trust
    if rules is not None and rules.require_signature and level is not TrustLevel.VERIFIED:
        signer = facts.signer
        if signer is None or (rules.allowed_signers and signer not in rules.allowed_signers):
            who = f" by one of {', '.join(rules.allowed_signers)}" if rules.allowed_signers else ""
            out.append(
                Finding(
                    "deny",
                    "policy.signature",
                    f"no verified signature{who} vouches for {tool.name}'s metadata or binary",
                )
            )
    return out


def _origin(evidence: Evidence) -> str:
    if evidence.origin == "registry":
        signed = f", signed by {evidence.signer}" if evidence.signer else ", unsigned"
        return f"a shim from {evidence.registry or 'a registry'}{signed}"
    return {
        "native": "its own --agent",
        "system": "a shim in a system directory",
        "user": "a shim of the user's",
        "inferred": "inferred from its help text",
        "given": "a document given to atipkit",
    }[evidence.origin]


def _same_url(url: str, approved: list[str]) -> bool:
    return url.rstrip("/") in {a.rstrip("/") for a in approved}


def _effects(policy: Policy, effects: Effects, billable_used: int) -> list[Finding]:
    out = []
    if effects.destructive is True and not policy.allow_destructive:
        out.append(Finding("confirm", "policy.destructive", "destructive: confirm first"))
    cost = effects.cost
    if (
        cost
        and cost.billable is True
        and not policy.allow_billable
        and not (policy.billable_budget is not None and billable_used < policy.billable_budget)
    ):
        out.append(Finding("confirm", "policy.billable", "may incur costs: confirm first"))
    estimate = cost.estimate if cost else None
    if (
        policy.max_cost is not None
        and estimate in COST_ORDER
        and COST_ORDER.index(estimate) > COST_ORDER.index(policy.max_cost)
    ):
        out.append(
            Finding(
                "deny",
                "policy.cost",
                f"cost estimate {estimate} is above the policy's {policy.max_cost}",
            )
        )
    if effects.network is True and not policy.allow_network:
        out.append(Finding("deny", "policy.network", "uses the network; not allowed"))
    fs = effects.filesystem
    if fs and fs.write is True and not policy.allow_filesystem_write:
        out.append(Finding("deny", "policy.filesystem-write", "writes files; not allowed"))
    if fs and fs.delete is True and not policy.allow_filesystem_delete:
        out.append(Finding("deny", "policy.filesystem-delete", "deletes files; not allowed"))
    for name in policy.confirm_effects:
        if effect_of(effects, name) is True:
            out.append(
                Finding(
                    "confirm", "policy.confirm-effect", f"{name}: the policy wants it confirmed"
                )
            )
    return out


def _delegation(
    policy: Policy, tool: Tool, path: CommandPath, effects: Effects | None
) -> list[Finding]:
    assert policy.delegation is not None
    rules = policy.delegation
    words = [tool.name, *path]
    out = []
    if rules.allowed_tools is not None and tool.name not in rules.allowed_tools:
        out.append(
            Finding("deny", "policy.delegation", f"{tool.name} is not among the delegated tools")
        )
    for prefix in rules.denied_commands:
        denied = prefix.split()
        if words[: len(denied)] == denied:
            out.append(
                Finding(
                    "deny",
                    "policy.delegation",
                    f"{' '.join(words)!r} is denied by delegation ({prefix!r})",
                )
            )
    for effect, allowed in rules.effect_restrictions.items():
        if allowed:
            continue
        value = effect_of(effects, effect) if effects is not None else True  # unknown: no
        if value is True:
            out.append(
                Finding("deny", "policy.delegation", f"delegation forbids {effect} commands")
            )
    return out


def effect_of(effects: Effects, name: str) -> Any:
    """One effect by its policy name (`destructive`, `billable`, `filesystem.write`)."""
    if name == "billable":
        return effects.cost.billable if effects.cost else UNSET
    if name.startswith("filesystem."):
        fs = effects.filesystem
        return getattr(fs, name.split(".", 1)[1], UNSET) if fs else UNSET
    return getattr(effects, name, UNSET)


def _paths(
    policy: Policy,
    tool: Tool,
    path: CommandPath,
    values: Mapping[Any, Any],
    cwd: str | None,
) -> list[Finding]:
    if not (policy.path_allow or policy.path_deny) or not values:
        return []
    try:
        command = get_command(tool, path)
    except KeyError:
        return []
    kinds = {("argument", a.name): a.type for a in command.arguments}
    kinds |= {("option", o.name): o.type for o in command.options}
    kinds |= {("global", o.name): o.type for o in tool.global_options}
    deny, allow = _globs(policy.path_deny), _globs(policy.path_allow)
    out = []
    for ref, value in values.items():
        if kinds.get((ref.kind, ref.name)) not in ("file", "directory"):
            continue
        for item in value if isinstance(value, list) else [value]:
            named = _named(cwd or os.getcwd(), str(item))
            denied = next((n for n in named if _matches(n, deny)), None)
            outside = next((n for n in named if not _matches(n, allow)), None) if allow else None
            if denied is not None:
                out.append(Finding("deny", "policy.path", f"{ref.name}: {denied} is a denied path"))
            elif outside is not None:
                out.append(
                    Finding(
                        "deny", "policy.path", f"{ref.name}: {outside} is outside the allowed paths"
                    )
                )
    return out


def _named(cwd: str, value: str) -> list[str]:
    """Every path a file value may name, for a rule to hold for all: as given (the argv
    passes no shell: `~` is a directory of that name) and with `~` expanded (some tools
    expand it themselves), each normalized as written (`link/..` is `.`, as a tool that
    cleans paths sees it) and resolved as the kernel resolves it (symlinks followed)."""
    out: list[str] = []
    for text in dict.fromkeys((value, os.path.expanduser(value))):
        joined = os.path.join(cwd, text)
        out += [p for p in (os.path.normpath(joined), os.path.realpath(joined)) if p not in out]
    return out


def _globs(patterns: list[str]) -> list[str]:
    """A policy's globs, `~` expanded, each also with its fixed directories resolved: a
    glob written through a symlink (`~/work/*`, `~` a link) matches what it resolves to."""
    out: list[str] = []
    for pattern in patterns:
        glob = os.path.expanduser(pattern)
        wild = next((i for i, c in enumerate(glob) if c in "*?["), None)
        fixed = glob if wild is None else os.path.dirname(glob[:wild])
        out += [g for g in (glob, os.path.realpath(fixed) + glob[len(fixed) :]) if g not in out]
    return out


def _matches(path: str, globs: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, glob) for glob in globs)
