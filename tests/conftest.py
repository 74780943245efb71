from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import ATIP_VARIABLES, minimal

pytest_plugins = ["tests.cputime"]


@pytest.fixture
def doc() -> dict[str, Any]:
    return minimal()


@pytest.fixture
def isolated_home(tmp_path, monkeypatch) -> None:
    """Nothing of the user's registry, configuration or cache, and no ATIP_* setting or
    token of the machine's, leaks into a test (or out of it)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("ATIP_CACHE_DIR", str(tmp_path / "cache"))
    for name in ATIP_VARIABLES:
        monkeypatch.delenv(name, raising=False)
