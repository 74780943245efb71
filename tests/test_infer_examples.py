"""Examples read from help texts and man pages: each command line with what it does, so
that an agent (and `atip search`) knows what a command is for in a person's words."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from atipkit.bridge import compile_tools
from atipkit.execute.argv import example_call
from atipkit.infer.generate import generate_shim
from atipkit.infer.helptext import MAX_EXAMPLES, parse_help
from atipkit.model import get_command

COBRA = """\
Display one or many resources.

Examples:
  # List all pods in ps output format
  kubectl get pods

  # List one pod, then its
  # status only
  kubectl get pod web \\
    -o wide

Options:
  -o, --output='': Output format.

Usage:
  kubectl get [TYPE] [options]
"""

MAN = """\
NAME
       pack - put files into an archive

EXAMPLES
       Create archive.tar from files foo and bar.
              pack -c -f archive.tar foo bar

       List all files in archive.tar verbosely.
              pack -t -v -f archive.tar

       See the manual for more (this line runs nothing).
"""


def test_cobra_examples_keep_their_comment_and_join_continued_lines():
    parsed = parse_help(COBRA, "kubectl")
    assert parsed.examples == [
        "kubectl get pods  # List all pods in ps output format",
        "kubectl get pod web -o wide  # List one pod, then its status only",
    ]
    assert [o.name for o in parsed.options] == ["output"]  # the section ends at Options


def test_man_page_examples_take_the_sentence_above_them_and_skip_prose():
    parsed = parse_help(MAN, "pack")
    assert parsed.examples == [
        "pack -c -f archive.tar foo bar  # Create archive.tar from files foo and bar.",
        "pack -t -v -f archive.tar  # List all files in archive.tar verbosely.",
    ]


def test_prompts_are_dropped_other_programs_are_not_examples_and_the_count_is_capped():
    lines = "\n".join(f"  $ tool run job{i}" for i in range(MAX_EXAMPLES + 5))
    text = f"EXAMPLES\n  $ other-tool run\n{lines}\n"
    parsed = parse_help(text, "tool")
    assert parsed.examples[0] == "tool run job0"
    assert len(parsed.examples) == MAX_EXAMPLES
    assert not any("other-tool" in e for e in parsed.examples)


def test_an_inferred_shim_carries_the_examples_and_they_read_back_as_calls(tmp_path: Path):
    exe = tmp_path / "kubectl"
    help_text = textwrap.dedent(
        """\
        kubectl controls things.

        Available Commands:
          get         Display one or many resources

        Flags:
          -v, --verbose  Say more
          -q, --quiet    Say less
        """
    )
    exe.write_text(
        f"#!{sys.executable}\nimport sys\n"
        f"if 'get' in sys.argv:\n    print({COBRA!r})\nelse:\n    print({help_text!r})\n"
    )
    exe.chmod(0o755)
    shim = generate_shim(str(exe), man=False)
    get = get_command(shim, ("get",))
    assert get.examples[0] == "kubectl get pods  # List all pods in ps output format"
    compiled = compile_tools(shim, "openai")
    flat = next(t for t in compiled.flat if t.name == "kubectl_get")
    # a shell comment is not an argument: the example is the call `kubectl get pods`
    target = flat.binding.targets[""]
    assert example_call(shim, target, get.examples[0]) is not None


PAGER_PAGE = r""".TH PAGER 1 "2026" "pager 1.0" "User Commands"
.SH NAME
pager \- show a file one screen at a time
.SH SYNOPSIS
.B pager
[\fB\-N\fR] \fIfile\fR
.SH OPTIONS
.TP
.B \-N
Number every line of the file as it is shown on the screen.
.SH COMMANDS
.TP
.B z
Like SPACE, but if N is specified, it becomes the new window size, which is remembered
for every later screenful of the file and every extraordinarily long subsequent line.
.TP
.B q
Quit.
.SH DESCRIPTION
Pager shows a file. Justified prose with long words such as incomprehensibilities and
characteristically unhyphenated constructions must never become commands of its own.
"""

TOOL_PAGE = r""".TH TOOL 1 "2026" "tool 2.0" "User Commands"
.SH NAME
tool \- do things to widgets
.SH SYNOPSIS
.B tool
[\fB\-v\fR] \fIcommand\fR [\fIargs\fR]
.SH COMMANDS
.TP 10
.B add
Add a widget.
.TP 10
.B remove
Remove a widget.
.SH OPTIONS
.TP
.B \-v
Say more.
"""


def _page(tmp_path: Path, name: str, source: str):
    from atipkit.infer.manpage import read_man_file

    path = tmp_path / f"{name}.1"
    path.write_text(source)
    page = read_man_file(path, name)
    assert page is not None
    return page.help


def test_a_man_pages_commands_count_only_where_its_synopsis_takes_one(tmp_path: Path):
    pager = _page(tmp_path, "pager", PAGER_PAGE)  # interactive keys, not subcommands
    assert pager.commands == []
    assert [o.flags for o in pager.options] == [["-N"]]
    tool = _page(tmp_path, "tool", TOOL_PAGE)
    assert [c.name for c in tool.commands] == ["add", "remove"]


def test_justified_or_hyphenated_prose_is_never_read_as_a_listing(tmp_path: Path):
    """Prose above a listing, in the COMMANDS section where names are looked for: rendered
    justified, its lines would be padded with runs of spaces ("Pager  shows  a file"),
    which is how a listing separates a name from its description."""
    head, prose = PAGER_PAGE.split(".SH DESCRIPTION\n")
    source = head.replace("[\\fB\\-N\\fR] \\fIfile\\fR", "\\fIcommand\\fR").replace(
        ".SH COMMANDS\n", f".SH COMMANDS\n{prose}.PP\n"
    )
    pager = _page(tmp_path, "pager", source)  # it takes a command: the listing counts
    names = {c.name for c in pager.commands}
    assert names == {"z", "q"}, names  # no word of the prose, no tail of a broken word


def test_a_listing_name_that_ends_a_sentence_is_not_a_command(tmp_path: Path):
    """groff puts two spaces after a sentence that ends an input line: a line starting
    with that sentence's last word reads as "name  description"."""
    source = TOOL_PAGE.replace(
        ".SH COMMANDS\n",
        ".SH COMMANDS\nEach command takes the widgets named after it; they are described\n"
        ".br\nbelow.\nA widget is named by its label.\n.PP\n",
    )
    tool = _page(tmp_path, "tool", source)
    assert [c.name for c in tool.commands] == ["add", "remove"]


def test_the_last_word_of_a_wrapped_description_is_not_a_command():
    """A description whose last line holds one word: deeper than the names it describes,
    so it continues the description (`less`'s "screenful" was read as a command)."""
    text = (
        "Usage: pg [options]\n\nCommands:\n"
        "  show   Show the page, one\n         screenful\n  quit   Leave\n  clear\n"
    )
    assert [c.name for c in parse_help(text).commands] == ["show", "quit", "clear"]
