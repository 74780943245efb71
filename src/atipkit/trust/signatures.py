"""Signatures over files (binaries, shims): minisign, SSH and Sigstore bundles.

Each verification returns a `SignatureResult` that says who signed and, when it fails,
why, in one line. Keys that are local can sign too (minisign, SSH); Sigstore's keyless
signing needs an identity provider, so it is done with `sigstore sign` or `cosign
sign-blob --bundle`, and atipkit verifies the bundle — offline, against a trusted root file
(the one shipped with the `sigstore` package by default).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Literal

import msgspec

from atipkit import _jsontext
from atipkit.errors import AtipError, DocumentError

Method = Literal["minisign", "ssh", "sigstore"]
SSH_NAMESPACE = "atip"


class SignatureResult(msgspec.Struct, frozen=True):
    ok: bool
    method: Method
    reason: str = ""
    signer: str | None = None
    missing: str | None = None
    """The file that is not there (the signature, the key, the shim), when that is why."""


def _missing(method: Method, exc: FileNotFoundError) -> SignatureResult:
    return SignatureResult(False, method, f"missing file: {exc.filename}", missing=exc.filename)


class SigningError(AtipError):
    """A file could not be signed (missing key, wrong password, no ssh-keygen)."""


# -- minisign ----------------------------------------------------------------------------------


def minisign_sign(
    path: str | os.PathLike[str],
    secret_key: str | os.PathLike[str],
    *,
    password: str | None = None,
    trusted_comment: str | None = None,
) -> Path:
    """Sign `path` with a minisign secret key file; writes `<path>.minisig`."""
    import minisign

    try:
        key = minisign.SecretKey.from_file(os.fspath(secret_key))
        if key.is_encrypted():
            if password is None:
                raise SigningError("the minisign key is encrypted; a password is needed")
            key.decrypt(password)
        signature = key.sign(Path(path).read_bytes(), trusted_comment=trusted_comment)
    except (minisign.Error, OSError) as exc:
        raise SigningError(f"cannot sign with {secret_key}: {exc}") from None
    out = Path(f"{os.fspath(path)}.minisig")
    out.write_bytes(bytes(signature))
    return out


def minisign_verify(
    artifact: str | os.PathLike[str] | bytes,
    public_key: str,
    *,
    signature: str | os.PathLike[str] | bytes | None = None,
) -> SignatureResult:
    """Verify a minisign signature with a public key (a file, or its base64). The artifact
    and the signature are files (`<artifact>.minisig` by default) or bytes already read,
    as a shim fetched from a registry is."""
    import minisign

    try:
        key = (
            minisign.PublicKey.from_file(public_key)
            if os.path.exists(public_key)
            else minisign.PublicKey.from_base64(public_key)
        )
        sig = minisign.Signature.from_bytes(_bytes(signature, artifact, ".minisig"))
        key.verify(_bytes(artifact), sig)
    except FileNotFoundError as exc:
        return SignatureResult(
            False, "minisign", f"missing file: {exc.filename}", missing=exc.filename
        )
    except minisign.Error as exc:
        return SignatureResult(False, "minisign", f"signature does not verify: {exc}")
    return SignatureResult(True, "minisign", signer=sig.trusted_comment or None)


def _bytes(
    value: str | os.PathLike[str] | bytes | None,
    beside: str | os.PathLike[str] | bytes | None = None,
    suffix: str = "",
) -> bytes:
    """Bytes given, or read from a path; None means the file `suffix` names beside `beside`."""
    if isinstance(value, bytes):
        return value
    if value is None:
        if beside is None or isinstance(beside, bytes):
            raise ValueError("a signature is needed when the artifact is given as bytes")
        value = f"{os.fspath(beside)}{suffix}"
    return Path(value).read_bytes()


# -- SSH ---------------------------------------------------------------------------------------


def _ssh_keygen() -> str:
    found = shutil.which("ssh-keygen")
    if found is None:
        raise SigningError("ssh-keygen is not installed (openssh-client)")
    return found


def ssh_sign(path: str | os.PathLike[str], key: str | os.PathLike[str]) -> Path:
    """Sign `path` with an SSH private key (`ssh-keygen -Y sign`); writes `<path>.sig`."""
    out = Path(f"{os.fspath(path)}.sig")
    out.unlink(missing_ok=True)
    proc = subprocess.run(
        [_ssh_keygen(), "-Y", "sign", "-f", os.fspath(key), "-n", SSH_NAMESPACE, os.fspath(path)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    if proc.returncode != 0 or not out.exists():
        raise SigningError(f"ssh-keygen could not sign: {proc.stderr.strip()}")
    return out


def ssh_verify(
    artifact: str | os.PathLike[str] | bytes,
    allowed_signers: str | os.PathLike[str],
    identity: str,
    *,
    signature: str | os.PathLike[str] | bytes | None = None,
) -> SignatureResult:
    """Verify an SSH signature (`<artifact>.sig` by default, or bytes) with `ssh-keygen -Y
    verify` against an allowed-signers file."""
    import tempfile

    try:
        data = _bytes(artifact)
        sig = _bytes(signature, artifact, ".sig")
    except FileNotFoundError as exc:
        return _missing("ssh", exc)
    with tempfile.NamedTemporaryFile(suffix=".sig") as sig_file:
        sig_file.write(sig)
        sig_file.flush()
        proc = subprocess.run(
            [
                _ssh_keygen(),
                "-Y",
                "verify",
                "-f",
                os.fspath(allowed_signers),
                "-I",
                identity,
                "-n",
                SSH_NAMESPACE,
                "-s",
                sig_file.name,
            ],
            input=data,
            capture_output=True,
            timeout=60,
        )
    if proc.returncode == 0:
        return SignatureResult(True, "ssh", signer=identity)
    reason = (proc.stderr or proc.stdout).decode(errors="replace").strip().splitlines()
    return SignatureResult(
        False, "ssh", f"signature does not verify: {reason[-1] if reason else ''}"
    )


# -- Sigstore ----------------------------------------------------------------------------------


def default_trusted_root() -> Path:
    """The public-good Sigstore trusted root shipped with the `sigstore` package."""
    import sigstore

    store = Path(sigstore.__file__).parent / "_store"
    return store / "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev" / "trusted_root.json"


def _verifier(trusted_root: str | os.PathLike[str] | None) -> Any:
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

    root = TrustedRoot.from_file(os.fspath(trusted_root or default_trusted_root()))
    return Verifier(trusted_root=root)  # no TUF, no network


def sigstore_verify(
    artifact: str | os.PathLike[str] | bytes,
    bundle: str | os.PathLike[str] | bytes,
    *,
    identity: str,
    issuer: str,
    trusted_root: str | os.PathLike[str] | None = None,
) -> SignatureResult:
    """Verify a Sigstore bundle (a file, or its bytes) over an artifact, offline, for a
    signer identity (the certificate's SAN) and OIDC issuer."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.verify.policy import Identity

    try:
        data = _bytes(artifact)
        parsed = _bundle(_bytes(bundle))
        _verifier(trusted_root).verify_artifact(
            data, parsed, Identity(identity=identity, issuer=issuer)
        )
    except FileNotFoundError as exc:
        return SignatureResult(
            False, "sigstore", f"missing file: {exc.filename}", missing=exc.filename
        )
    except NotABundle as exc:
        return SignatureResult(False, "sigstore", str(exc))
    except (SigstoreError, ValueError) as exc:
        return SignatureResult(False, "sigstore", f"bundle does not verify: {exc}")
    return SignatureResult(True, "sigstore", signer=identity)


class NotABundle(AtipError, ValueError):
    """Bytes that are not a Sigstore bundle. The message says what kind of problem, and
    never quotes the bytes: a file named as a bundle may be anything, a secret among
    them (sigstore's own error quotes the start and end of its input)."""


def _bundle(raw: bytes) -> Any:
    from sigstore.models import Bundle, InvalidBundle

    try:
        return Bundle.from_json(raw)
    except InvalidBundle as exc:
        cause = exc.__cause__ or exc.__context__
        kinds = sorted({e["type"] for e in getattr(cause, "errors", list)()})
        if kinds == ["json_invalid"]:
            raise NotABundle("not a Sigstore bundle: not JSON") from None
        words = {"missing": "missing fields", "extra_forbidden": "unknown fields"}
        said = ", ".join(sorted({words.get(k, "values of the wrong type") for k in kinds}))
        raise NotABundle(f"not a Sigstore bundle: {said or 'unreadable'}") from None


def sigstore_verify_dsse(
    bundle: str | os.PathLike[str],
    *,
    identity: str,
    issuer: str,
    trusted_root: str | os.PathLike[str] | None = None,
) -> tuple[SignatureResult, dict[str, Any] | None]:
    """Verify a Sigstore bundle holding a DSSE envelope; returns the in-toto statement.
    The statement's subjects still have to be compared with the artifact (`slsa`)."""

    from sigstore.errors import Error as SigstoreError
    from sigstore.verify.policy import Identity

    try:
        parsed = _bundle(Path(bundle).read_bytes())
        payload_type, payload = _verifier(trusted_root).verify_dsse(
            parsed, Identity(identity=identity, issuer=issuer)
        )
    except FileNotFoundError as exc:
        return SignatureResult(
            False, "sigstore", f"missing file: {exc.filename}", missing=exc.filename
        ), None
    except NotABundle as exc:
        return SignatureResult(False, "sigstore", str(exc)), None
    except (SigstoreError, ValueError) as exc:
        return SignatureResult(False, "sigstore", f"bundle does not verify: {exc}"), None
    if payload_type != "application/vnd.in-toto+json":
        return SignatureResult(False, "sigstore", f"unexpected payload type {payload_type}"), None
    try:  # signed by a trusted identity, and still read within the usual limits
        statement = _jsontext.decode(payload, "the signed statement")
    except DocumentError as exc:
        return SignatureResult(False, "sigstore", f"the signed statement: {exc}"), None
    return SignatureResult(True, "sigstore", signer=identity), statement
