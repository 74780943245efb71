"""Chocolatey packages (RFC 0.6 §4.10.1 "Chocolatey/Scoop"): the package's entry in an
OData (NuGet v2) feed, its `.nupkg` checked against the entry's `PackageHash`, and the
executable the package ships.

The feed answers `Packages(Id='ID',Version='V')` for a `version`, else
`Packages()?$filter=tolower(Id) eq 'id' and IsLatestVersion`, as an Atom entry whose
`content/@src` is the download and whose `m:properties` give `d:Version`,
`d:PackageHash` (base64) and `d:PackageHashAlgorithm` (SHA512). A `.nupkg` is a zip: the
`.nuspec` (its `id` and `version` must be the entry's, or the package is refused),
`tools/chocolateyInstall.ps1`, and often the executable itself under `tools/`, which
Chocolatey puts on PATH (unless a `NAME.exe.ignore` file beside it says not to: skipped).
A package whose install script downloads the executable at install time holds no
binary to hash: that is an error naming the script (crawl that download with a `url`
source instead); the script is never run.

XML from a feed is read with a document type declaration refused outright (no entity
expansion, local or remote), within the metadata size cap. The feed is the manifest's
`feed`, else `--chocolatey-feed`/`ATIP_CHOCOLATEY_FEED`, else
https://community.chocolatey.org/api/v2.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from urllib.parse import quote
from xml.etree import ElementTree

from atipkit.crawl import tree
from atipkit.crawl.errors import SourceError, UnusableArtifact
from atipkit.crawl.manifest import ChocolateySource, CrawlManifest
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext

LABEL = "Chocolatey"
DEFAULT_FEED = "https://community.chocolatey.org/api/v2"
ATOM = "{http://www.w3.org/2005/Atom}"
METADATA = "{http://schemas.microsoft.com/ado/2007/08/dataservices/metadata}"
DATA = "{http://schemas.microsoft.com/ado/2007/08/dataservices}"
BINARY_PATHS = ("tools/{name}.exe", "tools/*/{name}.exe", "tools/*/*/{name}.exe", "{name}.exe")
_ALGORITHMS = {"SHA512": "sha512", "SHA256": "sha256"}
_DOCTYPE = re.compile(rb"<!(DOCTYPE|ENTITY)", re.IGNORECASE)
_MAX_NUSPEC = 1 << 20


def parse_xml(content: bytes, where: str) -> ElementTree.Element:
    """An XML document without a DTD (so without entities to expand), or `SourceError`."""
    if _DOCTYPE.search(content):
        raise SourceError(f"{where}: XML with a document type declaration; refused")
    try:
        return ElementTree.fromstring(content)
    except ElementTree.ParseError as exc:
        raise SourceError(f"{where}: not XML ({exc})") from None


def _text(entry: ElementTree.Element, path: str) -> str:
    found = entry.find(path)
    return (found.text or "").strip() if found is not None else ""


def resolve(
    manifest: CrawlManifest, spec: ChocolateySource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    package = spec.package or manifest.name
    base = (spec.feed or ctx.overrides.chocolatey_feed or DEFAULT_FEED).rstrip("/")
    if spec.version:
        key = f"Id='{package}',Version='{spec.version}'"
        url = f"{base}/Packages({quote(key, safe=chr(39) + ',=')})"
    else:
        query = f"tolower(Id) eq '{package.lower()}' and IsLatestVersion"
        url = f"{base}/Packages()?$filter={quote(query, safe=chr(39))}"
    root = parse_xml(ctx.get(url), url)
    entries = [root] if root.tag == f"{ATOM}entry" else root.findall(f"{ATOM}entry")
    entries = [e for e in entries if _text(e, f"{ATOM}title").lower() == package.lower()]
    if spec.version:
        entries = [e for e in entries if _version(e) == spec.version]
    if len(entries) != 1:
        raise SourceError(f"{url}: {len(entries)} entries for {package}; expected one")
    entry = entries[0]
    version = _version(entry)
    content = entry.find(f"{ATOM}content")
    download = content.get("src", "") if content is not None else ""
    if not version or not download.startswith(("https://", "http://")):
        raise SourceError(f"{url}: the entry has no version or no http(s) content src")
    digest = _digest(entry, url)
    size = _text(entry, f"{METADATA}properties/{DATA}PackageSize")
    return [
        Artifact(
            source="chocolatey",
            platform=platform,
            version=version,
            url=download,
            origin=f"chocolatey:{package}@{version}",
            digest=digest,
            filename=f"{package}.{version}.nupkg",
            size=int(size) if size.isdigit() else None,
        )
        for platform in spec.platforms or ["windows-amd64"]
        if ctx.wants(platform)
    ]


def _version(entry: ElementTree.Element) -> str:
    return _text(entry, f"{METADATA}properties/{DATA}Version")


def _digest(entry: ElementTree.Element, url: str) -> str:
    """The entry's PackageHash as `sha512:<hex>`; a package without one is refused."""
    properties = f"{METADATA}properties/{DATA}"
    named = _text(entry, f"{properties}PackageHashAlgorithm").upper() or "SHA512"
    algorithm = _ALGORITHMS.get(named)
    value = _text(entry, f"{properties}PackageHash")
    if algorithm is None or not value:
        raise SourceError(f"{url}: no SHA512 or SHA256 PackageHash published; refused")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise SourceError(f"{url}: PackageHash is not base64; refused") from None
    return f"{algorithm}:{raw.hex()}"


def fetch(
    manifest: CrawlManifest,
    spec: ChocolateySource,
    artifact: Artifact,
    into: Path,
    ctx: SourceContext,
) -> Fetched:
    package = spec.package or manifest.name
    root, single = ctx.unpacked(artifact, into, raw_name=artifact.filename)
    if single is not None:
        raise SourceError(f"{artifact.url}: a .nupkg is a zip archive, this is not one")
    _check_nuspec(root, package, artifact.version)
    try:
        binary = tree.find_binary(root, manifest.name, spec.binary_path, BINARY_PATHS)
    except SourceError:
        script = root / "tools" / "chocolateyInstall.ps1"
        if spec.binary_path is None and script.is_file():
            raise SourceError(
                f"{package} {artifact.version} ships no {manifest.name}.exe: "
                "tools/chocolateyInstall.ps1 downloads it at install time (not run); "
                "crawl that download with a url source"
            ) from None
        raise
    if binary.with_name(f"{binary.name}.ignore").exists():
        raise UnusableArtifact(
            f"{binary.relative_to(root)}.ignore: Chocolatey does not put it on PATH"
        )
    return tree.prepare(root, binary, manifest.name)


def _check_nuspec(root: Path, package: str, version: str) -> None:
    """The package's .nuspec names the package and version the feed listed."""
    found = sorted(root.glob("*.nuspec"))
    if len(found) != 1:
        raise SourceError(f"the package has {len(found)} .nuspec files at its root; expected one")
    with open(found[0], "rb") as f:
        metadata = parse_xml(f.read(_MAX_NUSPEC), found[0].name)
    fields = {
        element.tag.rsplit("}", 1)[-1]: (element.text or "").strip()
        for child in metadata
        if child.tag.rsplit("}", 1)[-1] == "metadata"
        for element in child
    }
    if fields.get("id", "").lower() != package.lower() or fields.get("version") != version:
        raise SourceError(
            f"{found[0].name} describes {fields.get('id')!r} {fields.get('version')!r}, "
            f"not {package} {version} as the feed listed; refused"
        )
