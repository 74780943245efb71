"""`atip registry build`: a folder of shims becomes a static registry (RFC 0.6 §4.4) that
any file host can serve and `atip registry publish` can upload.

SRC is every `*.json` below it (dotfiles and dot-directories skipped, as are a built
registry's own `shims/index.json` and `coverage.json`, so a registry can be rebuilt from a
copy of one). Each must validate as a shim. Its bytes are copied verbatim to
`shims/sha256/<hex>.json`, because signatures cover the bytes; signature files beside it
go beside it (`.sigstore.json` and `.sigstore` renamed `.bundle`, the name §4.4.1 gives).
Then come the catalog, the coverage, the manifest and `index.html` (see `layout`). Two
files of SRC are not shims: `policy.json` at its top, an organization's policy (§4.8),
published verbatim once it reads as a policy; and `patterns/*.json`, pattern files (a
list of §3.9 patterns for the tool the file is named after, or `{"tool", "patterns"}`),
gathered into `patterns/index.json` (§4.4.1). The manifest names both when present.

Nothing is written unless every shim is good. The registry is built in a directory beside
DEST and swapped in at the end, so a failed build leaves the previous DEST whole.

The output is deterministic, because publishing uploads only what changed: the same shims
give the same bytes. The one moment a registry records (the catalog's `updated`, the
manifest's `version`) is `SOURCE_DATE_EPOCH` when set, else the previous DEST's when the
build would change nothing else, else now. Files whose bytes did not change keep their
modification time, so a web server's `Last-Modified` and ETags stay valid too.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from atipkit import _jsontext
from atipkit._clock import timestamp, utcnow
from atipkit.errors import AtipError, DocumentError
from atipkit.model import is_tool_name
from atipkit.problems import Problem, error, warning
from atipkit.protocol import PROTOCOL_VERSION
from atipkit.registry import layout
from atipkit.registry.catalog import ShimInfo, build_catalog, build_coverage
from atipkit.registry.page import render_index
from atipkit.validation import pattern_problems, validate

DEFAULT_NAME = "ATIP registry"
_SIGNATURES = (*layout.SIGNATURE_SUFFIXES, *layout.SIGSTORE_ALIASES)


class BuildError(AtipError):
    """The build cannot start: SRC or DEST cannot be used as given."""


class InvalidSource(BuildError):
    """Shims that cannot be published: invalid, colliding or unsigned. `problems` lists
    every one, each with its file and JSON path."""

    def __init__(self, problems: list[BuildFinding]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(problems[0].format() + more)


class BuildFinding(msgspec.Struct, frozen=True):
    """A problem and the file (relative to SRC) it was found in."""

    file: str
    problem: Problem

    def format(self) -> str:
        return self.problem.format(self.file)

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, **self.problem.to_dict()}


class BuildOptions(msgspec.Struct, frozen=True, kw_only=True):
    name: str = DEFAULT_NAME
    url: str = ""
    require_signatures: bool = False
    signers: tuple[layout.Signer, ...] = ()
    platforms: tuple[str, ...] = ()
    """The platforms every tool should have, for the coverage's `missing`; empty: every
    platform some shim names."""


class ShimFile(msgspec.Struct, frozen=True, kw_only=True):
    """A valid shim as read, with the signatures found beside it (by registry suffix)."""

    file: str
    data: bytes
    info: ShimInfo
    signatures: dict[str, bytes] = {}

    @property
    def hex(self) -> str:
        return self.info.hash.removeprefix("sha256:")


class BuildReport(msgspec.Struct, kw_only=True):
    dest: str
    changed: bool
    """False when DEST already held exactly this registry (it was left untouched)."""
    updated: str
    shims: int
    tools: int
    signatures: int
    files: int
    warnings: list[BuildFinding] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": True,
            "dest": self.dest,
            "changed": self.changed,
            "updated": self.updated,
            "shims": self.shims,
            "tools": self.tools,
            "signatures": self.signatures,
            "files": self.files,
            "warnings": [w.to_dict() for w in self.warnings],
            "errors": [],
        }


# -- reading SRC ---------------------------------------------------------------------------


def _walk(src: Path) -> Iterator[str]:
    """Every file below `src` as a POSIX path relative to it, sorted, skipping dot names."""
    for top, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = Path(top).relative_to(src)
        for name in sorted(files):
            if not name.startswith("."):
                yield (base / name).as_posix()


def _is_shim_candidate(rel: str) -> bool:
    return (
        rel.endswith(".json")
        and not rel.endswith(layout.SIGSTORE_ALIASES)
        and rel not in (layout.CATALOG, layout.COVERAGE, layout.POLICY)
        and not rel.startswith(_PATTERN_DIR)
    )


_PATTERN_DIR = layout.PATTERNS.rsplit("/", 1)[0] + "/"


class Extras(msgspec.Struct, frozen=True, kw_only=True):
    """What a registry serves besides shims: an organization's policy (its bytes, as
    written: it may be signed) and patterns by tool."""

    policy: bytes | None = None
    patterns: dict[str, list[dict[str, Any]]] = {}


def load_extras(src: str | os.PathLike[str], url: str = "") -> tuple[Extras, list[BuildFinding]]:
    """`policy.json` and `patterns/*.json` of SRC, and every problem with them. `url` is
    the registry's: a served policy.json belongs to the registry that serves it, so an
    allowlist needs no `registry` of its own (any URL stands for it when none is given)."""
    from atipkit.policy.file import read_policy

    root = Path(src)
    problems: list[BuildFinding] = []
    policy = None
    if (root / layout.POLICY).is_file():
        try:
            policy = _jsontext.read_bytes(root / layout.POLICY)
            read_policy(policy, layout.POLICY, registry=url or "https://registry.invalid")
        except (DocumentError, ValueError) as exc:
            found = getattr(exc, "problems", None) or [error("build.bad-policy", str(exc))]
            problems += [BuildFinding(layout.POLICY, p) for p in found]
            policy = None
        except OSError as exc:
            problems.append(BuildFinding(layout.POLICY, error("io.unreadable", str(exc.strerror))))
    patterns: dict[str, list[dict[str, Any]]] = {}
    for rel in _walk(root):
        if rel.startswith(_PATTERN_DIR) and rel.endswith(".json"):
            problems += _read_patterns(root, rel, patterns)
    return Extras(policy=policy, patterns=dict(sorted(patterns.items()))), problems


def _read_patterns(
    root: Path, rel: str, into: dict[str, list[dict[str, Any]]]
) -> list[BuildFinding]:
    """One pattern file into `into` (by tool): each pattern valid as §3.9 says, and no
    two of one tool with one name (which would replace each other in a client)."""
    try:
        data = _jsontext.decode(_jsontext.read_bytes(root / rel), rel)
    except DocumentError as exc:
        return [BuildFinding(rel, p) for p in exc.problems]
    except OSError as exc:
        return [BuildFinding(rel, error("io.unreadable", f"cannot read: {exc.strerror}"))]
    tool = Path(rel).stem
    if isinstance(data, dict) and isinstance(data.get("tool"), str):
        tool = data["tool"]
    patterns = data.get("patterns") if isinstance(data, dict) else data
    if not isinstance(patterns, list) or not is_tool_name(tool):
        message = 'expected a list of patterns, or {"tool": NAME, "patterns": [...]}'
        return [BuildFinding(rel, error("build.bad-patterns", message))]
    invalid = pattern_problems(tool, patterns, source=rel)
    if invalid:
        return [BuildFinding(rel, p) for p in invalid]
    known = {p["name"] for p in into.get(tool, [])}
    found = []
    for index, pattern in enumerate(patterns):
        if pattern["name"] in known:
            message = f"{tool} has another pattern named {pattern['name']!r} in this registry"
            found.append(
                BuildFinding(rel, error("build.pattern-twice", message, f"$[{index}].name"))
            )
        known.add(pattern["name"])
        into.setdefault(tool, []).append(pattern)
    return found


def _read_shim(src: Path, rel: str) -> tuple[ShimFile | None, list[BuildFinding]]:
    try:
        data = _jsontext.read_bytes(src / rel)
    except DocumentError as exc:
        return None, [BuildFinding(rel, p) for p in exc.problems]
    except OSError as exc:
        return None, [BuildFinding(rel, error("io.unreadable", f"cannot read: {exc.strerror}"))]
    report = validate(data, source=rel)
    if not report.ok or report.tool is None:
        return None, [BuildFinding(rel, p) for p in report.errors]
    if report.tool.kind != "shim":
        problem = error(
            "build.not-a-shim", "not a shim: a registry holds shims, which have a binary block"
        )
        return None, [BuildFinding(rel, problem)]
    found: list[BuildFinding] = []
    signatures: dict[str, bytes] = {}
    for suffix in _SIGNATURES:
        path = src / (rel + suffix)
        if not path.is_file():
            continue
        published = ".bundle" if suffix in layout.SIGSTORE_ALIASES else suffix
        try:
            signature = path.read_bytes()
        except OSError as exc:
            found.append(
                BuildFinding(rel + suffix, error("io.unreadable", f"cannot read: {exc.strerror}"))
            )
            continue
        if signatures.get(published, signature) != signature:
            message = f"{rel}{suffix} and another Sigstore bundle beside it differ; keep one"
            found.append(BuildFinding(rel, error("build.signature-conflict", message)))
        signatures[published] = signature
    shim = ShimFile(file=rel, data=data, info=ShimInfo.of(report.tool), signatures=signatures)
    return shim, found


def load_shims(
    src: str | os.PathLike[str], *, require_signatures: bool = False
) -> tuple[list[ShimFile], list[BuildFinding]]:
    """The shims below `src`, one per hash, sorted by hash, and warnings; `InvalidSource`
    listing every problem when any shim cannot be published."""
    root = Path(src)
    files = list(_walk(root))
    candidates = [rel for rel in files if _is_shim_candidate(rel)]
    if not candidates:
        raise BuildError(f"{root}: no shims (*.json files) found")
    problems: list[BuildFinding] = []
    by_hash: dict[str, ShimFile] = {}
    for rel in candidates:
        shim, found = _read_shim(root, rel)
        problems += found
        if shim is None:
            continue
        first = by_hash.get(shim.hex)
        if first is None:
            by_hash[shim.hex] = shim
        elif first.data != shim.data:
            message = f"{shim.info.hash} is also described by {first.file}, with other content"
            problems.append(
                BuildFinding(rel, error("build.hash-collision", message, "$.binary.hash"))
            )
        else:  # the same shim twice (a copy): one, with the signatures of both
            for suffix, signature in shim.signatures.items():
                if first.signatures.get(suffix, signature) != signature:
                    message = f"its {suffix} signature differs from that of {first.file}"
                    problems.append(BuildFinding(rel, error("build.signature-conflict", message)))
            merged = {**shim.signatures, **first.signatures}
            by_hash[shim.hex] = msgspec.structs.replace(first, signatures=merged)
    if require_signatures:
        problems += [
            BuildFinding(
                s.file,
                error("build.unsigned", "no signature beside it (.bundle, .minisig or .sig)"),
            )
            for s in by_hash.values()
            if not s.signatures
        ]
    if problems:
        raise InvalidSource(problems)
    shims = [by_hash[hex_] for hex_ in sorted(by_hash)]
    shim_files = set(candidates)
    orphans = [
        BuildFinding(rel, warning("build.orphan-signature", "a signature with no shim beside it"))
        for rel in files
        if rel.endswith(_SIGNATURES) and _signed_file(rel) not in shim_files
    ]
    return shims, orphans


def _signed_file(rel: str) -> str:
    for suffix in _SIGNATURES:
        if rel.endswith(suffix):
            return rel[: -len(suffix)]
    return rel


# -- the registry's files (pure) -----------------------------------------------------------


def manifest_document(
    options: BuildOptions, moment: dt.datetime, extras: Extras | None = None
) -> dict[str, Any]:
    """`.well-known/atip-registry.json` (§4.4.2), every field written out: other clients
    should not have to know this one's defaults."""
    registry: dict[str, Any] = {"name": options.name}
    if options.url:
        registry["url"] = options.url
    registry |= {"type": "static", "version": moment.strftime("%Y.%m.%d")}
    endpoints = {
        "shims": layout.SHIM_ENDPOINT,
        "signatures": layout.SIGNATURE_ENDPOINT,
        "catalog": layout.CATALOG_ENDPOINT,
        "coverage": layout.COVERAGE_ENDPOINT,
    }
    if extras is not None and extras.patterns:
        endpoints["patterns"] = layout.PATTERNS_ENDPOINT
    if extras is not None and extras.policy is not None:
        endpoints["policy"] = layout.POLICY_ENDPOINT
    return {
        "atip": {"version": PROTOCOL_VERSION},
        "registry": registry,
        "endpoints": endpoints,
        "trust": {
            "requireSignatures": options.require_signatures,
            "signers": [{"identity": s.identity, "issuer": s.issuer} for s in options.signers],
        },
    }


def _json(data: Any) -> bytes:
    return json.dumps(data, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"


def render_registry(
    shims: list[ShimFile],
    options: BuildOptions,
    moment: dt.datetime,
    extras: Extras | None = None,
) -> tuple[dict[str, bytes], list[BuildFinding]]:
    """Every file of the registry (path → bytes) and the catalog's duplicate warnings."""
    infos = [s.info for s in shims]
    catalog, duplicates = build_catalog(infos, updated=timestamp(moment))
    files: dict[str, bytes] = {}
    for shim in shims:
        path = layout.shim_path(shim.hex)
        files[path] = shim.data
        for suffix, signature in shim.signatures.items():
            files[path + suffix] = signature
    signatures = {
        s.hex: [x for x in layout.SIGNATURE_SUFFIXES if x in s.signatures]
        for s in shims
        if s.signatures
    }
    files[layout.CATALOG] = _json(catalog)
    files[layout.COVERAGE] = _json(build_coverage(infos, options.platforms))
    files[layout.INDEX_HTML] = render_index(catalog, name=options.name, signatures=signatures)
    if extras is not None and extras.policy is not None:
        files[layout.POLICY] = extras.policy
    if extras is not None and extras.patterns:
        index = {"version": "1", "updated": timestamp(moment), "tools": extras.patterns}
        files[layout.PATTERNS] = _json(index)
    files[layout.MANIFEST] = _json(manifest_document(options, moment, extras))
    by_hash = {s.info.hash: s.file for s in shims}
    warnings = [
        BuildFinding(by_hash[d.unlisted[0]], warning("build.duplicate", d.message(), "$.binary"))
        for d in duplicates
    ]
    return files, warnings


# -- writing DEST --------------------------------------------------------------------------


def _check_places(src: Path, dest: Path) -> None:
    if not src.is_dir():
        raise BuildError(f"{src}: not a directory")
    if src == dest or dest.is_relative_to(src) or src.is_relative_to(dest):
        raise BuildError(f"{dest}: SRC and DEST must not contain one another")
    if dest.exists():
        if not dest.is_dir():
            raise BuildError(f"{dest}: exists and is not a directory")
        if any(dest.iterdir()) and not (dest / layout.MANIFEST).is_file():
            raise BuildError(
                f"{dest}: not empty and not a registry (no {layout.MANIFEST}); refusing to "
                "replace it"
            )


def _source_date_epoch() -> dt.datetime | None:
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return None
    if not re.fullmatch(r"[0-9]+", value):
        raise BuildError(f"SOURCE_DATE_EPOCH must be seconds since 1970, got {value[:40]!r}")
    return dt.datetime.fromtimestamp(int(value), dt.UTC)


def _previous_moment(dest: Path) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(
            json.loads((dest / layout.CATALOG).read_bytes())["updated"]
        )
        return moment if moment.tzinfo else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _unchanged(dest: Path, files: dict[str, bytes]) -> tuple[set[str], bool]:
    """Which of `files` DEST already holds byte for byte, and whether DEST holds exactly
    `files` and nothing else."""
    if not dest.is_dir():
        return set(), False
    same = set()
    present = set()
    for top, _dirs, names in os.walk(dest):
        for name in names:
            rel = (Path(top) / name).relative_to(dest).as_posix()
            present.add(rel)
            if rel in files:
                try:
                    if (dest / rel).read_bytes() == files[rel]:
                        same.add(rel)
                except OSError:
                    pass
    return same, same == present == set(files)


def _write(dest: Path, files: dict[str, bytes], same: set[str]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".build", dir=dest.parent))
    try:
        for rel, data in files.items():
            path = staging / rel
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o644)
            if rel in same:
                old = (dest / rel).stat()
                os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
        for top, dirs, _names in os.walk(staging):
            for name in dirs:
                os.chmod(os.path.join(top, name), 0o755)
        staging.chmod(0o755)  # mkdtemp makes it 0700: web servers must read it
        _swap(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap(staging: Path, dest: Path) -> None:
    """Put `staging` where `dest` is. Two renames: DEST is missing for the instant between
    them, never half-written."""
    if not dest.exists():
        os.rename(staging, dest)
        return
    retired = dest.with_name(f".{dest.name}.{secrets.token_hex(4)}.old")
    os.rename(dest, retired)
    try:
        os.rename(staging, dest)
    except BaseException:
        os.rename(retired, dest)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def build_registry(
    src: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    options: BuildOptions | None = None,
) -> BuildReport:
    """Build the registry of the shims below `src` into `dest` (see the module docstring).
    `BuildError` when SRC or DEST cannot be used, `InvalidSource` (a `BuildError`) with
    every problem when a shim cannot be published; DEST is then as it was."""
    options = options or BuildOptions()
    if options.url and not re.match(r"https?://", options.url):
        raise BuildError(f"the registry URL must be http:// or https://, got {options.url[:100]!r}")
    if any(not p.strip() for p in options.platforms):
        raise BuildError("a platform for coverage must not be blank")
    options = msgspec.structs.replace(
        options, platforms=tuple(dict.fromkeys(p.strip() for p in options.platforms))
    )
    root, target = Path(src).resolve(), Path(dest).resolve()
    _check_places(root, target)
    extras, problems = load_extras(root, options.url)
    try:
        shims, warnings = load_shims(root, require_signatures=options.require_signatures)
    except InvalidSource as exc:
        raise InvalidSource(exc.problems + problems) from None
    if problems:
        raise InvalidSource(problems)
    fixed = _source_date_epoch()
    previous = None if fixed else _previous_moment(target)
    moment = fixed or previous or utcnow()
    files, duplicates = render_registry(shims, options, moment, extras)
    same, identical = _unchanged(target, files)
    if previous and not identical:  # something changed: the registry is updated now
        moment = utcnow()
        files, duplicates = render_registry(shims, options, moment, extras)
        same, _ = _unchanged(target, files)
    if not identical:
        _write(target, files, same)
    return BuildReport(
        dest=str(target),
        changed=not identical,
        updated=timestamp(moment),
        shims=len(shims),
        tools=len({s.info.name for s in shims}),
        signatures=sum(len(s.signatures) for s in shims),
        files=len(files),
        warnings=warnings + duplicates,
    )
