"""Shims from remote registries, by the hash of the binary (RFC 0.6 §4.4-4.7).

A lookup asks the configured registries in priority order for `shims/sha256/<hex>.json`
(or the path the registry's manifest names), and accepts a shim only when

- the hash asked for is a hash: anything else is refused before any request is made;
- it is a valid ATIP shim whose embedded `binary.hash` is the lookup key (a registry that
  serves a shim for another binary is skipped, and the refusal reported);
- its signature verifies, when the registry — by configuration or by its own manifest —
  requires signatures, against the signers pinned in registries.json;
- it arrived within the size limit and the deadline, by redirects only to the same origin
  (or origins the configuration allows).

Accepted shims are cached in `$ATIP_CACHE_DIR/shims/sha256/<hex>.json` with the stamps of
§4.7 (`_cached_at`, `_cached_from`, `_etag`, `_last_modified`, and `_verified` when a
signature was checked). A cached shim is served without a request for 24 hours (the TTL),
then revalidated with `If-None-Match`/`If-Modified-Since` (a 304 keeps it, and renews the
file's mtime, which counts as its age from then on); `refresh`
(or `ATIP_REFRESH=1`) revalidates at once; offline (`ATIP_OFFLINE=1`) serves the cache
only. When no registry can be reached, a cached shim younger than `cacheExpiry` (7 days)
is still served, marked stale. A shim is served from the cache only while the registry it
came from is still configured.

Every lookup returns a `Lookup` that says what happened at each registry, so a refusal is
never silent. Each registry's answer is judged alone: one that cannot be used (too large,
encoded in a way not decoded here, nested deeper than the validator follows, a bad
manifest) is that registry's refusal, and the next registry is asked. Validators are kept
and sent back only as RFC 9110 allows them (`_http.entity_tag`, `http_date`): a hostile
`ETag` of bytes outside ASCII is dropped, also from a cache written before this check.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import re
import threading
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from atipkit import _jsontext, paths
from atipkit._atomic import write_atomic
from atipkit._clock import timestamp, utcnow
from atipkit._http import (
    Fetcher,
    HttpError,
    NetworkError,
    Response,
    StatusError,
    entity_tag,
    http_date,
    is_loopback,
)
from atipkit.errors import AtipError, DocumentError
from atipkit.model import Tool
from atipkit.policy.rules import TrustRank
from atipkit.registry import layout
from atipkit.registry.config import RegistrySettings, RemoteRegistry, load_settings
from atipkit.trust.digest import sha256_hex
from atipkit.validation import validate_decoded

if TYPE_CHECKING:
    from atipkit.policy import Policy

SIGNATURE_MAX_BYTES = 1024 * 1024
MANIFEST_MAX_BYTES = 1024 * 1024
_STAMPS_BYTES = 64 * 1024
"""Room for the cache's stamps beside a shim of a registry's `maxBytes`."""
Outcome = Literal[
    "found", "not-modified", "not-found", "rejected", "denied", "unreachable", "skipped"
]
"""`denied`: the registry answered 401 or 403, to the credentials sent or to none."""
DENIED_STATUSES = frozenset({401, 403})
Refusal = Literal["other-binary", "unsigned", "invalid"]


class Attempt(msgspec.Struct, frozen=True):
    """What one registry answered for one lookup."""

    registry: str
    url: str
    outcome: Outcome
    reason: str = ""
    refusal: Refusal | None = None
    """Why a `rejected` answer was refused: `other-binary` (its `binary.hash` names another
    binary), `unsigned` (a required signature does not verify), `invalid` (anything else:
    not a shim, too large, a bad manifest)."""


class Lookup(msgspec.Struct, kw_only=True):
    """The result of looking a hash up: the shim (or None) and how it was obtained."""

    hash: str
    tool: Tool | None = None
    registry: str | None = None
    """The URL of the registry the shim came from."""
    url: str | None = None
    cached: bool = False
    """Served from the cache (fresh, revalidated, stale or offline)."""
    revalidated: bool = False
    """The registry answered 304 Not Modified."""
    stale: bool = False
    """No registry could be reached; the cached copy is older than the TTL."""
    verified: str | None = None
    """Which signature was checked, when one was required."""
    trust: TrustRank | None = None
    """The trust the configuration gives the registry the shim came from."""
    attempts: list[Attempt] = []

    @property
    def rejected(self) -> list[Attempt]:
        return [a for a in self.attempts if a.outcome == "rejected"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "hash": self.hash,
            "found": self.tool is not None,
            "name": self.tool.name if self.tool else None,
            "version": self.tool.version if self.tool else None,
            "registry": self.registry,
            "url": self.url,
            "cached": self.cached,
            "revalidated": self.revalidated,
            "stale": self.stale,
            "verified": self.verified,
            "trust": self.trust,
            "attempts": [msgspec.to_builtins(a) for a in self.attempts],
        }


class RegistryPolicyError(AtipError):
    """A registry names an organization policy that cannot be read (§4.8)."""


class Rejected(AtipError):
    """A response that is not an acceptable shim (raised and caught inside a lookup)."""

    refusal: Refusal = "invalid"


class OtherBinary(Rejected):
    """A shim whose `binary.hash` is not the lookup key."""

    refusal = "other-binary"


class Unsigned(Rejected):
    """A shim whose required signature does not verify."""

    refusal = "unsigned"


class _Cached(msgspec.Struct, kw_only=True):
    tool: Tool
    cached_at: dt.datetime
    source: str
    etag: str | None
    last_modified: str | None
    verified: str | None


class RemoteRegistries:
    """The configured remote registries, with their cache. Use as a context manager (or
    call `close()`) to release connections."""

    def __init__(
        self,
        settings: RegistrySettings,
        *,
        cache_dir: Path | None = None,
        refresh: bool = False,
    ) -> None:
        self.settings = settings
        self.registries: list[RemoteRegistry] = settings.ordered
        self.cache_dir = Path(cache_dir) if cache_dir else paths.cache_dir()
        self.refresh = refresh or paths.refresh_requested()
        self._fetchers: dict[str, Fetcher] = {}
        self._manifests: dict[str, layout.RegistryManifest | None] = {}
        self._unreachable: dict[str, str] = {}
        """Why each registry this instance could not reach did not answer."""

    @classmethod
    def from_environment(cls, *, refresh: bool = False) -> RemoteRegistries:
        """registries.json and the ATIP_* variables (`RegistryConfigError` if broken)."""
        return cls(load_settings(), refresh=refresh)

    def __enter__(self) -> RemoteRegistries:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for fetcher in self._fetchers.values():
            fetcher.close()
        self._fetchers.clear()

    # -- lookup ------------------------------------------------------------------------

    def lookup(self, hash_: str) -> Lookup:
        """The shim for the binary with this sha256 (`sha256:<hex>` or `<hex>`).

        Raises `BadHash` for anything that is not a hash, before any file or request.
        """
        hex_digits = sha256_hex(hash_)
        key = f"sha256:{hex_digits}"
        result = Lookup(hash=key)
        cached = self._read_cache(hex_digits)
        if self.settings.offline:
            return self._serve(result, cached, reason="offline") if cached else result
        now = utcnow()
        if (
            cached
            and not self.refresh
            and (now - cached.cached_at).total_seconds() < self.settings.ttl
        ):
            return self._serve(result, cached)
        for registry in self.registries:
            done = self._ask(registry, hex_digits, cached, result)
            if done:
                return result
        unreachable = [a for a in result.attempts if a.outcome == "unreachable"]
        if (
            cached
            and unreachable
            and (now - cached.cached_at).total_seconds() < self.settings.cache_expiry
        ):
            result.stale = True
            return self._serve(result, cached)
        return result

    def _ask(
        self, registry: RemoteRegistry, hex_digits: str, cached: _Cached | None, result: Lookup
    ) -> bool:
        """Ask one registry; True when the lookup is settled (found, or the cache kept)."""
        label = registry.label
        try:
            _credentials(registry)
            manifest = self.manifest(registry)
        except (HttpError, Rejected, _Refused) as exc:
            result.attempts.append(_failed(label, registry.url, exc, str(exc)))
            return False
        url = layout.join(registry.url, (manifest or _DEFAULT).shim_endpoint(hex_digits))
        required = self._requires_signatures(registry, manifest)
        mine = cached if cached is not None and cached.source == registry.url else None
        validators: dict[str, str] = {}
        if mine and (mine.verified or not required):  # else: fetch it whole and verify it
            if mine.etag:
                validators["If-None-Match"] = mine.etag
            if mine.last_modified:
                validators["If-Modified-Since"] = mine.last_modified
        headers = {"Accept": layout.SHIM_ACCEPT, **validators}
        try:
            response = self._get(registry, url, registry.max_bytes, headers)
            if response.status == 304 and mine and validators:
                self._touch(hex_digits)
                result.attempts.append(Attempt(label, url, "not-modified"))
                result.revalidated = True
                self._serve(result, mine)
                return True
            if response.status in (404, 410):
                if mine:
                    self._forget(hex_digits)
                result.attempts.append(Attempt(label, url, "not-found", f"HTTP {response.status}"))
                return False
            if response.status != 200:
                raise StatusError(url, response.status)
            tool, data = _accept(response.content, url, f"sha256:{hex_digits}")
            verified = None
            if required:
                verified = self._verify(registry, manifest, url, hex_digits, response.content)
        except (HttpError, Rejected) as exc:
            reason = str(exc).removeprefix(f"{url}: ")
            result.attempts.append(_failed(label, url, exc, reason))
            return False
        self._write_cache(hex_digits, data, registry.url, response, verified)
        result.attempts.append(Attempt(label, url, "found"))
        result.tool, result.registry, result.url = tool, registry.url, url
        result.verified, result.trust = verified, registry.trust
        return True

    def _serve(self, result: Lookup, cached: _Cached, reason: str = "") -> Lookup:
        result.tool, result.registry, result.cached = cached.tool, cached.source, True
        result.verified = cached.verified
        result.trust = next((r.trust for r in self.registries if r.url == cached.source), None)
        if reason:
            result.attempts.append(Attempt("cache", cached.source, "found", reason))
        return result

    # -- manifests ---------------------------------------------------------------------

    def manifest(self, registry: RemoteRegistry) -> layout.RegistryManifest | None:
        """The registry's `.well-known/atip-registry.json`, cached like shims; None when
        it has none (a plain folder of shims is a registry too)."""
        if registry.url in self._manifests:
            return self._manifests[registry.url]
        manifest = _manifest(self._document(registry, layout.MANIFEST, "manifest"))
        self._manifests[registry.url] = manifest
        return manifest

    def patterns(self, name: str) -> list[PatternLayer]:
        """The patterns each registry serves for tool `name` (§4.4.1), one layer per
        registry, the highest priority last (the order layers are applied in), each
        pattern validated as a pattern file is (`_pattern_layer`). A registry whose
        manifest names no patterns is not asked; one that cannot be read is left out
        (patterns are advice: a registry down changes no decision). Resolution asks an
        offline instance (`cached`): the copies `refresh_patterns` left in the cache."""
        layers = []
        for registry in reversed(self.registries):
            try:
                served = self._patterns_index(registry)
            except (HttpError, Rejected, _Refused):
                continue
            if served is not None and served[1] is not None:
                layer = _pattern_layer(registry, served[0], served[1], name)
                if layer is not None:
                    layers.append(layer)
        return layers

    def refresh_patterns(self) -> list[Attempt]:
        """Ask every registry for its manifest and the patterns it serves, within the
        TTL as any document (at once with `refresh`), so that resolution, which reads
        them from the cache only, finds them: what each registry answered."""
        attempts = []
        for registry in self.registries:
            try:
                served = self._patterns_index(registry)
            except (HttpError, Rejected, _Refused) as exc:
                attempts.append(_failed(registry.label, registry.url, exc, str(exc)))
                continue
            if served is None:
                attempts.append(Attempt(registry.label, registry.url, "skipped", "no patterns"))
                continue
            url, document = served
            tools = document.get("tools") if isinstance(document, dict) else None
            if document is None:
                attempts.append(Attempt(registry.label, url, "not-found"))
            elif not isinstance(tools, dict):
                attempts.append(Attempt(registry.label, url, "rejected", _NOT_AN_INDEX, "invalid"))
            else:
                attempts.append(Attempt(registry.label, url, "found", f"{len(tools)} tools"))
        return attempts

    def _patterns_index(self, registry: RemoteRegistry) -> tuple[str, Any] | None:
        """The URL and document (None: not served) of the patterns index the registry's
        manifest names; None when it names none. Raises `HttpError`, `Rejected`."""
        manifest = self.manifest(registry)
        endpoint = manifest.endpoints.patterns if manifest else None
        if not endpoint:
            return None
        return layout.join(registry.url, endpoint), self._document(registry, endpoint, "patterns")

    def cached(self) -> RemoteRegistries:
        """These registries, offline: every read is of the cache, and nobody is asked."""
        return RemoteRegistries(
            msgspec.structs.replace(self.settings, offline=True), cache_dir=self.cache_dir
        )

    def policies(self) -> list[Policy]:
        """The organization policy each registry serves (§4.8), each belonging to its
        registry. A registry that names a policy it cannot serve, or one that cannot be
        read, is a `RegistryPolicyError`: its organization's rules must not vanish
        unnoticed. A registry that cannot be reached now is left out (offline, the copy
        read before is used)."""
        from atipkit.policy.file import read_policy

        out = []
        for registry in self.registries:
            try:
                manifest = self.manifest(registry)
                endpoint = manifest.endpoints.policy if manifest else None
                if not endpoint:
                    continue
                document = self._document(registry, endpoint, "policy")
            except HttpError:
                continue
            except Rejected as exc:
                raise RegistryPolicyError(f"{registry.url}: {exc}") from None
            url = layout.join(registry.url, endpoint)
            if document is None:
                raise RegistryPolicyError(f"{url}: the manifest names a policy it does not serve")
            try:
                out.append(read_policy(msgspec.json.encode(document), url, registry=registry.url))
            except DocumentError as exc:
                raise RegistryPolicyError(f"{url}: {exc}") from None
        return out

    def _document(self, registry: RemoteRegistry, endpoint: str, kind: str) -> Any:
        """A JSON document of the registry at `endpoint`, cached under `kind` with its
        ETag for the TTL; None when the registry has none (404, 410)."""
        suffix = "" if kind == "manifest" else f".{kind}"
        path = self.cache_dir / "registries" / f"{_url_key(registry.url)}{suffix}.json"
        stamps = _read_stamps(path)
        if stamps.get("url") != registry.url:
            stamps = {}
        cached_at = _parse_time(stamps.get("cachedAt"))
        fresh = False
        if cached_at and not self.refresh:
            fresh = (utcnow() - cached_at).total_seconds() < self.settings.ttl
        if self.settings.offline:
            return stamps.get(kind)
        if not fresh:
            url = layout.join(registry.url, endpoint)
            headers = {}
            if etag := entity_tag(stamps.get("etag")):  # a bad one stored earlier is dropped
                headers["If-None-Match"] = etag
            response = self._get(registry, url, MANIFEST_MAX_BYTES, headers)
            if response.status == 304 and stamps:
                stamps = {**stamps, "cachedAt": timestamp()}  # the one read is shared
            elif response.status in (404, 410):
                stamps = {"url": registry.url, "cachedAt": timestamp(), kind: None}
            elif response.status == 200:
                try:
                    document = _jsontext.decode(response.content, url)
                except DocumentError as exc:  # the URL is the attempt's already
                    raise Rejected(f"{endpoint.lstrip('/')}: {exc.problems[0].format()}") from None
                stamps = {
                    "url": registry.url,
                    "cachedAt": timestamp(),
                    "etag": entity_tag(response.headers.get("etag")),
                    kind: document,
                }
            else:
                raise StatusError(url, response.status)
            write_atomic(path, msgspec.json.encode(stamps), durable=False)
        return stamps.get(kind)

    # -- signatures --------------------------------------------------------------------

    def _requires_signatures(
        self, registry: RemoteRegistry, manifest: layout.RegistryManifest | None
    ) -> bool:
        declared = bool(manifest and manifest.trust.require_signatures)
        return declared or self.settings.requires_signatures(registry)

    def _verify(
        self,
        registry: RemoteRegistry,
        manifest: layout.RegistryManifest | None,
        shim_url: str,
        hex_digits: str,
        data: bytes,
    ) -> str:
        """Who signed `data`, by the first method that verifies; `Rejected` listing why
        each configured method failed."""
        from atipkit.trust import signatures

        reasons: list[str] = []
        signers = registry.signers or (manifest.trust.signers if manifest else [])
        if signers:
            endpoint = (manifest or _DEFAULT).signature_endpoint(hex_digits)
            bundle = self._signature(registry, layout.join(registry.url, endpoint), reasons)
            for signer in signers if bundle is not None else ():
                result = signatures.sigstore_verify(
                    data,
                    bundle,  # type: ignore[arg-type]  # not None in this loop
                    identity=signer.identity,
                    issuer=signer.issuer,
                    trusted_root=registry.trusted_root,
                )
                if result.ok:
                    return f"sigstore: {signer.identity} ({signer.issuer})"
                reasons.append(f"sigstore ({signer.identity}): {result.reason}")
        if registry.minisign_keys:
            signature = self._signature(registry, f"{shim_url}.minisig", reasons)
            for key in registry.minisign_keys if signature is not None else ():
                result = signatures.minisign_verify(data, key, signature=signature)
                if result.ok:
                    return f"minisign: {_key_label(key)}"
                reasons.append(f"minisign ({_key_label(key)}): {result.reason}")
        if registry.ssh_allowed_signers:
            signature = self._signature(registry, f"{shim_url}.sig", reasons)
            principals = registry.allowed_signers or _principals(registry.ssh_allowed_signers)
            for principal in principals if signature is not None else ():
                result = signatures.ssh_verify(
                    data, registry.ssh_allowed_signers, principal, signature=signature
                )
                if result.ok:
                    return f"ssh: {principal}"
            if signature is not None:
                reasons.append("ssh: no allowed signer's signature verifies")
        if not (signers or registry.minisign_keys or registry.ssh_allowed_signers):
            reasons.append(
                "no signer is configured for this registry (signers, minisignKeys or "
                "sshAllowedSigners in registries.json)"
            )
        raise Unsigned("signatures are required: " + "; ".join(reasons))

    def _signature(self, registry: RemoteRegistry, url: str, reasons: list[str]) -> bytes | None:
        try:
            response = self._get(registry, url, SIGNATURE_MAX_BYTES, {})
        except (HttpError, _Refused) as exc:
            reasons.append(str(exc))
            return None
        if response.status != 200:
            reasons.append(f"no signature at {url} (HTTP {response.status})")
            return None
        return response.content

    # -- HTTP --------------------------------------------------------------------------

    def _get(
        self, registry: RemoteRegistry, url: str, max_bytes: int, headers: dict[str, str]
    ) -> Response:
        """One request to `registry`, refused at once (a `NetworkError`) while the registry
        is remembered as unreachable (`_still_unreachable`), unless `refresh` asks anyway.
        The memory is a marker file; one that cannot be written is only a memory lost."""
        marker = self._unreachable_path(registry)
        why = self._unreachable.get(registry.url)  # this instance asks once, even to refresh
        if why is None and not self.refresh:
            why = _still_unreachable(marker, registry.url)
        if why is not None:
            raise NetworkError(
                url,
                f"{why} (not asked again for {UNREACHABLE_FOR:g} s; --refresh or ATIP_REFRESH=1 "
                "asks at once)",
            )
        try:
            response = self._fetch(registry, url, max_bytes, headers)
        except NetworkError as exc:
            reason = str(exc).removeprefix(f"{exc.url}: ")[:500]
            self._unreachable[registry.url] = reason
            document = {"url": registry.url, "at": timestamp(), "reason": reason}
            with contextlib.suppress(OSError):
                write_atomic(marker, msgspec.json.encode(document), durable=False)
            raise
        with contextlib.suppress(OSError):
            marker.unlink(missing_ok=True)
        return response

    def _unreachable_path(self, registry: RemoteRegistry) -> Path:
        return self.cache_dir / "registries" / f"{_url_key(registry.url)}.unreachable.json"

    def _fetch(
        self, registry: RemoteRegistry, url: str, max_bytes: int, headers: dict[str, str]
    ) -> Response:
        fetcher = self._fetchers.get(registry.url)
        if fetcher is None:
            fetcher = Fetcher(
                connect_timeout=min(5.0, registry.timeout),
                read_timeout=registry.timeout,
                deadline=registry.timeout,
                allowed_origins=registry.allow_redirects_to,
            )
            self._fetchers[registry.url] = fetcher
        return fetcher.get(
            url, max_bytes=max_bytes, headers=headers, credentials=_credentials(registry)
        )

    # -- the cache ---------------------------------------------------------------------

    def _cache_path(self, hex_digits: str) -> Path:
        return self.cache_dir / layout.shim_path(hex_digits)

    def _read_cache(self, hex_digits: str) -> _Cached | None:
        path = self._cache_path(hex_digits)
        limit = max((r.max_bytes for r in self.registries), default=0) + _STAMPS_BYTES
        try:
            raw = _jsontext.read_bytes(path, max_bytes=limit)
        except (OSError, DocumentError):  # gone, or larger than any registry may send
            return None
        try:
            tool, data = _accept(raw, str(path), f"sha256:{hex_digits}")
            stamped = _parse_time(data.get("_cached_at"))
            # a revalidation (304) marks the copy fresh by its mtime, not by rewriting it
            touched = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)
        except (Rejected, ValueError, OSError, RecursionError):
            return None  # damaged: a cache costs one fetch
        if stamped is None:
            return None  # its time is damaged: the same
        source = str(data.get("_cached_from", ""))
        registry = next((r for r in self.registries if r.url == source), None)
        if registry is None:
            return None  # that registry is no longer trusted here
        if self.settings.requires_signatures(registry) and not data.get("_verified"):
            return None  # cached before signatures were required
        return _Cached(
            tool=tool,
            cached_at=max(stamped, touched),
            source=source,
            etag=entity_tag(data.get("_etag")),  # a bad one stored earlier is dropped
            last_modified=http_date(data.get("_last_modified")),
            verified=verified if isinstance(verified := data.get("_verified"), str) else None,
        )

    def _write_cache(
        self,
        hex_digits: str,
        data: dict[str, Any],
        source: str,
        response: Response,
        verified: str | None,
    ) -> None:
        stamped = {k: v for k, v in data.items() if not k.startswith("_cache")}
        for name in ("_etag", "_last_modified", "_verified"):
            stamped.pop(name, None)
        stamped["_cached_at"] = timestamp()
        stamped["_cached_from"] = source
        if etag := entity_tag(response.headers.get("etag")):
            stamped["_etag"] = etag
        if modified := http_date(response.headers.get("last-modified")):
            stamped["_last_modified"] = modified
        if verified:
            stamped["_verified"] = verified
        write_atomic(self._cache_path(hex_digits), msgspec.json.encode(stamped), durable=False)

    def _touch(self, hex_digits: str) -> None:
        os.utime(self._cache_path(hex_digits))

    def _forget(self, hex_digits: str) -> None:
        self._cache_path(hex_digits).unlink(missing_ok=True)


class PatternLayer(msgspec.Struct, frozen=True, kw_only=True):
    """The patterns one registry serves for one tool, as resolution layers them."""

    source: str
    """The URL of the registry's patterns index."""
    patterns: list[dict[str, Any]]
    """The valid ones, as served (an executable one made advisory, see `notes`)."""
    notes: list[str] = []
    """What was refused or changed, and why."""


MAX_REGISTRY_PATTERNS = 256
"""The most patterns a registry may serve for one tool: a list longer than any
workflow collection (each is validated on every resolution) is refused whole."""
_NOT_AN_INDEX = 'not a patterns index: expected {"tools": {NAME: [patterns]}}'
_AT = re.compile(r"^\$\[(\d+)\]")


def _pattern_layer(
    registry: RemoteRegistry, url: str, document: Any, name: str
) -> PatternLayer | None:
    """The patterns of tool `name` in a registry's index, each validated as a pattern file
    is (`validation.pattern_problems`): an invalid pattern is refused with its problem and
    the others kept; a document or list that is not what §4.4.1 serves is refused whole.
    An executable pattern is made advisory unless the registry is trusted `high` (§3.9:
    executing agents "MUST respect trust levels"). None when it has nothing for `name`."""
    from atipkit.validation import pattern_problems

    tools = document.get("tools") if isinstance(document, dict) else None
    if not isinstance(tools, dict):
        return PatternLayer(source=url, patterns=[], notes=[_NOT_AN_INDEX])
    found = tools.get(name)
    if found is None:
        return None
    where = f"tools.{name}"
    if not isinstance(found, list):
        return PatternLayer(source=url, patterns=[], notes=[f"{where}: not a list of patterns"])
    if len(found) > MAX_REGISTRY_PATTERNS:
        too_many = f"{where}: {len(found)} patterns, more than {MAX_REGISTRY_PATTERNS}"
        return PatternLayer(source=url, patterns=[], notes=[too_many])
    problems = pattern_problems(name, found, source=url)
    bad = {int(m.group(1)) for p in problems if (m := _AT.match(p.location))}
    if any(not _AT.match(p.location) for p in problems):
        bad = set(range(len(found)))  # a problem of the list as a whole
    notes = [f"{where}{p.location[1:]}: {p.message}" for p in problems]
    kept = []
    for index, pattern in enumerate(found):
        if index in bad:
            continue
        if pattern.get("executable") is True and registry.trust != "high":
            notes.append(
                f"{where}[{index}] ({pattern['name']}): advisory here, since only a "
                f"registry trusted high may serve executable patterns (trust {registry.trust})"
            )
            pattern = {**pattern, "executable": False}
        kept.append(pattern)
    return PatternLayer(source=url, patterns=kept, notes=notes)


class _Refused(AtipError):
    """This registry cannot be asked as configured (a missing token, say)."""


_DEFAULT = layout.RegistryManifest(registry=layout.RegistryInfo(name=""))


def _accept(raw: bytes, source: str, key: str) -> tuple[Tool, dict[str, Any]]:
    """A valid shim for the binary `key`, or `Rejected` saying why not. Which binary it
    describes is checked first: that answer matters more than any schema detail."""
    try:
        data = _jsontext.decode(raw, source)
    except DocumentError as exc:
        raise Rejected(f"not a valid shim: {exc.problems[0].format()}") from None
    binary = data.get("binary") if isinstance(data, dict) else None
    if not isinstance(binary, dict):
        raise Rejected("not a shim: it has no binary block")
    if binary.get("hash") != key:
        raise OtherBinary(
            f"binary.hash is {str(binary.get('hash'))[:80]}, not the lookup key {key}"
        )
    try:
        report = validate_decoded(data, source=source, raw=raw)
    except (RecursionError, ValueError) as exc:  # jsonschema-rs: "Recursion limit reached"
        raise Rejected(f"not a valid shim: it cannot be validated ({str(exc)[:80]})") from None
    if not report.ok or report.tool is None:
        first = report.errors[0] if report.errors else None
        raise Rejected(f"not a valid shim: {first.format() if first else 'invalid'}")
    return report.tool, data


def _manifest(data: Any) -> layout.RegistryManifest | None:
    if data is None:
        return None
    try:
        manifest = msgspec.convert(data, layout.RegistryManifest)
    except msgspec.ValidationError as exc:
        raise Rejected(f"{layout.MANIFEST}: {exc}") from None
    for name, endpoint in (
        ("shims", manifest.endpoints.shims),
        ("signatures", manifest.endpoints.signatures),
    ):
        if (
            "{hash}" not in endpoint
            or not endpoint.startswith("/")
            or "://" in endpoint
            or ".." in endpoint.split("/")
        ):
            raise Rejected(
                f"{layout.MANIFEST}: endpoints.{name} must be a path under the registry "
                f"with {{hash}}, got {endpoint[:100]!r}"
            )
    return manifest


UNREACHABLE_FOR = 60.0
"""Seconds a registry that could not be reached (no connection, or no answer within its
timeout) is not asked again, by this process or any other sharing the cache: an
unreachable registry costs one timeout a minute, not one per command."""


def _still_unreachable(marker: Path, url: str) -> str | None:
    """Why the registry at `url` was found unreachable less than `UNREACHABLE_FOR`
    seconds ago, by the marker a failed request left; None when it was not (or the
    marker is damaged: a damaged marker costs one request)."""
    try:
        found = _jsontext.decode(_jsontext.read_bytes(marker, max_bytes=4096))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("url") != url:
        return None
    at = _parse_time(found.get("at"))
    if at is None or not 0 <= (utcnow() - at).total_seconds() < UNREACHABLE_FOR:
        return None
    return str(found.get("reason", "unreachable"))[:500]


_STAMPS: dict[Path, tuple[paths.FileState, dict[str, Any]]] = {}
_STAMPS_LOCK = threading.Lock()


def _read_stamps(path: Path) -> dict[str, Any]:
    """A registry document's cache file, decoded once while the file is unchanged: every
    tool resolved reads a registry's manifest and patterns index (up to 1 MiB each) from
    here, and decoding them again for each would cost more than the rest of resolving.
    Empty when the file is missing or damaged (too large, too deep, not JSON). The dict
    is shared: callers never change it."""
    state = paths.file_state(path)
    with _STAMPS_LOCK:
        kept = _STAMPS.get(path)
    if kept is not None and state is not None and kept[0] == state:
        return kept[1]
    try:
        found = _jsontext.decode(_jsontext.read_bytes(path, max_bytes=2 * MANIFEST_MAX_BYTES))
    except (OSError, ValueError):  # DocumentError is one: damaged, too large, too deep
        return {}
    stamps = found if isinstance(found, dict) else {}
    with _STAMPS_LOCK:
        if len(_STAMPS) >= 32:
            _STAMPS.clear()
        _STAMPS[path] = (state, stamps)
    return stamps


def _credentials(registry: RemoteRegistry) -> dict[str, str] | None:
    if registry.auth is None:
        return None
    token = os.environ.get(registry.auth.token_env_var, "").strip()
    if not token:
        raise _Refused(
            f"{registry.auth.token_env_var} is not set (bearer token for {registry.url})"
        )
    if registry.url.startswith("http://") and not is_loopback(registry.url):
        raise _Refused(f"refusing to send a bearer token over plain http to {registry.url}")
    return {"Authorization": f"Bearer {token}"}


def _failed(label: str, url: str, exc: Exception, reason: str) -> Attempt:
    refusal = exc.refusal if isinstance(exc, Rejected) else None
    return Attempt(label, url, _outcome(exc), reason, refusal)


def _outcome(exc: Exception) -> Outcome:
    """A registry that is down is unreachable; one that will not answer us is denied (it
    is up: the credentials are what to fix); one that answers wrongly is rejected."""
    if isinstance(exc, _Refused):
        return "skipped"
    if isinstance(exc, StatusError) and exc.status in DENIED_STATUSES:
        return "denied"
    if isinstance(exc, (NetworkError, StatusError)):
        return "unreachable"
    return "rejected"


def _principals(allowed_signers: str) -> list[str]:
    """The principals an SSH allowed-signers file names (first field, comma-separated)."""
    try:
        lines = Path(allowed_signers).read_text().splitlines()
    except OSError:
        return []
    names: list[str] = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            names += [p for p in line.split()[0].split(",") if p and "*" not in p]
    return names


def _key_label(key: str) -> str:
    return os.path.basename(key) if os.path.exists(key) else key[:16] + "…"


def _url_key(url: str) -> str:
    return hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:24]


def _parse_time(value: object) -> dt.datetime | None:
    """A cache stamp's time, or None when it is not an ISO time with its zone (a
    damaged cache, which costs one fetch)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def lookup_shim(hash_: str, *, refresh: bool = False) -> Lookup:
    """Look a binary's hash up in the registries configured for this process."""
    with RemoteRegistries.from_environment(refresh=refresh) as remote:
        return remote.lookup(hash_)
