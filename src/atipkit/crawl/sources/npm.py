"""npm packages: the packument from the registry (`{registry}/{package}`), the version's
tarball checked against its `dist.integrity` (Subresource Integrity, sha512), and the
binary named by the package's own `package.json` `bin` (a string, or a map from command
names to files).

npm installs a command as a link to the package's file, so the shim's hash is that
file's. JavaScript is the same on every platform: the platform is `any`. The registry is
the manifest's `registry`, else `--npm-registry`/`ATIP_NPM_REGISTRY`, else
https://registry.npmjs.org. A version without an sha512 or sha256 integrity is refused:
sha1 (`shasum`) alone does not vouch for anything.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from atipkit import _jsontext
from atipkit.crawl import tree
from atipkit.crawl.errors import SourceError
from atipkit.crawl.manifest import CrawlManifest, NpmSource
from atipkit.crawl.platforms import ANY
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext

LABEL = "npm"
DEFAULT_REGISTRY = "https://registry.npmjs.org"
# the abbreviated packument: what installers read, a fraction of the full document
_HEADERS = {"Accept": "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"}
_MAX_PACKAGE_JSON = 1 << 20


def resolve(
    manifest: CrawlManifest, spec: NpmSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    package = spec.package or manifest.name
    base = (spec.registry or ctx.overrides.npm_registry or DEFAULT_REGISTRY).rstrip("/")
    url = f"{base}/{quote(package, safe='@')}"
    document = ctx.get_json(url, headers=_HEADERS)
    version = str(spec.version or _get(document, url, "dist-tags", "latest"))
    dist = _get(document, url, "versions", version, "dist")
    tarball = _get(dist, url, "tarball")
    if not isinstance(tarball, str) or not tarball.startswith(("https://", "http://")):
        raise SourceError(f"{url}: version {version} has no tarball URL")
    return [
        Artifact(
            source="npm",
            platform=ANY,
            version=version,
            url=tarball,
            origin=f"npm:{package}@{version}",
            digest=integrity_digest(dist.get("integrity"), url),
            filename=urlsplit(tarball).path.rsplit("/", 1)[-1],
        )
    ]


def fetch(
    manifest: CrawlManifest, spec: NpmSource, artifact: Artifact, into: Path, ctx: SourceContext
) -> Fetched:
    root, single = ctx.unpacked(artifact, into, raw_name="package")
    tops = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    if single is not None or len(tops) != 1:
        raise SourceError(f"{artifact.url}: not an npm package tarball (one folder at the top)")
    package = tops[0]
    bins = _bins(package / "package.json", spec.package or manifest.name)
    name = spec.bin or manifest.name
    if name not in bins:
        known = ", ".join(sorted(bins)) or "none"
        raise SourceError(f"{artifact.origin}: package.json has no bin {name!r} (bins: {known})")
    binary = package / bins[name]
    if not binary.resolve().is_relative_to(package.resolve()) or not binary.is_file():
        raise SourceError(f"{artifact.origin}: bin {name!r} is not a file of the package")
    return tree.prepare(root, binary, name)


def integrity_digest(integrity: Any, url: str) -> str:
    """The strongest sha512/sha256 of an SRI string, as `sha512:<hex>`."""
    by_algorithm: dict[str, str] = {}
    for entry in str(integrity or "").split():
        algorithm, _, value = entry.partition("-")
        try:
            raw = base64.b64decode(value.split("?", 1)[0], validate=True)
        except (binascii.Error, ValueError):
            continue
        by_algorithm.setdefault(algorithm, raw.hex())
    for algorithm in ("sha512", "sha256"):
        if algorithm in by_algorithm:
            return f"{algorithm}:{by_algorithm[algorithm]}"
    raise SourceError(f"{url}: no sha512 or sha256 dist.integrity; refused")


def _get(document: Any, url: str, *keys: str) -> Any:
    node = document
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise SourceError(f"{url}: no {'.'.join(keys)} in the packument")
        node = node[key]
    return node


def _bins(path: Path, package: str) -> dict[str, str]:
    try:
        with open(path, "rb") as f:
            data = _jsontext.decode(f.read(_MAX_PACKAGE_JSON))
    except (OSError, ValueError) as exc:  # a DocumentError is a ValueError
        raise SourceError(f"{path.name}: unreadable package.json ({exc})") from None
    bins = data.get("bin") if isinstance(data, dict) else None
    if isinstance(bins, str):
        return {package.rsplit("/", 1)[-1]: bins}
    if isinstance(bins, dict):
        return {k: v for k, v in bins.items() if isinstance(k, str) and isinstance(v, str)}
    return {}
