"""The community crawler (RFC 0.6 §4.10): shims for the binaries that package sources
publish, from tool manifests.

```python
from pathlib import Path
from atipkit.crawl import CrawlSettings, crawl, load_manifest

report = crawl([load_manifest("tools/jq.yaml")], CrawlSettings(out=Path("registry-src"),
                                                          work=Path("/tmp/crawl")))
```

`manifest` reads the YAML manifests, `sources` asks apt, GitHub releases, Homebrew,
PyPI, npm, Scoop, Chocolatey and plain URLs what they offer, `archive` unpacks downloads
safely, `tree` finds the binary in them, `shim` assembles template and inference,
`state` remembers what was crawled, `review` keeps shims for a person to approve, and
`pipeline` runs it all. `atip crawl` is the command. It infers shims, so it sits
above `atipkit.infer` and the store it writes for (it was `atipkit.registry.crawl`, which
remains a deprecated alias for a release).
"""

from atipkit.crawl.errors import (
    ArchiveError,
    CrawlError,
    CrawlManifestError,
    IntegrityError,
    ManifestError,
    ManifestNotFound,
    NotAToolName,
    ReviewError,
    SourceError,
    UnusableArtifact,
)
from atipkit.crawl.manifest import (
    CrawlManifest,
    Manifest,
    MissingExtra,
    find_manifests,
    load_manifest,
    manifest_path,
)
from atipkit.crawl.pipeline import (
    ArtifactReport,
    CrawlReport,
    CrawlSettings,
    Settings,
    ToolReport,
    crawl,
)
from atipkit.crawl.sources import Limits, Overrides

__all__ = [
    "ArchiveError",
    "ArtifactReport",
    "CrawlError",
    "CrawlManifest",
    "CrawlManifestError",
    "CrawlReport",
    "CrawlSettings",
    "IntegrityError",
    "Limits",
    "Manifest",
    "ManifestError",
    "ManifestNotFound",
    "MissingExtra",
    "NotAToolName",
    "Overrides",
    "ReviewError",
    "Settings",
    "SourceError",
    "ToolReport",
    "UnusableArtifact",
    "crawl",
    "find_manifests",
    "load_manifest",
    "manifest_path",
]
