"""Trust levels (RFC 0.6 §3.2.2): what verifying a binary and its metadata established.

    COMPROMISED      a checksum or binary.hash does not match: do not run
    UNSIGNED         no signature, or one that does not verify
    UNVERIFIED       a signature is declared but cannot be checked here (no bundle locally)
    PROVENANCE_FAIL  the signature holds but the SLSA provenance does not
    VERIFIED         every declared check passed, a signature among them

Signatures and provenance are looked for next to the binary (`<binary>.sigstore.json`,
`.minisig`, `.sig`, `.intoto.json`), then where the metadata names them — only an https
URL, or a path relative to the user's own `--metadata` file: `trust.material` decides
what may be read, and a document never makes atipkit read a file of its choosing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from atipkit.model import Tool
from atipkit.policy import Evidence, TrustLevel, TrustPolicy, TrustRank, source_trust
from atipkit.trust import material, signatures, slsa
from atipkit.trust.digest import BadHash, file_digest, parse_checksum


class Check(msgspec.Struct, frozen=True):
    name: str
    ok: bool | None  # None: declared but not checkable here
    detail: str


class TrustReport(msgspec.Struct, frozen=True):
    level: TrustLevel
    source_trust: TrustRank
    checks: list[Check]

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level.name,
            "sourceTrust": self.source_trust,
            "checks": [msgspec.to_builtins(c) for c in self.checks],
        }


def verify_tool(
    binary: str | os.PathLike[str],
    tool: Tool,
    policy: TrustPolicy | None = None,
    *,
    evidence: Evidence | None = None,
    sources: material.Sources | None = None,
) -> TrustReport:
    """Verify `binary` against what `tool` (its metadata or shim) declares. `evidence` is
    where the metadata came from, for the report's source trust (without it: a document
    handed over, `atipkit.policy.source_trust`). `sources` says what besides the binary's
    directory may be read: the directory of the user's own metadata file, https URLs
    (default: neither; a copy fetched before is used)."""
    policy = policy or TrustPolicy()
    sources = sources or material.Sources()
    path = Path(binary)
    checks: list[Check] = []
    level = TrustLevel.VERIFIED
    trust = tool.trust or None
    integrity = trust.integrity if trust and trust.integrity else None

    def lower(to: TrustLevel) -> None:
        nonlocal level
        level = min(level, to)

    if integrity and integrity.checksum:
        try:
            algorithm, expected = parse_checksum(integrity.checksum)
            actual = file_digest(path, algorithm)
            ok = actual == f"{algorithm}:{expected}"
            checks.append(Check("checksum", ok, actual if ok else f"binary is {actual}"))
            if not ok:
                lower(TrustLevel.COMPROMISED)
        except BadHash as exc:
            checks.append(Check("checksum", False, str(exc)))
            lower(TrustLevel.COMPROMISED)
    if tool.binary:
        actual = file_digest(path, "sha256")
        ok = actual == tool.binary.hash
        checks.append(
            Check(
                "binary.hash",
                ok,
                actual if ok else f"the shim describes {tool.binary.hash}, the binary is {actual}",
            )
        )
        if not ok:
            lower(TrustLevel.COMPROMISED)

    signature = _signature(path, tool, policy, sources)
    checks.append(signature)
    if signature.ok is None:
        lower(TrustLevel.UNVERIFIED if _declared_signature(tool) else TrustLevel.UNSIGNED)
    elif not signature.ok:
        lower(TrustLevel.UNSIGNED)

    provenance = trust.provenance if trust and trust.provenance else None
    if provenance or policy.minimum_slsa_level:
        result = _provenance(path, tool, policy, sources)
        checks.append(result)
        if result.ok is False:
            lower(TrustLevel.PROVENANCE_FAIL)
        elif result.ok is None:
            lower(TrustLevel.UNVERIFIED)
    if policy.require_signature and not signature.ok:
        checks.append(Check("policy", False, "the policy requires a verified signature"))
    return TrustReport(level, source_trust(evidence, tool), checks)


def _declared_signature(tool: Tool) -> bool:
    trust = tool.trust
    return bool(trust and ((trust.integrity and trust.integrity.signature) or trust.shim_signature))


def _signature(path: Path, tool: Tool, policy: TrustPolicy, sources: material.Sources) -> Check:
    """The first signature material found that verifies: a Sigstore bundle beside the
    binary or where `trust.material` allows the metadata to name one, a minisign or SSH
    signature beside the binary."""
    declared = tool.trust.integrity.signature if tool.trust and tool.trust.integrity else None
    bundle = None
    if declared:
        named = str(declared.bundle) if declared.bundle else None
        suffixes = (".sigstore.json", ".sigstore", ".bundle")
        bundle = material.find(path, suffixes, named, sources, material.BUNDLE_MAX_BYTES)
        if bundle is not None and bundle.data is not None:
            result = signatures.sigstore_verify(
                path,
                bundle.data,
                identity=declared.identity or "",
                issuer=declared.issuer or "",
                trusted_root=policy.trusted_root,
            )
            return _allowed(result, policy)
    if os.path.isfile(f"{path}.minisig") and policy.minisign_keys:
        results = [signatures.minisign_verify(path, key) for key in policy.minisign_keys]
        good = next((r for r in results if r.ok), results[0])
        return _allowed(good, policy, signer=good.signer if good.ok else None)
    if os.path.isfile(f"{path}.sig") and policy.ssh_allowed_signers:
        for signer in policy.allowed_signers or ["*"]:
            result = signatures.ssh_verify(path, policy.ssh_allowed_signers, signer)
            if result.ok:
                return Check("signature", True, f"ssh signature by {signer}")
        return Check("signature", False, "ssh signature does not verify for an allowed signer")
    if declared:
        why = f"its bundle {bundle.where} {bundle.problem}" if bundle else "no bundle is here"
        return Check("signature", None, f"a {declared.type} signature is declared; {why}")
    return Check("signature", None, "no signature")


def _allowed(
    result: signatures.SignatureResult, policy: TrustPolicy, signer: str | None = None
) -> Check:
    if not result.ok:
        return Check("signature", False, f"{result.method}: {result.reason}")
    who = signer or result.signer or ""
    if policy.allowed_signers and who not in policy.allowed_signers:
        return Check(
            "signature",
            False,
            f"{result.method} signature by {who!r}, who is not an allowed signer",
        )
    return Check("signature", True, f"{result.method} signature by {who or 'a trusted key'}")


def _provenance(path: Path, tool: Tool, policy: TrustPolicy, sources: material.Sources) -> Check:
    from atipkit import _jsontext
    from atipkit.errors import DocumentError

    declared = tool.trust.provenance if tool.trust and tool.trust.provenance else None
    claimed = declared.slsa_level if declared and declared.slsa_level is not None else None
    named = str(declared.url) if declared and declared.url else None
    found = material.find(path, (".intoto.json",), named, sources, material.PROVENANCE_MAX_BYTES)
    if found is None:
        return Check("provenance", None, "no provenance attestation is available here")
    if found.data is None:
        return Check("provenance", None, f"provenance {found.where} {found.problem}")
    try:  # what the file says is never quoted: it may not be provenance at all
        envelope = _jsontext.decode(found.data)
    except DocumentError:
        envelope = None
    if not isinstance(envelope, dict):
        return Check("provenance", False, f"format: {found.where} is not a DSSE envelope (JSON)")
    try:
        keys = [_public_key(k) for k in policy.provenance_keys]
    except (OSError, ValueError) as exc:
        return Check("provenance", False, f"signature: a provenance key cannot be used: {exc}")
    builders = policy.trusted_builders or (
        [declared.builder] if declared and declared.builder else []
    )
    result = slsa.verify_provenance(
        envelope,
        public_keys=keys,
        artifact_digest=file_digest(path, "sha256"),
        allowed_builders=builders,
        claimed_level=claimed if isinstance(claimed, int) else None,
        minimum_level=policy.minimum_slsa_level,
    )
    return Check("provenance", result.ok, f"{result.reason}: {result.message}")


def _public_key(path: str) -> object:
    """A PEM public key of the policy's; `ValueError` naming the file when it is not one."""
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        return load_pem_public_key(Path(path).read_bytes())
    except ValueError:
        raise ValueError(f"{path} is not a PEM public key") from None
