"""`atip registry`: remote registries — look shims up, list the configured registries, and
(see `cli/publish.py`) build and publish a static registry."""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import TYPE_CHECKING

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import fetches
from atipkit.introspect.click import AtipArgument, AtipCommand, AtipGroup

if TYPE_CHECKING:
    from atipkit.registry.config import RemoteRegistry
    from atipkit.registry.remote import Lookup, RemoteRegistries

EXIT_REJECTED = 3
_HASH = re.compile(r"(sha256:)?[0-9a-f]{64}\Z")


@click.group(cls=AtipGroup)
def registry_group() -> None:
    """Remote shim registries: look up, list, build, publish."""


@registry_group.command("fetch", cls=AtipCommand, effects=fetches())
@click.argument(
    "target",
    cls=AtipArgument,
    help="A binary's sha256 (sha256:<hex> or <hex>), or a tool name or path to hash.",
)
@click.option("--refresh", is_flag=True, help="Revalidate with the registries even if cached.")
@click.option("--json", "as_json", is_flag=True, help="Print the lookup report, shim included.")
@click.pass_context
def fetch_command(ctx: click.Context, target: str, refresh: bool, as_json: bool) -> None:
    """Look a shim up by binary hash in the configured registries.

    Prints the shim on stdout and where it came from on stderr. Exit status: 0 found,
    1 not found, 2 usage or configuration error, 3 a registry served a shim that was
    refused (wrong binary.hash, invalid, unsigned, too large) and none served a good one.
    """
    from atipkit.model import to_dict
    from atipkit.registry.config import RegistryConfigError
    from atipkit.registry.remote import RemoteRegistries

    hash_ = _hash_of(target)
    try:
        remote = RemoteRegistries.from_environment(refresh=refresh)
    except RegistryConfigError as exc:
        click.echo(f"atip registry fetch: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    if not remote.registries:
        click.echo(
            "atip registry fetch: no registries configured (registries.json or ATIP_REGISTRIES)",
            err=True,
        )
        ctx.exit(EXIT_USAGE)
    with remote:
        lookup = remote.lookup(hash_)
    shim = to_dict(lookup.tool) if lookup.tool else None
    if as_json:
        click.echo(json.dumps({**lookup.to_dict(), "shim": shim}, indent=2, ensure_ascii=False))
    else:
        if shim is not None:
            click.echo(json.dumps(shim, indent=2, ensure_ascii=False))
        _report(lookup)
    if lookup.tool is not None:
        ctx.exit(EXIT_OK)
    ctx.exit(EXIT_REJECTED if lookup.rejected else EXIT_INVALID)


def _hash_of(target: str) -> str:
    """A hash as given, or the sha256 of the binary a name or path points to."""
    from atipkit.trust.digest import file_digest

    if _HASH.match(target):
        return target
    binary = target if os.sep in target else shutil.which(target)
    if binary and os.path.isfile(binary):
        return file_digest(binary)
    raise click.BadParameter(
        f"{target[:80]!r} is not a sha256 hash (64 lowercase hex digits) nor an executable",
        param_hint="TARGET",
    )


def _report(lookup: Lookup) -> None:
    if lookup.tool is not None:
        how = (
            "stale copy: no registry could be reached"
            if lookup.stale
            else "revalidated (304)"
            if lookup.revalidated
            else "cached"
            if lookup.cached
            else "fetched"
        )
        signed = f"; signature: {lookup.verified}" if lookup.verified else ""
        click.echo(
            f"{lookup.hash}: {lookup.tool.name} {lookup.tool.version} from "
            f"{lookup.registry} ({how}{signed})",
            err=True,
        )
    else:
        click.echo(f"{lookup.hash}: no registry has a shim for this binary", err=True)
    for attempt in lookup.attempts:
        if attempt.outcome in ("found", "not-modified") and lookup.tool is not None:
            continue
        reason = f": {attempt.reason}" if attempt.reason else ""
        click.echo(f"  {attempt.registry}: {attempt.outcome}{reason}", err=True)


@registry_group.command("list", cls=AtipCommand, effects=fetches())
@click.option(
    "--check", is_flag=True, help="Also fetch each registry's manifest and say if it answers."
)
@click.option("--json", "as_json", is_flag=True, help="Print the registries as JSON.")
@click.pass_context
def list_command(ctx: click.Context, check: bool, as_json: bool) -> None:
    """The registries shims are looked up in, in the order they are asked.

    Tokens are never shown, only the variable that holds them. Exit status: 0, 1 when
    `--check` finds a registry that does not answer, 2 for a configuration error.
    """
    from atipkit.registry.config import RegistryConfigError, load_settings
    from atipkit.registry.remote import RemoteRegistries

    try:
        settings = load_settings()
    except RegistryConfigError as exc:
        click.echo(f"atip registry list: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    rows = []
    failed = False
    with RemoteRegistries(settings) as remote:
        for registry in settings.ordered:
            row = {
                "name": registry.name,
                "url": registry.url,
                "priority": registry.priority,
                "requireSignatures": settings.requires_signatures(registry),
                "auth": registry.auth.token_env_var if registry.auth else None,
                "signers": [s.identity for s in registry.signers],
                "minisignKeys": len(registry.minisign_keys),
                "sshAllowedSigners": registry.ssh_allowed_signers,
            }
            if check and not settings.offline:
                row["check"] = _check(remote, registry)
                failed |= not row["check"]["ok"]
            rows.append(row)
    if as_json:
        click.echo(
            json.dumps(
                {"source": settings.source, "offline": settings.offline, "registries": rows},
                indent=2,
            )
        )
    else:
        if not rows:
            click.echo("no registries configured (registries.json or ATIP_REGISTRIES)")
        for row in rows:
            extras = [f"priority {row['priority']}"]
            if row["requireSignatures"]:
                extras.append("signatures required")
            if row["auth"]:
                extras.append(f"token from ${row['auth']}")
            line = f"{row['name'] or row['url']}  {row['url']}  ({', '.join(extras)})"
            if "check" in row:
                line += "  " + row["check"]["detail"]
            click.echo(line)
        if settings.offline:
            click.echo("offline (ATIP_OFFLINE): only cached shims are used", err=True)
    ctx.exit(EXIT_INVALID if failed else EXIT_OK)


def _check(remote: RemoteRegistries, registry: RemoteRegistry) -> dict[str, object]:
    from atipkit.errors import AtipError

    try:
        manifest = remote.manifest(registry)
    except AtipError as exc:  # HttpError and Rejected are AtipErrors
        return {"ok": False, "detail": f"does not answer: {exc}"}
    if manifest is None:
        return {"ok": True, "detail": "answers (no manifest: default endpoints)"}
    info = manifest.registry
    return {
        "ok": True,
        "detail": f"answers: {info.name} {info.version}".rstrip(),
        "manifest": {"name": info.name, "version": info.version},
    }
