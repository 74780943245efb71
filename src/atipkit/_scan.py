"""PATH scanning (RFC 0.6 §5.2, SPEC-NOTES 15).

Only safe directories are scanned: absolute, not world-writable, owned by us or root; any
other is skipped and reported with its reason (also when named explicitly, unless
`allow_unsafe_dirs`). Executables are deduplicated by real path (the first on PATH wins a
name) and probed in parallel through the sandboxed probe. Commands whose purpose is to
change the state of the system (power, session, services, privileges) are never run.

A rescan is cheap: a fingerprint cache (real path, size, mtime, inode) in the cache
directory remembers every executable's verdict, so only new or changed binaries are probed
and hashed again, each once; entries expire after 7 days.

With `infer=True`, every executable that is neither native nor has a shim then gets an
inferred one — denied commands from their man page only, never run — within a time
budget, resumably (`atipkit.infer.coverage`).

With `infer=True`, an inferred binary is recorded under each of its names on PATH (links
and copies of it), all described by its one shim (decision 276).

A tool is recorded under a name that finds it on PATH (`atipkit.naming`): its file name,
or, when its metadata calls it by another name that finds this same file on the scanned
PATH (`vim` for the `vim.basic` that `vi` and `vim` link to), that one. Metadata that
names any other tool is recorded under the file name, rewritten to it, and reported in
`ScanReport.renamed`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import stat as statmod
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import msgspec

from atipkit import paths
from atipkit._atomic import write_atomic
from atipkit._clock import timestamp, utcnow
from atipkit.deny import DEFAULT_SKIP, DenyList, configured
from atipkit.infer.coverage import (
    CoverageOutcome,
    CoverageTarget,
    InferenceReport,
    Step,
    cover,
    file_hash,
    has_shim,
)
from atipkit.model import is_tool_name
from atipkit.naming import Renamed, renamed
from atipkit.probe import DEFAULT_TIMEOUT, probe
from atipkit.registry.local import MAX_AGE, Entry, LocalRegistry
from atipkit.registry.shims import find_shim, is_inferred

__all__ = ["DEFAULT_SKIP", "ProbeFailed", "ScanReport", "Step", "discover", "safe_dirs", "scan"]

DEFAULT_INFER_BUDGET = 300.0
"""Seconds for `scan(infer=True)`, probe pass included. A first run over a whole PATH
takes a minute or two (`bench/scan_infer.py` measures it); a later one infers only what
is new or changed."""
MIN_PROBE = 0.2
"""With a budget, no probe starts with less than this left (a probe takes 20-100 ms)."""
BUDGET_MARGIN = 2.0
"""How far past its budget `scan(infer=True)` may return: what runs when the deadline
comes is stopped by its own bound (a probe's timeout, a tool's budget, both within the
deadline), then killing it, the last man page (rendered with at least a second), and
writing the registry and the cache take the rest (decision 348)."""

Verdict = Literal["native", "shim", "inferred", "failed", "skipped", "none"]
"""What the cache remembers of a binary: native metadata, a shim someone wrote, an
inferred shim; an inference that failed, a denied command with no page (`skipped`), or
nothing (yet)."""
Item = tuple[str, str, os.stat_result]
"""An executable: its name on PATH, its real path, its `stat`."""
UNSETTLED = ("sandbox", "error")
"""Failures that say nothing lasting about the tool (the sandbox could not start; an
exception while examining it): not cached, so the next scan probes it again."""


class SkippedDir(msgspec.Struct, frozen=True):
    path: str
    reason: str


class Found(msgspec.Struct, frozen=True):
    name: str
    path: str
    source: Literal["native", "shim"]
    version: str
    cached: bool


class ProbeFailed(msgspec.Struct, frozen=True):
    """A probe of this run that did not yield ATIP metadata, and why: the probe's failure
    kind (`atipkit.probe.FailureKind`: `exit-code` for a tool that does not speak ATIP,
    `timeout`, `invalid`, ...) or `error` when examining the tool raised."""

    name: str
    path: str
    kind: str
    message: str


class ScanReport(msgspec.Struct, kw_only=True):
    found: list[Found]
    skipped_dirs: list[SkippedDir]
    executables: int
    probed: int
    reused: int
    seconds: float
    inferred: int = 0
    """Tools the registry now describes with inferred metadata (this run's and earlier)."""
    inference: InferenceReport | None = None
    """What `infer=True` did; None without it."""
    renamed: list[Renamed] = []
    """Tools whose metadata calls them by a name that does not find them on PATH: each
    is recorded under its file name. `alias` is true where the other name is still this
    binary's (a copy of it on PATH, a shim's name for it); false where it is another
    tool's, or nobody's: a claim, warned about."""
    failures: list[ProbeFailed] = []
    """Every probe of this run that failed, and why (a rescan reuses verdicts without
    probing, so lists only what changed)."""
    isolation: str | None = None
    """What the programs run by this scan were isolated by: `bwrap`, `unshare`, or `none`
    (no namespaces: see `atipkit.sandbox`); None when nothing was run."""
    left: list[str] = []
    """Executables the probe pass did not reach within `infer=True`'s budget: neither
    probed, nor recorded, nor cached; the next run probes them first. (What the
    inference pass did not reach is `inference.left`.)"""
    complete: bool = True
    """Whether this run did everything it set out to: nothing left by the probe pass nor
    by the inference pass."""


_CACHE_VERSION = 2
"""2: `claimed` is remembered (a cache without it would hide a claim for a week)."""


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
    error: str | None = None  # why inference failed
    claimed: str | None = None  # the name its metadata gives, when it is not `name`


class _Cache(msgspec.Struct, kw_only=True):
    version: int = _CACHE_VERSION
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


def scan(
    dirs: Sequence[str] | None = None,
    *,
    only: Iterable[str] | None = None,
    skip: Iterable[str] | DenyList | None = None,
    registry: LocalRegistry | None = None,
    jobs: int = 8,
    timeout: float = DEFAULT_TIMEOUT,
    allow_unsafe_dirs: bool = False,
    refresh: bool = False,
    progress: Callable[[int, int], None] | None = None,
    infer: bool = False,
    infer_budget: float = DEFAULT_INFER_BUDGET,
    infer_progress: Callable[[int, int], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> ScanReport:
    """Find the ATIP tools in `dirs` (default: PATH) and record them in the registry.

    `skip` defaults to `atipkit.deny.configured()`: names (and patterns such as `mkfs.*`) that
    are never run. `jobs` probes (and inferences) run at once. `progress` and
    `infer_progress` hear how many of each pass are done; `on_step`, each tool as it
    starts and ends (`Step`: what a progress display shows).

    With `infer`, every executable nothing else describes then gets an inferred shim
    (`atipkit.infer.coverage`): from its man page when that is enough, else from its help
    in the sandbox; denied commands from their page only. `infer_budget` bounds the whole
    run, both passes: a probe is given at most the time left (one the deadline cut short
    is left, not taken for a tool that hangs), inference starts only while its own budget
    fits, so the scan returns within `BUDGET_MARGIN` seconds of the budget. What was done
    is recorded and cached; what was not reached is reported (`left`, `inference.left`)
    and done by the next run, which neither probes nor infers again what this one
    finished. Raises `ValueError` for
    `jobs` below 1 or a budget that is not a positive number."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if infer and not infer_budget > 0:  # also refuses NaN
        raise ValueError(f"infer_budget must be a positive number of seconds, not {infer_budget}")
    start = time.monotonic()
    registry = registry or LocalRegistry()
    refresh = refresh or paths.refresh_requested()
    if dirs is None:
        dirs = os.environ.get("PATH", "").split(os.pathsep)
    scanned, skipped = safe_dirs(dirs, allow_unsafe=allow_unsafe_dirs)
    wanted = set(only) if only else None
    deny = skip if isinstance(skip, DenyList) else configured() if skip is None else DenyList(skip)
    candidates, denied, others = _executables(scanned, wanted, deny)
    cache_path = paths.cache_dir() / "scan.json"
    cache = _read_cache(cache_path)
    now = utcnow()
    verdicts: dict[str, _Seen] = {}
    todo: list[Item] = []
    for name, real, st in candidates:
        seen = _cached(cache, name, real, st, now, refresh)
        if seen is not None and seen.verdict != "skipped":  # skipped: denied then, not now
            verdicts[real] = seen
        else:
            todo.append((name, real, st))
    done = 0
    failures: list[ProbeFailed] = []
    deadline = start + infer_budget if infer else None
    left: list[str] = []

    def work(item: Item) -> tuple[str, _Seen | None, ProbeFailed | None]:
        nonlocal done
        name, real, st = item
        allowed = timeout if deadline is None else min(timeout, deadline - time.monotonic())
        seen: _Seen | None = None
        failed: ProbeFailed | None = None
        if allowed >= min(timeout, MIN_PROBE):  # a shorter --probe-timeout is the user's
            if on_step:
                on_step(Step("probe", name, done, len(todo), finished=False))
            try:
                seen, failed = _examine(name, real, st, registry, allowed)
            except Exception as exc:  # one tool's failure never stops the scan
                seen = _fingerprint(name, st)
                failed = ProbeFailed(name, real, "error", f"{type(exc).__name__}: {exc}")
            if failed is not None and failed.kind == "timeout" and allowed < timeout:
                seen, failed = None, None  # cut short by the deadline: says nothing of it
        with lock:
            done += 1
            count = done
        if progress:
            progress(count, len(todo))
        if on_step:
            on_step(Step("probe", name, count, len(todo), finished=True, left=seen is None))
        return real, seen, failed

    lock = threading.Lock()
    unsettled: set[str] = set()  # not cached: the next scan looks again
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for (name, _, _), (real, seen, failed) in zip(todo, pool.map(work, todo), strict=True):
            if seen is None:
                left.append(name)
                continue
            verdicts[real] = seen
            if failed is not None:
                failures.append(failed)
                if failed.kind in UNSETTLED:
                    unsettled.add(real)
    if left:  # not probed: known to this run only by name, neither recorded nor cached
        candidates = [item for item in candidates if item[1] in verdicts]
    for real, seen in verdicts.items():  # a shim removed since: inferred again, or nothing
        if seen.verdict == "inferred" and not (seen.hash and has_shim(registry, seen.hash)):
            verdicts[real] = msgspec.structs.replace(seen, verdict="none")

    inference = None
    recorded = candidates
    if infer:
        for name, real, st in denied:
            seen = _cached(cache, name, real, st, now, refresh)
            verdicts[real] = seen or _fingerprint(name, st)
        recorded = candidates + denied
        slow = {f.path for f in failures if f.kind == "timeout"}
        inference = _infer(
            candidates,
            denied,
            others,
            slow,
            verdicts,
            registry,
            start + infer_budget,
            jobs,
            refresh,
            infer_progress,
            on_step,
        )
        inference.budget = infer_budget

    keys, renames = _names(recorded, verdicts, scanned, wanted, deny)
    found = []
    reused = len(candidates) + len(left) - len(todo)
    probed_now = {real for _, real, _ in todo}
    for _, real, _ in candidates:
        seen = verdicts[real]
        if seen.verdict in ("native", "shim"):
            found.append(
                Found(keys[real], real, seen.verdict, seen.version or "", real not in probed_now)
            )
    inferred = _update(registry, recorded, verdicts, keys, others if infer else {})
    _write_cache(cache_path, {r: v for r, v in verdicts.items() if r not in unsettled})
    return ScanReport(
        found=found,
        skipped_dirs=skipped,
        executables=len(candidates) + len(left),
        probed=len(todo) - len(left),
        reused=reused,
        seconds=time.monotonic() - start,
        inferred=inferred,
        inference=inference,
        renamed=renames,
        failures=failures,
        isolation=_isolation() if todo or infer else None,
        left=left,
        complete=not left and (inference is None or inference.complete),
    )


def _names(
    items: list[Item],
    verdicts: dict[str, _Seen],
    dirs: list[str],
    wanted: set[str] | None,
    deny: DenyList,
) -> tuple[dict[str, str], list[Renamed]]:
    """The name each executable is recorded under (by real path), and what to report of
    metadata that calls a tool otherwise. A name the metadata gives is taken where it
    finds this same file on the scanned PATH (and is neither denied nor left out by
    `only`, nor another tool's); any other is reported, the tool keeping its file name."""
    search_path = os.pathsep.join(dirs)
    keys = {real: name for name, real, _ in items}
    taken = set(keys.values())
    renames = []
    for name, real, _ in items:
        seen = verdicts[real]
        claimed = seen.claimed
        if not claimed or claimed == name or seen.verdict not in ("native", "shim", "inferred"):
            continue
        found = shutil.which(claimed, path=search_path)
        if (
            found is not None
            and os.path.realpath(found) == real
            and claimed not in taken
            and claimed not in deny
            and (wanted is None or claimed in wanted)
        ):
            keys[real] = claimed
            taken.add(claimed)
            continue
        by_hash = seen.verdict != "native"
        report = renamed(claimed, name, real, seen.hash, by_hash=by_hash, search_path=search_path)
        if report is not None:
            renames.append(report)
    return keys, renames


def _isolation() -> str | None:
    """What isolated the programs run (`atipkit.sandbox`, imported only then)."""
    from atipkit import sandbox

    return sandbox.used()


def _cached(
    cache: _Cache, name: str, real: str, st: os.stat_result, now: dt.datetime, refresh: bool
) -> _Seen | None:
    """What the cache remembers of this executable, if it is unchanged and fresh."""
    seen = cache.executables.get(real)
    if seen and not refresh and _same(seen, st, now) and (seen.name in (None, name)):
        return seen
    return None


def _fingerprint(name: str, st: os.stat_result) -> _Seen:
    return _Seen(
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
        inode=st.st_ino,
        checked=timestamp(),
        verdict="none",
        name=name,
    )


def _infer(
    candidates: list[Item],
    denied: list[Item],
    others: dict[str, list[Names]],
    slow: set[str],
    verdicts: dict[str, _Seen],
    registry: LocalRegistry,
    deadline: float,
    jobs: int,
    refresh: bool,
    progress: Callable[[int, int], None] | None,
    on_step: Callable[[Step], None] | None,
) -> InferenceReport:
    """The inference pass over what the probe pass left undescribed (and the denied
    commands), those whose probe ran out of time (`slow`, by real path) first among the
    tools asked; each outcome goes back into `verdicts`, to be recorded and cached."""
    targets = []
    for (name, real, _), denies in [(c, False) for c in candidates] + [(d, True) for d in denied]:
        seen = verdicts[real]
        if seen.verdict in ("native", "shim"):
            continue
        names = tuple((n.name, n.path, n.denied) for n in others.get(real, []))
        known = _known(seen)
        targets.append(CoverageTarget(name, real, seen.hash, denies, known, names, real in slow))
    outcomes, report = cover(
        targets,
        registry=registry,
        deadline=deadline,
        jobs=jobs,
        refresh=refresh,
        progress=progress,
        on_step=on_step,
    )
    for target in targets:
        outcome = outcomes[target.path]
        seen = verdicts[target.path]
        verdicts[target.path] = msgspec.structs.replace(
            seen,
            verdict=_verdict(outcome),
            hash=outcome.hash or seen.hash,
            version=outcome.version,
            error=outcome.error,
        )
    return report


def _known(seen: _Seen) -> CoverageOutcome | None:
    """What an earlier run found, as the inference pass takes it (None: look again)."""
    if seen.verdict == "inferred":
        return CoverageOutcome(
            kind="reused", hash=seen.hash, source="inferred", version=seen.version
        )
    if seen.verdict in ("failed", "skipped"):
        return CoverageOutcome(kind=seen.verdict, hash=seen.hash, error=seen.error)
    return None


def _verdict(outcome: CoverageOutcome) -> Verdict:
    if outcome.source is not None:
        return outcome.source
    if outcome.kind in ("failed", "skipped"):
        return outcome.kind
    return "none"  # left for the next run, or an alias of a binary nothing describes


class Names(msgspec.Struct, frozen=True):
    """Another name on PATH of an executable the scan knows by its first: the name, the
    path it is run by (a link: a multi-call binary looks at the name it is run by), and
    whether that name is denied."""

    name: str
    path: str
    denied: bool


def _executables(
    dirs: list[str], wanted: set[str] | None, deny: DenyList
) -> tuple[list[Item], list[Item], dict[str, list[Names]]]:
    """The executables to probe, and the denied ones — (name, real path, stat) each, the
    first on PATH winning a name, one per real path, under the real file's own name when
    that is on PATH (`systemctl`, not `halt`, which links to it) — and the other names of
    each real path. A link to a denied command is denied too, whatever its own name."""
    out: list[Item] = []
    denied: list[Item] = []
    names: set[str] = set()
    reals: set[str] = set()
    seen: dict[str, list[Names]] = {}
    for directory in dirs:
        try:
            # a tool's own file before the links to it, so it is known by its own name
            entries = sorted(os.scandir(directory), key=lambda e: (e.is_symlink(), e.name))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name in names or (wanted is not None and name not in wanted):
                continue
            if not is_tool_name(name):  # no tool can be called by it (atipkit.naming)
                continue
            try:
                real = os.path.realpath(entry.path)
                st = os.stat(real)
            except OSError:
                continue
            if not statmod.S_ISREG(st.st_mode) or not os.access(real, os.X_OK):
                continue
            names.add(name)
            is_denied = name in deny or Path(real).name in deny
            seen.setdefault(real, []).append(Names(name, entry.path, is_denied))
            if is_denied:
                denied.append((name, real, st))
                continue
            if real in reals:
                continue
            reals.add(real)
            out.append((name, real, st))
    seen_denied: set[str] = set()
    kept = []
    for item in denied:  # once each, and not when another name of it is probed
        if item[1] not in reals and item[1] not in seen_denied:
            seen_denied.add(item[1])
            kept.append(item)
    out = [_own_name(item, seen[item[1]], denied=False) for item in out]
    kept = [_own_name(item, seen[item[1]], denied=True) for item in kept]
    others = {
        real: [n for n in found if n.name != first]
        for first, real, _ in out + kept
        if len(found := seen[real]) > 1
    }
    return out, kept, others


def _own_name(item: Item, found: list[Names], *, denied: bool) -> Item:
    """`item` under its real file's own name when that is one of its names on PATH (and
    not denied, unless `item` is)."""
    name, real, st = item
    own = os.path.basename(real)
    if name != own and any(n.name == own and (denied or not n.denied) for n in found):
        return (own, real, st)
    return item


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
) -> tuple[_Seen, ProbeFailed | None]:
    """Probe one changed executable, hash it once, look for a shim if it is not native;
    and why the probe failed, if it did."""
    result = probe(real, timeout=timeout)
    failed = None
    if result.failure is not None:
        failed = ProbeFailed(name, real, result.failure.kind, result.failure.message)
    hash_ = file_hash(real)
    verdict: Verdict = "none"
    version = None
    described = None
    if result.tool is not None and hash_:
        registry.store_metadata(hash_, result.tool)
        verdict, version, described = "native", result.tool.version, result.tool
    elif hash_ and (shim := find_shim(registry, hash_, name)) is not None:
        verdict, version = ("inferred" if is_inferred(shim) else "shim"), shim.version
        described = shim
    claimed = described.name if described is not None and described.name != name else None
    seen = msgspec.structs.replace(
        _fingerprint(name, st), verdict=verdict, hash=hash_, version=version, claimed=claimed
    )
    return seen, failed


def _update(
    registry: LocalRegistry,
    items: list[Item],
    verdicts: dict[str, _Seen],
    keys: dict[str, str],
    others: dict[str, list[Names]],
) -> int:
    """Record what describes each executable under its name (`keys`, by real path); the
    number of inferred binaries. An inferred one is recorded under each of its names on
    PATH (`others`; copies of it are items of their own), all of them described by the
    binary's shim. A name recorded as inferred whose shim is gone is no longer recorded,
    nor a file name recorded before for a binary now recorded under the name its metadata
    gives it."""
    changes = {}
    gone = []
    inferred_hashes: set[str] = set()
    current = registry.read().tools
    for name, real, st in items:
        seen = verdicts[real]
        names = [name] + [n.name for n in others.get(real, [])]
        if seen.verdict not in ("native", "shim", "inferred"):
            for each in names:
                recorded = current.get(each)
                if recorded and recorded.source == "inferred" and recorded.path == real:
                    gone.append(each)  # its inferred shim was removed: nothing describes it
            continue
        if seen.verdict == "inferred":
            if not seen.hash:
                continue
            inferred_hashes.add(seen.hash)
        else:
            names = [name]  # an ATIP tool or a shim someone wrote: as its metadata says
        key = keys.get(real, name)
        recorded = current.get(name)
        if key != name and recorded and recorded.path == real:
            gone.append(name)  # now recorded under the name its metadata gives
        entry = Entry(
            path=real,
            hash=seen.hash,
            source=seen.verdict,
            version=seen.version,
            last_checked=seen.checked,
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            inode=st.st_ino,
        )
        changes[key] = entry
        for other in names[1:]:
            changes[other] = entry
    if gone or any(current.get(name) != entry for name, entry in changes.items()):
        with registry.transaction() as index:
            index.tools.update(changes)
            for name in gone:
                index.tools.pop(name, None)
    return len(inferred_hashes)


def _read_cache(path: Path) -> _Cache:
    try:
        cache = msgspec.json.decode(path.read_bytes(), type=_Cache)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return _Cache()  # a missing or damaged cache only costs a full scan
    return cache if cache.version == _CACHE_VERSION else _Cache()


def _write_cache(path: Path, verdicts: dict[str, _Seen]) -> None:
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        cache = _read_cache(path)
        cache.executables.update(verdicts)
        with contextlib.suppress(OSError):
            write_atomic(path, msgspec.json.encode(cache))


discover = scan
"""`scan` under the name the README used first: the same function, its signature whole."""
