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

from atipkit.infer import prose, synopsis
from atipkit.infer.helptext import (
    ParsedCommand,
    ParsedHelp,
    ParsedOption,
    finish,
    options_from_tag,
    parse_help,
)

TABLE_MARK = "\u2063"
"""A line holding only this character (INVISIBLE SEPARATOR) starts or ends a table."""

_NAME_LINE = re.compile(r"NAME\s*\n\s*[^\s,]+(?:,\s*[^\s,]+)*,?\s+[-—–]+\s*(.+)")
"""`a, b - what`: a name holds no comma, so the names are read one way only (`\\S+` in
their place backtracks exponentially on `a,a,a,...` with no dash after it)."""
_BULLET_OPTION = re.compile(r"^[•○◦·*]\s+(?P<spec>-\S.*?)(?::\s+(?P<rest>\S.*)|:?)$")
_BOX = frozenset("│┃║┌┏╔├┣╠└┗╚─━═┬┴┼╭╰")
_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|.\x08")
_ITALIC = re.compile(r"(?:_\x08[^\x08\s])+")
_COMMANDS_HEADING = re.compile(r"\bcommands?\b", re.IGNORECASE)
_NOT_COMMANDS_HEADING = re.compile(r"command[- ]line|option|argument|operand", re.IGNORECASE)
_NO_COMMANDS_HEADING = re.compile(r"^(?:NAME|SYNOPSIS)\b|example", re.IGNORECASE)
_PROMPT = re.compile(r"[$#%>] ")
_OPTIONS_WORD = re.compile(r"\boptions?\b", re.IGNORECASE)
_WORD = re.compile(r"[\w.-]+")
_OR = re.compile(r"(?<!\s)\s{2,}or\s{2,}(?=-)")  # from a run's start only: linear
_LONG_FLAG = re.compile(r"(?:^|[\s,])--\w")
"""A long spelling in a tag: an option, even among many tags that are not (a COMMANDS
list that ends in `-h, --help`); a list of values (cut's `N-`, `-M`) has none."""
_NO_OPTIONS_HEADING = re.compile(r"example|operator", re.IGNORECASE)
"""Sections whose tags are not options: an example's command line, find's `-not expr`
(an operator joins expressions; it sets nothing)."""
_PAGE_REF = re.compile(r"(?P<name>[\w.+-]+)\((?P<section>\d\w*)\)")
_PLACEHOLDER = re.compile(
    r"(?:[\[{<(].*|\.\.\.|\||[A-Z][A-Z0-9_]*(?:\[[^\]\s]*\])?(?:[=:.,|/-][\w.,|/=:-]*)?"
    r"(?:\.\.\.)?[\]}>)]*|--?[A-Za-z][\w-]*)"
)
"""A word that stands for a value in a command's tag: `[PATTERN...]`, `UNIT...`,
`PROPERTY=VALUE...`, `DOMAIN[:PORT]...`, `<name>`, `{a|b}`, `...`, `|`; or a flag the
command takes, written after its operands (machinectl(1)'s `copy-to NAME PATH [PATH]
--force`)."""
_DESCRIPTION_CHARS = 400
"""Enough of a description for what is kept of it (200 characters, decision 43)."""
_STACK = 16
"""At most so many option tags stacked above one description (`-o logfile` /
`--output-file=logfile`)."""
_FILLED = 66
"""A line reaching this column was filled up to the margin (groff's is at 78)."""
_TAG_LINES = 4
"""A tag whose brackets are still open continues on at most so many lines."""
_FORM_LINES = 4
"""A synopsis form whose group is still open goes on over at most so many lines at its
own indent: a page that never closes one (hostile, or a typo) is not read as one form
growing line by line, each line counting its brackets again (decision 789)."""
_NESTED = 4
"""A listing is at most so many columns deeper than the text of its section."""


class _Line(NamedTuple):
    indent: int
    text: str  # stripped; "" for a blank line, a cell of a table, a line of a box
    raw: str = ""  # as rendered, bold and italic as overstrikes (`_italic`)


_BLANK = _Line(0, "")


class _Block(NamedTuple):
    """A section, or a sub-section of one, as lines [start, end) of the page; `head` is
    the line of its heading (-1 for none)."""

    title: str
    sub: str
    start: int
    end: int
    head: int = -1


class _Entry(NamedTuple):
    """A tagged paragraph: its tag, the start of its description, where it stands."""

    tag: str
    description: str
    indent: int
    block: int
    line: int
    last: int


MAX_COMMANDS = 256
"""Commands one page may name (git's page names the most here, about 160): a page of
thousands of synopsis forms or list entries names no more."""


def read_page(text: str, name: str) -> ParsedHelp | None:
    """What a rendered page says: its NAME line as the description, its SYNOPSIS as the
    usage line, its options and subcommands by layout, its examples. None for an empty
    page. Bold and italic may be given as overstrikes (`x\\bx`, `_\\bx`, as `render`
    gives them): italic words are placeholders."""
    if not text.strip():
        return None
    lines = _lines(text)
    _drop_header_and_footer(lines)
    blocks = _blocks(lines)
    entries = _entries(lines, blocks)
    forms = _synopsis(lines, blocks)
    help_ = ParsedHelp(usage=forms[0].text if forms else "")
    plain = "\n".join(line.text for line in lines)
    found = _NAME_LINE.search(plain)
    help_.description = found.group(1).strip() if found else ""
    tagged = _options(lines, blocks, entries, name)
    help_.options = [option for _, options in tagged for option in options]
    shown = synopsis.values(forms)
    for option in help_.options:
        value = next((shown[f] for f in option.flags if f in shown), None)
        if value is not None and not option.metavar:
            option.metavar, option.optional_value = value
    program = synopsis.program(forms, [_page_name(plain) or name, name])
    if synopsis.options_follow_command(forms, program):
        help_.options = []
    listed = synopsis.commands(forms, program, _replaceable(lines, blocks))
    if listed or synopsis.takes_command(forms, program):
        place = synopsis.slot(forms, program)
        owned = _owned(lines, blocks, listed, program)
        listing = _commands(lines, blocks, entries, listed, place, program, owned)
        listing = _with_sections(listing, _section_commands(lines, blocks, program))
        listing = listing[:MAX_COMMANDS]
        help_.commands = [command for _, command in listing]
        help_.programs = _programs(blocks, entries, place, program)
        below = synopsis.children(forms, program)
        for parent, names in [
            *_tag_children(blocks, entries, place, program).items(),
            *_heading_children(blocks, program).items(),
            *_owned_children(lines, blocks, entries, owned, program).items(),
        ]:
            below[parent] = [*below.get(parent, []), *names]
        for command in help_.commands:
            command.commands = list(dict.fromkeys(below.get(command.name, [])))[:MAX_COMMANDS]
        sections = [
            *_option_sections(blocks, help_.commands),
            *_owned_sections(blocks, owned, help_.commands),
        ]
        _give_options(help_, [*listing, *sections], tagged)
    help_.examples = _examples(lines, blocks, name)
    help_.prose = _prose(lines, blocks)
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
    plain = _ESCAPES.sub("", text) if "\x08" in text or "\x1b" in text else text
    marks = [i for i, raw in enumerate(raw_lines) if _is_mark(raw)]
    tables = list(zip(marks[::2], marks[1::2], strict=False))
    out: list[_Line] = []
    table = 0
    blank = _BLANK
    for index, (raw, line) in enumerate(
        zip(raw_lines, plain.expandtabs(8).split("\n"), strict=True)
    ):
        stripped = line.strip()
        if not stripped:
            out.append(blank)
            continue
        while table < len(tables) and tables[table][1] < index:
            table += 1
        inside = table < len(tables) and tables[table][0] <= index
        if inside or stripped[0] in _BOX or _is_mark(stripped):
            out.append(blank)
            continue
        out.append(_Line(len(line) - len(line.lstrip()), stripped, raw))
    return out


def _is_mark(raw: str) -> bool:
    """Whether a line is a table's mark: the mark alone, or on the line of a box that tbl
    draws last (`<mark>───┴───┘`). The mark inside a line of text is text: a page that
    writes it there does not start a table that hides what follows."""
    text = raw.strip()
    return text[:1] == TABLE_MARK and all("\u2500" <= c <= "\u257f" for c in text[1:])


def _italic(lines: list[_Line], start: int, end: int) -> set[str]:
    """The words set in italic on lines [start, end): what a reader replaces."""
    out: set[str] = set()
    for index in range(start, end):
        if "_\x08" in lines[index].raw:
            out.update(w.replace("_\x08", "") for w in _ITALIC.findall(lines[index].raw))
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
    title, sub, start, head = "", "", 0, -1
    for index, line in enumerate(lines):
        if not line.text:
            continue
        if line.indent == 0 or (line.indent <= 4 and title):
            if index > start:
                out.append(_Block(title, sub, start, index, head))
            if line.indent == 0:
                title, sub = line.text, ""
            else:
                sub = line.text
            start, head = index + 1, index
    out.append(_Block(title, sub, start, len(lines), head))
    return [b for b in out if b.end > b.start or b.sub]


def _entries(lines: list[_Line], blocks: list[_Block]) -> list[_Entry]:
    """Every tagged paragraph of every block, in page order; a sub-heading that is an
    option's tag (netstat's `--route, -r`) is one, its paragraph the description."""
    out: list[_Entry] = []
    for number, block in enumerate(blocks):
        if block.sub.startswith("-"):
            head = lines[block.head]
            said = _description(lines, block, block.start, head.indent, "")
            out.append(_Entry(block.sub, said, head.indent, number, block.head, block.head))
        column = _description_column(lines, block)
        base = _base_indent(lines, block)
        row = False
        index = block.start
        while index < block.end:
            line, above = lines[index], lines[index - 1] if index > block.start else _BLANK
            if not line.text or (
                above.text
                and above.indent <= line.indent
                and not row
                and line.text[0] not in "•○◦·*"
            ):
                row = False
                index += 1
                continue  # a blank line, a paragraph going on (`_entry_at` says it again)
            found = _entry_at(lines, block, index, (column, base), row)
            if found is None:
                row = False
                index += 1
                continue
            tag, description, last, row = found
            out.append(_Entry(tag, description, lines[index].indent, number, index, last))
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
    lines: list[_Line], block: _Block, index: int, layout: tuple[int | None, int], row: bool
) -> tuple[str, str, int, bool] | None:
    """(tag, description, last line of the tag, whether it is a row) when a tagged
    paragraph starts at `index`: it starts a paragraph, and a description follows deeper
    or beside it, or for a tag alone, deeper after one blank line (help2man's pages,
    gcloud's) — unless what follows is a command line and the tag a word at the text's
    indent: systemctl's "and" between two examples. `layout` is the block's description
    column and the indent of its text. A row (`-b, --binary   read in binary mode`) under
    a row starts one too: the lines of a listing set without blank lines (`row`: the line
    above was one). A bullet (`•   --slurp/-s:`, pages written in Markdown) starts one
    whatever is above it."""
    column, base = layout
    line = lines[index]
    if not line.text:
        return None
    bullet = _BULLET_OPTION.match(line.text)
    if bullet is not None:
        beside = bullet.group("rest") or ""
        start = index + 1
        while not beside and start < block.end and not lines[start].text:
            start += 1
        said = _description(lines, block, start, line.indent + 1, beside)
        return bullet.group("spec"), said, index, False
    above = lines[index - 1] if index > block.start else _Line(0, "")
    in_rows = row and (_is_row(line) or _in_row(line, above) is not None)
    if above.text and above.indent <= line.indent and not in_rows:
        return None  # the paragraph goes on
    last = index
    # stacked option tags: `-o logfile` / `--output-file=logfile`, then the description;
    # a texinfo page may set a blank line between them, or before the description
    # (gpg-agent(1)'s `--no-allow-loopback-pinentry` / `--allow-loopback-pinentry`)
    while (
        lines[last].text.startswith("-")
        and last - index < _STACK
        and "  " not in lines[last].text
        and (step := _stacked(lines, block, last, line.indent))
    ):
        last += step
    gap = last + 1 < block.end and not lines[last + 1].text
    if last > index and not _deeper(lines, block, last + gap):
        last = index
    tag = ", ".join(lines[i].text for i in range(index, last + 1) if lines[i].text)
    # a tag whose brackets are open goes on below: `attach-session [-dErx] [-t` /
    # `target-session]`
    if tag.count("[") > tag.count("]"):
        joined, more = tag, last
        while joined.count("[") > joined.count("]") and more + 1 < block.end:
            if not lines[more + 1].text or more - last >= _TAG_LINES:
                break
            more += 1
            joined = f"{joined} {lines[more].text}"
        if joined.count("[") <= joined.count("]"):  # else a bracket the page left open
            tag, last = joined, more
    below = lines[last + 1] if last + 1 < block.end else _Line(0, "")
    end = lines[last]
    wrapped = below.text and below.indent == column and end.indent + len(end.text) >= _FILLED
    alone = not below.text or below.indent < line.indent
    split = _split_tag(lines[last], column if wrapped or alone else None)
    if split is None and last == index:  # lvm's `vgimportdevices Add PVs ...`
        split = next(
            filter(None, (_in_row(line, n) for n in _neighbours(lines, block, index))), None
        )
        in_rows = split is not None
    if split is not None and last == index:
        tag, beside = split
        said = _description(lines, block, last + 1, line.indent, beside)
        return tag, said, last, _is_row(line) or in_rows
    if split is not None and lines[last].text.startswith("-"):  # xz's `--fast` / `--best
        stacked = [lines[i].text for i in range(index, last)]  # These are ... aliases`
        said = _description(lines, block, last + 1, line.indent, split[1])
        return ", ".join([*stacked, split[0]]), said, last, False
    if split is not None and tag.count("[") > tag.count("]"):
        return None
    if _deeper(lines, block, last, line.indent):
        return tag, _description(lines, block, last + 1, line.indent, ""), last, False
    if not below.text and _deeper(lines, block, last + 1, line.indent):
        text = lines[last + 2].text
        if tag.startswith("-") or line.indent > base or not _PROMPT.match(text):
            return tag, _description(lines, block, last + 2, line.indent, ""), last, False
    return None


def _stacked(lines: list[_Line], block: _Block, index: int, indent: int) -> int:
    """How many lines down the next stacked option tag is (1, or 2 past a blank line
    below a tag of one word: `--heap Prints the heap.` has its text beside it), at
    `indent` below the tag at `index`; 0 for none."""
    for step in (1, 2):
        at = index + step
        if at >= block.end or (step == 2 and " " in lines[index].text):
            return 0
        if step == 1 and not lines[at].text:
            continue
        if lines[at].indent == indent and lines[at].text.startswith(("-", "(-")):
            return step
        return 0
    return 0


def _in_row(line: _Line, row: _Line) -> tuple[str, str] | None:
    """A tag and its description as a row of a listing beside `row` sets them: a tag as
    wide as the tag column, one space, then its description where `row`'s starts (lvm(8)'s
    `vgimportdevices Add PVs ...` between `vgimportclone   Import ...` and `vgmerge`)."""
    gap = _ROW_GAP.search(row.text) if row.indent == line.indent else None
    if gap is None or row.text[gap.start(1) - 1] in ".!?:;":  # two spaces after a sentence
        return None
    return _split_tag(line, row.indent + gap.end(1))


def _neighbours(lines: list[_Line], block: _Block, index: int) -> list[_Line]:
    """The nearest lines with text above and below `index` in its block."""
    out = []
    for step, stop in ((-1, block.start - 1), (1, block.end)):
        at = index + step
        while at != stop and not lines[at].text:
            at += step
        if at != stop:
            out.append(lines[at])
    return out


_SENTENCE = 3
"""Words at least in a sentence that announces a list (`_introduced`)."""
_ROW_GAP = re.compile(r"\S(\s{2,})\S")


def _is_row(line: _Line) -> bool:
    """A line of a listing set without blank lines: a tag, a run of spaces, its
    description."""
    return _split_tag(line, None) is not None


def _deeper(lines: list[_Line], block: _Block, index: int, indent: int | None = None) -> bool:
    """Whether the line after `index` is text deeper than `indent` (default: than the
    line at `index`)."""
    limit = lines[index].indent if indent is None else indent
    return index + 1 < block.end and bool(lines[index + 1].text) and lines[index + 1].indent > limit


def _split_tag(line: _Line, column: int | None) -> tuple[str, str] | None:
    """A tag and the description beside it on one line: after a run of spaces, or one
    space where the block's descriptions start (`-force Don't terminate ip ...`, `cms
    CMS command.`; the caller passes `column` only where that can be: a tag too wide for
    that place stands alone with its description below, and `cat PATTERN...` looks the
    same). Two spaces after a sentence's end are prose."""
    text = _OR.sub(" or ", line.text)  # patch's `-b  or  --backup`: one tag
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


def _description(lines: list[_Line], block: _Block, start: int, indent: int, beside: str) -> str:
    """The first paragraph under a tag (the lines deeper than it from `start` up to a
    blank one)."""
    words = [beside] if beside else []
    size = len(beside)
    index = start
    while index < block.end and size < _DESCRIPTION_CHARS:
        line = lines[index]
        if not line.text or line.indent <= indent or (line.text[0] == "-" and _is_row(line)):
            break  # a blank line, the text again, the next row of a listing
        words.append(line.text)
        size += len(line.text) + 1
        index += 1
    return " ".join(words)


# -- options ---------------------------------------------------------------------------------


def _options(
    lines: list[_Line], blocks: list[_Block], entries: list[_Entry], name: str
) -> list[tuple[int, list[ParsedOption]]]:
    """The tags that start with `-`, each with the line it stands on: `A and B` are two
    options sharing a description (jq's `--color-output / -C and --monochrome-output /
    -M`). Not in a list of values where they are few (cut's `N`, `N-`, `N-M`, `-M`;
    find's `+n`, `-n`, `n`), unless a long spelling says it is an option (`-h, --help`
    closing systemd-creds's COMMANDS). Not in a section whose heading names another
    program's page (resolvectl(1)'s "COMPATIBILITY WITH RESOLVCONF(8)": the switches of
    the program run as `resolvconf`, not of `name`)."""
    runs = _runs(lines, blocks, entries)
    dashes: Counter[tuple[int, int, int]] = Counter()
    others: Counter[tuple[int, int, int]] = Counter()
    for entry in entries:
        (dashes if _unbracketed(entry.tag).startswith("-") else others)[runs[entry.line]] += 1
    out = []
    for entry in entries:
        block = blocks[entry.block]
        heading = f"{block.title} {block.sub}"
        tag = _unbracketed(entry.tag)
        if not tag.startswith("-") or _NO_OPTIONS_HEADING.search(heading):
            continue
        if any(r.group("name").lower() != name.lower() for r in _PAGE_REF.finditer(heading)):
            continue  # "COMPATIBILITY WITH RESOLVCONF(8)": another program's options
        run = runs[entry.line]
        if others[run] >= 2 and dashes[run] < others[run] and not _LONG_FLAG.search(tag):
            continue
        found = [
            option
            for part in re.split(r"\s+and\s+(?=-)", tag)
            for option in options_from_tag(part, entry.description)
        ]
        out.append((entry.line, found))
    return out


def _unbracketed(tag: str) -> str:
    """An optional option's tag written as a synopsis writes it (unzip's ARGUMENTS:
    `[-x xfile(s)]`, `[-d exdir]`) without its brackets; any other tag as it is."""
    if tag[:2] == "[-" and tag[-1:] == "]" and "[" not in tag[1:] and "]" not in tag[:-1]:
        return tag[1:-1]
    return tag


def _give_options(
    help_: ParsedHelp,
    commands: list[tuple[range, ParsedCommand]],
    tagged: list[tuple[int, list[ParsedOption]]],
) -> None:
    """Options set inside a command's entry (below its tag, deeper than it: gio's
    `copy` entry has its own "Options" list) are that command's, not the program's."""
    spans = [(span, command) for span, command in commands if span]
    if not spans:
        return
    given: set[int] = set()
    for line, found in tagged:
        owners = {id(command): command for span, command in spans if line in span}
        for command in owners.values():
            command.options = [*command.options, *found]
            given.update(id(option) for option in found)
    if given:
        help_.options = [option for option in help_.options if id(option) not in given]


def _option_sections(
    blocks: list[_Block], commands: list[ParsedCommand]
) -> list[tuple[range, ParsedCommand]]:
    """Sections whose heading says they hold the options of one of the page's commands:
    jhsdb(1)'s "OPTIONS FOR THE DEBUGD MODE" after its modes' list (`jhsdb debugd`).
    The heading must say "option" and name exactly one command (a heading naming two
    is not read as either's); a sub-heading is read before its section's title."""
    by_name = {command.name.lower(): command for command in commands}
    out: list[tuple[range, ParsedCommand]] = []
    for block in blocks:
        for heading in (block.sub, block.title):
            if not _OPTIONS_WORD.search(heading):
                continue
            named = {w for w in _WORD.findall(heading.lower()) if w in by_name}
            if len(named) == 1:
                out.append((range(block.start, block.end), by_name[named.pop()]))
            break
    return out


def _runs(
    lines: list[_Line], blocks: list[_Block], entries: list[_Entry]
) -> dict[int, tuple[int, int, int]]:
    """For each entry (by its first line), the list it is part of: (block, indent, run),
    a run ending at a paragraph of text at its indent ("Each range is one of:")."""
    starts = {entry.line: entry for entry in entries}
    out: dict[int, tuple[int, int, int]] = {}
    for entry in entries:  # a sub-heading (netstat's `--route, -r`): a list of its own
        out[entry.line] = (entry.block, -1, entry.line)
    for number in sorted({entry.block for entry in entries}):
        runs: dict[int, int] = {}  # indent -> run
        for index in range(blocks[number].start, blocks[number].end):
            line = lines[index]
            if index in starts:
                out[index] = (number, line.indent, runs.get(line.indent, 0))
            elif line.text:
                runs[line.indent] = runs.get(line.indent, 0) + 1  # text between two lists
    return out


# -- the synopsis ----------------------------------------------------------------------------


def _synopsis(lines: list[_Line], blocks: list[_Block]) -> list[synopsis.Form]:
    """The synopsis's forms, each joined from the line that starts it and the deeper
    lines that continue it; a leading `Usage:` dropped. A word broken at a hyphen at the
    end of a line is joined whole (`is-` / `enabled`: `is-enabled`, not a name `is-`),
    and a form whose brackets are still open goes on at its own indent, unless the line
    starts with the program's name again (wpa_cli(8) fills its one form over two lines,
    `[ -g path to global ctrl_interface` / `socket ] ... [ command ... ]`)."""
    block = _synopsis_block(blocks)
    if block is None:
        return []
    base = _base_indent(lines, block)
    forms: list[str] = []
    held = 0  # lines the last form took at its own indent for a group it left open
    for index in range(block.start, block.end):
        line = lines[index]
        if not line.text:
            continue
        deeper = line.indent > base and bool(forms)
        goes_on = (
            not deeper
            and bool(forms)
            and (
                synopsis.broken(forms[-1])
                or (held < _FORM_LINES and _open(forms[-1], forms[0], line.text))
            )
        )
        if not deeper and not goes_on:
            forms.append(re.sub(r"^usage:\s*", "", line.text, flags=re.IGNORECASE))
            held = 0
        else:  # deeper, or the rest of a broken word or an open group at any indent
            held += not deeper
            forms[-1] = synopsis.continued(forms[-1], line.text)
    return [synopsis.form(text) for text in forms]


def _open(form: str, first: str, line: str) -> bool:
    """Whether `form` leaves a bracket or a brace open and `line` does not start anew
    with the first word of the synopsis's `first` form."""
    if form.count("[") <= form.count("]") and form.count("{") <= form.count("}"):
        return False
    return line.split()[0] != first.split()[0]


def _replaceable(lines: list[_Line], blocks: list[_Block]) -> set[str]:
    """The words the SYNOPSIS sets in italic: what the reader replaces (`umount
    {directory|device}`, `java [options] mainclass`), where a command is typed as it
    stands (`apt-get {update | upgrade}`, `ip address { add | del }`)."""
    block = _synopsis_block(blocks)
    return _italic(lines, block.start, block.end) if block is not None else set()


def _synopsis_block(blocks: list[_Block]) -> _Block | None:
    """The SYNOPSIS section; else, on a page that sets its parts as sub-headings of one
    section (npm's pages, converted from Markdown: `Synopsis` under NAME), the first
    sub-section of that name."""
    sections = (b for b in blocks if b.title.upper() == "SYNOPSIS" and not b.sub)
    subs = (b for b in blocks if b.sub.upper() == "SYNOPSIS")
    return next(sections, None) or next(subs, None)


def _page_name(text: str) -> str | None:
    match = re.search(r"NAME\s*\n\s*([^\s,]+)", text)
    return match.group(1) if match else None


# -- commands --------------------------------------------------------------------------------


def _commands(
    lines: list[_Line],
    blocks: list[_Block],
    entries: list[_Entry],
    listed: dict[str, str],
    slot: str | None,
    program: list[str],
    owned: dict[int, str],
) -> list[tuple[range, ParsedCommand]]:
    """The commands the page lists — as tags, or as the sub-headings of a section of
    commands (blkzone's `report`, ip-address's `ip address add - add new protocol
    address`) — in page order, then those only its synopsis names; each with the lines
    its entry holds (its paragraphs and what is set deeper, up to the next line at its
    tag's indent; a sub-heading's whole sub-section; none for a synopsis's name). A
    command given twice keeps the longer of its entries: pyenv(1) lists `install`, then
    documents it in a sub-section of its own that sets its options. Nothing of a block
    one command `owned` is the program's."""
    named = [_names_commands(b, slot) and n not in owned for n, b in enumerate(blocks)]
    found: list[tuple[int, range, ParsedCommand]] = []
    for number, block in enumerate(blocks):
        if number in owned:
            continue
        if block.sub and (named[number] or block.sub.split()[: len(program)] == program):
            command = _sub_heading(lines, block, program)
            if command is not None:
                found.append((block.head, range(block.start, block.end), command))
    candidates: list[tuple[_Entry, list[str], str]] = []
    for entry in entries:
        if entry.block not in owned:
            candidates += _candidate(lines, blocks, entry, program)
    tags = {entry.line for entry in entries}
    chosen = _listed(lines, blocks, candidates, named, listed, tags)
    alone = Counter(e.block for e, _, _ in chosen)
    found += [
        (
            e.line,
            _entry_lines(lines, blocks, e, alone),
            ParsedCommand(n, *_spilled(e.description, a)),
        )
        for e, names, a in chosen
        for n in names
    ]
    out: dict[str, tuple[range, ParsedCommand]] = {}
    for _, span, command in sorted(found, key=lambda found: found[0]):
        before, known = out.setdefault(command.name, (span, command))
        known.description = known.description or command.description
        if len(span) > len(before):  # pyenv(1): listed, then a sub-section of its own
            out[command.name] = (span, known)
    for name, args in listed.items():
        out.setdefault(name, (range(0), ParsedCommand(name, "", args)))
    return list(out.values())


def _candidate(
    lines: list[_Line], blocks: list[_Block], entry: _Entry, program: list[str]
) -> list[tuple[_Entry, list[str], str]]:
    """An entry whose tag is shaped like a command (`_command_tag`), with its names and
    placeholders; none for an option's tag or one in a SYNOPSIS or an example."""
    block = blocks[entry.block]
    if entry.tag.startswith("-") or _NO_COMMANDS_HEADING.search(f"{block.title} {block.sub}"):
        return []  # a synopsis form wraps deeper, an example runs the program: no tags
    parsed = _command_tag(entry.tag, program, _italic(lines, entry.line, entry.last + 1))
    return [(entry, *parsed)] if parsed is not None else []


def _owned(
    lines: list[_Line], blocks: list[_Block], listed: dict[str, str], program: list[str]
) -> dict[int, str]:
    """The blocks that open with a form of one of the commands the synopsis names, by
    number: nmcli(1)'s "GENERAL COMMANDS" starts `nmcli general {status | hostname |
    ...}`, then lists `status`, `hostname`, ... — general's commands, not nmcli's: the
    block documents that command, whose name is given for it."""
    out: dict[int, str] = {}
    for number, block in enumerate(blocks):
        first = next((i for i in range(block.start, block.end) if lines[i].text), None)
        if first is None:
            continue
        words = lines[first].text.split()
        if words[: len(program)] == program and len(words) > len(program):
            name = words[len(program)]
            if name in listed:
                out[number] = name
    return out


def _owned_children(
    lines: list[_Line],
    blocks: list[_Block],
    entries: list[_Entry],
    owned: dict[int, str],
    program: list[str],
) -> dict[str, list[str]]:
    """The commands below each command that owns a block (`_owned`): the alternatives of
    the form that opens the block (`nmcli general {status | hostname | ...}`), then the
    command-shaped tags the block lists (`on, off`, `connectivity [check]`), as a
    section of commands lists them (`_listed`)."""
    out: dict[str, list[str]] = {}
    for number, parent in owned.items():
        block = blocks[number]
        first = next(i for i in range(block.start, block.end) if lines[i].text)
        text = [lines[first].text]
        for line in lines[first + 1 : block.end]:  # the form goes on deeper
            if not line.text or line.indent <= lines[first].indent:
                break
            text.append(line.text)
        heads = synopsis.children([synopsis.form(" ".join(text))], program)
        out.setdefault(parent, []).extend(heads.get(parent, []))
    candidates = [
        c
        for entry in entries
        if entry.block in owned
        for c in _candidate(lines, blocks, entry, program)
    ]
    tags = {entry.line for entry in entries}
    for entry, names, _ in _listed(lines, blocks, candidates, [True] * len(blocks), {}, tags):
        out.setdefault(owned[entry.block], []).extend(names)
    return out


def _owned_sections(
    blocks: list[_Block], owned: dict[int, str], commands: list[ParsedCommand]
) -> list[tuple[range, ParsedCommand]]:
    """Each block a command owns (`_owned`) as that command's entry: the options set in
    it are the command's."""
    by_name = {command.name: command for command in commands}
    return [
        (range(blocks[n].start, blocks[n].end), by_name[name])
        for n, name in owned.items()
        if name in by_name
    ]


def _section_commands(
    lines: list[_Line], blocks: list[_Block], program: list[str]
) -> list[tuple[range, ParsedCommand]]:
    """The commands documented each in a section of its own, which has its own SYNOPSIS
    sub-section naming `PROGRAM COMMAND ...` (llvm-profdata(1): MERGE, SHOW, OVERLAP,
    listed as bullets under COMMANDS): the command, its description the first paragraph
    of the section's DESCRIPTION, and the whole section its entry (its OPTIONS are the
    command's, not the program's)."""
    out: list[tuple[range, ParsedCommand]] = []
    sections: list[list[_Block]] = []  # a heading at column 0 and its sub-sections
    for block in blocks:
        if not sections or block.title != sections[-1][0].title or lines[block.head].indent == 0:
            sections.append([])
        sections[-1].append(block)
    for section in sections:
        own = next((b for b in section if b.sub.upper() == "SYNOPSIS"), None)
        if own is None or _NO_COMMANDS_HEADING.search(own.title):
            continue
        first = next((lines[i].text for i in range(own.start, own.end) if lines[i].text), "")
        words = first.split()
        if words[: len(program)] != program or len(words) <= len(program):
            continue
        name = words[len(program)]
        if name.startswith("-") or not synopsis.is_name(name):
            continue
        span, said = _section_entry(lines, section)
        out.append((span, ParsedCommand(name, said)))
    return out


def _section_entry(lines: list[_Line], section: list[_Block]) -> tuple[range, str]:
    """The lines of a section (its blocks), and the first paragraph of its DESCRIPTION."""
    said = next(
        (
            _description(lines, b, b.start, _base_indent(lines, b) - 1, "")
            for b in section
            if b.sub.upper() == "DESCRIPTION"
        ),
        "",
    )
    return range(min(b.start for b in section), max(b.end for b in section)), said


def _with_sections(
    listing: list[tuple[range, ParsedCommand]], sections: list[tuple[range, ParsedCommand]]
) -> list[tuple[range, ParsedCommand]]:
    """`listing` with the commands of `sections`: a command listed already takes the
    section's lines as its entry's, and its description where it had none."""
    by_name = {command.name: index for index, (_, command) in enumerate(listing)}
    out = list(listing)
    for span, command in sections:
        index = by_name.get(command.name)
        if index is None:
            by_name[command.name] = len(out)
            out.append((span, command))
            continue
        known = out[index][1]
        known.description = known.description or command.description
        out[index] = (span, known)
    return out


def _programs(
    blocks: list[_Block], entries: list[_Entry], slot: str | None, program: list[str]
) -> list[str]:
    """The programs of their own a section of commands lists among the program's
    commands: git(1)'s "Main porcelain commands" set `gitk(1)` and `scalar(1)` beside
    `git-add(1)`; a page not named `PROGRAM-NAME` is not a command's (`git gitk` runs
    nothing), whatever a help lists (`git help -a` has `gitk`)."""
    prefix = "-".join(program) + "-"
    out: list[str] = []
    for entry in entries:
        ref = _PAGE_REF.fullmatch(entry.tag)
        if ref is None or ref.group("name").startswith(prefix):
            continue
        if _names_commands(blocks[entry.block], slot) and ref.group("name") not in out:
            out.append(ref.group("name"))
    return out


def _entry_lines(
    lines: list[_Line], blocks: list[_Block], entry: _Entry, listed: Counter[int]
) -> range:
    """The lines a command's entry holds: what is set deeper than its tag (`_held`), or
    the rest of its sub-section when it is the one command there (scalar(1)'s "Clone"
    sets clone's `--branch` at the tag's own indent, below it)."""
    block = blocks[entry.block]
    if block.sub and listed[entry.block] == 1:
        return range(entry.last + 1, block.end)
    return _held(lines, block, entry)


def _held(lines: list[_Line], block: _Block, entry: _Entry) -> range:
    """The lines below an entry's tag that are set deeper than it, up to the next line
    at its indent or shallower (or the block's end)."""
    end = entry.last + 1
    while end < block.end and (not lines[end].text or lines[end].indent > entry.indent):
        end += 1
    return range(entry.last + 1, end)


_SPILLED = re.compile(r"^(?:\[(?:[^\[\]]|\[[^\[\]]*\])*\]\s*)+")
"""Bracket groups (one level of nesting) at the start of a description."""


def _spilled(description: str, args: str) -> tuple[str, str]:
    """(description, placeholders) of a command entry whose synopsis wraps onto the
    lines of its description (tmux's `new-session [-AdDEPX] ... [-t group-name]` /
    `[-x width] [-y height] [shell-command]` / `(alias: new) Create a new session`): the
    bracket groups that start the description go on the tag, after its own."""
    if not args:
        return description, args
    spilled = _SPILLED.match(description)
    if spilled is None:
        return description, args
    return description[spilled.end() :].strip(), f"{args} {spilled.group().strip()}"


def _listed(
    lines: list[_Line],
    blocks: list[_Block],
    candidates: list[tuple[_Entry, list[str], str]],
    named: list[bool],
    listed: dict[str, str],
    tags: set[int],
) -> list[tuple[_Entry, list[str], str]]:
    """The command-shaped tags that are commands. A list is a run of tags at the
    shallowest indent of such tags in a block (not deeper than a little below the
    block's text: an example's lines are set deeper; gcloud's listing is 2 columns in,
    tmux's examples 6), up to a paragraph of text at that indent ("The following layouts
    are supported:"). A list lists commands when its block's heading says so, or when
    most of its tags are commands the synopsis names (apt-get's DESCRIPTION: the rest of
    them are commands too; route's OPTIONS, where `add` and `del` stand among `netmask
    NM`, `gw GW`: they are not), or when most of them carry a command's own synopsis
    (tmux's `attach-session [-dErx] [-t target-session]`; then so does every tag that
    carries one, wherever it stands: `set-option [-aFgopqsuUw] ...` among the options
    it sets; where cmake's `-E` tools list a few among many, none does)."""
    indent: dict[int, int] = {}
    for entry, _, _ in candidates:
        indent[entry.block] = min(indent.get(entry.block, entry.indent), entry.indent)
    base = {number: _base_indent(lines, blocks[number]) for number in indent}
    shallow = {
        c[0].line: c
        for c in candidates
        if c[0].indent == indent[c[0].block] <= base[c[0].block] + _NESTED
    }
    where = _runs(lines, blocks, [c[0] for c in shallow.values()])
    runs: dict[tuple[int, int, int], list[tuple[_Entry, list[str], str]]] = {}
    for line, candidate in sorted(shallow.items()):
        runs.setdefault(where[line], []).append(candidate)
    out: list[tuple[_Entry, list[str], str]] = []
    usage_listing = False
    for (number, _, _), run in runs.items():
        named_here = sum(any(n in listed for n in names) for _, names, _ in run)
        usage = sum("[-" in args for _, _, args in run)
        usage_listing = usage_listing or 2 * usage > len(run)
        listing = named[number] and not _introduced(lines, blocks[number], run[0][0], tags)
        if listing or 2 * named_here > len(run) or 2 * usage > len(run):
            out += run
    if usage_listing:
        taken = {c[0].line for c in out}
        out += [c for run in runs.values() for c in run if "[-" in c[2] and c[0].line not in taken]
    return sorted(out, key=lambda c: c[0].line)


def _introduced(lines: list[_Line], block: _Block, entry: _Entry, tags: set[int]) -> bool:
    """Whether the list that `entry` is part of follows a paragraph, at its indent or
    shallower, whose last sentence announces a list of something other than commands
    (ovs-vsctl(8)'s Database Commands: "The currently defined basic types, and their
    representations, are:", then `integer`, `real`, `Boolean`, `string`): ends in a
    colon and says no "command". The tags above `entry` (`tags`: the lines of all the
    page's tags) and what is set deeper are passed over, up to that paragraph. A word or
    two before a colon are a label of the commands that follow (git(1)'s "Manipulators:",
    "Interrogators:"), not a sentence."""
    index = entry.line - 1
    while index >= block.start and (
        not lines[index].text or lines[index].indent > entry.indent or index in tags
    ):
        index -= 1
    if index < block.start or lines[index].indent > entry.indent:
        return False
    said = [lines[index].text]
    while index > block.start and lines[index - 1].text and lines[index - 1].indent <= entry.indent:
        index -= 1
        said.insert(0, lines[index].text)
    last = re.split(r"(?<=[.!?])\s+", " ".join(said))[-1]
    sentence = len(last.split()) >= _SENTENCE  # git(1)'s "Manipulators:" names a group
    return sentence and last.endswith(":") and not _COMMANDS_HEADING.search(last)


def _names_commands(block: _Block, slot: str | None) -> bool:
    """Whether a block's heading (or its section's) says it lists commands: COMMANDS,
    "Unit Commands", "HIGH-LEVEL COMMANDS (PORCELAIN)", or the synopsis's placeholder for
    one (`OBJECT`, gcloud's `GROUPS`) — not "COMMAND LINE OPTIONS"."""
    for heading in (block.sub, block.title):
        if not heading or _NOT_COMMANDS_HEADING.search(heading):
            continue
        if _COMMANDS_HEADING.search(heading):
            return True
        if slot and heading.upper().rstrip("S") == slot.rstrip("S"):
            return True
    return False


def _sub_heading(lines: list[_Line], block: _Block, program: list[str]) -> ParsedCommand | None:
    """A sub-heading that names a command, with the description it gives after ` - `
    or the paragraph below it."""
    heading, _, said = block.sub.partition(" - ")
    words = heading.split()
    if words[: len(program)] == program:
        heading = " ".join(words[len(program) :])
    parsed = _command_tag(heading, program, _italic(lines, block.head, block.head + 1))
    if parsed is None or len(parsed[0]) != 1:
        return None
    base = _base_indent(lines, block)
    said = said or _description(lines, block, block.start, base - 1, "")
    return ParsedCommand(parsed[0][0], said.strip(), parsed[1])


def _heading_children(blocks: list[_Block], program: list[str]) -> dict[str, list[str]]:
    """The commands sub-headings name below a command: `bridge fdb show - list
    forwarding entries.`, `bridge vlan global set - ...` (fdb: show; vlan: global), the
    program's words, then two names."""
    out: dict[str, list[str]] = {}
    for block in blocks:
        words = block.sub.partition(" - ")[0].split()
        if words[: len(program)] != program or len(words) < len(program) + 2:
            continue
        parent, child = words[len(program) : len(program) + 2]
        if synopsis.is_name(parent) and synopsis.is_name(child) and len(child) > 1:
            names = out.setdefault(parent, [])
            names += [child] if child not in names else []
    return out


def _tag_children(
    blocks: list[_Block], entries: list[_Entry], slot: str | None, program: list[str]
) -> dict[str, list[str]]:
    """The commands a section of commands names below a command in its tags: gprofng(1)'s
    `gprofng collect app`, `gprofng display text` (collect: app; display: text), the
    program's words, then two names, nothing else."""
    out: dict[str, list[str]] = {}
    for entry in entries:
        words = entry.tag.split()
        if words[: len(program)] != program or len(words) != len(program) + 2:
            continue
        if not _names_commands(blocks[entry.block], slot):
            continue
        parent, child = words[len(program) :]
        if synopsis.is_name(parent) and synopsis.is_name(child) and len(child) > 1:
            names = out.setdefault(parent, [])
            names += [child] if child not in names else []
    return out


def _base_indent(lines: list[_Line], block: _Block) -> int:
    return min((lines[i].indent for i in range(block.start, block.end) if lines[i].text), default=0)


def _command_tag(tag: str, program: list[str], italic: set[str]) -> tuple[list[str], str] | None:
    """(names, placeholders) of a tag shaped like a command: `list-units [PATTERN...]`,
    `install, reinstall, remove (apt-get(8))`, `enable UNIT..., enable PATH...`,
    `tcp_metrics/tcpmetrics`, `add displayname hexkey` (the operands in italic),
    `e4crypt add_key -S` (the program's name first), `git-add(1)` in git's page (a page
    of the program's own, `PROGRAM-NAME(N)`), `attach-session [-dErx] [-t
    target-session]`; None for a sentence, a value, another program's page."""
    # `(apt-get(8))`, `(and the auto-remove alias since 1.1)`: a remark
    tag = re.sub(r"\s+\((?:[^()]|\([^()]*\))*\)$", "", tag)
    ref = _PAGE_REF.fullmatch(tag)
    if ref:
        prefix = "-".join(program) + "-"
        page = ref.group("name")
        return ([page[len(prefix) :]], "") if page.startswith(prefix) and page != prefix else None
    names: list[str] = []
    first = ""
    italic = {w.strip("[]{}.,|") for w in italic}  # `credential...`, its dots italic too
    for number, term in enumerate(synopsis.split_outside(tag, ",")):
        words = _ANGLED.findall(term)
        while len(words) > 1 and number == 0 and _OWN_OPTIONS.fullmatch(words[0]):
            words = words[1:]  # `[--may-exist] add-br bridge`: the command's own options
        if words[: len(program)] == program:
            words = words[len(program) :]
            if len(words) == 2 and all(synopsis.is_name(w) and w not in italic for w in words):
                words = words[:1]  # `gprofng collect app`: a command and a child of it
        if not words:
            return None
        args = " ".join(words[1:])
        spellings = _prefixed(words[0]).split("/")  # `tcp_metrics/tcpmetrics`
        if not all(synopsis.is_name(n) and n not in italic for n in spellings):
            return None
        # a command's own synopsis (`[-dErx] [-t target]`): its operands may be words
        if "[-" not in args and not all(_operand(w, italic) for w in words[1:]):
            return None
        names += [n for n in spellings if n not in names]
        first = args if number == 0 else first
    return (names, first) if names else None


_OWN_OPTIONS = re.compile(r"\[-[^\[\]\s]*(?:\[[^\[\]\s]*\][^\[\]\s]*)*\]")
"""Options in brackets before a command's name in its tag, a word each (ovs-vsctl(8)'s
`[--if-exists] [--columns=column[,column]...] list table`)."""
_ANGLED = re.compile(r"<[^<>\s][^<>]*>\S*|\S+")
"""The words of a tag, a placeholder in angle brackets one word whatever spaces it
holds (wpa_cli(8)'s `identity <network id> <identity>`)."""
_OPTIONAL_PREFIX = re.compile(r"\[([a-z]+)\]([a-z][\w-]*)")


def _prefixed(word: str) -> str:
    """`[n]extract` (xauth(1): `extract` and `nextract`) as the two spellings
    `extract/nextract`; any other word as it is."""
    optional = _OPTIONAL_PREFIX.fullmatch(word)
    return f"{optional[2]}/{optional[1]}{optional[2]}" if optional else word


def _operand(word: str, italic: set[str]) -> bool:
    """Whether a word after a command's name in its tag stands for a value: a placeholder
    (`UNIT...`, `[PATTERN]`), a word set in italic, or alternatives one of which is
    (pg_conftool's `show parameter|all`, `parameter` in italic)."""
    if _PLACEHOLDER.fullmatch(word) or word.strip("[]{}.,|") in italic:
        return True
    return "|" in word and any(part.strip("[]{}.,") in italic for part in word.split("|"))


def _prose(lines: list[_Line], blocks: list[_Block]) -> str:
    """The opening paragraphs of the page's DESCRIPTION (`prose.opening`)."""
    for block in blocks:
        if not block.sub and prose.is_prose_section(block.title):
            shown = range(block.start, block.end)
            return prose.opening((lines[i].indent, lines[i].text) for i in shown)
    return ""


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
