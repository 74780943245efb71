"""Registries of ATIP metadata: the local store, remote registries (their configuration,
the client that looks shims up by hash, and the static layout they share), the builder and
publisher of static registries, and the crawler that fills them."""

from atipkit.registry.config import (
    RegistryConfigError,
    RemoteRegistry,
    Settings,
    load_settings,
)
from atipkit.registry.local import Entry, LocalRegistry, RegistryError, RegistryFile
from atipkit.registry.remote import Attempt, Lookup, RemoteRegistries, lookup_shim

__all__ = [
    "Attempt",
    "Entry",
    "LocalRegistry",
    "Lookup",
    "RegistryConfigError",
    "RegistryError",
    "RegistryFile",
    "RemoteRegistries",
    "RemoteRegistry",
    "Settings",
    "load_settings",
    "lookup_shim",
]
