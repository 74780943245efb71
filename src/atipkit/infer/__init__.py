"""Inferred metadata: help text and man pages when a tool does not speak ATIP. Names are
loaded on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports

if TYPE_CHECKING:
    from atipkit.infer.coverage import InferenceReport as InferenceReport
    from atipkit.infer.coverage import infer_shim as infer_shim
    from atipkit.infer.generate import generate_shim as generate_shim

__getattr__, __dir__ = lazy_exports(__name__, __file__)
