"""PATH scanning (RFC 0.6 §5.2, SPEC-NOTES 15).

Only safe directories are scanned: absolute, not world-writable, owned by us or root; any
other is skipped and reported with its reason (also when named explicitly, unless
`allow_unsafe_dirs`). Executables are deduplicated by real path (the first on PATH wins a
name) and probed in parallel through the sandboxed probe. Commands whose purpose is to
change the state of the system (power, session, services, privileges) are never run.

A rescan is cheap: a fingerprint cache (real path, size, mtime, inode) in the cache
directory remembers every executable's verdict, so only new or changed binaries are probed
and hashed again, each once; entries expire after 7 days.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import stat as statmod
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import msgspec

from atipkit import paths
from atipkit._atomic import write_atomic
from atipkit.probe import DEFAULT_TIMEOUT, probe
from atipkit.registry.local import MAX_AGE, Entry, LocalRegistry, timestamp, utcnow
from atipkit.resolve import find_shim
from atipkit.trust.digest import sha256_file

#: Never run, not even with `--agent`: a tool that does not know the flag may ignore it
#: and do its job — reboot, log out, stop a service, change a password.
DEFAULT_SKIP: frozenset[str] = frozenset(
    {
        # power and session
        "shutdown",
        "reboot",
        "halt",
        "poweroff",
        "init",
        "telinit",
        "runlevel",
        "systemctl",
        "loginctl",
        "logout",
        "systemd",
        "suspend",
        "hibernate",
        "pm-suspend",
        "pm-hibernate",
        "rtcwake",
        "kexec",
        # services, devices, processes
        "service",
        "invoke-rc.d",
        "update-rc.d",
        "chkconfig",
        "start-stop-daemon",
        "udevadm",
        "modprobe",
        "insmod",
        "rmmod",
        "swapoff",
        "swapon",
        "mount",
        "umount",
        "eject",
        "kill",
        "killall",
        "killall5",
        "pkill",
        "xkill",
        # privileges and accounts
        "sudo",
        "su",
        "doas",
        "pkexec",
        "passwd",
        "chpasswd",
        "login",
        "newgrp",
        "sg",
        "useradd",
        "userdel",
        "usermod",
        "groupadd",
        "groupdel",
        "vipw",
        "vigr",
        # disks and file systems
        "mkfs",
        "fdisk",
        "sfdisk",
        "parted",
        "wipefs",
        "dd",
        "shred",
        "badblocks",
    }
)

Verdict = Literal["native", "shim", "none"]


class SkippedDir(msgspec.Struct, frozen=True):
    path: str
    reason: str


class Found(msgspec.Struct, frozen=True):
    name: str
    path: str
    source: Literal["native", "shim"]
    version: str
    cached: bool


class ScanReport(msgspec.Struct, kw_only=True):
    found: list[Found]
    skipped_dirs: list[SkippedDir]
    executables: int
    probed: int
    reused: int
    seconds: float


class _Seen(msgspec.Struct, kw_only=True, rename="camel"):
    """The scan cache's memory of one executable."""

    size: int
    mtime_ns: int
    inode: int
    checked: str
    verdict: Verdict
    hash: str | None = None
    name: str | None = None
    version: str | None = None


class _Cache(msgspec.Struct, kw_only=True):
    version: int = 1
    executables: dict[str, _Seen] = {}


def safe_dirs(
    dirs: Iterable[str], *, allow_unsafe: bool = False
) -> tuple[list[str], list[SkippedDir]]:
    """The directories that may be scanned, and why the others may not."""
    keep: list[str] = []
    skipped: list[SkippedDir] = []
    uid = os.getuid()
    for entry in dirs:
        if entry in keep:
            continue
        reason = _unsafe(entry, uid) if not allow_unsafe else None
        if reason is None and not os.path.isdir(entry):
            reason = "not a directory"
        if reason:
            skipped.append(SkippedDir(entry or "(empty)", reason))
        else:
            keep.append(entry)
    return keep, skipped


def _unsafe(entry: str, uid: int) -> str | None:
    if not entry or not os.path.isabs(entry):
        return "relative PATH entry"
    try:
        st = os.stat(entry)
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    if st.st_mode & statmod.S_IWOTH:
        return "world-writable"
    if st.st_uid not in (uid, 0):
        return f"owned by another user (uid {st.st_uid})"
    return None


def configured_skip() -> frozenset[str]:
    """The built-in skip list plus `config.json`'s `{"scan": {"skip": [...]}}`."""
    scan_config = paths.user_config().get("scan")
    extra = scan_config.get("skip") if isinstance(scan_config, dict) else None
    names = [n for n in extra if isinstance(n, str)] if isinstance(extra, list) else []
    return DEFAULT_SKIP | frozenset(names)


def scan(
    dirs: Sequence[str] | None = None,
    *,
    only: Iterable[str] | None = None,
    skip: Iterable[str] | None = None,
    registry: LocalRegistry | None = None,
    jobs: int = 8,
    timeout: float = DEFAULT_TIMEOUT,
    allow_unsafe_dirs: bool = False,
    refresh: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ScanReport:
    """Find the ATIP tools in `dirs` (default: PATH) and record them in the registry.

    `skip` defaults to `configured_skip()`: names that are never run."""
    start = time.monotonic()
    registry = registry or LocalRegistry()
    refresh = refresh or paths.refresh_requested()
    if dirs is None:
        dirs = os.environ.get("PATH", "").split(os.pathsep)
    scanned, skipped = safe_dirs(dirs, allow_unsafe=allow_unsafe_dirs)
    wanted = set(only) if only else None
    skipped_names = configured_skip() if skip is None else frozenset(skip)
    candidates = _executables(scanned, wanted, skipped_names)
    cache_path = paths.cache_dir() / "scan.json"
    cache = _read_cache(cache_path)
    now = utcnow()
    verdicts: dict[str, _Seen] = {}
    todo: list[tuple[str, str, os.stat_result]] = []
    for name, real, st in candidates:
        seen = cache.executables.get(real)
        if seen and not refresh and _same(seen, st, now) and (seen.name in (None, name)):
            verdicts[real] = seen
        else:
            todo.append((name, real, st))
    done = 0

    def work(item: tuple[str, str, os.stat_result]) -> tuple[str, _Seen]:
        nonlocal done
        name, real, st = item
        seen = _examine(name, real, st, registry, timeout)
        done += 1
        if progress:
            progress(done, len(todo))
        return real, seen

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for real, seen in pool.map(work, todo):
            verdicts[real] = seen

    found = []
    reused = len(candidates) - len(todo)
    probed_now = {real for _, real, _ in todo}
    for name, real, _ in candidates:
        seen = verdicts[real]
        if seen.verdict != "none":
            found.append(
                Found(name, real, seen.verdict, seen.version or "", real not in probed_now)
            )
    _update(registry, candidates, verdicts)
    _write_cache(cache_path, verdicts)
    return ScanReport(
        found=found,
        skipped_dirs=skipped,
        executables=len(candidates),
        probed=len(todo),
        reused=reused,
        seconds=time.monotonic() - start,
    )


def _executables(
    dirs: list[str], wanted: set[str] | None, skip: frozenset[str]
) -> list[tuple[str, str, os.stat_result]]:
    """(name, real path, stat) of each executable, first on PATH wins, one per real path."""
    out = []
    names: set[str] = set()
    reals: set[str] = set()
    for directory in dirs:
        try:
            # a tool's own file before the links to it, so it is known by its own name
            entries = sorted(os.scandir(directory), key=lambda e: (e.is_symlink(), e.name))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name in names or name in skip or (wanted is not None and name not in wanted):
                continue
            try:
                real = os.path.realpath(entry.path)
                st = os.stat(real)
            except OSError:
                continue
            if not statmod.S_ISREG(st.st_mode) or not os.access(real, os.X_OK):
                continue
            if Path(real).name in skip:  # a link to a skipped command is skipped too
                continue
            names.add(name)
            if real in reals:
                continue
            reals.add(real)
            out.append((name, real, st))
    return out


def _same(seen: _Seen, st: os.stat_result, now: dt.datetime) -> bool:
    checked = dt.datetime.fromisoformat(seen.checked.replace("Z", "+00:00"))
    return (
        seen.size == st.st_size
        and seen.mtime_ns == st.st_mtime_ns
        and seen.inode == st.st_ino
        and now - checked < MAX_AGE
    )


def _examine(
    name: str, real: str, st: os.stat_result, registry: LocalRegistry, timeout: float
) -> _Seen:
    """Probe one changed executable, hash it once, look for a shim if it is not native."""
    result = probe(real, timeout=timeout)
    try:
        hash_ = sha256_file(real)
    except OSError:
        hash_ = None
    verdict: Verdict = "none"
    version = None
    if result.tool is not None and hash_:
        registry.store_metadata(hash_, result.tool)
        verdict, version = "native", result.tool.version
    elif hash_ and (shim := find_shim(registry, hash_, name)) is not None:
        verdict, version = "shim", shim.version
    return _Seen(
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        inode=st.st_ino,
        checked=timestamp(),
        verdict=verdict,
        hash=hash_,
        name=name,
        version=version,
    )


def _update(
    registry: LocalRegistry,
    candidates: list[tuple[str, str, os.stat_result]],
    verdicts: dict[str, _Seen],
) -> None:
    changes = {}
    for name, real, st in candidates:
        seen = verdicts[real]
        if seen.verdict == "none":
            continue
        changes[name] = Entry(
            path=real,
            hash=seen.hash,
            source=seen.verdict,
            version=seen.version,
            last_checked=seen.checked,
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            inode=st.st_ino,
        )
    current = registry.read().tools
    if all(current.get(name) == entry for name, entry in changes.items()):
        return  # nothing new: no write, no new version of the registry
    with registry.transaction() as index:
        index.tools.update(changes)


def _read_cache(path: Path) -> _Cache:
    try:
        return msgspec.json.decode(path.read_bytes(), type=_Cache)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return _Cache()  # a missing or damaged cache only costs a full scan


def _write_cache(path: Path, verdicts: dict[str, _Seen]) -> None:
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        cache = _read_cache(path)
        cache.executables.update(verdicts)
        with contextlib.suppress(OSError):
            write_atomic(path, msgspec.json.encode(cache))


def discover(**kwargs: Any) -> ScanReport:
    """Scan PATH for ATIP tools and record them in the local registry (see `scan`)."""
    return scan(**kwargs)
