"""The layout of a static remote registry (RFC 0.6 §4.4), shared by the builder that
writes it, the publisher that uploads it, the server that serves it and the client that
reads it.

```
.well-known/atip-registry.json     the manifest: name, endpoints, signature requirements
shims/sha256/<hex>.json            one shim per binary, named by the binary's sha256
shims/sha256/<hex>.json.bundle     its Sigstore bundle (also .minisig, .sig) when signed
shims/index.json                   the catalog: name -> version -> platform -> hash
coverage.json                      coverage metrics (§4.10.5)
patterns/index.json                the registry's patterns, by tool (§4.4.1), when it has any
policy.json                        an organization's policy (§4.8), when it has one
index.html                         a page to search the catalog, self-contained
```

Endpoints in the manifest are paths relative to the registry's URL, which may itself
have a path (`https://cdn.example.com/atip`), with `{hash}` standing for 64 hex digits.
"""

from __future__ import annotations

from typing import Any

import msgspec

from atipkit.trust.digest import sha256_hex

MANIFEST = ".well-known/atip-registry.json"
CATALOG = "shims/index.json"
COVERAGE = "coverage.json"
PATTERNS = "patterns/index.json"
POLICY = "policy.json"
INDEX_HTML = "index.html"
SHIMS = "shims/sha256"

SHIM_ENDPOINT = "/shims/sha256/{hash}.json"
SIGNATURE_ENDPOINT = "/shims/sha256/{hash}.json.bundle"
CATALOG_ENDPOINT = "/shims/index.json"
COVERAGE_ENDPOINT = "/coverage.json"
PATTERNS_ENDPOINT = "/patterns/index.json"
POLICY_ENDPOINT = "/policy.json"

SIGNATURE_SUFFIXES = (".bundle", ".minisig", ".sig")
"""Detached signatures kept beside a shim: Sigstore bundle, minisign, SSH."""
SIGSTORE_ALIASES = (".sigstore.json", ".sigstore")
"""Names `sigstore sign` and `cosign` give a bundle; the registry calls it `.bundle`."""

ATIP_MEDIA_TYPE = "application/vnd.atip+json"
"""The media type of ATIP metadata (RFC 0.1 Appendix B), given to shims. RegistryManifest,
catalog and bundles are other JSON documents and stay `application/json`."""
SHIM_ACCEPT = f"{ATIP_MEDIA_TYPE}, application/json;q=0.9"
"""What a client asks for a shim: the ATIP type first; plain JSON, which every static
host sends for `.json` unless told otherwise, as good as accepted."""

_CONTENT_TYPES = {
    ".json": "application/json",
    ".bundle": "application/json",
    ".minisig": "text/plain; charset=utf-8",
    ".sig": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}
SHIM_CACHE_CONTROL = "public, max-age=3600"
INDEX_CACHE_CONTROL = "public, max-age=300"
"""Shims change rarely (documentation fixes); manifest, catalog and page more often.
Clients revalidate with ETags either way (§4.7)."""


def shim_path(hash_: str) -> str:
    """`shims/sha256/<hex>.json` for a hash; `BadHash` for anything that is not one."""
    return f"{SHIMS}/{sha256_hex(hash_)}.json"


def content_type(path: str) -> str:
    if path.startswith(f"{SHIMS}/") and path.endswith(".json"):
        return ATIP_MEDIA_TYPE
    suffix = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
    return _CONTENT_TYPES.get(suffix, "application/octet-stream")


def cache_control(path: str) -> str:
    return SHIM_CACHE_CONTROL if path.startswith(f"{SHIMS}/") else INDEX_CACHE_CONTROL


class Signer(msgspec.Struct, frozen=True, forbid_unknown_fields=False):
    """A Sigstore signer: the certificate's identity (SAN) and OIDC issuer."""

    identity: str
    issuer: str


class RegistryInfo(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    name: str
    url: str = ""
    type: str = "static"
    version: str = ""


class Endpoints(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    shims: str = SHIM_ENDPOINT
    signatures: str = SIGNATURE_ENDPOINT
    catalog: str = CATALOG_ENDPOINT
    coverage: str = COVERAGE_ENDPOINT
    patterns: str | None = None
    """Only a registry that says so serves patterns or a policy: absent, nothing is asked."""
    policy: str | None = None


class ManifestTrust(msgspec.Struct, kw_only=True, frozen=True, rename="camel"):
    require_signatures: bool = False
    signers: list[Signer] = []


class RegistryManifest(msgspec.Struct, kw_only=True, frozen=True):
    """`.well-known/atip-registry.json` (§4.4.2). Unknown keys are kept out of the way,
    not refused: a newer registry may say more than this client knows."""

    atip: Any = msgspec.field(default_factory=lambda: {"version": "0.6"})
    registry: RegistryInfo
    endpoints: Endpoints = Endpoints()
    trust: ManifestTrust = ManifestTrust()

    def shim_endpoint(self, hash_: str) -> str:
        return self.endpoints.shims.replace("{hash}", sha256_hex(hash_))

    def signature_endpoint(self, hash_: str) -> str:
        return self.endpoints.signatures.replace("{hash}", sha256_hex(hash_))


def join(base_url: str, endpoint: str) -> str:
    """An endpoint under the registry's URL: `https://h/atip` + `/shims/x` ->
    `https://h/atip/shims/x` (not `https://h/shims/x`, as a URL join would give)."""
    return base_url.rstrip("/") + "/" + endpoint.lstrip("/")
