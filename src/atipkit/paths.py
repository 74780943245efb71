"""Where ATIP files live (RFC 0.6 §4.2, RFC 0.1 §3.3), with environment overrides.

Everything is computed from the environment at call time, so tests and subagents can
point atipkit elsewhere by setting `XDG_*` or `ATIP_*` variables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP = "agent-tools"


def _xdg(variable: str, default: str) -> Path:
    value = os.environ.get(variable)
    base = Path(value) if value and os.path.isabs(value) else Path.home() / default
    return base / APP


def data_dir() -> Path:
    """`$XDG_DATA_HOME/agent-tools`: registry.json, tools/, shims/, patterns/."""
    return _xdg("XDG_DATA_HOME", ".local/share")


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/agent-tools`: config.json, registries.json, overrides/."""
    return _xdg("XDG_CONFIG_HOME", ".config")


def cache_dir() -> Path:
    """`$ATIP_CACHE_DIR`, else `$XDG_CACHE_HOME/agent-tools`: scan cache, remote shims."""
    override = os.environ.get("ATIP_CACHE_DIR")
    return Path(override) if override else _xdg("XDG_CACHE_HOME", ".cache")


def state_dir() -> Path:
    """`$XDG_STATE_HOME/agent-tools`: the audit log a policy asks for."""
    return _xdg("XDG_STATE_HOME", ".local/state")


def system_dirs() -> list[Path]:
    """System-wide definitions, lowest precedence first."""
    return [Path("/usr/share") / APP, Path("/usr/local/share") / APP]


def pattern_dirs(data_dir: Path) -> list[Path]:
    """The directories of pattern files every tool is layered with, lowest first: the
    system's, then `data_dir`'s (the registry's data directory)."""
    return [*(d / "patterns" for d in system_dirs()), data_dir / "patterns"]


def refresh_requested() -> bool:
    """`ATIP_REFRESH=1` forces metadata to be fetched again (RFC 0.6 §4.7)."""
    return os.environ.get("ATIP_REFRESH", "") not in ("", "0", "false", "no")


def offline_requested(environ: Mapping[str, str] | None = None) -> bool:
    """`ATIP_OFFLINE=1` (in `environ`, default this process's): nothing is fetched; what
    is cached is used (RFC 0.6 §4.6)."""
    value = (os.environ if environ is None else environ).get("ATIP_OFFLINE", "")
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def user_config() -> dict[str, object]:
    """`config.json` in the config directory (an empty object when absent or unreadable:
    a broken preferences file must not stop discovery, nor one nested too deeply)."""
    from atipkit import _jsontext

    try:
        data = _jsontext.decode(_jsontext.read_bytes(config_dir() / "config.json"))
    except (OSError, ValueError):  # a DocumentError is a ValueError
        return {}
    return data if isinstance(data, dict) else {}


FileState = tuple[int, int, int, int] | None
"""A file's device, inode, size and modification time; None when it cannot be stat'ed."""


def file_state(path: str | os.PathLike[str]) -> FileState:
    """What changes when a file does (or appears, or goes): what servers that follow the
    registry, the search index and the registry cache's reader compare."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)
