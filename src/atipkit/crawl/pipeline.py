"""The crawl (RFC 0.6 §4.10.1): for each tool, ask each source what it offers; for each
platform, download, check the digest, unpack, hash the binary, and write a shim named by
that hash into the output folder — the folder `atip registry build` turns into a
registry.

Nothing is done twice: an artifact whose published digest is the one crawled last time
is not downloaded (`unchanged`, from the state file), and a binary whose shim is already
in the folder is not described again (`known`). With `check`, sources are asked and
nothing is downloaded. A platform whose binary cannot run here (another system or
architecture) gets a shim only from a template; without one it is skipped with that
reason. One artifact failing (a digest mismatch, a hostile archive, a source that does
not answer) fails it alone: the crawl goes on, and the report says what failed and why.

Progress goes to a callback, one line per step, in the words of §4.10.3.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

from atipkit.crawl import platforms
from atipkit.crawl.errors import CrawlError, UnusableArtifact
from atipkit.crawl.manifest import CrawlManifest
from atipkit.crawl.sources import (
    Artifact,
    Fetched,
    Limits,
    Overrides,
    PlatformUnavailable,
    Source,
    SourceContext,
    source,
)
from atipkit.crawl.state import Seen, read_state, remember, unchanged
from atipkit.errors import AtipError

Status = Literal[
    "generated", "queued", "known", "unchanged", "new", "rejected", "skipped", "failed"
]
Progress = Callable[[str, str], None]
"""`progress(tool, line)`: one step of the crawl, for people."""


@dataclass(frozen=True)
class CrawlSettings:
    """Where shims go (`out`), where downloads and apt's state live (`work`), and how."""

    out: Path
    work: Path
    check: bool = False
    limits: Limits = field(default_factory=Limits)
    overrides: Overrides = field(default_factory=Overrides)
    platforms: frozenset[str] | None = None
    github_token: str | None = None
    budget: float = 120.0  # a safety stop for a tool that hangs (decision 577)
    depth: int = 2
    review: bool = False


Settings = CrawlSettings
"""`CrawlSettings` by its name before decision 391, kept for a release."""


class ArtifactReport(msgspec.Struct, kw_only=True, omit_defaults=True):
    source: str
    platform: str
    status: Status
    version: str | None = None
    origin: str | None = None
    url: str | None = None
    digest: str | None = None
    hash: str | None = None
    shim: str | None = None
    reason: str | None = None


class ToolReport(msgspec.Struct, kw_only=True):
    name: str
    manifest: str
    artifacts: list[ArtifactReport] = []
    errors: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.errors and all(a.status != "failed" for a in self.artifacts)


class CrawlReport(msgspec.Struct, kw_only=True):
    check: bool
    out: str
    tools: list[ToolReport]

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tools)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = msgspec.to_builtins(self)
        data["ok"] = self.ok
        for tool, built in zip(self.tools, data["tools"], strict=True):
            built["ok"] = tool.ok
        return data


def crawl(
    manifests: Sequence[CrawlManifest], settings: CrawlSettings, progress: Progress | None = None
) -> CrawlReport:
    """Crawl every manifest's sources (see the module's docstring)."""
    from atipkit._http import Fetcher

    say = progress or (lambda _tool, _line: None)
    with Fetcher() as fetcher:
        ctx = SourceContext(
            fetcher=fetcher,
            work=settings.work,
            limits=settings.limits,
            overrides=settings.overrides,
            platforms=settings.platforms,
            github_token=settings.github_token,
        )
        tools = [_tool(m, settings, ctx, functools.partial(say, m.name)) for m in manifests]
    return CrawlReport(check=settings.check, out=str(settings.out), tools=tools)


def _tool(
    manifest: CrawlManifest, settings: CrawlSettings, ctx: SourceContext, say: Callable[[str], None]
) -> ToolReport:
    report = ToolReport(name=manifest.name, manifest=manifest.path)
    state = read_state(settings.out)
    say("Checking for new releases...")
    for name, spec in manifest.sources.items():
        module = source(name)
        try:
            offered = module.resolve(manifest, spec, ctx)
        except (AtipError, OSError) as exc:
            report.errors.append(f"{name}: {exc}")
            say(f"Failed {name}: {exc}")
            continue
        artifacts = [a for a in offered if isinstance(a, Artifact)]
        done = {
            a.platform: seen
            for a in artifacts
            if unchanged(
                seen := state.seen(manifest.name, name, a.platform),
                a,
                settings.out,
                queued=settings.review,
            )
        }
        fresh = [a for a in artifacts if a.platform not in done]
        for version in sorted({a.version for a in fresh}):
            say(f"Found new version: {version}")
        if artifacts and not fresh:
            say(f"No new version: {', '.join(sorted({a.version for a in artifacts}))}")
        for item in offered:
            seen = done.get(item.platform) if isinstance(item, Artifact) else None
            report.artifacts.append(
                _artifact(manifest, spec, module, item, seen, settings, ctx, say)
            )
    return report


def _artifact(
    manifest: CrawlManifest,
    spec: Any,
    module: Source,
    item: Artifact | PlatformUnavailable,
    unchanged_as: Seen | None,
    settings: CrawlSettings,
    ctx: SourceContext,
    say: Callable[[str], None],
) -> ArtifactReport:
    """One platform: `unchanged_as` is what was crawled before when the source still
    publishes the same digest (nothing to download)."""
    if isinstance(item, PlatformUnavailable):
        say(f"{'Failed' if item.failed else 'Skipped'} {item.platform}: {item.reason}")
        status: Status = "failed" if item.failed else "skipped"
        return ArtifactReport(
            source=item.source, platform=item.platform, status=status, reason=item.reason
        )
    artifact = item
    described: dict[str, Any] = {
        "source": artifact.source,
        "platform": artifact.platform,
        "version": artifact.version,
        "origin": artifact.origin,
        "url": artifact.url,
        "digest": artifact.digest,
    }
    if (seen := unchanged_as) is not None:
        say(f"Unchanged {artifact.platform}: {artifact.version} ({seen.shim})")
        return ArtifactReport(**described, status="unchanged", hash=seen.hash, shim=seen.shim)
    if settings.check:
        say(f"New {artifact.platform}: {artifact.version} ({artifact.origin})")
        return ArtifactReport(**described, status="new")
    runs = platforms.runs_here(artifact.platform)
    if not runs and manifest.template is None:
        reason = (
            f"no template, and {artifact.platform} binaries cannot run on this machine "
            f"({platforms.host()}) to read their --help"
        )
        say(f"Skipped {artifact.platform}: {reason}")
        return ArtifactReport(**described, status="skipped", reason=reason)
    if artifact.size is not None and artifact.size > settings.limits.max_download:
        limit = settings.limits.max_download
        reason = f"{artifact.size} bytes, more than the download limit of {limit}"
        say(f"Failed {artifact.platform}: {reason}")
        return ArtifactReport(**described, status="failed", reason=reason)
    say(f"Downloading {artifact.platform} from {module.LABEL}...")
    try:
        return _produce(manifest, spec, module, artifact, settings, ctx, say, described, runs)
    except UnusableArtifact as exc:
        say(f"Skipped {artifact.platform}: {exc}")
        return ArtifactReport(**described, status="skipped", reason=str(exc))
    except (AtipError, OSError) as exc:
        reason = str(exc)
        say(f"Failed {artifact.platform}: {reason}")
        return ArtifactReport(**described, status="failed", reason=reason)


def _produce(
    manifest: CrawlManifest,
    spec: Any,
    module: Source,
    artifact: Artifact,
    settings: CrawlSettings,
    ctx: SourceContext,
    say: Callable[[str], None],
    described: dict[str, Any],
    runs: bool,
) -> ArtifactReport:
    from atipkit._atomic import write_atomic
    from atipkit._clock import timestamp
    from atipkit.crawl import review
    from atipkit.registry.layout import shim_path
    from atipkit.trust.digest import sha256_file

    scratch = settings.work.absolute() / "tmp"  # tools run elsewhere, in the sandbox
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="crawl-", dir=scratch) as temporary:
        fetched = module.fetch(manifest, spec, artifact, Path(temporary), ctx)
        hash_ = sha256_file(fetched.binary)
        say(f"  Hash: {hash_}")
        relative = shim_path(hash_)
        status: Status
        if (settings.out / relative).is_file():
            say(f"  Known: {relative}")
            status = "known"
        elif settings.review and review.holds(settings.out, hash_, review.REJECTED):
            rejected = review.find(settings.out, hash_, review.REJECTED)
            reason = f"rejected in review on {rejected.rejected}: {rejected.reason}"
            say(f"  Rejected: {relative} ({reason})")
            return ArtifactReport(**described, status="rejected", hash=hash_, reason=reason)
        elif settings.review and review.holds(settings.out, hash_):
            say(f"  Already queued: {relative}")
            status = "queued"
        else:
            inferred = _infer(fetched, manifest.name, settings) if runs else None
            document = _shim(relative, manifest, artifact, hash_, inferred, timestamp())
            if settings.review:
                _queue(settings.out, relative, manifest, artifact, hash_, document, timestamp())
                say(f"  Queued for review: {relative}")
                status = "queued"
            else:
                write_atomic(settings.out / relative, document)
                say(f"  Generated: {relative}")
                status = "generated"
    seen = Seen(
        version=artifact.version,
        url=artifact.url,
        digest=artifact.digest,
        hash=hash_,
        shim=relative,
        checked=timestamp(),
    )
    remember(settings.out, manifest.name, artifact.source, artifact.platform, seen)
    return ArtifactReport(**described, status=status, hash=hash_, shim=relative)


def _infer(fetched: Fetched, name: str, settings: CrawlSettings) -> dict[str, Any]:
    from atipkit.infer.generate import generate_shim
    from atipkit.model import to_dict

    tool = generate_shim(
        str(fetched.run),
        depth=settings.depth,
        budget=settings.budget,
        man=fetched.man_page is not None,
        man_file=str(fetched.man_page) if fetched.man_page else None,
        name=name,
        env=fetched.env,
    )
    return to_dict(tool)


def _shim(
    relative: str,
    manifest: CrawlManifest,
    artifact: Artifact,
    hash_: str,
    inferred: dict[str, Any] | None,
    now: str,
) -> bytes:
    """The shim's file, validated."""
    from atipkit.crawl.shim import assemble
    from atipkit.model import dumps
    from atipkit.validation import validate

    document = assemble(
        name=manifest.name,
        description=manifest.description,
        homepage=manifest.homepage,
        template=manifest.template,
        inferred=inferred,
        artifact=artifact,
        hash_=hash_,
        timestamp=now,
    )
    report = validate(document, source=relative.rsplit("/", 1)[-1])
    if not report.ok or report.tool is None:
        first = report.errors[0].format() if report.errors else "invalid"
        raise CrawlError(f"the shim assembled for {artifact.origin} is invalid: {first}")
    return dumps(report.tool) + b"\n"


def _queue(
    out: Path,
    relative: str,
    manifest: CrawlManifest,
    artifact: Artifact,
    hash_: str,
    document: bytes,
    now: str,
) -> None:
    """Queue the shim for review, naming the published shim it would succeed."""
    import json

    from atipkit.crawl import review

    before = read_state(out).seen(manifest.name, artifact.source, artifact.platform)
    entry = review.ReviewEntry(
        tool=manifest.name,
        source=artifact.source,
        platform=artifact.platform,
        version=artifact.version,
        origin=artifact.origin,
        hash=hash_,
        shim=relative,
        queued=now,
        document=json.loads(document),
        replaces=before.shim if before and (out / before.shim).is_file() else None,
    )
    review.queue(out, entry)
