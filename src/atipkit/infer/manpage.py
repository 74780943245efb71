"""Man pages as a source of options (issue 6, item 2).

Many tools print only a synopsis for `--help` (ssh, ps, ip) and document their options in
the man page. Rendered as text, its OPTIONS section reads like help text, and the NAME
line gives a one-line description when the help had none. Every reader of pages (`atip
scan --infer`, `atip show --infer`, `atip gen`, the crawler, which reads the page in the
package it crawled) goes through `read_man_file`.

Pages written in Markdown and converted (ronn, pandoc) list options as bullets, the
description a paragraph below (`•   --slurp/-s:`); they are rewritten into the help-text
layout first. An option the help already has gains the page's other spellings of it
(`-s` becomes `-s, --slurp`).

`atip scan --infer` reads the pages of a whole PATH, so it does not ask `man` for each
(most of a run of `man` is its own start): `ManPages` finds the page files once (MANPATH,
else the `share/man` and `man` beside each PATH directory and the usual system
directories; sections 1, 8 and 6; and, for one program, the pages its package ships
beside it: `ManPages.beside`), and `read_man_file` decompresses one, follows a `.so`
redirect and renders it with `groff -mandoc` in the probe's sandbox, fed on stdin — what
`man` itself runs, without its start. Nothing of the tool is run.
"""

from __future__ import annotations

import bisect
import bz2
import contextlib
import gzip
import io
import itertools
import lzma
import os
import re
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import msgspec

from atipkit._atomic import write_atomic
from atipkit._jsontext import MAX_DOCUMENT_BYTES
from atipkit.infer.helptext import ParsedHelp
from atipkit.infer.pagetext import mark_tables, read_page
from atipkit.infer.synopsis import COMMAND_SLOT as COMMAND_SLOT  # read by coverage

_VERSION = re.compile(r"\b[vV]?(\d+(?:\.\d+)+[\w.+~-]*)")

SECTIONS = ("1", "8", "6")
"""The sections of commands: user commands, administration, games, in that order."""
MAX_PAGE_BYTES = 4 * 1024 * 1024
"""A page larger than this, compressed or not, is not read (the largest on this machine,
bash(1), is 350 kB)."""
RENDER_TIMEOUT = 10.0
MAX_PACKAGE_PAGES = 4096
"""At most this many entries of a package's section directory are looked at (npm ships
98 pages): a package is anybody's directory, and one of 100 000 files must not cost a
listing of them all on every lookup."""
_COMPRESSED: dict[str, Callable[[io.BytesIO], io.BufferedIOBase]] = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw),
    ".bz2": bz2.BZ2File,
    ".xz": lzma.LZMAFile,
    ".lzma": lzma.LZMAFile,
}


_TITLE = re.compile(r"^\.(?:TH|Dt)\b.*$", re.MULTILINE)


def parse_man_text(text: str, name: str) -> ParsedHelp | None:
    """A rendered page read by its layout (`pagetext.read_page`): its options, its
    subcommands, its SYNOPSIS as the usage line (positional arguments), and its NAME line
    as the description — the page's own one-line summary, where the first line of the
    text is only the page's header (`LS(1)  User Commands  LS(1)`). None for an empty
    page."""
    return read_page(text, name)


def merge(base: ParsedHelp, extra: ParsedHelp) -> None:
    """Options the man page adds to a short `--help` (and the flags of an entry that
    spans several of the help's options none of them has), and spellings it adds to
    options the help has (`-s` gains `--slurp`), and the value it names for one where the help
    names none (wget's help lists `--hsts-file` bare, its page `--hsts-file=file`); the
    commands it lists that the help leaves out (tmux's help lists none, apt-get's not
    `changelog`), less those it lists as programs of their own (git(1)'s `gitk(1)`,
    which `git help -a` lists); the page's description (its NAME line, written to be one) over the
    first line of the help (which may be an error message: ssh answers `--help` with
    `unknown option -- -`)."""
    known = {f for o in base.options for f in o.flags}
    for option in extra.options:
        owners = [o for o in base.options if set(o.flags) & set(option.flags)]
        if not owners:
            base.options.append(option)
            known.update(option.flags)
        elif len(owners) > 1:  # the page groups what the help keeps apart: gzip's `-#
            # --fast --best` over `-1, --fast` and `-9, --best`; its other flags (`-2`
            # ... `-8`) are an option of their own
            rest = [f for f in option.flags if f not in known]
            if rest:
                base.options.append(msgspec.structs.replace(option, flags=rest))
                known.update(rest)
        else:  # the same option
            owner = owners[0]
            owner.flags += [f for f in option.flags if f not in known]
            known.update(option.flags)
            if not owner.description or owner.description.startswith("-"):
                # a help that lists options in a row (`find --help`: "-delete -print0
                # -printf FORMAT") gives each the next ones for a description
                owner.description = option.description or owner.description
            elif option.description != owner.description:  # a terse help's words are
                # shown, and the page's read for effects too: `file -C` is "compile file
                # specified by -m" in one, "Write a magic.mgc output file" in the other
                owner.also = option.description
            if option.metavar and not owner.metavar:  # a terse help names no value
                owner.metavar, owner.optional_value = option.metavar, option.optional_value
    own = {c.name for c in extra.commands}
    base.commands = [c for c in base.commands if c.name in own or c.name not in extra.programs]
    listed = {c.name: c for c in base.commands}
    for command in extra.commands:
        if command.name not in listed:
            base.commands.append(command)
        else:
            same = listed[command.name]
            same.description = same.description or command.description
            same.args = same.args or command.args
            same.commands = same.commands or command.commands
            same.options = same.options or command.options
    base.description = extra.description or base.description  # a page's NAME line is curated
    base.prose = extra.prose or base.prose
    base.purpose = extra.purpose or base.purpose
    base.examples = base.examples or extra.examples


# -- page files ------------------------------------------------------------------------------


class ManPage(msgspec.Struct, kw_only=True):
    """A page read from its file: what it says, the version its header names (if any),
    where it was, and its SYNOPSIS section as rendered (every form of it: a subcommand's
    page names the subcommands below it there, `git stash drop ...`)."""

    help: ParsedHelp
    version: str | None
    path: str
    synopsis: str = ""
    names: dict[str, str] = {}
    """What the NAME section says of each name it lists: a page may document several
    commands, one line each (`bzip2, bunzip2 - a block-sorting file compressor` /
    `bzcat - decompresses files to stdout`)."""


def manpath() -> list[Path]:
    """The directories holding `man1`, `man8`, ...: MANPATH when set (an empty entry
    stands for the defaults, as for man-db), else the defaults — `share/man` and `man`
    beside each PATH directory (`/usr/bin` → `/usr/share/man`), then `/usr/local/share/man`,
    `/usr/share/man`, `/usr/local/man`, `/usr/man`. Only existing directories, once each."""
    env = os.environ
    defaults: list[Path] = []
    for entry in env.get("PATH", "").split(os.pathsep):
        if os.path.isabs(entry):
            parent = Path(entry).parent
            defaults += [parent / "share" / "man", parent / "man"]
    defaults += [Path(p) for p in ("/usr/local/share/man", "/usr/share/man", "/usr/local/man")]
    defaults.append(Path("/usr/man"))
    configured = env.get("MANPATH")
    roots: list[Path] = []
    if not configured:
        roots = defaults
    else:
        for entry in configured.split(":"):
            roots += defaults if not entry else [Path(entry)]
    seen: set[Path] = set()
    out = []
    for root in roots:
        if root not in seen and root.is_dir():
            seen.add(root)
            out.append(root)
    return out


class ManPages:
    """The command pages under `roots` (default: `manpath()`), found by listing each
    section directory once: one lookup per executable costs a dictionary access, not a
    run of `man -w`. `ManPages.load()` keeps the listing in the cache directory while no
    section directory changes (18 000 files take 70-100 ms to list, more than the rest of
    an `atip gen` of a simple tool).

    For each name, the first page wins by root order, then section (1, 8, 6), and a page
    of exactly the section (`passwd.1`) over one of a sub-section (`passwd.1ssl`, OpenSSL's
    command of that name)."""

    def __init__(self, roots: Iterable[Path] | None = None) -> None:
        self._dirs = _section_dirs(manpath() if roots is None else roots)
        self._pages = _list_pages(self._dirs)
        self._names: list[str] | None = None
        self._shared = _Packages(None, [], {})

    @classmethod
    def load(cls) -> ManPages:
        """The pages of `manpath()`, from the cache directory's `manpages.json` while
        every section directory has the modification time it had when it was listed
        (adding, removing or renaming a page changes it); listed again, and the cache
        rewritten, otherwise. A cache that cannot be read or written costs a listing."""
        from atipkit import paths

        pages = cls.__new__(cls)
        pages._dirs = _section_dirs(manpath())
        pages._names = None
        states = [_mtime(d) for d in pages._dirs]
        cache = paths.cache_dir() / "manpages.json"
        dirs = [(str(d), m) for d, m in zip(pages._dirs, states, strict=True)]
        data = _read_index(cache, pages._dirs, states)
        if data is None:
            data = _PageIndex(dirs=dirs, pages=_list_pages(pages._dirs))
            with contextlib.suppress(OSError):
                write_atomic(cache, msgspec.json.encode(data), durable=False)
        pages._pages = data.pages
        pages._shared = _Packages(cache, dirs, data.packages)
        pages._shared.index = data.pages
        return pages

    def beside(self, executable: str | os.PathLike[str]) -> ManPages:
        """These pages, with those the package of `executable` ships beside it
        (`package_roots`: npm's `/usr/lib/node_modules/npm/man`, which `man` does not
        find) ranked first: they document this very program, where a page of the same
        name elsewhere may be another version's or another program's. `self` when the
        package ships none the index does not have already."""
        known = {d.parent for d in self._dirs}
        roots = [r for r in package_roots(executable) if r not in known]
        if not roots:
            return self
        dirs = _section_dirs(roots)
        listed = _best((i, d.name[3:], self._shared.files(d)) for i, d in enumerate(dirs))
        if not listed:
            return self
        out = ManPages.__new__(ManPages)
        out._dirs = self._dirs + dirs
        out._pages = dict(self._pages)
        out._pages.update({n: (len(self._dirs) + i, f) for n, (i, f) in listed.items()})
        out._names = None
        out._shared = self._shared
        return out

    def find(self, *names: str) -> Path | None:
        """The page of the first of `names` that has one."""
        return next((self._path(n) for n in names if n in self._pages), None)

    def prefixed(self, prefix: str) -> dict[str, Path]:
        """The pages whose name starts with `prefix` (`git-` → `git-commit`, ...), by the
        rest of the name (`commit`)."""
        if self._names is None:
            self._names = sorted(self._pages)
        start = bisect.bisect_left(self._names, prefix)
        out: dict[str, Path] = {}
        for name in itertools.islice(self._names, start, None):
            if not name.startswith(prefix):
                break
            if len(name) > len(prefix):
                out[name[len(prefix) :]] = self._path(name)
        return out

    def _path(self, name: str) -> Path:
        index, file = self._pages[name]
        return self._dirs[index] / file


INDEX_VERSION = 2
"""`manpages.json`'s form: 2 lists the pages by name in order (1, in listing order, is
listed again and rewritten)."""


class _PageIndex(msgspec.Struct):
    """`manpages.json`: each section directory with its modification time when it was
    listed (None: missing), and each page by name as (directory index, file name);
    `packages`, the section directories of packages looked into (`ManPages.beside`), each
    with its modification time and the page files kept."""

    dirs: list[tuple[str, int | None]]
    pages: dict[str, tuple[int, str]]
    version: int = INDEX_VERSION
    packages: dict[str, tuple[int | None, list[str]]] = {}


class _Packages:
    """The listings of packages' section directories, shared by a `ManPages` and those
    `beside` makes from it (the scan's threads among them), kept in `manpages.json` with
    the index: a directory is listed again only when its modification time changed."""

    def __init__(
        self,
        cache: Path | None,
        dirs: list[tuple[str, int | None]],
        listed: dict[str, tuple[int | None, list[str]]],
    ) -> None:
        self.cache, self.dirs, self.listed = cache, dirs, dict(listed)
        self.index: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()

    def files(self, directory: Path) -> list[str]:
        """The page files of `directory`, a package's `man1` (say), from the cache while
        its modification time is unchanged; listed (`_package_files`) and the cache
        rewritten otherwise."""
        state = _mtime(directory)
        key = str(directory)
        with self._lock:
            known = self.listed.get(key)
            if known is not None and known[0] == state and _plain_names(known[1]):
                return known[1]
            files = _package_files(directory) if state is not None else []
            self.listed[key] = (state, files)
            if self.cache is not None:
                data = _PageIndex(dirs=self.dirs, pages=self.index, packages=self.listed)
                with contextlib.suppress(OSError):
                    write_atomic(self.cache, msgspec.json.encode(data), durable=False)
            return files


def package_roots(executable: str | os.PathLike[str]) -> list[Path]:
    """The man directories a program's package ships beside it: `man`'s rule for a PATH
    directory (`DIR/../share/man`, `DIR/../man`, manpath(5)) applied to the directory the
    program resolves to, symlinks followed — `/usr/bin/npm` is
    `/usr/lib/node_modules/npm/bin/npm-cli.js`, whose pages are in
    `/usr/lib/node_modules/npm/man`, which `man` does not look into since it stops at the
    link. Only a directory that resolves inside that prefix (a `man` linked out of the
    package is not the package's), resolved; none for a link that loops or leads
    nowhere."""
    try:
        real = Path(os.path.realpath(executable, strict=True))
        prefix = Path(os.path.realpath(real.parent.parent, strict=True))
    except (OSError, RuntimeError):  # a loop, a dangling link
        return []
    out = []
    for candidate in (prefix / "share" / "man", prefix / "man"):
        try:
            root = Path(os.path.realpath(candidate, strict=True))
        except (OSError, RuntimeError):
            continue
        if root.is_relative_to(prefix) and root.is_dir() and root not in out:
            out.append(root)
    return out


def _package_files(directory: Path) -> list[str]:
    """The page files among the first `MAX_PACKAGE_PAGES` entries of a package's section
    directory: plain files, or links to one that stays inside the package's man directory
    (`directory`'s parent) — a page linked to `/etc/shadow` would be rendered for an
    agent to read."""
    root = directory.parent
    out = []
    try:
        with os.scandir(directory) as entries:
            for entry in itertools.islice(entries, MAX_PACKAGE_PAGES):
                if _page_name(entry.name, directory.name[3:]) is None:
                    continue
                try:
                    if entry.is_symlink():
                        target = Path(os.path.realpath(entry.path, strict=True))
                        if not target.is_relative_to(root):
                            continue
                    if entry.is_file():
                        out.append(entry.name)
                except (OSError, RuntimeError):
                    continue
    except OSError:
        return []
    return out


def _plain_names(files: list[str]) -> bool:
    """Whether each of `files` is a file name of its directory, nothing else."""
    return len(files) <= MAX_PACKAGE_PAGES and all(
        f not in ("", ".", "..") and "/" not in f and "\0" not in f for f in files
    )


def _section_dirs(roots: Iterable[Path]) -> list[Path]:
    """`ROOT/man1`, `ROOT/man8`, `ROOT/man6` for each root, in rank order."""
    return [Path(root) / f"man{section}" for root in roots for section in SECTIONS]


def _mtime(directory: Path) -> int | None:
    try:
        return directory.stat().st_mtime_ns
    except OSError:
        return None


def _list_pages(directories: list[Path]) -> dict[str, tuple[int, str]]:
    """Each name's best page as (index in `directories`, file name) (`_best`), by name
    in order: so the index is written, and `prefixed`'s sort of names read back in order
    is one pass, not a sort of 18 000 (decision 618)."""
    pages = _best((i, d.name[3:], _listing(d)) for i, d in enumerate(directories))
    return dict(sorted(pages.items()))


def _listing(directory: Path) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _best(listings: Iterable[tuple[int, str, list[str]]]) -> dict[str, tuple[int, str]]:
    """Each name's best page as (rank, file name) among the files of section directories
    given as (rank, section, files): directories in rank order (root, then section), an
    exact section over a sub-section, then the file name."""
    best: dict[str, tuple[tuple[int, bool, str], str]] = {}
    for rank, section, files in listings:
        for file in files:
            parsed = _page_name(file, section)
            if parsed is None:
                continue
            name, exact = parsed
            key = (rank, not exact, file)
            if name not in best or key < best[name][0]:
                best[name] = (key, file)
    return {name: (key[0], file) for name, (key, file) in best.items()}


def _read_index(
    cache: Path, directories: list[Path], states: list[int | None]
) -> _PageIndex | None:
    """The cached index when it lists these very directories in these very states, and
    names only plain files in them; None otherwise."""
    raw = _read_cache(cache)
    if raw is None:
        return None
    try:
        data = msgspec.json.decode(raw, type=_PageIndex)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    expected = [(str(d), m) for d, m in zip(directories, states, strict=True)]
    if data.version != INDEX_VERSION or data.dirs != expected:
        return None
    count = len(directories)
    for index, file in data.pages.values():
        if not 0 <= index < count or "/" in file or "\0" in file or file in ("", ".", ".."):
            return None
    return data


def _read_cache(cache: Path) -> bytes | None:
    """The bytes of `manpages.json` when it is a regular file of at most
    `MAX_DOCUMENT_BYTES` (this machine's 18 000 pages take 1.7 MB): not a FIFO put in its
    place, whose opening or reading would wait for a writer forever, nor a file large
    enough to exhaust memory."""
    try:
        fd = os.open(cache, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_DOCUMENT_BYTES:
                return None
            data = f.read(MAX_DOCUMENT_BYTES + 1)
        except OSError:
            return None
    return data if len(data) <= MAX_DOCUMENT_BYTES else None


def _page_name(file: str, section: str) -> tuple[str, bool] | None:
    """`ls.1.gz` → ("ls", True); `passwd.1ssl.gz` → ("passwd", False); None for a file
    that is not a page of `section` (or is hidden)."""
    if file.startswith("."):
        return None
    stem, suffix = os.path.splitext(file)
    base = stem if suffix in _COMPRESSED or suffix in (".zst", ".Z") else file
    name, dot, ext = base.rpartition(".")
    if not dot or not name or not ext.startswith(section):
        return None
    return name, ext == section


def read_man_file(
    path: str | os.PathLike[str], name: str, *, timeout: float = RENDER_TIMEOUT
) -> ManPage | None:
    """The page in `path` (plain or compressed), rendered and read; None when it cannot
    be read or rendered (no groff, a format not known, too large, empty)."""
    return read_man_files([(path, name)], timeout=timeout)[0]


def read_man_files(
    pages: Sequence[tuple[str | os.PathLike[str], str]], *, timeout: float = RENDER_TIMEOUT
) -> list[ManPage | None]:
    """`read_man_file` for each (path, name) of `pages`, rendered together
    (`render_many`: most of a page's rendering is groff's start)."""
    sources = [_page_source(Path(path)) for path, _ in pages]
    texts = render_many([mark_tables(s) for s in sources if s is not None], timeout=timeout)
    rendered = iter(texts)
    return [
        _read(next(rendered), source, path, name) if source is not None else None
        for (path, name), source in zip(pages, sources, strict=True)
    ]


def _read(text: str, source: str, path: str | os.PathLike[str], name: str) -> ManPage | None:
    """The page read as the command `name`'s: described by the NAME line that lists
    `name` where there is one (`bzcat - decompresses files to stdout`, the third of
    `bzip2(1)`)."""
    parsed = parse_man_text(text, name) if text else None
    if parsed is None:
        return None
    plain = _OVERSTRIKE.sub("", text)  # bold and italic are overstrikes (`render`)
    names = _name_entries(_section_text(plain, _NAME_SECTION))
    parsed.description = names.get(name, parsed.description)
    shared = [n for n, what in names.items() if what == names.get(name)]
    if len(shared) > 1:  # a page of several commands: `pgrep, pkill, pidwait - look up, ...`
        parsed.purpose = _own(name, shared, names[name])
        others = set(shared) - {name}
        parsed.options = [
            o for o in parsed.options if not set(_ONLY.findall(o.description)) & others
        ]
    return ManPage(
        help=parsed,
        version=page_version(source),
        path=os.fspath(path),
        synopsis=_section_text(plain, _SYNOPSIS) or _section_text(plain, _SUB_SYNOPSIS),
        names=names,
    )


_OVERSTRIKE = re.compile(".\x08")
_ONLY = re.compile(r"\(([\w.+-]+) only\.?\)")
"""An option a shared page gives one of its names: "Display name and PID of the process
being killed.  (pkill only.)"."""
_ALTERNATIVES = re.compile(r"\s*,\s*(?:or\s+)?|\s+or\s+|/")


def _own(name: str, shared: list[str], what: str) -> str:
    """`name`'s part of the NAME line of the names `shared`, when the line says one
    doing for each name, in their order (`pgrep, pkill, pidwait - look up, signal, or wait
    for processes`, `swapon, swapoff - enable/disable devices`): "look up" for pgrep;
    else "" (`gzip, gunzip, zcat - compress or expand files`)."""
    parts = _ALTERNATIVES.split(what)
    return parts[shared.index(name)] if len(parts) == len(shared) else ""


_NAME_SECTION = re.compile(r"^NAME\s*$", re.MULTILINE)
_SYNOPSIS = re.compile(r"^SYNOPSIS\s*$", re.MULTILINE)
_SUB_SYNOPSIS = re.compile(r"^ {1,4}Synopsis\s*$", re.MULTILINE | re.IGNORECASE)
_NAME_ENTRY = re.compile(r"^\s*(?P<names>[^\s,]+(?:,\s*[^\s,]+)*)\s+[-—–]+\s+(?P<what>\S.*)$")


def _name_entries(section: str) -> dict[str, str]:
    """`a, b - what` lines of a NAME section, by name, up to its first blank line after
    them (a page's footer may follow); a line that does not start an entry continues the
    one before it. The names of one entry share its description, joined once: a NAME line
    of 10 000 names continued over thousands of lines costs their length, not its
    product."""
    entries: list[tuple[list[str], list[str]]] = []
    for line in section.split("\n"):
        if not line.strip() and entries:
            break
        entry = _NAME_ENTRY.match(line)
        if entry is not None:
            names = [n.strip() for n in entry.group("names").split(",")]
            entries.append((names, [entry.group("what").strip()]))
        elif line.strip() and entries:
            entries[-1][1].append(line.strip())
    out: dict[str, str] = {}
    for names, parts in entries:
        what = " ".join(parts)
        for name in names:
            out[name] = what
    return out


def _section_text(text: str, header: re.Pattern[str]) -> str:
    """The lines of the section (or sub-section: npm's `Synopsis`) `header` finds in a
    rendered page, up to the next line set no deeper than its heading (the next
    section's or sub-section's)."""
    found = header.search(text)
    if found is None:
        return ""
    heading = found.group()
    depth = len(heading) - len(heading.lstrip(" "))
    lines = []
    for line in text[found.end() :].split("\n")[1:]:
        if line[depth : depth + 1].strip():
            break
        lines.append(line)
    return "\n".join(lines).strip("\n")


def _page_source(path: Path, hops: int = 3) -> str | None:
    """The roff text of a page with its `.so` requests replaced by the files they name
    (`.so man1/bash.1`, relative to the directory above the section's), as `soelim`
    does for `man`: a whole page may be one (`init.1` → `systemd.1`), or a part of one.
    A name that leads out of that directory (`.so /etc/shadow`, `.so ../../secret`;
    none of this machine's pages has one) includes nothing: a package's page is
    anybody's file."""
    raw = _read_limited(path)
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    if ".so " not in text:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if line.startswith(".so ") and hops:
            named = os.path.normpath(line[4:].strip())
            target = path.parent.parent / named
            inside = not os.path.isabs(named) and named.split(os.sep)[0] != os.pardir
            found = next(
                (
                    c
                    for c in (target, *(Path(f"{target}{ext}") for ext in _COMPRESSED))
                    if inside and c.is_file()
                ),
                None,
            )
            included = _page_source(found, hops - 1) if found else None
            if included is None and len(out) == 0 and text.strip() == line.strip():
                return None  # a page that is only a redirect to nothing
            out.append(included or "")
        else:
            out.append(line)
    return "\n".join(out)


def _read_limited(path: Path) -> bytes | None:
    opener = _COMPRESSED.get(path.suffix)
    try:
        if path.stat().st_size > MAX_PAGE_BYTES:
            return None
        data = path.read_bytes()
        if opener is not None:
            with opener(io.BytesIO(data)) as stream:
                data = stream.read(MAX_PAGE_BYTES + 1)
    except (OSError, EOFError, lzma.LZMAError, ValueError):  # gzip.BadGzipFile is an OSError
        return None
    if path.suffix in (".zst", ".Z") or len(data) > MAX_PAGE_BYTES:
        return None
    return data


def render(source: str, *, timeout: float = RENDER_TIMEOUT) -> str:
    """roff text → what `man -P cat` shows: `groff -mandoc` (man and mdoc pages alike),
    with tbl and the input's encoding handled, no overstriking; in the probe's sandbox,
    fed on stdin. "" when groff is missing or fails."""
    return _groff(_left_adjusted(source), timeout, 4 * MAX_PAGE_BYTES) or ""


def render_many(sources: Sequence[str], *, timeout: float = RENDER_TIMEOUT) -> list[str]:
    """`render` for each of `sources`, up to `BATCH` pages of one macro package (man,
    mdoc) rendered by one run of groff, each followed by a line of its own that marks its
    end: most of the time of rendering a page is groff's start (35-45 ms a page against
    9 ms in a batch). What one page sets stays set for the next in the same run, so a
    page that changes what `.TH` does not reset (`_STATE`: a translation, sentence
    spacing, line length, a macro package loaded, a standard macro redefined) only ends
    a batch, and yields the same text as alone; what any page may leave running
    (`_RESET`: centring, line spacing) is stopped after each. A batch whose marks do
    not all come out in order (a page that swallows what follows it: an unclosed `.ig`,
    table or conditional), or that fails, is rendered page by page."""
    out = [""] * len(sources)
    for batch in _batches(sources):
        texts = _render_batch([sources[i] for i in batch], timeout) if len(batch) > 1 else None
        if texts is None:
            texts = [render(sources[i], timeout=timeout) for i in batch]
        for index, text in zip(batch, texts, strict=True):
            out[index] = text
    return out


BATCH = 32
"""Pages rendered by one run of groff."""
_MACROS = re.compile(r"^\.(TH|Dd)\b", re.MULTILINE)
_STANDARD = (
    r"TH|SH|SS|TP|TQ|IP|HP|PP|LP|P|RS|RE|B|I|BI|BR|IB|IR|RB|RI|SM|SB|UR|UE|MT|ME|SY|YS|OP|"
    r"EX|EE|PD|AT|UC|DT|R|S|lq|rq|Tm|HF|"
    r"ad|na|atipkit-ad"  # the adjustment `_LEFT_ONLY` holds: redefined, it would spoil the next
)
_STATE = re.compile(
    r"^[.'][ \t]*(?:do[ \t]+)?(?:(?:trin|cs|ec|eo|cc|c2|cflags|char|fchar|schar|rchar|"
    r"rfschar|ll|lt|pl|ev|mso|hcode|fp|ftr|special|fspecial|lg|kern|sty|blm|lsm)\b|"
    rf"(?:de1?|am1?|ds1?|as1?)[ \t]+(?:{_STANDARD})(?=[ \t\\]|$)|(?:rn|rm|als)[ \t]+"
    rf"(?:\S+[ \t]+)*?(?:{_STANDARD})(?=[ \t\\]|$)|(?:nr|rr|rnn|aln)[ \t]+"
    r"(?:\S+[ \t]+)?(?:LL|IN)(?=[ \t\\]|$)|(?:rn|als)[ \t]+(?:\S+[ \t]+)?tr(?=[ \t\\]|$))|"
    r"\\R(?:'|\[|\S)?(?:LL|IN)\b",
    re.MULTILINE,
)
"""Requests whose effect outlasts the page and that `_left_adjusted` and the resets
after each page in a batch do not undo for the next: environments, escape and control
characters, line length (`.ll`, and the registers `LL` and `IN` that `.TH` reads), a
character removed, `.tr` under another name, a macro run on blank or indented lines, a
macro package loaded, a standard macro or string (re)defined, renamed or removed.
(pod2man's pages define macros and strings of their own and translate a character: they
batch.)"""
_RESET = ".ce 0\n.rj 0\n.ls 1\n"
"""What a page may leave running that `.TH` does not stop, stopped after each page of a
batch: lines centred or right-aligned (`.ce 100`), spacing (`.ls 2`)."""
_TRANSLATE = re.compile(r"^[.'][ \t]*(?:do[ \t]+)?tr[ \t]+(\S+)", re.MULTILINE)
_CHARACTER = re.compile(r"\\\(..|\\\[[^\]]*\]|\\.|.")


def _undo_translations(source: str) -> str:
    """The requests that translate back what the `.tr` requests of `source` translate
    (`.tr \\(*W-` → `.tr \\(*W\\(*W`), for the page after it in a batch."""
    out = []
    for found in _TRANSLATE.finditer(source):
        characters = _CHARACTER.findall(found.group(1))
        out += [f".tr {c}{c}" for c in characters[::2]]
    return "".join(f"{line}\n" for line in out)


def _batches(sources: Sequence[str]) -> list[list[int]]:
    """The indexes of `sources` in batches: pages of one macro package, those that set
    state each last in its batch; a page of neither package alone."""
    batches: list[list[int]] = []
    open_: dict[str, list[int]] = {}
    for index, source in enumerate(sources):
        found = _MACROS.search(source)
        if found is None:
            batches.append([index])
            continue
        batch = open_.setdefault(found.group(1), [])
        batch.append(index)
        if len(batch) == BATCH or _STATE.search(source):
            batches.append(batch)
            del open_[found.group(1)]
    batches += [b for b in open_.values() if b]
    return batches


def _render_batch(sources: Sequence[str], timeout: float) -> list[str] | None:
    import secrets

    mark = f"ATIPKITPAGEEND{secrets.token_hex(8)}N"
    joined = "".join(
        f"{_left_adjusted(s)}\n{_RESET}.br\n{mark}{i}\n{_undo_translations(s)}"
        for i, s in enumerate(sources)
    )
    limit = 4 * MAX_PAGE_BYTES * len(sources)
    text = _groff(joined, timeout, limit)
    if text is None:
        return None
    texts = []
    lines = text.split("\n")
    start = 0
    for index in range(len(sources)):
        ending = f"{mark}{index}"
        end = next((i for i in range(start, len(lines)) if lines[i].strip() == ending), None)
        if end is None:
            return None
        texts.append("\n".join(lines[start:end]))
        start = end + 1
    return texts


def _left_adjusted(source: str) -> str:
    """Left-adjusted, not justified: justification pads prose with runs of spaces, and
    two spaces after a line's first word is how a listing separates a name from its
    description ("gpg  may  be  run" would read as a command `gpg`)."""
    return _TITLE.sub(lambda m: f"{m.group(0)}\n.ad l\n.hy 0\n.ss 12 12", source, count=1)


_LEFT_ONLY = ".ad l\n.rn ad atipkit-ad\n.de ad\n.atipkit-ad l\n..\n"
"""Before every run of groff: `.ad`, whatever a page or its macros ask of it, adjusts
left. `.na` then `.ad` (bash(1)) turned justification back on, and its padding then
depended on the lines groff had set before, so a page rendered after another in a batch
read otherwise than alone (bash gained an option `-0` after base32's page, decision
770). Once per run: a second rename would make `ad` call itself."""


def _groff(source: str, timeout: float, max_bytes: int) -> str | None:
    """What groff makes of `source` in the probe's sandbox; None when groff is missing,
    fails to start, or is stopped (time, size)."""
    from atipkit.probe import run_sandboxed

    groff = shutil.which("groff")
    if groff is None:
        return None
    try:
        captured = run_sandboxed(
            groff,
            # no hyphenation: a word broken across lines ("screen-" / "ful") would
            # leave its tail at the start of a line, where it reads as a name; bold and
            # italic kept as overstrikes (`x\bx`, `_\bx`): italic is what the reader
            # replaces (an operand), not a word typed as is (a command)
            ["-mandoc", "-Tutf8", "-k", "-t", "-rHY=0", "-P-co"],
            stdin=(_LEFT_ONLY + source).encode("utf-8"),
            timeout=timeout,
            max_bytes=max_bytes,
        )
    except OSError:
        return None
    if captured.stopped:
        return None
    return captured.stdout.decode("utf-8", "replace")


def page_version(source: str) -> str | None:
    """The version a page's header names: the fourth argument of `.TH`, the package the
    page comes from ("GNU coreutils 9.1" → 9.1). Not from a collection of pages written
    apart from the tools ("Linux man-pages 6.03"), nor from mdoc's `.Os` (the system's
    name)."""
    header = re.search(r"^\.TH[ \t]+(.*)$", source, re.MULTILINE)
    if header is None:
        return None
    arguments = _roff_arguments(header.group(1))
    origin = arguments[3] if len(arguments) > 3 else ""
    if "man-pages" in origin.lower():
        return None
    match = _VERSION.search(origin)
    return match.group(1) if match else None


def _roff_arguments(line: str) -> list[str]:
    """A macro line's arguments: blank-separated, double quotes group, escapes for a
    hyphen, a space and nothing undone."""
    line = line.replace("\\-", "-").replace("\\&", "").replace("\\ ", "\x00")
    out = [
        m.group(1) if m.group(1) is not None else m.group(2)
        for m in re.finditer(r'"([^"]*)"?|(\S+)', line)
    ]
    return [a.replace("\x00", " ") for a in out]
