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
directories; sections 1, 8 and 6), and `read_man_file` decompresses one, follows a `.so`
redirect and renders it with `groff -mandoc` in the probe's sandbox, fed on stdin — what
`man` itself runs, without its start. Nothing of the tool is run.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

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
    """Options the man page adds to a short `--help`, and spellings it adds to options
    the help has (`-s` gains `--slurp`), and the value it names for one where the help
    names none (wget's help lists `--hsts-file` bare, its page `--hsts-file=file`); the
    commands it lists that the help leaves out (tmux's help lists none, apt-get's not
    `changelog`); the page's description (its NAME line, written to be one) over the
    first line of the help (which may be an error message: ssh answers `--help` with
    `unknown option -- -`)."""
    known = {f for o in base.options for f in o.flags}
    for option in extra.options:
        owners = [o for o in base.options if set(o.flags) & set(option.flags)]
        if not owners:
            base.options.append(option)
            known.update(option.flags)
        elif len(owners) == 1:  # the same option; several owners: the page is ambiguous
            owner = owners[0]
            owner.flags += [f for f in option.flags if f not in known]
            known.update(option.flags)
            owner.description = owner.description or option.description
            if option.metavar and not owner.metavar:  # a terse help names no value
                owner.metavar, owner.optional_value = option.metavar, option.optional_value
    listed = {c.name: c for c in base.commands}
    for command in extra.commands:
        if command.name not in listed:
            base.commands.append(command)
        else:
            known = listed[command.name]
            known.description = known.description or command.description
            known.args = known.args or command.args
    base.description = extra.description or base.description  # a page's NAME line is curated


# -- page files ------------------------------------------------------------------------------


class ManPage(msgspec.Struct, kw_only=True):
    """A page read from its file: what it says, the version its header names (if any),
    and where it was."""

    help: ParsedHelp
    version: str | None
    path: str


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
    run of `man -w`.

    For each name, the first page wins by root order, then section (1, 8, 6), and a page
    of exactly the section (`passwd.1`) over one of a sub-section (`passwd.1ssl`, OpenSSL's
    command of that name)."""

    def __init__(self, roots: Iterable[Path] | None = None) -> None:
        best: dict[str, tuple[tuple[int, int, bool, str], Path]] = {}
        for root_rank, root in enumerate(manpath() if roots is None else roots):
            for section_rank, section in enumerate(SECTIONS):
                directory = Path(root) / f"man{section}"
                try:
                    files = os.listdir(directory)
                except OSError:
                    continue
                for file in files:
                    parsed = _page_name(file, section)
                    if parsed is None:
                        continue
                    name, exact = parsed
                    rank = (root_rank, section_rank, not exact, file)
                    if name not in best or rank < best[name][0]:
                        best[name] = (rank, directory / file)
        self._pages = {name: path for name, (_, path) in best.items()}

    def find(self, *names: str) -> Path | None:
        """The page of the first of `names` that has one."""
        return next((self._pages[n] for n in names if n in self._pages), None)


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
    source = _page_source(Path(path))
    if source is None:
        return None
    text = render(mark_tables(source), timeout=timeout)
    parsed = parse_man_text(text, name) if text else None
    if parsed is None:
        return None
    return ManPage(help=parsed, version=page_version(source), path=os.fspath(path))


def _page_source(path: Path, hops: int = 3) -> str | None:
    """The roff text of a page with its `.so` requests replaced by the files they name
    (`.so man1/bash.1`, relative to the directory above the section's), as `soelim`
    does for `man`: a whole page may be one (`init.1` → `systemd.1`), or a part of one."""
    raw = _read_limited(path)
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    if ".so " not in text:
        return text
    out = []
    for line in text.split("\n"):
        if line.startswith(".so ") and hops:
            target = path.parent.parent / line[4:].strip()
            found = next(
                (
                    c
                    for c in (target, *(Path(f"{target}{ext}") for ext in _COMPRESSED))
                    if c.is_file()
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
    from atipkit.probe import run_sandboxed

    groff = shutil.which("groff")
    if groff is None:
        return ""
    # Left-adjusted, not justified: justification pads prose with runs of spaces, and
    # two spaces after a line's first word is how a listing separates a name from its
    # description ("gpg  may  be  run" would read as a command `gpg`).
    source = _TITLE.sub(lambda m: f"{m.group(0)}\n.ad l", source, count=1)
    try:
        captured = run_sandboxed(
            groff,
            # no hyphenation: a word broken across lines ("screen-" / "ful") would
            # leave its tail at the start of a line, where it reads as a name; bold and
            # italic kept as overstrikes (`x\bx`, `_\bx`): italic is what the reader
            # replaces (an operand), not a word typed as is (a command)
            ["-mandoc", "-Tutf8", "-k", "-t", "-rHY=0", "-P-co"],
            stdin=source.encode("utf-8"),
            timeout=timeout,
            max_bytes=4 * MAX_PAGE_BYTES,
        )
    except OSError:
        return ""
    if captured.stopped:
        return ""
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
