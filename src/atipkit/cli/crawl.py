"""`atip crawl`: shims for the binaries package sources publish (RFC 0.6 §4.10)."""

from __future__ import annotations

import json
import os

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import crawls
from atipkit.introspect.click import AtipArgument, AtipCommand

MiB = 1 << 20


def _platform(
    _ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    from atipkit.registry.crawl.platforms import check

    try:
        return tuple(check(v) for v in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.startswith(("https://", "http://")):
        raise click.BadParameter(f"expected an http(s) URL, got {value[:80]!r}")
    return value


@click.command(cls=AtipCommand, effects=crawls())
@click.argument(
    "tool",
    cls=AtipArgument,
    required=False,
    help="The tool to crawl: its manifest is TOOL.yaml (or .yml) in --manifests.",
)
@click.option("--all", "every", is_flag=True, help="Crawl every manifest in --manifests.")
@click.option("--check", is_flag=True, help="Only ask the sources what is new; download nothing.")
@click.option(
    "--manifests",
    type=click.Path(file_okay=False),
    default="tools",
    show_default=True,
    help="The directory of tool manifests.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="registry-src",
    show_default=True,
    help="Where shims are written (shims/sha256/<hex>.json): the input of atip registry build.",
)
@click.option(
    "--work",
    type=click.Path(file_okay=False),
    help="Downloads and apt's private state [default: crawl/ in the cache directory].",
)
@click.option(
    "--platform",
    "only",
    multiple=True,
    metavar="PLATFORM",
    callback=_platform,
    help="Only this platform, e.g. linux-amd64 (repeatable).",
)
@click.option(
    "--github-api",
    envvar="ATIP_GITHUB_API",
    metavar="URL",
    callback=_url,
    help="GitHub API base for manifests that name none [env ATIP_GITHUB_API].",
)
@click.option(
    "--pypi-index",
    envvar="ATIP_PYPI_INDEX",
    metavar="URL",
    callback=_url,
    help="Python package index for manifests that name none [env ATIP_PYPI_INDEX].",
)
@click.option(
    "--npm-registry",
    envvar="ATIP_NPM_REGISTRY",
    metavar="URL",
    callback=_url,
    help="npm registry for manifests that name none [env ATIP_NPM_REGISTRY].",
)
@click.option(
    "--apt-source",
    "apt_sources",
    multiple=True,
    metavar="LINE",
    help="An apt source ('deb URI SUITE [COMPONENT...]') for manifests that list none, "
    "instead of the system's (repeatable) [env ATIP_APT_SOURCES, one per line].",
)
@click.option(
    "--max-download",
    type=click.IntRange(1, 1 << 16),
    metavar="MIB",
    default=256,
    show_default=True,
    help="MiB one download may have.",
)
@click.option(
    "--budget",
    type=click.FloatRange(1, 600),
    metavar="SECONDS",
    default=10.0,
    show_default=True,
    help="Seconds to read one binary's --help and man page.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def crawl_command(
    ctx: click.Context,
    tool: str | None,
    every: bool,
    check: bool,
    manifests: str,
    out: str,
    work: str | None,
    only: tuple[str, ...],
    github_api: str | None,
    pypi_index: str | None,
    npm_registry: str | None,
    apt_sources: tuple[str, ...],
    max_download: int,
    budget: float,
    as_json: bool,
) -> None:
    """Generate shims for the binaries that package sources publish.

    For each tool manifest: ask its sources (apt, GitHub releases, PyPI, npm, URLs) what
    they offer, download each platform's artifact, check its digest, hash the binary,
    and write a shim (the template over what --help says) named by the hash. Known
    binaries and unchanged artifacts are skipped. Progress goes to stderr. Exit status:
    0 done, 1 some tool or platform failed (the others are done), 2 usage error or a bad
    manifest (nothing is crawled).
    """
    from pathlib import Path

    from atipkit import paths
    from atipkit.registry.crawl import (
        CrawlError,
        Limits,
        Overrides,
        Settings,
        crawl,
        find_manifests,
        load_manifest,
        manifest_path,
    )

    if bool(tool) == every:
        raise click.UsageError("name one TOOL, or --all")
    try:
        files = find_manifests(manifests) if every else [manifest_path(manifests, tool or "")]
        loaded = [load_manifest(f) for f in files]
    except CrawlError as exc:
        click.echo(f"atip crawl: {exc}", err=True)
        ctx.exit(EXIT_USAGE)
    settings = Settings(
        out=Path(out),
        work=Path(work) if work else paths.cache_dir() / "crawl",
        check=check,
        limits=Limits(max_download=max_download * MiB),
        overrides=Overrides(
            github_api=github_api,
            pypi_index=pypi_index,
            npm_registry=npm_registry,
            apt_sources=apt_sources or _env_lines("ATIP_APT_SOURCES"),
        ),
        platforms=frozenset(only) or None,
        github_token=os.environ.get("GITHUB_TOKEN") or None,
        budget=budget,
    )
    report = crawl(loaded, settings, lambda name, line: click.echo(f"[{name}] {line}", err=True))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        for done in report.tools:
            for a in done.artifacts:
                where = a.shim or a.reason or ""
                click.echo(
                    f"{done.name}\t{a.source}\t{a.platform}\t{a.version or ''}\t{a.status}\t{where}"
                )
            for error in done.errors:
                click.echo(f"{done.name}\t{error.split(':', 1)[0]}\t\t\tfailed\t{error}")
    ctx.exit(EXIT_OK if report.ok else EXIT_INVALID)


def _env_lines(variable: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in os.environ.get(variable, "").splitlines() if line.strip())
