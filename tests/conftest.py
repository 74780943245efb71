from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import ATIP_VARIABLES, minimal

pytest_plugins = ["tests.cputime"]

# The suite writes bytecode whatever the environment says (decision 660). These machines
# and CI set PYTHONDONTWRITEBYTECODE, so every `atip`, server and app process the tests
# start (thousands) compiled atipkit's sources again, and each xdist worker rewrote every
# test module's asserts again: about 9 % of the suite's CPU. Dropped here, in the first
# process, before the workers and any test's process start; the files are gitignored.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Hypothesis' own wall clock (a deadline of 200 ms an example, the health check of slow
# input drawing) measures the machine, not the code: under the suite's workers and others'
# load it failed tests that held (decision 710). What a test bounds in time, it asserts.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject.toml's addopts): a worker more than the cores this process may
    run on. The workers wait on servers, subprocesses and timeouts for about a sixth of
    their time; the extra one fills it (decision 711)."""
    return len(os.sched_getaffinity(0)) + 1


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
