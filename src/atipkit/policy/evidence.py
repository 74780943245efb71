"""What atipkit itself established about a tool, and the trust that follows from it.

A document can say anything of itself: `"trust": {"source": "vendor", "verified": true}`
costs nothing to write. So the trust a policy compares is computed from `Evidence` —
where atipkit got the metadata (the binary's own `--agent`, a shim in the user's or the
system's directory, a remote registry and the trust configured for it, a signature
checked against a pinned key) and what verifying the binary gave. The document's own
`trust.source` may lower that trust, never raise it.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Literal
from urllib.parse import urlsplit

import msgspec

from atipkit.model import Tool
from atipkit.policy.rules import TRUST_ORDER, TrustRank


class TrustLevel(IntEnum):
    """What verifying a binary against its metadata established (RFC 0.6 §3.2.2)."""

    COMPROMISED = 0
    """A checksum or binary.hash does not match: never run."""
    UNSIGNED = 1
    """No signature, or one that does not verify."""
    UNVERIFIED = 2
    """A signature or provenance is declared but cannot be checked here."""
    PROVENANCE_FAIL = 3
    """The signature holds but the SLSA provenance does not."""
    VERIFIED = 4
    """Every declared check passed, a signature among them."""


#: Default trust by metadata source (RFC 0.6 §3.2.2): what a document's `trust.source`
#: may lower a tool's trust to.
SOURCE_TRUST: dict[str, TrustRank] = {
    "native": "high",
    "vendor": "high",
    "org": "medium",
    "community": "low",
    "user": "low",
    "inferred": "very-low",
}

Origin = Literal["native", "registry", "user", "system", "inferred", "given"]
"""Where atipkit got a tool's metadata: the binary's own `--agent` (`native`), a remote
registry's shim (`registry`), a shim in the user's data directory (`user`) or a system
directory (`system`), atipkit's own inference (`inferred`), or a document handed over by
the caller (`given`: a file, a Python object)."""

#: What each origin is trusted at most. A registry is trusted as configured.
ORIGIN_TRUST: dict[str, TrustRank] = {
    "native": "high",  # the binary describes itself: trusting it is trusting the binary
    "system": "medium",  # installed by the machine's administrator or a package
    "user": "low",
    "given": "low",
    "inferred": "very-low",
}

#: A registry's trust when registries.json says nothing: a community registry's.
DEFAULT_REGISTRY_TRUST: TrustRank = "low"


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    """The facts about one tool that atipkit verified itself."""

    origin: Origin = "given"
    registry: str | None = None
    """The URL of the registry that served the shim (origin `registry`)."""
    registry_trust: TrustRank | None = None
    """The trust registries.json gives that registry (default `low`)."""
    signer: str | None = None
    """Who signed the metadata (a Sigstore identity, an SSH principal, a minisign key),
    when atipkit verified that signature against what its configuration pins."""
    path: str | None = None
    """The executable the metadata describes."""
    hash: str | None = None
    """Its sha256 when the metadata was read for it: a binary that no longer has it is
    not the one described."""
    level: TrustLevel | None = None
    """What verifying the binary gave, when it was verified."""
    verification: str = ""
    """Why the level is below VERIFIED: the check that failed, for the reasons."""


def source_trust(evidence: Evidence | None, tool: Tool | None = None) -> TrustRank:
    """The trust of a tool's metadata: its origin's (a registry's as configured, but no
    more than `low` when it came unsigned over plain HTTP to another host), lowered to
    what the document claims for itself when that is less."""
    evidence = evidence or Evidence()
    if evidence.origin == "registry":
        rank = evidence.registry_trust or DEFAULT_REGISTRY_TRUST
        if evidence.signer is None and not _authenticated(evidence.registry):
            rank = _lower(rank, "low")
    else:
        rank = ORIGIN_TRUST[evidence.origin]
    claimed = tool.trust.source if tool is not None and tool.trust else None
    if claimed and claimed in SOURCE_TRUST:
        rank = _lower(rank, SOURCE_TRUST[claimed])
    return rank


def _lower(a: TrustRank, b: TrustRank) -> TrustRank:
    return a if TRUST_ORDER.index(a) <= TRUST_ORDER.index(b) else b


def _authenticated(url: str | None) -> bool:
    """Whether a shim from `url` came over a channel that authenticates its server: https,
    or plain http to this machine."""
    from atipkit._http import is_loopback

    if not url:
        return False
    return urlsplit(url).scheme == "https" or is_loopback(url)
