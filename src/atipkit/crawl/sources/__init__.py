"""Where binaries come from: one module per source, and the contract they share with the
pipeline.

A source does two things, kept apart so that `atip crawl --check` can ask what is new
without downloading anything:

- `resolve(manifest, spec, ctx)` asks the source (a releases API, a package index, apt's
  lists) what it offers now, one `Artifact` per platform, with the digest the source
  publishes for it (or an `PlatformUnavailable` with the reason a platform has none);
- `fetch(manifest, spec, artifact, into, ctx)` downloads one artifact, checks it against
  that digest, unpacks it into `into` and finds the binary: a `Fetched`.

`Artifact`, `PlatformUnavailable` and `Fetched` are `atipkit.crawl.artifacts`', given here too;
the names of the sources are the manifest's (`manifest.SOURCES`), which reads them.

Base URLs come from the manifest first, then from an option or environment variable
(`Overrides`), then from the public default, so that tests run against loopback.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from atipkit import _jsontext
from atipkit.crawl.archive import DEFAULT_MAX_BYTES, DEFAULT_MAX_MEMBERS
from atipkit.crawl.artifacts import Artifact, Fetched, PlatformUnavailable
from atipkit.crawl.errors import IntegrityError, SourceError
from atipkit.crawl.manifest import SOURCES as NAMES
from atipkit.crawl.manifest import CrawlManifest
from atipkit.crawl.platforms import ANY
from atipkit.errors import DocumentError

if TYPE_CHECKING:
    from atipkit._http import Fetcher

MiB = 1 << 20
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    max_download: int = 256 * MiB
    max_metadata: int = 64 * MiB
    max_members: int = DEFAULT_MAX_MEMBERS
    max_unpacked: int = DEFAULT_MAX_BYTES
    download_seconds: float = 600.0


@dataclass(frozen=True)
class Overrides:
    """Base URLs and apt sources given by option or environment; a manifest's own
    setting wins over these, and these over the public defaults."""

    github_api: str | None = None
    pypi_index: str | None = None
    npm_registry: str | None = None
    apt_sources: tuple[str, ...] = ()
    homebrew_api: str | None = None
    scoop_bucket: str | None = None
    chocolatey_feed: str | None = None


@dataclass
class SourceContext:
    """What sources get from the pipeline: the HTTP client for metadata, a work
    directory that persists between runs (apt's lists), the limits, the overrides, the
    platforms asked for (None: every one the manifest names) and a GitHub token."""

    fetcher: Fetcher
    work: Path
    limits: Limits = field(default_factory=Limits)
    overrides: Overrides = field(default_factory=Overrides)
    platforms: frozenset[str] | None = None
    github_token: str | None = None

    def wants(self, platform: str) -> bool:
        return self.platforms is None or platform in (*self.platforms, ANY)

    def get(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> bytes:
        """A metadata document from a source, at most `limits.max_metadata` bytes; any
        status but 200 is a `SourceError`."""
        response = self.fetcher.get(
            url, max_bytes=self.limits.max_metadata, headers=headers, credentials=credentials
        )
        if response.status != 200:
            raise SourceError(f"{response.url}: HTTP {response.status}")
        return response.content

    def get_json(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> Any:
        """A JSON document from a source's API; any status but 200 is a `SourceError`."""
        content = self.get(url, headers=headers, credentials=credentials)
        try:  # bounded in size and nesting like every JSON atip reads
            return _jsontext.decode(content)
        except DocumentError as exc:
            raise SourceError(f"{url}: not JSON ({exc})") from None

    def download(
        self,
        url: str,
        destination: Path,
        *,
        digest: str | None,
        allowed_origins: Collection[str] = (),
        credentials: Mapping[str, str] | None = None,
    ) -> None:
        """Download within the size cap and check `digest` (`sha256:`/`sha512:` + hex);
        a mismatch deletes the file and raises `IntegrityError`. `credentials` go to
        `url`'s origin only, never to where it redirects."""
        from atipkit._http import Fetcher

        with Fetcher(
            deadline=self.limits.download_seconds, allowed_origins=allowed_origins
        ) as fetcher:
            sha256 = fetcher.download(
                url, destination, max_bytes=self.limits.max_download, credentials=credentials
            )
        if digest is not None:
            verify(destination, digest, url=url, sha256=sha256)

    def unpacked(
        self,
        artifact: Artifact,
        into: Path,
        *,
        raw_name: str,
        allowed_origins: Collection[str] = (),
        credentials: Mapping[str, str] | None = None,
    ) -> tuple[Path, Path | None]:
        """Download `artifact` (checked against its digest) and unpack it under `into`:
        the tree, and the file itself when it was not an archive (see `archive.unpack`)."""
        from atipkit.crawl.archive import unpack

        downloads = into / "download"
        downloads.mkdir(parents=True, exist_ok=True)
        file = downloads / "artifact"
        self.download(
            artifact.url,
            file,
            digest=artifact.digest,
            allowed_origins=allowed_origins,
            credentials=credentials,
        )
        root = into / "tree"
        single = unpack(
            file,
            root,
            raw_name=raw_name,
            max_members=self.limits.max_members,
            max_bytes=self.limits.max_unpacked,
        )
        file.unlink()
        return root, single


def verify(path: Path, digest: str, *, url: str, sha256: str | None = None) -> None:
    """`IntegrityError` (and the file deleted) unless `path` has `digest`."""
    from atipkit.trust.digest import BadHash, hash_file, parse_checksum

    try:
        algorithm, expected = parse_checksum(digest.lower())  # hex is hex in either case
    except BadHash as exc:
        raise SourceError(f"{url}: the source published an unusable digest: {exc}") from None
    actual = sha256 if algorithm == "sha256" and sha256 else hash_file(path, algorithm)
    actual = actual.removeprefix(f"{algorithm}:")
    if actual != expected:
        path.unlink(missing_ok=True)
        raise IntegrityError(
            f"{url}: {algorithm} of the download is {actual}, "
            f"the source published {expected}; refused"
        )


def shaped(document: Any, type_: type[T], url: str, what: str) -> T:
    """`document` (decoded JSON) as `type_`, a msgspec Struct of the fields a source
    reads; a field of the wrong type is a `SourceError` naming it, not a crash later."""
    import msgspec

    try:
        return msgspec.convert(document, type_)
    except msgspec.ValidationError as exc:
        raise SourceError(f"{url}: not {what}: {exc}") from None


class Source(Protocol):
    LABEL: str

    def resolve(
        self, manifest: CrawlManifest, spec: Any, ctx: SourceContext
    ) -> list[Artifact | PlatformUnavailable]: ...

    def fetch(
        self, manifest: CrawlManifest, spec: Any, artifact: Artifact, into: Path, ctx: SourceContext
    ) -> Fetched: ...


def source(name: str) -> Source:
    """The module of source `name` (imported when first needed)."""
    if name not in NAMES:
        raise KeyError(name)
    return importlib.import_module(f"atipkit.crawl.sources.{name}")
