"""`atip verify` and `atip shim sign|verify`: trust on the command line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Argument,
    AuthError,
    DataFormatError,
    DependencyError,
    InputError,
    NotFoundError,
    Option,
    Suggestion,
)
from atipkit.cli import app
from atipkit.cli._effects import read_only, resolving, signs_files
from atipkit.cli._policy import load_trust_policy
from atipkit.cli._resolve import resolve
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.model import Tool
    from atipkit.policy import Evidence


def _existing(path: Path, what: str) -> Path:
    """`path`, if it is a file; a missing file named on the command line is not found
    (exit 10), not a usage error."""
    if not path.is_file():
        raise NotFoundError(f"{what} {path}: no such file", details={"path": str(path)})
    return path


# -- atip verify -------------------------------------------------------------------------


def _verify_text(report: dict[str, Any]) -> str:
    lines = [
        f"{report['tool']}: {report['level']} (metadata source trust: {report['sourceTrust']})"
    ]
    for check in report["checks"]:
        mark = {True: "ok", False: "FAILED", None: "not checked"}[check["ok"]]
        lines.append(f"  {check['name']}: {mark} — {check['detail']}")
    return "".join(f"{line}\n" for line in lines)


@app.command(effects=resolving(), text=_verify_text)
def verify(
    tool: Annotated[str, Argument(help="A tool name on PATH, or a path to one.")],
    metadata: Annotated[
        Path | None,
        Option(
            help="Check against this ATIP document or shim instead of the resolved one.",
            dir_okay=False,
        ),
    ] = None,
    policy: Annotated[
        Path | None,
        Option(help="A trust policy (JSON; a registry's policy.json works too).", dir_okay=False),
    ] = None,
) -> dict[str, Any]:
    """Verify a tool's binary against its metadata: checksums, signatures, provenance.

    Reports the trust level (COMPROMISED, UNSIGNED, UNVERIFIED, PROVENANCE_FAIL,
    VERIFIED) and each check. Bundles and provenance are read beside the binary, from an
    https URL the metadata names (fetched unless ATIP_OFFLINE; cached), or from a path
    relative to the --metadata file; a path any other document names is never read.
    Anything less than VERIFIED is a permission error (exit 30) whose result is the
    report: code E2010 for COMPROMISED (the binary is not what its metadata says), E2011
    for a level between. A tool, binary or file that does not exist is exit 10; an
    invalid document or policy is exit 65.
    """
    from atipkit import paths
    from atipkit.policy import TrustLevel
    from atipkit.trust.levels import verify_tool
    from atipkit.trust.material import Sources

    binary, document, evidence = _binary_and_metadata(tool, metadata)
    sources = Sources(metadata_file=metadata, fetch=not paths.offline_requested())
    report = verify_tool(
        binary, document, load_trust_policy(policy), evidence=evidence, sources=sources
    )
    result = {"tool": document.name, "binary": binary, **report.to_dict()}
    if report.level is TrustLevel.COMPROMISED:
        failed = [c.name for c in report.checks if c.ok is False]
        raise AuthError(
            f"{document.name} is COMPROMISED: {', '.join(failed) or 'a check'} failed",
            code=ErrorCode.COMPROMISED,
            suggestion="Do not run this binary; reinstall it from a trusted source.",
            details={"level": report.level.name},
            result=result,
        )
    if report.level is not TrustLevel.VERIFIED:
        raise AuthError(
            f"{document.name} is {report.level.name}, not VERIFIED",
            code=ErrorCode.NOT_VERIFIED,
            suggestion="See the checks in the result for what is missing (a signature, "
            "provenance, a key in the trust policy).",
            details={"level": report.level.name},
            result=result,
        )
    return result


def _binary_and_metadata(tool: str, metadata: Path | None) -> tuple[str, Tool, Evidence]:
    """The binary, the metadata to check it against, and where that metadata came from
    (its source trust): a --metadata file is a document given (`low` at most)."""
    from atipkit.errors import DocumentError
    from atipkit.model import load
    from atipkit.policy import Evidence

    if metadata is not None:  # the document is given: only the binary is needed
        binary = shutil.which(tool) if os.sep not in tool else os.path.abspath(tool)
        if binary is None or not os.path.isfile(binary):
            raise NotFoundError(f"no executable {tool!r}", details={"tool": tool})
        try:
            return binary, load(_existing(metadata, "--metadata")), Evidence(origin="given")
        except DocumentError as exc:
            raise DataFormatError(f"--metadata {metadata}: {exc}") from None
    resolved = resolve(
        tool,
        no_metadata=Suggestion(
            "Give the tool's ATIP document or shim with --metadata.", example=None
        ),
    )
    if resolved.path is None:
        raise NotFoundError(f"{tool} has no binary on this machine", details={"tool": tool})
    return resolved.path, resolved.tool, resolved.evidence


# -- atip shim sign | verify -------------------------------------------------------------


shim_group = app.group("shim", help="Sign and verify shim files.")


def _sign_text(result: dict[str, Any]) -> str:
    return f"{result['signature']}\n"


@shim_group.command(effects=signs_files(), text=_sign_text)
def sign(
    file: Annotated[Path, Argument(help="The shim to sign.", dir_okay=False)],
    minisign_key: Annotated[
        Path | None,
        Option(help="A minisign secret key file (writes FILE.minisig).", dir_okay=False),
    ] = None,
    ssh_key: Annotated[
        Path | None,
        Option(help="An SSH private key (writes FILE.sig, namespace 'atip').", dir_okay=False),
    ] = None,
    password_env: Annotated[
        str | None, Option(help="Read the minisign key's password from this variable.")
    ] = None,
) -> dict[str, Any]:
    """Sign a shim with a local key: minisign or SSH.

    For Sigstore keyless signing, run `sigstore sign --bundle FILE.sigstore.json FILE`
    (or `cosign sign-blob --bundle`). The result names the signature file written. A
    key that cannot be used is exit 2; ssh-keygen missing or failing is exit 40.
    """
    from atipkit.trust.signatures import SigningError, minisign_sign, ssh_sign

    if (minisign_key is None) == (ssh_key is None):
        raise InputError(
            "give exactly one of --minisign-key and --ssh-key",
            suggestion="Sign with --minisign-key KEY or with --ssh-key KEY.",
        )
    _existing(file, "shim")
    if minisign_key is not None:
        _existing(minisign_key, "--minisign-key")
        password = None
        if password_env:
            password = os.environ.get(password_env)
            if password is None:
                raise InputError(
                    f"--password-env: the variable {password_env} is not set",
                    suggestion=f"Set {password_env} to the key's password.",
                )
        try:
            out = minisign_sign(file, minisign_key, password=password)
        except SigningError as exc:
            raise InputError(
                str(exc),
                code=ErrorCode.BAD_VALUE,
                suggestion="Check the key file, and give its password with --password-env VAR.",
            ) from None
        return {"file": str(file), "signature": str(out), "method": "minisign"}
    assert ssh_key is not None
    _existing(ssh_key, "--ssh-key")
    try:
        out = ssh_sign(file, ssh_key)
    except SigningError as exc:
        raise DependencyError(str(exc)) from None
    return {"file": str(file), "signature": str(out), "method": "ssh"}


def _shim_verify_text(result: dict[str, Any]) -> str:
    return (
        f"{result['file']}: {'verified' if result['ok'] else 'NOT verified'} ({result['method']})"
        + (f" — {result['reason']}" if result["reason"] else "")
        + (f"; signer: {result['signer']}" if result["ok"] and result["signer"] else "")
        + "\n"
    )


@shim_group.command(
    "verify", effects=read_only(reads_files=True, stdin="none"), text=_shim_verify_text
)
def shim_verify(
    file: Annotated[Path, Argument(help="The shim to verify.", dir_okay=False)],
    minisign_key: Annotated[
        str | None, Option(help="A minisign public key (file or base64).")
    ] = None,
    allowed_signers: Annotated[
        Path | None, Option(help="An SSH allowed-signers file.", dir_okay=False)
    ] = None,
    identity: Annotated[
        str | None, Option(help="The signer: SSH principal, or Sigstore certificate SAN.")
    ] = None,
    issuer: Annotated[str | None, Option(help="The Sigstore OIDC issuer.")] = None,
    trusted_root: Annotated[
        Path | None,
        Option(
            help="A Sigstore trusted root file (default: the sigstore package's).",
            dir_okay=False,
        ),
    ] = None,
) -> dict[str, Any]:
    """Verify a shim's signature: FILE.minisig, FILE.sig or FILE.sigstore.json.

    A signature that does not verify is a permission error (exit 30, code E2011) whose
    result says why; a missing shim, key or signature file is exit 10.
    """
    import msgspec

    from atipkit.trust import signatures as sig

    _existing(file, "shim")
    if minisign_key:
        result = sig.minisign_verify(file, minisign_key)
    elif allowed_signers:
        if not identity:
            raise InputError(
                "--allowed-signers needs --identity",
                suggestion="Name the signer's principal with --identity.",
            )
        try:
            result = sig.ssh_verify(file, _existing(allowed_signers, "--allowed-signers"), identity)
        except sig.SigningError as exc:  # ssh-keygen is missing
            raise DependencyError(str(exc)) from None
    elif identity and issuer:
        bundle = next(
            (b for b in (f"{file}.sigstore.json", f"{file}.bundle") if os.path.exists(b)),
            f"{file}.sigstore.json",
        )
        if trusted_root is not None:
            _existing(trusted_root, "--trusted-root")
        result = sig.sigstore_verify(
            file, bundle, identity=identity, issuer=issuer, trusted_root=trusted_root
        )
    else:
        raise InputError(
            "give --minisign-key, --allowed-signers with --identity, or "
            "--identity with --issuer (Sigstore)",
            suggestion="Say how the shim was signed: a minisign key, SSH allowed signers, "
            "or a Sigstore identity and issuer.",
        )
    report = {"file": str(file), **msgspec.to_builtins(result)}
    if result.ok:
        return report
    if result.missing is not None:
        raise NotFoundError(
            f"{file}: {result.reason}",
            suggestion="Sign the shim first (atip shim sign), or put its signature beside it.",
            result=report,
        )
    raise AuthError(
        f"{file}: NOT verified ({result.method}): {result.reason}",
        code=ErrorCode.NOT_VERIFIED,
        details={"method": result.method},
        result=report,
    )
