"""Python packages: the JSON API of an index (`{index}/pypi/{package}/json`, or
`/pypi/{package}/{version}/json`), one wheel per platform checked against its published
sha256, and the command it installs.

The binary is what lands on a user's PATH:

- a file in the wheel's `*.data/scripts/` (Rust and Go tools ship their binary so): pip
  copies it byte for byte, so its hash is the same on every machine;
- otherwise the console script of `entry_points.txt`, which pip writes at install time.
  The crawler installs the wheel (`pip install --no-deps --no-index --target`) and takes
  the wrapper pip wrote, its first line set to the manifest's `interpreter`
  (`#!/usr/bin/python3` by default). That hash holds on machines that installed the
  package with pip for that interpreter: the wrapper's text belongs to the installer,
  not to the package. A `#!python` script in `*.data/scripts/` is rewritten by pip too,
  and treated the same way.

The index is the manifest's `index`, else `--pypi-index`/`ATIP_PYPI_INDEX`, else
https://pypi.org. Among a release's wheels, the one for the platform is taken before a
pure one (`any`, shared by every platform), glibc builds before musl ones.
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from atipkit.crawl import platforms, tree
from atipkit.crawl.archive import unpack
from atipkit.crawl.errors import SourceError
from atipkit.crawl.manifest import CrawlManifest, PypiSource
from atipkit.crawl.sources import Artifact, Fetched, PlatformUnavailable, SourceContext

LABEL = "PyPI"
DEFAULT_INDEX = "https://pypi.org"
PIP_SECONDS = 300


def resolve(
    manifest: CrawlManifest, spec: PypiSource, ctx: SourceContext
) -> list[Artifact | PlatformUnavailable]:
    from packaging.tags import sys_tags
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    package = spec.package or manifest.name
    base = (spec.index or ctx.overrides.pypi_index or DEFAULT_INDEX).rstrip("/")
    release = f"/{quote(spec.version, safe='')}" if spec.version else ""
    url = f"{base}/pypi/{quote(package, safe='')}{release}/json"
    document = ctx.get_json(url)
    info = document.get("info") if isinstance(document, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("version"), str):
        raise SourceError(f"{url}: not a PyPI JSON document (no info.version)")
    version = info["version"]
    wheels = []
    for file in document.get("urls") or []:
        if not isinstance(file, dict) or file.get("packagetype") != "bdist_wheel":
            continue
        if file.get("yanked") or not isinstance(file.get("url"), str):
            continue
        try:
            *_, tags = parse_wheel_filename(str(file.get("filename")))
        except InvalidWheelFilename:
            continue
        wheels.append((file, tags))
    here = set(sys_tags())
    out: list[Artifact | PlatformUnavailable] = []
    for platform in spec.platforms or [platforms.host()]:
        if not ctx.wants(platform):
            continue
        chosen = _choose(wheels, platform, here if platform == platforms.host() else set())
        if chosen is None:
            reason = f"no wheel of {package} {version} fits {platform}"
            out.append(PlatformUnavailable(source="pypi", platform=platform, reason=reason))
            continue
        file, tags = chosen
        pure = all(t.platform == "any" for t in tags)
        if pure and any(a.platform == platforms.ANY for a in out if isinstance(a, Artifact)):
            continue  # one pure wheel serves every platform
        sha256 = (file.get("digests") or {}).get("sha256")
        if not isinstance(sha256, str):
            raise SourceError(f"{url}: {file['filename']} has no published sha256; refused")
        out.append(
            Artifact(
                source="pypi",
                platform=platforms.ANY if pure else platform,
                version=version,
                url=file["url"],
                origin=f"pypi:{package}=={version}/{file['filename']}",
                digest=f"sha256:{sha256}",
                filename=file["filename"],
                size=file.get("size") if isinstance(file.get("size"), int) else None,
            )
        )
    return out


def _choose(wheels: list[tuple[Any, Any]], platform: str, here: set[Any]) -> Any:
    """The best wheel for `platform`: installable here first (for this machine's
    platform), then by `platforms.wheel_rank`, interpreter-independent builds first."""
    best: tuple[tuple[int, int, int, str], Any] | None = None
    for file, tags in wheels:
        if not any(t.interpreter.startswith(("py3", "cp3")) for t in tags):
            continue
        ranks = [r for t in tags if (r := platforms.wheel_rank(platform, t.platform)) is not None]
        if not ranks:
            continue
        key = (
            0 if tags & here else 1,
            min(ranks),
            0 if any(t.abi == "none" for t in tags) else 1,
            file["filename"],
        )
        if best is None or key < best[0]:
            best = (key, (file, tags))
    return best[1] if best else None


def fetch(
    manifest: CrawlManifest, spec: PypiSource, artifact: Artifact, into: Path, ctx: SourceContext
) -> Fetched:
    script = spec.script or manifest.name
    downloads = into / "download"
    downloads.mkdir(parents=True, exist_ok=True)
    if "/" in artifact.filename or artifact.filename.startswith("."):
        raise SourceError(f"{artifact.filename!r} is not a file name")
    wheel = downloads / artifact.filename  # pip needs the wheel's own name
    ctx.download(artifact.url, wheel, digest=artifact.digest)
    root = into / "wheel"
    unpack(
        wheel,
        root,
        raw_name="wheel",
        max_members=ctx.limits.max_members,
        max_bytes=ctx.limits.max_unpacked,
    )
    bundled = sorted(root.glob(f"*.data/scripts/{script}"))
    if bundled and bundled[0].is_file():
        with open(bundled[0], "rb") as f:
            rewritten_by_pip = f.read(8) == b"#!python"
        if not rewritten_by_pip:
            return tree.prepare(root, bundled[0], script)
    elif script not in _console_scripts(root):
        listed = ", ".join(sorted(_console_scripts(root))) or "none"
        raise SourceError(
            f"{artifact.filename} installs no command {script!r} "
            f"(console scripts: {listed}); set script in the manifest"
        )
    target = into / "target"
    _pip_install(wheel, target)
    wrapper = target / "bin" / script
    if not wrapper.is_file():
        raise SourceError(f"pip did not write {script!r} for {artifact.filename}")
    canonical = into / "canonical" / script
    canonical.parent.mkdir()
    text = wrapper.read_bytes()
    canonical.write_bytes(f"#!{spec.interpreter}\n".encode() + text.partition(b"\n")[2])
    return Fetched(
        binary=canonical,
        run=wrapper,
        env={"PYTHONPATH": str(target)},
        man_page=tree.man_page(root, script),
    )


def _console_scripts(root: Path) -> set[str]:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    for path in root.glob("*.dist-info/entry_points.txt"):
        try:
            parser.read_string(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, configparser.Error):
            continue
    return set(parser["console_scripts"]) if parser.has_section("console_scripts") else set()


def _pip_install(wheel: Path, target: Path) -> None:
    """Install one wheel file, offline, with no configuration of the user's applied."""
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INPUT": "1"}
    argv = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile"]
    argv += ["--disable-pip-version-check", "--no-warn-script-location", "--quiet"]
    try:
        done = subprocess.run(
            [*argv, "--target", str(target), str(wheel)],
            capture_output=True,
            env=env,
            timeout=PIP_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SourceError(f"pip install {wheel.name}: no result in {PIP_SECONDS} s") from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourceError(f"pip install {wheel.name}: {reason[-1] if reason else 'failed'}")
