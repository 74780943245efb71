"""Reading a rendered man page by its layout: sections, tagged paragraphs, the synopsis.

Help text is read line by line (`helptext`); a page is not help text. groff lays it out
in a few shapes, and what a line is follows from its place among them, never from what
tool the page is about:

- a *heading* starts at column 0 (`.SH`), a *sub-heading* at 1–4 (`.SS`, `.Ss`);
- a *tagged paragraph* (`.TP`, `.IP`, mdoc's `.It`) is a tag at some indent followed by
  its description deeper: on the next line, or on the tag's own line after a gap when
  the tag is short (`-4     shortcut for -family inet.`);
- a line that continues a paragraph (the line above it is text at the same indent or
  shallower) is never a tag, whatever it starts with: `--failed are used, units...` in
  prose is not an option;
- a table (`.TS`/`.TE`, marked in the source before rendering by `mark_tables`) and a
  box drawn with line characters hold cells, never tags.

Options are the tags that start with `-`. Subcommands are the tags at the base indent
of a section whose heading names commands (COMMANDS, "Unit Commands", "HIGH-LEVEL
COMMANDS", and every sub-section of such a section), or of a section where the synopsis
names some of them (apt-get lists its commands in DESCRIPTION), or anywhere when the tag
is a command's own synopsis (`attach-session [-dErx] [-t target-session]`), shaped
`name [ARGS...]`; and the names the synopsis gives in the command's place (`apt-get
{update | upgrade | ...}`, `git remote add ...` / `git remote rename ...`, `OBJECT :=
{ link | address | ... }`). Examples' output, values, unit names and cells are deeper than
the listing or not tags at all. A page whose synopsis takes no command has none.

Linear in the page: every line is looked at a bounded number of times (a tag's
description is read up to `_DESCRIPTION_CHARS`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from atipkit.infer.helptext import (
    ParsedCommand,
    ParsedHelp,
    ParsedOption,
    finish,
    option_from_tag,
    parse_help,
)

TABLE_MARK = "\u2063"
"""A line holding only this character (INVISIBLE SEPARATOR) starts or ends a table."""
COMMAND_SLOT = re.compile(r"<command>|\b(?:COMMAND|command)\b|\{\s*[a-z][\w-]*[^{}|]*\|\s*[a-z]")
"""A place for a subcommand in a synopsis: `git ... <command> [<args>]`, `perf ... COMMAND`,
`apt-get ... {update | upgrade | ...}`."""

_NAME_LINE = re.compile(r"NAME\s*\n\s*\S+(?:,\s*\S+)*\s+[-—–]+\s*(.+)")
_BULLET_OPTION = re.compile(r"^(?P<indent>\s+)[•○◦·*]\s+(?P<spec>-\S.*?):?\s*$")
_ALTERNATIVES = re.compile(r"\s*/\s*(?=-)")
_BOX = re.compile(r"^\s*[│┃║┌┏╔├┣╠└┗╚─━═┬┴┼╭╰]")
_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|.\x08")
_COMMANDS_HEADING = re.compile(r"\bcommands?\b", re.IGNORECASE)
_NOT_COMMANDS_HEADING = re.compile(r"command[- ]line|option|argument|operand", re.IGNORECASE)
_NO_OPTIONS_HEADING = re.compile(r"example|operator", re.IGNORECASE)
"""Sections whose tags are not options: an example's command line, find's `-not expr`
(an operator joins expressions; it sets nothing)."""
_NAME = re.compile(r"[a-z0-9][a-z0-9_.+:-]*")
_PAGE_REF = re.compile(r"(?P<name>[\w.+-]+)\((?P<section>\d\w*)\)")
_PLACEHOLDER = re.compile(
    r"(?:[\[{<(].*|\.\.\.|\||[A-Z][A-Z0-9_]*(?:[=:.,|/-][\w.,|/=:-]*)?(?:\.\.\.)?[\]}>)]*)"
)
"""A word that stands for a value in a command's tag: `[PATTERN...]`, `UNIT...`,
`PROPERTY=VALUE...`, `<name>`, `{a|b}`, `...`, `|`."""
_DESCRIPTION_CHARS = 400
"""Enough of a description for what is kept of it (200 characters, decision 43)."""
_STACK = 8
"""At most so many option tags stacked above one description (`-o logfile` /
`--output-file=logfile`)."""
_FILLED = 66
"""A line reaching this column was filled up to the margin (groff's is at 78)."""
_TAG_LINES = 4
"""A tag whose brackets are still open continues on at most so many lines."""


class _Line(NamedTuple):
    indent: int
    text: str  # stripped; "" for a blank line, a cell of a table, a line of a box


class _Block(NamedTuple):
    """A section, or a sub-section of one, as lines [start, end) of the page."""

    title: str
    sub: str
    start: int
    end: int


class _Entry(NamedTuple):
    """A tagged paragraph: its tag, the start of its description, where it stands."""

    tag: str
    description: str
    indent: int
    block: int


def read_page(text: str, name: str) -> ParsedHelp | None:
    """What a rendered page says: its NAME line as the description, its SYNOPSIS as the
    usage line, its options and subcommands by layout, its examples. None for an empty
    page."""
    if not text.strip():
        return None
    lines = _lines(_unbullet(_ESCAPES.sub("", text).expandtabs(8)))
    _drop_header_and_footer(lines)
    blocks = _blocks(lines)
    entries = _entries(lines, blocks)
    forms = _synopsis(lines, blocks)
    help_ = ParsedHelp(usage=forms[0] if forms else "")
    line = _NAME_LINE.search(text)
    help_.description = line.group(1).strip() if line else ""
    help_.options = _options(entries, blocks)
    program = _program(forms, _page_name(text) or name, name)
    listed = _synopsis_commands(forms, program)
    if listed or any(COMMAND_SLOT.search(form) for form in forms):
        help_.commands = _commands(entries, blocks, lines, listed, forms, program)
    help_.examples = _examples(lines, blocks, name)
    return finish(help_, name)


def mark_tables(source: str) -> str:
    """roff source with each table (`.TS` … `.TE`) between two lines of `TABLE_MARK`:
    groff renders a table as aligned columns, which nothing else in the rendered text
    tells from a listing; the marks survive rendering and `read_page` skips what is
    between them."""
    if ".TS" not in source:
        return source
    mark = f".br\n\\[u{ord(TABLE_MARK):04X}]\n.br"
    source = re.sub(r"^\.TS\b", lambda m: f"{mark}\n{m.group(0)}", source, flags=re.MULTILINE)
    return re.sub(r"^\.TE\b.*$", lambda m: f"{m.group(0)}\n{mark}", source, flags=re.MULTILINE)


# -- lines and blocks ------------------------------------------------------------------------


def _lines(text: str) -> list[_Line]:
    """The page's lines with their indents; a table's rows and a box's lines blank (a
    table left open at the end of the page is not one)."""
    raw_lines = text.split("\n")
    marks = [i for i, raw in enumerate(raw_lines) if TABLE_MARK in raw]
    tables = list(zip(marks[::2], marks[1::2], strict=False))
    out: list[_Line] = []
    table = 0
    for index, raw in enumerate(raw_lines):
        while table < len(tables) and tables[table][1] < index:
            table += 1
        stripped = raw.strip()
        inside = table < len(tables) and tables[table][0] <= index <= tables[table][1]
        if inside or not stripped or _BOX.match(raw) or TABLE_MARK in raw:
            out.append(_Line(0, ""))
        else:
            out.append(_Line(len(raw) - len(raw.lstrip()), stripped))
    return out


def _drop_header_and_footer(lines: list[_Line]) -> None:
    """Blank the page's header and footer: its first and last lines, at column 0 with
    runs of spaces in them (`LS(1)   User Commands   LS(1)`)."""
    filled = [i for i, line in enumerate(lines) if line.text]
    for index in {*filled[:1], *filled[-1:]}:
        if lines[index].indent == 0 and "   " in lines[index].text:
            lines[index] = _Line(0, "")


def _blocks(lines: list[_Line]) -> list[_Block]:
    """Sections (a heading at column 0) and sub-sections (a heading at 1–4)."""
    out: list[_Block] = []
    title, sub, start = "", "", 0
    for index, line in enumerate(lines):
        if not line.text:
            continue
        if line.indent == 0 or (line.indent <= 4 and title):
            if index > start:
                out.append(_Block(title, sub, start, index))
            if line.indent == 0:
                title, sub = line.text, ""
            else:
                sub = line.text
            start = index + 1
    out.append(_Block(title, sub, start, len(lines)))
    return [b for b in out if b.end > b.start]


def _entries(lines: list[_Line], blocks: list[_Block]) -> list[_Entry]:
    """Every tagged paragraph of every block, in page order."""
    out: list[_Entry] = []
    for number, block in enumerate(blocks):
        if not block.sub and block.title.upper() in ("NAME", "SYNOPSIS"):
            continue  # a synopsis form wraps deeper: it is no tag
        column = _description_column(lines, block)
        index = block.start
        while index < block.end:
            found = _entry_at(lines, block, index, column)
            if found is None:
                index += 1
                continue
            tag, description, last = found
            out.append(_Entry(tag, description, lines[index].indent, number))
            index = last + 1
    return out


def _description_column(lines: list[_Line], block: _Block) -> int | None:
    """Where this block's descriptions start when a tag stands alone on its line (the
    `.TP` indent): the most common indent under such tags."""
    seen: Counter[int] = Counter()
    for index in range(block.start, block.end - 1):
        line, below = lines[index], lines[index + 1]
        if line.text and below.text and below.indent > line.indent and "  " not in line.text:
            seen[below.indent] += 1
    return seen.most_common(1)[0][0] if seen else None


def _entry_at(
    lines: list[_Line], block: _Block, index: int, column: int | None
) -> tuple[str, str, int] | None:
    """(tag, description, last line of the tag) when a tagged paragraph starts at
    `index`: it starts a paragraph, and a description follows deeper or beside it."""
    line = lines[index]
    if not line.text:
        return None
    above = lines[index - 1] if index > block.start else _Line(0, "")
    if above.text and above.indent <= line.indent:
        return None  # the paragraph goes on
    last = index
    # stacked option tags: `-o logfile` / `--output-file=logfile`, then the description
    while (
        lines[last].text.startswith("-")
        and last + 1 < block.end
        and last - index < _STACK
        and lines[last + 1].indent == line.indent
        and lines[last + 1].text.startswith("-")
        and "  " not in lines[last].text
    ):
        last += 1
    if last > index and not _deeper(lines, block, last):
        last = index
    tag = " ".join(lines[i].text for i in range(index, last + 1))
    # a tag whose brackets are open goes on below: `attach-session [-dErx] [-t` /
    # `target-session]`
    while tag.count("[") > tag.count("]") and last + 1 < block.end and last - index < _TAG_LINES:
        if not lines[last + 1].text:
            break
        last += 1
        tag = f"{tag} {lines[last].text}"
    beside = ""
    below = lines[last + 1] if last + 1 < block.end else _Line(0, "")
    wrapped = below.text and below.indent == column and line.indent + len(line.text) >= _FILLED
    alone = not below.text or below.indent < line.indent
    split = _split_tag(line, column if last == index and (wrapped or alone) else None)
    if split is not None and last == index:
        tag, beside = split
    elif split is not None and tag.count("[") > tag.count("]"):
        return None
    if not beside and not _deeper(lines, block, last):
        return None
    return tag, _description(lines, block, last, line.indent, beside), last


def _deeper(lines: list[_Line], block: _Block, index: int) -> bool:
    return (
        index + 1 < block.end
        and bool(lines[index + 1].text)
        and (lines[index + 1].indent > lines[index].indent)
    )


def _split_tag(line: _Line, column: int | None) -> tuple[str, str] | None:
    """A tag and the description beside it on one line: after a run of spaces, or one
    space where the block's descriptions start (`-force Don't terminate ip ...`, `cms
    CMS command.`; the caller passes `column` only where that can be: a tag too wide for
    that place stands alone with its description below, and `cat PATTERN...` looks the
    same). Two spaces after a sentence's end are prose."""
    text = line.text
    if column is not None and column > line.indent:
        at = column - line.indent
        left = text[: at - 1].strip()
        # `-t, --type=`: a list of flags goes on
        if len(text) > at and text[at - 1] == " " and text[at] != " " and left[-1:] not in ",":
            return left, text[at:].strip()
    gap = re.search(r"\S(\s{2,})\S", text)
    if gap is None or text[gap.start(1) - 1] in ".!?:;":
        return None
    return text[: gap.start(1)].strip(), text[gap.end(1) :].strip()


def _description(lines: list[_Line], block: _Block, last: int, indent: int, beside: str) -> str:
    """The first paragraph under a tag (the lines deeper than it up to a blank one)."""
    words = [beside] if beside else []
    size = len(beside)
    index = last + 1
    while index < block.end and size < _DESCRIPTION_CHARS:
        line = lines[index]
        if not line.text or line.indent <= indent:
            break
        words.append(line.text)
        size += len(line.text) + 1
        index += 1
    return " ".join(words)


# -- options ---------------------------------------------------------------------------------


def _options(entries: list[_Entry], blocks: list[_Block]) -> list[ParsedOption]:
    out = []
    for entry in entries:
        block = blocks[entry.block]
        heading = f"{block.title} {block.sub}"
        if not entry.tag.startswith("-") or _NO_OPTIONS_HEADING.search(heading):
            continue
        option = option_from_tag(entry.tag, entry.description)
        if option is not None:
            out.append(option)
    return out


def _unbullet(text: str) -> str:
    """Pages written in Markdown and converted (ronn, pandoc) list options as bullets,
    the description a paragraph below: `•   --slurp/-s:` + blank + indented paragraph
    becomes `--slurp, -s  paragraph`; `--color / -C and --mono / -M` are two options
    sharing the paragraph, `--slurp/-s` one with two spellings."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        match = _BULLET_OPTION.match(lines[index])
        index += 1
        if match is None:
            out.append(lines[index - 1])
            continue
        start = index
        while start < len(lines) and not lines[start].strip():
            start += 1
        end = start
        deeper = len(match.group("indent")) + 2
        while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) >= deeper:
            end += 1
        paragraph = " ".join(line.strip() for line in lines[start:end] if line.strip())
        for spec in re.split(r"\s+and\s+(?=-)", match.group("spec")):
            spec = ", ".join(_ALTERNATIVES.split(spec))
            out += ["", f"{match.group('indent')}{spec}  {paragraph}".rstrip()]
        index = end
    return "\n".join(out)


# -- the synopsis ----------------------------------------------------------------------------


def _synopsis(lines: list[_Line], blocks: list[_Block]) -> list[str]:
    """The synopsis's forms, each joined from the line that starts it and the deeper
    lines that continue it."""
    block = next((b for b in blocks if b.title.upper() == "SYNOPSIS" and not b.sub), None)
    if block is None:
        return []
    base = min((lines[i].indent for i in range(block.start, block.end) if lines[i].text), default=0)
    forms: list[str] = []
    for index in range(block.start, block.end):
        line = lines[index]
        if not line.text:
            continue
        if line.indent <= base or not forms:
            forms.append(line.text)
        else:
            forms[-1] = f"{forms[-1]} {line.text}"
    return forms


def _page_name(text: str) -> str | None:
    match = re.search(r"NAME\s*\n\s*([^\s,]+)", text)
    return match.group(1) if match else None


def _program(forms: list[str], page_name: str, name: str) -> list[str]:
    """The words that call what the page is about: `git remote` for git-remote(1), whose
    synopsis says `git remote add ...`; the first word of the synopsis otherwise."""
    candidates = [page_name, page_name.replace("-", " "), name, name.replace("-", " ")]
    for form in forms:
        words = _skip_options(_tokens(form))
        for candidate in sorted(set(candidates), key=len, reverse=True):
            wanted = candidate.split()
            if [w.rsplit("/", 1)[-1] for w in words[: len(wanted)]] == wanted:
                return wanted
    first = _tokens(forms[0]) if forms else []
    return [first[0].rsplit("/", 1)[-1]] if first else [name]


def _tokens(form: str) -> list[str]:
    """A synopsis form's words, a bracketed group kept whole: `[-t <branch>]`."""
    tokens: list[str] = []
    depth, current = 0, ""
    for ch in form:
        if ch in "[{<(":
            depth += 1
        elif ch in "]}>)":
            depth = max(0, depth - 1)
        if ch.isspace() and depth == 0:
            if current:
                tokens.append(current)
            current = ""
        else:
            current += ch
    if current:
        tokens.append(current)
    return tokens


def _skip_options(tokens: list[str]) -> list[str]:
    """Tokens without the option groups (`[-v | --verbose]`, `[ OPTIONS ]`)."""
    return [t for t in tokens if not _is_option_group(t)]


def _is_option_group(token: str) -> bool:
    inner = token.strip("[] ")
    return token.startswith("[") and (
        inner.startswith("-") or inner.rstrip(".").upper() in ("OPTIONS", "OPTION", "FLAGS")
    )


def _synopsis_commands(forms: list[str], program: list[str]) -> dict[str, str]:
    """The names the synopsis gives in the command's place, with what follows them
    there: after the program's words in each form (`git remote add [-t <branch>] ...`),
    the alternatives of a group (`{update | upgrade | install pkg...}`), and the
    definition of the place's placeholder (`OBJECT := { link | address }`). Two names
    at least, else what stands there is an operand (`mount ... device mountpoint`)."""
    found: dict[str, str] = {}
    optional: dict[str, str] = {}
    slot = _slot(forms, program)
    for form in forms:
        tokens = _skip_options(_tokens(form))
        if slot and len(tokens) > 2 and tokens[0] == slot and tokens[1] == ":=":
            for alternative in _alternatives(tokens[2]):
                found.setdefault(alternative[0], "")
            continue
        if [t.rsplit("/", 1)[-1] for t in tokens[: len(program)]] != program:
            continue
        rest = tokens[len(program) :]
        if not rest:
            continue
        head, args = rest[0], " ".join(rest[1:])
        if _NAME.fullmatch(head) and not COMMAND_SLOT.fullmatch(head) and len(head) > 1:
            found.setdefault(head, args)
        elif head.startswith("{"):
            for alternative in _alternatives(head):
                found.setdefault(alternative[0], alternative[1])
        elif head.startswith("["):  # `ip address [ show [ dev IFNAME ] ]`
            words = head[1:-1].split(None, 1)
            if words and _NAME.fullmatch(words[0]) and len(words[0]) > 1:
                optional.setdefault(words[0], words[1] if len(words) > 1 else "")
    if found:
        for word, args in optional.items():
            found.setdefault(word, args)
    return found if len(found) >= 2 else {}


def _slot(forms: list[str], program: list[str]) -> str | None:
    """The placeholder the first form has where a command goes (`OBJECT`, `COMMAND`)."""
    if not forms:
        return None
    rest = _skip_options(_tokens(forms[0]))[len(program) :]
    return rest[0] if rest and re.fullmatch(r"[A-Z][A-Z_-]*", rest[0]) else None


def _alternatives(group: str) -> list[tuple[str, str]]:
    """The commands a `{a | b args | c}` group offers, each with its arguments; none
    when one is a single letter or a value (`{A|c|d}` are tar's modes, not commands)."""
    inner = group.strip()[1:-1] if group.strip().endswith("}") else ""
    out = []
    for choice in _split_bars(inner):
        words = choice.split(None, 1)
        if not words or words[0].startswith(("-", "{", "[")):
            continue
        if not _NAME.fullmatch(words[0]):
            if words[0].isupper():
                continue  # a placeholder: `{ COMMAND | help }`
            return []
        if len(words[0]) < 2:
            return []
        out.append((words[0], words[1] if len(words) > 1 else ""))
    return out if len(out) >= 2 else []


def _split_bars(text: str) -> list[str]:
    """`a | b [x|y] | c` → the alternatives at the outer level."""
    out, depth, current = [], 0, ""
    for ch in text:
        depth += 1 if ch in "[{<(" else -1 if ch in "]}>)" else 0
        if ch == "|" and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    out.append(current.strip())
    return out


# -- commands --------------------------------------------------------------------------------


def _commands(
    entries: list[_Entry],
    blocks: list[_Block],
    lines: list[_Line],
    listed: dict[str, str],
    forms: list[str],
    program: list[str],
) -> list[ParsedCommand]:
    """The commands the page lists, then those only its synopsis names."""
    base = [_base_indent(lines, b) for b in blocks]
    named = [
        bool(_COMMANDS_HEADING.search(f"{b.title} {b.sub}"))
        and not _NOT_COMMANDS_HEADING.search(b.sub or b.title)
        for b in blocks
    ]
    candidates: list[tuple[_Entry, list[str], str]] = []
    for entry in entries:
        if entry.indent != base[entry.block] or entry.tag.startswith("-"):
            continue
        parsed = _command_tag(entry.tag, program)
        if parsed is not None:
            candidates.append((entry, *parsed))
    # a block lists commands when its heading says so, or when it describes one the
    # synopsis names
    listing = set()
    for entry, names, _ in candidates:
        if named[entry.block] or any(n in listed for n in names):
            listing.add(entry.block)
    out: dict[str, ParsedCommand] = {}
    for entry, names, args in candidates:
        if entry.block in listing or args.startswith("[-"):
            for name in names:
                out.setdefault(name, ParsedCommand(name, entry.description, args))
    for name, args in listed.items():
        out.setdefault(name, ParsedCommand(name, "", args))
    return list(out.values())


def _base_indent(lines: list[_Line], block: _Block) -> int:
    return min((lines[i].indent for i in range(block.start, block.end) if lines[i].text), default=0)


def _command_tag(tag: str, program: list[str]) -> tuple[list[str], str] | None:
    """(names, placeholders) of a tag shaped like a command: `list-units [PATTERN...]`,
    `install, reinstall, remove (apt-get(8))`, `tcp_metrics/tcpmetrics`, `git-add(1)`
    in git's page (a page of the program's own, `PROGRAM-NAME(N)`), `attach-session
    [-dErx] [-t target-session]`; None for a sentence, a value, another program's page."""
    tag = re.sub(r"\s*\((?:[^()]*\([^()]*\))+[^()]*\)$", "", tag)  # `(apt-get(8))`
    ref = _PAGE_REF.fullmatch(tag)
    if ref:
        prefix = "-".join(program) + "-"
        page = ref.group("name")
        return ([page[len(prefix) :]], "") if page.startswith(prefix) and page != prefix else None
    head, _, args = tag.partition(" ")
    names_text = head
    while head.endswith(",") and args:  # `install, reinstall, remove`
        more, _, args = args.partition(" ")
        names_text, head = f"{names_text} {more}", more
    names = [n for n in re.split(r"[,/]\s*", names_text) if n]
    if not names or not all(_NAME.fullmatch(n) and not n.endswith(".") for n in names):
        return None
    words = args.split()
    if "[-" in args:  # a command's own synopsis: its operands may be words
        return names, args.strip()
    if not all(_PLACEHOLDER.fullmatch(w) for w in words):
        return None
    return names, args.strip()


# -- examples --------------------------------------------------------------------------------


def _examples(lines: list[_Line], blocks: list[_Block], name: str) -> list[str]:
    """The EXAMPLES sections read as help text reads them (`helptext._Examples`)."""
    text = []
    for block in blocks:
        if "EXAMPLE" not in block.title.upper():
            continue
        text.append("EXAMPLES")
        text += [" " * lines[i].indent + lines[i].text for i in range(block.start, block.end)]
    return parse_help("\n".join(text), name).examples if text else []
