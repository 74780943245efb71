"""Registries of ATIP metadata: the local store (remote clients, static builders and the
crawler follow)."""

from atipkit.registry.local import Entry, LocalRegistry, RegistryError, RegistryFile

__all__ = ["Entry", "LocalRegistry", "RegistryError", "RegistryFile"]
