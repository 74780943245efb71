"""Deprecated: the crawler is `atipkit.crawl` (decision 379). This alias stays for one
release and warns when imported.

The crawler downloads artifacts and infers shims from them, so it sits above `infer`; it
lived in the store's package, which `infer` needs, and made the two depend on each other.
Here `atipkit.registry.crawl` and each of its modules (`atipkit.registry.crawl.platforms`,
...) are the objects of `atipkit.crawl`, not copies, so their classes and state are one.
The import of the layer above is the alias's alone (the contracts in pyproject.toml
ignore it by name) and goes with it.
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType

from atipkit import crawl
from atipkit.crawl import (  # noqa: F401 (each is given under the old name below)
    archive,
    artifacts,
    errors,
    manifest,
    pipeline,
    platforms,
    shim,
    sources,
    state,
    tree,
)

warnings.warn(
    "atipkit.registry.crawl is deprecated: import atipkit.crawl",
    DeprecationWarning,
    stacklevel=2,
)
for _module in list(vars(crawl).values()):  # its modules, all imported just above
    if isinstance(_module, ModuleType) and _module.__name__.startswith("atipkit.crawl."):
        sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module
sys.modules[__name__] = crawl
