"""What may run, and why: one home for the rules, the file format and the decision.

    policy = read_policy(open("policy.json", "rb").read(), "policy.json")
    decision = decide(policy, tool, ("repo", "delete"), evidence=evidence)
    decision.action            # "allow", "confirm" or "deny"
    decision.reasons           # why, in words

The bridge's `Validator`, the executor, `atip run` and the MCP gateway all ask `decide`.
Trust is computed from `Evidence` — what atipkit verified itself — never from what a
document says of itself.
"""

from atipkit.policy.decision import Action, Decision, Finding, decide, effect_of
from atipkit.policy.evidence import (
    SOURCE_TRUST,
    Evidence,
    Origin,
    TrustLevel,
    source_trust,
)
from atipkit.policy.file import PolicyFileError, read_policy, read_trust_policy
from atipkit.policy.rules import (
    COST_ORDER,
    TRUST_ORDER,
    CostRank,
    Delegation,
    EffectName,
    Isolate,
    Policy,
    TrustPolicy,
    TrustRank,
    VerificationName,
)

__all__ = [
    "COST_ORDER",
    "SOURCE_TRUST",
    "TRUST_ORDER",
    "Action",
    "CostRank",
    "Decision",
    "Delegation",
    "EffectName",
    "Evidence",
    "Finding",
    "Isolate",
    "Origin",
    "Policy",
    "PolicyFileError",
    "TrustLevel",
    "TrustPolicy",
    "TrustRank",
    "VerificationName",
    "decide",
    "effect_of",
    "read_policy",
    "read_trust_policy",
    "source_trust",
]
