"""What tests/conftest.py promises of the suite's own processes (decision 660)."""

from __future__ import annotations

import subprocess
import sys


def test_the_processes_a_test_starts_write_bytecode():
    """These machines set PYTHONDONTWRITEBYTECODE; the suite drops it, so the thousands
    of `atip` processes it starts compile atipkit once, not each time."""
    assert not sys.dont_write_bytecode
    child = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == "False"
