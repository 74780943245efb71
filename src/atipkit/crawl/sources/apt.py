"""Debian packages (RFC 0.6 §4.10.2 `apt`): `apt-get update`, `apt-cache show` for the
candidate version and its published sha256, `apt-get download`, unpacked through
`dpkg-deb --fsys-tarfile` with the archive checks.

apt runs with a private state of its own under the crawler's work directory, one per
architecture and set of sources: lists, caches and an empty dpkg status, no locking, the
invoking user as apt's sandbox user. It never touches the system's apt state, needs no
root, and can read another architecture's lists (`linux-arm64` is `APT::Architecture=
arm64`). The system's configuration is read (proxies, mirrors' quirks) but its hooks
are cleared: an `apt-get update` here must not refresh the system's AppStream cache or
signal PackageKit, as the `APT::Update::Post-Invoke-Success` of a desktop would.

The sources are the manifest's `sources` (one-line `deb ...` entries, or deb822
stanzas), else `--apt-source`/`ATIP_APT_SOURCES`, else the system's
(`/etc/apt/sources.list` and `sources.list.d`, `.sources` files included).
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from atipkit.crawl import platforms, tree
from atipkit.crawl.archive import unpack
from atipkit.crawl.errors import SourceError
from atipkit.crawl.manifest import AptSource, CrawlManifest
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext, verify

LABEL = "apt"
APT_SECONDS = 600
BINARY_PATHS = ("usr/bin/{name}", "bin/{name}", "usr/sbin/{name}", "sbin/{name}")
SYSTEM_LIST = "/etc/apt/sources.list"
SYSTEM_PARTS = "/etc/apt/sources.list.d"
_HOOKS = (
    "APT::Update::Pre-Invoke",
    "APT::Update::Post-Invoke",
    "APT::Update::Post-Invoke-Success",
    "DPkg::Pre-Invoke",
    "DPkg::Post-Invoke",
)


class Apt:
    """apt-get and apt-cache for one architecture, with their private state."""

    def __init__(self, work: Path, arch: str, entries: Sequence[str]) -> None:
        key = hashlib.sha256("\n\0".join([arch, *entries]).encode()).hexdigest()[:16]
        self.root = work.absolute() / "apt" / f"{arch}-{key}"  # apt reads paths from /
        state, cache, etc = self.root / "state", self.root / "cache", self.root / "etc"
        for directory in (state / "lists" / "partial", cache / "archives" / "partial", etc):
            directory.mkdir(parents=True, exist_ok=True)
        (state / "status").touch()
        (etc / "apt.conf").write_text("".join(f"#clear {hook};\n" for hook in _HOOKS))
        self.config = etc / "apt.conf"  # read after the system's (`-c`), so it clears theirs
        if entries:
            source_list, parts = etc / "sources.list", etc / "sources.list.d"
            parts.mkdir(exist_ok=True)
            one_line = [e.strip() for e in entries if "URIs:" not in e]
            stanzas = [e.strip() for e in entries if "URIs:" in e]
            source_list.write_text("".join(f"{line}\n" for line in one_line))
            (parts / "crawl.sources").write_text("\n\n".join(stanzas) + "\n" if stanzas else "")
        else:
            source_list, parts = Path(SYSTEM_LIST), Path(SYSTEM_PARTS)
        self.options = [
            f"Dir::State={state}",
            f"Dir::State::status={state / 'status'}",
            f"Dir::Cache={cache}",
            f"Dir::Etc::SourceList={source_list}",
            f"Dir::Etc::SourceParts={parts}",
            "Debug::NoLocking=1",
            f"APT::Architecture={arch}",
            f"APT::Architectures={arch}",
            f"APT::Sandbox::User={pwd.getpwuid(os.getuid()).pw_name}",
            "Acquire::Languages=none",
        ]

    def run(self, program: str, *args: str, cwd: Path | None = None) -> str:
        found = shutil.which(program)
        if found is None:
            raise SourceError(f"the apt source needs {program} (a Debian or Ubuntu machine)")
        argv = [found, "-c", str(self.config), *(f"-o{o}" for o in self.options), *args]
        env = {**os.environ, "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"}
        try:
            done = subprocess.run(
                argv, capture_output=True, cwd=cwd, env=env, timeout=APT_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            raise SourceError(f"{program} {args[0]}: no result in {APT_SECONDS} s") from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            errors = [line for line in lines if line.startswith("E:")] or lines
            raise SourceError(f"{program} {args[0]}: {errors[-1] if errors else 'failed'}")
        return done.stdout.decode("utf-8", "replace")

    def record(self, package: str) -> dict[str, str] | None:
        """The candidate version's record (`apt-cache show`), None if there is none."""
        try:
            text = self.run("apt-cache", "show", "--no-all-versions", package)
        except SourceError as exc:
            if "No packages found" in str(exc) or "Unable to locate" in str(exc):
                return None
            raise
        fields: dict[str, str] = {}
        for line in text.split("\n\n", 1)[0].splitlines():
            if line[:1].strip() and ":" in line:
                name, _, value = line.partition(":")
                fields[name] = value.strip()
        return fields if "Version" in fields else None


def _entries(spec: AptSource, ctx: SourceContext) -> list[str]:
    return list(spec.sources or ctx.overrides.apt_sources)


def resolve(
    manifest: CrawlManifest, spec: AptSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    package = spec.package or manifest.name
    out: list[Artifact | PlatformUnavailable] = []
    for platform in spec.platforms or [platforms.host()]:
        if not ctx.wants(platform):
            continue
        try:
            arch = platforms.debian_arch(platform)
        except ValueError as exc:
            raise SourceError(f"{exc}; list platforms in the manifest") from None
        apt = Apt(ctx.work, arch, _entries(spec, ctx))
        apt.run("apt-get", "update", "-q")
        record = apt.record(package)
        if record is None:
            reason = f"no package {package!r} for {arch} in the apt sources"
            out.append(PlatformUnavailable(source="apt", platform=platform, reason=reason))
            continue
        version = record["Version"]
        uri = apt.run("apt-get", "download", "--print-uris", f"{package}={version}")
        sha256 = record.get("SHA256")
        size = record.get("Size", "")
        out.append(
            Artifact(
                source="apt",
                platform=platform,
                version=version,
                url=uri.split()[0].strip("'") if uri.strip() else record.get("Filename", ""),
                origin=f"apt:{package}={version}",
                digest=f"sha256:{sha256}" if sha256 else None,
                filename=record.get("Filename", "").rsplit("/", 1)[-1],
                size=int(size) if size.isdigit() else None,
            )
        )
    return out


def fetch(
    manifest: CrawlManifest, spec: AptSource, artifact: Artifact, into: Path, ctx: SourceContext
) -> Fetched:
    package = spec.package or manifest.name
    apt = Apt(ctx.work, platforms.debian_arch(artifact.platform), _entries(spec, ctx))
    downloads = into / "download"
    downloads.mkdir(parents=True, exist_ok=True)
    apt.run("apt-get", "download", "-q", f"{package}={artifact.version}", cwd=downloads)
    debs = sorted(downloads.glob("*.deb"))
    if len(debs) != 1:
        raise SourceError(f"apt-get download {package}={artifact.version} gave {len(debs)} files")
    if artifact.digest is not None:
        verify(debs[0], artifact.digest, url=artifact.url)
    root = into / "tree"
    unpack(
        debs[0],
        root,
        raw_name=package,
        max_members=ctx.limits.max_members,
        max_bytes=ctx.limits.max_unpacked,
    )
    binary = tree.find_binary(root, manifest.name, spec.binary_path, BINARY_PATHS)
    return tree.prepare(root, binary, manifest.name)
