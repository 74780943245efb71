"""Effects of inferred commands: the worst case of what the documentation says (issue 20).

The rules are checked on sentences shaped like those of real pages, and end to end on the
man pages of this machine (coreutils, findutils, gzip), read as `atip scan --infer` reads
them: nothing is run.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import atipkit
from atipkit.infer.effects import infer_effects
from atipkit.infer.generate import generate_shim, shim_from_page
from atipkit.infer.helptext import ParsedCommand, ParsedHelp, parse_help
from atipkit.infer.manpage import ManPages, merge, read_man_file


def kind(effects: atipkit.Effects) -> str:
    if effects.destructive is True:
        return "destructive"
    written = effects.filesystem.write if effects.filesystem else None
    return {True: "writes", False: "read-only"}.get(written, "unknown")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "purpose", "options", "expected"),
    [
        ("ls", "list directory contents", ["set output width to COLS"], "read-only"),
        ("status", "Show the working tree status", ["terminate entries with NUL"], "read-only"),
        ("diff", "Show changes between commits", [], "read-only"),  # "changes" is a noun
        ("list-users", "", [], "read-only"),  # the name alone
        ("is-active", "", [], "read-only"),  # a name that asks
        ("rm", "remove files or directories", [], "destructive"),
        ("clean", "Remove untracked files from the working tree", [], "destructive"),
        ("kill", "send a signal to a process", [], "destructive"),  # by its name
        ("cut", "remove sections from each line of files", [], "unknown"),  # no stored object
        ("date", "print or set the system date and time", [], "writes"),  # a joined verb
        ("sort", "sort lines of text files", ["write result to FILE instead of stdout"], "writes"),
        (
            "sort",
            "sort lines of text files",
            ["merge already sorted files; do not sort"],
            "unknown",
        ),
        ("gzip", "compress or expand files", ["keep (don't delete) input files"], "destructive"),
        ("cp", "copy files and directories", ["prompt before overwrite"], "destructive"),
        (
            "log",
            "Show commit logs",
            ["discard the files before <file> from the output"],
            "read-only",
        ),
        (
            "reset",
            "Reset current HEAD to the specified state",
            ["Any changes to tracked files in the working tree since <commit> are discarded."],
            "destructive",  # a passive: the object comes first
        ),
        (
            "find",
            "search for files",
            ["Delete files or directories; true if removal succeeded"],
            "destructive",
        ),
        ("tr", "translate or delete characters", ["delete characters in ARRAY1"], "unknown"),
        ("dpkg-query", "a tool to query the dpkg database", [], "read-only"),  # "to" + verb
        ("speed", "Algorithm Speed Measurement", [], "read-only"),  # a noun phrase
        ("genrsa", "Generation of RSA Private Key", [], "writes"),
        (
            "is-enabled",
            "Checks whether units are enabled. Returns 0 if one is enabled.",
            [],
            "read-only",
        ),
        ("set-environment", "Set or unset an environment variable", [], "destructive"),
        (
            "push",
            "Update remote refs",
            ["All listed refs are deleted from the remote."],
            "destructive",
        ),
        (
            "find",
            "search",
            ["If file does not exist, it is created; if it does, it is truncated."],
            "destructive",
        ),
        ("install", "copy files and set attributes", [], "destructive"),  # over what is there
        ("restart", "Restart one or more units", [], "destructive"),  # out of service
        (
            "sed",
            "stream editor",
            ["edit files in place (makes backup if SUFFIX given)"],
            "destructive",
        ),
        ("list", "List installed packages.", ["Store the cache data in <dir>."], "read-only"),
        ("autoremove", "", [], "destructive"),  # a compound of a verb of removal
        ("rmi", "", [], "destructive"),
        ("verify-tag", "Check the GPG signature of tags", [], "read-only"),  # its first word
        ("diff", "compare files line by line", ["output merged file with #ifdef"], "read-only"),
        ("log", "Show commit logs", ["Output to a specific file instead of stdout."], "writes"),
        (
            "sort",
            "sort lines",
            ["read names from files specified by NUL-terminated names"],
            "unknown",
        ),
    ],
)
def test_a_command_is_judged_by_the_worst_case_of_its_documentation(
    name: str, purpose: str, options: list[str], expected: str
) -> None:
    assert kind(infer_effects(name, purpose, options)) == expected


@pytest.mark.parametrize(
    ("name", "purpose", "options", "expected"),
    [
        (  # a flag that starts the description: the verb after it starts the clause
            "journalctl",
            "Query the systemd journal",
            ["--vacuum-size= removes the oldest archived journal files until the disk space"],
            "destructive",
        ),
        (  # a bracket ends a clause
            "source-file",
            "(alias: source) Execute commands from one or more files specified by path.",
            [],
            "destructive",
        ),
        (  # the rest of a listing's paragraph is read as an option's text
            "respawn-pane",
            "Reactivate a pane in which the command has exited. With -k, any existing "
            "command is killed.",
            [],
            "destructive",
        ),
        (  # a doubled consonant: running → run
            "split-window",
            "Create a new pane by splitting target-pane, running shell-command in it.",
            [],
            "destructive",
        ),
        ("is-active", "Check whether the units are active (i.e. running).", [], "read-only"),
        ("is-system-running", "Checks whether the system is operational.", [], "read-only"),
        (  # what an option shows is not done: "files that need to be removed"
            "ls-files",
            "Show information about files in the index",
            ["Show files on the filesystem that need to be removed due to conflicts"],
            "read-only",
        ),
        ("gc", "Cleanup unnecessary files and optimize the repository.", [], "destructive"),
        ("tidy", "Tidy up", ["Prune loose objects older than date"], "destructive"),
        ("expire", "", [], "destructive"),
        # verbs of changing, and the words that put a verb at a clause's start
        ("fsck", "check and repair a Linux filesystem", [], "writes"),
        ("stats", "Manages IO statistics regions for devices.", [], "writes"),
        ("check", "check is a diagnostic tool; it updates the package cache", [], "writes"),
        ("capture", "Similar to monitor but writes the output in pcapng format", [], "writes"),
        ("hash-object", "Compute an ID and optionally creates a blob from a file.", [], "writes"),
        ("delpart", "tell the kernel to forget about a partition", [], "unknown"),
        ("call", "Invoke a method and show the response.", [], "destructive"),
        (  # a later sentence that changes something forbids the claim of safety
            "hostname",
            "If no argument is given, print the hostname. Otherwise, change it to NAME.",
            [],
            "unknown",
        ),
        (
            "status",
            "Show the status. Each is prefixed with - if the submodule is not initialized.",
            [],
            "read-only",
        ),
        (  # a later sentence about what is shown changes nothing
            "seat-status",
            "Show terse status information. This function is intended to generate "
            "human-readable output.",
            [],
            "read-only",
        ),
        ("deinit", "Unregister the given submodules", [], "destructive"),
    ],
)
def test_what_more_of_a_page_says_is_read(
    name: str, purpose: str, options: list[str], expected: str
) -> None:
    """Decision 455: brackets and flags end clauses, a paragraph's later sentences and
    participles count, an option that shows what would be removed removes nothing."""
    assert kind(infer_effects(name, purpose, options)) == expected


def test_an_option_named_for_destroying_and_an_operand_that_is_a_command_line() -> None:
    """Decision 456: `-delete`, `--kill`, `--vacuum-size` destroy when their text agrees
    or says nothing, and forbid a claim of safety otherwise ("Stop the processes"; not
    `--remove-empty`'s "Stop when a given path disappears", decision 753); a shell
    command, or a command with its arguments, as an operand is run (`tmux new-session
    [shell-command]`, `timeout DURATION COMMAND [ARG]...`), but not an action's place
    (`dpkg-query [option...] command`)."""
    looks = "Show the summary"
    assert kind(infer_effects("ss", looks, [""], flags=[["-K", "--kill"]])) == "destructive"
    vacuum = infer_effects("j", looks, ["Removes archived files."], flags=[["--vacuum-size"]])
    assert kind(vacuum) == "destructive"
    stops = ["Stop the processes."]
    doubt = infer_effects("shortlog", looks, stops, flags=[["--kill-stop"]])
    assert kind(doubt) == "unknown"
    assert kind(infer_effects("ls", looks, ["No deletion"], flags=[["--no-delete"]])) == "read-only"
    assert kind(infer_effects("x", "Create a session", operands=["shell-command"])) == "destructive"
    timeout = infer_effects("timeout", "Limit the time", operands=["duration", "command", "arg..."])
    assert kind(timeout) == "destructive"
    query = infer_effects("dpkg-query", "query the database", operands=["option...", "command"])
    assert kind(query) == "read-only"
    # where the output goes: an option named for it that names a file, a destination
    out = ["Filename to output to, or standard output by default."]
    dgst = infer_effects("dgst", "Message Digest calculation.", out, flags=[["-out"]])
    assert kind(dgst) == "writes"
    shown = ["Controls the formatting of the entries that are shown."]
    assert kind(infer_effects("j", looks, shown, flags=[["--output"]])) == "read-only"
    assert kind(infer_effects("uniq", "report lines", operands=["input", "output"])) == "unknown"
    assert kind(infer_effects("cc", "x", ["Place the output into <file>."])) == "writes"
    # a runner that also looks is no claim of safety either: it runs what it is given
    assert kind(infer_effects("watch", "Show it", operands=["command", "arg..."])) == "unknown"


def test_read_only_is_claimed_only_without_evidence_against_it() -> None:
    looks = infer_effects("show", "Show various types of objects", [])
    assert looks.filesystem
    assert looks.filesystem.write is False
    assert looks.filesystem.delete is False
    assert looks.destructive is not True
    # the same purpose with one option that writes a file is no longer read-only
    assert kind(infer_effects("show", "Show objects", ["save the output to FILE"])) == "writes"
    assert kind(infer_effects("show", "Show objects", ["delete the cache files"])) == "destructive"


def test_a_denied_command_is_destructive_unless_shown_read_only() -> None:
    """The deny list's claim, made on the shim of a page alone (`claim_destruction`): a
    command that only looks stays read-only, one that says nothing or that also sets is
    claimed destructive."""
    page = ParsedHelp(
        description="control the frobnicator",
        usage="frobctl COMMAND",
        commands=[
            ParsedCommand("list-users", "List users"),
            ParsedCommand("frob", ""),
            ParsedCommand("hostname", "show or set the host name"),
        ],
    )
    tool = shim_from_page("frobctl", "sha256:" + "0" * 64, page, denied=True)
    assert kind(atipkit.effective_effects(tool, "list-users")) == "read-only"
    assert kind(atipkit.effective_effects(tool, "frob")) == "destructive"
    assert kind(atipkit.effective_effects(tool, "hostname")) == "destructive"
    undenied = shim_from_page("frobctl", "sha256:" + "0" * 64, page)
    assert kind(atipkit.effective_effects(undenied, "frob")) == "unknown"


def test_network_words_mark_network() -> None:
    assert infer_effects("fetch", "Download objects from another repository", []).network is True
    assert infer_effects("ls", "list directory contents", []).network is not True


@pytest.mark.parametrize("sentence", ["Remove the files. ", "Files are removed. "])
def test_a_hostile_help_of_megabytes_is_read_in_linear_time(sentence: str) -> None:
    # an option's description is text a tool's --help controls: many sentences each with
    # a verb of removal once took a scan of the rest of the text per verb (minutes here)
    text = sentence * 60_000  # about a megabyte
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    started = time.thread_time()
    effects = infer_effects("frob", "Show things", [text])
    assert time.thread_time() - started < 5
    assert kind(effects) == "destructive"


def page_shim(name: str) -> atipkit.Tool:
    found = ManPages().find(name)
    if found is None or shutil.which("groff") is None:
        pytest.skip(f"no man page for {name} or no groff")
    page = read_man_file(found, name)
    assert page is not None
    return shim_from_page(name, "sha256:" + "0" * 64, page.help)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ls", "read-only"),
        ("wc", "read-only"),
        ("rm", "destructive"),
        ("shred", "destructive"),
        ("find", "destructive"),  # through -delete
        ("gzip", "destructive"),  # deletes its input unless --keep
        ("sort", "writes"),  # through -o
    ],
)
def test_real_pages_of_this_machine(name: str, expected: str) -> None:
    tool = page_shim(name)
    assert kind(atipkit.effective_effects(tool, "")) == expected


PAGE = r""".TH LOGINCTL 1
.SH NAME
loginctl \- control the frobnicator
.SH SYNOPSIS
.B loginctl
[\fIOPTIONS\fR] \fICOMMAND\fR
.SH OPTIONS
.TP
.B \-q
Be quiet.
.SH COMMANDS
.TP
.B list-sessions
List the current sessions.
.TP
.B terminate-session
Terminate a session.
.TP
.B frob
Frobnicate a session.
"""


def test_a_denied_tool_is_claimed_destructive_per_command(tmp_path: Path, monkeypatch) -> None:
    """`loginctl list-users` is not destructive because loginctl is on the deny list; what
    its page does not show read-only still is. The tool is never run."""
    if shutil.which("groff") is None:
        pytest.skip("no groff")
    section = tmp_path / "man" / "man1"
    section.mkdir(parents=True)
    (section / "loginctl.1").write_text(PAGE)
    monkeypatch.setenv("MANPATH", str(tmp_path / "man"))
    marker = tmp_path / "ran"
    exe = tmp_path / "bin" / "loginctl"  # on the deny list by its name
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\ntouch {marker}\n")
    exe.chmod(0o755)
    tool = generate_shim(str(exe))
    assert tool.effects is atipkit.UNSET  # no claim for the whole tool
    effects = {p[0]: atipkit.effective_effects(tool, p) for p, _ in atipkit.iter_commands(tool)}
    assert kind(effects["list-sessions"]) == "read-only"
    assert kind(effects["terminate-session"]) == "destructive"
    assert kind(effects["frob"]) == "destructive"  # nothing said: the list's claim holds
    assert "destructive assumed" in tool.extensions["_generation"]["note"]
    assert not marker.exists()  # never run


def test_a_subcommand_whose_help_reprints_its_parents_has_no_commands_of_its_own() -> None:
    """`apt-get install --help` prints apt-get's help: its listing is apt-get's, not
    install's, and a group's effects would be none (decision 284)."""
    if shutil.which("apt-get") is None:
        pytest.skip("no apt-get")
    tool = generate_shim("apt-get", budget=30)
    install = tool.commands["install"]
    assert install.commands == {}
    assert kind(atipkit.effective_effects(tool, "install")) == "destructive"


def test_an_option_listed_in_a_row_by_the_help_takes_its_description_from_the_page() -> None:
    """`find --help` lists actions in a row ("-delete -print0 -printf FORMAT"): -delete
    takes its page's description, which says that find deletes."""
    if shutil.which("find") is None or ManPages().find("find") is None:
        pytest.skip("no find or no page")
    tool = generate_shim("find", budget=30)
    delete = next(o for o in tool.commands[""].options if "-delete" in o.flags)
    assert delete.description.lower().startswith("delete files")
    assert kind(atipkit.effective_effects(tool, "")) == "destructive"


def test_a_command_run_in_passing_a_fetch_and_a_dotted_file_forbid_safety() -> None:
    """Decision 475: the dev split's three read-only claims against destructive or
    writing commands. "Optionally execute a command for each device" later in a listing
    (`dmsetup ls`) runs one; "get ... from a URI" (`apt-key net-update`) fetches, `get`
    looks only as a name (`get-property`); a dotted file name (`file -C`: "Write a
    magic.mgc output file") is one word, its dot no end of sentence."""
    listing = "List device names. Optionally execute a command for each device."
    assert kind(infer_effects("ls", listing)) == "unknown"
    assert kind(infer_effects("show", "Show it. It runs the given program.")) == "unknown"
    update = "Perform an update, but get the archive keyring from a URI instead."
    fetch = infer_effects("net-update", update)
    assert kind(fetch) == "unknown"
    assert fetch.network is True
    assert kind(infer_effects("get-property", "Retrieve the value of a property")) == "read-only"
    compiles = ["Write a magic.mgc output file that contains a pre-parsed version of it."]
    assert kind(infer_effects("file", "determine file type", compiles)) == "writes"
    # a sentence still ends at a dot before a space
    assert kind(infer_effects("show", "Show it. Print the entries, e.g. the notes.")) == "read-only"


def test_what_acts_on_printed_text_changes_nothing_stored() -> None:
    """Decision 476: a verb whose object is the text a command prints ("merge lines of
    files", "convert tabs to spaces") writes nothing; an option named for destroying
    that looks or truncates printed text (`lsblk --discard`: "print discard
    capabilities", `column --table-truncate`) is neither a destruction nor a doubt."""
    # ... and, since decision 536, shows its result
    assert kind(infer_effects("paste", "merge lines of files")) == "read-only"
    assert kind(infer_effects("expand", "convert tabs to spaces")) == "read-only"
    looks = ["print discard capabilities"]
    assert kind(infer_effects("lsblk", "list block devices", looks, flags=[["--discard"]])) == (
        "read-only"
    )
    cuts = ["truncate text in the columns when necessary"]
    assert kind(infer_effects("show", "show lists", cuts, flags=[["--table-truncate"]])) == (
        "read-only"
    )
    # what it says of stored things still counts
    deletes = ["Print and delete the files"]
    assert kind(infer_effects("ls", "list them", deletes, flags=[["--delete"]])) == "destructive"
    assert kind(infer_effects("merge", "merge branches into the current one")) == "destructive"


def test_a_word_in_capitals_is_no_verb() -> None:
    """Decision 477: `dmsetup info` "Outputs some brief information about the device in
    the form: State: SUSPENDED|ACTIVE" suspended nothing; a value or a placeholder in
    capitals starts no clause, the same word in lower case still does."""
    info = "Outputs some brief information about the device in the form: State: SUSPENDED|ACTIVE"
    assert kind(infer_effects("info", info)) == "read-only"
    assert kind(infer_effects("info", info.replace("SUSPENDED", "suspended"))) == "destructive"
    assert kind(infer_effects("rm", "REMOVE files", ["-f FILE"])) == "destructive"  # its name


SHARED = r""".TH PGREP 1
.SH NAME
pgrep, pkill, pidwait \- look up, signal, or wait for processes
.SH SYNOPSIS
.B pgrep
[options] pattern
.SH OPTIONS
.TP
\fB\-e\fR, \fB\-\-echo\fR
Display name and PID of the process being killed.  (pkill only.)
.TP
\fB\-c\fR, \fB\-\-count\fR
Suppress normal output; instead print a count of matching processes.
"""


@pytest.mark.parametrize(
    ("name", "expected", "options"),
    [("pgrep", "read-only", 1), ("pkill", "destructive", 2), ("pidwait", "unknown", 1)],
)
def test_a_name_line_shared_by_several_names_is_read_for_each(
    tmp_path: Path, name: str, expected: str, options: int
) -> None:
    """Decision 478: `pgrep, pkill, pidwait - look up, signal, or wait for processes`
    says one doing for each name: pgrep looks up (it was destructive by pkill's
    "signal"), and an option given to another of the names ("(pkill only.)") is not
    pgrep's. The description the page gives every name is kept."""
    if shutil.which("groff") is None:
        pytest.skip("no groff")
    path = tmp_path / "pgrep.1"
    path.write_text(SHARED, encoding="utf-8")
    page = read_man_file(path, name)
    assert page is not None
    assert page.help.description == "look up, signal, or wait for processes"
    assert len(page.help.options) == options
    tool = shim_from_page(name, "sha256:" + "0" * 64, page.help)
    assert kind(atipkit.effective_effects(tool, "")) == expected


def test_a_reference_to_a_page_is_no_verb() -> None:
    """Decision 477: pgrep's `-q` ("Use sigqueue(3) rather than kill(2)") killed
    nothing."""
    queue = ["Use sigqueue(3) rather than kill(2) and the value argument."]
    assert kind(infer_effects("pgrep", "look up processes", queue)) == "read-only"
    assert kind(infer_effects("pgrep", "look up processes", ["It may kill them."])) == (
        "destructive"
    )


def test_a_change_the_text_denies_is_no_change() -> None:
    """Decision 482: "doesn't commit any outstanding changes" and "does not actually
    trigger a measurement" (`dmsetup status`, `dmsetup measure`) change nothing, so they
    no longer forbid a claim of safety; a removal denied still documents the risk
    (gzip's "keep (don't delete) input files")."""
    status = (
        "Outputs status information for each of the device's targets. With --noflush, "
        "the thin target doesn't commit any outstanding changes to disk before reporting."
    )
    assert kind(infer_effects("status", status)) == "read-only"
    measure = "Show the data. This is for debugging and does not actually trigger a measurement."
    assert kind(infer_effects("measure", measure)) == "read-only"
    assert kind(infer_effects("status", "Show it. Otherwise, it commits the changes.")) == (
        "unknown"
    )
    keep = ["keep (don't delete) input files"]
    assert kind(infer_effects("gzip", "compress files", keep)) == "destructive"


def test_a_fetch_from_the_network_forbids_safety() -> None:
    """Decision 483: `apt-key net-update` gets a keyring from a URI and validates it: the
    verb of looking made a claim of safety for a command that fetches and stores."""
    update = (
        "Perform an update working similarly to the update command above, but get the "
        "archive keyring from a URI instead and validate it against a master key."
    )
    fetch = infer_effects("net-update", update)
    assert kind(fetch) == "unknown"
    assert fetch.network is True
    local = "Get the keyring from the file and validate it against a master key."
    assert kind(infer_effects("check", local)) == "read-only"  # no network: no fetch


PAGED = r""".TH FROBFILE 1
.SH NAME
frobfile \- determine file type
.SH OPTIONS
.TP
.B \-C
Write a magic.mgc output file that contains a pre-parsed version of the magic file.
.TP
.B \-b
Do not prepend filenames to output lines.
"""


def test_an_options_text_on_its_page_is_read_beside_its_helps(tmp_path: Path) -> None:
    """Decision 484: `file --help` says "-C compile file specified by -m", its page
    "Write a magic.mgc output file"; the help's words are shown and both are read, so
    `atip gen file` no longer says a writing command read-only."""
    if shutil.which("groff") is None:
        pytest.skip("no groff")
    path = tmp_path / "frobfile.1"
    path.write_text(PAGED, encoding="utf-8")
    page = read_man_file(path, "frobfile")
    assert page is not None
    help_ = parse_help(
        "Usage: frobfile [OPTION...] FILE...\nDetermine type of FILEs.\n\n"
        "  -C, --compile              compile file specified by -m\n"
        "  -b, --brief                do not prepend filenames to output lines\n",
        "frobfile",
    )
    merge(help_, page.help)
    compiles = next(o for o in help_.options if "-C" in o.flags)
    assert compiles.description == "compile file specified by -m"
    assert compiles.also.startswith("Write a magic.mgc output file")
    tool = shim_from_page("frobfile", "sha256:" + "0" * 64, help_)
    assert kind(atipkit.effective_effects(tool, "")) == "writes"
    option = next(o for o in tool.commands[""].options if "-C" in o.flags)
    assert option.description == "compile file specified by -m"


@pytest.mark.parametrize(
    ("name", "purpose", "prose", "expected"),
    [
        (
            "cut",
            "remove sections from each line of files",
            "Print selected parts of lines from each FILE to standard output.",
            "read-only",
        ),
        (
            "paste",
            "merge lines of files",
            "Write lines consisting of the sequentially "
            "corresponding lines from each FILE, separated by TABs, to standard output.",
            "read-only",
        ),
        (
            "rev",
            "reverse lines characterwise",
            "The rev utility copies the specified files "
            "to standard output, reversing the order of characters in every line.",
            "read-only",
        ),
        (
            "expand",
            "convert tabs to spaces",
            "Convert tabs in each FILE to spaces, writing to standard output.",
            "read-only",
        ),
        (
            "locale",
            "get locale-specific information",
            "The locale command displays information about the current locale on standard output.",
            "read-only",
        ),
        # a file as well as standard output: no claim
        ("tee", "", "Copy standard input to each FILE, and also to standard output.", "unknown"),
        # the description is read for what shows, never against it
        (
            "which",
            "locate a command",
            "which returns the pathnames of the files (or links) "
            "which would be executed in the current environment.",
            "read-only",
        ),
        ("frob", "", "This command is used to generate list of algorithms.", "unknown"),
        # it never overrules what the purpose or the options say
        (
            "shred",
            "overwrite a file to hide its contents",
            "Print the files to standard output.",
            "destructive",
        ),
        (
            "sort",
            "sort lines of text files",
            "Write sorted concatenation of all FILE(s) to standard output.",
            "writes",
        ),
    ],
)
def test_a_result_sent_to_standard_output_is_shown(
    name: str, purpose: str, prose: str, expected: str
) -> None:
    """Decision 485: the first sentence of a page's description says where the result
    goes; "to standard output" and to no file is positive evidence of looking, its verbs
    of writing show (filters: cut, paste, rev, expand)."""
    options = ["write result to FILE instead of standard output"] if name == "sort" else []
    flags = [["-o", "--output"]] if options else []
    said = infer_effects(name, purpose, options, flags=flags, prose=prose)
    assert kind(said) == expected


def test_verbs_in_ies_and_ied_are_read() -> None:
    """Decision 485: "Verifies" (git fsck) looked like no verb, "modifies" neither."""
    assert kind(infer_effects("fsck", "Verifies the connectivity of the objects")) == ("read-only")
    assert kind(infer_effects("frob", "modifies the files")) == "writes"


def test_a_path_is_a_file_and_no_end_of_sentence() -> None:
    """Decision 486: git fsck's `--lost-found` ("Write dangling objects into
    .git/lost-found/commit/ or .git/lost-found/other/") writes; "and/or" is no path."""
    lost = ["Write dangling objects into .git/lost-found/commit/ or .git/lost-found/other/."]
    verifies = "Verifies the connectivity and validity of the objects in the database"
    assert kind(infer_effects("fsck", verifies, lost)) == "writes"
    assert kind(infer_effects("ls", "list it", ["Print and/or write the entries."])) == (
        "read-only"
    )


def test_printed_text_in_an_option_and_as_a_passives_subject() -> None:
    """Decision 486: git blame's `-M` ("Detect moved or copied lines within a file")
    copies printed lines, column's `--table-truncate` ("Specify columns where text can be
    truncated") truncates printed text; jq's `--color-output`, whose first sentence
    names no file, says nothing of where output goes."""
    blame = "Show what revision and author last modified each line of a file"
    moved = ["Detect moved or copied lines within a file."]
    assert kind(infer_effects("blame", blame, moved, flags=[["-M"]])) == "read-only"
    cuts = ["Specify columns where text can be truncated when necessary."]
    assert kind(infer_effects("column", "list it", cuts, flags=[["--table-truncate"]])) == (
        "read-only"
    )
    files = ["Specify files that can be truncated."]
    assert kind(infer_effects("column", "list it", files, flags=[["--truncate"]])) == (
        "destructive"
    )
    color = [
        "By default, jq outputs colored JSON if writing to a terminal. You can force it "
        "to produce color even if writing to a pipe or a file using -C."
    ]
    assert kind(infer_effects("jq", "show it", color, flags=[["--color-output"]])) == ("read-only")
    session = ["Output SSL session to filename"]
    assert kind(infer_effects("s_client", "show it", session, flags=[["-sess_out"]])) == ("writes")


def test_a_sentence_whose_subject_is_the_command_says_what_it_does() -> None:
    """Decision 487: systemd-analyze's commands are described "This command prints a
    list of ...": the verb after the subject says what the command does, for safety and
    against it."""
    listing = "This command prints a list of Linux capabilities. See capabilities(7)."
    assert kind(infer_effects("capability", listing)) == "read-only"
    assert kind(infer_effects("frob", "This command deletes the files.")) == "destructive"
    assert kind(infer_effects("frob", "Show it. The utility removes the files.")) == ("destructive")
    # a subject inside a sentence is none: "the command" there is an object
    assert kind(infer_effects("frob", "Frob it. Use the command prints.")) == "unknown"


FOREIGN = """#!/bin/sh
if [ "$1" = "--help" ]; then
  printf 'Usage: frobkey [command]\\n\\nCommands:\\n  list    List trusted keys\\n'
  printf '  add     Add a key to the keyring\\n'
  exit 0
fi
if [ "$2" = "--help" ]; then
  printf 'frob (GnuPG) 2.2\\n\\nSyntax: gpg [options] [files]\\n\\nOptions:\\n'
  printf '  --delete-keys          remove keys from the public keyring\\n'
  printf '  -o, --output FILE      write output to FILE\\n'
  exit 0
fi
exit 1
"""


def test_a_subcommands_help_that_is_another_programs_is_not_read(
    tmp_path: Path, monkeypatch
) -> None:
    """Decision 484: `apt-key list --help` prints gpg's help ("Syntax: gpg [options]
    [files]"); its `--delete-keys` made `apt-key list` destructive. A subcommand's help
    whose usage line names another program is not read: the listing's "List trusted
    keys" is what the command says."""
    monkeypatch.setenv("MANPATH", str(tmp_path / "man"))
    exe = tmp_path / "bin" / "frobkey"
    exe.parent.mkdir()
    exe.write_text(FOREIGN)
    exe.chmod(0o755)
    tool = generate_shim(str(exe), man=False, budget=30)
    assert set(tool.commands) == {"list", "add"}
    assert tool.commands["list"].options == []
    assert kind(atipkit.effective_effects(tool, "list")) == "read-only"


def test_what_a_purpose_sends_to_standard_output_is_shown() -> None:
    """Decision 485: `ip route save` is "save routing table information to stdout": its
    name's verb and its purpose's write nothing stored. A file among the targets keeps
    them writing."""
    assert kind(infer_effects("save", "save routing table information to stdout")) == ("read-only")
    both = "save the table to a file and to standard output"
    assert kind(infer_effects("save", both)) == "writes"


def test_later_sentences_are_read_as_verbs_of_the_command() -> None:
    """Decision 482: in sentences after the first, nouns are no verbs ("and --global for
    the global configuration"), a participle coordinated after `is` is a state ("the unit
    is active or started"), and a verb after `to` in a sentence whose verb was read says
    why, not what ("ordered by the time they took to initialize")."""
    paths = (
        "This command outputs a list of directories. "
        "Combine with --global for the global configuration."
    )
    assert kind(infer_effects("unit-paths", paths)) == "read-only"
    chain = (
        "This command prints a tree of units. "
        "The time after the unit is active or started is printed."
    )
    assert kind(infer_effects("critical-chain", chain)) == "read-only"
    blame = "This command prints a list of all units, ordered by the time they took to initialize."
    assert kind(infer_effects("blame", blame)) == "read-only"
    # what destroys still counts after `to`, and a verb that leads a clause still changes
    wipe = "This command prints a list of units, then uses it to remove the files."
    assert kind(infer_effects("frob", wipe)) == "destructive"
    assert kind(infer_effects("frob", "Show it. Otherwise, it changes the units.")) == "unknown"
    assert kind(infer_effects("frob", "Speed Measurement")) == "read-only"  # a purpose's nouns


def test_an_operand_that_holds_an_output_is_a_destination() -> None:
    """Decision 533: uniq's `[INPUT [OUTPUT]]` is read as one operand, `input-output`,
    and "report or omit repeated lines" was said read-only though uniq writes OUTPUT. A
    word of an operand's name that is a destination forbids the claim; an operand that
    names options (`[output-option]`, ipcs's) is flags, no file."""
    purpose = "report or omit repeated lines"
    assert kind(infer_effects("uniq", purpose, operands=["input-output"])) == "unknown"
    assert kind(infer_effects("uniq", purpose, operands=["output-file"])) == "unknown"
    assert kind(infer_effects("uniq", purpose, operands=["input"])) == "read-only"
    shows = "show information on IPC facilities"
    assert kind(infer_effects("ipcs", shows, operands=["output-option"])) == "read-only"


def test_activating_is_a_change() -> None:
    """Decision 533: dpkg-trigger's page, "a tool to explicitly activate triggers and
    check for its support", was read by `check` alone and said read-only."""
    prose = "dpkg-trigger is a tool to explicitly activate triggers and check for its support."
    said = infer_effects("dpkg-trigger", "a package trigger utility", prose=prose)
    assert kind(said) != "read-only"
    assert kind(infer_effects("frob", "activate a profile")) == "writes"


def test_a_removal_the_name_line_leaves_without_object_is_read_in_the_description() -> None:
    """Decision 534: ipcrm's NAME line, "remove certain IPC resources", names nothing
    stored; its description's first sentence does ("ipcrm removes System V
    inter-process communication (IPC) objects and associated data structures from the
    system"), however far from the verb. Only a removal the NAME line says is read so:
    a description alone stays read for what shows."""
    prose = (
        "ipcrm removes System V inter-process communication (IPC) objects and associated"
        " data structures from the system. In order to delete such objects, you must be"
        " superuser."
    )
    assert kind(infer_effects("ipcrm", "remove certain IPC resources", prose=prose)) == (
        "destructive"
    )
    columns = "colrm removes selected columns from a file. Input is taken from standard input."
    assert kind(infer_effects("colrm", "remove columns from a file", prose=columns)) != (
        "destructive"
    )
    assert kind(infer_effects("ipcs", "show IPC facilities", prose=prose)) != "destructive"


def test_a_run_that_ends_when_killed_kills_nothing() -> None:
    """Decision 535: top's and systemd-cgtop's batch mode "runs until killed": the verb
    after `until` says how the command's own run ends, not what it destroys."""
    batch = (
        "Run in batch mode: do not accept input and run until the iteration limit is"
        " exhausted or until killed."
    )
    shows = "display Linux processes"
    assert kind(infer_effects("top", shows, [batch], flags=[["-b", "--batch"]])) == "read-only"
    until = "Runs until it is terminated."
    assert kind(infer_effects("top", shows, [until], flags=[["-b"]])) == "read-only"
    kills = "Kill the processes until none remain."
    assert kind(infer_effects("top", shows, [kills], flags=[["-k"]])) == "destructive"


def test_printed_text_after_a_word_that_qualifies_it() -> None:
    """Decision 535: xgettext, "extract gettext strings from source", was destructive by
    `extract` (a verb of replacing): its object is printed text one word on. A stored
    thing first still counts ("extract files' strings" extracts files)."""
    strings = infer_effects("xgettext", "extract gettext strings from source")
    assert kind(strings) != "destructive"
    assert kind(infer_effects("frob", "extract archive strings")) == "destructive"
    assert kind(infer_effects("frob", "extract the files")) == "destructive"


def test_a_description_that_sends_its_result_to_standard_output_shows_it() -> None:
    """Decision 536: filters say where their result goes after the first sentence of
    their description, often with no verb of looking: col's "col reads from standard
    input and writes to standard output", colrm's "Output is sent to standard output".
    Any sentence of the opening that sends the result to standard output and nowhere
    else shows it; one that also names a file, or destroys, does not."""
    col = (
        "col filters out reverse line feeds so the output is in the correct order."
        " col reads from standard input and writes to standard output."
    )
    assert kind(infer_effects("col", "filter reverse line feeds", prose=col)) == "read-only"
    colrm = (
        "colrm removes selected columns from a file. Input is taken from standard input."
        " Output is sent to standard output."
    )
    removes = infer_effects("colrm", "remove columns from a file", prose=colrm)
    assert kind(removes) == "read-only"
    tee = "Frob takes no options. It copies its input to each FILE, and also to standard output."
    assert kind(infer_effects("frob", "frob the input", prose=tee)) == "unknown"
    wipe = "Frob takes no options. It deletes the files and writes their names to standard output."
    assert kind(infer_effects("frob", "frob the input", prose=wipe)) == "unknown"


def test_a_purpose_that_turns_printed_text_into_printed_text_shows_it() -> None:
    """Decision 536: numfmt's "Convert numbers from/to human-readable strings" acts on
    printed text only, and shows its result; a clause that puts it into a file ("copy
    lines to FILE", "convert text in each file") makes no claim."""
    purpose = "Convert numbers from/to human-readable strings"
    assert kind(infer_effects("numfmt", purpose)) == "read-only"
    assert kind(infer_effects("expand", "convert tabs to spaces")) == "read-only"
    assert kind(infer_effects("frob", "copy lines to FILE")) == "unknown"
    assert kind(infer_effects("frob", "convert text in each file")) == "unknown"
    # a setting changes in place ("set tabs on a terminal"); a command line is run
    assert kind(infer_effects("tabs", "set tabs on a terminal")) == "unknown"
    runs = "build and execute command lines from standard input"
    assert kind(infer_effects("xargs", runs)) == "destructive"
    # an option's text is no purpose: "merge lines" there says nothing of the command
    assert kind(infer_effects("frob", "frob it", ["merge lines of files"])) == "unknown"


def test_a_help_of_blank_lines_is_read_in_linear_time():
    """A hostile `--help` of many blank lines: the usage-line pattern of `_anothers`
    (decision 484) once scanned, from each line, every line after it (11 s for these
    20 000);
    now the whole text is one pass. A usage line after them is still found."""
    import time

    from atipkit.infer.generate import _anothers

    blank = "\n" * 20_000
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    started = time.thread_time()
    assert not _anothers(blank + "no usage here\n", ("apt-key", "list"), "/usr/bin/apt-key")
    assert time.thread_time() - started < 5
    assert _anothers(blank + "Syntax: gpg [options]\n", ("apt-key", "list"), "/usr/bin/apt-key")


def test_printed_text_that_qualifies_a_noun_is_no_object() -> None:
    """Decision 567: ldattach's "attach a line discipline to a serial line" and gendict's
    "Compiles word list into ICU string trie dictionary" were said read-only, their verbs
    taken to act on printed text ("line", "word"); a printed word with a noun after it
    qualifies that noun. The object still shows when the phrase ends there or a
    preposition follows ("merge lines of files", "print lines that match")."""
    purpose = "attach a line discipline to a serial line"
    assert kind(infer_effects("ldattach", purpose)) == "writes"
    compiles = "Compiles word list into ICU string trie dictionary"
    assert kind(infer_effects("gendict", compiles)) == "writes"
    assert kind(infer_effects("paste", "merge lines of files")) == "read-only"
    assert kind(infer_effects("frob", "extract lines that match")) == "read-only"
    assert kind(infer_effects("xgettext", "extract gettext strings from source")) == "read-only"


def test_a_change_said_of_the_command_after_a_condition_is_read() -> None:
    """Decision 567: "If no argument is given, print the current log level. If LEVEL is
    provided, then the command changes the current log level" (systemctl log-level) was
    read-only: the command as subject after `then` started no clause. A purpose that
    holds only when an operand is left out ("If the LEVEL argument is not given, print
    ...") is no evidence of safety either; a condition on a state is ("When the unit is
    not running, print ...")."""
    first = "If no argument is given, print the current log level of the manager."
    later = " If LEVEL is provided, then the command changes the current log level."
    assert kind(infer_effects("log-level", first + later)) == "unknown"
    alone = "If the LEVEL argument is not given, print the current log level of SERVICE."
    assert kind(infer_effects("service-log-level", alone)) == "unknown"
    state = "When the unit is not running, print its last state."
    assert kind(infer_effects("last-state", state)) == "read-only"
    default = "Without any parameter, this command outputs the manager state."
    assert kind(infer_effects("dump", default)) == "read-only"


def test_an_option_named_for_setting_forbids_safety() -> None:
    """Decision 567: wdctl, "show hardware watchdog status", sets the timeout with
    `-s, --settimeout` ("Set the watchdog timeout in seconds"), and was said read-only:
    an option named for setting whose text sets is a doubt. A name alone (`--setup`:
    "Print the setup") or a text alone ("set output width") is none."""
    texts = ["Print only the specified flags.", "Set the watchdog timeout in seconds."]
    flags = [["-f", "--flags"], ["-s", "--settimeout"]]
    purpose = "show hardware watchdog status"
    assert kind(infer_effects("wdctl", purpose, texts, flags=flags)) == "unknown"
    setup = ["Print only the specified flags.", "Print the setup of the watchdog."]
    named = [["-f", "--flags"], ["--setup"]]
    assert kind(infer_effects("wdctl", purpose, setup, flags=named)) == "read-only"
    assert kind(infer_effects("ls", "list directory contents", ["set output width"])) == (
        "read-only"
    )


def test_a_pronoun_stands_for_the_stored_thing_before_it() -> None:
    """Decision 568: faillock's `--reset`, "Instead of displaying the user's failure
    records, clear them", cleared nothing stored: `them` had no antecedent. A pronoun
    after a verb of removal stands for a stored thing its sentence named before."""
    text = ["Instead of displaying the user's failure records, clear them."]
    purpose = "Tool for displaying and modifying the authentication failure record files"
    assert kind(infer_effects("faillock", purpose, text)) == "destructive"
    lines = ["Print the matching lines and clear them from the screen."]
    assert kind(infer_effects("frob", "show the matches", lines)) == "read-only"


def test_what_an_option_outputs_and_a_file_that_qualifies_a_noun() -> None:
    """Decision 568: openssl info's options "Outputs the default directory for OpenSSL
    engine modules" wrote a directory (`outputs` was not read as `output`, which needs a
    target), and peekfd's "-c Also dump the requested file descriptor activity" a file
    ("file" qualifies "descriptor"). A file as target or object still writes."""
    info = ["Outputs the default directory for OpenSSL engine modules."]
    purpose = "Display diverse information built into the OpenSSL libraries."
    assert kind(infer_effects("info", purpose, info)) == "read-only"
    dump = ["Also dump the requested file descriptor activity in any new child processes."]
    assert kind(infer_effects("peekfd", "peek at file descriptors", dump)) == "read-only"
    assert kind(infer_effects("frob", "show it", ["Write output to file NAME"])) == "writes"
    assert kind(infer_effects("frob", "show it", ["Dump the table to a file"])) == "writes"


def test_a_program_among_the_operands_or_in_an_option_is_run() -> None:
    """Decision 569: runners the operands name by shape: `FILTER [FILTER-OPTION]`
    (msgfilter), `EXECUTABLE [EXECUTABLE-OPTION...]` (sotruss), `program [argument...]`
    read as one operand (setarch); a page's opening that runs one ("The logsave program
    will execute cmd_prog"); an option whose text runs one (dpkg-architecture's `-c`,
    "Execute a command-string in an environment"). A runner that also changes is
    destructive though it looks ("set and determine")."""
    edit = "edit translations of message catalog"
    filters = infer_effects("msgfilter", edit, operands=["filter", "filter-option"])
    assert kind(filters) == "destructive"
    trace = "trace shared library calls through PLT"
    ops = ["executable", "executable-option..."]
    assert kind(infer_effects("sotruss", trace, operands=ops)) == "destructive"
    arch = "change reported architecture in new program environment"
    assert kind(infer_effects("setarch", arch, operands=["arch", "program-argument..."])) == (
        "destructive"
    )
    assert kind(infer_effects("frob", "show files", operands=["file", "file-name"])) == (
        "read-only"
    )
    prose = "The logsave program will execute cmd_prog with the specified argument(s)."
    save = "save the output of a command in a logfile"
    assert kind(infer_effects("logsave", save, prose=prose)) == "destructive"
    determine = "set and determine the architecture for package building"
    option = ["Execute a command-string in an environment which has all variables set."]
    assert kind(infer_effects("dpkg-architecture", determine, option)) == "destructive"
    # a command that only looks and runs in passing stays unknown (decision 456)
    looks = "List device names. Optionally execute a command for each device."
    assert kind(infer_effects("ls", looks)) == "unknown"


def test_a_command_the_budget_left_unread_claims_no_safety() -> None:
    """Decision 570: under load `atip gen git` ran out of its budget before reading
    git-read-tree(1), and the line of git(1)'s listing, "Reads tree information into the
    index", made it read-only (it destroys through `-u`). A command the budget left
    unread keeps what its listing line says it changes or destroys, never a claim of
    safety; read in time, the same line still makes one."""
    from atipkit.infer.generate import Budget, _subcommands

    listing = ParsedHelp(
        commands=[
            ParsedCommand("read-tree", "Reads tree information into the index"),
            ParsedCommand("prune", "Prune all unreachable objects from the object database"),
        ]
    )

    def effects(clock: Budget) -> dict[str, str]:
        out = _subcommands("", ("frob",), listing, 2, clock, [], None, None)
        return {name: kind(command.effects or atipkit.Effects()) for name, command in out.items()}

    assert effects(Budget(0)) == {"read-tree": "unknown", "prune": "destructive"}
    assert effects(Budget(60)) == {"read-tree": "read-only", "prune": "destructive"}


def test_the_bare_invocation_a_page_names_is_the_root_command() -> None:
    """Decision 571: busctl, timedatectl and systemd-analyze say what their bare
    invocation does ("This is the default operation if no command is specified", "If no
    command is passed, systemd-analyze time is implied"), and the shim had no root
    command, so `busctl` alone had no effects. The root command `""` (SPEC-NOTES 7) now
    takes the effects of the command named, its own and not inherited by the others; a
    group that does not say has none."""
    listed = [
        ParsedCommand(
            "list", "List the peers. This is the default operation if no command is specified."
        ),
        ParsedCommand("wipe", "Remove all the stored files."),
    ]
    page = ParsedHelp(description="frob the bus", commands=listed)
    shim = shim_from_page("frob", "0" * 64, page)
    assert kind(shim.commands[""].effects or atipkit.Effects()) == "read-only"
    assert kind(atipkit.effective_effects(shim, ("wipe",))) == "destructive"
    assert kind(atipkit.effective_effects(shim, ())) == "read-only"
    implied = ParsedHelp(
        description="analyze the boot",
        prose="If no command is passed, frob time is implied.",
        commands=[ParsedCommand("time", "Print the time spent."), listed[1]],
    )
    assert kind(shim_from_page("frob", "0" * 64, implied).commands[""].effects) == "read-only"
    silent = ParsedHelp(
        description="frob the bus", commands=[listed[1], ParsedCommand("show", "Show it.")]
    )
    assert "" not in shim_from_page("frob", "0" * 64, silent).commands


def test_a_flag_with_its_values_in_a_usage_line_is_no_operand() -> None:
    """Decision 601: kubectl's `get` and `events` write their output format first in the
    usage line, `[(-o|--output=)json|yaml|...|jsonpath-file]`, which was read as an
    operand named `o---output-json-...`; an operand named `output` is where a command
    writes, so neither claimed to be read-only. A bracketed group whose first
    alternative, in parentheses or not, is a flag is an option."""
    help_ = parse_help(
        "Display one or many resources.\n\nUsage:\n"
        "  frob get [(-o|--output=)json|yaml|name|jsonpath-file] (TYPE [NAME]) [options]\n"
    )
    assert [a.name for a in help_.arguments] == ["type-name"]
    from atipkit.infer.generate import _command

    effects = _command("frob", help_, ("get",)).effects
    assert kind(effects or atipkit.Effects()) == "read-only"


def test_what_a_purpose_converts_goes_where_its_page_says() -> None:
    """Decision 602: captoinfo ("convert a termcap description into a terminfo
    description") and preconv ("convert encoding of input files to something GNU troff
    understands") were said to write, though their pages say the result "is written to
    standard output" / goes "to standard output". A purpose that converts something not
    stored, with no other verb of writing, is read as shown where the page's description
    says, with no condition, that the result goes to standard output; not where the
    purpose makes, sets or writes something (git hash-object, git mktree), makes files,
    replaces, or the page says so only under a condition."""
    convert = "convert a termcap description into a terminfo description"
    prose = "For each one found, an equivalent terminfo description is written to standard output."
    assert kind(infer_effects("captoinfo", convert, prose=prose)) == "read-only"
    assert kind(infer_effects("captoinfo", convert)) == "writes"
    files = "create Sources index files"
    assert kind(infer_effects("scan", files, prose=prose)) == "writes"
    compress = "compress or expand files"
    assert kind(infer_effects("zip", compress, prose=prose)) != "read-only"
    extract = "extract members from an archive"
    assert kind(infer_effects("unpack", extract, prose=prose)) != "read-only"
    when = "If no files are specified, the description is written to standard output."
    assert kind(infer_effects("captoinfo", convert, prose=when)) == "writes"
    # the page's opening is read the same way; a purpose that makes or writes something
    # is not read as shown (git hash-object, git mktree)
    opening = "preconv reads files and converts its encoding(s). The data goes to standard output."
    assert kind(infer_effects("preconv", "convert encoding of input files", prose=opening)) == (
        "read-only"
    )
    made = "Reads ls-tree output and creates a tree object. Its name is written to standard output."
    assert kind(infer_effects("mktree", "build a tree-object from ls-tree text", prose=made)) != (
        "read-only"
    )
    writes = "Computes the ID and optionally writes the object into the object database."
    assert kind(infer_effects("hash-object", writes, prose=prose)) != "read-only"


def test_an_option_that_overwrites_what_its_own_name_names_sets_a_value() -> None:
    """Decision 603: blkid's `-S, --size size` "overwrite device size" made blkid
    destructive, and kubectl diff's `--prune-allowlist` "Overwrite the default allowlist"
    made it so too: what such an option overwrites is the value its own long name names,
    a setting of the run, no stored thing. An option that removes a stored thing its name
    names still destroys (`--remove-files`: "remove files after adding them")."""
    look = "locate/print block device attributes"
    assert kind(
        infer_effects("blkid", look, ["overwrite device size"], flags=[["-S", "--size"]])
    ) == ("read-only")
    allow = ["Overwrite the default allowlist with <group/version/kind> for --prune"]
    assert kind(
        infer_effects("diff", "Show the differences", allow, flags=[["--prune-allowlist"]])
    ) == ("read-only")
    # without its name, the same words still destroy; a stored thing named still does
    assert kind(infer_effects("blkid", look, ["overwrite device size"])) == "destructive"
    files = ["remove files after adding them to the archive"]
    assert kind(infer_effects("tar", "list an archive", files, flags=[["--remove-files"]])) == (
        "destructive"
    )


@pytest.mark.parametrize(
    ("name", "purpose", "expected"),
    [
        ("lldp", "Show discovered LLDP (Link Layer Discovery Protocol) neighbors.", "read-only"),
        ("keep", "Keep (Delete) the files", "destructive"),
        ("frob", "Just show the contents of the configuration space.", "read-only"),
        ("verify", "This command will load unit files and print warnings.", "read-only"),
        ("frob", "Loads table_file into the inactive table slot for device_name.", "writes"),
    ],
)
def test_names_in_parentheses_an_adverb_and_loaded_files_are_no_change(
    name: str, purpose: str, expected: str
) -> None:
    """Decision 604: three read-only commands of the scan were said to write.
    networkctl's `lldp`, "Show discovered LLDP (Link Layer Discovery Protocol)
    neighbors": a capitalised word after an opening parenthesis names something and is
    no verb (`link`), unless it destroys ("keep (Delete ...)" still does).
    apt-config's `dump`, "Just show the contents of the configuration space": `just` is
    an adverb, so `show` leads and the purpose is not read by its nouns
    (`configuration`). systemd-analyze's `verify`, "This command will load unit files and
    print warnings": loading a file with no target reads it; loading into something
    ("Loads table_file into the inactive table slot") still writes."""
    assert kind(infer_effects(name, purpose)) == expected


def test_a_command_whose_run_the_budget_refused_claims_no_safety() -> None:
    """Decision 605: in a sweep, docker's runs (`TOOL_RUNS`) were spent before `docker
    save --help`, which has no page, so `save` kept its listing's line alone, "Save one
    or more images to a tar archive (streamed to STDOUT by default)", and was said
    read-only though `-o` writes a file. A run the budget refused leaves the listing's
    line as an unread command's (decision 570): what it changes stands, no claim of
    safety; a tool that may not be run at all (denied) still reads its listing."""
    from atipkit.infer.generate import Budget, _subcommands

    listing = ParsedHelp(
        commands=[
            ParsedCommand("save", "Save images to a tar archive (streamed to STDOUT by default)"),
            ParsedCommand("rm", "Remove one or more images"),
        ]
    )
    true = shutil.which("true") or "/bin/true"

    def effects(real: str, clock: Budget) -> dict[str, str]:
        out = _subcommands(real, ("frob",), listing, 2, clock, [], None, None)
        return {name: kind(command.effects or atipkit.Effects()) for name, command in out.items()}

    assert effects(true, Budget(60, runs=0)) == {"save": "unknown", "rm": "destructive"}
    assert effects("", Budget(60, runs=0)) == {"save": "read-only", "rm": "destructive"}


@pytest.mark.parametrize(
    ("name", "purpose", "expected"),
    [
        ("buildid-list", "List the buildids in a perf.data file", "read-only"),
        ("buildid-cache", "", "writes"),  # no later word looks: `build` may still lead
        ("mkdir", "", "writes"),
    ],
)
def test_a_name_that_looks_after_a_compound_noun_writes_nothing(
    name: str, purpose: str, expected: str
) -> None:
    """Decision 671: perf's `buildid-list`, "List the buildids in a perf.data file", was
    said to write: its first word starts with `build`, as `mkdir` starts with `mk`. A
    first word that only starts with a verb of writing is a noun where a later word of
    the name looks."""
    assert kind(infer_effects(name, purpose)) == expected


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (
            "Remove first N entries from source file path names in executables and add "
            "PREFIX. This allows to display source code compiled on systems with different "
            "prefixes.",
            "read-only",
        ),
        ("Remove the entry from the file.", "destructive"),
        ("Delete the files from the directory.", "destructive"),
    ],
)
def test_a_removal_out_of_names_removes_no_stored_thing(option: str, expected: str) -> None:
    """Decision 672: perf's `annotate`, `report` and `top` were said destructive for
    `--prefix-strip`, "Remove first N entries from source file path names": the
    entries are pieces of the names the phrase after `from` ends with, not stored
    entries. Out of a file or a directory, a removal still destroys. And their purpose,
    "Read perf.data (created by perf record) and display ...", was said to write: a
    participle with its agent after it (`by`) says what something else did."""
    effects = infer_effects(
        "annotate",
        "Read perf.data (created by perf record) and display annotated code",
        [option],
        flags=[["--prefix", "--prefix-strip"]],
    )
    assert kind(effects) == expected


@pytest.mark.parametrize(
    ("name", "operands", "expected"),
    [
        ("output", ["global-options", "output", "name"], "read-only"),
        ("show", ["output"], "unknown"),  # another command's `output` is a destination
    ],
)
def test_the_commands_own_name_in_its_usage_is_no_operand(
    name: str, operands: list[str], expected: str
) -> None:
    """Decision 673: `terraform output`, "Show output values from your root module",
    was unknown: its usage line, `terraform [global options] output [options] [NAME]`,
    gave an operand `output` — the command's own name, read as where it writes. A
    command's own name is no operand."""
    effects = infer_effects(name, "Show output values from your root module", operands=operands)
    assert kind(effects) == expected


@pytest.mark.parametrize(
    ("purpose", "operands", "prose", "expected"),
    [
        ("Retrieve diagnostics data on a reporter.", [], "", "read-only"),
        ("Retrieve the archive keyring from a remote server.", [], "", "unknown"),
        (
            "Display the full path to an executable",
            ["command"],
            "Displays the full path to the executable that pyenv will invoke when you run "
            "the given command.",
            "read-only",
        ),
        ("Run an executable", ["command"], "Runs the given command.", "destructive"),
    ],
)
def test_retrieving_reads_and_what_the_user_runs_is_no_run(
    purpose: str, operands: list[str], prose: str, expected: str
) -> None:
    """Decision 674: devlink's `health diagnose`, "Retrieve diagnostics data on a
    reporter", was unknown: `retrieve` looks, unless its clause names the network (a
    fetch, no claim of safety). `pyenv which`, "Display the full path to an executable",
    was unknown for its help's "... will invoke when you run the given command": what
    the user runs, the command does not."""
    effects = infer_effects("frob", purpose, operands=operands, prose=prose)
    assert kind(effects) == expected


@pytest.mark.parametrize(
    ("purpose", "expected"),
    [
        ("Remove locally-stored credentials for a remote host", "destructive"),
        ("Revoke the API token", "destructive"),
        ("Rewrites all configuration files to a canonical format.", "destructive"),
        ("Rewrite the output lines", "unknown"),
    ],
)
def test_credentials_are_stored_and_rewriting_files_replaces_them(
    purpose: str, expected: str
) -> None:
    """Decision 675: `terraform logout`, "Remove locally-stored credentials", was
    unknown: credentials and tokens are stored things (rule 4 names tokens). `terraform
    fmt`, "Rewrites all Terraform configuration files to a canonical format", was said
    to write: rewriting stored files replaces what they held (rule 3's `sed -i`);
    rewriting printed lines destroys nothing."""
    assert kind(infer_effects("frob", purpose)) == expected


@pytest.mark.parametrize(
    ("name", "purpose", "expected"),
    [
        (
            "introspect",
            "Show interfaces, methods, properties and signals of the specified object.",
            "read-only",
        ),
        (
            "monitor",
            "Monitors files or directories for changes, such as creation deletion, "
            "content and attribute changes, and mount and unmount operations affecting "
            "the monitored locations.",
            "read-only",
        ),
        (
            "status",
            "Show information about the specified links: type, state, hardware and IP "
            "address, configured DNS servers, etc.",
            "read-only",
        ),
        (
            "table",
            "Outputs the current table for the device in a format that can be fed back in "
            "using the create or load commands.",
            "read-only",
        ),
        # a verb joined to the verb of looking, or one with an object of its own, acts
        ("frob", "Lists and removes stale files", "destructive"),
        ("frob", "Show status and kills the jobs", "destructive"),
        ("frob", "Show status and removes files", "destructive"),
        ("frob", "Displays the log, and deletes old files", "destructive"),
        ("frob", "Show status, and reboot", "destructive"),
        ("frob", "Print the status and restarts the daemon", "destructive"),
    ],
)
def test_the_objects_of_a_verb_of_looking_are_no_verbs(
    name: str, purpose: str, expected: str
) -> None:
    """Decision 751: busctl `introspect` was said destructive for "... and signals",
    gio `monitor` for "... mount and unmount operations", networkctl `status` said to
    write for "configured DNS servers", dmsetup `table` for "... using the create or
    load commands": a word after a comma, `and` or `or` in the
    sentence of a verb of looking, inflected otherwise than that verb and with no
    object of its own, is one more of its objects."""
    assert kind(infer_effects(name, purpose)) == expected


@pytest.mark.parametrize(
    ("name", "purpose", "prose", "expected"),
    [
        ("was-enabled", "", "", "read-only"),
        ("debian-installed", "", "", "read-only"),
        ("disk-shred", "", "", "destructive"),  # a verb ending in -ed, not inflected
        ("reset-failed", "", "", "destructive"),
        ("mark-installed", "", "", "destructive"),
        ("installed", "", "", "destructive"),
        ("more", "file perusal filter for crt viewing", "", "read-only"),
        ("frob", "file viewing and wiping tool", "", "destructive"),
        (
            "passwd",
            "Generation of hashed passwords.",
            "This command computes the hash of a password typed at run-time.",
            "read-only",
        ),
        ("genrsa", "Generation of RSA Private Key", "This command generates a key.", "writes"),
        ("frob", "Generation of keys", "", "writes"),
    ],
)
def test_names_of_states_gerunds_and_nominal_purposes(
    name: str, purpose: str, prose: str, expected: str
) -> None:
    """Decision 752: deb-systemd-helper's `was-enabled` and `debian-installed` name a
    state (a participle after words that are no verbs), not an act; the deny list made
    them destructive. more(1), "file perusal filter for crt viewing", has no verb: a
    gerund is read as the nouns of a purpose are. A purpose read by its nouns only
    ("Generation of hashed passwords", openssl `passwd`) yields to the verb of its
    page's description when that verb only looks."""
    assert kind(infer_effects(name, purpose, prose=prose)) == expected


@pytest.mark.parametrize(
    ("options", "flags", "expected"),
    [
        (["Stop when a given path disappears from the tree."], [["--remove-empty"]], "read-only"),
        (["Stop the processes."], [["--kill-stop"]], "unknown"),
        (["Stop when done and remove the files."], [["--remove"]], "destructive"),
        ([""], [["--remove"]], "destructive"),
    ],
)
def test_an_option_named_for_removal_that_says_when_the_run_stops_removes_nothing(
    options: list[str], flags: list[list[str]], expected: str
) -> None:
    """Decision 753: `git rev-list` and `git shortlog` were unknown for `--remove-empty`,
    "Stop when a given path disappears from the tree": an option named for removal whose
    text says when the command's own run stops, and names no removal, is harmless."""
    purpose = "Lists commit objects in reverse chronological order"
    assert kind(infer_effects("frob", purpose, options, flags=flags)) == expected


def test_a_value_generated_claims_no_safety() -> None:
    """Decision 754: reading "generate X", X no stored thing, as showing X made
    mcookie and `systemd-id128 new` read-only, and dbus-uuidgen too, whose `--ensure`
    creates the machine-id file in a later sentence of its text: not kept."""
    ensure = (
        "If a filename is not given, defaults to localstatedir/lib/dbus/machine-id. If "
        "this file exists then it will be validated. If the file does not exist, it will "
        "be created with a new uuid in it."
    )
    effects = infer_effects(
        "dbus-uuidgen", "Utility to generate UUIDs", [ensure], flags=[["--ensure"]]
    )
    assert kind(effects) != "read-only"


@pytest.mark.parametrize(
    ("name", "purpose", "expected"),
    [
        ("merge-base", "Find as good common ancestors as possible for a merge", "read-only"),
        ("patch-id", "Compute unique ID for a patch", "read-only"),
        ("merge-file", "Run a three-way file merge", "destructive"),
        ("merge-delete", "Show a merge", "destructive"),
        ("merge", "Show a merge", "destructive"),
        ("patch-apply", "Show a patch", "destructive"),
        ("purge-list", "List entries scheduled for a purge", "destructive"),
    ],
)
def test_a_names_verb_its_purpose_names_as_a_thing_is_a_noun(
    name: str, purpose: str, expected: str
) -> None:
    """Decision 757: `git merge-base` and `git patch-id` were destructive by their
    names' first words (`merge`, `patch`), though their purposes look and name that
    word as a thing ("for a merge", "for a patch"): the name is a noun compound."""
    assert kind(infer_effects(name, purpose)) == expected
