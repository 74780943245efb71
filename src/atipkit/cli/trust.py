"""`atip verify` and `atip shim sign|verify`: trust on the command line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import discovering, read_only, signs_files
from atipkit.introspect.click import AtipArgument, AtipCommand, AtipGroup

EXIT_COMPROMISED = 3


@click.command(cls=AtipCommand, effects=discovering())
@click.argument("tool", cls=AtipArgument, help="A tool name on PATH, or a path to one.")
@click.option(
    "--metadata",
    type=click.Path(dir_okay=False, exists=True),
    help="Check against this ATIP document or shim instead of the resolved one.",
)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(dir_okay=False, exists=True),
    help="A trust policy (JSON; a registry's policy.json works too).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def verify_command(
    ctx: click.Context, tool: str, metadata: str | None, policy_file: str | None, as_json: bool
) -> None:
    """Verify a tool's binary against its metadata: checksums, signatures, provenance.

    Prints the trust level (COMPROMISED, UNSIGNED, UNVERIFIED, PROVENANCE_FAIL,
    VERIFIED) and each check. Exit status: 0 VERIFIED, 1 anything less, 2 usage error,
    3 COMPROMISED.
    """
    from atipkit import paths
    from atipkit.model import load
    from atipkit.resolve import resolve_tool
    from atipkit.trust.levels import TrustLevel, TrustPolicy, verify_tool

    if metadata:  # the document is given: only the binary is needed
        binary = shutil.which(tool) if os.sep not in tool else os.path.abspath(tool)
        if binary is None or not os.path.isfile(binary):
            click.echo(f"atip verify: no executable {tool!r}", err=True)
            ctx.exit(EXIT_USAGE)
        document = load(metadata)
    else:
        try:
            resolved = resolve_tool(tool)
        except LookupError as exc:
            click.echo(f"atip verify: {exc}", err=True)
            ctx.exit(EXIT_USAGE)
        if resolved.path is None:
            click.echo(f"atip verify: {tool} has no binary on this machine", err=True)
            ctx.exit(EXIT_USAGE)
        binary, document = resolved.path, resolved.tool
    if policy_file:
        policy = TrustPolicy.from_json(Path(policy_file).read_bytes())
    else:
        configured = paths.user_config().get("trust")
        policy = TrustPolicy.from_json(json.dumps(configured)) if configured else TrustPolicy()
    report = verify_tool(binary, document, policy)
    if as_json:
        click.echo(
            json.dumps({"tool": document.name, "binary": binary, **report.to_dict()}, indent=2)
        )
    else:
        click.echo(
            f"{document.name}: {report.level.name} (metadata source trust: {report.source_trust})"
        )
        for check in report.checks:
            mark = {True: "ok", False: "FAILED", None: "not checked"}[check.ok]
            click.echo(f"  {check.name}: {mark} — {check.detail}")
    if report.level is TrustLevel.COMPROMISED:
        ctx.exit(EXIT_COMPROMISED)
    ctx.exit(EXIT_OK if report.level is TrustLevel.VERIFIED else EXIT_INVALID)


@click.group(cls=AtipGroup)
def shim_group() -> None:
    """Sign and verify shim files."""


@shim_group.command("sign", cls=AtipCommand, effects=signs_files())
@click.argument(
    "file", cls=AtipArgument, type=click.Path(dir_okay=False, exists=True), help="The shim to sign."
)
@click.option(
    "--minisign-key",
    type=click.Path(dir_okay=False, exists=True),
    help="A minisign secret key file (writes FILE.minisig).",
)
@click.option(
    "--ssh-key",
    type=click.Path(dir_okay=False, exists=True),
    help="An SSH private key (writes FILE.sig, namespace 'atip').",
)
@click.option("--password-env", help="Read the minisign key's password from this variable.")
@click.pass_context
def shim_sign(
    ctx: click.Context,
    file: str,
    minisign_key: str | None,
    ssh_key: str | None,
    password_env: str | None,
) -> None:
    """Sign a shim with a local key. For Sigstore keyless signing, run
    `sigstore sign --bundle FILE.sigstore.json FILE` (or `cosign sign-blob --bundle`)."""
    from atipkit.trust.signatures import SigningError, minisign_sign, ssh_sign

    if bool(minisign_key) == bool(ssh_key):
        raise click.UsageError("give exactly one of --minisign-key and --ssh-key")
    try:
        if minisign_key:
            password = os.environ.get(password_env) if password_env else None
            out = minisign_sign(file, minisign_key, password=password)
        else:
            assert ssh_key is not None
            out = ssh_sign(file, ssh_key)
    except SigningError as exc:
        click.echo(f"atip shim sign: {exc}", err=True)
        ctx.exit(EXIT_INVALID)
    click.echo(str(out))


@shim_group.command("verify", cls=AtipCommand, effects=read_only(reads_files=True, stdin="none"))
@click.argument(
    "file",
    cls=AtipArgument,
    type=click.Path(dir_okay=False, exists=True),
    help="The shim to verify.",
)
@click.option("--minisign-key", help="A minisign public key (file or base64).")
@click.option(
    "--allowed-signers",
    type=click.Path(dir_okay=False, exists=True),
    help="An SSH allowed-signers file.",
)
@click.option("--identity", help="The signer: SSH principal, or Sigstore certificate SAN.")
@click.option("--issuer", help="The Sigstore OIDC issuer.")
@click.option(
    "--trusted-root",
    type=click.Path(dir_okay=False, exists=True),
    help="A Sigstore trusted root file (default: the sigstore package's).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def shim_verify(
    ctx: click.Context,
    file: str,
    minisign_key: str | None,
    allowed_signers: str | None,
    identity: str | None,
    issuer: str | None,
    trusted_root: str | None,
    as_json: bool,
) -> None:
    """Verify a shim's signature: FILE.minisig, FILE.sig or FILE.sigstore.json.

    Exit status: 0 the signature verifies, 1 it does not, 2 usage error.
    """
    import msgspec

    from atipkit.trust import signatures as sig

    if minisign_key:
        result = sig.minisign_verify(file, minisign_key)
    elif allowed_signers:
        if not identity:
            raise click.UsageError("--allowed-signers needs --identity")
        result = sig.ssh_verify(file, allowed_signers, identity)
    elif identity and issuer:
        bundle = next(
            (b for b in (f"{file}.sigstore.json", f"{file}.bundle") if os.path.exists(b)),
            f"{file}.sigstore.json",
        )
        result = sig.sigstore_verify(
            file, bundle, identity=identity, issuer=issuer, trusted_root=trusted_root
        )
    else:
        raise click.UsageError(
            "give --minisign-key, --allowed-signers with --identity, or "
            "--identity with --issuer (Sigstore)"
        )
    if as_json:
        click.echo(json.dumps(msgspec.to_builtins(result), indent=2))
    else:
        click.echo(
            f"{file}: {'verified' if result.ok else 'NOT verified'} ({result.method})"
            + (f" — {result.reason}" if result.reason else "")
            + (f"; signer: {result.signer}" if result.ok and result.signer else "")
        )
    ctx.exit(EXIT_OK if result.ok else EXIT_INVALID)
