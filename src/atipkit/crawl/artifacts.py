"""What sources give the pipeline: an `Artifact` they offer for a platform, the reason
one is `PlatformUnavailable`, and the `Fetched` files of one unpacked.

Apart from `sources`, which reads manifests, so that what is made of an artifact (the
shim, the crawl state, the tree searched for the binary) needs neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgspec


class Artifact(msgspec.Struct, frozen=True, kw_only=True):
    """One downloadable thing for one platform, as its source describes it.

    `digest` is what the source publishes (`sha256:<hex>` or `sha512:<hex>`), None when
    it publishes nothing; `origin` names it for people and for `_generation.source`
    (`apt:jq=1.6-2.1+deb12u3`); `filename` is its name at the source."""

    source: str
    platform: str
    version: str
    url: str
    origin: str
    digest: str | None = None
    filename: str = ""
    size: int | None = None


class PlatformUnavailable(msgspec.Struct, frozen=True, kw_only=True):
    """A platform the manifest asks for that the source does not offer now (skipped),
    or offers ambiguously (`failed`: the manifest needs fixing)."""

    source: str
    platform: str
    reason: str
    failed: bool = False


@dataclass(frozen=True)
class Fetched:
    """An unpacked artifact: `binary` is the file whose sha256 names the shim; `run` the
    file to run for `--help` (the binary, or pip's wrapper for a console script), with
    `env` added to the sandbox's environment; `man_page` the package's own page."""

    binary: Path
    run: Path
    env: Mapping[str, str] = field(default_factory=dict)
    man_page: Path | None = None
