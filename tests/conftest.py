from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import minimal


@pytest.fixture
def doc() -> dict[str, Any]:
    return minimal()
