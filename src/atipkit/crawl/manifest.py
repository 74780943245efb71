"""Tool manifests (RFC 0.6 §4.10.2): which tool to crawl, where its binaries come from, and
the hand-written template its shims start from.

A manifest is `<tool>.yaml` (or `.yml`) in a directory of manifests:

```yaml
name: jq
homepage: https://jqlang.github.io/jq/
description: Command-line JSON processor
sources:
  apt: {package: jq, platforms: [linux-amd64, linux-arm64]}
template: |
  {"commands": {"": {"description": "Filter JSON", "effects": {"network": false}}}}
```

Manifests are written by people and read by a program that downloads and runs what they
point to, so they are typed strictly: an unknown source or field, a value of the wrong
type, a platform the crawler does not know, a URL that is not http(s) or a template that
is not an ATIP fragment is a `CrawlManifestError` naming the file and the field, before
anything is fetched. YAML is read with `safe_load` (no Python objects) by PyYAML, which
is imported only here (the `crawl` extra).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from atipkit import _jsontext
from atipkit.crawl import platforms
from atipkit.crawl.errors import (
    CrawlError,
    CrawlManifestError,
    ManifestNotFound,
    NotAToolName,
)
from atipkit.errors import DocumentError
from atipkit.model import is_tool_name

SOURCES = ("apt", "chocolatey", "github", "homebrew", "npm", "pypi", "scoop", "url")
"""The sources a manifest may name, each a module of `atipkit.crawl.sources`."""
MAX_MANIFEST_BYTES = 1 << 20
SUFFIXES = (".yaml", ".yml")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+\Z")
_NAMES = {  # what each source's registry allows; nothing that could read as an option
    ("apt", "package"): re.compile(r"[a-z0-9][a-z0-9+.-]*\Z"),
    ("pypi", "package"): re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\Z"),
    ("npm", "package"): re.compile(r"(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*\Z"),
    ("pypi", "script"): re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\Z"),
    ("npm", "bin"): re.compile(r"[A-Za-z0-9_@~][A-Za-z0-9._~-]*\Z"),
    ("homebrew", "formula"): re.compile(r"[a-z0-9][a-z0-9+_.@-]*\Z"),
    ("scoop", "app"): re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z"),
    ("scoop", "bin"): re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\Z"),
    ("chocolatey", "package"): re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z"),
}
Fail = Callable[[str], CrawlManifestError]
_KNOWN_ELSEWHERE = ("dnf",)  # named by the RFC


class _Spec(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    pass


class AptSource(_Spec, frozen=True):
    """A Debian package, fetched with `apt-get download` from the system's sources or
    from `sources` (one-line `deb ...` entries)."""

    package: str | None = None
    platforms: list[str] | None = None
    binary_path: str | None = None
    sources: list[str] | None = None


class GithubSource(_Spec, frozen=True):
    """Assets of a GitHub release (the latest, or `tag`), one per platform."""

    repo: str
    asset_patterns: dict[str, str]
    binary_path: str | None = None
    tag: str | None = None
    api: str | None = None


class PypiSource(_Spec, frozen=True):
    """A wheel from a Python package index: a bundled binary or a console script."""

    package: str | None = None
    script: str | None = None
    version: str | None = None
    platforms: list[str] | None = None
    interpreter: str = "/usr/bin/python3"
    index: str | None = None


class NpmSource(_Spec, frozen=True):
    """A package from an npm registry; the binary is one of its `bin` entries."""

    package: str | None = None
    bin: str | None = None
    version: str | None = None
    registry: str | None = None


class HomebrewSource(_Spec, frozen=True):
    """A formula's bottles (formulae.brew.sh's JSON API, bottles from its `root_url`)."""

    formula: str | None = None
    platforms: list[str] | None = None
    binary_path: str | None = None
    api: str | None = None


class ScoopSource(_Spec, frozen=True):
    """An app manifest of a Scoop bucket; the binary is one of its `bin` entries."""

    app: str | None = None
    bin: str | None = None
    platforms: list[str] | None = None
    bucket: str | None = None


class ChocolateySource(_Spec, frozen=True):
    """A Chocolatey package (.nupkg) from an OData (NuGet v2) feed, with its binary
    inside it."""

    package: str | None = None
    version: str | None = None
    platforms: list[str] | None = None
    binary_path: str | None = None
    feed: str | None = None


class UrlAsset(_Spec, frozen=True):
    url: str
    sha256: str | None = None


class UrlSource(_Spec, frozen=True):
    """Direct downloads, one URL per platform (`{version}` is replaced)."""

    version: str
    platforms: dict[str, str | UrlAsset]
    binary_path: str | None = None
    allow_redirects_to: list[str] = []

    def asset(self, platform: str) -> UrlAsset:
        entry = self.platforms[platform]
        asset = UrlAsset(url=entry) if isinstance(entry, str) else entry
        return UrlAsset(url=asset.url.replace("{version}", self.version), sha256=asset.sha256)


class CrawlSources(_Spec, frozen=True):
    apt: AptSource | None = None
    chocolatey: ChocolateySource | None = None
    github: GithubSource | None = None
    homebrew: HomebrewSource | None = None
    npm: NpmSource | None = None
    pypi: PypiSource | None = None
    scoop: ScoopSource | None = None
    url: UrlSource | None = None

    def items(self) -> list[tuple[str, _Spec]]:
        """The sources given, in a fixed order (so progress and reports are stable)."""
        return [(n, getattr(self, n)) for n in SOURCES if getattr(self, n) is not None]


class _Raw(_Spec, frozen=True):
    name: str
    sources: CrawlSources
    description: str | None = None
    homepage: str | None = None
    template: str | dict[str, Any] | None = None


class CrawlManifest(msgspec.Struct, kw_only=True, frozen=True):
    """A checked manifest. `template` is the decoded template (an ATIP fragment), `path`
    the file it was read from."""

    name: str
    sources: CrawlSources
    path: str
    description: str | None = None
    homepage: str | None = None
    template: dict[str, Any] | None = None


Manifest = CrawlManifest
"""`CrawlManifest` by its name before decision 391, kept for a release."""


class MissingExtra(CrawlError):
    """PyYAML (the `crawl` extra) is not installed."""


def find_manifests(directory: str | Path) -> list[Path]:
    """Every manifest in `directory` (not below it), sorted; dotfiles are ignored."""
    folder = Path(directory)
    if not folder.is_dir():
        raise CrawlManifestError(str(folder), "", "not a directory of tool manifests")
    found = sorted(
        p for p in folder.iterdir() if p.suffix in SUFFIXES and not p.name.startswith(".")
    )
    stems = [p.stem for p in found]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        raise CrawlManifestError(
            str(folder), "", f"two manifests for {twice[0]!r} (.yaml and .yml)"
        )
    return found


def manifest_path(directory: str | Path, tool: str) -> Path:
    """The manifest of `tool` in `directory`: `<tool>.yaml` or `<tool>.yml`."""
    if not is_tool_name(tool):
        raise NotAToolName(str(directory), "", f"{tool[:80]!r} is not a tool name")
    for path in find_manifests(directory):
        if path.stem == tool:
            return path
    raise ManifestNotFound(
        str(directory), "", f"no manifest for {tool!r} (looked for {tool}.yaml and {tool}.yml)"
    )


def load_manifest(path: str | Path) -> CrawlManifest:
    """Read and check one manifest; `CrawlManifestError` names the file and field at fault."""
    file = str(path)
    try:
        import yaml
    except ImportError:
        raise MissingExtra(
            "reading tool manifests needs PyYAML: pip install 'atipkit[crawl]'"
        ) from None
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise CrawlManifestError(file, "", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise CrawlManifestError(file, "", f"larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise CrawlManifestError(file, _yaml_where(exc), _yaml_reason(exc)) from None
    if not isinstance(data, dict):
        raise CrawlManifestError(file, "", "expected a mapping with name, sources and template")
    try:
        spec = msgspec.convert(data, _Raw)
    except msgspec.ValidationError as exc:
        raise _type_error(file, str(exc)) from None
    return _checked(file, Path(path).stem, spec)


def _yaml_where(exc: Any) -> str:
    mark = getattr(exc, "problem_mark", None)
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def _yaml_reason(exc: Any) -> str:
    problem = getattr(exc, "problem", None)
    return f"not valid YAML: {problem or exc}"


def _type_error(file: str, text: str) -> CrawlManifestError:
    """msgspec's `Expected X, got Y - at $.a.b` as `file: a.b: expected X, got Y`."""
    message, _, where = text.rpartition(" - at `")
    if not message:
        message, where = text, "$"
    field = where.rstrip("`").removeprefix("$").lstrip(".")
    unknown = re.match(r"Object contains unknown field `(?P<f>[^`]*)`", message)
    missing = re.match(r"Object missing required field `(?P<f>[^`]*)`", message)
    if unknown:
        name = unknown["f"]
        field = f"{field}.{name}" if field else name
        if field == f"sources.{name}":
            also = " (named by the RFC, not crawled yet)" if name in _KNOWN_ELSEWHERE else ""
            return CrawlManifestError(
                file, field, f"unknown source{also}; the crawler reads {', '.join(SOURCES)}"
            )
        return CrawlManifestError(file, field, "unknown field")
    if missing:
        name = missing["f"]
        return CrawlManifestError(file, f"{field}.{name}" if field else name, "required")
    reason = message[0].lower() + message[1:]
    if "Expected `str`" in message and ("got `float`" in message or "got `int`" in message):
        reason += " (quote it: YAML reads 1.10 as the number 1.1)"
    return CrawlManifestError(file, field, reason)


def _checked(file: str, stem: str, raw: _Raw) -> CrawlManifest:
    def failing(field: str) -> Fail:
        return lambda reason: CrawlManifestError(file, field, reason)

    if not is_tool_name(raw.name):
        raise failing("name")("a tool name has no spaces, slashes or control characters")
    if raw.name != stem:
        raise failing("name")(f"{raw.name!r} differs from the file's name {stem!r}")
    if not raw.sources.items():
        raise failing("sources")(f"at least one source is needed ({', '.join(SOURCES)})")
    if raw.homepage is not None:
        _url(raw.homepage, failing("homepage"))
    for name, spec in raw.sources.items():
        _check_source(name, spec, raw.name, _within(f"sources.{name}", failing))
    template = None
    if raw.template is not None:
        template = _template(raw.template, raw.name, failing("template"))
    return CrawlManifest(
        name=raw.name,
        sources=raw.sources,
        path=file,
        description=raw.description,
        homepage=raw.homepage,
        template=template,
    )


def _within(prefix: str, failing: Callable[[str], Fail]) -> Callable[[str], Fail]:
    """`failing` for the fields under `prefix`."""
    return lambda field: failing(f"{prefix}.{field}")


def _check_source(name: str, spec: Any, tool: str, fail: Callable[[str], Fail]) -> None:
    """`fail(field)(reason)` is the error for the source's `field`. Package, script and
    bin names default to the tool's name, so that is checked where they are not given."""
    for field in ("api", "index", "registry", "bucket", "feed"):
        value = getattr(spec, field, None)
        if value is not None:
            _url(value, fail(field))
    for (source, field), pattern in _NAMES.items():
        value = (getattr(spec, field, None) or tool) if source == name else None
        if value is not None and not pattern.match(value):
            raise fail(field)(f"{value[:80]!r} is not a valid {field} name for {source}")
    binary_path = getattr(spec, "binary_path", None)
    if binary_path is not None and (
        not binary_path or binary_path.startswith("/") or ".." in binary_path.split("/")
    ):
        raise fail("binary_path")("a relative glob inside the package, without '..'")
    field, declared = "platforms", getattr(spec, "platforms", None)
    if isinstance(spec, GithubSource):
        field, declared = "asset_patterns", list(spec.asset_patterns)
        if not _REPO.match(spec.repo):
            raise fail("repo")("expected OWNER/NAME")
    for platform in declared or ():
        try:
            platforms.check(platform)
        except ValueError as exc:
            raise fail(field)(str(exc)) from None
        if name == "apt" and not platform.startswith("linux-"):
            raise fail(field)(f"apt packages are Linux binaries, not {platform}")
        if name in ("scoop", "chocolatey") and not platform.startswith("windows-"):
            raise fail(field)(f"{name} packages are Windows binaries, not {platform}")
        if name == "homebrew" and not platform.startswith(("darwin-", "linux-")):
            raise fail(field)(f"Homebrew bottles are macOS and Linux binaries, not {platform}")
    if isinstance(spec, PypiSource) and not re.match(r"/\S+\Z", spec.interpreter):
        raise fail("interpreter")("an absolute path, as a script's first line names it")
    if isinstance(spec, UrlSource):
        _check_urls(spec, fail)


def _check_urls(spec: UrlSource, fail: Callable[[str], Fail]) -> None:
    from atipkit.trust.digest import BadHash, sha256_hex

    for platform in spec.platforms:
        asset = spec.asset(platform)
        _url(asset.url, fail(f"platforms.{platform}"))
        if asset.sha256 is not None:
            try:
                sha256_hex(asset.sha256)
            except BadHash as exc:
                raise fail(f"platforms.{platform}.sha256")(str(exc)) from None
    for origin in spec.allow_redirects_to:
        _url(origin, fail("allow_redirects_to"))


def _url(value: str, fail: Fail) -> None:
    if not re.match(r"https?://[^/\s]+", value):
        raise fail(f"expected an http(s) URL, got {value[:80]!r}")


_OWNED = ("atip", "name", "version", "binary", "trust")


def _template(value: str | dict[str, Any], name: str, fail: Fail) -> dict[str, Any]:
    """The template as a JSON object, checked to make a valid shim."""
    from atipkit.crawl.shim import template_problems

    if isinstance(value, str):
        try:
            value = _jsontext.decode(value)
        except DocumentError as exc:
            raise fail(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise fail("expected a JSON object (an ATIP document without binary and trust)")
    for key in _OWNED:
        if key in value:
            raise fail(f"{key!r} is written by the crawler, not by the template")
    problems = template_problems(value, name)
    if problems:
        first = problems[0]
        raise fail(f"{first.location}: {first.message}")
    return value
