"""Subcommands documented in pages of their own (`git-commit(1)` for `git commit`).

Many tools with subcommands give each its own man page, named `TOOL-SUB`: git (150
pages), openssl (`openssl-x509(1ssl)`), ip (`ip-address(8)`), perf, devlink. Such a page
describes the subcommand as its `SUB --help` would, often better, and reading it runs
nothing — all a denied tool allows. `SubPages` finds them for one command (the tool, or a
subcommand of it: `git-remote-*` for `git remote`) in the index of pages, and reads them
as they are needed.

Which page documents which subcommand is read from the pages themselves, never from a
table:
- a subcommand the tool lists (`SUB`) is documented by the page `TOOL-SUB` when there is
  one; else by the one whose SYNOPSIS names it (`ip-neighbour(8)` says `ip neigh`), or the
  only one whose name it abbreviates (`ip addr` → `ip-address`);
- a page `TOOL-WORD` that the listing does not account for documents a subcommand `WORD`
  when its SYNOPSIS says so: `TOOL [options] WORD ...` (git's ~160 commands, of which
  `git --help` lists twenty). `systemd-analyze(1)` (`systemd-analyze [OPTIONS...]`) is a
  tool of its own, `tc-htb(8)` (`tc qdisc ... htb`) a part of another subcommand, and
  `openssl-format-options(1ssl)` (`openssl command ...`) no command at all; nor is
  `perf-script-perl(1)` (`perf script ...`): `script` shortens `script-perl`, but has a
  page of its own, whose part this one is.

A subcommand page's SYNOPSIS also names the subcommands below it: `git stash drop ...`,
`ip address { add | change | replace } ...`, `git stash [push ...]` (`synopsis_commands`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from atipkit.infer.helptext import ParsedCommand, usage_tokens
from atipkit.infer.manpage import BATCH, ManPage, ManPages, read_man_files
from atipkit.infer.synopsis import continued

_LITERAL = re.compile(r"[a-z][a-z0-9_.-]*")
"""A word written as it is typed: lower case, no placeholder marks (`<x>`, `X`, `x...`)."""
_OPTIONS_GROUP = re.compile(
    r"-.*|<?(?:[a-z]+[ _-])?(?:options?|opts|flags)>?(?:\s*\.\.\.)?", re.IGNORECASE
)
"""What a bracketed group holds when it is a place for options: `[-v | --verbose]`,
`[ OPTIONS ]`, `[<options>]`, `[global options]`, pip's `[<file-option>]`."""
_SLOTS = {"command", "commands", "subcommand", "cmd", "args", "arguments", "options", "help"}
"""Lower-case words that are the places of other words, not subcommands (`openssl command
[ options ]`); and `help`, which every tool has (decision 41)."""

_USAGE_START = re.compile(r"^\s*usage\s*:", re.IGNORECASE)
_FORM_PREFIX = re.compile(r"^\s*(?:usage|or)\s*:\s*", re.IGNORECASE)
"""What a help text writes before a usage form: `usage: git remote ...`, `   or: ...`."""

MAX_NAMED = 256
"""Subcommands a SYNOPSIS may name below one command (git's most: 14); a page of
thousands of forms names no more."""

Reader = Callable[[list[Path]], list["ManPage | None"]]


class SubPages:
    """The pages documenting the subcommands of `words` (`("git",)`, `("git", "remote")`)
    among `pages`, each read at most once, by `read` (default: `read_man_files` as the
    tool `words[0]`, within `timeout` seconds), several at a time."""

    def __init__(
        self,
        pages: ManPages,
        words: Sequence[str],
        *,
        timeout: float = 10.0,
        read: Reader | None = None,
    ) -> None:
        self.pages = pages
        self.words = tuple(words)
        self.candidates = pages.prefixed("-".join(self.words) + "-")
        self.timeout = timeout
        self._read = read or self._read_pages
        self._done: dict[Path, ManPage | None] = {}
        self.unread = False
        """Whether the last `match` left pages unread for want of time."""

    def __bool__(self) -> bool:
        return bool(self.candidates)

    def _read_pages(self, paths: list[Path]) -> list[ManPage | None]:
        return read_man_files([(p, self.words[0]) for p in paths], timeout=self.timeout)

    def read(self, paths: Iterable[Path], more: Callable[[], bool]) -> None:
        """Read those of `paths` not read yet, `BATCH` at a time while `more()` says there
        is time (`unread` notes when there is not)."""
        todo = [p for p in dict.fromkeys(paths) if p not in self._done]
        for start in range(0, len(todo), BATCH):
            if not more():
                self.unread = True
                return
            chunk = todo[start : start + BATCH]
            self._done.update(zip(chunk, self._read(chunk), strict=True))

    def below(self, name: str) -> SubPages:
        """The pages of the subcommands of subcommand `name` (`git-remote-*`)."""
        return SubPages(self.pages, (*self.words, name), timeout=self.timeout, read=self._read)

    def match(
        self, listed: Iterable[str], more: Callable[[], bool] = lambda: True
    ) -> tuple[dict[str, ManPage], list[tuple[str, ManPage]]]:
        """The page of each listed subcommand that has one, and the subcommands the
        listing leaves out that pages document, each with its page (in name order).
        Pages are read while `more()` says there is time; `{}, []` when there are none."""
        names = list(dict.fromkeys(listed))
        self.unread = False
        self.read((self.candidates[n] for n in names if n in self.candidates), more)
        found: dict[str, ManPage] = {}
        for name in names:
            page = self._done.get(self.candidates[name]) if name in self.candidates else None
            if page is not None:
                found[name] = page
        taken = {self.candidates[n] for n in found}
        rest = sorted((r, p) for r, p in self.candidates.items() if p not in taken)
        self.read((p for _, p in rest), more)
        documented: dict[str, tuple[set[str], ManPage]] = {}
        listed_pages = {Path(found[n].path).name.split(".")[0] for n in found}
        for word, path in rest:
            page = self._done.get(path)
            aliases = self.documents(page, word) if page is not None else set()
            if page is not None and aliases and not _synonym(page, listed_pages):
                documented[word] = (aliases, page)
        for name in names:
            if name in found:
                continue
            same = [r for r, (aliases, _) in documented.items() if name in aliases]
            short = [r for r, (aliases, _) in documented.items() if _abbreviates(name, aliases)]
            chosen = same if len(same) == 1 else short if len(short) == 1 else []
            if chosen:
                found[name] = documented.pop(chosen[0])[1]
        return found, [(word, page) for word, (_, page) in documented.items()]

    def documents(self, page: ManPage, rest: str) -> set[str]:
        """The names under which `page`, named `TOOL-rest`, documents the subcommand
        `rest` of `words`: those its SYNOPSIS gives it (`ip [ OPTIONS ] neigh ...` in
        `ip-neighbour`: `neigh`, `neighbour`); empty when the page is not that of a
        subcommand."""
        out: set[str] = set()
        for form in _forms(page.synopsis, self.words[0]):
            tokens = _skip(form, self.words[1:])
            if tokens is None:
                continue
            given, _ = _names_at(tokens)
            # `perf script ...` in perf-script-perl(1) is `script`'s page's, not a command
            shortened = [n for n in given if _abbreviates(n, {rest}) and n not in self.candidates]
            if rest in given or shortened:
                out.update([rest, *given])
        return out


_SYNONYM = re.compile(r"\bis an? (?:synonym|alias) (?:for|of) ([\w.+-]+)\(\w+\)", re.IGNORECASE)
"""How a page says it documents another page's command: "This is a synonym for
git-add(1)."."""


def _synonym(page: ManPage, listed: set[str]) -> bool:
    """Whether `page` opens by saying it is a synonym of a page of a listed subcommand
    (git-stage(1): "This is a synonym for git-add(1)"): `git stage` is `git add`, listed
    already, not a command of its own."""
    said = _SYNONYM.search(page.help.prose)
    return said is not None and said.group(1) in listed


def synopsis_commands(synopsis: str, words: Sequence[str]) -> list[ParsedCommand]:
    """The subcommands of `words` (`("git", "stash")`) that a SYNOPSIS (or the usage
    forms of a help text) names, in its order: the word after `git stash` in each of its
    forms (`git stash drop ...`), the alternatives of a `{ add | change }`, the first word
    of an optional `[ show ... ]`. A word reached only past options (`openssl rand [-help]
    ... num`) counts where the forms name two or more: a single one may be a placeholder
    written in lower case."""
    direct: list[str] = []
    later: list[str] = []
    for form in _forms(synopsis, words[0]):
        tokens = _skip(form, words[1:])
        if tokens is None:
            continue
        names, adjacent = _names_at(tokens)
        (direct if adjacent else later).extend(names)
    names = list(dict.fromkeys(direct + later))
    if len(names) < 2:
        names = list(dict.fromkeys(direct))
    return [ParsedCommand(n) for n in names if n not in words][:MAX_NAMED]


def usage_forms(text: str) -> str:
    """The usage forms of a help text: from its `usage:` line up to the first blank line
    (`usage: git remote ...`, `   or: git remote add ...`) that the next form does not
    follow — pip sets its forms in groups (`pip config ... list` / `... edit`, a blank
    line, `pip config ... get ...`): an indented line after a blank one that starts with
    the first form's first two words goes on (prose about the program, `  tool is ...`,
    does not); "" when it has none."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _USAGE_START.match(line)), None)
    if start is None:
        return ""
    block: list[str] = []
    program: list[str] = []
    blank = False
    for line in lines[start:]:
        words = _FORM_PREFIX.sub("", line).split()
        if not words:
            blank = blank or bool(program)
            continue
        if blank and (not line[:1].isspace() or len(program) < 2 or words[:2] != program):
            break  # a form was seen, and what follows the blank line is not one
        blank = False
        program = program or words[:2]
        block.append(line)
    return "\n".join(block)


def _abbreviates(name: str, full: set[str]) -> bool:
    """`addr` for `address`: a shorter start of one of `full`, of two letters at least."""
    return len(name) >= 2 and any(f.startswith(name) and f != name for f in full)


def _forms(synopsis: str, tool: str) -> list[list[str]]:
    """The usage forms of a SYNOPSIS, each as its tokens after the program's name: a form
    starts at a line whose first word is `tool` (or a path to it) and goes on over the
    lines below it up to a blank line, a definition (`IFADDR := ...`) or the next form."""
    forms: list[list[str]] = []
    current: list[str] | None = None
    for line in synopsis.split("\n"):
        line = _FORM_PREFIX.sub("", line)
        words = line.split()
        if not words or ":=" in line:
            current = None
            continue
        if words[0] == tool or words[0].endswith(f"/{tool}"):
            current = [line.split(None, 1)[1] if len(words) > 1 else ""]
            forms.append(current)
        elif current is not None:
            current.append(line)
    return [usage_tokens(functools.reduce(continued, lines)) for lines in forms]


def _skip(tokens: list[str], words: Sequence[str]) -> list[str] | None:
    """The tokens after `words` (options between them skipped: `git submodule [--quiet]
    add`), the first of them and any options before it kept; None when the form is not
    that of `words`. A word may be given under any name the form spells it by
    (`tcp_metrics/tcpmetrics`)."""
    index = 0
    for word in words:
        while index < len(tokens) and _is_options(tokens[index]):
            index += 1
        if index == len(tokens):
            return None
        names = _names(tokens[index])
        if word not in names and not _abbreviates_any(names, word):
            return None
        index += 1
    return tokens[index:]


def _abbreviates_any(names: list[str], word: str) -> bool:
    """Whether `word` is a shorter spelling of one of `names`, or one of them of it."""
    return _abbreviates(word, set(names)) or any(_abbreviates(n, {word}) for n in names)


def _names_at(tokens: list[str]) -> tuple[list[str], bool]:
    """The subcommand names at the start of `tokens` (options skipped), and whether no
    option came before them."""
    index = 0
    while index < len(tokens) and _is_options(tokens[index]):
        index += 1
    if index == len(tokens):
        return [], True
    return _names(tokens[index], optional=True), index == 0


def _names(token: str, *, optional: bool = False) -> list[str]:
    """The literal words a token stands for: `add`, `tcp_metrics/tcpmetrics`, `{ add |
    change }`; with `optional`, also the first word of `[ show ... ]` and the names of
    `[ add | change | delete ]`."""
    if token.startswith(("{", "(")):
        inner = token[1:-1] if token[-1:] in "})" else token[1:]
        parts = [p.strip() for p in inner.split("|")]
        if all(_LITERAL.fullmatch(p) for p in parts if p) and len(parts) > 1:
            return [p for p in parts if p and p not in _SLOTS]
        return [p for p in parts if _LITERAL.fullmatch(p) and p not in _SLOTS and p.strip()]
    if token.startswith("["):
        if not optional:
            return []
        inner = token[1:].rstrip("]")
        choices = [c.strip() for c in inner.split("|")]
        if len(choices) > 1 and all(_LITERAL.fullmatch(c) for c in choices):
            return [c for c in choices if c not in _SLOTS]  # `[ add | change | delete ]`
        first = usage_tokens(inner)
        return _names(first[0]) if first and not first[0].startswith("[") else []
    parts = token.split("/")
    if all(_LITERAL.fullmatch(p) for p in parts):
        return [p for p in parts if p not in _SLOTS]
    return []


def _is_options(token: str) -> bool:
    if token.startswith("-"):
        return True
    if token.startswith(("[", "(")):
        inner = token[1:].rstrip("])").strip()
        return bool(_OPTIONS_GROUP.fullmatch(inner)) or inner.startswith("-")
    return False
