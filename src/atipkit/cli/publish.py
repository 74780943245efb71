"""`atip registry build` and `atip registry publish`: a folder of shims becomes a static
registry, and the registry goes to object storage or a directory."""

from __future__ import annotations

import json
from typing import Any

import click
import msgspec

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import builds_files, uploads
from atipkit.introspect.click import AtipArgument, AtipCommand


def _pairs(
    _ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[tuple[str, str]]:
    """`KEY=VALUE` options as pairs, split at the first `=`; a usage error naming the option
    for anything else."""
    pairs = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            raise click.BadParameter(f"expected {param.metavar}, got {value!r}", param=param)
        pairs.append((key, rest))
    return pairs


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


@click.command(cls=AtipCommand, effects=builds_files())
@click.argument(
    "src",
    cls=AtipArgument,
    type=click.Path(file_okay=False, exists=True),
    help="A directory of shims: every *.json below it, with signature files beside them.",
)
@click.argument(
    "dest",
    cls=AtipArgument,
    type=click.Path(file_okay=False),
    help="The registry directory to write (replaced whole when the build succeeds).",
)
@click.option("--name", help="The registry's name (default: ATIP registry).")
@click.option("--url", default="", help="The URL the registry will be served from.")
@click.option(
    "--require-signatures",
    is_flag=True,
    help="Declare that clients must verify signatures, and fail on any unsigned shim.",
)
@click.option(
    "--signer",
    "signers",
    multiple=True,
    metavar="IDENTITY=ISSUER",
    callback=_pairs,
    help="A Sigstore signer to declare in the manifest (repeatable).",
)
@click.option(
    "--platform",
    "platforms",
    multiple=True,
    help="A platform every tool should have, for coverage.json (repeatable; default: all seen).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON.")
@click.pass_context
def build_command(
    ctx: click.Context,
    src: str,
    dest: str,
    name: str | None,
    url: str,
    require_signatures: bool,
    signers: list[tuple[str, str]],
    platforms: tuple[str, ...],
    as_json: bool,
) -> None:
    """Build a static registry from a directory of shims.

    Writes shims/sha256/<hex>.json (bytes verbatim) and their signatures, the catalog
    shims/index.json, coverage.json, index.html and .well-known/atip-registry.json. The
    same shims give the same bytes (SOURCE_DATE_EPOCH fixes the date). Exit status: 0
    built or already up to date, 1 a shim is invalid, collides with another or is
    unsigned (DEST is left as it was), 2 usage error (SRC or DEST unusable).
    """
    from atipkit.registry.build import (
        DEFAULT_NAME,
        BuildError,
        BuildOptions,
        InvalidSource,
        build_registry,
    )
    from atipkit.registry.layout import Signer

    options = BuildOptions(
        name=name or DEFAULT_NAME,
        url=url,
        require_signatures=require_signatures,
        signers=tuple(Signer(identity, issuer) for identity, issuer in signers),
        platforms=platforms,
    )
    try:
        report = build_registry(src, dest, options)
    except InvalidSource as exc:
        if as_json:
            errors = [p.to_dict() for p in exc.problems]
            click.echo(json.dumps({"ok": False, "dest": dest, "errors": errors}, indent=2))
        for problem in exc.problems:
            click.echo(f"atip registry build: {problem.format()}", err=True)
        click.echo(
            f"atip registry build: {len(exc.problems)} problem(s); {dest} left as it was",
            err=True,
        )
        ctx.exit(EXIT_INVALID)
    except BuildError as exc:
        click.echo(f"atip registry build: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    for finding in report.warnings:
        click.echo(f"atip registry build: {finding.format()}", err=True)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        what = "built" if report.changed else "up to date:"
        click.echo(
            f"{what} {report.dest}: {_count(report.shims, 'shim')} of "
            f"{_count(report.tools, 'tool')}, {_count(report.signatures, 'signature')} "
            f"(updated {report.updated})"
        )
    ctx.exit(EXIT_OK)


def _option_value(text: str) -> Any:
    """A storage option's value: JSON where it parses (`true`, `3`, `{"a": 1}`), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@click.command(cls=AtipCommand, effects=uploads())
@click.argument(
    "dest",
    cls=AtipArgument,
    type=click.Path(file_okay=False, exists=True),
    help="A registry built by atip registry build.",
)
@click.argument(
    "target",
    cls=AtipArgument,
    help="A directory, or an fsspec URL: s3://bucket/prefix, gs://bucket/prefix, file://...",
)
@click.option("--dry-run", is_flag=True, help="Say what would be uploaded; upload nothing.")
@click.option("--endpoint-url", help="The object store's endpoint (S3-compatible servers).")
@click.option(
    "-o",
    "--storage-option",
    "storage_options",
    multiple=True,
    metavar="KEY=VALUE",
    callback=_pairs,
    help="An option for the filesystem (repeatable; VALUE is JSON where it parses).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the publish report as JSON.")
@click.pass_context
def publish_command(
    ctx: click.Context,
    dest: str,
    target: str,
    dry_run: bool,
    endpoint_url: str | None,
    storage_options: list[tuple[str, str]],
    as_json: bool,
) -> None:
    """Upload a built registry; only files that changed are sent.

    Shims and signatures go first, then the catalog, coverage and page, the manifest last;
    each object gets its Content-Type and Cache-Control. Nothing is ever deleted.
    Credentials come from the filesystem's usual environment (AWS_*, ...). Exit status:
    0 published (or nothing to do), 1 the store failed (missing bucket, access denied,
    network), 2 usage error (not a registry, unknown protocol, filesystem not installed).
    """
    from atipkit.registry.publish import BadTarget, PublishError, PublishFailed, publish

    options = {key: _option_value(value) for key, value in storage_options}
    try:
        report = publish(
            dest, target, dry_run=dry_run, endpoint_url=endpoint_url, storage_options=options
        )
    except BadTarget as exc:
        click.echo(f"atip registry publish: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    except PublishFailed as exc:
        click.echo(f"atip registry publish: {exc}", err=True)
        if exc.uploaded:
            click.echo(
                f"atip registry publish: uploaded before the failure (kept; a rerun sends the "
                f"rest): {', '.join(u.path for u in exc.uploaded)}",
                err=True,
            )
        if as_json:
            sent = [msgspec.to_builtins(u) for u in exc.uploaded]
            click.echo(json.dumps({"ok": False, "error": str(exc), "uploaded": sent}, indent=2))
        ctx.exit(EXIT_INVALID)
    except PublishError as exc:
        click.echo(f"atip registry publish: {exc}", err=True)
        ctx.exit(EXIT_INVALID)
    for message in report.warnings:
        click.echo(f"atip registry publish: warning: {message}", err=True)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        ctx.exit(EXIT_OK)
    verb = "would upload" if dry_run else "uploaded"
    for upload in report.uploaded:
        click.echo(f"{verb} {upload.path} ({_size(upload.size)}, {upload.content_type})")
    click.echo(
        f"{report.target}: {len(report.uploaded)} {verb} ({_size(report.uploaded_bytes)}), "
        f"{report.unchanged} unchanged ({_size(report.unchanged_bytes)})"
    )
    ctx.exit(EXIT_OK)
