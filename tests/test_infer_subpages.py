"""Man pages as the whole of a tool's tree (issue 20): subcommand pages, multi-call
binaries, the budget that grows with the tree, the cached index, pages rendered together.

The machine's own pages and tools where they exist (git, ip, openssl, bzip2); small roff
pages and scripts written by the test for structure the machine lacks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import time
from pathlib import Path

import pytest

from atipkit import scan
from atipkit.infer import generate, manpage
from atipkit.infer.coverage import infer_shim
from atipkit.infer.generate import generate_shim
from atipkit.infer.manpage import (
    ManPages,
    _name_entries,
    _page_source,
    read_man_file,
    render,
    render_many,
)
from atipkit.infer.subpages import synopsis_commands, usage_forms
from atipkit.model import from_dict
from atipkit.registry.local import LocalRegistry
from atipkit.registry.shims import for_name
from atipkit.resolve import load_recorded, resolve_tool
from atipkit.trust.digest import sha256_file
from tests.helpers import directories_listed
from tests.test_scan_infer import isolate, logging_script, man_page, runs_of, shim_of


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolate(tmp_path, monkeypatch)


def machine_pages(monkeypatch: pytest.MonkeyPatch, *names: str) -> ManPages:
    """The machine's own pages (the `env` fixture points MANPATH at the test's), or a skip
    when one of `names` has none."""
    monkeypatch.delenv("MANPATH", raising=False)
    pages = ManPages.load()
    missing = [n for n in names if pages.find(n) is None or shutil.which(n.split("-")[0]) is None]
    if missing:
        pytest.skip(f"no page or tool here for {', '.join(missing)}")
    return pages


def page(tmp_path: Path, name: str, text: str, section: str = "1") -> None:
    directory = tmp_path / "man" / f"man{section}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.{section}").write_text(text)


def roff(name: str, what: str, synopsis: str, options: str = "") -> str:
    body = "".join(f".TP\n\\fB{flag}\\fR\n{text}\n" for flag, text in _options(options))
    return (
        f".TH {name.upper()} 1\n.SH NAME\n{name} \\- {what}\n.SH SYNOPSIS\n"
        + "".join(f"{line}\n.br\n" for line in synopsis.split("\n"))
        + (f".SH OPTIONS\n{body}" if body else "")
    )


def _options(spec: str) -> list[tuple[str, str]]:
    return [(f.replace("-", "\\-"), f"what {f} does") for f in spec.split()]


# -- 1. subcommands documented in their own pages -------------------------------------------


def test_a_denied_tool_gets_its_subcommands_and_theirs_from_their_pages(monkeypatch):
    """`ip` is denied: never run. `ip-address(8)` gives `ip address` its examples and, in
    its SYNOPSIS, the subcommands below it (its `-dynamic`, `-primary` are values of
    `show`'s filter, not options); `ip-neighbour(8)` says `ip neigh`."""
    machine_pages(monkeypatch, "ip", "ip-address", "ip-neighbour", "ip-link")
    shim = generate_shim("ip")
    assert shim.extensions["_generation"]["method"] == "man-page"
    address = shim.commands["address"]
    assert any(e.startswith("ip address show") for e in address.examples)  # from its page
    assert {"add", "del", "show", "flush"} <= set(address.commands)
    assert "address" not in [a.name for a in address.arguments]  # its name, not an argument
    assert {"add", "delete", "set", "show"} <= set(shim.commands["link"].commands)
    assert {"add", "show", "flush"} <= set(shim.commands["neighbour"].commands)


def test_git_commands_come_from_their_pages_running_nothing(monkeypatch):
    """The scan's way (`infer_shim`): git's page and its 150 command pages are enough,
    so git is never asked; every command with a page has its options, and the commands
    below them come from the pages' SYNOPSIS (`git remote add`, `git stash drop`)."""
    pages = machine_pages(monkeypatch, "git", "git-commit", "git-remote", "git-stash")
    runs = count_runs(monkeypatch)
    git = shutil.which("git")
    assert git is not None
    shim = infer_shim(os.path.realpath(git), "git", sha256_file(os.path.realpath(git)))
    assert runs == []
    assert shim.extensions["_generation"]["method"] == "man-page"
    assert "incomplete" not in shim.extensions["_generation"]
    commit = {f for o in shim.commands["commit"].options for f in o.flags}
    assert {"--amend", "-m", "--message"} <= commit
    assert {"add", "rename", "remove", "set-url"} <= set(shim.commands["remote"].commands)
    assert {"list", "show", "drop", "pop", "apply", "push"} <= set(shim.commands["stash"].commands)
    documented = [
        word
        for word in pages.prefixed("git-")
        if word in shim.commands and read_man_file(pages.prefixed("git-")[word], "git")
    ]
    with_options = [w for w in documented if shim.commands[w].options]
    assert len(with_options) >= 110, len(with_options)


def test_openssl_commands_are_read_from_their_own_pages(monkeypatch):
    """openssl's page lists its commands, `openssl-x509(1ssl)` documents one: the scan's
    way reads it, running nothing, and `atip gen` prefers it to `openssl x509 --help`."""
    machine_pages(monkeypatch, "openssl", "openssl-x509", "openssl-req")
    runs = count_runs(monkeypatch)
    openssl = os.path.realpath(shutil.which("openssl") or "")
    shim = infer_shim(openssl, "openssl", sha256_file(openssl))
    assert runs == []
    x509 = {f for o in shim.commands["x509"].options for f in o.flags}
    assert {"-in", "-out", "-req", "-days"} <= x509
    assert "format-options" not in shim.commands  # `openssl command [ options ... ]`: no command
    generated = generate_shim("openssl", budget=30)
    assert ["x509", "--help"] not in runs
    assert x509 == {f for o in generated.commands["x509"].options for f in o.flags}


def count_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The arguments of every run of a tool `generate_shim` makes from now on."""
    from atipkit.infer import generate

    runs: list[list[str]] = []
    real_run = generate._run

    def counted(real, args, clock, extra=None):
        runs.append(list(args))
        return real_run(real, args, clock, extra)

    monkeypatch.setattr(generate, "_run", counted)
    return runs


def test_a_page_the_listing_omits_is_a_subcommand_when_its_synopsis_says_so(tmp_path, env):
    """`frob` lists `fetch`; `frob-purge(1)` (`frob purge ...`) is a subcommand too;
    `frob-daemon(1)` (`frob-daemon [options]`) is a program of its own, `frob-format(1)`
    (`frob fetch ... --format`) a part of `frob fetch`."""
    bin_dir = tmp_path / "bin"
    help_text = "Usage: frob [OPTIONS] <command>\n\nFrob.\n\nCommands:\n  fetch    Fetch things\n"
    logging_script(bin_dir, "frob", help_text)
    page(tmp_path, "frob-fetch", roff("frob-fetch", "fetch things", "frob fetch [-a] URL", "-a -b"))
    page(tmp_path, "frob-purge", roff("frob-purge", "purge things", "frob purge [-f]", "-f"))
    page(tmp_path, "frob-daemon", roff("frob-daemon", "serve", "frob-daemon [-d]", "-d"))
    page(tmp_path, "frob-format", roff("frob-format", "formats", "frob fetch --format=F", "-x"))
    shim = generate_shim(str(bin_dir / "frob"))
    assert set(shim.commands) == {"fetch", "purge"}
    assert [o.flags for o in shim.commands["purge"].options] == [["-f"]]
    assert shim.commands["purge"].description == "purge things"
    # a subcommand whose page is enough is not asked: its page is richer than its help
    assert not [r for r in runs_of(bin_dir, "frob") if r.startswith(("fetch", "purge"))]


def test_a_page_that_says_it_is_a_synonym_of_a_listed_command_adds_none(tmp_path, env):
    """git-stage(1): `git stage ...`, "This is a synonym for git-add(1)": `stage` is `add`,
    listed already. A synonym of a page of no listed command is still a command."""
    bin_dir = tmp_path / "bin"
    help_text = "Usage: frob [OPTIONS] <command>\n\nFrob.\n\nCommands:\n  fetch    Fetch things\n"
    logging_script(bin_dir, "frob", help_text)
    synonym = ".SH DESCRIPTION\nThis is a synonym for {}(1). Please refer to that page.\n"
    page(tmp_path, "frob-fetch", roff("frob-fetch", "fetch things", "frob fetch [-a] URL", "-a"))
    get = roff("frob-get", "fetch things", "frob get [-a] URL") + synonym.format("frob-fetch")
    page(tmp_path, "frob-get", get)
    drop = roff("frob-drop", "purge things", "frob drop [-f]") + synonym.format("frob-purge")
    page(tmp_path, "frob-drop", drop)
    shim = generate_shim(str(bin_dir / "frob"))
    assert set(shim.commands) == {"fetch", "drop"}


def test_listed_names_find_their_page_by_its_synopsis_or_as_an_abbreviation(tmp_path, env):
    bin_dir = tmp_path / "bin"
    help_text = (
        "Usage: netx [ OPTIONS ] OBJECT { COMMAND | help }\n\nNet things.\n\n"
        "Commands:\n  addr     addresses\n  neigh    neighbours\n  tcpm     metrics\n"
    )
    logging_script(bin_dir, "netx", help_text)
    page(tmp_path, "netx-address", roff("netx-address", "addresses", "netx address { add | del }"))
    page(tmp_path, "netx-neighbour", roff("netx-neighbour", "neighbours", "netx neigh show"))
    page(tmp_path, "netx-tcp_metrics", roff("netx-tcp_metrics", "m", "netx tcp_metrics/tcpm show"))
    shim = generate_shim(str(bin_dir / "netx"))
    assert set(shim.commands) == {"addr", "neigh", "tcpm"}
    assert set(shim.commands["addr"].commands) == {"add", "del"}  # `addr` abbreviates it
    assert set(shim.commands["neigh"].commands) == {"show"}  # the page says `netx neigh`
    assert set(shim.commands["tcpm"].commands) == {"show"}  # one of two spellings


def test_usage_forms_name_the_commands_below_a_subcommand():
    text = (
        "usage: git remote [-v | --verbose]\n"
        "   or: git remote add [-t <branch>] <name> <url>\n"
        "   or: git remote [-v | --verbose] show [-n] <name>\n"
        "   or: git remote prune [-n | --dry-run] <name>\n\n"
        "    -v, --verbose  be verbose\n"
    )
    found = [c.name for c in synopsis_commands(usage_forms(text), ("git", "remote"))]
    assert found == ["add", "prune", "show"]
    # one lower-case word reached only past options is a placeholder, not a command
    lone = "usage: openssl rand [-help] [-out file] num\n"
    assert synopsis_commands(usage_forms(lone), ("openssl", "rand")) == []


PIP_CONFIG = """
Usage:
  pip config [<file-option>] list
  pip config [<file-option>] [--editor <editor-path>] edit

  pip config [<file-option>] get command.option
  pip config [<file-option>] unset command.option


Description:
  Manage local and global configuration.
"""


def test_a_group_of_names_after_a_subcommand_in_a_synopsis_names_its_commands(tmp_path, env):
    """A tool's own page sets its commands' commands in its SYNOPSIS as a group after each
    (`qdisc [ add | change | delete ] dev DEV`, `qdisc { show | list }`, past an optional
    `[ FORMAT ]`); a bracketed group whose choices take words (`[ parent ID | root ]`) is
    an operand's. The shim is made from the page alone, running nothing."""
    synopsis = (
        "shq [ OPTIONS ] qdisc [ add | change | delete ] dev DEV [ parent ID | root ]\n"
        "shq [ OPTIONS ] [ FORMAT ] qdisc { show | list } [ dev DEV ]\n"
        "shq [ OPTIONS ] class [ add | delete ] dev DEV [ parent ID | root ]\n"
        "shq [ OPTIONS ] monitor [ parent ID | root ]"
    )
    page(tmp_path, "shq", roff("shq", "show and manipulate queues", synopsis, "-s -d"))
    found = ManPages([tmp_path / "man"]).find("shq")
    assert found is not None
    read = read_man_file(found, "shq")
    assert read is not None
    below = {c.name: c.commands for c in read.help.commands}
    assert below == {
        "qdisc": ["add", "change", "delete", "show", "list"],
        "class": ["add", "delete"],
        "monitor": [],
    }
    shim = generate.shim_from_page("shq", "sha256:" + "0" * 64, read.help)
    assert set(shim.commands["qdisc"].commands) == {"add", "change", "delete", "show", "list"}
    assert set(shim.commands["class"].commands) == {"add", "delete"}
    assert not shim.commands["monitor"].commands
    # the same group in a help's usage form names them too
    usage = "Usage: shq qdisc [ add | del | show ] dev STRING\n"
    assert [c.name for c in synopsis_commands(usage, ("shq", "qdisc"))] == ["add", "del", "show"]


def test_usage_forms_in_groups_past_a_place_for_options():
    """pip sets its forms in groups, a blank line between them, each behind a
    `[<file-option>]`: all are forms, and that group is a place for options."""
    found = synopsis_commands(usage_forms(PIP_CONFIG), ("pip", "config"))
    assert [c.name for c in found] == ["list", "edit", "get", "unset"]
    # prose after a blank line is no form, even when it starts with the program's name
    prose = "Usage: tool [OPTIONS] <command>\n\n  tool is a program\n  tool runs it\n"
    assert usage_forms(prose) == "Usage: tool [OPTIONS] <command>"


def test_a_subcommands_help_names_the_commands_below_it(tmp_path):
    """`pip cache --help` lists `pip cache dir`, `pip cache purge`, ... as usage forms."""
    tool = tmp_path / "pkg"
    tool.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = cache ]; then\n'
        "  printf 'Usage:\\n  pkg cache dir\\n  pkg cache purge\\n\\n"
        "Options:\\n  -q, --quiet  less\\n'\n"
        "else\n"
        "  printf 'Usage: pkg <command>\\n\\nCommands:\\n  cache    Inspect the cache\\n'\n"
        "fi\n"
    )
    tool.chmod(0o755)
    shim = generate_shim(str(tool), man=False)
    assert set(shim.commands["cache"].commands) == {"dir", "purge"}


def test_pip_subcommands_get_their_options(monkeypatch):
    """pip is run (not denied): `pip install --help` gives `pip install` its options."""
    if shutil.which("pip") is None:
        pytest.skip("no pip here")
    shim = generate_shim("pip", budget=60)
    install = {f for o in shim.commands["install"].options for f in o.flags}
    assert {"-r", "--requirement", "-U", "--upgrade"} <= install


# -- 2. a budget that grows with the tree: tests/test_infer_budget.py ----------------------


# -- 3. multi-call binaries: every name, its own page ---------------------------------------

MULTI = """.TH MULTI 1
.SH NAME
multi, unmulti \\- pack and unpack things
.br
multicat \\- show packed things
.SH SYNOPSIS
.B multi
[\\-k] FILE
.SH OPTIONS
.TP
\\fB\\-k\\fR, \\fB\\-\\-keep\\fR
keep the input
"""


def test_every_name_of_a_binary_is_recorded_and_described_by_its_page(tmp_path, env, monkeypatch):
    """One binary under four names: two hard links whose pages redirect to the first's,
    one of which has a NAME line of its own, and a link whose page is its own. The other
    names' pages are rendered together, by one run of groff."""
    batches: list[int] = []
    real_render_many = manpage.render_many

    def recording(sources, **kwargs):
        batches.append(len(sources))
        return real_render_many(sources, **kwargs)

    monkeypatch.setattr(manpage, "render_many", recording)
    bin_dir = tmp_path / "bin"
    multi = logging_script(bin_dir, "multi")
    os.link(multi, bin_dir / "unmulti")
    os.link(multi, bin_dir / "multicat")
    (bin_dir / "mview").symlink_to("multi")
    page(tmp_path, "multi", MULTI)
    page(tmp_path, "unmulti", ".so man1/multi.1\n")
    page(tmp_path, "multicat", ".so man1/multi.1\n")
    page(tmp_path, "mview", roff("mview", "look at packed things", "mview [-r] FILE", "-r"))
    report = scan([str(bin_dir)], infer=True)
    assert report.inference is not None
    assert report.inference.inferred == 1
    assert 3 in batches  # unmulti's, multicat's and mview's pages
    tools = LocalRegistry().read().tools
    assert set(tools) == {"multi", "unmulti", "multicat", "mview"}
    assert len({e.hash for e in tools.values()}) == 1
    shims = list((tmp_path / "data" / "agent-tools" / "shims" / "sha256").iterdir())
    assert len(shims) == 1  # content-addressed: one file for the binary
    described = {n: resolve_tool(n).tool for n in tools}
    assert {n: t.description for n, t in described.items()} == {
        "multi": "pack and unpack things",
        "unmulti": "pack and unpack things",
        "multicat": "show packed things",
        "mview": "look at packed things",
    }
    assert {n: t.name for n, t in described.items()} == {n: n for n in tools}
    assert described["multicat"].commands[""].description == "show packed things"
    assert [o.flags for o in described["mview"].commands[""].options] == [["-r"]]
    assert "_names" not in described["multi"].extensions
    # search reads the registry as `load_recorded` does: each name its own document
    assert load_recorded(LocalRegistry(), "multicat", tools["multicat"]).description == (
        "show packed things"
    )
    assert json.loads(shims[0].read_text())["name"] == "multi"


def test_bzip2_names_resolve_to_what_their_page_says_of_them(tmp_path, env, monkeypatch):
    machine_pages(monkeypatch, "bzip2", "bzcat", "bunzip2")
    directory = os.path.dirname(os.path.realpath(shutil.which("bzcat") or ""))
    scan([directory], only=["bzip2", "bunzip2", "bzcat"], infer=True)
    tools = LocalRegistry().read().tools
    assert {"bzip2", "bunzip2", "bzcat"} <= set(tools)
    assert resolve_tool("bzcat").tool.description == "decompresses files to stdout"
    assert resolve_tool("bunzip2").tool.description.startswith("a block-sorting file compressor")


def test_a_names_document_of_no_binary_is_left_out():
    """A `_names` entry must describe the shim's binary: one that names none (its
    `binary` UNSET, never None) is left out and said so, not read as the same binary."""
    described = {"atip": {"version": "0.6"}, "version": "1", "description": "d"}
    binary = {"hash": "sha256:" + "a" * 64, "name": "multi"}
    shim = from_dict(
        {
            **described,
            "name": "multi",
            "binary": binary,
            "_names": {"mv": {**described, "name": "mv"}},
        }
    )
    origins: dict[str, str] = {}
    found = for_name(shim, "mv", origins)
    assert (found.name, found.binary) == ("multi", shim.binary)
    assert "_names" not in found.extensions
    assert origins == {"rejected:_names.mv": "another binary's"}
    same = from_dict({**described, "name": "multi", "_names": {"mv": {**described, "name": "mv"}}})
    assert for_name(same, "mv", origins).name == "multi"  # neither names one: not the same


MULTI_CALL = """#!/bin/sh
[ "$1" = --agent ] && exit 1
case "$(basename "$0")" in
  pack) printf 'Usage: pack [OPTIONS] COMMAND\\n\\nCommands:\\n'
        printf '  build  Compile it\\n  test   Run the tests\\n' ;;
  *) printf 'Usage: hub [OPTIONS] COMMAND\\n\\nCommands:\\n'
     printf '  toolchain  Manage toolchains\\n  default    Set the default\\n' ;;
esac
"""


def _multi_call(tmp_path: Path) -> tuple[Path, Path]:
    """A directory with `hub` (`MULTI_CALL`) and `pack`, a link to it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    hub = bin_dir / "hub"
    hub.write_text(MULTI_CALL)
    hub.chmod(0o755)
    (bin_dir / "pack").symlink_to("hub")
    return bin_dir, hub


def test_a_name_of_a_multi_call_binary_is_asked_as_that_name(tmp_path, env):
    """rustup's `cargo` is a link to rustup, which answers as the name it is run by: a
    tool `atip show --infer` infers (`resolve_tool`) is run by the path it was found by,
    not by its real file, whose help is another program's."""
    bin_dir, hub = _multi_call(tmp_path)
    inferred = infer_shim(str(bin_dir / "pack"), "pack", sha256_file(hub))
    assert sorted(c for c in inferred.commands if c) == ["build", "test"]
    assert inferred.binary is not None
    assert inferred.binary.hash == sha256_file(hub)
    resolved = resolve_tool(str(bin_dir / "pack"), allow_inferred=True).tool
    assert sorted(c for c in resolved.commands if c) == ["build", "test"]
    own = infer_shim(str(hub), "hub", sha256_file(hub))
    assert sorted(c for c in own.commands if c) == ["default", "toolchain"]


def test_a_sweep_asks_each_name_of_a_binary_without_a_page_by_that_name(tmp_path, env):
    """No page says what `hub` is, so its help alone does, and `pack`, a link to it,
    answers otherwise when run as `pack`: the sweep records each its own document."""
    bin_dir, _hub = _multi_call(tmp_path)
    (bin_dir / "hub2").symlink_to("hub")  # answers as hub does: no document of its own
    scan([str(bin_dir)], infer=True)
    commands = {n: sorted(c for c in resolve_tool(n).tool.commands if c) for n in ("hub", "pack")}
    assert commands == {"hub": ["default", "toolchain"], "pack": ["build", "test"]}
    (shim,) = (tmp_path / "data" / "agent-tools" / "shims" / "sha256").iterdir()
    assert set(json.loads(shim.read_text())["_names"]) == {"pack"}


def test_a_binary_is_known_by_its_own_file_name_not_by_a_link_to_it(tmp_path, env):
    """`halt` links to `systemctl`: the binary is systemctl's, halt one of its names."""
    real_dir, link_dir = tmp_path / "bin", tmp_path / "sbin"
    tool = logging_script(real_dir, "ctl")
    link_dir.mkdir(mode=0o755)
    (link_dir / "stop").symlink_to(tool)
    man_page(tmp_path, "ctl")
    scan([str(link_dir), str(real_dir)], infer=True)  # the link's directory first
    assert shim_of(tool)["name"] == "ctl"
    assert set(LocalRegistry().read().tools) == {"ctl", "stop"}


# -- 4. the index of pages, cached; pages rendered together ---------------------------------


def test_the_index_of_pages_is_cached_until_a_section_directory_changes(tmp_path, env, monkeypatch):
    man_page(tmp_path, "frob")
    assert ManPages.load().find("frob") is not None
    listed = directories_listed(monkeypatch, "listdir")
    again = ManPages.load()
    assert again.find("frob") is not None
    assert listed == []  # from the cache
    time.sleep(0.01)
    man_page(tmp_path, "frob2")  # a page added: its directory's mtime changes
    assert ManPages.load().find("frob2") is not None
    assert listed
    cache = tmp_path / "cache" / "agent-tools" / "manpages.json"
    data = json.loads(cache.read_text())
    data["pages"]["frob"] = [0, "../../../etc/passwd"]  # a cache naming another file
    cache.write_text(json.dumps(data))
    found = ManPages.load().find("frob")
    assert found is not None
    assert found.name == "frob.1"


def test_a_hostile_page_index_is_listed_again_never_waited_on(tmp_path, env, monkeypatch):
    """`manpages.json` naming a file with a NUL, too large, or a FIFO put in its place
    (whose reading would wait for a writer forever): the pages are listed again and the
    cache rewritten."""
    man_page(tmp_path, "frob")
    assert ManPages.load().find("frob") is not None
    cache = tmp_path / "cache" / "agent-tools" / "manpages.json"
    good = cache.read_bytes()
    listed = directories_listed(monkeypatch, "listdir")

    def relisted() -> bool:
        listed.clear()
        assert ManPages.load().find("frob").name == "frob.1"
        return bool(listed)

    assert not relisted()
    data = json.loads(good)
    data["pages"]["frob"] = [0, "frob.1\u0000"]
    cache.write_text(json.dumps(data))
    assert relisted()
    monkeypatch.setattr(manpage, "MAX_DOCUMENT_BYTES", len(good) - 1)
    assert relisted()
    monkeypatch.setattr(manpage, "MAX_DOCUMENT_BYTES", len(good))
    assert not relisted()
    cache.unlink()
    os.mkfifo(cache)
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("waited on a FIFO"))
    signal.alarm(10)
    try:
        assert relisted()
    finally:
        signal.alarm(0)
    assert cache.is_file()
    assert not relisted()


def test_a_name_line_of_thousands_of_names_is_read_in_linear_time():
    """A hostile NAME section: 10 000 names on one line, continued over 3 000 lines.
    Each name's description was extended line by line (15 s and 90 M characters here);
    the names of one entry now share one description, joined once."""
    names = ",".join(f"n{i}" for i in range(10_000))
    section = f"{names} - what\n" + "more\n" * 3_000 + "\nfooter - not an entry\n"
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    entries = _name_entries(section)
    assert time.thread_time() - start < 3
    assert len(entries) == 10_000
    assert entries["n9999"] == "what" + " more" * 3_000
    assert entries["n0"] is entries["n9999"]
    assert "footer" not in entries


HOSTILE = {
    "swallows": ".TH SW 1\n.SH NAME\nsw \\- an unclosed ignore\n.ig\nall that follows\n",
    "translates": ".TH TR 1\n.tr |X\n.SH NAME\ntr \\- a | translated\n",
    "junk": "\x00\x01\x02 not roff at all \xff",
}


def test_pages_rendered_together_read_as_they_do_alone(monkeypatch):
    pages = machine_pages(monkeypatch, "ls", "git-add", "bzip2")
    sources = [
        s
        for s in [
            _page_source(p)
            for p in (pages.find("ls"), pages.find("git-add"), pages.find("bzip2"))
            if p
        ]
        if s
    ]
    hostile = list(HOSTILE.values())
    mixed = [sources[0], hostile[1], sources[1], hostile[0], sources[2], hostile[2], sources[0]]
    together = render_many(mixed)
    alone = [render(s) for s in mixed]
    for one, other in zip(together, alone, strict=True):
        assert _body(one) == _body(other)
    assert "| translated" in together[-1] or "ls - list directory contents" in together[-1]


LEAKING = {
    "spaced": ".ls 2",
    "centred": ".ce 100",
    "right-aligned": ".rj 100",
    "centred by a macro": ".de ZZ\n.ce 100\n..\n.ZZ",
    "narrow": ".nr LL 30n",
    "narrow by escape": "\\R'LL 30n'",
    "indented": ".do nr IN 30n",
    "unregistered": ".rr LL",
    "dashless": ".rchar \\-",
    "blank-line macro": ".de ZZ\n.ce 100\n..\n.blm ZZ",
    "translating by .do": ".do tr eX",
    "translating by another name": ".als QQ tr\n.QQ eX",
    "justifying by a new .ad": ".de ad\n.atipkit-ad b\n..",
    "justifying by the old .ad": ".rn ad zz\n.rn atipkit-ad ad",
}


def test_a_page_that_leaves_state_set_spoils_not_the_next_in_its_batch():
    """Centring, spacing, the line length `.TH` reads: what a page leaves set would lay
    out the next page of its batch otherwise (options read as prose, or not at all)."""
    wide = "-v " + " ".join(f"--option-{n}" for n in range(6))
    normal = roff("frob", "frobnicate " + "and more words " * 8, "frob [-v] FILE", wide)
    prose = " ".join(f"word{n} of a paragraph long enough to fill lines" for n in range(12))
    normal = normal.replace(".SH OPTIONS", f".SH DESCRIPTION\n{prose}\n.SH OPTIONS")
    for what, request in LEAKING.items():
        hostile = f".TH A 1\n.SH NAME\na \\- a page {what}\n{request}\n"
        together = render_many([hostile, normal])
        assert _body(together[1]) == _body(render(normal)), what


def test_a_page_that_justifies_again_reads_alike_in_a_batch_and_alone():
    """bash(1) says `.na` then `.ad`, which turned justification back on: its padding
    then depended on the lines set before it, so after base32's page in a batch bash read
    a padded `-0` as an option (decision 770). Every `.ad` now adjusts left: the page
    reads the same after any other, and its prose keeps single spaces."""
    prose = " ".join(f"word{n} of a paragraph long enough to fill lines" for n in range(12))
    justifying = roff("frob", "frobnicate", "frob [-v] FILE", "-v").replace(
        ".SH OPTIONS", f".SH DESCRIPTION\n.na\nragged\n.ad\n{prose}\n.ad b\n{prose}\n.SH OPTIONS"
    )
    before = [roff("a", "a page " + "of many words " * n, "a FILE") for n in range(1, 4)]
    alone = _body(render(justifying))
    for other in before:
        assert _body(render_many([other, justifying])[1]) == alone
    prose_lines = [line.strip() for line in alone if "word" in line]
    assert len(prose_lines) > 10
    assert not any(re.search(r"\w  +\w", line) for line in prose_lines), prose_lines


def _body(text: str) -> list[str]:
    """A rendered page without its header, footer and blank lines: what a page rendered
    in a batch may lose (its footer) or gain (blank lines). The footer ends as the header
    does (`LS(1)`)."""
    lines = [line.rstrip() for line in text.split("\n") if line.strip()]
    if not lines:
        return lines
    title = lines[0].split()[-1]
    return [line for line in lines[1:] if not line.endswith(title)]


# -- hostile pages ----------------------------------------------------------------------------


def test_a_page_that_never_ends_costs_its_timeout_and_spoils_no_other():
    """A page that loops forever in a batch: the batch runs out of time and its pages are
    rendered one by one, the looping one to its own timeout; the others read as alone."""
    normal = roff("frob", "frobnicate", "frob [-v] FILE", "-v -q")
    looping = ".TH LOOP 1\n.SH NAME\nloop \\- forever\n.while 1 .nop\n"
    selfish = ".TH SELF 1\n.SH NAME\nself \\- includes itself\n.so man1/self.1\n"
    start = time.monotonic()
    texts = render_many([normal, looping, normal, selfish], timeout=2.0)
    assert time.monotonic() - start < 15
    assert texts[1] == ""
    assert "frobnicate" in texts[0]
    assert _body(texts[0]) == _body(texts[2]) == _body(render(normal))


def test_a_synopsis_of_thousands_of_forms_names_a_bounded_number_of_commands(tmp_path, env):
    forms = "\n".join(f"huge sub word{n} [-x]" for n in range(3000))
    bin_dir = tmp_path / "bin"
    help_text = "Usage: huge <command>\n\nHuge.\n\nCommands:\n  sub    A subcommand\n"
    logging_script(bin_dir, "huge", help_text)
    page(tmp_path, "huge-sub", roff("huge-sub", "a subcommand", forms, "-x"))
    start = time.monotonic()
    shim = generate_shim(str(bin_dir / "huge"), budget=30)
    assert time.monotonic() - start < 30
    assert len(shim.commands["sub"].commands) == 256


def test_a_page_whose_synopsis_names_another_pages_command_adds_none(tmp_path, env):
    """perf-script-perl(1) says `perf script [-s [Perl]:script[.pl]]`: `script` is a
    shorter start of `script-perl`, but `script` has its page, perf-script(1), of which
    this one is a part; no command `script-perl` (decision 558). A shortened name with no
    page of its own still finds its page (`addr` for netx-address, above)."""
    bin_dir = tmp_path / "bin"
    help_text = "Usage: frob [OPTIONS] <command>\n\nFrob.\n\nCommands:\n  script   Run scripts\n"
    logging_script(bin_dir, "frob", help_text)
    page(tmp_path, "frob-script", roff("frob-script", "run scripts", "frob script [-s x]", "-s"))
    perl = roff("frob-script-perl", "perl scripts", "frob script [-s [Perl]:script[.pl] ]")
    page(tmp_path, "frob-script-perl", perl)
    page(tmp_path, "frob-record", roff("frob-record", "record", "frob record [-a] FILE", "-a"))
    shim = generate_shim(str(bin_dir / "frob"))
    assert set(shim.commands) == {"script", "record"}


def test_a_program_the_page_lists_among_its_commands_is_not_a_command(tmp_path, env):
    """git(1) lists `gitk(1)` and `scalar(1)` among its porcelain beside `git-add(1)`, and
    `git help -a` lists `gitk`: a page not named `PROGRAM-NAME` is a program of its own,
    not a command, whatever the help says (decision 559)."""
    bin_dir = tmp_path / "bin"
    help_text = (
        "Usage: frob <command> [<args>]\n\nFrob.\n\nCommands:\n"
        "  add      Add things\n  frobk    The frob browser\n"
    )
    logging_script(bin_dir, "frob", help_text)
    listing = "".join(
        f".TP\n\\fB{name}\\fR(1)\n{what}\n"
        for name, what in [("frob-add", "Add things."), ("frobk", "The frob browser.")]
    )
    main = roff("frob", "frob things", "frob [--version] <command> [<args>]")
    page(tmp_path, "frob", main + ".SH COMMANDS\n" + listing)
    shim = generate_shim(str(bin_dir / "frob"))
    assert set(shim.commands) == {"add"}


def test_a_subcommand_pages_synopsis_broken_inside_a_name_reads_it_whole():
    """groff breaks a long SYNOPSIS line inside a hyphenated name (`show-` /
    `branch`): the name is one word, not `show-` and a word `branch` (decision 683)."""
    text = "git stash show-\n    branch [<options>]\ngit stash drop [-q]"
    assert [c.name for c in synopsis_commands(text, ("git", "stash"))] == ["show-branch", "drop"]
