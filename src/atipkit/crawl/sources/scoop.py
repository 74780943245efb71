"""Scoop apps (RFC 0.6 §4.10.1 "Chocolatey/Scoop"): the app manifest of a bucket
(`{bucket}/{app}.json`), its download per architecture checked against its `hash`, and
the file its `bin` names.

An app manifest gives `version`, `url`, `hash`, `extract_dir` and `bin` at its top level
or per architecture (`architecture.64bit`, `32bit`, `arm64`, which win): `windows-amd64`
is `64bit`, `windows-386` `32bit`, `windows-arm64` `arm64`. `hash` is sha256 hex, or
`sha256:`/`sha512:` and hex; an app with only `sha1:`/`md5:`, or none, is refused, as
is one with several downloads for a platform. A URL's `#/NAME` fragment names the file
(Scoop's renaming). `bin` is a path in the app's directory (a string, or
`[path, alias, arguments...]`); the command is the alias, else the file's name without
`.exe`/`.cmd`/`.bat`/`.ps1`, and the manifest's `bin` (default: the tool's name) picks
it. A `bin` or `extract_dir` that leaves the app's directory is refused.

The bucket is the manifest's `bucket`, else `--scoop-bucket`/`ATIP_SCOOP_BUCKET`, else
Scoop's Main bucket on raw.githubusercontent.com. `fetch` reads the app manifest again
and refuses it if its download changed since `resolve`.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from urllib.parse import quote, urlsplit

import msgspec

from atipkit.crawl import tree
from atipkit.crawl.archive import member_path
from atipkit.crawl.errors import ArchiveError, SourceError
from atipkit.crawl.manifest import CrawlManifest, ScoopSource
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext, shaped

LABEL = "Scoop"
DEFAULT_BUCKET = "https://raw.githubusercontent.com/ScoopInstaller/Main/master/bucket"
ARCHITECTURES = {"windows-amd64": "64bit", "windows-386": "32bit", "windows-arm64": "arm64"}
SCRIPT_SUFFIXES = (".exe", ".cmd", ".bat", ".ps1", ".com")
Bin = str | list[str | list[str]] | None
OneOrMany = str | list[str] | None


class _Arch(msgspec.Struct):
    url: OneOrMany = None
    hash: OneOrMany = None
    extract_dir: OneOrMany = None
    bin: Bin = None


class _App(msgspec.Struct):
    version: str
    url: OneOrMany = None
    hash: OneOrMany = None
    extract_dir: OneOrMany = None
    bin: Bin = None
    architecture: dict[str, _Arch] = {}


class Plan(msgspec.Struct, frozen=True):
    """What one platform's install is: the download, its digest, the folder of the
    archive that is the app's directory, and the `bin` entries."""

    url: str
    digest: str
    filename: str
    extract_dir: str | None
    bins: list[tuple[str, str]]  # (path in the app's directory, command)


def _app(spec: ScoopSource, manifest: CrawlManifest, ctx: SourceContext) -> tuple[str, _App]:
    app = spec.app or manifest.name
    base = (spec.bucket or ctx.overrides.scoop_bucket or DEFAULT_BUCKET).rstrip("/")
    url = f"{base}/{quote(app, safe='')}.json"
    return url, shaped(ctx.get_json(url), _App, url, "a Scoop app manifest")


def plan(app: _App, platform: str, url: str) -> Plan | str:
    """The install of `platform`, or why there is none (a str)."""
    arch = app.architecture.get(ARCHITECTURES.get(platform, ""), _Arch())
    urls = _many(arch.url if arch.url is not None else app.url)
    hashes = _many(arch.hash if arch.hash is not None else app.hash)
    if not urls:
        return f"the app has no download for {platform}"
    if len(urls) > 1:
        return f"the app has {len(urls)} downloads for {platform}; the crawler takes one"
    if len(hashes) != 1:
        raise SourceError(f"{url}: {len(hashes)} hashes for one download; refused")
    extract = _many(arch.extract_dir if arch.extract_dir is not None else app.extract_dir)
    download, _, rename = urls[0].partition("#/")
    if not download.startswith(("https://", "http://")):
        raise SourceError(f"{url}: url is not http(s): {download[:80]!r}")
    filename = rename or posixpath.basename(urlsplit(download).path) or "download"
    entries = arch.bin if arch.bin is not None else app.bin
    return Plan(
        url=download,
        digest=_digest(hashes[0], url),
        filename=_inside(filename, "url's file name", url),
        extract_dir=_inside(extract[0], "extract_dir", url) if extract else None,
        bins=[_bin(entry, url) for entry in _many_bins(entries)],
    )


def _many(value: OneOrMany) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else value


def _many_bins(value: Bin) -> list[str | list[str]]:
    return [] if value is None else [value] if isinstance(value, str) else value


def _digest(value: str, url: str) -> str:
    from atipkit.trust.digest import BadHash, parse_checksum

    algorithm, _, hex_digits = value.lower().rpartition(":")
    if algorithm in ("sha1", "md5"):
        raise SourceError(f"{url}: only an {algorithm} hash is published; refused")
    digest = f"{algorithm or 'sha256'}:{hex_digits}"
    try:
        parse_checksum(digest)
    except BadHash as exc:
        raise SourceError(f"{url}: hash: {exc}") from None
    return digest


def _inside(path: str, field: str, url: str) -> str:
    """A relative path in the app's directory (Windows separators allowed), or refused."""
    try:
        relative = member_path(path, "file")
    except ArchiveError as exc:
        reason = f"{url}: {field} {path[:80]!r} is outside the app ({exc.reason}); refused"
        raise SourceError(reason) from None
    if relative is None:
        raise SourceError(f"{url}: {field} is empty")
    return relative


def _bin(entry: str | list[str], url: str) -> tuple[str, str]:
    if isinstance(entry, list):
        if not entry:
            raise SourceError(f"{url}: an empty bin entry")
        path, alias = entry[0], entry[1] if len(entry) > 1 else ""
    else:
        path, alias = entry, ""
    relative = _inside(path, "bin", url)
    stem = posixpath.basename(relative)
    for suffix in SCRIPT_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return relative, alias or stem


def resolve(
    manifest: CrawlManifest, spec: ScoopSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    url, app = _app(spec, manifest, ctx)
    name = spec.app or manifest.name
    out: list[Artifact | PlatformUnavailable] = []
    for platform in spec.platforms or ["windows-amd64"]:
        if not ctx.wants(platform):
            continue
        planned = plan(app, platform, url)
        if isinstance(planned, str):
            out.append(PlatformUnavailable(source="scoop", platform=platform, reason=planned))
            continue
        out.append(
            Artifact(
                source="scoop",
                platform=platform,
                version=app.version,
                url=planned.url,
                origin=f"scoop:{name}@{app.version}/{ARCHITECTURES[platform]}",
                digest=planned.digest,
                filename=planned.filename,
            )
        )
    return out


def fetch(
    manifest: CrawlManifest, spec: ScoopSource, artifact: Artifact, into: Path, ctx: SourceContext
) -> Fetched:
    url, app = _app(spec, manifest, ctx)
    planned = plan(app, artifact.platform, url)
    if isinstance(planned, str) or (planned.url, planned.digest) != (
        artifact.url,
        artifact.digest,
    ):
        raise SourceError(f"{url}: the app's download changed while crawling; crawl again")
    command = spec.bin or manifest.name
    chosen = [path for path, name in planned.bins if name.lower() == command.lower()]
    if len(chosen) != 1:
        listed = ", ".join(name for _, name in planned.bins) or "none"
        raise SourceError(
            f"{url}: {len(chosen) or 'no'} bin entries install {command!r} (commands: {listed}); "
            "set bin in the manifest"
        )
    root, single = ctx.unpacked(artifact, into, raw_name=planned.filename)
    app_dir = root / planned.extract_dir if planned.extract_dir and single is None else root
    binary = app_dir / chosen[0]
    if not binary.resolve().is_relative_to(root.resolve()):
        raise SourceError(f"bin {chosen[0]!r} leads outside the app (through a link); refused")
    if not binary.is_file():
        shown = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())[:12]
        raise SourceError(
            f"bin {chosen[0]!r} is not in the download (it holds {', '.join(shown) or 'nothing'})"
        )
    return tree.prepare(root, binary, manifest.name)
