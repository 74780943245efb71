"""The machine a figure was measured on, for every benchmark's report."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import tempfile


def cpu() -> str:
    """The CPU's model name (Linux), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cores() -> int:
    return os.cpu_count() or 1


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """The instructions one process executes, counted by callgrind (deterministic for the
    same interpreter, code and environment, however loaded the machine is)."""
    with tempfile.TemporaryDirectory(prefix="atipkit-callgrind-") as tmp:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out", *argv],
            env={**env, "PYTHONHASHSEED": "0"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind of {' '.join(argv)} failed: {done.stderr[-500:]!r}")
    return int(found.group(1))
