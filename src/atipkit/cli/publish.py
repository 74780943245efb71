"""`atip registry build` and `atip registry publish`: a folder of shims becomes a static
registry, and the registry goes to object storage or a directory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from atipkit.app import (
    Argument,
    Context,
    DataFormatError,
    DependencyError,
    InputError,
    Option,
    Suggestion,
)
from atipkit.cli import _errors as errors
from atipkit.cli._effects import builds_files, uploads
from atipkit.cli.registry import registry_group

# `KEY=VALUE`, neither empty: stated in the schema, so an agent knows the form before it calls.
_PAIR = r"^[^=]+=."


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


# -- build ---------------------------------------------------------------------------------


def _finding(entry: dict[str, Any]) -> str:
    """`FILE: LOCATION: message`, the line a person reads for a finding of the report."""
    return ": ".join(p for p in (entry["file"], entry["location"], entry["message"]) if p)


def _build_text(report: dict[str, Any]) -> str:
    """The summary line of a build; for a refused build, one line per problem (the error
    itself goes to stderr)."""
    if not report["ok"]:
        return "".join(f"{_finding(e)}\n" for e in report["errors"])
    what = "built" if report["changed"] else "up to date:"
    return (
        f"{what} {report['dest']}: {_count(report['shims'], 'shim')} of "
        f"{_count(report['tools'], 'tool')}, {_count(report['signatures'], 'signature')} "
        f"(updated {report['updated']})\n"
    )


@registry_group.command(effects=builds_files(), text=_build_text)
def build(
    src: Annotated[
        Path,
        Argument(
            help="A directory of shims: every *.json below it, with signature files beside them.",
            file_okay=False,
        ),
    ],
    dest: Annotated[
        Path,
        Argument(
            help="The registry directory to write (replaced whole when the build succeeds).",
            file_okay=False,
        ),
    ],
    ctx: Context,
    name: Annotated[
        str | None, Option(help="The registry's name (default: ATIP registry).")
    ] = None,
    url: Annotated[
        str | None,
        Option(help="The URL the registry will be served from (http:// or https://)."),
    ] = None,
    require_signatures: Annotated[
        bool,
        Option(help="Declare that clients must verify signatures, and fail on any unsigned shim."),
    ] = False,
    signer: Annotated[
        Sequence[str],
        Option(
            help="A Sigstore signer to declare in the manifest (repeatable).",
            metavar="IDENTITY=ISSUER",
            pattern=_PAIR,
        ),
    ] = (),
    platform: Annotated[
        Sequence[str],
        Option(
            help="A platform every tool should have, for coverage.json (repeatable; default: "
            "all seen)."
        ),
    ] = (),
) -> dict[str, Any]:
    """Build a static registry from a directory of shims.

    Writes shims/sha256/<hex>.json (bytes verbatim) and their signatures, the catalog
    shims/index.json, coverage.json, index.html and .well-known/atip-registry.json. The
    same shims give the same bytes (SOURCE_DATE_EPOCH fixes the date); a rebuild that
    changes nothing writes nothing. A shim that is invalid, collides with another or is
    unsigned (with --require-signatures) fails the build with a data-format error (exit 65)
    whose result lists every problem, and DEST is left as it was; SRC missing is exit 10;
    SRC or DEST unusable (DEST not a registry, one inside the other) is exit 2.
    """
    from atipkit.registry.build import (
        DEFAULT_NAME,
        BuildError,
        BuildOptions,
        InvalidSource,
        build_registry,
    )
    from atipkit.registry.layout import Signer

    errors.require_directory(
        src, "SRC", "Give the directory of shims, such as what atip crawl --out wrote."
    )
    pairs = [value.partition("=") for value in signer]
    options = BuildOptions(
        name=name or DEFAULT_NAME,
        url=url or "",
        require_signatures=require_signatures,
        signers=tuple(Signer(identity, issuer) for identity, _, issuer in pairs),
        platforms=tuple(platform),
    )
    try:
        report = build_registry(src, dest, options)
    except InvalidSource as exc:
        problems = len(exc.problems)
        raise DataFormatError(
            f"{_count(problems, 'problem')} in {src}; {dest} left as it was",
            suggestion=Suggestion(
                "Fix or remove the shims that result.errors names, then build again."
            ),
            details={"problems": problems},
            result={"ok": False, "dest": str(dest), "errors": [p.to_dict() for p in exc.problems]},
        ) from None
    except BuildError as exc:
        raise InputError(str(exc)) from None
    for finding in report.warnings:
        problem = finding.problem
        ctx.warn(": ".join(p for p in (finding.file, problem.location, problem.message) if p))
    return report.to_dict()


# -- publish -------------------------------------------------------------------------------


def _option_value(text: str) -> Any:
    """A storage option's value: JSON where it parses (`true`, `3`, `{"a": 1}`) within
    atipkit's limits, else text."""
    from atipkit import _jsontext

    try:
        return _jsontext.decode(text)
    except ValueError:  # a DocumentError is a ValueError
        return text


def _publish_text(result: dict[str, Any]) -> str:
    """One line an upload, then the summary; with --dry-run the plan's report, in the
    conditional; after a failure, what had been uploaded before it."""
    report = result["result"] if "actions" in result else result
    verb = "would upload" if report.get("dryRun") else "uploaded"
    lines = [
        f"{verb} {u['path']} ({_size(u['size'])}, {u['content_type']})" for u in report["uploaded"]
    ]
    uploaded = f"{len(report['uploaded'])} {verb} ({_size(report['uploadedBytes'])})"
    if not report["ok"]:
        lines.append(f"{report['target']}: {uploaded} before the failure")
    else:
        unchanged = f"{report['unchanged']} unchanged ({_size(report['unchangedBytes'])})"
        lines.append(f"{report['target']}: {uploaded}, {unchanged}")
    return "".join(f"{line}\n" for line in lines)


@registry_group.command(effects=uploads(), dry_run=True, text=_publish_text)
def publish(
    dest: Annotated[
        Path, Argument(help="A registry built by atip registry build.", file_okay=False)
    ],
    target: Annotated[
        str,
        Argument(
            help="A directory, or an fsspec URL: s3://bucket/prefix, gs://bucket/prefix, file://..."
        ),
    ],
    ctx: Context,
    endpoint_url: Annotated[
        str | None, Option(help="The object store's endpoint (S3-compatible servers).")
    ] = None,
    storage_option: Annotated[
        Sequence[str],
        Option(
            help="An option for the filesystem (repeatable; VALUE is JSON where it parses).",
            metavar="KEY=VALUE",
            pattern=_PAIR,
        ),
    ] = (),
) -> dict[str, Any]:
    """Upload a built registry; only files that changed are sent.

    Shims and signatures go first, then the catalog, coverage and page, the manifest last;
    each object gets its Content-Type and Cache-Control. Nothing is ever deleted. With
    --dry-run the target is compared and nothing is sent. Credentials come from the
    filesystem's usual environment (AWS_*, ...). A store that fails (missing bucket,
    access denied, network) is exit 40, and the result lists what was uploaded before
    (it stays; a rerun sends the rest); the filesystem package missing is exit 40 too;
    DEST missing is exit 10; not a registry, an unknown protocol or a bad storage option
    is exit 2.
    """
    from atipkit.registry.publish import (
        INSTALL_HINT,
        BadTarget,
        MissingPackage,
        PublishError,
        PublishFailed,
        redact,
    )
    from atipkit.registry.publish import publish as upload

    errors.require_directory(dest, "DEST", "Give the directory atip registry build wrote.")
    pairs = (value.partition("=") for value in storage_option)
    options = {key: _option_value(value) for key, _, value in pairs}
    try:
        report = upload(
            dest,
            target,
            dry_run=ctx.dry_run,
            endpoint_url=endpoint_url,
            storage_options=options,
        )
    except BadTarget as exc:
        if isinstance(exc, MissingPackage):
            raise errors.missing_extra(str(exc), INSTALL_HINT) from None
        raise InputError(str(exc)) from None
    except PublishFailed as exc:
        sent = [u.path for u in exc.uploaded]
        raise DependencyError(
            str(exc),
            suggestion=Suggestion(
                "Fix the store's problem and publish again: what result.uploaded lists stays, "
                "and a rerun sends only the rest.",
                action="retry",
            ),
            details={"uploaded_before": len(sent)},
            result={
                "ok": False,
                "target": redact(target),
                "dryRun": False,
                "uploaded": [_upload(u) for u in exc.uploaded],
                "uploadedBytes": sum(u.size for u in exc.uploaded),
            },
        ) from None
    except PublishError as exc:  # not raised by publish() today; kept for the contract
        raise DependencyError(str(exc)) from None
    for message in report.warnings:
        ctx.warn(message)
    if ctx.dry_run:
        for u in report.uploaded:
            ctx.plan("upload", u.path, size=u.size, content_type=u.content_type)
    return report.to_dict()


def _upload(upload: Any) -> dict[str, Any]:
    import msgspec

    return msgspec.to_builtins(upload)
