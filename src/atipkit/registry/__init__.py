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
    from atipkit.registry.config import RegistryConfigError as RegistryConfigError
    from atipkit.registry.config import RegistrySettings as RegistrySettings
    from atipkit.registry.config import RemoteRegistry as RemoteRegistry
    from atipkit.registry.config import Settings as Settings
    from atipkit.registry.config import load_settings as load_settings
    from atipkit.registry.local import Entry as Entry
    from atipkit.registry.local import LocalRegistry as LocalRegistry
    from atipkit.registry.local import RegistryError as RegistryError
    from atipkit.registry.local import RegistryFile as RegistryFile
    from atipkit.registry.remote import Attempt as Attempt
    from atipkit.registry.remote import Lookup as Lookup
    from atipkit.registry.remote import RemoteRegistries as RemoteRegistries
    from atipkit.registry.remote import lookup_shim as lookup_shim


__getattr__, __dir__ = lazy_exports(__name__, __file__)
