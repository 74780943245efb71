"""Reading `--help` text: options, positional arguments, subcommands (RFC 0.6 §4.10.4).

General by construction — no table keyed by tool name. It understands the layouts the
common parsers print: GNU getopt_long (`-a, --all`, `--block-size=SIZE`, `--color[=WHEN]`),
argparse (`-n N, --num N`, `{a,b,c}`, "positional arguments:"), Click and Typer
(`-n, --name TEXT`, `--shout / --no-shout`, `[default: x]`), cobra ("Flags:",
"Available Commands:"), clap (`-f, --file <FILE>`, `[possible values: a, b]`), docopt-like
usage lines, and BSD single-dash options (`-chdir=DIR`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import msgspec

from atipkit.infer.prose import MAX_PROSE, opening

_HEADER = re.compile(r"^(?P<title>[A-Za-z][A-Za-z0-9 ,()/'&-]*?):?\s*$")
_USAGE = re.compile(r"^\s*(?:usage|Usage|USAGE):?\s*(?P<rest>.*)$")
_FLAG = re.compile(r"--?\[?[A-Za-z0-9?][\w.?\[\]-]*|-[!@$#^:/%](?![\w-])")
"""A flag: `-a`, `--all`, `-name`, `-d[etails]`; zip's `-@` and `-$`."""
_SPLIT = re.compile(r"\s{2,}|\t")
_VALUE_ROW = re.compile(r"[^\s-][^\s]*\s{2,}\S")
"""A row of a list of values: `N-M    from N'th to M'th byte`."""
_DEFAULT = re.compile(
    r"\[default:\s*(?P<a>[^\]]+)\]|\(default:?\s*(?P<b>[^)]+)\)|[Dd]efault(?:s)?(?: is| to|:)\s+"
    r"['\"`]?(?P<c>[^\s'\"`,;)]+)"
)
_POSSIBLE = re.compile(r"\[possible values:\s*(?P<v>[^\]]+)\]")
_CHOICES = re.compile(r"^\{(?P<v>[^{}]+)\}$")
_PLACEHOLDER_WORD = (
    r"(?:\[[^\]]*\]|<[^>]*>|\.\.\.|[A-Z][A-Z0-9_]*(?:\.\.\.)?(?:\|[A-Z][A-Z0-9_]*(?:\.\.\.)?)*)"
)
_COMMAND_LINE = re.compile(
    r"^(?P<indent>\s+)(?P<names>[A-Za-z][\w.:-]*(?:\s*,\s*[A-Za-z][\w.:-]*)*)"
    rf"(?P<args>(?:\s{_PLACEHOLDER_WORD})*)"  # `list-units [PATTERN...]`, `start UNIT...`
    r"(?:\s{2,}|\t+|\s+[-=]\s+)(?P<desc>\S.*)$"
)
"""A command's entry in a help's list of commands: its names, its placeholders, then
its description after two spaces, a tab, ` - ` or ` = ` (wpa_cli's `status [verbose] =
get current WPA/EAPOL/EAP status`)."""

_FILE = {"FILE", "PATH", "FILENAME", "FILES", "PATHS", "FILEPATH"}
_DIR = {"DIR", "DIRECTORY", "DIRS", "FOLDER"}
_URL = {"URL", "URI", "URLS"}
_INT = {
    "N",
    "NUM",
    "NUMBER",
    "INT",
    "INTEGER",
    "COUNT",
    "LINES",
    "BYTES",
    "SECONDS",
    "SECS",
    "PORT",
    "DEPTH",
    "LEVEL",
    "JOBS",
    "PID",
    "LIMIT",
    "MAX",
    "MIN",
    "SIZE_IN_BYTES",
}
_FLOAT = {"FLOAT", "NUMBER_FLOAT", "DECIMAL"}
_LITERAL = re.compile(r"[a-z][a-z0-9-]*")
_HELP_FLAGS = {"-h", "--help", "-?", "--usage", "-help", "--version", "-version"}
"""Options that ask for help or the version: documented options like any (decision 315),
but not enough to make a page a description (`generate.enough`). A bare `-V` is not
among them: `sort -V` sorts versions; an option spelled `-V, --version` goes by its long
flag."""


class ParsedOption(msgspec.Struct):
    flags: list[str]
    metavar: str | None = None
    optional_value: bool = False
    description: str = ""
    negatable: bool = False
    also: str = ""  # what a page says of it where the help's words are kept (`merge`)

    @property
    def name(self) -> str:
        longs = [f for f in self.flags if f.startswith("--")]
        chosen = longs[0] if longs else max(self.flags, key=len)
        return chosen.lstrip("-") or chosen


class ParsedArgument(msgspec.Struct):
    name: str
    required: bool = True
    variadic: bool = False
    description: str = ""
    choices: list[str] = []


class ParsedCommand(msgspec.Struct):
    name: str
    description: str = ""
    args: str = ""  # placeholders after the name in a listing: `list-units [PATTERN...]`
    commands: list[str] = []  # those a synopsis names below it: `tc qdisc [ add | delete ]`
    options: list[ParsedOption] = []  # those a page sets inside its entry (gio's `copy`)


class ParsedHelp(msgspec.Struct):
    description: str = ""
    usage: str = ""
    options: list[ParsedOption] = []
    arguments: list[ParsedArgument] = []
    commands: list[ParsedCommand] = []
    examples: list[str] = []  # command lines, each with what it does as a `# comment`
    prose: str = ""  # what the command is for, in a page's words (`infer.prose`)
    purpose: str = ""  # its own part of a NAME line several names share (`manpage._own`)
    programs: list[str] = []  # programs a page lists among its commands: git(1)'s gitk(1)

    @property
    def richness(self) -> int:
        """How much the text said: the better of several help forms has more."""
        return (
            2 * len(self.options)
            + 2 * len(self.commands)
            + len(self.arguments)
            + (1 if self.description else 0)
        )


def parse_help(text: str, prog: str | None = None) -> ParsedHelp:
    """Everything `text` says about options, arguments and subcommands."""
    lines = _clean(text).split("\n")
    help_ = ParsedHelp()
    section = ""
    usage_lines: list[str] = []
    forms: list[str] = []  # the usage forms after the first
    option: list[ParsedOption] = []  # the options of the line read last
    values_above = False  # whether the line above is a row of a list of values
    option_indent = 0
    argument: ParsedArgument | None = None
    listing_indent: int | None = None  # where the section's command names start
    entry_indent: int | None = None  # the last command entry's, until a blank line
    in_usage = False
    examples = _Examples(prog)
    prose_lines: list[tuple[int, str]] = []  # the text below the description, capped
    said = 0
    for index, raw in enumerate(lines):
        line = re.sub(r"^(\s*)\*\s+", r"\1", raw.rstrip())  # Typer's required marker
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped:
            values_above = False
            option, argument = [], None
            entry_indent = None
            examples.pause()
            if section == "usage" and usage_lines:
                section = ""  # a usage block ends at a blank line
            continue
        usage = _USAGE.match(line)
        if usage and indent <= 2:
            section = "usage"
            in_usage = not usage_lines  # only the first usage line may wrap
            if usage.group("rest"):
                usage_lines.append(usage.group("rest"))
            continue
        if indent <= 1 and _is_header(stripped, lines, index):  # argp: " Main mode:"
            section = stripped.rstrip(":").strip().lower()
            option, argument = [], None
            listing_indent = entry_indent = None
            continue
        if section == "usage" and indent > 0 and not usage_lines:
            usage_lines.append(stripped)
            continue
        if section == "usage" and indent > 0 and _names_program(stripped, prog):
            in_usage = False  # further usage forms: the first is the one used
            forms.append(stripped)
            continue
        if section == "usage" and indent > 0 and in_usage and not stripped.startswith("-"):
            usage_lines[0] = f"{usage_lines[0]} {stripped}"  # a wrapped usage line
            continue
        in_usage = False
        if section in _EXAMPLE_SECTIONS:
            examples.read(stripped)
            continue
        value_list = values_above  # cut's `N-M  from N'th...` / `-M  from first...`
        values_above = bool(_VALUE_ROW.match(stripped)) and indent <= 16
        if stripped.startswith("-") and _FLAG.match(stripped) and indent <= 16 and not value_list:
            parsed = _option_line(stripped)
            if parsed:
                option, option_indent = parsed, indent
                argument = None
                help_.options += parsed
                continue
        if option and indent > option_indent and not stripped.startswith("-"):
            for each in option:
                each.description = f"{each.description} {stripped}".strip()
            continue
        if argument is not None and indent > 2 and not _COMMAND_LINE.match(line):
            argument.description = f"{argument.description} {stripped}".strip()
            continue
        if "command" in section and indent > 0:
            match = _COMMAND_LINE.match(line)
            # set deeper than the entry above, with no blank line between: that entry's
            # (xauth's `generate ... [options]` / `options are:` / `  trusted  ...`)
            within = entry_indent is not None and indent > entry_indent
            if match and not within and not match.group("names").endswith("."):
                listing_indent = entry_indent = indent
                names = [n.strip().rstrip(":") for n in match.group("names").split(",")]
                help_.commands.append(
                    ParsedCommand(
                        names[0], match.group("desc").strip(), (match.group("args") or "").strip()
                    )
                )
                continue
            bare = re.fullmatch(r"\s+([a-z][\w-]*)", line)
            # deeper than the names: the last word of a description wrapped onto its own line
            if bare and (listing_indent is None or indent <= listing_indent):
                listing_indent = entry_indent = indent
                help_.commands.append(ParsedCommand(bare.group(1)))
                continue
        if section in ("positional arguments", "arguments", "args", "positionals") and indent:
            parts = _SPLIT.split(stripped, maxsplit=1)
            name = parts[0]
            choices = _CHOICES.match(name)
            if choices:  # argparse subparsers: {add,list}
                for value in choices.group("v").split(","):
                    help_.commands.append(ParsedCommand(value.strip()))
                continue
            argument = ParsedArgument(
                _arg_name(name), description=parts[1] if len(parts) > 1 else ""
            )
            help_.arguments.append(argument)
            continue
        if indent == 0 and section in ("", "usage") and not usage:
            if not help_.description:
                help_.description = stripped
            elif said < MAX_PROSE:  # the paragraphs after it say what the command is for
                prose_lines.append((0, stripped))
                said += len(stripped) + 1
    help_.examples = examples.found
    help_.prose = opening(prose_lines)
    help_.usage = usage_lines[0] if usage_lines else ""
    if not help_.options and prog:
        help_.options = leading_options([*usage_lines[:1], *forms], [prog])
    return finish(help_, prog)


def finish(help_: ParsedHelp, prog: str | None) -> ParsedHelp:
    """What every reader does last (help text and man pages alike): positional arguments
    from the usage line, each flag once, each command once and not `help` (a word many
    programs take for an operand, decision 41)."""
    _from_usage(help_, prog)
    _written_in(help_.options)
    help_.options = _dedupe(help_.options)
    help_.commands = list({c.name: c for c in help_.commands if c.name != "help"}.values())
    return help_


_EXAMPLE_SECTIONS = {"example", "examples", "usage examples", "common examples"}
MAX_EXAMPLES = 10


class _Examples:
    """Example command lines of an EXAMPLES section, each with the words that say what
    it does: cobra's `# comment` line above it (kubectl), or the sentence a man page
    writes above it (tar). `$ ` prompts are dropped, `\\` continuations joined; a line
    that does not run the program is text, not an example."""

    def __init__(self, prog: str | None) -> None:
        self.prog = prog
        self.found: list[str] = []
        self._text: list[str] = []
        self._pending = ""  # a command line still continued with `\\`

    def pause(self) -> None:
        """A blank line: what was said before it describes no later example."""
        self._text = []

    def read(self, line: str) -> None:
        if self._pending:
            line = f"{self._pending} {line}"
            self._pending = ""
        command = line.removeprefix("$ ").strip()
        words = command.split()
        runs = bool(words) and bool(self.prog) and words[0].rsplit("/", 1)[-1] == self.prog
        if line.startswith("$ ") and not runs:  # another program's command line
            self._text = []
            return
        if runs:
            if command.endswith("\\"):
                self._pending = command[:-1].strip()
                return
            said = " ".join(self._text).strip().rstrip(":")
            if len(self.found) < MAX_EXAMPLES and command not in self.found:
                self.found.append(f"{command}  # {said}" if said else command)
            self._text = []
        else:
            self._text.append(line.lstrip("#").strip())


_BOX_TITLE = re.compile(r"^\s*[╭┌+][─-]+\s*(?P<title>[^─]+?)\s*[─-]+[╮┐+]\s*$")
_BOX_SIDE = re.compile(r"^\s*[│|]\s?(?P<body>.*?)\s*[│|]\s*$")


def _names_program(line: str, prog: str | None) -> bool:
    """Whether a line starts another usage form: `or: prog ...`, `prog ...`, `/usr/bin/prog`."""
    first = line.split()[0] if line.split() else ""
    return first in ("or:", "or") or (bool(prog) and first.rsplit("/", 1)[-1] == prog)


def _clean(text: str) -> str:
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)  # colours
    text = re.sub(r".\x08", "", text)  # man-style overstrike (bold, underline)
    text = text.replace("\r\n", "\n").expandtabs(8)
    if "╭" not in text and "┌" not in text:
        return text
    lines = []  # rich boxes (Typer, rich-click): `╭─ Commands ─╮` is a section header
    for line in text.split("\n"):
        title = _BOX_TITLE.match(line)
        side = _BOX_SIDE.match(line)
        if title:
            lines.append(f"{title.group('title')}:")
        elif side:
            lines.append("  " + side.group("body"))
        elif re.match(r"^\s*[╰└][─]+[╯┘]\s*$", line):
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines)


def _is_header(stripped: str, lines: list[str], index: int) -> bool:
    if stripped.endswith(":") and len(stripped) <= 60 and _HEADER.match(stripped):
        return not stripped.startswith("-")
    # man-page and cobra style: an all-caps line (OPTIONS, CORE COMMANDS)
    return stripped.isupper() and len(stripped) <= 40 and len(stripped.split()) <= 4


class _Spelling(NamedTuple):
    """One spelling of an option: `-C NUM`, `--context[=NUM]`, `-c`."""

    flag: str
    metavar: str | None = None
    optional: bool = False


def _option_line(stripped: str) -> list[ParsedOption]:
    """`-a, --all  description`, `--size=SIZE`, `-f FILE, --file FILE`, `--x / --no-x`."""
    parts = _SPLIT.split(stripped, maxsplit=1)
    spec, description = parts[0], parts[1] if len(parts) > 1 else ""
    while spec.endswith(",") and description.startswith("-"):  # wget's `-b,  --background`
        more = _SPLIT.split(description, maxsplit=1)
        spec, description = f"{spec} {more[0]}", more[1] if len(more) > 1 else ""
    if " / " in spec and not description:
        spec, _, description = spec.partition("  ")
    spec = _levels(spec)
    negatable = False
    chunks = [c.strip() for c in _SPELLINGS.split(spec) if c.strip()]
    if len(chunks) > 1 and all(c.startswith("-") for c in chunks) and " / " in spec:
        negatable = True
        chunks = chunks[:1]  # --shout / --no-shout: the flag, and its negation
    spellings: list[_Spelling] = []
    for position, chunk in enumerate(chunks):
        match = _FLAG.match(chunk)
        if match is None:
            if spellings and not any(s.metavar for s in spellings):  # `-f, --file FILE`
                spellings[-1] = spellings[-1]._replace(metavar=chunk.split()[0].strip("<>"))
            continue
        flag, rest, negated = _flag(match.group(0), chunk[match.end() :])
        negatable = negatable or negated
        if flag is None:
            continue
        metavar_text, _, tail = (
            rest.strip().partition(" ")
            if not rest.startswith(("=", "["))
            else (rest.strip(), "", "")
        )
        if rest.startswith(" ") and position == len(chunks) - 1 and tail and not description:
            # `-o FILE write it` with single spaces; a word that names no placeholder
            # begins the description (`--synchronous synchronous output (safer...)`)
            if re.fullmatch(r"[A-Z][A-Z0-9_-]*|<.+>|\[.+\]|\{.+\}", metavar_text):
                description = tail.strip()
            else:
                description, metavar_text = rest.strip(), ""
        metavar, optional = _metavar(metavar_text if rest.startswith(" ") else rest)
        if metavar and metavar.startswith("-"):  # find's `-daystart -follow`: a flag
            metavar = None
        spellings.append(_Spelling(flag, metavar, optional))
    options = _assemble(spellings, description.strip(), negatable)
    for option in options:
        column = re.match(r"<(?P<m>[\w.-]+)>(?:\s+|$)", option.description)
        if column and not option.metavar:  # a metavar column (Typer, rich-click): `<int>`
            option.description = option.description[column.end() :].strip()
            if column.group("m").lower() != "bool":
                option.metavar = column.group("m")
    return options


def options_from_tag(tag: str, description: str = "") -> list[ParsedOption]:
    """The options of a man page's tag, whose description stands apart: every word after
    a flag is its value (`-exec command ;`, `-fprintf file format`, `--arg name value`),
    and a flag ending in `=` takes one it does not name (systemd's `--since=`). Spellings
    are separated by commas, slashes, "or" or a space before `--` (`-B or
    --auto-buffers`, `--slurp/-s`, gzip's `-c --stdout`); `-0 ... -9` are ten."""
    negatable = False
    spellings: list[_Spelling] = []
    for chunk in _SPELLINGS.split(_levels(_unrepeated(tag))):
        chunk = chunk.strip()
        if chunk.startswith("(-"):  # zip's `-#` / `(-0, -1, ..., -9)`
            chunk = chunk[1:]
        if chunk.endswith(")") and "(" not in chunk:
            chunk = chunk[:-1]
        letters = _OPTIONAL_LETTERS.match(chunk.strip())
        if letters:  # iproute2's `-c[color]`: `-c` or `-color`
            short, more, chunk = letters.groups()
            longer = f"-{more}" if more.startswith(short[1:]) else f"{short}{more}"
            spellings.append(_Spelling(short))
            chunk = f"{longer}{chunk}"
        match = _FLAG.match(chunk.strip())
        if match is None:
            continue
        flag, rest, negated = _flag(match.group(0), chunk.strip()[match.end() :])
        negatable = negatable or negated
        if flag is None:
            continue
        value = rest.strip()
        if rest.startswith("=") and not value.removeprefix("="):
            value = "=VALUE"
        metavar, optional = _metavar(value)
        if rest.startswith(" ") and not (value.startswith("[") and value.endswith("]")):
            optional = False  # `-D [bind_address:]port`: the value is required
        spellings.append(_Spelling(flag, metavar, optional))
    return _assemble(spellings, description, negatable)


_SPELLINGS = re.compile(
    r",\s*(?:or\s+)?(?=\(?[-+])|[/|](?=--?[A-Za-z])"
    r"|(?<!\s)\s+(?:/\s+|(?:\||or)\s+(?=-)|(?=--[A-Za-z]))"
)
"""Between two spellings of an option: `-a, --all`, `--x / --no-x`, `--slurp/-s`,
`-c|-C|--columns` (dmsetup's), `-a | --ask` (nmcli's), `-B or --auto-buffers`, `-c
--stdout` (a space, then a long flag). A run of spaces is tried from
its start only (a look-behind): from every space of it, a line of spaces costs its length
squared."""


def _unrepeated(tag: str) -> str:
    """A tag without a last bracket group that says it again, that it may be repeated
    (dmsetup's `-v|--verbose [-v|--verbose]`): no value."""
    at = tag.rfind("[")
    if not tag.endswith("]") or at < 1 or not tag[at - 1].isspace() or tag[at + 1 : at + 2] != "-":
        return tag
    said = set(_FLAG_WORD.findall(tag[:at]))
    return tag[:at].rstrip() if set(_FLAG_WORD.findall(tag[at:])) <= said else tag


_FLAG_WORD = re.compile(r"-[-\w]+")


_OPTIONAL_LETTERS = re.compile(r"(-[a-z]+)\[([a-z]{2,})\](.*)$")


def _levels(spec: str) -> str:
    """`-0 ... -9` (xz's levels) → `-0, -1, ..., -9`."""
    span = re.match(r"-(\d)\s*(?:\.\.\.?|…|to)\s*-(\d)(?=\s|,|$)", spec)
    if span is None or span.group(1) >= span.group(2):
        return spec
    levels = ", ".join(f"-{n}" for n in range(int(span.group(1)), int(span.group(2)) + 1))
    return levels + spec[span.end() :]


def _flag(flag: str, rest: str) -> tuple[str | None, str, bool]:
    """(flag, what follows it, whether it is negatable) from a flag as matched:
    `--[no-]tags` (git's negatable flag); `-i[SUFFIX]` and `--color[=WHEN]`, an
    optional value attached. None for a lone dash."""
    negated = "[no-]" in flag
    flag = flag.replace("[no-]", "").rstrip(".,:;")
    if "[" in flag:
        flag, rest = flag[: flag.index("[")], flag[flag.index("[") :] + rest
    if len(flag) < 2 or flag in ("-", "--"):
        return None, rest, negated
    return flag, rest, negated


def _assemble(spellings: list[_Spelling], description: str, negatable: bool) -> list[ParsedOption]:
    """The options a tag's spellings make. Usually one; but a short flag written bare
    beside a short one that takes a value (`-c, -C NUM, --context[=NUM]`) takes none: it
    is an option of its own. (Beside a long flag whose value is optional, it may take
    one attached — `-e, --eof[=END]`, xargs's `-eEND` — or none — ls's `-F,
    --classify[=WHEN]`: the help cannot tell, and it is left with the long one.) A flag
    written both bare and with a value (`--check, --check=diagnose-first`) takes an
    optional one. A single-dash word that is another spelling's value (pgrep's `-signal`
    over `--signal signal`) stands for that value written as a flag (`-KILL`): it is
    not a spelling."""
    values = {s.metavar.strip("<>[]").lower() for s in spellings if s.metavar}
    spellings = [
        s
        for s in spellings
        if s.metavar or s.flag.startswith("--") or s.flag[1:].lower() not in values
    ]
    bare = {s.flag for s in spellings if s.metavar is None}
    spellings = [s._replace(optional=True) if s.flag in bare else s for s in spellings]
    valued = [s for s in spellings if s.metavar]
    alone = [s for s in spellings if not s.metavar and len(s.flag) == 2]
    apart = bool(alone) and any(len(s.flag) == 2 and not s.optional for s in valued)
    groups = [[s for s in spellings if s not in alone], alone] if apart else [spellings]
    out = []
    for group in groups:
        flags = _digits(list(dict.fromkeys(s.flag for s in group)))
        if not flags:
            continue
        option = ParsedOption(flags=flags, description=description, negatable=negatable)
        first = next((s for s in group if s.metavar), None)
        if first is not None and first.metavar:  # always, once found: said for mypy
            option.metavar, option.optional_value = first.metavar, first.optional
            option.flags = _unglued(flags, first.metavar)
        out.append(option)
    return out


def _digits(flags: list[str]) -> list[str]:
    """`-#` stands for a digit: gzip's `-# --fast --best` are `-1` to `-9` (beside
    zip's `-0, -1, ..., -9`, it says nothing more)."""
    if "-#" not in flags:
        return flags
    digits = [] if any(re.fullmatch(r"-\d", f) for f in flags) else [f"-{n}" for n in range(1, 10)]
    at = flags.index("-#")
    return flags[:at] + digits + flags[at + 1 :]


def _unglued(flags: list[str], metavar: str) -> list[str]:
    """Flags without their value written attached: jq's `-Ldirectory / -L directory`,
    apt-get's `-eany, --error-on=any` (`-e`), zip's `-Qn, --Q-flag n` (`-Q`)."""
    out: list[str] = []
    for flag in flags:
        if flag.endswith(metavar) and re.fullmatch(r"-\w", flag[: -len(metavar)]):
            flag = flag[: -len(metavar)]
        if flag not in out:
            out.append(flag)
    return out


def _written_in(options: list[ParsedOption]) -> None:
    """ls's `-p, --indicator-style=slash` beside `--indicator-style=WORD`, sort's `-C,
    --check=quiet` beside `-c, --check[=diagnose-first]`: a long flag given with a value
    written in (lower case) where another option gives it a value too belongs to the
    other (the one that names its value, else the one where it is optional); what is
    left (`-p`, `-C`) takes no value."""
    owner: dict[str, ParsedOption] = {}
    for option in options:
        for flag in option.flags if option.metavar else []:
            known = owner.get(flag)
            if known is None or _rank(option) < _rank(known):
                owner[flag] = option
    for option in options:
        if option.metavar and _LITERAL.fullmatch(option.metavar):
            left = [f for f in option.flags if owner.get(f, option) is option]
            if left and len(left) < len(option.flags):
                option.flags, option.metavar, option.optional_value = left, None, False


def _rank(option: ParsedOption) -> tuple[bool, bool]:
    """Which of two options giving a flag a value owns it: a placeholder first
    (`=WORD`), then an optional value."""
    return bool(_LITERAL.fullmatch(option.metavar or "")), not option.optional_value


def asks_help(option: ParsedOption) -> bool:
    """Whether an option asks for help or the version: by its long
    spellings when it has some (`-h, --human-readable` is not; ip's `-h, -human` is
    not), else by its short one (`-h`, `-?`)."""
    longs = [f for f in option.flags if len(f.lstrip("-")) > 1]
    return bool(set(longs or option.flags) & _HELP_FLAGS)


def _metavar(rest: str) -> tuple[str | None, bool]:
    rest = rest.strip()
    if not rest:
        return None, False
    if rest.startswith("[=") and rest.endswith("]"):
        return rest[2:-1], True
    if rest.startswith("[") and rest.endswith("]"):
        return rest[1:-1].lstrip("="), True
    rest = rest.lstrip("=").strip()
    if rest.endswith(":"):  # a default shown, Cobra's `--as='':`, `--force=false:`
        shown = rest[:-1].strip("'\"")
        return (None if shown in ("true", "false") else shown or "value"), False
    return (rest.strip("<>") or None), False


def _arg_name(token: str) -> str:
    name = re.sub(r"[\[\]<>{}.]", "", token).strip().lower()
    name = re.sub(r"[^a-z0-9_-]+", "-", name).strip("-")
    return name or "arg"


def command_listing(text: str) -> list[ParsedCommand]:
    """Every command of a complete listing (`git help -a`): there, each indented
    two-column line whose name is lower-case names a command, under a header that names
    commands (or none yet) — not git's "User-facing repository, command and file
    interfaces" or "Developer-facing file formats", which list guides."""
    out: dict[str, ParsedCommand] = {}
    listing = True
    for line in _clean(text).split("\n"):
        if line.strip() and not line[0].isspace():
            listing = bool(re.search(r"\bcommands\b", line, re.IGNORECASE))
            continue
        match = _COMMAND_LINE.match(line.rstrip())
        if listing and match and match.group("names")[0].islower():
            name = match.group("names").split(",")[0].strip().rstrip(":")
            out.setdefault(
                name,
                ParsedCommand(
                    name, match.group("desc").strip(), (match.group("args") or "").strip()
                ),
            )
    return list(out.values())


def arguments_from(placeholders: str) -> list[ParsedArgument]:
    """Positional arguments from placeholder words alone (`[PATTERN...] UNIT`)."""
    probe = ParsedHelp(usage=placeholders)
    _from_usage(probe, None)
    return probe.arguments


def _from_usage(help_: ParsedHelp, prog: str | None) -> None:
    """Positional arguments from the usage line, unless a section already listed them
    (then the usage line tells which are optional and variadic)."""
    if not help_.usage:
        return
    words = _usage_words(help_.usage, prog)
    found: list[ParsedArgument] = []
    for word in words:
        optional = word.startswith("[")
        core = word.strip("[]")
        variadic = "..." in word
        core = core.replace("...", "").strip("[] ")
        if (
            not core
            or core.lstrip("(").startswith("-")  # `[(-o|--output=)json|yaml]`: a flag's values
            or core.upper() in ("OPTIONS", "OPTION", "FLAGS", "ARGS", "ARGUMENTS")
        ):
            continue
        if help_.commands and core.lower().strip("<>") in ("command", "subcommand", "cmd"):
            continue  # the slot of the subcommands listed below
        if core.startswith("{") and core.endswith("}"):
            continue  # argparse subcommand choices
        found.append(ParsedArgument(_arg_name(core), required=not optional, variadic=variadic))
    if help_.arguments:
        by_name = {a.name: a for a in found}
        for argument in help_.arguments:
            usage = by_name.get(argument.name)
            if usage:
                argument.required, argument.variadic = usage.required, usage.variadic
        return
    help_.arguments = found


def usage_tokens(usage: str) -> list[str]:
    """A usage line's words, a bracketed group kept whole: `[--foo FOO]`, `[FILE]...`,
    `<path>...`, `[-t <branch>]`."""
    tokens: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in usage:
        if ch in "[{<(":
            depth += 1
        elif ch in "]}>)":
            depth = max(0, depth - 1)
        if ch.isspace() and depth == 0:
            if current:
                tokens.append("".join(current))
            current = []
        else:
            current.append(ch)
    if current:
        tokens.append("".join(current))
    return tokens


def leading_options(forms: list[str], program: list[str]) -> list[ParsedOption]:
    """The options usage forms write right after the program's words, for a text that
    lists none (gsettings's help: `gsettings --version` / `gsettings [--schemadir
    SCHEMADIR] COMMAND [ARGS…]`). Long flags and single letters only: `[-jy]` may be a
    cluster of letters; options after a command's name are that command's."""
    out: list[ParsedOption] = []
    for text in forms:
        tokens = usage_tokens(text)
        if [t.rsplit("/", 1)[-1] for t in tokens[: len(program)]] != program:
            continue
        for token in tokens[len(program) :]:
            inner = token[1:-1].strip() if token[:1] == "[" and token[-1:] == "]" else token
            if not inner.startswith("-"):
                break
            for choice in inner.split("|"):
                for option in options_from_tag(choice.strip()):
                    option.flags = [f for f in option.flags if f[:2] == "--" or len(f) == 2]
                    out += [option] if option.flags else []
    return out


def _usage_words(usage: str, prog: str | None) -> list[str]:
    """Usage tokens after the program name (and its subcommand words)."""
    tokens = usage_tokens(usage)
    while tokens and (prog and (tokens[0] == prog or tokens[0].endswith("/" + prog))):
        tokens.pop(0)
    if tokens and tokens[0].startswith("/"):  # the program by another path: /lib/systemd/systemd
        tokens.pop(0)
    # drop leading words that are the program and its subcommands (lowercase, no brackets)
    while (
        tokens
        and re.fullmatch(r"[a-z][\w.-]*", tokens[0])
        and not any(ch in tokens[0] for ch in "[]<>")
        and tokens[0].upper() != tokens[0]
    ):
        tokens.pop(0)
    return tokens


def _dedupe(options: list[ParsedOption]) -> list[ParsedOption]:
    seen: set[str] = set()
    out = []
    for option in options:
        fresh = [f for f in dict.fromkeys(option.flags) if f not in seen]
        if not fresh:
            continue
        option.flags = fresh
        seen.update(fresh)
        out.append(option)
    return out


# -- from parsed text to ATIP fragments ------------------------------------------------------


def option_type(option: ParsedOption) -> tuple[str, list[str] | None]:
    """(ATIP type, enum values) from the metavar and the description."""
    if not option.metavar:
        return "boolean", None
    return _type(option.metavar, option.description)


def _type(metavar: str, description: str) -> tuple[str, list[str] | None]:
    values = _enum(metavar, description)
    if values:
        return "enum", values
    word = re.sub(r"[^A-Za-z]", "", metavar).upper()
    if word in _FILE or word.endswith("FILE"):
        return "file", None
    if word in _DIR or word.endswith("DIR"):
        return "directory", None
    if word in _URL or word.endswith("URL"):
        return "url", None
    if word in _INT or metavar.upper() in ("INTEGER RANGE",):
        return "integer", None
    if word in _FLOAT:
        return "number", None
    return "string", None


def _enum(metavar: str, description: str) -> list[str] | None:
    choices = _CHOICES.match(metavar.strip())
    if choices:
        return [v.strip() for v in choices.group("v").split(",") if v.strip()]
    if "|" in metavar and " " not in metavar.strip("[]<>"):
        values = [v for v in metavar.strip("[]<>()").split("|") if v]
        if len(values) > 1 and all(re.fullmatch(r"[\w.+-]+", v) for v in values):
            return values
    possible = _POSSIBLE.search(description)
    if possible:
        return [v.strip() for v in possible.group("v").split(",") if v.strip()]
    return None


def default_of(description: str) -> Any:
    match = _DEFAULT.search(description)
    if match is None:
        return None
    value = next(g for g in match.groups() if g)
    return value.strip().strip("'\"`")


def argument_type(argument: ParsedArgument) -> tuple[str, list[str] | None]:
    """(ATIP type, enum values) from the argument's name and description: an enum
    always comes with its values (`[possible values: a, b]` in clap's help)."""
    return _type(argument.name.upper(), argument.description)
