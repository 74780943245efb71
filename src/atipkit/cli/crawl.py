"""`atip crawl`: shims for the binaries package sources publish (RFC 0.6 §4.10)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Argument,
    Context,
    DataFormatError,
    DependencyError,
    InputError,
    NotFoundError,
    Option,
    Suggestion,
)
from atipkit.cli import _errors as errors
from atipkit.cli import app
from atipkit.cli._effects import crawls
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.crawl import CrawlManifest

MiB = 1 << 20
_HTTP = r"^https?://"


def _text(report: dict[str, Any]) -> str:
    """One tab-separated line an artifact (tool, source, platform, version, status, shim
    or reason) and one a source that failed: for `cut` and people alike."""
    lines = []
    for tool in report["tools"]:
        for a in tool["artifacts"]:
            where = a.get("shim") or a.get("reason") or ""
            fields = (tool["name"], a["source"], a["platform"], a.get("version") or "")
            lines.append("\t".join((*fields, a["status"], where)))
        for error in tool["errors"]:
            lines.append(f"{tool['name']}\t{error.split(':', 1)[0]}\t\t\tfailed\t{error}")
    return "".join(f"{line}\n" for line in lines)


@app.command(effects=crawls(), text=_text)
def crawl(
    ctx: Context,
    tool: Annotated[
        str | None,
        Argument(help="The tool to crawl: its manifest is TOOL.yaml (or .yml) in --manifests."),
    ] = None,
    all: Annotated[bool, Option(help="Crawl every manifest in --manifests.")] = False,
    check: Annotated[
        bool, Option(help="Only ask the sources what is new; download nothing.")
    ] = False,
    manifests: Annotated[
        Path, Option(help="The directory of tool manifests.", file_okay=False)
    ] = Path("tools"),
    out: Annotated[
        Path,
        Option(
            help="Where shims are written (shims/sha256/<hex>.json): the input of atip "
            "registry build.",
            file_okay=False,
        ),
    ] = Path("registry-src"),
    work: Annotated[
        Path | None,
        Option(
            help="Downloads and apt's private state [default: crawl/ in the cache directory].",
            file_okay=False,
        ),
    ] = None,
    platform: Annotated[
        Sequence[str],
        Option(help="Only this platform, e.g. linux-amd64 (repeatable).", metavar="PLATFORM"),
    ] = (),
    github_api: Annotated[
        str | None,
        Option(
            help="GitHub API base for manifests that name none [env ATIP_GITHUB_API].",
            envvar="ATIP_GITHUB_API",
            metavar="URL",
            pattern=_HTTP,
        ),
    ] = None,
    pypi_index: Annotated[
        str | None,
        Option(
            help="Python package index for manifests that name none [env ATIP_PYPI_INDEX].",
            envvar="ATIP_PYPI_INDEX",
            metavar="URL",
            pattern=_HTTP,
        ),
    ] = None,
    npm_registry: Annotated[
        str | None,
        Option(
            help="npm registry for manifests that name none [env ATIP_NPM_REGISTRY].",
            envvar="ATIP_NPM_REGISTRY",
            metavar="URL",
            pattern=_HTTP,
        ),
    ] = None,
    apt_source: Annotated[
        Sequence[str],
        Option(
            help="An apt source ('deb URI SUITE [COMPONENT...]') for manifests that list "
            "none, instead of the system's (repeatable) [env ATIP_APT_SOURCES, one per line].",
            metavar="LINE",
        ),
    ] = (),
    homebrew_api: Annotated[
        str | None,
        Option(
            help="Homebrew's formula API for manifests that name none [env ATIP_HOMEBREW_API].",
            envvar="ATIP_HOMEBREW_API",
            metavar="URL",
            pattern=_HTTP,
        ),
    ] = None,
    scoop_bucket: Annotated[
        str | None,
        Option(
            help="The Scoop bucket's manifest folder for manifests that name none "
            "[env ATIP_SCOOP_BUCKET].",
            envvar="ATIP_SCOOP_BUCKET",
            metavar="URL",
            pattern=_HTTP,
        ),
    ] = None,
    chocolatey_feed: Annotated[
        str | None,
        Option(
            help="Chocolatey OData feed for manifests that name none [env ATIP_CHOCOLATEY_FEED].",
            envvar="ATIP_CHOCOLATEY_FEED",
            metavar="URL",
            pattern=_HTTP,
        ),
    ] = None,
    review: Annotated[
        bool,
        Option(
            help="Queue the shims generated for review (atip review) instead of writing "
            "them to --out."
        ),
    ] = False,
    max_download: Annotated[
        int, Option(help="MiB one download may have.", metavar="MIB", min=1, max=1 << 16)
    ] = 256,
    budget: Annotated[
        float,
        Option(
            help="Seconds after which reading one binary that hangs is stopped (its work "
            "is counted in runs and pages, not time).",
            metavar="SECONDS",
            min=1,
            max=600,
        ),
    ] = 120.0,
) -> dict[str, Any]:
    """Generate shims for the binaries that package sources publish.

    For each tool manifest: ask its sources (apt, GitHub releases, Homebrew, PyPI, npm,
    Scoop, Chocolatey, URLs) what they offer, download each platform's artifact, check
    its digest, hash the binary, and write a shim (the template over what --help says)
    named by the hash; with --review, queue it for atip review instead. Known binaries
    and unchanged artifacts are skipped; --check only asks what is new (the sources are
    read, apt's lists kept in --work, nothing downloaded or written to --out). The
    result is the report, one entry an artifact; progress lines are notes for people
    on stderr. Exit status: 0 done; 40 some tool or platform failed (the
    others are done; the result is the report); 2 usage error; 10 no manifest for TOOL;
    65 a bad manifest (nothing is crawled).
    """
    from atipkit import paths
    from atipkit.crawl import CrawlSettings, Limits, Overrides
    from atipkit.crawl import crawl as run_crawl
    from atipkit.crawl.platforms import check as known_platform

    if bool(tool) == all:
        raise InputError(
            "name one TOOL, or --all",
            suggestion=Suggestion(
                "Give a tool's name, or --all, not both.", example="atip crawl jq"
            ),
        )
    for name in platform:
        try:
            known_platform(name)
        except ValueError as exc:
            raise InputError(
                f"Invalid value for '--platform': {exc}",
                code=ErrorCode.BAD_VALUE,
                details={"param": "platform"},
            ) from None
    loaded = _manifests(manifests, None if all else tool)
    settings = CrawlSettings(
        out=out,
        work=work or paths.cache_dir() / "crawl",
        check=check,
        limits=Limits(max_download=max_download * MiB),
        overrides=Overrides(
            github_api=github_api,
            pypi_index=pypi_index,
            npm_registry=npm_registry,
            apt_sources=tuple(apt_source) or _env_lines("ATIP_APT_SOURCES"),
            homebrew_api=homebrew_api,
            scoop_bucket=scoop_bucket,
            chocolatey_feed=chocolatey_feed,
        ),
        platforms=frozenset(platform) or None,
        github_token=os.environ.get("GITHUB_TOKEN") or None,
        budget=budget,
        review=review,
    )
    report = run_crawl(loaded, settings, lambda name, line: ctx.info(f"[{name}] {line}"))
    result = report.to_dict()
    if not report.ok:
        failed = sum(a.status == "failed" for t in report.tools for a in t.artifacts)
        sources = sum(len(t.errors) for t in report.tools)
        what = [_count(n, noun) for n, noun in ((failed, "artifact"), (sources, "source")) if n]
        raise DependencyError(
            f"crawl incomplete: {' and '.join(what)} failed; the rest is done",
            suggestion=Suggestion(
                "See the reasons in result.tools (artifacts[].reason, errors); crawl again "
                "once the cause is fixed: what is done is skipped.",
                action="retry",
            ),
            details={"failed_artifacts": failed, "failed_sources": sources},
            result=result,
        )
    return result


def _manifests(folder: Path, tool: str | None) -> list[CrawlManifest]:
    """The manifests to crawl, every one read and checked before anything is crawled."""
    from atipkit.crawl import (
        CrawlManifestError,
        ManifestNotFound,
        MissingExtra,
        NotAToolName,
        find_manifests,
        load_manifest,
        manifest_path,
    )

    errors.require_directory(
        folder, "tool manifests", "Give the directory of TOOL.yaml manifests with --manifests."
    )
    try:
        files = find_manifests(folder) if tool is None else [manifest_path(folder, tool)]
    except CrawlManifestError as exc:
        if isinstance(exc, ManifestNotFound):
            raise NotFoundError(
                str(exc),
                suggestion="Name a tool that has a manifest, or write TOOL.yaml first.",
                details={"tool": tool},
            ) from None
        if isinstance(exc, NotAToolName):
            raise InputError(
                str(exc), code=ErrorCode.BAD_VALUE, details={"param": "tool"}
            ) from None
        raise DataFormatError(str(exc), details={"file": exc.file}) from None
    try:
        return [load_manifest(f) for f in files]
    except MissingExtra as exc:
        raise errors.missing_extra(str(exc), "pip install 'atipkit[crawl]'") from None
    except CrawlManifestError as exc:
        raise DataFormatError(
            str(exc),
            suggestion="Fix the manifest at the field the message names.",
            details={"file": exc.file, "field": exc.field},
        ) from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _env_lines(variable: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in os.environ.get(variable, "").splitlines() if line.strip())
