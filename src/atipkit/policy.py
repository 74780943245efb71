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


class Policy(msgspec.Struct, kw_only=True, frozen=True):
    allow_destructive: bool = False
    """Destructive commands run without confirmation."""
    allow_billable: bool = False
    """Billable commands run without confirmation."""
    max_cost: CostRank | None = None
    """Deny commands whose cost estimate is above this."""
    allow_network: bool = True
    allow_filesystem_write: bool = True
    allow_filesystem_delete: bool = True
    minimum_trust: TrustRank = "very-low"
    """Deny tools whose metadata is trusted less than this."""


def trust_of(tool: Tool) -> TrustRank:
    """The default trust of a tool's metadata, from its stated source."""
    source = tool.trust.source if tool.trust and tool.trust.source else "user"
    return SOURCE_TRUST[source]
