"""The machine a figure was measured on, for every benchmark's report."""

from __future__ import annotations

import os
import platform


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
