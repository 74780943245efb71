"""Search documents from what the machine says of a command (issue 21): the opening
prose of its page's DESCRIPTION, recorded by inference (`x-atipkit.prose`), and ranked
by BM25F with fields weighed apart.

The machine's own pages where they exist (skipped where one is not installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import msgspec
import pytest

from atipkit import scan
from atipkit.bridge.compile import PROVIDERS, compile_tools
from atipkit.infer.generate import Budget, shim_from_page, subpages_of
from atipkit.infer.helptext import parse_help
from atipkit.infer.manpage import ManPages
from atipkit.infer.prose import MAX_PROSE, opening
from atipkit.model import Tool, dumps
from atipkit.registry.local import LocalRegistry
from atipkit.search import index as search_index
from atipkit.search.documents import command_documents, prose_of
from atipkit.search.index import CommandIndex
from atipkit.search.machine import machine_index
from atipkit.validation import validate
from tests.servers import require
from tests.test_infer_pages import _read
from tests.test_infer_subpages import env as env  # the fixture
from tests.test_infer_subpages import machine_pages


@pytest.fixture(scope="module")
def pages() -> ManPages:
    require("groff", "apt-get install groff-base")
    return ManPages.load()


def _shim(pages: ManPages, name: str) -> Tool:
    """The shim `atip scan --infer` makes of `name`'s page and its subcommands' pages."""
    subpages = subpages_of(name, pages, Budget(60))
    hash_ = "sha256:" + "0" * 64
    return shim_from_page(name, hash_, _read(pages, name), budget=Budget(60), subpages=subpages)


def test_the_opening_of_a_page_description_is_recorded_capped(pages):
    tool = _shim(pages, "chmod")
    prose = prose_of(tool)
    assert "changes the file mode bits of each given file" in prose
    assert len(prose) <= MAX_PROSE
    assert "--recursive" not in prose  # an option's tag ends the opening
    assert validate(dumps(tool)).ok


def test_a_subcommand_page_gives_its_command_its_own_prose(pages):
    tool = _shim(pages, "git")
    commit = tool.commands.get("commit")
    if commit is None or not prose_of(commit):
        pytest.skip("git's subcommand pages are not installed here")
    assert "new commit" in prose_of(commit)
    assert prose_of(commit) != prose_of(tool)


def test_a_listed_command_cut_short_keeps_its_paragraph_as_prose(pages):
    """systemctl's COMMANDS section: a command's paragraph longer than a description is
    kept whole as its prose, a short one is its description only."""
    tool = _shim(pages, "systemctl")
    cut = [c for c in tool.commands.values() if c.description.endswith("…")]
    assert cut
    for command in cut:
        assert prose_of(command).startswith(command.description[:-1])
    assert all(not prose_of(c) for c in tool.commands.values() if len(c.description) < 150)


def test_help_text_gives_the_paragraph_below_its_description_as_prose():
    """A tool without a page: what its `--help` says below the first line."""
    if shutil.which("ls") is None:
        pytest.skip("no ls here")
    text = subprocess.run(["ls", "--help"], capture_output=True, text=True, check=True).stdout
    parsed = parse_help(text, "ls")
    assert parsed.description.startswith("List information about the FILEs")
    assert "Sort entries alphabetically" in parsed.prose
    assert "--all" not in parsed.prose


def test_the_compiled_definitions_never_carry_the_prose(pages):
    """The prose is for the index: a model's context gets the same definitions, to the
    byte, with it or without it."""
    tool = _shim(pages, "chmod")
    assert prose_of(tool)
    bare = msgspec.structs.replace(
        tool, extensions={k: v for k, v in tool.extensions.items() if k != "x-atipkit"}
    )
    for provider in PROVIDERS:
        with_prose = compile_tools(tool, provider).tools  # type: ignore[arg-type]
        without = compile_tools(bare, provider).tools  # type: ignore[arg-type]
        assert msgspec.json.encode(with_prose) == msgspec.json.encode(without), provider


def test_a_hostile_description_is_read_up_to_the_cap_only():
    """A DESCRIPTION of a million paragraphs, or one line of megabytes: the opening stops
    at the cap, having looked at the lines before it only."""
    seen = 0

    def lines():
        nonlocal seen
        for number in range(1_000_000):
            seen += 1
            yield (7, "" if number % 2 else "word " * 20)

    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    start = time.thread_time()
    assert len(opening(lines())) <= MAX_PROSE
    assert seen < 200
    huge = opening([(7, "x" * 5_000_000 + " y")])
    assert huge == ""  # one word past the cap: nothing, never a cut word
    assert len(opening([(7, "ab " * 3_000_000)])) <= MAX_PROSE
    assert time.thread_time() - start < 2.0


def test_description_prose_ranks_chmod_for_recursive_permissions(pages, monkeypatch):
    """chgrp, chown and chmod share their options' words ("recursively", "files"); chmod's
    DESCRIPTION says it changes modes, the words of permissions, and BM25F weighs that."""
    tools = [_shim(pages, name) for name in ("chmod", "chgrp", "chown", "shred", "chattr")]
    query = "change file permissions recursively"
    ranked = [h.tool for h in CommandIndex.from_tools(tools).search(query, 5)]
    assert ranked[0] == "chmod", ranked
    monkeypatch.setitem(search_index.FIELD_WEIGHTS, "prose", 0.0)
    without = [h.tool for h in CommandIndex.from_tools(tools).search(query, 5)]
    assert without[0] != "chmod", without


def test_every_name_of_a_multi_call_binary_is_searchable(tmp_path, env, monkeypatch):
    """bzip2 and bunzip2 are one binary with one page: both are indexed, each found by its
    own name and by what its page's NAME line says of it."""
    machine_pages(monkeypatch, "bzip2", "bzcat", "bunzip2")
    directory = os.path.dirname(os.path.realpath(shutil.which("bzcat") or ""))
    scan([directory], only=["bzip2", "bunzip2", "bzcat"], infer=True)
    index, _ = machine_index(LocalRegistry(), tmp_path / "index")
    for name in ("bzip2", "bunzip2", "bzcat"):
        assert index.search(name, 1)[0].tool == name
    assert index.search("decompresses files to stdout", 1)[0].tool == "bzcat"
    assert {h.tool for h in index.search("block-sorting file compressor", 3)} >= {
        "bzip2",
        "bunzip2",
    }
    documents = {d.tool: d for d in command_documents(_recorded("bzip2"))}
    assert "burrow" in documents["bzip2"].terms  # the page's DESCRIPTION, recorded


def _recorded(name: str) -> Tool:
    from atipkit.resolve import resolve_tool

    return resolve_tool(name).tool
