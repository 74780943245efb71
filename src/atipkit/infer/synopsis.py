"""What a synopsis says about subcommands: who it calls, where a command goes, which
commands it names there.

A man page's SYNOPSIS (and a help text's usage) is written in a convention every page
shares: the program's words, option groups in brackets, then the operands — and where
the program takes a command, either a placeholder for it (`COMMAND`, `<command>`,
`OBJECT`) or the commands themselves, typed as they stand: one form each (`git remote
add ...` / `git remote rename ...`), a group of alternatives (`apt-get {update |
upgrade | ...}`), or the placeholder's definition (`OBJECT := { link | address }`).
What the reader replaces is set in italic (`umount {directory|device}`): an operand, not
a command. Nothing here knows a tool.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

from atipkit.infer.helptext import options_from_tag, usage_tokens

COMMAND_SLOT = re.compile(r"<command>|\b(?:COMMAND|command)\b|\{\s*[a-z][^{}|]*\|\s*[a-z]")
"""A place for a subcommand in a synopsis: `git ... <command> [<args>]`, `perf ... COMMAND`,
`apt-get ... {update | upgrade | ...}`. One class after the group's first letter
(`[\\w-]*[^{}|]*` cuts a long word in every way: quadratic)."""
_NAME = re.compile(r"[a-z0-9][a-z0-9_.+:-]*")
_SLOT_WORD = re.compile(r"<?(?:sub)?(?:command|cmd)>?", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"[A-Z][A-Z_-]*")
_BROKEN = re.compile(r"[a-z]-")


class Form(NamedTuple):
    """A synopsis form and its words, option groups left out (`[-v | --verbose]`,
    `[OPTIONS...]`), a bracketed group one word."""

    text: str
    words: list[str]


def form(text: str) -> Form:
    return Form(text, [t for t in usage_tokens(text) if not _is_option_group(t)])


def broken(text: str) -> bool:
    """Whether a line ends in a word groff broke at its hyphen (`... | is-` of
    `is-enabled`): the next line goes on with that word, at whatever indent."""
    return _BROKEN.fullmatch(text[-2:]) is not None  # its end alone: a form may be long


def continued(text: str, line: str) -> str:
    """A form's text with its next line: after a space, or right after a broken word
    (`... | is-` / `enabled | ...`: `is-enabled`, not a name `is-`)."""
    return text + line.strip() if broken(text) else f"{text} {line.strip()}"


def program(forms: list[Form], names: list[str]) -> list[str]:
    """The words that call what the page is about: of `names` (the page's own name,
    the name it was looked up by), the longest that some form starts with, by words
    (`git remote` for git-remote(1), whose synopsis says `git remote add ...`); else
    the last name."""
    candidates = {n for name in names for n in (name, name.replace("-", " ")) if n.strip()}
    for candidate in sorted(candidates, key=len, reverse=True):
        if any(calls(f, candidate.split()) for f in forms):
            return candidate.split()
    return [names[-1]]  # never empty: a form cannot start with it unless it is a word


def calls(form: Form, program: list[str]) -> bool:
    """Whether a form starts with the program's words (by any path)."""
    return [w.rsplit("/", 1)[-1] for w in form.words[: len(program)]] == program


def takes_command(forms: list[Form], program: list[str]) -> bool:
    """Whether a form of the program has a place for a command."""
    return any(COMMAND_SLOT.search(f.text) for f in forms if calls(f, program))


def slot(forms: list[Form], program: list[str]) -> str | None:
    """The placeholder the first form of the program has where a command goes
    (`OBJECT`, `COMMAND`, gcloud's `GROUP | COMMAND`)."""
    ours = [f for f in forms if calls(f, program)]
    rest = ours[0].words[len(program) :] if ours else []
    word = rest[0].strip("<>{}") if rest else ""
    return word if _PLACEHOLDER.fullmatch(word) else None


def commands(forms: list[Form], program: list[str], replaceable: set[str]) -> dict[str, str]:
    """The names the forms give in the command's place, each with what follows it there:
    after the program's words (`git remote add [-t <branch>] ...`), the alternatives of
    a group (`{update | upgrade | install pkg...}`, and of each group the form offers
    after a `|` of its own), and the definition of the place's placeholder (`OBJECT :=
    { link | address }`); an optional one (`ip address [ show [ dev IFNAME ] ]`) where
    others are named too. Two names at least, else what stands
    there is an operand (`mount ... device mountpoint`); a word in `replaceable` (set in
    italic) is one too, unless the program's own name is (asciidoc sets `git remote
    add` in italic whole)."""
    if program[0] in replaceable:
        replaceable = set()
    found: dict[str, str] = {}
    optional: dict[str, str] = {}
    place = slot(forms, program)
    for each in forms:
        words = each.words
        if place and len(words) > 2 and words[0] == place and words[1] == ":=":
            for word, _ in _alternatives(words[2]):
                found.setdefault(word, "")
            continue
        rest = words[len(program) :] if calls(each, program) else []
        if not rest or rest[0] in replaceable:
            continue
        head, args = rest[0], " ".join(rest[1:])
        bare = _bare_alternatives(rest)
        if bare:
            for word, more in bare:
                found.setdefault(word, more)
        elif is_name(head) and len(head) > 1:
            found.setdefault(head, args)
        elif head.startswith("{"):
            # `{hold | unhold} pkg... | {showhold | showinstall} [pkg...]`: a form's own
            # choices, each a group after a `|` of the form
            groups = [head] + [g for bar, g in itertools.pairwise(rest) if bar == "|"]
            for group in groups:
                for word, more in _alternatives(group):
                    found.setdefault(word, more)
        elif head.startswith("["):
            inner = head[1:-1].split(None, 1)
            if inner and is_name(inner[0]) and len(inner[0]) > 1:
                optional.setdefault(inner[0], inner[1] if len(inner) > 1 else "")
    found = {k: v for k, v in found.items() if k not in replaceable}
    if found:
        for word, args in optional.items():
            if word not in replaceable:
                found.setdefault(word, args)
    return found if len(found) >= 2 else {}


def children(forms: list[Form], program: list[str]) -> dict[str, list[str]]:
    """The commands the forms name below a command they name: the alternatives of a group
    right after it, `tc [ OPTIONS ] qdisc [ add | change | replace ] dev DEV ...` and
    `tc ... qdisc { show | list } ...` (qdisc: add, change, replace, show, list); an
    optional placeholder before the command (`[ FORMAT ]`) is passed over. Only groups
    of two lower-case names at least, none a single letter (`_alternatives`): `[ parent
    ID | root ]` is an operand's."""
    out: dict[str, list[str]] = {}
    for each in forms:
        if not calls(each, program):
            continue
        rest = each.words[len(program) :]
        while rest and _placeholder_group(rest[0]):
            rest = rest[1:]
        if len(rest) < 2 or not is_name(rest[0]) or len(rest[0]) < 2:
            continue
        below = out.setdefault(rest[0], [])
        below += [w for w, _ in _alternatives(rest[1], optional=True) if w not in below]
    return {name: below for name, below in out.items() if below}


def options_follow_command(forms: list[Form], program: list[str]) -> bool:
    """Whether the program's first form puts its options after the command's place
    (`openssl command [ options ... ]`, `pip <command> [options]`): then the options a
    page lists are its commands', not the program's own."""
    ours = [f for f in forms if calls(f, program)]
    if not ours:
        return False
    tokens = usage_tokens(ours[0].text)
    words = [t.rsplit("/", 1)[-1] for t in tokens]
    at = len(program) if words[: len(program)] == program else 0
    if at == 0 or at >= len(tokens) or not COMMAND_SLOT.fullmatch(tokens[at].strip("<>")):
        return False
    rest = tokens[at + 1 :]
    return bool(rest) and _is_option_group(rest[0]) and not rest[0].strip("[] ").startswith("-")


def values(forms: list[Form]) -> dict[str, tuple[str, bool]]:
    """The flags the forms show with a value, each with its placeholder and whether it is
    optional: `[-o=config_string]`, `[-t target_release]`, `[-D [bind_address:]port]`
    (a DocBook page's entry may give only `-o, --option`)."""
    out: dict[str, tuple[str, bool]] = {}
    for each in forms:
        for token in usage_tokens(each.text):
            if not _is_option_group(token):
                continue
            for choice in split_outside(token.strip()[1:-1], "|"):
                for option in options_from_tag(choice.strip()):
                    for flag in option.flags:
                        if option.metavar:
                            out.setdefault(flag, (option.metavar, option.optional_value))
    return out


def is_name(word: str) -> bool:
    """A word that can name a command: lower-case, not a sentence's end (`below.`), not
    the place of one (`command`, `subcommand`)."""
    return bool(_NAME.fullmatch(word)) and not word.endswith(".") and not _SLOT_WORD.fullmatch(word)


def _is_option_group(token: str) -> bool:
    inner = token.strip("[] ")
    return token.startswith("[") and (
        inner.startswith("-") or inner.rstrip(". ").upper() in ("OPTIONS", "OPTION", "FLAGS")
    )


def _placeholder_group(token: str) -> bool:
    """An optional placeholder in capitals: `[ FORMAT ]`."""
    return token.startswith("[") and bool(_PLACEHOLDER.fullmatch(token.strip("[] ")))


def _alternatives(
    group: str, *, optional: bool = False, nested: bool = False
) -> list[tuple[str, str]]:
    """The commands a `{a | b args | c}` group offers, each with its arguments; none
    when one is a single letter or a value (`{A|c|d}` are tar's modes, not commands).
    With `optional`, a bracketed group of names alone (`[ add | delete ]`) offers them
    too: one whose choices take words (`[ parent ID | root ]`) is an operand's. A choice
    that is a group itself offers its names, with the words after it (apt-mark's
    `{auto | manual} pkg...`): one level down, no more."""
    group = group.strip()
    closes = "}]" if optional else "}"
    inner = group[1:-1] if group[:1] in "{[" and group.endswith(tuple(closes)) else ""
    if group.startswith("[") and any(len(c.split()) != 1 for c in split_outside(inner, "|")):
        return []
    out = []
    for choice in split_outside(inner, "|"):
        inside, rest = ("", "") if nested else _leading_group(choice)
        if inside:  # apt-mark's `{-f=filename | {auto | manual} pkg... | ...}`
            out += [(word, rest) for word, _ in _alternatives(inside, nested=True)]
            continue
        words = choice.split(None, 1)
        if not words or words[0].startswith(("-", "{", "[")):
            continue
        if not is_name(words[0]):
            if words[0].isupper() or _SLOT_WORD.fullmatch(words[0]):
                continue  # a placeholder: `{ COMMAND | help }`
            return []
        if len(words[0]) < 2:
            return []
        out.append((words[0], words[1] if len(words) > 1 else ""))
    return out if len(out) >= 2 else []


def _bare_alternatives(rest: list[str]) -> list[tuple[str, str]]:
    """The names a form offers as alternatives outside any group, each with the words
    after the last of them: `enable | disable | ... | reenable unit file ...`
    (deb-systemd-helper(1p)), `start|stop|restart unit file ...`. Two at least, each a
    name of two letters or more, else none (`a|b` may be a value's letters)."""
    names = rest[0].split("|")
    at = 1
    while at + 1 < len(rest) and rest[at] == "|":
        names += rest[at + 1].split("|")
        at += 2
    if len(names) < 2 or not all(is_name(n) and len(n) > 1 for n in names):
        return []
    more = " ".join(rest[at:])
    return [(name, more) for name in names]


def _leading_group(choice: str) -> tuple[str, str]:
    """(`{...}`, what follows it) when a choice starts with a group of its own, else
    ("", "")."""
    if not choice.startswith("{"):
        return "", ""
    depth = 0
    for at, ch in enumerate(choice):
        depth += 1 if ch in "[{<(" else -1 if ch in "]}>)" else 0
        if depth == 0:
            return choice[: at + 1], choice[at + 1 :].strip()
    return "", ""


def split_outside(text: str, separator: str) -> list[str]:
    """`text` split at `separator` where no bracket is open: `a | b [x|y] | c` at `|`
    → `a`, `b [x|y]`, `c`."""
    out, depth, current = [], 0, ""
    for ch in text:
        depth += 1 if ch in "[{<(" else -1 if ch in "]}>)" else 0
        if ch == separator and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    out.append(current.strip())
    return out
