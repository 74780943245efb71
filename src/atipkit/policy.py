"""What an agent is allowed to run: a policy, as plain data.

The bridge's `Validator` checks tool calls against it; the executor builds on it. Defaults
follow RFC 0.6 §3.2.2 and §11: destructive and billable commands need confirmation,
everything else is allowed until a policy says otherwise.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from atipkit.model import Tool

TrustRank = Literal["very-low", "low", "medium", "high"]
CostRank = Literal["none", "low", "medium", "high"]
VerificationName = Literal["UNSIGNED", "UNVERIFIED", "PROVENANCE_FAIL", "VERIFIED"]
TRUST_ORDER: tuple[TrustRank, ...] = ("very-low", "low", "medium", "high")
COST_ORDER: tuple[CostRank, ...] = ("none", "low", "medium", "high")

#: Default trust by metadata source (RFC 0.6 §3.2.2). A document that states no source is
#: treated like a user's own shim.
SOURCE_TRUST: dict[str, TrustRank] = {
    "native": "high",
    "vendor": "high",
    "org": "medium",
    "community": "low",
    "user": "low",
    "inferred": "very-low",
}


class Delegation(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """What a lead agent lets a subagent do (RFC 0.6 §10.2)."""

    allowed_tools: list[str] | None = None
    """Only these tools; None allows every tool."""
    denied_commands: list[str] = []
    """Command prefixes, tool name first: `"gh repo delete"` denies it and what is below."""
    effect_restrictions: dict[str, bool] = {}
    """`{"destructive": false}`: commands with that effect are denied. Keys: destructive,
    network, subprocess, billable, filesystem.write, filesystem.delete."""


class Policy(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    allow_destructive: bool = False
    """Destructive commands run without confirmation."""
    allow_billable: bool = False
    """Billable commands run without confirmation."""
    billable_budget: int | None = None
    """How many billable calls may run without confirmation (when not `allow_billable`)."""
    max_cost: CostRank | None = None
    """Deny commands whose cost estimate is above this."""
    allow_network: bool = True
    allow_filesystem_write: bool = True
    allow_filesystem_delete: bool = True
    minimum_trust: TrustRank = "very-low"
    """Deny tools whose metadata is trusted less than this."""
    minimum_verification: VerificationName | None = None
    """Deny binaries whose verified trust level (`atipkit.trust.levels`) is below this; a
    COMPROMISED binary is always denied."""
    path_allow: list[str] = []
    """Globs; when any is given, every file or directory value must match one."""
    path_deny: list[str] = []
    """Globs no file or directory value may match."""
    delegation: Delegation | None = None
    parent: Policy | None = None
    """The policy this one was narrowed from: a call must pass both."""

    def narrow(self, child: Policy) -> Policy:
        """`child` under this policy: everything either denies is denied, everything
        either wants confirmed is confirmed. A subagent cannot widen its lead's policy."""
        return msgspec.structs.replace(
            child, parent=self if child.parent is None else self.narrow(child.parent)
        )

    @classmethod
    def from_json(cls, data: bytes | str) -> Policy:
        """A policy file (camelCase keys, as written by `msgspec.json.encode`)."""
        return msgspec.json.decode(data, type=cls)


def trust_of(tool: Tool) -> TrustRank:
    """The default trust of a tool's metadata, from its stated source."""
    source = tool.trust.source if tool.trust and tool.trust.source else "user"
    return SOURCE_TRUST[source]
