"""Direct downloads (RFC 0.6 §4.10.1, "official download pages"): one URL per platform,
`{version}` replaced by the manifest's version, checked against `sha256` when given.

```yaml
sources:
  url:
    version: "1.7.1"
    platforms:
      linux-amd64: {url: "https://example.com/{version}/tool-linux-amd64.tar.gz",
                    sha256: "<64 hex>"}
      darwin-arm64: "https://example.com/{version}/tool-darwin-arm64.zip"
    binary_path: "tool-*/tool"
```

Without `sha256` nothing vouches for the bytes but the host, and a re-run downloads again
to learn whether they changed.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from atipkit.crawl import tree
from atipkit.crawl.manifest import CrawlManifest, UrlSource
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext

LABEL = "URL"


def resolve(
    manifest: CrawlManifest, spec: UrlSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    out: list[Artifact | PlatformUnavailable] = []
    for platform in spec.platforms:
        if not ctx.wants(platform):
            continue
        asset = spec.asset(platform)
        out.append(
            Artifact(
                source="url",
                platform=platform,
                version=spec.version,
                url=asset.url,
                origin=f"url:{asset.url}",
                digest=f"sha256:{asset.sha256}" if asset.sha256 else None,
                filename=urlsplit(asset.url).path.rsplit("/", 1)[-1],
            )
        )
    return out


def fetch(
    manifest: CrawlManifest, spec: UrlSource, artifact: Artifact, into: Path, ctx: SourceContext
) -> Fetched:
    root, single = ctx.unpacked(
        artifact, into, raw_name=manifest.name, allowed_origins=spec.allow_redirects_to
    )
    return tree.located(root, single, manifest.name, spec.binary_path)
