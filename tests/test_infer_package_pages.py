"""Pages a program's package ships beside it (`ManPages.beside`, `package_roots`).

npm's 98 pages are in /usr/lib/node_modules/npm/man, beside npm-cli.js, which
`/usr/bin/npm` links to: `man npm` finds none of them. The same rule — `man`'s for a PATH
directory, applied where the program's links lead — finds a package's pages in a fake
prefix built here, without npm; and not when the link loops, the package is huge, or a
page leads out of it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from atipkit import scan
from atipkit.infer import manpage
from atipkit.infer.generate import CEILING, generate_shim
from atipkit.infer.manpage import ManPages, package_roots, read_man_file
from tests.helpers import STARTUP, directories_listed
from tests.test_scan_infer import isolate, logging_script, runs_of, shim_of

# npm's layout, in roff: the parts of the page are sub-headings of NAME
TOOL_PAGE = """.TH "FROB" "1" "May 2024" "frobkit 2.0.1" ""
.SH "NAME"
\\fBfrob\\fR - frobnicate packages
.SS "Synopsis"
.P
.RS 2
.nf
frob <command>
.fi
.RE
.SS "Description"
.P
Run \\fBfrob help\\fR for the commands.
"""

SUB_PAGE = """.TH "FROB-TWIST" "1" "May 2024" "frobkit 2.0.1" ""
.SH "NAME"
\\fBfrob-twist\\fR - Twist a package
.SS "Synopsis"
.P
.RS 2
.nf
frob twist [-x] <package>
.fi
.RE
.SS "Options"
.TP
\\fB\\-x\\fR, \\fB\\-\\-extra\\fR
twist it further
"""

HELP = """frob: frobnicate packages

Run frob help for more.
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolate(tmp_path, monkeypatch)


def package(tmp_path: Path) -> tuple[Path, Path]:
    """A prefix `opt/frobkit` with `bin/frob` and its pages in `share/man/man1`, and a
    PATH directory `bin` whose `frob` links to it: (the link, the prefix)."""
    prefix = tmp_path / "opt" / "frobkit"
    tool = logging_script(prefix / "bin", "frob", HELP)
    pages = prefix / "share" / "man" / "man1"
    pages.mkdir(parents=True)
    (pages / "frob.1").write_text(TOOL_PAGE)
    (pages / "frob-twist.1").write_text(SUB_PAGE)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "frob").symlink_to(os.path.relpath(tool, bin_dir))
    return bin_dir / "frob", prefix


def test_a_package_s_pages_are_found_where_its_link_leads(tmp_path, env):
    link, prefix = package(tmp_path)
    assert ManPages.load().find("frob") is None  # not on the manpath: `man` finds none
    assert package_roots(link) == [prefix.resolve() / "share" / "man"]
    pages = ManPages.load().beside(link)
    assert pages.find("frob") == prefix.resolve() / "share/man/man1/frob.1"
    assert set(pages.prefixed("frob-")) == {"twist"}


def test_gen_reads_a_package_s_pages_and_the_subcommands_they_document(tmp_path, env):
    """The tool's help names no place for a command; the page `frob-twist(1)` says
    `frob twist ...` in its Synopsis, a sub-heading as npm sets it: `twist` is a
    command, read from its page."""
    link, _ = package(tmp_path)
    tool = generate_shim(str(link))
    assert tool.description == "frobnicate packages"
    assert set(tool.commands) == {"twist"}
    twist = tool.commands["twist"]
    assert twist.description == "Twist a package"
    assert {f for o in twist.options for f in o.flags} == {"-x", "--extra"}


def test_the_scan_reads_a_package_s_pages(tmp_path, env):
    link, prefix = package(tmp_path)
    scan([str(link.parent)], infer=True)
    shim = shim_of(prefix / "bin" / "frob")
    assert shim["description"] == "frobnicate packages"
    assert "twist" in shim["commands"]
    assert "twist --help" not in runs_of(prefix / "bin", "frob")  # its page was enough


def test_the_synopsis_may_be_a_sub_heading(tmp_path):
    path = tmp_path / "frob-twist.1"
    path.write_text(SUB_PAGE)
    page = read_man_file(path, "frob")
    assert page is not None
    assert page.synopsis.strip() == "frob twist [-x] <package>"
    assert page.help.usage == "frob twist [-x] <package>"


def test_package_listings_are_cached_with_the_page_index(tmp_path, env, monkeypatch):
    link, prefix = package(tmp_path)
    assert ManPages.load().beside(link).find("frob") is not None
    cache = json.loads((tmp_path / "cache" / "agent-tools" / "manpages.json").read_text())
    section = str(prefix.resolve() / "share/man/man1")
    assert sorted(cache["packages"][section][1]) == ["frob-twist.1", "frob.1"]
    listed = directories_listed(monkeypatch, "scandir")
    assert ManPages.load().beside(link).find("frob-twist") is not None
    assert listed == []  # from the cache
    time.sleep(0.01)
    (prefix / "share/man/man1/frob-bend.1").write_text(SUB_PAGE.replace("twist", "bend"))
    assert ManPages.load().beside(link).find("frob-bend") is not None
    assert listed == [section]


def test_a_link_that_loops_or_leads_nowhere_has_no_package(tmp_path, env):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nothing" / "bin" / "x")
    pages = ManPages.load()
    for path in (loop, dangling):
        assert package_roots(path) == []
        assert pages.beside(path) is pages


def test_a_page_leading_out_of_the_package_is_not_read(tmp_path, env):
    link, prefix = package(tmp_path)
    outside = tmp_path / "secret" / "man1"
    outside.mkdir(parents=True)
    (outside / "secret.1").write_text(TOOL_PAGE.replace("frob", "secret"))
    section = prefix / "share/man/man1"
    (section / "frob-leak.1").symlink_to(outside / "secret.1")  # a page linked out
    pages = ManPages.load().beside(link)
    assert pages.find("frob-leak") is None
    assert pages.find("frob-twist") is not None
    # a `.so` that leads out includes nothing (the page is only that: no page)
    (section / "frob-so.1").write_text(f".so {outside / 'secret.1'}\n")
    (section / "frob-up.1").write_text(".so ../../../../secret/man1/secret.1\n")
    assert read_man_file(section / "frob-so.1", "frob") is None
    assert read_man_file(section / "frob-up.1", "frob") is None
    assert read_man_file(section / "frob-twist.1", "frob") is not None


def test_a_man_directory_linked_out_of_the_package_is_not_its(tmp_path, env):
    prefix = tmp_path / "opt" / "frobkit"
    tool = logging_script(prefix / "bin", "frob", HELP)
    elsewhere = tmp_path / "elsewhere" / "man"
    (elsewhere / "man1").mkdir(parents=True)
    (elsewhere / "man1" / "frob.1").write_text(TOOL_PAGE)
    (prefix / "man").symlink_to(elsewhere)
    assert package_roots(tool) == []
    assert ManPages.load().beside(tool).find("frob") is None


def test_a_package_of_100_000_pages_is_listed_only_so_far(tmp_path, env):
    link, prefix = package(tmp_path)
    section = prefix / "share/man/man1"
    empty_files(section, (f"p{number}.1" for number in range(100_000)))
    # the package's root holds as many: never listed
    empty_files(prefix, (f"f{number}" for number in range(100_000)))
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    pages = ManPages.load().beside(link)
    took = time.thread_time() - start
    found = sum(1 for n in range(100_000) if pages.find(f"p{n}") is not None)
    assert 0 < found <= manpage.MAX_PACKAGE_PAGES
    assert took < 5.0


def empty_files(directory: Path, names: Iterable[str]) -> None:
    """Each of `names` an empty file in `directory`, as `Path.touch` makes them, at half
    its cost: opened by name relative to the directory, without pathlib's objects."""
    where = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=where))
    finally:
        os.close(where)


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed here")
def test_atip_gen_npm_reads_the_pages_beside_its_executable(tmp_path, monkeypatch):
    """npm's pages are in its package (`/usr/lib/node_modules/npm/man`), one per command
    (`npm-install(1)`): `atip gen npm` lists its commands from them."""
    npm = shutil.which("npm")
    assert npm is not None
    roots = package_roots(npm)
    monkeypatch.delenv("MANPATH", raising=False)
    if not roots or "install" not in ManPages.load().beside(npm).prefixed("npm-"):
        pytest.skip("this npm ships no pages beside it")
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    env.pop("MANPATH", None)
    done = subprocess.run(
        [sys.executable, "-m", "atipkit", "gen", "npm", "--plain", "--depth", "2"],
        env=env,
        capture_output=True,
        text=True,
        # 48 CPU s: past 120 s of wall clock under load; `gen` stops at its own CEILING
        timeout=CEILING + STARTUP,
        check=True,
    )
    tool = json.loads(done.stdout)
    assert {"install", "uninstall", "ls", "publish"} <= set(tool["commands"])
    assert tool["commands"]["install"]["description"] == "Install a package"


def test_a_tool_with_subcommand_pages_is_inferred_first(tmp_path, env):
    """npm's page names no command, its `npm-install(1)` ... do: it is the long work of a
    sweep, started first, not last."""
    from atipkit.infer.coverage import CoverageTarget, _Runner
    from atipkit.registry.local import LocalRegistry

    _, prefix = package(tmp_path)
    plain = logging_script(tmp_path / "bin", "plain")
    real = str(prefix / "bin" / "frob")
    frob = CoverageTarget(name="frob", path=real, hash="0" * 64, denied=False)
    other = CoverageTarget(name="plain", path=str(plain), hash="1" * 64, denied=False)
    with _Runner(LocalRegistry(), time.monotonic() + 60, refresh=False) as runner:
        early, paged, unpaged = runner.sort([other, frob])
    assert (early, paged, unpaged) == ([frob], [], [other])
