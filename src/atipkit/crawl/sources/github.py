"""GitHub releases (RFC 0.6 §4.10.2 `github`): the latest release, or `tag`, from the
releases API; per platform the one asset whose name matches `asset_patterns`
(`fnmatch`), checked against the `digest` GitHub publishes for it (`sha256:...`).

The API base is the manifest's `api`, else `--github-api`/`ATIP_GITHUB_API`, else
https://api.github.com (GitHub Enterprise: `https://HOST/api/v3`). `GITHUB_TOKEN`, when
set, goes as a bearer token to the API's origin only (never to asset downloads, never
over plain http except to loopback) and is never printed. Assets download from
github.com, which redirects to its storage hosts; those redirects are allowed.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any
from urllib.parse import quote

from atipkit._http import is_loopback
from atipkit.crawl import tree
from atipkit.crawl.errors import SourceError
from atipkit.crawl.manifest import CrawlManifest, GithubSource
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext

LABEL = "GitHub"
DEFAULT_API = "https://api.github.com"
DOWNLOAD_ORIGINS = (
    "https://objects.githubusercontent.com",
    "https://release-assets.githubusercontent.com",
)
_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


def api_base(spec: GithubSource, ctx: SourceContext) -> str:
    return (spec.api or ctx.overrides.github_api or DEFAULT_API).rstrip("/")


def resolve(
    manifest: CrawlManifest, spec: GithubSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    base = api_base(spec, ctx)
    which = f"tags/{quote(spec.tag, safe='')}" if spec.tag else "latest"
    url = f"{base}/repos/{spec.repo}/releases/{which}"
    release = ctx.get_json(url, headers=_HEADERS, credentials=_credentials(base, ctx))
    tag, assets = _release(release, url)
    version = tag[1:] if tag[:1] in "vV" and tag[1:2].isdigit() else tag
    out: list[Artifact | PlatformUnavailable] = []
    for platform, pattern in spec.asset_patterns.items():
        if not ctx.wants(platform):
            continue
        matches = [a for a in assets if fnmatch.fnmatchcase(a["name"], pattern)]
        if len(matches) != 1:
            names = ", ".join(a["name"] for a in matches)
            reason = (
                f"{len(matches)} assets of {tag} match {pattern!r}: {names}"
                if matches
                else f"no asset of {tag} matches {pattern!r}"
            )
            out.append(
                PlatformUnavailable(
                    source="github", platform=platform, reason=reason, failed=bool(matches)
                )
            )
            continue
        asset = matches[0]
        digest = asset.get("digest")
        out.append(
            Artifact(
                source="github",
                platform=platform,
                version=version,
                url=asset["browser_download_url"],
                origin=f"github:{spec.repo}@{tag}/{asset['name']}",
                digest=digest if isinstance(digest, str) and digest.startswith("sha256:") else None,
                filename=asset["name"],
                size=asset.get("size") if isinstance(asset.get("size"), int) else None,
            )
        )
    return out


def fetch(
    manifest: CrawlManifest, spec: GithubSource, artifact: Artifact, into: Path, ctx: SourceContext
) -> Fetched:
    root, single = ctx.unpacked(
        artifact, into, raw_name=manifest.name, allowed_origins=DOWNLOAD_ORIGINS
    )
    return tree.located(root, single, manifest.name, spec.binary_path)


def _release(release: Any, url: str) -> tuple[str, list[dict[str, Any]]]:
    """The tag and the well-formed assets of a release document."""
    if not isinstance(release, dict) or not isinstance(release.get("tag_name"), str):
        raise SourceError(f"{url}: not a GitHub release (no tag_name)")
    assets = [
        a
        for a in release.get("assets") or []
        if isinstance(a, dict)
        and isinstance(a.get("name"), str)
        and isinstance(a.get("browser_download_url"), str)
        and a["browser_download_url"].startswith(("https://", "http://"))
    ]
    return release["tag_name"], assets


def _credentials(base: str, ctx: SourceContext) -> dict[str, str] | None:
    if not ctx.github_token or (base.startswith("http://") and not is_loopback(base)):
        return None
    return {"Authorization": f"Bearer {ctx.github_token}"}
