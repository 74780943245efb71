"""SLSA provenance: in-toto statements in DSSE envelopes (RFC 0.6 §3.2.2).

Checked in order, each failure with its own reason: the envelope's signature (DSSE PAE,
Ed25519 or ECDSA keys given by the caller — or a Sigstore bundle, verified by
`signatures.sigstore_verify_dsse`), the statement's subject digest against the binary,
the predicate type (SLSA provenance v1 or v0.2), the builder against an allowlist, and
the claimed SLSA level against the required minimum.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from atipkit import _jsontext

PAYLOAD_TYPE = "application/vnd.in-toto+json"
PREDICATES = {
    "https://slsa.dev/provenance/v1": "v1",
    "https://slsa.dev/provenance/v0.2": "v0.2",
}
Reason = Literal["ok", "signature", "digest", "predicate", "builder", "level", "format"]


class ProvenanceResult(msgspec.Struct, frozen=True):
    ok: bool
    reason: Reason
    message: str
    builder: str | None = None
    predicate_type: str | None = None


def pae(payload_type: str, payload: bytes) -> bytes:
    """The DSSE pre-authentication encoding that signatures cover."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def sign_envelope(statement: dict[str, Any], private_key: Any, keyid: str = "") -> dict[str, Any]:
    """A DSSE envelope over `statement`, signed with a `cryptography` private key (for
    tests and for keepers who sign provenance with their own keys)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    payload = json.dumps(statement, separators=(",", ":")).encode()
    message = pae(PAYLOAD_TYPE, payload)
    if isinstance(private_key, ec.EllipticCurvePrivateKey):
        signature = private_key.sign(message, ec.ECDSA(hashes.SHA256()))
    else:
        signature = private_key.sign(message)
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": keyid, "sig": base64.b64encode(signature).decode()}],
    }


def verify_envelope(envelope: dict[str, Any], public_keys: Sequence[Any]) -> dict[str, Any]:
    """The statement of an envelope one of `public_keys` signed; `ValueError` otherwise."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        payload = base64.b64decode(envelope["payload"], validate=True)
        payload_type = envelope["payloadType"]
        signatures = [base64.b64decode(s["sig"]) for s in envelope["signatures"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a DSSE envelope: {exc}") from None
    if payload_type != PAYLOAD_TYPE:  # not quoted: unsigned, it may be anything at all
        raise ValueError(f"the payload type is not {PAYLOAD_TYPE}")
    message = pae(payload_type, payload)
    for key in public_keys:
        for signature in signatures:
            try:
                if isinstance(key, ec.EllipticCurvePublicKey):
                    key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
                else:
                    key.verify(signature, message)
            except InvalidSignature:
                continue
            statement = _jsontext.decode(payload, "the signed statement")  # a ValueError
            if not isinstance(statement, dict):  # signed, yet no statement: refused, not used
                raise ValueError("the signed statement is not a JSON object")
            return statement
    raise ValueError("no signature by a trusted key")


def check_statement(
    statement: dict[str, Any],
    *,
    artifact_digest: str,
    allowed_builders: Sequence[str],
    claimed_level: int | None,
    minimum_level: int = 0,
) -> ProvenanceResult:
    """Subject, predicate type, builder and level of a verified statement."""
    hex_digest = artifact_digest.removeprefix("sha256:")
    subjects = statement.get("subject") or []
    if not any((s.get("digest") or {}).get("sha256") == hex_digest for s in subjects):
        names = ", ".join(s.get("name", "?") for s in subjects) or "none"
        return ProvenanceResult(
            False,
            "digest",
            f"no subject has the binary's digest sha256:{hex_digest} (subjects: {names})",
        )
    predicate_type = statement.get("predicateType", "")
    version = PREDICATES.get(predicate_type)
    if version is None:
        return ProvenanceResult(
            False, "predicate", f"predicate type {predicate_type!r} is not SLSA provenance"
        )
    predicate = statement.get("predicate") or {}
    builder = (
        ((predicate.get("runDetails") or {}).get("builder") or {}).get("id")
        if version == "v1"
        else (predicate.get("builder") or {}).get("id")
    )
    if builder not in allowed_builders:
        return ProvenanceResult(
            False,
            "builder",
            f"builder {builder!r} is not among the trusted builders",
            builder=builder,
            predicate_type=predicate_type,
        )
    if (claimed_level or 0) < minimum_level:
        return ProvenanceResult(
            False,
            "level",
            f"claimed SLSA level {claimed_level or 0} is below the required {minimum_level}",
            builder=builder,
            predicate_type=predicate_type,
        )
    return ProvenanceResult(
        True, "ok", f"provenance from {builder}", builder=builder, predicate_type=predicate_type
    )


def verify_provenance(
    envelope: dict[str, Any],
    *,
    public_keys: Sequence[Any],
    artifact_digest: str,
    allowed_builders: Sequence[str],
    claimed_level: int | None,
    minimum_level: int = 0,
) -> ProvenanceResult:
    """A DSSE envelope of SLSA provenance, end to end."""
    try:
        statement = verify_envelope(envelope, public_keys)
    except ValueError as exc:
        return ProvenanceResult(False, "signature", f"envelope does not verify: {exc}")
    return check_statement(
        statement,
        artifact_digest=artifact_digest,
        allowed_builders=allowed_builders,
        claimed_level=claimed_level,
        minimum_level=minimum_level,
    )
