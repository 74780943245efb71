"""Which remote registries to ask, and how (RFC 0.6 §4.6).

`registries.json` in the config directory lists them; `ATIP_REGISTRIES` (comma-separated
URLs) replaces that list for one process — a URL that the file also lists keeps the
file's settings (auth, signers). `ATIP_OFFLINE` forbids the network; `ATIP_CACHE_DIR`
moves the cache (`paths.cache_dir`). Registries are asked in ascending `priority`
(the RFC's §4.7 sorts that way: an organization's registry at 50 comes before the
community's at 100), ties in the order written.

Signatures are checked against what *this* file pins (`signers`, `minisignKeys`,
`sshAllowedSigners`); a registry's own manifest may name Sigstore signers too, but those
are used only when the file names none, since a compromised host could rewrite them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from atipkit import _jsontext, paths
from atipkit._duration import parse_duration
from atipkit.errors import AtipError
from atipkit.policy.rules import TrustRank
from atipkit.registry.layout import Signer

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_TTL = "24h"
DEFAULT_CACHE_EXPIRY = "7d"


class RegistryConfigError(AtipError):
    """registries.json (or ATIP_REGISTRIES) cannot be used as written."""


class Auth(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    type: Literal["bearer"]
    token_env_var: str


class Defaults(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    ttl: str = DEFAULT_TTL
    """How long a cached shim is served without asking the registry again (§4.7)."""
    cache_expiry: str = DEFAULT_CACHE_EXPIRY
    """How long a cached shim may still be served when no registry can be reached."""
    require_signatures: bool = False


class RemoteRegistry(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    """One entry of registries.json."""

    url: str
    name: str = ""
    enabled: bool = True
    priority: int = 100
    require_signatures: bool | None = None
    """None: the file's `defaults`. The registry's manifest can require them too."""
    auth: Auth | None = None
    trust: TrustRank = "low"
    """How far the shims of this registry are trusted (a policy's `minimumTrust` compares
    it): `low`, a community registry's, unless the user says more. Over plain HTTP to
    another host, unsigned shims are trusted `low` at most whatever this says; a shim
    may lower its own trust (`trust.source`), never raise it."""
    signers: list[Signer] = []
    """Sigstore identities (certificate SAN and OIDC issuer) whose bundles are accepted."""
    minisign_keys: list[str] = []
    """Minisign public keys (base64, or files) whose `.minisig` signatures are accepted."""
    ssh_allowed_signers: str | None = None
    """An SSH allowed-signers file; `allowed_signers` names the principals accepted."""
    allowed_signers: list[str] = []
    trusted_root: str | None = None
    """A Sigstore trusted root file (default: the one the sigstore package ships)."""
    allow_redirects_to: list[str] = []
    """Origins (`https://cdn.example.com`) a redirect may lead to besides the registry's."""
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout: float = 10.0

    @property
    def label(self) -> str:
        return self.name or self.url

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
        if self.max_bytes < 1 or self.timeout <= 0:
            raise ValueError("maxBytes and timeout must be positive")


class RegistriesFile(msgspec.Struct, kw_only=True, frozen=True):
    registries: list[RemoteRegistry] = []
    defaults: Defaults = Defaults()


class RegistrySettings(msgspec.Struct, kw_only=True, frozen=True):
    """The registries to ask and how the cache behaves. `ordered` is the order of asking."""

    registries: list[RemoteRegistry]
    defaults: Defaults = Defaults()
    offline: bool = False
    source: str = ""
    """Where the list came from: the file, `ATIP_REGISTRIES`, or both."""

    @property
    def ordered(self) -> list[RemoteRegistry]:
        """Ascending priority; ties keep the order written (the sort is stable)."""
        return sorted(self.registries, key=lambda r: r.priority)

    @property
    def ttl(self) -> float:
        return parse_duration(self.defaults.ttl)

    @property
    def cache_expiry(self) -> float:
        return parse_duration(self.defaults.cache_expiry)

    def requires_signatures(self, registry: RemoteRegistry) -> bool:
        if registry.require_signatures is not None:
            return registry.require_signatures
        return self.defaults.require_signatures


Settings = RegistrySettings
"""`RegistrySettings` by its name before decision 391, kept for a release."""


def parse_registries(data: bytes, source: str = "registries.json") -> RegistriesFile:
    """registries.json's bytes → its settings; `RegistryConfigError` naming the field."""
    try:
        raw = _jsontext.decode(data, source)
        parsed = msgspec.convert(raw, RegistriesFile)
        for duration in (parsed.defaults.ttl, parsed.defaults.cache_expiry):
            parse_duration(duration)
    except msgspec.ValidationError as exc:
        raise RegistryConfigError(f"{source}: {exc}") from None
    except (AtipError, ValueError) as exc:
        raise RegistryConfigError(f"{source}: {exc}") from None
    return parsed


def load_settings(
    config_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> RegistrySettings:
    """The registries configured for this process: registries.json, then the
    environment. Raises `RegistryConfigError` for a file or variable that is wrong."""
    environ = os.environ if environ is None else environ
    path = (config_dir or paths.config_dir()) / "registries.json"
    try:
        configured = parse_registries(path.read_bytes(), str(path))
        source = str(path)
    except FileNotFoundError:
        configured, source = RegistriesFile(), ""
    except OSError as exc:
        raise RegistryConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    registries = [r for r in configured.registries if r.enabled]
    override = environ.get("ATIP_REGISTRIES", "").strip()
    if override:
        known = {r.url.rstrip("/"): r for r in configured.registries}
        registries = []
        for position, url in enumerate(u.strip() for u in override.split(",") if u.strip()):
            entry = known.get(url.rstrip("/"))
            try:
                registries.append(
                    msgspec.structs.replace(entry, priority=position)
                    if entry
                    else RemoteRegistry(url=url, priority=position)
                )
            except ValueError as exc:
                raise RegistryConfigError(f"ATIP_REGISTRIES: {exc}") from None
        source = "ATIP_REGISTRIES" + (f" with {source}" if source else "")
    return RegistrySettings(
        registries=registries,
        defaults=configured.defaults,
        offline=paths.offline_requested(environ),
        source=source,
    )
