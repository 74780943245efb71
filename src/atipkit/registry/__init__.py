"""Registries of ATIP metadata: the local store, remote registries (their configuration,
the client that looks shims up by hash, and the static layout they share), shim lookup
(`shims`), and the builder and publisher of static registries. The crawler that fills
them downloads and infers, so it is a layer above: `atipkit.crawl`.

Names are loaded on first use, as atipkit's are: `atip search` reads the local store and
need not import the remote client and the schema (decision 311)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports

if TYPE_CHECKING:
    from atipkit.registry.config import (
        RegistryConfigError,
        RegistrySettings,
        RemoteRegistry,
        Settings,
        load_settings,
    )
    from atipkit.registry.local import Entry, LocalRegistry, RegistryError, RegistryFile
    from atipkit.registry.remote import Attempt, Lookup, RemoteRegistries, lookup_shim

_EXPORTS = {
    "atipkit.registry.config": [
        "RegistryConfigError",
        "RemoteRegistry",
        "RegistrySettings",
        "Settings",
        "load_settings",
    ],
    "atipkit.registry.local": ["Entry", "LocalRegistry", "RegistryError", "RegistryFile"],
    "atipkit.registry.remote": ["Attempt", "Lookup", "RemoteRegistries", "lookup_shim"],
}

__all__ = [
    "Attempt",
    "Entry",
    "LocalRegistry",
    "Lookup",
    "RegistryConfigError",
    "RegistryError",
    "RegistryFile",
    "RegistrySettings",
    "RemoteRegistries",
    "RemoteRegistry",
    "Settings",
    "load_settings",
    "lookup_shim",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
