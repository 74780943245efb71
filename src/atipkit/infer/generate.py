"""Generating an inferred shim for a tool that does not speak ATIP (RFC 0.6 §4.10.4).

Every run goes through the sandbox of the probe. The help forms `--help`, `-h`, `help`
and — when the text points to it — `--help all` are tried and the richest kept;
subcommands are read down to a depth and within a time budget: from their own man page
when it is enough (`git-commit(1)`, `ip-address(8)`: `atipkit.infer.subpages`), else from
`TOOL SUB --help` (or `TOOL help SUB`) with the page merged in; the tool's man page, when
one is installed, adds the options a short `--help` leaves out. The result is a
schema-valid shim marked `trust.source: "inferred"` with a `_generation` record of how it
was made. `shim_from_page` makes one from man pages alone, running nothing (`atip scan
--infer`, and any command on the deny list).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

import msgspec

from atipkit._clock import timestamp
from atipkit.deny import configured
from atipkit.infer import synopsis
from atipkit.infer.effects import infer_effects
from atipkit.infer.helptext import (
    ParsedCommand,
    ParsedHelp,
    argument_type,
    arguments_from,
    asks_help,
    command_listing,
    default_of,
    option_type,
    parse_help,
)
from atipkit.infer.manpage import (
    COMMAND_SLOT,
    RENDER_TIMEOUT,
    ManPage,
    ManPages,
    merge,
    read_man_file,
    read_man_files,
)
from atipkit.infer.subpages import SubPages, synopsis_commands, usage_forms
from atipkit.model import (
    UNSET,
    Argument,
    AtipVersion,
    Binary,
    Command,
    Effects,
    FilesystemEffects,
    Option,
    Tool,
    Trust,
    UnsetType,
    iter_commands,
)
from atipkit.probe import run_sandboxed
from atipkit.protocol import PROTOCOL_VERSION
from atipkit.trust.digest import sha256_file

HELP_CPU = 2.0
"""CPU seconds each process of one run of the tool may use (`--help`, `--version`): what
a program needs for its help, however busy the machine is (decision 619)."""
HELP_TIMEOUT = 6.0
"""The wall-clock ceiling of one run: a program that sleeps or blocks uses no CPU. Three
times the old 2 s, which a help of 0.4 s of CPU missed at a sixth of a core."""
NOT_RUN = (126, 127)
"""The exit statuses of a program that could not run what it was to run: not executable,
not found (a shell's, `env`'s, a wrapper's such as pyenv's shims; decision 772)."""
_VERSION = re.compile(r"\b[vV]?(\d+(?:\.\d+)+[\w.+~-]*)")
_USAGE_LINE = re.compile(
    r"^[ \t]*(?:usage|syntax)[ \t]*:[ \t]*([\w./-]*\w)", re.IGNORECASE | re.MULTILINE
)
"""The program a help's usage line names: "Syntax: gpg [options] [files]". Blanks, not
`\\s`, around the words: `\\s` spans line ends, so from each of a help's N blank lines the
pattern would scan all those after it (N² steps: 44 s for 40 000 blank lines)."""


STEPS = 8
"""Steps a tool starts with: its help forms, `--version` and its own page."""
PER_COMMAND = 5
"""Steps more for each command it turns out to have (listed, or found in pages): a
command's help forms (at most three, and `--help all`) and its page. A tree is read
whole unless it is bigger than `MOST_STEPS` allows."""
MOST_STEPS = 2000
"""The most steps one tool is given, whatever its tree (git's, read whole, takes 250)."""
CEILING = 300.0
"""Wall-clock seconds after which `atip gen`'s inference of a tool stops: a safety stop
against a tool that hangs or spins on every help, not a budget (git's whole tree takes
18 s here on an idle machine; npm's, 115 runs of node, 120 s at load 15)."""

Cut = Literal["steps", "runs", "time", "deadline"]
_T = TypeVar("_T")


class Budget:
    """What one tool's inference may do, counted in steps — one run of the tool (a help
    form, `--version`) or one page rendered — which cost the same on a busy machine as on
    an idle one, so what is inferred does not depend on the load: `steps` to start with,
    `per_command` more for each command a tool turns out to have (`allow`, once per
    command path), `most` in all; of them at most `runs` runs of the tool, when given (a
    sweep's: pages cost it little, a slow program's every subcommand a lot). `seconds`
    of wall clock is only a ceiling, a safety stop against a tool that hangs or spins,
    and never runs past `limit` (a `time.monotonic` deadline: a sweep's own). Work past
    any of them is listed, not read, and `cut` says which stopped it (`incomplete` in
    the shim)."""

    RESERVE = 0.4  # for what follows the last run: hashing, building, validating

    def __init__(
        self,
        seconds: float = CEILING,
        *,
        steps: int = STEPS,
        per_command: int = PER_COMMAND,
        most: int = MOST_STEPS,
        runs: int | None = None,
        limit: float | None = None,
    ) -> None:
        self.deadline = time.monotonic() + seconds - self.RESERVE
        self.limit = limit
        if limit is not None:
            self.deadline = min(self.deadline, limit - self.RESERVE)
        self.steps = min(steps, most)
        self.per_command = per_command
        self.most = most
        self.spent = 0
        self.runs = runs
        self.ran = 0
        self.hung = 0
        """Runs stopped by their timeout."""
        self.missing = 0
        """Runs that exited 126 or 127: the program a wrapper runs was not found or could
        not be run (the shell's and `env`'s statuses, POSIX), whatever it was asked."""
        self.cut: Cut | None = None
        self._allowed: set[tuple[str, ...]] = set()

    @property
    def left(self) -> float:
        """Wall-clock seconds left before the ceiling (or the sweep's deadline)."""
        return self.deadline - time.monotonic()

    @property
    def short(self) -> bool:
        """Whether something was left unread (`cut` says why)."""
        return self.cut is not None

    def _out(self) -> Cut | None:
        """What stops more work now, if anything."""
        if self.spent >= self.steps:
            return "steps"
        if self.left <= 0:
            capped = self.limit is not None and self.deadline >= self.limit - self.RESERVE
            return "deadline" if capped else "time"
        return None

    def more(self) -> bool:
        """Whether one more step may be taken."""
        return self._out() is None

    def stop(self) -> None:
        """Note that work was left undone for what stops it now (the first reason
        noted stays)."""
        self.cut = self.cut or self._out() or "steps"

    def run(self) -> bool:
        """Whether the tool may be run once more, counting the run if so (else noting
        the cut)."""
        if self.runs is not None and self.ran >= self.runs:
            self.cut = self.cut or "runs"
            return False
        if not self.more():
            self.stop()
            return False
        self.spent += 1
        self.ran += 1
        return True

    def spend(self, steps: int) -> None:
        """Count `steps` taken (pages rendered together, after `more` said there was
        room for them)."""
        self.spent += steps

    def allow(self, commands: Iterable[tuple[str, ...]]) -> None:
        """Room for each of `commands` (by path) not allowed for before."""
        new = set(commands) - self._allowed
        self._allowed |= new
        self.steps = min(self.steps + len(new) * self.per_command, self.most)


def generate_shim(
    executable: str,
    *,
    depth: int = 2,
    budget: float | Budget = CEILING,
    man: bool = True,
    name: str | None = None,
    man_file: str | None = None,
    env: Mapping[str, str] | None = None,
    page: ParsedHelp | None = None,
    help_word: bool = True,
    binary_hash: str | None = None,
    subpages: SubPages | None = None,
    version: str | None = None,
    asked: Asked | None = None,
) -> Tool:
    """An inferred shim for `executable` (a path or a name on PATH).

    `man_file` is a man page to read instead of the one installed for `name` (the
    crawler reads the page shipped in the package it crawled, not the machine's, which
    may describe another version; then no subcommand page of the machine's is read
    either). `page` is a man page already read (`atip scan --infer` renders the page
    files itself): it is merged as a page read here would be, and no page is read. A page
    is read as `atip scan --infer` reads one (`_man_page`). `subpages` are the pages of the
    tool's subcommands (default, with `man`: those of the machine's index of pages).
    `env` is added to the environment of the tool's own runs only, never to groff's: a
    crawled package's `LD_LIBRARY_PATH` must not reach programs that merely read its
    files. Without `help_word`, the tool is asked with flags only
    (`--help`, `-h`, `--version`), never with the word `help`, which many programs take
    for an operand (`hostname help` renames the machine, `npx help` fetches a package
    and runs it): what an unattended sweep over a whole PATH does. `binary_hash` is the
    binary's digest when the caller has it already (else the binary is hashed here).
    `budget` is the wall-clock ceiling in seconds (a safety stop: the work itself is
    counted in steps, `Budget`), or a `Budget` (a sweep's, never past its deadline).
    `version`, when given (a sweep's: the one the page's header names, decision 163), is
    not asked of the tool again; nor its help, given `asked` (`ask_help`, on the same
    `budget`)."""
    clock = budget if isinstance(budget, Budget) else Budget(budget)
    launch = _launch(executable)
    real = os.path.realpath(launch)
    name = name or os.path.basename(executable)
    hash_ = binary_hash or sha256_file(real)
    index = ManPages.load().beside(real) if man and man_file is None else None
    if subpages is None and index is not None:
        subpages = subpages_of(name, index, clock)
    if _denied(name, real):
        if page is None and man:
            page = _man_page(name, man_file or index, clock)
        return _denied_shim(name, hash_, page, depth, clock, subpages)
    sources: list[str] = []
    rendering = None
    if page is None and man:  # the step counted here, the page rendered by groff while
        # the tool is asked for its help: both wait on other processes (decision 617)
        found = _page_to_read(name, man_file or index, clock)
        rendering = _in_thread(_read_page, found, name, clock) if found is not None else None
    root, form = asked or _best_help(launch, [], clock, env, help_word)[:2]
    if form:
        sources.append(form)
    if rendering is not None:
        page = rendering()
    method = "help-parsing"
    if page is not None:
        merge(root, page)
        sources.append("man")
        method += "+man"
    if (form or not clock.hung) and not clock.missing:  # one that answered no help but
        # hung would hang on this; one whose program is missing would say so again
        version = version or _version(launch, clock, env)
    commands: dict[str, Command] = {}
    if has_subcommands(root) or subpages is not None:
        commands = _subcommands(launch, (name,), root, depth, clock, sources, env, subpages)
    return _shim(name, hash_, root, commands, version, sources, method, clock)


def shim_from_page(
    name: str,
    hash_: str,
    page: ParsedHelp,
    *,
    version: str | None = None,
    denied: bool = False,
    depth: int = 2,
    budget: float | Budget = CEILING,
    subpages: SubPages | None = None,
) -> Tool:
    """An inferred shim from man pages alone: nothing is run. The subcommands are read
    from their own pages (`subpages`) down to `depth` within `budget`; a subcommand
    without one is listed, not read (reading it would mean running the tool). `denied`:
    the command is on the deny list, so the shim claims destruction
    (`claim_destruction`)."""
    clock = budget if isinstance(budget, Budget) else Budget(budget)
    commands = {}
    if has_subcommands(page) or subpages is not None:  # (`_subcommands`: pages that say so)
        commands = _subcommands("", (name,), page, depth, clock, [], None, subpages)
    sources = ["man"]
    tool = _shim(name, hash_, page, commands, version, sources, "man-page", clock)
    if denied:
        claim_destruction(tool)
    return tool


def has_subcommands(parsed: ParsedHelp) -> bool:
    """Whether a command takes subcommands: it lists some, or its usage has a place for
    one (`git ... <command> [<args>]`)."""
    return bool(parsed.commands) or COMMAND_SLOT.search(parsed.usage) is not None


def enough(page: ParsedHelp) -> bool:
    """Whether a man page alone describes a command well enough that the tool need not be
    asked: it says what the command is (the NAME line) and what it takes (an option other
    than help and version, or a subcommand), and if its synopsis has a place for a
    subcommand, it lists them. A page without such options is often a stub ("see --help")
    or that of a command that takes none;
    a page of a command with subcommands seldom lists them in a form that can be read
    (git's, apt-get's), where the help does. Either way, asking costs a sandboxed run and
    may find more. (Programs that run a command — `env`, `timeout`, `xargs` — have such
    a place too: they are asked, to no harm.)"""
    if not page.description:
        return False
    if not page.commands and all(asks_help(o) for o in page.options):
        return False  # a stub: "see --help"
    if page.commands and not _documents_options(page):
        return False  # gsettings(1), a page of an older pip: the options are in the help
    return bool(page.commands) or COMMAND_SLOT.search(page.usage) is None


def _documents_options(page: ParsedHelp) -> bool:
    """Whether a page documents options: the program's, its commands' (gio's, inside
    their entries), or says they come after the command (`openssl command [ options ]`)."""
    if page.options or any(c.options for c in page.commands):
        return True
    first = synopsis.form(page.usage)
    return synopsis.options_follow_command([first], first.words[:1])


def subpages_of(name: str, index: ManPages, clock: Budget) -> SubPages | None:
    """The pages of `name`'s subcommands in `index`, each rendered within what is left
    of `clock`; None when there are none."""

    def read(paths: list[Path]) -> list[ManPage | None]:
        timeout = max(0.5, min(RENDER_TIMEOUT, clock.left))
        clock.spend(len(paths))
        return read_man_files([(p, name) for p in paths], timeout=timeout)

    found = SubPages(index, (name,), read=read)
    return found if found else None


def _denied_shim(
    name: str,
    hash_: str,
    page: ParsedHelp | None,
    depth: int,
    clock: Budget,
    subpages: SubPages | None,
) -> Tool:
    """A command on the deny list is never run, not even for `--help`: its man pages
    (which groff renders, running nothing of the tool) are all there is."""
    if page is not None:
        return shim_from_page(
            name, hash_, page, denied=True, depth=depth, budget=clock, subpages=subpages
        )
    tool = _shim(name, hash_, ParsedHelp(), {}, None, [], "help-parsing", clock)
    claim_destruction(tool)
    return tool


def _man_page(name: str, source: str | ManPages | None, clock: Budget) -> ParsedHelp | None:
    """The page in the file `source`, else the one `source` (the pages of the tool's
    package first, then the machine's) has for `name`, read as `atip scan --infer` reads
    pages (`read_man_file`: rendered by groff left-adjusted and without hyphenation, so
    that justified prose is never read as a listing); None when there is none or it
    cannot be read. Nothing of the tool is run."""
    found = _page_to_read(name, source, clock)
    return None if found is None else _read_page(found, name, clock)


def _page_to_read(name: str, source: str | ManPages | None, clock: Budget) -> str | Path | None:
    """The page `_man_page` reads, its step counted; None when there is none or no step
    is left."""
    found = source.find(name) if isinstance(source, ManPages) else source
    if found is None:
        return None
    if not clock.more():
        clock.stop()
        return None
    clock.spend(1)
    return found


def _read_page(found: str | Path, name: str, clock: Budget) -> ParsedHelp | None:
    page = read_man_file(found, name, timeout=min(RENDER_TIMEOUT, clock.left))
    return page.help if page is not None else None


def _in_thread(work: Callable[..., _T], *args: Any) -> Callable[[], _T]:
    """`work(*args)` begun in a thread; the function returned waits for its result
    (raising what it raised). For work that waits on another process, as groff's
    rendering does, beside the caller's own."""
    done: list[_T] = []
    failed: list[BaseException] = []

    def target() -> None:
        try:
            done.append(work(*args))
        except BaseException as exc:  # handed to the caller, who raises it
            failed.append(exc)

    thread = threading.Thread(target=target, name="atipkit-page", daemon=True)
    thread.start()

    def result() -> _T:
        thread.join()
        if failed:
            raise failed[0]
        return done[0]

    return result


def as_named(tool: Tool, name: str, description: str) -> Tool | None:
    """`tool` as the document of another name of its binary that its page describes on a
    NAME line of its own (`bzcat - decompresses files to stdout` in `bzip2(1)`); None
    when that says nothing `tool` does not say already."""
    description = _short(description)
    if not description or description == tool.description:
        return None
    binary = msgspec.structs.replace(tool.binary, name=name) if tool.binary else tool.binary
    commands = dict(tool.commands)
    root = commands.get("")
    if root is not None and root.description == tool.description:  # the page's, as the tool's
        commands[""] = msgspec.structs.replace(root, description=description)
    return msgspec.structs.replace(
        tool, name=name, description=description, binary=binary, commands=commands
    )


def claim_destruction(tool: Tool) -> None:
    """Claim destruction for every command of a denied tool that its documentation does
    not show read-only, and say why: the deny list names commands whose purpose is to
    change the state of the system, and an agent must not take one for harmless because
    inference, which never ran it, knew nothing of its effects (decision 158). A command
    that only looks (`loginctl list-users`) keeps its read-only effects (decision 283)."""
    for _, command in iter_commands(tool):
        shown = command.effects.filesystem if command.effects else UNSET
        if command.commands or (shown and shown.write is False):
            continue
        command.effects = Effects(
            filesystem=FilesystemEffects(write=True, delete=True),
            network=command.effects.network if command.effects else UNSET,
            destructive=True,
        )
    generation = tool.extensions.get("_generation")
    if isinstance(generation, dict):
        generation["note"] = (
            "on the deny list of commands that change the state of the system: never run; "
            "destructive assumed where its documentation does not show it read-only"
        )


def _shim(
    name: str,
    hash_: str,
    root: ParsedHelp,
    commands: dict[str, Command],
    version: str | None,
    sources: list[str],
    method: str,
    clock: Budget,
) -> Tool:
    """The shim; `method` is how it was made: `man-page` (from pages alone, nothing of
    the tool run), `help-parsing` (the tool was asked for help, whatever it said), with
    `+man` when a page was merged in. `_generation.incomplete` says that subcommands were
    left unread, and `_generation.cut` what stopped the reading: `steps` (a tree bigger
    than `MOST_STEPS`: the same on any machine), `time` (the wall-clock ceiling: a tool
    that hangs or spins) or `deadline` (a sweep's)."""
    global_options = [_option(o) for o in root.options] if commands else []
    description = described(name, root)
    default = _default_command(root, commands)
    if default is not None and "" not in commands:  # the bare invocation runs it
        bare = Command(description=description, effects=commands[default].effects)
        commands = {"": bare, **commands}
    commands = commands or {"": _command(name, root, ())}
    confidence = "medium" if (root.options or root.commands) and root.description else "low"
    return Tool(
        atip=AtipVersion(version=PROTOCOL_VERSION),
        name=name,
        version=version or "unknown",
        description=description,
        binary=Binary(hash=hash_, name=name, version=version or UNSET),
        trust=Trust(source="inferred", verified=False),
        global_options=_unique(global_options),
        commands=commands,
        extensions={
            **prose_extension(root.prose),
            "_generation": {
                "method": method,
                "timestamp": timestamp(),
                "confidence": confidence,
                "sources": sorted(set(sources)),
                **({"incomplete": True, "cut": clock.cut} if clock.cut else {}),
            },
        },
    )


_NO_COMMAND = re.compile(r"\b(?:no|without(?: a| any)?) command\b", re.IGNORECASE)
_DEFAULT = re.compile(r"\b(?:default|implied)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _default_command(root: ParsedHelp, commands: Mapping[str, Command]) -> str | None:
    """The command a page says the bare invocation runs: in its own entry ("This is the
    default operation if no command is specified", "When invoked without any command
    verb, or when status is specified ...") or in the page's description ("If no
    command is passed, systemd-analyze time is implied"). None when nothing says so: a
    group whose bare form is not documented gets no root command (SPEC-NOTES 7: `""` is
    the root invocation, its effects its own, not inherited by the commands)."""
    for entry in root.commands:
        if entry.name not in commands:
            continue
        for sentence in _SENTENCE_END.split(entry.description):
            if _NO_COMMAND.search(sentence) and (
                _DEFAULT.search(sentence) or re.search(rf"\b{re.escape(entry.name)}\b", sentence)
            ):
                return entry.name
    for sentence in _SENTENCE_END.split(root.prose):
        if _NO_COMMAND.search(sentence) and _DEFAULT.search(sentence):
            named = {w for w in re.findall(r"[\w-]+", sentence) if w in commands}
            if len(named) == 1:
                return named.pop()
    return None


class Asked(NamedTuple):
    """A tool's own help, asked: the richest form's reading, and the form (`--help`)."""

    root: ParsedHelp
    form: str


def ask_help(
    executable: str, budget: Budget, *, name: str | None = None, help_word: bool = True
) -> Asked | None:
    """What `generate_shim(executable, budget=budget, name=name, man=False)` asks first,
    the tool's own help, asked on `budget` as it would be; the rest may then follow (its
    `asked`) or not. None for a denied tool: never run."""
    launch = _launch(executable)
    if _denied(name or os.path.basename(executable), os.path.realpath(launch)):
        return None
    return Asked(*_best_help(launch, [], budget, None, help_word)[:2])


def _launch(executable: str) -> str:
    """What a tool is run by: the path given, links kept, as a multi-call binary answers
    as the name it is run by (`bzcat`, not `bzip2`); denied, hashed and named by the
    file it is."""
    return os.path.abspath(executable) if os.sep in executable else _which(executable)


def _denied(name: str, real: str) -> bool:
    """Whether the deny list keeps the tool `name` (the file `real`) from being run."""
    return name in (deny := configured()) or deny.denies(real)


def described(name: str, root: ParsedHelp) -> str:
    """The description a shim made from the help `root` of `name` gives the tool."""
    return _short(root.description) or f"{name} (inferred from its help text)"


def _which(name: str) -> str:
    import shutil

    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"no executable {name!r} on PATH")
    return os.path.abspath(found)


def _run(
    real: str, args: Sequence[str], clock: Budget, env: Mapping[str, str] | None = None
) -> str:
    if not clock.run():
        return ""
    try:
        captured = run_sandboxed(
            real,
            list(args),
            timeout=min(HELP_TIMEOUT, clock.left),
            cpu=HELP_CPU,
            max_bytes=4 * 1024 * 1024,
            env=env,
        )
    except OSError:
        return ""
    clock.hung += captured.stopped == "timeout"
    clock.missing += captured.exit_code in NOT_RUN
    out = captured.stdout.decode("utf-8", "replace")
    err = captured.stderr.decode("utf-8", "replace")
    return out if len(out) >= len(err) else err


def _best_help(
    real: str,
    path: Sequence[str],
    clock: Budget,
    env: Mapping[str, str] | None,
    help_word: bool = True,
) -> tuple[ParsedHelp, str, str]:
    """The richest of the help forms for `path` (the tool itself when empty), how it was
    asked and the text it answered; the word `help` (`TOOL help`) only with
    `help_word`."""
    prog = os.path.basename(real)
    best, best_form, best_text = ParsedHelp(), "", ""
    forms = [[*path, "--help"], [*path, "-h"]]
    if path or help_word:
        forms.append(["help", *path] if path else ["help"])
    for args in forms:
        missing = clock.missing
        text = _run(real, args, clock, env)
        parsed = parse_help(text, prog) if text.strip() else ParsedHelp()
        if parsed.richness > best.richness:
            best, best_form, best_text = parsed, " ".join(args[len(path) :] if path else args), text
        if not path and "help -a" in text:  # it names a complete command listing
            known = {c.name for c in parsed.commands}
            listed = command_listing(_run(real, ["help", "-a"], clock, env))
            parsed.commands += [c for c in listed if c.name not in known]
            if parsed.richness > best.richness:
                best, best_form, best_text = parsed, " ".join(args), text
        if not path and f'"{prog} options"' in text:  # Cobra's "Use "kubectl options"
            # for a list of global command-line options": they are the root's
            known_flags = {f for o in parsed.options for f in o.flags}
            topic = parse_help(_run(real, ["options"], clock, env), prog)
            parsed.options += [o for o in topic.options if not set(o.flags) & known_flags]
            if parsed.richness > best.richness:
                best, best_form, best_text = parsed, " ".join(args), text
        if "--help all" in text:  # a stripped help that names its complete form
            text = _run(real, [*path, "--help", "all"], clock, env)
            full = parse_help(text, prog)
            if full.richness > best.richness:
                best, best_form, best_text = full, "--help all", text
        if best.richness >= 6 or clock.missing > missing:  # what it runs is missing:
            # so it is whatever it is asked
            break
    return best, best_form, best_text


def _subcommands(
    real: str,
    words: tuple[str, ...],
    parsed: ParsedHelp,
    depth: int,
    clock: Budget,
    sources: list[str],
    env: Mapping[str, str] | None,
    subpages: SubPages | None,
) -> dict[str, Command]:
    """The subcommands of `words` (the tool's name and the path to the command: `("git",
    "remote")`) that `parsed` lists, and those only pages document: each read from its
    page (running nothing) or, where the page is not enough and `real` may be run, from
    its help; below `depth`, listed. `real` is "" when nothing may be run."""
    path = words[1:]
    entries = list(parsed.commands)
    pages: dict[str, ManPage] = {}
    reading = subpages is not None and depth > 1
    clock.allow((*path, e.name) for e in entries)
    if subpages is not None and reading:
        clock.allow((*path, rest) for rest in subpages.candidates)
        pages, more = subpages.match([e.name for e in entries], clock.more)
        entries += [ParsedCommand(n, p.help.description) for n, p in more if n not in pages]
        pages.update(more)
        if subpages.unread:
            clock.stop()
    out: dict[str, Command] = {}
    for entry in entries:
        sub_words = (*words, entry.name)
        sub_path = sub_words[1:]
        sub = ParsedHelp(description=entry.description)
        read = depth > 1 and clock.more()
        if depth > 1 and not read:
            clock.stop()
        if read:
            page = pages.get(entry.name)
            ran = clock.ran
            sub = _read_subcommand(real, sub_words, parsed, entry, page, clock, env)
            # a run the budget refused (a sweep's runs spent) leaves the listing's line
            # alone, as if the budget had run out before it (decision 605)
            read = not (real and page is None and clock.ran == ran and clock.cut)
            if entry.name in pages:
                sources.append("man")
        if not sub.arguments and entry.args:
            sub.arguments = arguments_from(entry.args)
        if not sub.options and entry.options:  # set inside its entry of the listing
            sub.options = list(entry.options)
        _add_commands(sub, [ParsedCommand(c) for c in entry.commands if c != entry.name])
        children: dict[str, Command] = {}
        if sub.commands and depth > 2:
            below = subpages.below(entry.name) if subpages is not None else None
            children = _subcommands(real, sub_words, sub, depth - 1, clock, sources, env, below)
        command = _command(entry.name, sub, sub_path)
        if depth > 1 and not read:  # the budget ran out before its own text was read
            command.effects = _unsure(command.effects)
        if children:
            command.commands = children
        elif sub.commands:  # below the depth: listed, not read
            command.commands = {
                c.name: Command(
                    description=_short(c.description) or " ".join((*sub_path, c.name)),
                    effects=_effects(c.name, ParsedHelp(description=c.description)),
                )
                for c in sub.commands
                if c.name != entry.name
            }
        if command.commands:  # a group's effects are those of its commands, each its own
            command.effects = UNSET
        out[entry.name] = command
    return out


def _unsure(effects: Effects | UnsetType) -> Effects | UnsetType:
    """Effects judged from a listing's line alone, without the command's options: what it
    changes or destroys stands, a claim of safety does not (`git read-tree` "Reads tree
    information into the index" is destructive through `-u`)."""
    if isinstance(effects, Effects) and effects.filesystem and effects.filesystem.write is False:
        return UNSET
    return effects


def _read_subcommand(
    real: str,
    words: tuple[str, ...],
    parent: ParsedHelp,
    entry: ParsedCommand,
    page: ManPage | None,
    clock: Budget,
    env: Mapping[str, str] | None,
) -> ParsedHelp:
    """What the subcommand `words` (the tool's name, then the path to it) takes: its page
    when that is enough (a page is often richer than `SUB --help`, and reading it runs
    nothing), else its help with the page merged in; its page alone, or the parent's
    listing, when it may not be run."""
    path = words[1:]
    from_page = _page_help(page, words) if page is not None else None
    if from_page is not None and (not real or enough(from_page)):
        from_page.description = entry.description or from_page.description
        return from_page
    found, text = ParsedHelp(), ""
    if real:
        found, _, text = _best_help(real, path, clock, env)
    if found.richness and not _echoes(found, parent) and not _anothers(text, words, real):
        _add_commands(found, synopsis_commands(usage_forms(text), words))
        if from_page is not None:
            merge(found, from_page)
            _add_commands(found, from_page.commands)
        found.description = entry.description or found.description
        return found
    if from_page is not None:
        from_page.description = entry.description or from_page.description
        return from_page
    return ParsedHelp(description=entry.description)


def _page_help(page: ManPage, words: tuple[str, ...]) -> ParsedHelp:
    """A subcommand's page read as its help: its options and arguments, and as its own
    subcommands those the page lists and those its SYNOPSIS names (`git stash drop`).
    The subcommand's own name in its synopsis (`ip [ OPTIONS ] address ...`) is not an
    argument."""
    parsed = msgspec.structs.replace(page.help, commands=list(page.help.commands))
    _add_commands(parsed, synopsis_commands(page.synopsis, words))
    parsed.arguments = [a for a in parsed.arguments if not _names_command(a.name, words)]
    return parsed


def _add_commands(parsed: ParsedHelp, commands: list[ParsedCommand]) -> None:
    """`commands` that `parsed` does not list yet, listed after its own."""
    known = {c.name for c in parsed.commands}
    parsed.commands += [c for c in commands if c.name not in known]


def _names_command(word: str, path: tuple[str, ...]) -> bool:
    """Whether `word` is one of the words of the command `path`, or a shorter spelling
    of its name (`neigh` in the synopsis of `ip neighbour`)."""
    return word in path or (len(word) >= 3 and path[-1].startswith(word))


def _echoes(child: ParsedHelp, parent: ParsedHelp) -> bool:
    """Whether a subcommand's help is its parent's printed again (many tools answer
    `TOOL SUB --help` with the top-level help): then it says nothing about SUB."""
    names = {c.name for c in child.commands}
    # the parent's listing again, or part of it (`apt-get install --help` prints the
    # help's listing, the parent has its page's too): a command's own commands are its own
    return (len(names) > 1 and names <= {c.name for c in parent.commands}) or (
        child.usage == parent.usage
        and len(child.options) == len(parent.options)
        and bool(parent.options)
    )


def _anothers(text: str, words: tuple[str, ...], real: str) -> bool:
    """Whether a subcommand's help is another program's: its usage line names a program
    that is neither the tool (by its name or its file's) nor a word of the command.
    `apt-key list --help` prints gpg's help ("Syntax: gpg [options] [files]"), whose
    options (`--delete-keys`) are not `apt-key list`'s."""
    found = _USAGE_LINE.search(text)
    if found is None:
        return False
    names = {_stem(w) for w in (*words, os.path.basename(real))}
    return _stem(os.path.basename(found.group(1))) not in names


def _stem(name: str) -> str:
    """A program's name without its extension or version: `pip3` and `pip`, `foo.py`
    and `foo` are one program."""
    return re.sub(r"(?:\.[a-z]+)?[\d.]*$", "", name.lower()) or name.lower()


def _command(name: str, parsed: ParsedHelp, path: tuple[str, ...]) -> Command:
    description = _short(parsed.description) or " ".join(path) or name
    return Command(
        description=description,
        arguments=_unique_args([_argument(a) for a in parsed.arguments]),
        options=_unique([_option(o) for o in parsed.options]),
        effects=_effects(path[-1] if path else name, parsed),
        examples=parsed.examples,
        extensions=prose_extension(parsed.prose or _cut(parsed.description)) if path else {},
    )


def _cut(description: str) -> str:
    """A listing's description where `_short` cut it (systemctl's COMMANDS paragraphs):
    the whole of what was read is the command's prose."""
    text = " ".join(description.split())
    return text if len(text) > _SHORT else ""


def prose_extension(prose: str) -> dict[str, Any]:
    """What a page says a command is for, kept where only the search index reads it
    (`x-atipkit`, RFC 0.6 §12.2; decision 290): no compile sends it to a model. The
    tool's own goes on the tool, a subcommand's on its command."""
    return {"x-atipkit": {"prose": prose}} if prose else {}


def _effects(name: str, parsed: ParsedHelp) -> Effects | UnsetType:
    """What the command's name, purpose and options say it does (`infer_effects`)."""
    # an option whose page says more than its help is read in both words
    texts = [
        (o.flags, text)
        for o in parsed.options
        for text in ([o.description, o.also] if o.also else [o.description])
    ]
    effects = infer_effects(
        name,
        parsed.purpose or parsed.description,
        [text for _, text in texts],
        flags=[flags for flags, _ in texts],
        operands=[a.name + ("..." if a.variadic else "") for a in parsed.arguments],
        prose=parsed.prose,
    )
    return effects if effects != Effects() else UNSET


def _option(parsed: Any) -> Option:
    atip_type, values = option_type(parsed)
    default = _default(atip_type, values, default_of(parsed.description))
    return Option(
        name=parsed.name,
        flags=parsed.flags,
        type=atip_type,  # type: ignore[arg-type]  # from the type table
        description=_short(parsed.description) or UNSET,
        enum=values or UNSET,
        default=default,
    )


def _argument(parsed: Any) -> Argument:
    atip_type, values = argument_type(parsed)
    return Argument(
        name=parsed.name,
        type=atip_type,  # type: ignore[arg-type]  # from the type table
        enum=values or UNSET,
        description=_short(parsed.description) or parsed.name,
        required=parsed.required,
        variadic=parsed.variadic,
    )


def _default(atip_type: str, values: list[str] | None, text: str | None) -> Any:
    """A stated default, only where it fits the type (never for flags)."""
    if text is None or atip_type == "boolean":
        return UNSET
    if atip_type == "integer":
        return int(text) if re.fullmatch(r"-?\d+", text) else UNSET
    if atip_type == "number":
        try:
            return float(text)
        except ValueError:
            return UNSET
    if values is not None and text not in values:
        return UNSET
    return text


def _unique(options: list[Option]) -> list[Option]:
    seen: dict[str, int] = {}
    out = []
    for option in options:
        count = seen.get(option.name, 0)
        seen[option.name] = count + 1
        if count:
            option.name = f"{option.name}-{count + 1}"
        out.append(option)
    return out


def _unique_args(arguments: list[Argument]) -> list[Argument]:
    seen: dict[str, int] = {}
    out = []
    variadic_seen = False
    for argument in arguments:
        count = seen.get(argument.name, 0)
        seen[argument.name] = count + 1
        if count:
            argument.name = f"{argument.name}-{count + 1}"
        if argument.variadic and variadic_seen:
            argument.variadic = False  # one variadic argument at most
        variadic_seen = variadic_seen or argument.variadic
        out.append(argument)
    return out


_SHORT = 200  # characters of a description (decision 43)


def _short(text: str, limit: int = _SHORT) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _version(real: str, clock: Budget, env: Mapping[str, str] | None) -> str | None:
    text = _run(real, ["--version"], clock, env)
    first = next((line for line in text.splitlines() if line.strip()), "")
    match = _VERSION.search(first)
    return match.group(1) if match else None
