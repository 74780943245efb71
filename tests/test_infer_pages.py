"""Man pages read by their layout (issue 20): COMMANDS sections and synopses as lists of
subcommands, never a table's cell or an example's output; every option of a page, with
whether it takes a value.

The real pages of this machine where they exist (the test is skipped where one is not
installed), small roff pages written here for layouts the machine lacks. Nothing of a
tool is run unless the test says so (`--help` of GNU tools).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from atipkit.infer.generate import generate_shim, shim_from_page
from atipkit.infer.helptext import ParsedHelp, command_listing, options_from_tag, parse_help
from atipkit.infer.manpage import ManPages, merge, read_man_file
from atipkit.infer.pagetext import MAX_COMMANDS
from tests.servers import require

NAME = __import__("re").compile(r"[a-z0-9][a-z0-9_.+:-]*")


@pytest.fixture(scope="module")
def pages() -> ManPages:
    require("groff", "apt-get install groff-base")
    return ManPages()


def _read(pages: ManPages, name: str) -> ParsedHelp:
    found = pages.find(name)
    if found is None:
        pytest.skip(f"no man page for {name} on this machine")
    page = read_man_file(found, name)
    assert page is not None
    return page.help


def _page(tmp_path: Path, name: str, source: str) -> ParsedHelp:
    require("groff", "apt-get install groff-base")
    path = tmp_path / f"{name}.1"
    path.write_text(source)
    page = read_man_file(path, name)
    assert page is not None
    return page.help


def _commands(parsed: ParsedHelp) -> dict[str, str]:
    return {c.name: c.args for c in parsed.commands}


def _values(parsed: ParsedHelp) -> dict[str, bool]:
    """Flag → whether its option takes a value."""
    return {f: o.metavar is not None for o in parsed.options for f in o.flags}


# -- item 1: a COMMANDS section is the list of subcommands ----------------------------------


def test_systemctls_commands_come_from_its_commands_section_never_from_its_tables(pages):
    """systemctl(1): tables of unit states, example output with column headings and unit
    names, all inside the COMMANDS section. Before, 26 commands of which one was real."""
    commands = _commands(_read(pages, "systemctl"))
    for name in ("start", "stop", "is-active", "list-units", "enable", "daemon-reload"):
        assert name in commands, name
    assert commands["list-units"] == "[PATTERN...]"  # becomes the command's arguments
    assert commands["start"] == "PATTERN..."
    cells = {"UNIT", "LOAD", "SUB", "active", "inactive", "failed", "sys-module-fuse.device"}
    cells |= {"boot-efi.mount", "LISTEN", "freezer", "Name", "State", "and"}
    assert not cells & set(commands), cells & set(commands)
    assert len(commands) >= 60
    assert all(NAME.fullmatch(name) for name in commands)


def test_a_denied_tool_gets_its_commands_and_their_arguments_from_its_page(pages):
    """`atip gen systemctl`: denied, so its page is all there is (decision 158)."""
    if shutil.which("systemctl") is None:
        pytest.skip("no systemctl")
    shim = generate_shim("systemctl")
    assert {"start", "is-active", "list-units"} <= set(shim.commands)
    start = shim.commands["start"]
    assert [(a.name, a.variadic) for a in start.arguments] == [("pattern", True)]


@pytest.mark.parametrize(
    ("name", "expected", "never"),
    [
        # the OBJECT list of ip(8), and its synopsis's `OBJECT := { ... neigh ... }`
        ("ip", {"address", "link", "route", "neigh", "neighbour", "netns"}, {"addr"}),
        # DESCRIPTION entries, found through the synopsis's `{update | upgrade | ...}`
        ("apt-get", {"update", "install", "changelog", "autoremove"}, {"apt-get"}),
        # git(1)'s command lists name git-add(1) ...; gitk(1) is another program
        ("git", {"add", "commit", "remote", "cat-file", "rev-parse"}, {"gitk", "attributes"}),
        # `cms CMS (Cryptographic Message Syntax) command.`: one space after the name
        ("openssl", {"x509", "req", "cms", "crl", "enc", "sha256"}, set()),
        # entries that carry their own synopsis, in sections named for what they do
        ("tmux", {"attach-session", "kill-server", "bind-key", "set-option"}, {"tiled"}),
        ("loginctl", {"list-sessions", "session-status", "terminate-user"}, set()),
        # a subcommand page: the synopsis's forms name the commands
        ("git-remote", {"add", "rename", "remove", "set-url", "prune"}, {"git"}),
        ("ip-address", {"add", "del", "show", "flush", "showdump"}, {"dev"}),
        # commands as sub-headings of COMMANDS
        ("blkzone", {"report", "reset", "open", "close", "finish"}, {"len", "wptr"}),
    ],
)
def test_commands_sections_and_synopses_are_read_as_lists_of_commands(
    pages, name: str, expected: set[str], never: set[str]
):
    commands = set(_commands(_read(pages, name)))
    assert expected <= commands, expected - commands
    assert not never & commands


@pytest.mark.parametrize(
    "name",
    ["ls", "cp", "grep", "sed", "tar", "find", "gzip", "ssh", "ps", "diff", "sort", "curl"],
)
def test_a_tool_without_subcommands_gets_none_from_its_page(pages, name: str):
    assert _read(pages, name).commands == []


@pytest.mark.parametrize("name", ["umount", "java", "jdeprscan", "partx"])
def test_operands_in_italic_in_the_synopsis_are_not_commands(pages, name: str):
    """`umount [-dflnrv] {directory|device}`, `java [options] mainclass`: what the reader
    replaces is set in italic, a command is typed as it stands."""
    assert _read(pages, name).commands == []


TABLE_PAGE = r""".TH TOOL 1 "2026" "tool 1.0" "User Commands"
.SH NAME
tool \- manage widgets
.SH SYNOPSIS
.B tool
[\fB\-q\fR] \fICOMMAND\fR
.SH COMMANDS
.TP
.B add \fINAME\fR
Add a widget.
.TS
l l.
STATE	MEANING
ready	The widget can be used
broken	The widget needs repair
.TE
.TP
.B remove \fINAME\fR
Remove a widget.
.PP
The widgets listed are shown as
.PP
.nf
.RS
NAME    STATE
spoon   ready
fork    broken
.RE
.fi
"""


def test_a_tables_rows_and_an_examples_output_are_never_commands(tmp_path: Path):
    """An unboxed tbl table set at the listing's indent looks like a listing (`steady
    A state`); the roff source says it is a table."""
    table = ".PP\n.TS\nl l.\nsteady\tA state of the widget\nmoving\tAnother one\n.TE\n"
    source = TABLE_PAGE.replace(".TP\n.B remove", f"{table}.TP\n.B remove")
    commands = _commands(_page(tmp_path, "tool", source))
    assert commands == {"add": "NAME", "remove": "NAME"}


def test_a_hostile_page_is_read_in_time_linear_in_its_size(tmp_path: Path):
    """10 000 table rows, a COMMANDS section of 50 000 lines, lines of 100 000
    characters: read once each, the time grows with the size."""
    rows = "\n".join(f"row{i}\tcell {i}" for i in range(10_000))
    listing = "\n".join(f".TP\n.B cmd{i}\nDoes thing {i}." for i in range(25_000))
    long = "x" * 100_000
    source = TABLE_PAGE.replace(".TS\nl l.\n", f".TS\nl l.\n{rows}\n").replace(
        ".SH COMMANDS\n", f".SH COMMANDS\n{long}\n.PP\n{listing}\n"
    )
    from atipkit.infer.manpage import parse_man_text, render
    from atipkit.infer.pagetext import mark_tables

    text = render(mark_tables(source), timeout=60)
    assert text.count("\n") > 50_000
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    parsed = parse_man_text(text, "tool")
    seconds = time.thread_time() - start
    assert parsed is not None
    assert len(parsed.commands) == MAX_COMMANDS  # all 25 002 read, at most 256 kept
    half = parse_man_text(text[: len(text) // 2], "tool")
    assert half is not None
    start = time.thread_time()
    parse_man_text(text[: len(text) // 2], "tool")
    assert seconds < 20
    assert seconds < 4 * (time.thread_time() - start) + 1


# -- item 2: every option, and whether it takes a value --------------------------------------


def test_finds_tests_and_actions_are_options_and_its_operators_are_not(pages):
    values = _values(_read(pages, "find"))
    for flag in ("-newerXY", "-mmin", "-exec", "-fprintf", "-name", "-maxdepth", "-size"):
        assert values.get(flag) is True, flag
    for flag in ("-delete", "-print0", "-empty", "-daystart", "-xdev", "-L", "-P"):
        assert values.get(flag) is False, flag
    assert not {"-not", "-a", "-o", "-and", "-or", "-n"} & set(values)
    assert len(values) >= 75


def test_prose_that_starts_with_a_flag_is_not_an_option(pages):
    """systemctl(1) wraps `--failed are used, units are additionally filtered...` and
    tmux(1) `-m and -M are used to set...`: paragraphs going on, not tags."""
    systemctl = _read(pages, "systemctl")
    assert all(o.metavar in (None, "VALUE") or " " not in o.metavar for o in systemctl.options)
    assert _values(systemctl)["--type"] is True  # `-t, --type=`: the value unnamed
    tmux = _values(_read(pages, "tmux"))
    assert set(tmux) >= {"-2", "-C", "-c", "-f", "-L", "-S", "-T", "-V"}
    assert not {"-m", "-X", "-x", "-E", "-b", "-d", "-t"} & set(tmux)  # its commands'


def test_spellings_and_values_of_tags_in_every_layout(pages):
    wget = _read(pages, "wget")
    output = next(o for o in wget.options if "--output-file" in o.flags)
    assert output.flags == ["-o", "--output-file"]
    assert output.metavar  # stacked tags
    jq = _read(pages, "jq")  # a page written in Markdown: bullets
    assert {"--color-output", "-C"} in [set(o.flags) for o in jq.options]
    assert {"--monochrome-output", "-M"} in [set(o.flags) for o in jq.options]
    assert _values(jq)["-L"] is True
    assert "-Ldirectory" not in _values(jq)
    xz = _values(_read(pages, "xz"))
    assert all(xz[f"-{n}"] is False for n in range(10))
    assert xz["--best"] is False
    gzip = _values(_read(pages, "gzip"))  # `-# --fast --best`, `-c --stdout --to-stdout`
    assert all(gzip[f"-{n}"] is False for n in range(1, 10))
    assert gzip["--stdout"] is False
    patch = _values(_read(pages, "patch"))  # `-b  or  --backup`
    assert patch["--backup"] is False
    assert patch["--prefix"] is True
    ls = _read(pages, "ls")
    assert {"-h", "--human-readable"} in [set(o.flags) for o in ls.options]  # not help
    assert _values(ls)["-p"] is False  # `-p, --indicator-style=slash`: written in


def test_a_synopsis_that_shows_a_value_gives_it_to_the_entry(pages):
    """apt-get(8)'s entries say `-c, --config-file`; its synopsis `[-c=config_file]`."""
    values = _values(_read(pages, "apt-get"))
    assert values["-c"] is True
    assert values["--config-file"] is True
    assert values["-y"] is False


def test_help_text_spellings_and_values(tmp_path: Path):
    """wget's `-b,  --background` (two spaces after the comma) was -b taking the value
    ","; journalctl's `-M --machine=CONTAINER` -M taking "--machine=CONTAINER"; tar's
    argp groups (` Main operation mode:`) left every option in its Examples."""
    help_ = parse_help(
        """Usage: x [OPTION]...
Examples:
  x -c foo     # Create foo.

 Main operation mode:
  -b,  --background          go to background after startup
  -M --machine=CONTAINER     Operate on local container
      --synchronous synchronous output (safer if system crashes, but slower)
  -c, -C NUM, --context[=NUM]  output NUM lines of copied context
  -0 ... -9                  compression preset
Each range is one of:
  N-M   from N'th to M'th byte
  -M    from first to M'th byte
""",
        "x",
    )
    got = {tuple(o.flags): o.metavar for o in help_.options}
    assert got == {
        ("-b", "--background"): None,
        ("-M", "--machine"): "CONTAINER",
        ("--synchronous",): None,
        ("-C", "--context"): "NUM",
        ("-c",): None,
        tuple(f"-{n}" for n in range(10)): None,
    }


def test_wget_and_jq_take_a_value_as_their_pages_say(pages):
    """What `atip gen` does: the help read first, the page merged in."""
    if shutil.which("wget") is None:
        pytest.skip("no wget")
    run = subprocess.run(["wget", "--help"], capture_output=True, text=True, timeout=10)
    help_ = parse_help(run.stdout, "wget")
    merge(help_, _read(pages, "wget"))
    values = _values(help_)
    assert values["-b"] is False
    assert values["--background"] is False
    assert values["-o"] is True
    assert values["--hsts-file"] is True  # the page's value


def test_a_page_lists_commands_its_help_leaves_out(pages):
    """tmux's help lists no command; its page lists them all."""
    help_ = parse_help("usage: tmux [-2CDlNuvV] [-c shell-command] [command [flags]]", "tmux")
    merge(help_, _read(pages, "tmux"))
    assert {"attach-session", "new-session"} <= {c.name for c in help_.commands}


def test_git_help_a_lists_commands_not_its_guides():
    if shutil.which("git") is None:
        pytest.skip("no git")
    text = subprocess.run(["git", "help", "-a"], capture_output=True, text=True).stdout
    names = {c.name for c in command_listing(text)}
    assert {"add", "commit", "rev-parse"} <= names
    assert not {"attributes", "cli", "format-pack", "protocol-v2", "revisions"} & names


@pytest.mark.parametrize(
    "name", ["ls", "cp", "grep", "sed", "tar", "wget", "gzip", "diff", "sort", "du", "xz", "jq"]
)
def test_a_tool_without_subcommands_gets_none_from_its_help(name: str):
    if shutil.which(name) is None:
        pytest.skip(f"no {name}")
    run = subprocess.run([name, "--help"], capture_output=True, text=True, timeout=10)
    assert parse_help(run.stdout or run.stderr, name).commands == []


def test_junk_and_a_page_that_includes_itself_are_read_without_error(tmp_path: Path):
    """Binary junk, stray marks, backspaces, brackets never closed, an empty program
    name: read, never raised; a page that `.so`-includes itself ends."""
    import random

    from atipkit.infer.pagetext import TABLE_MARK, read_page

    pieces = ["SYNOPSIS\n", "COMMANDS\n", "\n       ", "   ", "-a, --all", "[-x", "{a | b}"]
    pieces += ["x := { a | b }", "git-add(1)", "•   -s:", "(-0, -1)", "-#", TABLE_MARK, "\x08"]
    pieces += ["│", "\x00", "é", "  ", "\t"]
    generator = random.Random(20)
    for _ in range(500):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(0, 300)))
        read_page(text, generator.choice(["", "x", "git"]))
    looping = tmp_path / "man1" / "loop.1"
    looping.parent.mkdir()
    looping.write_text(".so man1/loop.1\n.TH LOOP 1\n.SH NAME\nloop \\- x\n")
    read_man_file(looping, "loop")  # ends, whatever it finds


def test_a_name_line_of_many_commas_is_read_in_time():
    """`a,a,a,...` with no dash after it: a NAME line read one way only, never by trying
    every way to cut the names (2^n)."""
    from atipkit.infer.pagetext import read_page

    names = ",".join(["a"] * 27)
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    read_page(f"NAME\n       {names}\n\nNAME\n       tool, b, - what it does\n", "tool")
    assert time.thread_time() - start < 2
    parsed = read_page("NAME\n       tool, other, - what it does\n", "tool")
    assert parsed is not None
    assert parsed.description == "what it does"


def test_long_runs_of_spaces_and_long_words_are_read_in_linear_time():
    """A tag with 50 000 spaces in it (an option's spellings, patch's `-b  or  --backup`
    form) and a synopsis group of one 50 000-letter word: each run is tried from its start
    only, never from each of its characters (quadratic: minutes)."""
    from atipkit.infer.helptext import options_from_tag
    from atipkit.infer.pagetext import read_page

    spaces = " " * 50_000
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    options_from_tag(f"-a{spaces}x", "")
    read_page(f"OPTIONS\n       -a{spaces}x\n       -b  or  --backup   Back up.\n", "t")
    read_page(f"SYNOPSIS\n       t {{a{'b' * 50_000}\n", "t")
    assert time.thread_time() - start < 2
    assert [o.flags for o in options_from_tag("-B or --auto-buffers / --ab", "")] == [
        ["-B", "--auto-buffers", "--ab"]
    ]


def test_a_table_mark_inside_a_line_is_text_not_a_table():
    """`TABLE_MARK` starts or ends a table only as a line of its own (what `mark_tables`
    writes): a page that writes it inside two lines of its text neither blanks them nor
    hides what stands between them."""
    from atipkit.infer.pagetext import TABLE_MARK, read_page

    rows = [f"-{c}     Letter {c}." for c in "abc"]
    text = "OPTIONS\n" + "\n".join(f"       {row}" for row in rows) + "\n"
    forged = text.replace("-a     Letter a.", f"-a     Letter a.{TABLE_MARK}").replace(
        "-c     Letter c.", f"-c     {TABLE_MARK}Letter c."
    )
    parsed = read_page(forged, "tool")
    assert parsed is not None
    assert [o.flags for o in parsed.options] == [["-a"], ["-b"], ["-c"]]
    table = text.replace("       -b", f"       {TABLE_MARK}\n       -b").replace(
        "-c     Letter c.", f"{TABLE_MARK}\n       -c     Letter c."
    )
    parsed = read_page(table, "tool")
    assert parsed is not None
    assert [o.flags for o in parsed.options] == [["-a"], ["-c"]]


# -- help and version flags; an entry over several of the help's options (decision 315) ------


def test_documented_help_and_version_flags_are_options(pages):
    """rm(1) documents `--help` and `--version` as options of rm: they are options of
    the shim, so that `rm --version` is a command line the shim accounts for."""
    rm = _read(pages, "rm")
    flags = {f for o in rm.options for f in o.flags}
    assert {"--help", "--version", "--force"} <= flags
    if shutil.which("rm") is not None:
        shim = generate_shim("rm", budget=20)
        root = {f for o in shim.commands[""].options for f in o.flags}
        assert {"--help", "--version"} <= root


def test_a_page_of_help_and_version_only_is_a_stub(tmp_path):
    """Such a page says "see --help": the tool is asked, the page is not enough."""
    from atipkit.infer.generate import enough

    stub = _page(
        tmp_path,
        "stubby",
        ".TH STUBBY 1\n.SH NAME\nstubby \\- do a thing\n.SH OPTIONS\n.TP\n\\fB\\-\\-help\\fR\n"
        "show help\n.TP\n\\fB\\-V\\fR, \\fB\\-\\-version\\fR\nshow the version\n",
    )
    assert {f for o in stub.options for f in o.flags} == {"--help", "-V", "--version"}
    assert not enough(stub)
    stub.options.append(parse_help("  -q, --quiet   say less\n", "stubby").options[0])
    assert enough(stub)


def test_a_page_entry_over_several_help_options_adds_its_other_flags(pages):
    """gzip's page has `-# --fast --best` (`-1` to `-9`), its help `-1, --fast` and
    `-9, --best`: `-2` ... `-8` are options too."""
    if shutil.which("gzip") is None:
        pytest.skip("gzip is not installed")
    page = _read(pages, "gzip")
    shown = subprocess.run(["gzip", "--help"], capture_output=True, text=True, check=False)
    helped = parse_help(shown.stdout, "gzip")
    assert {"-1", "-9"} <= {f for o in helped.options for f in o.flags}
    assert "-5" not in {f for o in helped.options for f in o.flags}
    merge(helped, page)
    flags = [f for o in helped.options for f in o.flags]
    assert {f"-{n}" for n in range(1, 10)} <= set(flags)
    assert len(flags) == len(set(flags))  # each flag once


MDOC_COMMANDS = r""".Dd $Mdocdate$
.Dt MUXER 1
.Os
.Sh NAME
.Nm muxer
.Nd terminal frobnicator
.Sh SYNOPSIS
.Nm muxer
.Op Fl v
.Op Ar command Op Ar flags
.Sh COMMANDS
.Bl -tag -width Ds
.It Xo Ic new-session
.Op Fl AdDEPX
.Op Fl c Ar start-directory
.Op Fl e Ar environment
.Op Fl f Ar flags
.Op Fl F Ar format
.Op Fl n Ar window-name
.Op Fl s Ar session-name
.Op Fl t Ar group-name
.Op Fl x Ar width
.Op Fl y Ar height
.Op Ar shell-command
.Xc
.D1 Pq alias: Ic new
Create a new session with name
.Ar session-name .
.It Xo Ic list-sessions
.Op Fl F Ar format
.Xc
.D1 Pq alias: Ic ls
List all sessions.
.El
"""


def test_a_commands_synopsis_that_wraps_into_its_description_stays_its_own(tmp_path: Path):
    """mdoc sets a long `.It Xo Ic new-session ...` over several lines, the last ones at
    the description's indent: the bracket groups there are the command's (its
    `[shell-command]` says that it runs one, decision 457), not its description."""
    parsed = _page(tmp_path, "muxer", MDOC_COMMANDS)
    commands = {c.name: c for c in parsed.commands}
    assert commands["new-session"].description.startswith("(alias: new) Create a new session")
    assert "[shell-command]" in commands["new-session"].args
    assert commands["list-sessions"].description == "(alias: ls) List all sessions."
    tool = shim_from_page("muxer", "sha256:" + "0" * 64, parsed)
    assert [a.name for a in tool.commands["new-session"].arguments] == ["shell-command"]
    assert tool.commands["new-session"].effects.destructive is True  # it runs a command
    assert tool.commands["list-sessions"].effects.filesystem.write is False


# -- options, subcommands: issue 20 continued (decisions 502-511) --------------------------

NESTED_OPTIONS = """.TH FILER 1
.SH NAME
filer \\- work with files
.SH SYNOPSIS
.B filer
.RI [ OPTION ...]
.I COMMAND
.RI [ ARGS ...]
.SH COMMANDS
.TP
.BI copy " SOURCE DEST"
Copies SOURCE to DEST.
.RS
.PP
Options
.RS
.TP
.B \\-p, \\-\\-progress
Show progress.
.TP
.BI \\-\\-backup " SUFFIX"
Back up what is replaced.
.RE
.RE
.TP
.BI list " DIR"
Lists DIR.
.SH OPTIONS
.TP
.B \\-v, \\-\\-verbose
Say more.
"""


def test_options_inside_a_commands_entry_are_that_commands(tmp_path: Path):
    """gio(1) sets each command's options inside its entry of COMMANDS: they are the
    command's, not the program's (decision 503), and a shim made from the page alone
    gives them to the command."""
    parsed = _page(tmp_path, "filer", NESTED_OPTIONS)
    assert _values(parsed) == {"-v": False, "--verbose": False}
    commands = {c.name: c for c in parsed.commands}
    assert {f for o in commands["copy"].options for f in o.flags} == {
        "-p",
        "--progress",
        "--backup",
    }
    assert commands["list"].options == []
    tool = shim_from_page("filer", "sha256:" + "0" * 64, parsed)
    copy = {f: o.type for o in tool.commands["copy"].options for f in o.flags}
    assert copy["--progress"] == "boolean"
    assert copy["--backup"] != "boolean"
    assert not tool.commands["list"].options


def test_gios_command_options_are_its_commands(pages):
    parsed = _read(pages, "gio")
    assert not parsed.options
    copy = next(c for c in parsed.commands if c.name == "copy")
    assert "--progress" in {f for o in copy.options for f in o.flags}


def _spelled(tag: str) -> list[tuple[list[str], bool]]:
    return [(o.flags, o.metavar is not None) for o in options_from_tag(tag, "")]


def test_spellings_parted_by_bars_and_a_repetition_that_takes_no_value():
    """dmsetup(8) writes `-c|-C|--columns` and `-v|--verbose [-v|--verbose]` (say it
    again for more): three spellings of one flag, and one flag that takes no value
    (decision 504)."""
    assert _spelled("-c|-C|--columns") == [(["-c", "-C", "--columns"], False)]
    assert _spelled("-j|--major major") == [(["-j", "--major"], True)]
    assert _spelled("-v|--verbose [-v|--verbose]") == [(["-v", "--verbose"], False)]
    assert _spelled("--readahead [+]sectors|auto|none") == [(["--readahead"], True)]
    assert _spelled("-o [-x]") == [(["-o"], True)]  # another flag: a value


def test_a_flag_spelled_as_anothers_value_is_a_placeholder():
    """pgrep(1)'s `-signal` over `--signal signal`: `-signal` stands for `-KILL`, `-9`,
    a value written as a flag, not a spelling of its own (decision 505)."""
    assert _spelled("-signal, --signal signal") == [(["--signal"], True)]
    assert _spelled("-s, -signal SIG") == [(["-s", "-signal"], True)]
    assert _spelled("-f file, --file=file") == [(["-f", "--file"], True)]


def test_pkill_has_no_signal_placeholder_for_a_flag(pages):
    flags = {f for o in _read(pages, "pkill").options for f in o.flags}
    assert "--signal" in flags
    assert "-signal" not in flags


def test_groups_inside_a_synopsis_group_and_after_a_bar_name_commands(tmp_path: Path):
    """apt-mark(8): `{-f=filename | {auto | manual} pkg... | {showauto | showmanual}
    [pkg...] }` and `{hold | unhold} pkg... | {showhold | showinstall} [pkg...]`: the
    names of a group inside a choice, and of a group after a bar of the form, are
    commands (decision 506); a group of single letters still names none."""
    source = """.TH MARKER 8
.SH NAME
marker \\- mark packages
.SH SYNOPSIS
.B marker
{\\-f=file | {auto | manual} pkg | {showauto | showmanual} [pkg] }
.br
.B marker
{hold | unhold} pkg | {showhold | showinstall} [pkg]
.SH DESCRIPTION
Marks packages.
"""
    commands = _commands(_page(tmp_path, "marker", source))
    assert set(commands) == {
        *("auto", "manual", "showauto", "showmanual"),
        *("hold", "unhold", "showhold", "showinstall"),
    }
    assert commands["auto"] == "pkg"
    assert commands["showauto"] == "[pkg]"
    modes = source.replace("{auto | manual}", "{a | c}")
    modes = modes.replace("{showauto | showmanual}", "{x | t}")
    assert "a" not in _commands(_page(tmp_path, "marker", modes))


def test_a_deeply_nested_synopsis_group_is_read_in_time():
    from atipkit.infer.synopsis import commands, form

    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    deep = form("tool " + "{" * 20000 + "ab | cd" + "}" * 20000)
    wide = form("tool {" + "{ab | cd} x | " * 5000 + "}")
    assert commands([deep], ["tool"], set()) == {}
    assert commands([wide], ["tool"], set()) == {"ab": "x", "cd": "x"}
    assert time.thread_time() - start < 5


HEADED = """.TH SWITCH 8
.SH NAME
switch \\- configure a switch
.SH SYNOPSIS
.B switch
[ OPTIONS ] OBJECT { COMMAND | help }
.br
OBJECT := { port | table }
.SH COMMANDS
.SS switch port set \\- set a port's attributes
Sets them.
.SS switch port show \\- list the ports
Lists them.
.SS switch table flush \\- flush the table
Flushes it.
.SS Notes on tables
Tables are kept.
"""


def test_sub_headings_of_the_programs_words_name_the_commands_below_one(tmp_path: Path):
    """bridge(8) heads each command `bridge fdb show - list forwarding entries.`: the
    program's words, then the object, then its command (decision 507). A heading of
    other words names nothing."""
    parsed = _page(tmp_path, "switch", HEADED)
    below = {c.name: c.commands for c in parsed.commands}
    assert below == {"port": ["set", "show"], "table": ["flush"]}
    tool = shim_from_page("switch", "sha256:" + "0" * 64, parsed)
    assert set(tool.commands["port"].commands) == {"set", "show"}


def test_a_help_that_lists_no_options_gives_those_its_usage_forms_write():
    """gsettings answers `--help` with its usage alone: `gsettings --version` and
    `gsettings [--schemadir SCHEMADIR] COMMAND [ARGS…]`. The options written right after
    the program's name are its own (decision 508); those after a command's name are the
    command's, and a cluster of letters (`[-jy]`) is no flag; a help that lists its
    options is read as before."""
    text = (
        "Usage:\n  gsettings --version\n  gsettings [--schemadir SCHEMADIR] COMMAND [ARGS…]\n"
        "  gsettings list-schemas [--print-paths]\n\nCommands:\n"
        "  get          Get the value of a key\n  set          Set the value of a key\n"
    )
    parsed = parse_help(text, "gsettings")
    assert _values(parsed) == {"--version": False, "--schemadir": True}
    assert {c.name for c in parsed.commands} == {"get", "set"}
    assert _values(parse_help("usage: cal [-jy] [-m month] [[month] year]\n", "cal")) == {
        "-m": True
    }
    listed = parse_help("usage: tool [--quiet] FILE\n\nOptions:\n  -v, --verbose  Say more.\n")
    assert _values(listed) == {"-v": False, "--verbose": False}


def test_an_optional_option_written_as_in_a_synopsis_is_an_option(tmp_path: Path):
    """unzip(1) documents `-x` and `-d` under ARGUMENTS as `[-x xfile(s)]` and `[-d
    exdir]` (decision 509); a bracketed operand stays no option."""
    source = """.TH PACK 1
.SH NAME
pack \\- unpack archives
.SH SYNOPSIS
.B pack
[\\-l] file [\\-d exdir]
.SH ARGUMENTS
.TP
.B [file(s)]
Members to process.
.TP
.B [\\-d exdir]
Where to extract them.
.SH OPTIONS
.TP
.B \\-l
List them.
"""
    assert _values(_page(tmp_path, "pack", source)) == {"-d": True, "-l": False}


def test_a_page_that_lists_commands_and_documents_no_option_is_not_enough(tmp_path: Path):
    """gsettings(1) lists its commands and no option: its `--schemadir` is in its help
    alone, so the scan asks the help too (decision 510). A page whose options are its
    commands' (gio's), or come after the command (`openssl command [ options ]`), is
    enough as before."""
    from atipkit.infer.generate import enough

    bare = """.TH KEYS 1
.SH NAME
keys \\- get and set keys
.SH SYNOPSIS
.B keys
.I COMMAND
.SH COMMANDS
.TP
.BI get " KEY"
Gets KEY.
.TP
.BI set " KEY VALUE"
Sets KEY.
"""
    assert not enough(_page(tmp_path, "keys", bare))
    assert enough(_page(tmp_path, "filer", NESTED_OPTIONS))
    after = bare.replace(".I COMMAND", ".I COMMAND\n[ options ... ]").replace(
        ".TP\n.BI set", ".SH OPTIONS\n.TP\n.B \\-in\nInput.\n.SH MORE\n.TP\n.BI set"
    )
    assert enough(_page(tmp_path, "keys", after))


def test_an_operand_in_italic_with_its_ellipsis_in_italic_is_a_placeholder(tmp_path: Path):
    """systemd-creds(1) sets `cat credential...` with the dots in italic as well: the
    command is `cat`, whose operand is a placeholder however its dots are set."""
    source = TABLE_PAGE.replace(r".B remove \fINAME\fR", r".B cat \fIcredential...\fR")
    commands = _commands(_page(tmp_path, "tool", source))
    assert commands == {"add": "NAME", "cat": "credential..."}


def test_an_option_closing_a_list_of_commands_is_an_option(tmp_path: Path):
    """systemd-creds(1) ends its COMMANDS with `-h, --help` and `--version`: few dashed
    tags among commands, as cut's `-M` among its ranges, but a long spelling says they
    are options."""
    options = ".TP\n.B \\-h, \\-\\-help\nShow help.\n.TP\n.B \\-\\-version\nShow the version.\n"
    source = TABLE_PAGE.replace(".PP\nThe widgets", f"{options}.PP\nThe widgets")
    parsed = _page(tmp_path, "tool", source)
    assert {"-h", "--help", "--version"} <= set(_values(parsed))
    assert set(_commands(parsed)) == {"add", "remove"}


def test_a_command_with_an_optional_prefix_or_an_operands_alternatives_is_read(
    tmp_path: Path,
):
    """xauth(1) writes `[n]extract filename displayname...` for `extract` and
    `nextract`; pg_conftool(1) `show parameter|all` with `parameter` in italic: commands,
    both (decision 560). `all` alone is no operand: a tag of two plain words is prose."""
    source = TABLE_PAGE.replace(r".B remove \fINAME\fR", r".B [n]extract \fIfile\fR")
    source = source.replace(r".B add \fINAME\fR", r".B show \fIparameter\fR|\fBall\fR")
    commands = _commands(_page(tmp_path, "tool", source))
    assert set(commands) == {"show", "extract", "nextract"}
    plain = TABLE_PAGE.replace(r".B remove \fINAME\fR", r".B remove all")
    assert set(_commands(_page(tmp_path, "tool", plain))) == {"add"}


SECTION_PAGE = r""".TH PROF 1
.SH NAME
prof \- profile data tool
.SH SYNOPSIS
\fBprof\fP \fIcommand\fP [\fIargs...\fP]
.SH COMMANDS
.IP \(bu 2
\fImerge\fP
.IP \(bu 2
\fIshow\fP
.SH MERGE
.SS SYNOPSIS
\fBprof merge\fP [\fIoptions\fP] [\fIfilename...\fP]
.SS DESCRIPTION
\fBprof merge\fP merges profile data files.
.SS OPTIONS
.TP
.B \-\-output=<output>, \-o
Specify the output file name.
.SH SHOW
.SS SYNOPSIS
\fBprof show\fP [\fIoptions\fP] [\fIfilename\fP]
.SS DESCRIPTION
\fBprof show\fP displays a profile data file.
.SS OPTIONS
.TP
.B \-\-counts
Show the counts.
.SH EXIT STATUS
Zero on success.
"""


def test_a_section_of_its_own_per_command_is_that_commands(tmp_path: Path):
    """llvm-profdata(1) lists its commands as bullets and documents each in a section of
    its own (MERGE, SHOW) with a SYNOPSIS `llvm-profdata merge ...` and an OPTIONS
    sub-section: the commands are read from those synopses, and the options are theirs,
    not the program's (decision 610)."""
    parsed = _page(tmp_path, "prof", SECTION_PAGE)
    commands = {c.name: c for c in parsed.commands}
    assert set(commands) == {"merge", "show"}
    assert parsed.options == []
    assert [o.flags for o in commands["merge"].options] == [["--output", "-o"]]
    assert [o.flags for o in commands["show"].options] == [["--counts"]]
    assert commands["show"].description.endswith("displays a profile data file.")


SUBSECTION_PAGE = r""".TH ENLIST 1
.SH NAME
enlist \- manage large repositories
.SH SYNOPSIS
.B enlist clone
[\-\-branch \fIname\fR] \fIurl\fR
.br
.B enlist list
.SH OPTIONS
.TP
.B \-C \fIdirectory\fR
Change the working directory first.
.SH COMMANDS
.SS Clone
.TP
.B clone [<options>] <url>
Clone the repository.
.TP
.B \-b <name>, \-\-branch <name>
Check out this branch.
.SS List
.TP
.B list
List the enlistments.
"""


def test_options_in_a_sub_section_of_one_command_are_that_commands(tmp_path: Path):
    """scalar(1) gives each command a sub-section of COMMANDS ("Clone") and sets clone's
    `--branch` there at the command tag's own indent, below it: clone's option, not the
    program's (decision 611)."""
    parsed = _page(tmp_path, "enlist", SUBSECTION_PAGE)
    commands = {c.name: c for c in parsed.commands}
    assert set(commands) == {"clone", "list"}
    assert [o.flags for o in parsed.options] == [["-C"]]
    assert [o.flags for o in commands["clone"].options] == [["-b", "--branch"]]


KEYWORD_PAGE = r""".TH PROFNG 1
.SH NAME
profng \- the driver of a tool suite
.SH SYNOPSIS
.B profng
[\fIOPTION(S)\fR] \fICOMMAND\fR [\fIKEYWORD\fR] [\fIARGUMENTS\fR]
.SH OPTIONS
.TP
.B \-\-check
verify the environment.
.SH COMMANDS
The following combination of commands and keywords are supported:
.PP
Collect performance data
.TP
.B profng collect app
collect application performance data.
.PP
Display the performance results
.TP
.B profng display text
display the performance data in ASCII format.
.TP
.B profng display html
generate an HTML file.
.TP
.B profng archive
include binaries in an experiment directory.
.SH ENVIRONMENT
.TP
.B PROFNG_MAX_DEPTH
set the depth of the call stack.
"""


def test_a_command_and_its_keyword_after_the_programs_name_are_a_path(tmp_path: Path):
    """gprofng(1) lists `gprofng collect app`, `gprofng display text`: a command and a
    command below it, after the program's name — not a sentence (decision 612)."""
    parsed = _page(tmp_path, "profng", KEYWORD_PAGE)
    children = {c.name: c.commands for c in parsed.commands}
    assert children == {"collect": ["app"], "display": ["text", "html"], "archive": []}


def test_many_sections_of_their_own_are_read_in_time_linear_in_their_number():
    """4 000 sections, each with a SYNOPSIS naming a command and an option, under three
    titles repeated: each section is its own command's, read once (decision 610)."""
    from atipkit.infer.pagetext import read_page

    def page(count: int) -> str:
        head = "NAME\n       prog - x\n\nSYNOPSIS\n       prog command [args]\n\n"
        return head + "".join(
            f"SEC{i % 3}\n   SYNOPSIS\n       prog cmd{i} [options]\n   DESCRIPTION\n"
            f"       does {i}.\n   OPTIONS\n       --opt{i}\n              an option.\n\n"
            for i in range(count)
        )

    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    parsed = read_page(page(4000), "prog")
    seconds = time.thread_time() - start
    assert parsed is not None
    assert len(parsed.commands) == MAX_COMMANDS
    assert [o.flags for o in parsed.commands[0].options] == [["--opt0"]]
    start = time.thread_time()
    read_page(page(2000), "prog")
    assert seconds < 20
    assert seconds < 4 * (time.thread_time() - start) + 1


MODE_OPTIONS_PAGE = r""".TH PROBE 1
.SH NAME
probe \- attach to a process or read a core file
.SH SYNOPSIS
.PP
\f[CB]probe\ shell\f[R] [\f[CB]\-\-pid\f[R] \f[I]pid\f[R]]
.PP
\f[CB]probe\ serve\f[R] (\f[CB]\-\-pid\f[R] \f[I]pid\f[R]) [\f[I]options\f[R]]
.PP
\f[CB]probe\ dump\f[R] (\f[CB]\-\-pid\f[R] \f[I]pid\f[R]) [\f[I]options\f[R]]
.SH DESCRIPTION
.PP
The probe tool can be launched in any one of the following modes:
.TP
.B \f[CB]probe\ shell\f[R]
Starts the interactive debugger.
.TP
.B \f[CB]probe\ serve\f[R]
Starts the remote debug server.
.TP
.B \f[CB]probe\ dump\f[R]
Prints heap information.
.SH OPTIONS FOR THE SERVE MODE
.TP
.B \f[CB]\-\-rmiport\f[R] \f[I]port\f[R]
Sets the port number to which the RMI connector is bound.
.TP
.B \f[CB]\-\-hostname\f[R] \f[I]hostname\f[R]
Sets the hostname the RMI connector is bound.
.SH OPTIONS FOR THE DUMP MODE
.TP
.B \f[CB]\-\-heap\f[R]
Prints the java heap summary.
.TP
.B \f[CB]\-\-histo\f[R]
Prints the histogram of java object heap.
.SH OPTIONS FOR THE SERVE AND DUMP MODES
.TP
.B \f[CB]\-\-quiet\f[R]
Says less.
"""


def test_a_section_of_options_for_one_command_holds_that_commands(tmp_path: Path):
    """jhsdb(1) lists its modes (`jhsdb debugd`) and then sets each mode's options in a
    section of its own, "OPTIONS FOR THE DEBUGD MODE": the mode's options, not the
    program's (decision 681). A heading naming two commands is read as neither's."""
    parsed = _page(tmp_path, "probe", MODE_OPTIONS_PAGE)
    commands = {c.name: c for c in parsed.commands}
    assert set(commands) == {"shell", "serve", "dump"}
    assert [o.flags for o in commands["serve"].options] == [["--rmiport"], ["--hostname"]]
    assert [o.flags for o in commands["dump"].options] == [["--heap"], ["--histo"]]
    assert commands["shell"].options == []
    assert [o.flags for o in parsed.options] == [["--quiet"]]


REFERENCE_PAGE = r""".TH VERMAN 1
.SH NAME
verman \- switch between versions of an interpreter
.SH SYNOPSIS
\fBverman\fR \fI<command>\fR [\fI<args>\fR]
.SH COMMAND LINE OPTIONS
.SS "Some useful verman commands are:"
.TP 5
.B install
Install a version
.TP
.B versions
List all versions available
.SH OPTIONS
.TP
.B \-h, \-\-help
Show summary of options.
.TP
.B \-v, \-\-version
Show version of program.
.SH "Command Reference"
.SS "verman install"
Install a version
.IP "" 4
.nf
Usage: verman install [\-f] <version>

  \-l, \-\-list             List all available versions
  \-f, \-\-force            Install even if the version is installed already
.fi
.IP "" 0
.SS "verman versions"
Lists all versions known to verman.
.IP "" 4
.nf
$ verman versions
  system
* 2\.7\.6 (set by /home/user/\.verman/version)
.fi
"""


def test_a_command_listed_then_given_a_sub_section_takes_its_options_from_there(
    tmp_path: Path,
):
    """pyenv(1) lists its commands, then documents each again in a sub-section of
    "Command Reference" (`pyenv install`) whose usage block sets install's `-l`, `-f`:
    the command's entry is that sub-section, the longer of its two, so they are its
    options, not the program's (decision 682)."""
    parsed = _page(tmp_path, "verman", REFERENCE_PAGE)
    commands = {c.name: c for c in parsed.commands}
    assert set(commands) == {"install", "versions"}
    assert [o.flags for o in commands["install"].options] == [["-l", "--list"], ["-f", "--force"]]
    assert [o.flags for o in parsed.options] == [["-h", "--help"], ["-v", "--version"]]
    assert commands["install"].description == "Install a version"


HELPER_COMMANDS = [
    "enable", "disable", "purge", "mask", "unmask", "is-enabled", "was-enabled",
    "debian-installed", "update-state", "reenable",
]  # fmt: skip
BARE_CHOICES_PAGE = (
    r""".TH PKG-SERVICE-HELPER 1p
.SH "NAME"
pkg-service-helper \- subset of a service manager for maintainer scripts
.SH "SYNOPSIS"
\&\fBpkg-service-helper\fR """
    + " | ".join(HELPER_COMMANDS)  # one line of roff, as the page's: groff breaks it
    + r""" \fIunit file\fR ...
.SH "DESCRIPTION"
\&\fBpkg-service-helper\fR re-implements the enable, disable, is-enabled and reenable
commands of a service manager.
"""
)

BARE_CHOICES_INVOKE = r""".TH PKG-SERVICE-INVOKE 1p
.SH "NAME"
pkg-service-invoke \- wrapper around a service manager
.SH "SYNOPSIS"
\&\fBpkg-service-invoke\fR [\fB\-\-user\fR] start|stop|restart \fIunit file\fR ...
.SH "DESCRIPTION"
\&\fBpkg-service-invoke\fR asks a policy helper first.
"""


def test_commands_a_synopsis_offers_as_bare_alternatives_and_broken_at_a_hyphen(
    tmp_path: Path,
):
    """deb-systemd-helper(1p) names its commands only in its SYNOPSIS, as alternatives
    outside any group (`enable | disable | ... | reenable unit file ...`), and groff
    breaks the line inside `is-enabled`; deb-systemd-invoke(1p) writes `start|stop|
    restart`. Every alternative is a command, and the broken word is one word
    (decision 683): no command `is-`, none lost."""
    helper = _page(tmp_path, "pkg-service-helper", BARE_CHOICES_PAGE)
    assert [c.name for c in helper.commands] == HELPER_COMMANDS
    assert "is-enabled" in helper.usage
    invoke = _page(tmp_path, "pkg-service-invoke", BARE_CHOICES_INVOKE)
    assert _commands(invoke) == {"start": "unit file ...", "stop": "unit file ...",
                                 "restart": "unit file ..."}  # fmt: skip


STACKED_APART_PAGE = r""".TH KEYD 1
.SH NAME
keyd \- a daemon that keeps secret keys
.SH SYNOPSIS
.B keyd
.RI [ options ]
.SH OPTIONS
.TP
.B  --batch
Do not ask anything.
.TP
.B  --no-allow-loopback
.TP
.B  --allow-loopback
Disallow or allow clients to use the loopback features.
.TP
.B  --enable-ssh-support
.TQ
.B  --enable-putty-support

The agent protocol is always enabled, but the variable is set only with this flag.
.TP
.B  --quiet
Say less.
"""


def test_stacked_option_tags_apart_by_a_blank_line_share_the_description(tmp_path: Path):
    """gpg-agent(1) (texinfo, through yat2m) sets `--no-allow-loopback-pinentry` as a tag
    of its own with no text, a blank line, then `--allow-loopback-pinentry` and the
    description of both; and `--enable-ssh-support` / `--enable-putty-support` with a
    blank line before their description: all four were lost from the page
    (decision 684)."""
    parsed = _page(tmp_path, "keyd", STACKED_APART_PAGE)
    assert [o.flags for o in parsed.options] == [
        ["--batch"],
        ["--no-allow-loopback", "--allow-loopback"],
        ["--enable-ssh-support", "--enable-putty-support"],
        ["--quiet"],
    ]
    assert parsed.options[2].description.startswith("The agent protocol is always enabled")


OBJECT_SECTIONS_PAGE = r""".TH LINKMGR 1
.SH NAME
linkmgr \- control a link manager
.SH SYNOPSIS
\fBlinkmgr\fR [\fIOPTIONS\fR...] {\fBgeneral\fR | \fBnetworking\fR | \fBradio\fR}
[\fICOMMAND\fR] [\fIARGUMENTS\fR...]
.SH OPTIONS
.TP
\fB\-a\fR | \fB\-\-ask\fR
Ask for the arguments that are missing.
.TP
\fB\-w\fR | \fB\-\-wait\fR \fIseconds\fR
Wait so long for the manager.
.SH GENERAL COMMANDS
\fBlinkmgr general\fR {\fBstatus\fR | \fBhostname\fR | \fBpermissions\fR} [\fIARGUMENTS\fR...]
.PP
Show the manager's status and permissions.
.TP
\fBstatus\fR
Show the overall status.
.TP
\fBhostname\fR [\fIhostname\fR]
Get and change the hostname.
.TP
\fBreload\fR [\fIflags\fR...]
Reload the configuration. Available flags are:
.RS
.TP
\fBconf\fR
Reload the configuration file.
.RE
.SH NETWORKING CONTROL COMMANDS
\fBlinkmgr networking\fR {\fBon\fR | \fBoff\fR | \fBconnectivity\fR} [\fIARGUMENTS\fR...]
.TP
\fBon\fR, \fBoff\fR
Enable or disable networking.
.TP
\fBconnectivity\fR [\fIcheck\fR]
Get the connectivity state.
.TP
\fB\-\-force\fR
Switch even when links are busy.
.SH RADIO COMMANDS
\fBlinkmgr radio\fR
.PP
Show the radio switches.
"""


def test_a_section_opened_by_a_commands_form_lists_that_commands_children(tmp_path: Path):
    """nmcli(1)'s "GENERAL COMMANDS" opens with `nmcli general {status | hostname | ...}`
    and lists `status`, `hostname`, ...: general's commands, not the program's; the
    options set there are general's (decision 761). `-a | --ask` is two spellings of a
    flag, not `-a` taking a value `|`."""
    parsed = _page(tmp_path, "linkmgr", OBJECT_SECTIONS_PAGE)
    commands = {c.name: c for c in parsed.commands}
    assert set(commands) == {"general", "networking", "radio"}
    assert commands["general"].commands == ["status", "hostname", "permissions", "reload"]
    assert commands["networking"].commands == ["on", "off", "connectivity"]
    assert commands["radio"].commands == []
    assert [o.flags for o in commands["networking"].options] == [["--force"]]
    assert _values(parsed) == {"-a": False, "--ask": False, "-w": True, "--wait": True}


FILLED_SYNOPSIS_PAGE = r""".TH SUPPCLI 8
.SH NAME
suppcli \- a client of a supplicant
.SH SYNOPSIS
.B suppcli
[ \-p path to control sockets ] [ \-g path to the global control interface socket ]
[ \-i ifname ] [ \-hvB ] [ \-a action file ] [ \-P pid file ] [ \-G ping interval ]
[ command ... ]
.SH COMMAND ARGUMENTS
.TP
.B \-p path
Change the path of the control sockets.
.TP
.B command
Run a command.
.SH COMMANDS
The following commands are available:
.TP
.B status
get current status
.TP
.B level <debug level>
change the debug level
.TP
.B identity <network id> <identity>
configure the identity of a network
.TP
.B quit
exit the client
"""


def test_a_synopsis_filled_over_lines_at_one_indent_is_one_form(tmp_path: Path):
    """wpa_cli(8) fills its one synopsis form over two lines at the same indent, a
    bracket left open at the end of the first (`[ -g path to global ctrl_interface` /
    `socket ] ... [ command ... ]`): the second line is no form of its own, so the
    command's place is read; a placeholder in angle brackets may hold spaces (`level
    <debug level>`) (decision 762)."""
    parsed = _page(tmp_path, "suppcli", FILLED_SYNOPSIS_PAGE)
    assert parsed.usage.endswith("[ command ... ]")
    assert [c.name for c in parsed.commands] == ["status", "level", "identity", "quit"]


DATABASE_COMMANDS_PAGE = r""".TH SWCTL 8
.SH NAME
swctl \- configure a switch
.SH SYNOPSIS
\fBswctl\fR [\fIoptions\fR] \fIcommand\fR [\fIargs\fR]
.SH COMMANDS
The commands implemented by swctl are described in the sections below.
.SS "Bridge Commands"
These commands examine and manipulate bridges.
.TP
[\fB\-\-may\-exist\fR] \fBadd\-br \fIbridge\fR
Creates a new bridge named \fIbridge\fR.
.TP
\fBlist\-br\fR
Lists all existing bridges.
.PP
Helpers:
.TP
\fBbr\-exists \fIbridge\fR
Tests whether \fIbridge\fR exists.
.SS "Database Commands"
Each column in the database accepts a fixed type of data. The currently defined
basic types, and their representations, are:
.TP
integer
A decimal integer in the range \-2**63 to 2**63\-1, inclusive.
.TP
real
A floating-point number.
.TP
Boolean
True or false, written true or false, respectively.
.TP
string
An arbitrary Unicode string.
.PP
Database commands may use the following records:
.TP
[\fB\-\-if\-exists\fR] [\fB\-\-columns=\fIcolumn\fR[\fB,\fIcolumn\fR]...] \c
\fBlist \fItable\fR [\fIrecord\fR]...
Lists the data in each specified \fIrecord\fR.
.TP
\fBwait\-until \fItable record\fR
Waits until \fItable\fR contains a record named \fIrecord\fR.
"""


def test_a_list_a_paragraph_announces_as_no_commands_is_none(tmp_path: Path):
    """ovs-vsctl(8)'s "Database Commands" sub-section lists the data types ("The
    currently defined basic types ... are:" `integer`, `real`, `Boolean`, `string`)
    before its commands: a list a colon announces without saying "command" is not one,
    past the tags among it (decision 764). A command's own options in brackets before
    its name (`[--may-exist] add-br bridge`) are passed over (decision 765). A label
    before a colon ("Helpers:", git(1)'s "Manipulators:") announces commands still."""
    parsed = _page(tmp_path, "swctl", DATABASE_COMMANDS_PAGE)
    names = [c.name for c in parsed.commands]
    assert names == ["add-br", "list-br", "br-exists", "list", "wait-until"]


ROWS_PAGE = r""".TH VOLMGR 8
.SH NAME
volmgr \- volume tools
.SH SYNOPSIS
\fBvolmgr\fP [\fIcommand\fP|\fIfile\fP]
.SH COMMANDS
The following commands implement the core functionality.
.TP 16
.B vgimport
Make exported volume groups known to the system.
.TP
.B vgimportdevices
Add volumes from a group to the devices file.
.TP
.B vgmerge
Merge two volume groups.
.TP
.B vgmknodes
Recreate the group's directory and special files
.TP
.B vgreduce
Reduce a volume group.
"""


@pytest.mark.parametrize("spacing", ["", ".PD 0\n"])
def test_a_tag_as_wide_as_the_tag_column_among_rows_is_a_row(tmp_path: Path, spacing: str):
    """lvm(8) lists its commands as rows (`vgimport        Make exported ...`); a name as
    wide as the tag column leaves one space before its description (`vgimportdevices Add
    PVs ...`): it was read as prose, and the rows set right below it as its continuation.
    A line among rows whose description starts where its neighbour's does is a row, the
    rows apart by blank lines or not (decision 766)."""
    source = ROWS_PAGE.replace(".TP\n.B vgimportdevices", f"{spacing}.TP\n.B vgimportdevices")
    parsed = _page(tmp_path, "volmgr", source)
    assert [c.name for c in parsed.commands] == [
        "vgimport",
        "vgimportdevices",
        "vgmerge",
        "vgmknodes",
        "vgreduce",
    ]


OPERANDS_PAGE = r""".TH MACHCTL 1
.SH NAME
machctl \- control machines
.SH SYNOPSIS
\fBmachctl\fR [OPTIONS...] {COMMAND} [NAME...]
.SH COMMANDS
.TP
\fBcopy\-to\fR \fINAME\fR \fIPATH\fR [\fIPATH\fR] \fB\-\-force\fR
Copy files from the host into a machine.
.TP
\fBtlsa\fR [\fIFAMILY\fR] \fIDOMAIN\fR[:\fIPORT\fR]...
Query TLS public keys.
.TP
\fBlist\fR
List the machines.
"""


def test_a_commands_tag_may_end_in_a_flag_and_hold_a_bracket_in_a_placeholder(
    tmp_path: Path,
):
    """machinectl(1)'s `copy-to NAME PATH [PATH] --force` (the command's flag after its
    operands) and resolvectl(1)'s `tlsa [FAMILY] DOMAIN[:PORT]...` (an optional part
    inside a placeholder) are commands' tags, not sentences (decision 768)."""
    parsed = _page(tmp_path, "machctl", OPERANDS_PAGE)
    assert [c.name for c in parsed.commands] == ["copy-to", "tlsa", "list"]


OTHER_NAME_PAGE = r""".TH RESCTL 1
.SH NAME
resctl, rescompat \- resolve names
.SH SYNOPSIS
\fBresctl\fR [OPTIONS...] {COMMAND} [NAME...]
.SH COMMANDS
.TP
\fBquery\fR \fIHOSTNAME\fR...
Resolve domain names.
.SH OPTIONS
.TP
\fB\-i\fR \fIINTERFACE\fR, \fB\-\-interface=\fR\fIINTERFACE\fR
Query on this network interface.
.SH "COMPATIBILITY WITH RESCOMPAT(8)"
When invoked as "rescompat" it runs in a compatibility mode.
.TP
\fB\-a\fR
Registers per-interface configuration.
.TP
\fB\-x\fR
Exclusive mode.
"""


def test_options_under_a_heading_naming_another_programs_page_are_not_the_programs(
    tmp_path: Path,
):
    """resolvectl(1) lists the switches of its resolvconf mode under "COMPATIBILITY WITH
    RESOLVCONF(8)": options of the program run by that name, not resolvectl's
    (decision 769)."""
    parsed = _page(tmp_path, "resctl", OTHER_NAME_PAGE)
    assert sorted(f for o in parsed.options for f in o.flags) == ["--interface", "-i"]


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("       frob [ command", "       more [ y"),  # groups left open at the form's indent
        ("       frob [ command", "          deeper [ y"),  # one form, deeper lines
    ],
)
def test_a_synopsis_of_thousands_of_lines_left_open_reads_in_linear_time(first, then):
    """A synopsis whose groups never close (hostile, or a typo): a form goes on over an
    open group for a few lines only, and whether a long form ends in a broken word is
    read at its end, not searched from its start; 20 000 lines cost each of these
    seconds of CPU when every line scanned the form again (decision 789)."""
    from atipkit.infer.pagetext import read_page

    text = "NAME\n       frob - frob things\n\nSYNOPSIS\n" + first + "\n" + (then + "\n") * 20_000
    start = time.thread_time()
    read_page(text, "frob")
    assert time.thread_time() - start < 1.5
