"""Inferred metadata for every executable nothing else describes (`atip scan --infer`).

On a machine where no tool speaks ATIP, search is only as good as the registry's
coverage: every executable on PATH should be described, if only roughly. After the
probe pass of `atipkit.scan()`, each executable with neither native metadata nor a shim
gets an inferred shim, stored content-addressed at the registry's `shim_path(hash)` —
where `resolve_tool` finds it — once per binary hash.

- **Man pages first, running nothing.** A page that says what the command is (its NAME
  line) and what it takes (at least one option or subcommand, and the subcommands when
  its synopsis has a place for one) is enough (`enough`): the shim is made from it alone
  (`_generation.method: "man-page"`). Only without such a page is the tool
  asked (`generate_shim`, in the probe's sandbox: `--help`, `-h`, `--version`, never the
  word `help`, which many programs take for an operand), with what the page said merged
  in.
- **The deny list** (`atipkit.deny`): a denied command is never run, not even for
  `--help`. Its man page, which runs nothing of it, still describes it — whatever the
  page says, since there is no other way — and its shim claims `destructive: true` for
  the whole tool: the list names commands whose purpose is to change the state of the
  system, and an agent must not take one for harmless because inference knew nothing of
  its effects. A denied command with no page is left undescribed (`skipped`).
- **Resumable and bounded.** A binary whose hash already has a shim is not inferred
  again; what an earlier run could not do (`failed`, `skipped`) is remembered by the
  scan cache until the binary changes. Work stops starting when the deadline is near
  (a tool's help is asked only while its whole `TOOL_BUDGET` fits): what is left is
  reported (`left`) and done by the next run. At most `jobs` tools at once.
- **Subcommands from their own pages, within a budget that grows with the tree.** The
  pages of a tool's subcommands (`git-commit(1)`: `atipkit.infer.subpages`) are read
  before the tool is asked anything of them, and may make its page enough (git is never
  run). A tool's work is counted in runs and pages (`atipkit.infer.generate.Budget`),
  which grow with its tree and do not depend on the load; `TOOL_CEILING` seconds only
  stop a tool that hangs or spins, and the tools it stopped are `InferenceReport.cut`.
- **One shim per binary hash, every name recorded.** A binary known by several names on
  PATH (links, hard links, copies, multi-call binaries) is inferred once, under its own
  file's name; each other name its pages document otherwise gets its own document in the
  same shim (`_names`, decision 276), and `scan` records every name.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import msgspec

from atipkit._atomic import write_atomic
from atipkit.deny import configured
from atipkit.model import Tool, dumps
from atipkit.registry.local import LocalRegistry
from atipkit.registry.shims import find_shim, is_inferred, shim_paths
from atipkit.trust.digest import sha256_file

if TYPE_CHECKING:  # the readers of help and pages are imported where used: a plain
    # `atip scan` (which imports this module) reads neither
    from atipkit.infer.generate import Asked
    from atipkit.infer.manpage import ManPage, ManPages

TOOL_BUDGET = 5.0
"""Seconds of the sweep's budget that must be left for a tool to be asked for its help,
so that a shim is seldom made from help cut short by the overall deadline (one that is
cut short is left for the next run, not kept)."""
TOOL_RUNS = 32
"""The most runs of one tool in a sweep (`Budget.runs`), whatever its tree: what pages say
is read whole (git's 150 commands), but a program whose every subcommand must be asked
costs the whole sweep its time (npm's 115 runs of node: 300 s of a sweep at load 15,
longer than all the rest). Counted, not timed: the same commands are read on any
machine. `atip gen` has no such bound."""
TOOL_CEILING = 120.0
"""Wall-clock seconds after which one tool's inference stops, whatever its tree: a safety
stop against a tool that hangs or spins on every help. What a tool may do is counted in
runs and pages (`Budget`, `TOOL_RUNS`), so that what is inferred does not depend on the
load: under load a tree takes longer, not less of it is read. A tool it stopped is
stored, marked `incomplete` (`cut: time`), and reported (`InferenceReport.cut`)."""
TOOL_DEPTH = 2
"""Subcommands are read one level deep, as `atip gen` does by default."""
MIN_START = 0.5
"""A man page is not read with less than this left (rendering one takes a small part of
it)."""

OutcomeKind = Literal["man-page", "help", "reused", "alias", "skipped", "failed", "left"]
ShimSource = Literal["inferred", "shim"]


class CoverageOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What became of one executable: a shim from its page (`man-page`) or its help
    (`help`); one there already (`reused`); the binary of an earlier name (`alias`);
    denied without a page (`skipped`); `failed` with `error`; or `left` for the next run.
    `source` is that of the shim that describes the binary now (`inferred`, or `shim`
    for one someone wrote), None when none does; `cut`, what left part of an inferred
    tree unread (`Budget.cut`), if anything did."""

    kind: OutcomeKind
    hash: str | None = None
    source: ShimSource | None = None
    version: str | None = None
    error: str | None = None
    cut: str | None = None


class CoverageTarget(NamedTuple):
    """One executable to cover: its name on PATH, real path, hash (None if not yet
    known), whether it is denied, and what an earlier run found for the same unchanged
    binary (`inferred`, `failed` or `skipped`; None to look again)."""

    name: str
    path: str
    hash: str | None
    denied: bool
    known: CoverageOutcome | None = None
    others: tuple[tuple[str, str, bool], ...] = ()
    """The binary's other names on PATH: (name, the path it is run by, denied)."""
    slow: bool = False
    """Whether its `--agent` probe ran out of time in this scan: a program that slow to
    start (or that hangs) is as slow on each help it is asked, the longest work."""


class Step(NamedTuple):
    """One tool of a sweep starting or ending, for a progress display (`atip scan`'s bar
    and the tool it is on): the pass (`probe`, `infer`), the tool's name, how many of
    the pass's `total` have finished (this one too, when `finished`), and whether it was
    `left` for the next run rather than done (the budget ran out first)."""

    phase: Literal["probe", "infer"]
    name: str
    done: int
    total: int
    finished: bool
    left: bool = False


class Failure(msgspec.Struct, frozen=True):
    name: str
    path: str
    error: str


class InferenceReport(msgspec.Struct, kw_only=True):
    """What the inference pass did, for the result of `atip scan --infer`."""

    candidates: int = 0
    """Executables nothing else describes: neither native metadata nor a shim."""
    inferred: int = 0
    """Shims inferred by this run ..."""
    from_man_page: int = 0
    """... of which from the man page alone: nothing was run ..."""
    from_help: int = 0
    """... and from the tool's help, run in the sandbox (no page, or too thin a one)."""
    reused: int = 0
    """Binaries inferred before (by an earlier run, `atip show --infer`): not again."""
    aliases: list[str] = []
    """Names of other files of a binary inferred under another name (hard links,
    copies): described by that binary's shim, each recorded under its own name."""
    denied: list[str] = []
    """Names on the deny list: never run (described from their man page when they have one)."""
    skipped: list[str] = []
    """Denied names with no man page: nothing describes them without running them."""
    failed: list[Failure] = []
    left: list[str] = []
    """Not reached within the budget: the next run goes on with these."""
    cut: list[str] = []
    """Inferred, but part of the tree was left unread (listed, without options): by the
    wall-clock ceiling (`TOOL_CEILING`: a tool that hangs or spins) or a tree bigger than
    `MOST_STEPS` allows. Their shims say which (`_generation.incomplete`, `cut`)."""
    complete: bool = True
    """Whether nothing was left for the next run."""
    budget: float = 0.0
    """The seconds `scan` was given for the whole run, probe pass included (set by it)."""
    seconds: float = 0.0


def cover(
    targets: Sequence[CoverageTarget],
    *,
    registry: LocalRegistry,
    deadline: float,
    jobs: int = 8,
    refresh: bool = False,
    progress: Callable[[int, int], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
) -> tuple[dict[str, CoverageOutcome], InferenceReport]:
    """Infer a shim for each target that needs one, until `deadline` (a `time.monotonic`
    value); the outcome of each target by real path, and the report. With `refresh`,
    inferred shims are inferred again (shims someone wrote are never replaced).
    `progress` hears how many are done; `on_step`, each tool as it starts and ends."""
    start = time.monotonic()
    report = InferenceReport(candidates=len(targets))
    outcomes: dict[str, CoverageOutcome] = {}
    owners: dict[str, CoverageTarget] = {}
    aliases: list[tuple[CoverageTarget, CoverageTarget]] = []
    work: list[CoverageTarget] = []
    for target in targets:
        if target.denied:
            report.denied.append(target.name)
        known = target.known
        hash_ = target.hash or file_hash(target.path)
        if hash_ is None:
            outcomes[target.path] = CoverageOutcome(
                kind="failed", error="the binary cannot be read"
            )
            continue
        target = target._replace(hash=hash_)
        if hash_ in owners:
            aliases.append((target, owners[hash_]))
            continue
        owners[hash_] = target
        if known is not None and not refresh:  # a removed shim: `scan` asks again
            outcomes[target.path] = known
        else:
            work.append(target)

    copies: dict[str, list[tuple[str, str, bool]]] = {}
    for target, owner in aliases:  # another file of the same binary: its names too
        assert owner.hash is not None
        copies.setdefault(owner.hash, []).append((target.name, target.path, target.denied))
        copies[owner.hash] += target.others
    work = [t._replace(others=(*t.others, *copies.get(t.hash or "", ()))) for t in work]
    if work:
        runner = _Runner(registry, deadline, refresh, jobs)
        done = 0
        lock = threading.Lock()

        def one(target: CoverageTarget) -> tuple[CoverageTarget, CoverageOutcome]:
            nonlocal done
            if on_step:
                on_step(Step("infer", target.name, done, len(work), finished=False))
            outcome = runner.infer(target)
            with lock:
                done += 1
                count = done
            if progress:
                progress(count, len(work))
            if on_step:
                left = outcome.kind == "left"
                on_step(Step("infer", target.name, count, len(work), finished=True, left=left))
            return target, outcome

        with runner, ThreadPoolExecutor(max_workers=jobs) as pool:
            # the longest work first, not last: the tools whose subcommands have pages
            # of their own (git's 150, read without running git; npm's, asked) and those
            # whose probe ran out of time (decisions 770, 773), their own pages read
            # first; then the tools without a page (they must be asked), beside the
            # reading of the others' pages
            early, paged, unpaged = runner.sort(work)
            reading = runner.read_pages(work, pool, first=early)
            first = [pool.submit(one, target) for target in (*early, *unpaged)]
            concurrent.futures.wait(reading)
            rest = pool.map(one, sorted(paged, key=runner.rank))
            for target, outcome in itertools.chain((f.result() for f in first), rest):
                outcomes[target.path] = outcome

    for target, owner in aliases:
        owned = outcomes[owner.path]
        outcomes[target.path] = CoverageOutcome(
            kind="alias", hash=target.hash, source=owned.source, version=owned.version
        )
        report.aliases.append(target.name)

    for target in targets:
        outcome = outcomes[target.path]
        if outcome.kind == "man-page":
            report.from_man_page += 1
        elif outcome.kind == "help":
            report.from_help += 1
        elif outcome.kind == "reused":
            report.reused += 1
        elif outcome.kind == "skipped":
            report.skipped.append(target.name)
        elif outcome.kind == "failed":
            report.failed.append(Failure(target.name, target.path, outcome.error or "failed"))
        elif outcome.kind == "left":
            report.left.append(target.name)
        if outcome.cut and outcome.kind in ("man-page", "help"):
            report.cut.append(target.name)
    report.inferred = report.from_man_page + report.from_help
    report.complete = not report.left
    report.seconds = time.monotonic() - start
    return outcomes, report


def file_hash(path: str) -> str | None:
    """The file's sha256 digest; None when it cannot be read."""
    try:
        return sha256_file(path)
    except OSError:
        return None


def has_shim(registry: LocalRegistry, hash_: str) -> bool:
    """Whether a shim file for `hash_` is where `find_shim` looks first: the registry's
    own directory or a system one."""
    by_hash, _ = shim_paths(registry, hash_, "")
    return any(path.is_file() for path in by_hash)


def infer_shim(executable: str, name: str, hash_: str) -> Tool:
    """One tool's inferred shim, made as `atip scan --infer` makes it, so that a binary
    is described alike whichever command inferred it first (`resolve_tool` with
    `allow_inferred`, for `atip show --infer`): from its man pages alone when they are
    `enough` or the command is denied, else from its help in the sandbox with the pages
    merged in (a denied command without a page: a bare shim claiming destruction)."""
    from atipkit.infer.manpage import ManPages

    denied = name in (deny := configured()) or deny.denies(executable)
    attempt = _Attempt(ManPages.load(), executable, name, hash_, None)
    return attempt.from_pages(denied) or attempt.from_help()  # a denied one is never run


class _Unread:
    """A page not read yet."""


UNREAD = _Unread()


class _Attempt:
    """One tool's inference, as the scan and `atip show --infer` make it: its page, the
    pages of its subcommands, and a `Budget` of runs and pages that grows with the tool's
    subcommands, stopped after `TOOL_CEILING` seconds and never past `limit` (the sweep's
    deadline, if any)."""

    def __init__(
        self,
        pages: ManPages,
        path: str,
        name: str,
        hash_: str,
        limit: float | None,
        page: ManPage | _Unread | None = UNREAD,
    ) -> None:
        from atipkit.infer.generate import Budget, subpages_of
        from atipkit.infer.manpage import RENDER_TIMEOUT

        pages = pages.beside(path)
        self.path, self.name, self.hash = path, name, hash_
        self.clock = Budget(TOOL_CEILING, runs=TOOL_RUNS, limit=limit)
        if isinstance(page, _Unread):
            timeout = max(1.0, min(RENDER_TIMEOUT, self.clock.left))
            self.clock.spend(1)
            page = _read_page(pages, name, path, timeout)
        self.page = page
        self.subpages = subpages_of(name, pages, self.clock)

    def from_pages(self, denied: bool) -> Tool | None:
        """The shim from pages alone when the command is denied (its pages are all there
        may be), or when they are enough: the tool's page is (`enough`), or it says what
        the tool is and the pages of its subcommands list them. None otherwise."""
        from atipkit.infer.generate import enough, has_subcommands, shim_from_page

        page = self.page
        if page is None:
            return None
        whole = denied or enough(page.help)
        if not whole and not (page.help.description and has_subcommands(page.help)):
            return None
        if not whole and self.subpages is None:
            return None
        tool = shim_from_page(
            self.name,
            self.hash,
            page.help,
            version=page.version,
            denied=denied,
            depth=TOOL_DEPTH,
            budget=self.clock,
            subpages=self.subpages,
        )
        return tool if whole or "" not in tool.commands else None

    def ask(self) -> Asked | None:
        """The tool's own help, flags only, asked as `from_help` asks it first (None:
        denied); `from_help(asked)` goes on from there."""
        from atipkit.infer.generate import ask_help

        return ask_help(self.path, self.clock, name=self.name, help_word=False)

    def from_help(self, asked: Asked | None = None) -> Tool:
        """The shim from the tool's help, flags only (never the word `help`), its pages
        merged in; the version the page names, if it names one (decision 163), not asked
        again; nor the help, given it `asked`."""
        from atipkit.infer.generate import generate_shim

        return generate_shim(
            self.path,
            name=self.name,
            depth=TOOL_DEPTH,
            budget=self.clock,
            man=False,
            page=self.page.help if self.page else None,
            help_word=False,
            binary_hash=self.hash,
            subpages=self.subpages,
            version=self.page.version if self.page else None,
            asked=asked,
        )


def _read_page(pages: ManPages, name: str, path: str, timeout: float) -> ManPage | None:
    from atipkit.infer.manpage import read_man_file

    found = _page_of(pages, name, path)
    return read_man_file(found, name, timeout=timeout) if found else None


def _page_of(pages: ManPages, name: str, path: str) -> Path | None:
    """The page of the executable `path` called `name`: that of its name, else of its
    file's, among the pages its package ships beside it first (`ManPages.beside`)."""
    return pages.beside(path).find(name, os.path.basename(path))


class _Runner:
    """The inference of one target at a time, from several threads."""

    def __init__(
        self, registry: LocalRegistry, deadline: float, refresh: bool, jobs: int = 1
    ) -> None:
        self.registry = registry
        self.deadline = deadline
        self.refresh = refresh
        self._asking = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="atipkit-names")
        """Where the names of a binary without a page are asked, `jobs` at once, beside
        the sweep's own pool (decision 690)."""
        self._pages: ManPages | None = None
        self._lock = threading.Lock()
        self._read: dict[str, ManPage | None] = {}
        """The pages read ahead (`read_pages`), by the executable's real path."""
        self._reading: dict[str, concurrent.futures.Future[None]] = {}
        """The reading of each of those pages, by the same path."""
        self._found: dict[str, Path | None] = {}
        """The page file of each target (`sort`), by the same path."""

    def __enter__(self) -> _Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        """Let the threads that ask names end, however the sweep ended (none is asking
        once its own pool is done: the sweep's pool closes first)."""
        self._asking.shutdown()

    @property
    def pages(self) -> ManPages:
        with self._lock:  # listed once, by the first thread that needs them
            if self._pages is None:
                from atipkit.infer.manpage import ManPages

                self._pages = ManPages.load()
            return self._pages

    def sort(
        self, targets: Sequence[CoverageTarget]
    ) -> tuple[list[CoverageTarget], list[CoverageTarget], list[CoverageTarget]]:
        """`targets` by what the index of pages and the probes say, nothing rendered: those
        whose subcommands have pages of their own (`git-commit(1)`), the most first, then
        those whose probe ran out of time (`slow`); the others with a page; the others
        without one."""
        trees: list[tuple[int, CoverageTarget]] = []
        slow: list[CoverageTarget] = []
        paged: list[CoverageTarget] = []
        unpaged: list[CoverageTarget] = []
        for target in targets:
            pages = self.pages.beside(target.path)
            found = self._found[target.path] = pages.find(
                target.name, os.path.basename(target.path)
            )
            if found is None:
                self._read[target.path] = None
            if found is not None and (subpages := pages.prefixed(f"{target.name}-")):
                trees.append((len(subpages), target))
            else:
                (slow if target.slow else paged if found else unpaged).append(target)
        trees.sort(key=lambda counted: -counted[0])
        return [target for _, target in trees] + slow, paged, unpaged

    def read_pages(
        self,
        targets: Sequence[CoverageTarget],
        pool: ThreadPoolExecutor,
        first: Sequence[CoverageTarget] = (),
    ) -> list[concurrent.futures.Future[None]]:
        """Start reading the pages of `targets` (those `sort` found) that may need
        inferring, `BATCH` at a time in `pool` (`render_many`: a page in a batch costs a
        fraction of one alone), while the deadline is not near; the rest are read one by
        one. The batches are those of `targets`' order whatever is read first (a page in
        a batch may come out otherwise than alone: bash's, after base32's, decision 770),
        the batches holding a page of `first` submitted first. A target's inference
        waits for the reading of its page (`_page`)."""
        from atipkit.infer.manpage import BATCH, RENDER_TIMEOUT, read_man_files

        wanted = []
        for target in targets:
            assert target.hash is not None
            found = self._found.get(target.path)
            if found is not None and (self.refresh or not has_shim(self.registry, target.hash)):
                wanted.append((target.path, found, target.name))

        def batch(chunk: list[tuple[str, Path, str]]) -> None:
            if self.deadline - time.monotonic() < MIN_START:
                return
            read = read_man_files([(p, n) for _, p, n in chunk], timeout=RENDER_TIMEOUT)
            for (path, _, _), page in zip(chunk, read, strict=True):
                self._read[path] = page

        early = {target.path for target in first}
        chunks = [wanted[start : start + BATCH] for start in range(0, len(wanted), BATCH)]
        chunks.sort(key=lambda chunk: not any(path in early for path, _, _ in chunk))
        reading = []
        for chunk in chunks:
            reading.append(future := pool.submit(batch, chunk))
            self._reading.update((path, future) for path, _, _ in chunk)
        return reading

    def _page(self, target: CoverageTarget) -> ManPage | _Unread | None:
        """The target's page as read ahead, once its batch is read (submitted before the
        target, so never waiting on work queued behind it); `UNREAD` when it was not."""
        reading = self._reading.get(target.path)
        if reading is not None:  # one that failed left the page unread: read alone
            concurrent.futures.wait([reading])
        return self._read.get(target.path, UNREAD)

    def rank(self, target: CoverageTarget) -> bool:
        """False (first) for a target whose page has subcommands: the long work."""
        from atipkit.infer.generate import has_subcommands

        page = self._read.get(target.path)
        return not (page is not None and has_subcommands(page.help))

    def infer(self, target: CoverageTarget) -> CoverageOutcome:
        """The target's outcome. With `refresh`, a binary inferred before stays described
        by its old shim when it is not inferred again (left, failed): `source` says so."""
        hash_ = target.hash
        assert hash_ is not None
        origins: dict[str, str] = {}
        existing = find_shim(self.registry, hash_, target.name, origins)
        kept: dict[str, Any] = {}
        # a valid inferred shim read from the file a new one replaces: nobody else's
        replaceable = origins.get("metadata") == f"shim:{self.registry.shim_path(hash_)}"
        if existing is not None:
            source: ShimSource = "inferred" if is_inferred(existing) else "shim"
            if not (self.refresh and source == "inferred"):
                return CoverageOutcome(
                    kind="reused", hash=hash_, source=source, version=existing.version
                )
            kept = {"source": source, "version": existing.version}
        if self.deadline - time.monotonic() < MIN_START:
            return CoverageOutcome(kind="left", hash=hash_, **kept)
        try:
            return self._infer(target, hash_, kept, replaceable)
        except Exception as exc:  # one tool's trouble must not stop the sweep
            error = f"{type(exc).__name__}: {exc}"
            return CoverageOutcome(kind="failed", hash=hash_, error=error, **kept)

    def _infer(
        self, target: CoverageTarget, hash_: str, kept: dict[str, Any], replaceable: bool
    ) -> CoverageOutcome:
        refused = None if replaceable else _not_ours(self.registry.shim_path(hash_))
        if refused:
            return CoverageOutcome(kind="failed", hash=hash_, error=refused)
        page = self._page(target)
        attempt = _Attempt(self.pages, target.path, target.name, hash_, self.deadline, page)
        if target.denied and attempt.page is None:
            return CoverageOutcome(kind="skipped", hash=hash_, **kept)
        tool = attempt.from_pages(target.denied)
        kind: OutcomeKind = "man-page"
        if tool is None:
            if self.deadline - time.monotonic() < TOOL_BUDGET:
                return CoverageOutcome(kind="left", hash=hash_, **kept)
            tool, kind = attempt.from_help(), "help"
        if attempt.clock.cut == "deadline":
            # cut short by the sweep's deadline, not by its own budget: kept, it would
            # never be inferred again (decision 161); the next run does it whole
            return CoverageOutcome(kind="left", hash=hash_, **kept)
        if target.others:
            self._name(tool, attempt, target.others)
        return self._store(tool, kind, attempt.clock.cut)

    def _name(self, tool: Tool, first: _Attempt, others: Sequence[tuple[str, str, bool]]) -> None:
        """Give each other name of the binary that its pages document otherwise than the
        first its own document, in the shim's `_names` (decision 276): a name with a page
        of its own is inferred as a tool of its own (its page first, else asked by its
        own name: a multi-call binary answers as the name it is run by); a name the same
        page documents on its own NAME line (`bzcat - decompresses files to stdout`) is
        the first's document with that description. When the binary has no page, a name
        without one is asked by its own name too, and kept where it answers otherwise
        (rustup's `cargo`, `rustc`: decision 609). Invalid documents are left out. The
        names' pages are rendered together (`read_man_files`), not one run of groff
        each."""
        from atipkit.infer.generate import as_named
        from atipkit.infer.manpage import RENDER_TIMEOUT, read_man_files
        from atipkit.model import to_dict
        from atipkit.validation import validate

        assert tool.binary  # UNSET is falsy, never None
        assert isinstance(tool.binary.hash, str)
        if self.deadline - time.monotonic() < MIN_START:
            return
        found = [(n, p, d, self.pages.beside(p).find(n)) for n, p, d in others]
        paged = [(n, p, d, f) for n, p, d, f in found if f is not None]
        read = read_man_files([(f, n) for n, _, _, f in paged], timeout=RENDER_TIMEOUT)
        named: dict[str, Any] = {}
        if first.page is None:  # its help alone said what it is: each name may say otherwise
            asked = [(n, p) for n, p, d, its_page in found if its_page is None and not d]
            for name, answer in zip(
                (n for n, _ in asked),
                self._asking.map(lambda n_p: self._ask(tool, *n_p), asked),
                strict=True,
            ):
                if answer is not None:
                    named[name] = answer
        for (name, path, denied, _), page in zip(paged, read, strict=True):
            if self.deadline - time.monotonic() < MIN_START:
                break
            if page is None:
                continue
            variant: Tool | None
            if first.page is not None and (page.synopsis, page.names) == (
                first.page.synopsis,
                first.page.names,
            ):  # the same page
                variant = as_named(tool, name, page.help.description)
            else:
                attempt = _Attempt(self.pages, path, name, tool.binary.hash, self.deadline, page)
                variant = attempt.from_pages(denied) or attempt.from_help()
            if variant is not None and validate(dumps(variant)).ok:
                named[name] = to_dict(variant)
        if named:
            tool.extensions["_names"] = named

    def _ask(self, tool: Tool, name: str, path: str) -> dict[str, Any] | None:
        """The document of `tool`'s binary asked by its other name `name` (run as
        `path`), where it answers otherwise; None where it does not, or when the sweep's
        deadline is near. Each name is a tool of its own to ask (`pyenv`'s shims, one
        script under 67 names here, run one after another took a sweep's last five
        minutes alone): `_name` asks them at once (decision 690)."""
        from atipkit.infer.generate import described, has_subcommands
        from atipkit.model import to_dict
        from atipkit.validation import validate

        assert tool.binary  # UNSET is falsy, never None
        assert isinstance(tool.binary.hash, str)
        if self.deadline - time.monotonic() < MIN_START:
            return None
        own = _Attempt(self.pages, path, name, tool.binary.hash, self.deadline, None)
        asked = None
        if own.subpages is None and set(tool.commands) == {""}:
            # a help without commands makes a shim without them: one that also says
            # what the first says, its own name aside, would not be kept, so its
            # version is not asked (pyenv's shims, 67 names; decision 691)
            asked = own.ask()
            if (
                asked is not None
                and not has_subcommands(asked.root)
                and described(name, asked.root).replace(name, tool.name) == tool.description
            ):
                return None
        answer = own.from_help(asked)
        if _answers_otherwise(answer, tool) and validate(dumps(answer)).ok:
            return to_dict(answer)
        return None

    def _store(self, tool: Tool, kind: OutcomeKind, cut: str | None) -> CoverageOutcome:
        """Validate the shim as `atip gen` does, then write it where `resolve_tool` looks:
        nothing invalid is ever stored."""
        from atipkit.validation import validate

        assert tool.binary  # UNSET is falsy, never None
        assert isinstance(tool.binary.hash, str)
        text = dumps(tool)
        checked = validate(text)
        if not checked.ok:
            first = checked.errors[0].format() if checked.errors else "invalid"
            return CoverageOutcome(
                kind="failed", hash=tool.binary.hash, error=f"inferred an invalid shim: {first}"
            )
        write_atomic(self.registry.shim_path(tool.binary.hash), text)
        return CoverageOutcome(
            kind=kind, hash=tool.binary.hash, source="inferred", version=tool.version, cut=cut
        )


def _answers_otherwise(variant: Tool, first: Tool) -> bool:
    """Whether a name's own answer says something other than the first name's: another
    description (its own name aside) or other commands (`python` beside `python3.11`
    says the same)."""
    described = variant.description.replace(variant.name, first.name)
    return described != first.description or set(variant.commands) != set(first.commands)


def _not_ours(path: Path) -> str | None:
    """Why the file at `path` must not be replaced, if it must not: a shim someone wrote
    that does not validate (or names another binary) is theirs to fix. A shim that says
    it was inferred may be replaced."""
    if not path.is_file():
        return None
    try:
        stated = json.loads(path.read_bytes()).get("trust", {}).get("source")
    except (OSError, ValueError, AttributeError):
        stated = None
    if stated == "inferred":
        return None
    return f"{path} is not a valid shim for this binary; fix it or remove it"
