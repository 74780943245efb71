"""What an agent is allowed to run, as plain data: `Policy`, `Delegation`, `TrustPolicy`.

Defaults follow RFC 0.6 §3.2.2 and §11: destructive and billable commands need
confirmation, a COMPROMISED binary never runs, everything else is allowed until a policy
says otherwise. `decide` (atipkit.policy.decision) applies them; `read_policy`
(atipkit.policy.file) reads them from files, refusing what it does not know.
"""

from __future__ import annotations

from typing import Literal

import msgspec

TrustRank = Literal["very-low", "low", "medium", "high"]
Isolate = Literal["never", "unverified", "always"]
CostRank = Literal["none", "low", "medium", "high"]
VerificationName = Literal["UNSIGNED", "UNVERIFIED", "PROVENANCE_FAIL", "VERIFIED"]
EffectName = Literal[
    "destructive", "network", "subprocess", "billable", "filesystem.write", "filesystem.delete"
]
TRUST_ORDER: tuple[TrustRank, ...] = ("very-low", "low", "medium", "high")
COST_ORDER: tuple[CostRank, ...] = ("none", "low", "medium", "high")


class TrustPolicy(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """How binaries and signatures are checked (RFC 0.6 §3.2.2, §4.8): the keys and
    identities trusted here, and what must hold. From a policy's `trust`, config.json's
    `trust`, or `atip verify --policy`."""

    require_signature: bool = False
    """A tool runs only when a signature atipkit verified vouches for it: its metadata's
    (a shim signed by a registry's pinned signer) or its binary's (level VERIFIED)."""
    allowed_signers: list[str] = []
    """When given, a signature counts only when made by one of these identities."""
    minimum_slsa_level: int = 0
    """Binaries need SLSA provenance of at least this level (0: not required)."""
    trusted_builders: list[str] = []
    trusted_root: str | None = None
    """A Sigstore trusted root file (default: the one the sigstore package ships)."""
    minisign_keys: list[str] = []
    """Minisign public keys (base64 or files)."""
    ssh_allowed_signers: str | None = None
    provenance_keys: list[str] = []
    """PEM files of keys that sign provenance envelopes."""


class Delegation(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """What a lead agent lets a subagent do (RFC 0.6 §10.2)."""

    allowed_tools: list[str] | None = None
    """Only these tools; None allows every tool."""
    denied_commands: list[str] = []
    """Command prefixes, tool name first: `"gh repo delete"` denies it and what is below."""
    effect_restrictions: dict[EffectName, bool] = {}
    """`{"destructive": false}`: commands with that effect are denied."""


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
    confirm_effects: list[EffectName] = []
    """Commands with any of these effects need confirmation (RFC 0.6 §4.8
    `execution.requireConfirmation`)."""
    minimum_trust: TrustRank = "very-low"
    """Deny tools whose metadata atipkit trusts less than this: trust from where the
    metadata came from and what was verified (`atipkit.policy.Evidence`), never from what
    the document says of itself."""
    minimum_verification: VerificationName | None = None
    """Deny binaries whose verified trust level is below this; a COMPROMISED binary is
    always denied."""
    trust: TrustPolicy | None = None
    """How binaries are verified (keys, signers, provenance); None: the caller's default
    (`atip` uses config.json's `trust`), or, for a narrowed policy, its parent's. A
    narrowed policy's binaries must verify under the trust of every policy of its
    chain (`trust_chain`)."""
    approved_registries: list[str] | None = None
    """Only tools described by shims from these registries (URLs) run (RFC 0.6 §4.8
    `approval.mode: allowlist`); None approves every source."""
    audit_all_calls: bool = False
    """Every call must be written to an audit log; without one, calls are denied."""
    isolate: Isolate = "never"
    """Run commands in the sandbox (RFC 0.6 §11.1, "use sandboxing for untrusted
    tools"): `always`, or `unverified` — every binary whose verified level is below
    VERIFIED. Where the machine cannot isolate, such calls are not run."""
    path_allow: list[str] = []
    """Globs; when any is given, every file or directory value must match one. A value
    is judged as every path it may name: as written and with `~` expanded, normalized
    and with symlinks resolved (a glob's own directories are resolved too)."""
    path_deny: list[str] = []
    """Globs no file or directory value may match, however it is spelt (`path_allow`)."""
    delegation: Delegation | None = None
    parent: Policy | None = None
    """The policy this one was narrowed from: a call must pass both. Not part of the file
    format: `narrow` sets it."""

    def narrow(self, child: Policy) -> Policy:
        """`child` under this policy: everything either denies is denied, everything
        either wants confirmed is confirmed. A subagent cannot widen its lead's policy."""
        return msgspec.structs.replace(
            child, parent=self if child.parent is None else self.narrow(child.parent)
        )

    def chain(self) -> list[Policy]:
        """This policy and every policy it was narrowed from, innermost first."""
        out: list[Policy] = []
        current: Policy | None = self
        while current is not None:
            out.append(current)
            current = current.parent
        return out

    def trust_chain(self) -> list[TrustPolicy | None]:
        """How binaries are verified under each policy of the chain, each way once,
        outermost first: a policy's own `trust`, else the one it was narrowed from uses
        (None: the default). A binary is as trusted as the lowest level it verifies at
        under these: a subagent's keys cannot vouch for a binary its lead's keys do not."""
        out: list[TrustPolicy | None] = []
        inherited: TrustPolicy | None = None
        for policy in reversed(self.chain()):
            inherited = policy.trust if policy.trust is not None else inherited
            if inherited not in out:
                out.append(inherited)
        return out

    def needs_verified_binaries(self) -> bool:
        """Whether any policy of the chain decides by a binary's verified level: only
        then does a call fetch the signature or provenance its metadata names by URL."""
        return any(
            p.minimum_verification is not None
            or p.isolate == "unverified"
            or (p.trust is not None and p.trust.require_signature)
            for p in self.chain()
        )

    @classmethod
    def from_json(cls, data: bytes | str, source: str = "<policy>") -> Policy:
        """A policy file, either form (`atipkit.policy.read_policy`)."""
        from atipkit.policy.file import read_policy

        return read_policy(data, source)
