"""Homebrew bottles (RFC 0.6 §4.10.1 "Homebrew Formulas"): the formula's JSON from
formulae.brew.sh (`{api}/formula/{formula}.json`), one bottle per platform from
`bottle.stable.files`, downloaded from its `url` (an OCI blob on ghcr.io) and checked
against the `sha256` the JSON publishes, which is also the blob's own digest.

A bottle is a gzipped tar of the keg: `FORMULA/VERSION/bin/NAME`, `share/man/...`,
`.brew/FORMULA.rb`. ghcr.io serves public blobs to anyone who sends the anonymous token
`Authorization: Bearer QQ==` (as `brew fetch` does); it goes to the blob's origin only,
never to the storage host ghcr.io redirects to. The image manifest beside the blob is
not read: the formula JSON already names the blob by its digest.

brew rewrites a bottle's binaries when it pours one whose files hold its placeholders
(`@@HOMEBREW_PREFIX@@` and the like, in a `cellar: ":any"` bottle's load commands): the
installed file then differs from the bottle's, and a shim named by the bottle's hash
would describe no file on any machine. Such a binary is skipped, saying so; those of
`:any_skip_relocation` bottles (most Go and Rust tools) are poured byte for byte.

Platforms map to bottle tags: `darwin-arm64` to the newest `arm64_<macOS>` tag,
`darwin-amd64` to the newest plain `<macOS>` tag, `linux-amd64` to `x86_64_linux`,
`linux-arm64` to `arm64_linux`; a bottle tagged `all` serves every platform (`any`).
"""

from __future__ import annotations

import glob
from pathlib import Path
from urllib.parse import quote

import msgspec

from atipkit.crawl import platforms, tree
from atipkit.crawl.errors import SourceError, UnusableArtifact
from atipkit.crawl.manifest import CrawlManifest, HomebrewSource
from atipkit.crawl.sources import (
    Artifact,
    Fetched,
    PlatformUnavailable,
    SourceContext,
    shaped,
)

LABEL = "Homebrew"
DEFAULT_API = "https://formulae.brew.sh/api"
DEFAULT_PLATFORMS = ("darwin-arm64", "darwin-amd64", "linux-amd64", "linux-arm64")
ANONYMOUS = {"Authorization": "Bearer QQ=="}  # ghcr.io's token for public images
DOWNLOAD_ORIGINS = ("https://pkg-containers.githubusercontent.com",)
MACOS = ("tahoe", "sequoia", "sonoma", "ventura", "monterey", "big_sur", "catalina", "mojave")
PLACEHOLDER = b"@@HOMEBREW_"
BINARY_PATHS = ("{formula}/{version}/bin/{name}", "*/*/bin/{name}", "*/*/sbin/{name}")


class _File(msgspec.Struct):
    url: str
    sha256: str
    cellar: str = ""


class _Stable(msgspec.Struct):
    files: dict[str, _File]
    rebuild: int = 0


class _Bottle(msgspec.Struct):
    stable: _Stable | None = None


class _Versions(msgspec.Struct):
    stable: str


class _Formula(msgspec.Struct):
    name: str
    versions: _Versions
    revision: int = 0
    bottle: _Bottle = msgspec.field(default_factory=_Bottle)


def tags(platform: str) -> list[str]:
    """The bottle tags that serve `platform`, best first."""
    system, _, arch = platform.partition("-")
    if system == "darwin" and arch == "arm64":
        return [f"arm64_{name}" for name in MACOS]
    if system == "darwin" and arch == "amd64":
        return list(MACOS)
    if system == "linux" and arch in ("amd64", "arm64"):
        return ["x86_64_linux" if arch == "amd64" else "arm64_linux"]
    return []


def resolve(
    manifest: CrawlManifest, spec: HomebrewSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    formula_name = spec.formula or manifest.name
    base = (spec.api or ctx.overrides.homebrew_api or DEFAULT_API).rstrip("/")
    url = f"{base}/formula/{quote(formula_name, safe='@+')}.json"
    formula = shaped(ctx.get_json(url), _Formula, url, "a Homebrew formula")
    version = formula.versions.stable + (f"_{formula.revision}" if formula.revision else "")
    files = formula.bottle.stable.files if formula.bottle.stable else {}
    out: list[Artifact | PlatformUnavailable] = []
    for platform in spec.platforms or DEFAULT_PLATFORMS:
        if not ctx.wants(platform):
            continue
        tag = next((t for t in tags(platform) if t in files), "all" if "all" in files else None)
        if tag is None:
            reason = f"{formula_name} {version} has no bottle for {platform}"
            out.append(PlatformUnavailable(source="homebrew", platform=platform, reason=reason))
            continue
        if tag == "all" and any(a.platform == platforms.ANY for a in out):
            continue  # one bottle serves every platform
        bottle = files[tag]
        _check(bottle, url, tag)
        out.append(
            Artifact(
                source="homebrew",
                platform=platforms.ANY if tag == "all" else platform,
                version=version,
                url=bottle.url,
                origin=f"homebrew:{formula_name}@{version}/{tag}",
                digest=f"sha256:{bottle.sha256.lower()}",
                filename=f"{formula_name}--{version}.{tag}.bottle.tar.gz",
            )
        )
    return out


def _check(bottle: _File, url: str, tag: str) -> None:
    """A bottle's URL is http(s), and names (as an OCI blob) the digest it publishes."""
    from atipkit.trust.digest import BadHash, sha256_hex

    try:
        sha256_hex(bottle.sha256.lower())
    except BadHash as exc:
        raise SourceError(f"{url}: bottle {tag}: sha256: {exc}") from None
    if not bottle.url.startswith(("https://", "http://")):
        raise SourceError(f"{url}: bottle {tag}: url is not http(s): {bottle.url[:80]!r}")
    _, blob, named = bottle.url.rpartition("/blobs/sha256:")
    if blob and named.lower() != bottle.sha256.lower():
        raise SourceError(
            f"{url}: bottle {tag}: its url names blob sha256:{named[:64]}, "
            f"its sha256 is {bottle.sha256}; refused"
        )


def fetch(
    manifest: CrawlManifest,
    spec: HomebrewSource,
    artifact: Artifact,
    into: Path,
    ctx: SourceContext,
) -> Fetched:
    formula = spec.formula or manifest.name
    root, single = ctx.unpacked(
        artifact,
        into,
        raw_name=manifest.name,
        allowed_origins=DOWNLOAD_ORIGINS,
        credentials=ANONYMOUS,
    )
    if single is not None:
        raise SourceError(f"{artifact.url}: a bottle is a tar archive, this is not one")
    literal = {k: _literal(v) for k, v in (("formula", formula), ("version", artifact.version))}
    defaults = [p.replace("{formula}", literal["formula"]) for p in BINARY_PATHS]
    defaults = [p.replace("{version}", literal["version"]) for p in defaults]
    binary = tree.find_binary(root, manifest.name, spec.binary_path, defaults)
    if _holds(binary, PLACEHOLDER):
        raise UnusableArtifact(
            f"brew rewrites {binary.relative_to(root)} when it pours this bottle (it holds "
            "@@HOMEBREW_...@@ placeholders): the installed file's hash is not the bottle's"
        )
    return tree.prepare(root, binary, manifest.name)


def _literal(text: str) -> str:
    """`text` matched as itself by a glob that `str.format` fills in later."""
    return glob.escape(text).replace("{", "{{").replace("}", "}}")


def _holds(path: Path, needle: bytes, chunk: int = 1 << 20) -> bool:
    """Whether the file contains `needle`, read in chunks (binaries can be large)."""
    tail = b""
    with open(path, "rb") as f:
        while block := f.read(chunk):
            if needle in tail + block:
                return True
            tail = block[-(len(needle) - 1) :]
    return False
