"""`atipkit.search`: BM25 over commands (`CommandIndex`), the machine's index in the cache
directory (`machine_index`), and `atip search`.

Everything is real: the index is built by atipkit's BM25F and stemmed by PyStemmer, the
machine's tools are shell scripts the tests write and record with a real scan, and the
command is run as an `atip` process against registries in the test's own directories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import atipkit
from atipkit import scan
from atipkit.bridge import compile_tools
from atipkit.registry.local import LocalRegistry
from atipkit.resolve import resolve_tool
from atipkit.search import CommandIndex, cachefile, terms
from atipkit.search.index import DamagedIndex
from atipkit.search.machine import index_dir, machine_index
from atipkit.trust.digest import sha256_file
from tests.helpers import ATIP, EXAMPLES, atip_answer, atip_run, machine_env, minimal
from tests.test_discovery import plain_script, tool_script

EXAMPLE_TOOLS = [atipkit.load(EXAMPLES / "tools" / f"{n}.json") for n in ("gh", "kubectl")]


def tool(name: str = "t", commands: dict[str, Any] | None = None, **extra: Any) -> atipkit.Tool:
    """A valid document named `name` with `commands` (each a plain leaf unless it says
    more)."""
    described = {
        key: {"description": f"Command {key}", **spec} for key, spec in (commands or {}).items()
    }
    return atipkit.from_dict(minimal(name=name, commands=described, **extra))


def names(hits: list[Any]) -> list[str]:
    return [hit.name for hit in hits]


def compiled_names(tools: list[atipkit.Tool]) -> dict[tuple[str, str], str]:
    """(tool, command path) → the name `compile_tools` gives the command, read from the
    compile's bindings."""
    out = {}
    for name, binding in compile_tools(tools, "mcp").bindings.items():
        [target] = binding.targets.values()
        out[(target.tool, " ".join(target.path))] = name
    return out


# -- what a command is found by ------------------------------------------------------------

NEUTRAL = {"description": "Print the report"}

#: For each field, the commands of a tool where only command `target` says "zebra",
#: and only in that field.
FIELDS: dict[str, dict[str, Any]] = {
    "command name": {"zebra": NEUTRAL, "other": NEUTRAL},
    "description": {"target": {"description": "Feed the zebra"}, "other": NEUTRAL},
    "option name": {
        "target": {"options": [{"name": "zebra", "flags": ["-z"], "type": "boolean"}]},
        "other": {"options": [{"name": "quiet", "flags": ["-q"], "type": "boolean"}]},
    },
    "option flag": {
        "target": {"options": [{"name": "q", "flags": ["--zebra"], "type": "boolean"}]},
        "other": {"options": [{"name": "q", "flags": ["--quiet"], "type": "boolean"}]},
    },
    "option description": {
        "target": {
            "options": [
                {"name": "q", "flags": ["-q"], "type": "boolean", "description": "Zebra mode"}
            ]
        },
        "other": {
            "options": [
                {"name": "q", "flags": ["-q"], "type": "boolean", "description": "Quiet mode"}
            ]
        },
    },
    "option enum value": {
        "target": {
            "options": [
                {"name": "kind", "flags": ["--kind"], "type": "enum", "enum": ["horse", "zebra"]}
            ]
        },
        "other": {
            "options": [{"name": "kind", "flags": ["--kind"], "type": "enum", "enum": ["horse"]}]
        },
    },
    "argument": {
        "target": {"arguments": [{"name": "animal", "type": "string", "description": "A zebra"}]},
        "other": {"arguments": [{"name": "animal", "type": "string", "description": "A horse"}]},
    },
    "example": {
        "target": {"examples": ["t target --name zebra"]},
        "other": {"examples": ["t other --name horse"]},
    },
}


@pytest.mark.parametrize("field", list(FIELDS))
def test_a_command_is_found_by_each_field_of_its_own(field):
    commands = FIELDS[field]
    target = "t_zebra" if "zebra" in commands else "t_target"
    index = CommandIndex.from_tools([tool(commands=commands)])
    assert len(index) == 2
    assert names(index.search("zebra", rerank=False)) == [target]


def test_patterns_count_for_the_commands_their_steps_run():
    patterns = [
        {
            "name": "zebra-crossing",
            "description": "Cross the road",
            "steps": [{"command": "t stripes --width 3", "description": "Paint the stripes"}],
        },
        {
            "name": "tagged",
            "description": "Nothing special",
            "tags": ["okapi"],
            "steps": [{"command": "t road lane 'a b'"}],
        },
        {  # another tool's command line counts for no command of this one
            "name": "elsewhere",
            "description": "gazelle",
            "steps": [{"command": "other stripes"}],
        },
    ]
    commands = {
        "stripes": NEUTRAL,
        "road": {"description": "Roads", "commands": {"lane": NEUTRAL}},
        "other": NEUTRAL,
    }
    index = CommandIndex.from_tools([tool(commands=commands, patterns=patterns)])
    # the pattern's name
    assert names(index.search("zebra crossing", rerank=False)) == ["t_stripes"]
    assert names(index.search("paint", rerank=False)) == ["t_stripes"]  # a step's description
    # tags, the deepest command
    assert names(index.search("okapi", rerank=False)) == ["t_road_lane"]
    assert index.search("gazelle", rerank=False) == []


def test_the_tool_description_counts_for_each_of_its_commands():
    tools = [
        tool("alpha", {"one": NEUTRAL, "two": NEUTRAL}, description="Tame a zebra"),
        tool("beta", {"one": NEUTRAL}, description="Ride a horse"),
    ]
    assert names(CommandIndex.from_tools(tools).search("zebra", rerank=False)) == [
        "alpha_one",
        "alpha_two",
    ]


def test_names_and_descriptions_outweigh_parameters_and_examples():
    commands = {
        "low": {
            "options": [{"name": "zebra", "flags": ["--zebra"], "type": "boolean"}],
            "examples": ["t low --zebra"],
        },
        "high": {"description": "Count zebra herds"},
    }
    hits = CommandIndex.from_tools([tool(commands=commands)]).search("zebra", rerank=False)
    assert names(hits) == ["t_high", "t_low"]
    assert hits[0].score > hits[1].score > 0


def test_the_examples_rank_as_expected():
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    assert names(index.search("list open pull requests", rerank=False))[0] == "gh_pr_list"
    assert names(index.search("delete a pod", rerank=False))[0] == "kubectl_delete"
    assert names(index.search("clone a repository", rerank=False))[0] == "gh_repo_clone"


def test_words_meet_by_their_stems_and_their_parts():
    commands = {
        "pack": {"description": "Compression of files"},
        "copy": {"description": "Copy files"},
        "listAll": {"description": "Show entries"},
    }
    index = CommandIndex.from_tools([tool(commands=commands)])
    for query in ("compressing", "compressed", "COMPRESS"):
        assert names(index.search(query, rerank=False)) == ["t_pack"], query
    assert names(index.search("list all", rerank=False)) == ["t_listAll"]  # camelCase is two words


def test_a_page_indexed_under_several_names_counts_once_in_a_words_rarity():
    """A multi-call binary's names (`gzip`, `gunzip`, `zcat`) are one page: its words are
    as rare as those of a page indexed once (decision 707), so the three copies of
    "zebra" do not make it commoner than the one "horse"."""
    copies = [
        tool(name, {"run": {"description": "Squeeze a zebra"}}) for name in ("z1", "z2", "z3")
    ]
    solo = tool("solo", {"run": {"description": "Squeeze a horse"}})
    hits = CommandIndex.from_tools([*copies, solo]).search("zebra horse", rerank=False)
    assert names(hits) == ["solo_run", "z1_run", "z2_run", "z3_run"]  # a tie, by name
    assert len({hit.score for hit in hits}) == 1


def test_documents_of_nothing_but_a_name_are_pages_of_their_own():
    """Two commands that say nothing but their names are not one page: `list`, the name
    of two of them, stays commoner than `show`, the name of one."""
    from atipkit.search.documents import CommandDoc

    def bare(name: str, command: str) -> CommandDoc:
        return CommandDoc(name, (command,), "", [[name, command], *[[]] * 6])

    said = CommandDoc("other", ("run",), "Run", [["other", "run"], ["run"], *[[]] * 5])
    index = CommandIndex.from_documents(
        [bare("alpha", "list"), bare("beta", "list"), bare("gamma", "show"), said]
    )
    hits = index.search("list show", rerank=False)
    assert names(hits) == ["gamma_show", "alpha_list", "beta_list"]
    assert hits[0].score > hits[1].score == hits[2].score


def test_stop_words_and_unknown_words_find_nothing():
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    assert index.search("the of and to a an is", rerank=False) == []
    assert index.search("xyzzy plugh", rerank=False) == []
    assert index.search("", rerank=False) == []
    assert index.search("!!! ---", rerank=False) == []
    # an unknown word next to a known one takes nothing away
    assert index.search("xyzzy pods", rerank=False) == index.search("pods", rerank=False)


def test_ties_are_ordered_by_name_and_limit_cuts():
    # the same words in documents of the same length: the same score
    commands = {"zed": NEUTRAL, "ant": NEUTRAL, "emu": NEUTRAL}
    index = CommandIndex.from_tools([tool(commands=commands)])
    hits = index.search("report", rerank=False)
    assert names(hits) == ["t_ant", "t_emu", "t_zed"]
    assert len({hit.score for hit in hits}) == 1
    assert names(index.search("report", limit=2, rerank=False)) == ["t_ant", "t_emu"]
    assert index.search("report", limit=0, rerank=False) == []


def test_a_hit_is_the_command_as_a_compile_names_it():
    tools = [
        tool("gh", {"pr": {"commands": {"list": {"description": "List pull requests"}}}}),
        # "my.tool run" and "my_tool run" both want my_tool_run: the exact spelling keeps
        # it, the other gets a hash suffix
        tool("my.tool", {"run": {"description": "Start the engine"}}),
        tool("my_tool", {"run": {"description": "Start the engine"}}),
        # ("a", "b_c") and ("a_b", "c") both want a_b_c: the shallower/first keeps it
        tool("a_b", {"c": {"description": "Start the engine"}}),
        tool("a", {"b_c": {"description": "Start the engine"}}),
        tool("long" * 10, {"sub" * 10: {"description": "Start the engine"}}),  # > 64
    ]
    index = CommandIndex.from_tools(tools)
    table = compiled_names(tools)
    hits = index.search("engine", limit=100, rerank=False)
    assert len(hits) == 5
    for hit in hits:
        assert hit.name == table[(hit.tool, hit.command)], hit
    assert index.names == [d["name"] for d in compile_tools(tools, "mcp").tools]
    suffixed = {hit.tool: hit.name for hit in hits}
    assert suffixed["my_tool"] == "my_tool_run"
    assert suffixed["my.tool"].startswith("my_tool_run_")
    assert len(suffixed["my.tool"]) == len("my_tool_run_") + 6
    assert len(suffixed["long" * 10]) == 64
    [pr] = index.search("pull requests", rerank=False)
    assert (pr.tool, pr.command, pr.name) == ("gh", "pr list", "gh_pr_list")
    assert pr.description == "List pull requests"


WORDS = st.sampled_from(["a", "b", "a_b", "a.b", "b-c", "c", "7"])


@st.composite
def command_trees(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    keys = draw(st.lists(WORDS | st.just(""), max_size=3, unique=True))  # "": the root
    tree = {}
    for key in keys:
        spec: dict[str, Any] = {"description": "Print the report"}
        if draw(st.booleans()):
            spec["hidden"] = True
        if depth and draw(st.booleans()):
            spec["commands"] = draw(command_trees(depth - 1))
            if draw(st.booleans()):
                spec["options"] = [{"name": "x", "flags": ["-x"], "type": "boolean"}]
        tree[key] = spec
    return tree


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(WORDS, command_trees()), max_size=4, unique_by=lambda t: t[0]))
def test_names_are_those_of_the_compile_whatever_collides(trees):
    """Tool names and command paths made of few words collide in every way (a_b vs a b,
    a.b vs a_b, hidden and bare groups): the index names every command as the compile."""
    tools = [tool(name, commands) for name, commands in trees]
    index = CommandIndex.from_tools(tools)
    assert index.names == [d["name"] for d in compile_tools(tools, "mcp").tools]
    compiled = [
        (target.tool, " ".join(target.path), flat.name)
        for flat in compile_tools(tools, "mcp").flat
        for target in flat.binding.targets.values()
    ]
    hits = index.search("report", limit=1000, rerank=False)
    assert sorted((hit.tool, hit.command, hit.name) for hit in hits) == sorted(compiled)


def test_hidden_commands_and_bare_groups_are_not_indexed():
    commands = {
        "": {"description": "The root command", "arguments": [{"name": "x", "type": "string"}]},
        "visible": NEUTRAL,
        "secret": {"description": "Print the report", "hidden": True},
        "bare": {"description": "Quokka group", "commands": {"leaf": NEUTRAL}},
        "closet": {"hidden": True, "commands": {"inside": {"description": "Print the report"}}},
        "remote": {
            "description": "List remotes",
            "options": [{"name": "verbose", "flags": ["-v"], "type": "boolean"}],
            "commands": {"add": NEUTRAL},
        },
    }
    tools = [tool(commands=commands)]
    index = CommandIndex.from_tools(tools)
    expected = ["t", "t_visible", "t_bare_leaf", "t_remote", "t_remote_add"]
    assert index.names == expected
    assert sorted(compiled_names(tools).values()) == sorted(expected)
    assert sorted(names(index.search("report", limit=100, rerank=False))) == [
        "t_bare_leaf",
        "t_remote_add",
        "t_visible",
    ]
    # a bare group's own words are not a command of their own (its leaves carry the
    # group's name in their path, not its description)
    assert index.search("quokka", rerank=False) == []
    [root] = index.search("root", rerank=False)
    assert (root.tool, root.command, root.name) == ("t", "", "t")


def test_an_index_of_nothing_finds_nothing():
    index = CommandIndex.from_tools([])
    assert (len(index), index.search("anything", rerank=False)) == (0, [])
    assert CommandIndex.from_tools([tool(commands={"g": {"commands": {}}})]).names == ["t_g"]


# -- saving and loading --------------------------------------------------------------------

QUERIES = ["list open pull requests", "delete a pod", "pods", "logs", "merge", "the", "xyzzy"]


def test_a_saved_index_loads_with_the_same_hits(tmp_path):
    index = CommandIndex.from_tools(EXAMPLE_TOOLS)
    index.save(tmp_path)
    loaded = CommandIndex.load(tmp_path)
    assert loaded.names == index.names
    for query in QUERIES:
        for limit in (1, 3, 100):
            assert loaded.search(query, limit, rerank=False) == index.search(
                query, limit, rerank=False
            ), (query, limit)
    empty = tmp_path / "empty"
    CommandIndex.from_tools([]).save(empty)
    assert CommandIndex.load(empty).search("pods", rerank=False) == []


def rewritten(path: Path, *, checksums: bool, **sections: bytes) -> bytes:
    """The cache file at `path` with `sections` replaced; its block checksums computed
    again over them (`checksums`), as a file written by something else would have
    them, or left as they were (damage)."""
    saved = cachefile.read(path, *KINDS[path.name])
    old = {name: bytes(saved.section(name, verify=False)) for name in saved._table}
    cachefile.write(path, *KINDS[path.name], saved.meta, {**old, **sections})
    if checksums:
        return path.read_bytes()
    header, _, body = path.read_bytes().partition(b"\n")[2].partition(b"\n")
    again = json.loads(header)
    original = json.loads(CLEAN[path].partition(b"\n")[2].partition(b"\n")[0])
    again["blocks"] = original["blocks"]
    line = json.dumps(again, separators=(",", ":")).encode()
    return b"atipkit-cache\n" + line.ljust(len(header)) + b"\n" + body


KINDS = {"index.bin": ("search-index", 6), "state.bin": ("search-state", 5)}
CLEAN: dict[Path, bytes] = {}


def damaged_postings(path: Path, *, checksum: bool = False) -> bytes:
    """The saved index, well-formed, with postings that name commands it does not have;
    with `checksum`, the checksums are computed again over them."""
    CLEAN[path] = path.read_bytes()
    count = len(cachefile.read(path, *KINDS["index.bin"]).section("indices")) // 4
    return rewritten(path, checksums=checksum, indices=(10**6).to_bytes(4, "little") * count)


def test_load_refuses_what_save_did_not_write(tmp_path):
    CommandIndex.from_tools(EXAMPLE_TOOLS).save(tmp_path)
    path = tmp_path / "index.bin"
    good = path.read_bytes()
    other = good.replace(b'"format":6', b'"format":5', 1)
    for bad in (b"", b"garbage", good[: len(good) // 2], good[:40], other):
        path.write_bytes(bad)
        with pytest.raises(ValueError, match=r"index\.bin: "):
            CommandIndex.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        CommandIndex.load(tmp_path / "missing")


def test_damage_is_found_in_the_blocks_a_query_reads(tmp_path):
    """The load verifies the small sections; a block of postings is verified when a
    query reads it (decision 582), so damage there is `DamagedIndex`, which callers
    answer by rebuilding, and a query that reads other blocks is answered."""
    commands = {f"c{i}": {"description": f"word{i} common"} for i in range(10000)}
    index = CommandIndex.from_tools([tool("t", commands)])
    index.save(tmp_path)
    path = tmp_path / "index.bin"
    whole = CommandIndex.load(tmp_path)
    assert names(whole.search("word7", rerank=False)) == ["t_c7"]
    postings = whole._postings
    assert postings is not None
    assert postings.saved is not None
    read = set(postings.saved._verified)  # the blocks that query read
    begins = postings.saved._table["scores"][0]
    places = {  # where each word's one score is
        f"word{i}": begins + 4 * postings.indptr[postings.column(f"word{i}") or 0]
        for i in range(0, 10000, 100)
    }
    other, scores = next((w, p) for w, p in places.items() if p // cachefile._BLOCK not in read)
    data = bytearray(path.read_bytes())
    data[len(data) - len(postings.saved._body) + scores] ^= 0xFF
    path.write_bytes(bytes(data))
    loaded = CommandIndex.load(tmp_path)  # nothing at load tells
    assert names(loaded.search("word7", rerank=False)) == ["t_c7"]
    with pytest.raises(DamagedIndex, match="checksum of block"):
        loaded.search(other, rerank=False)


def test_an_entry_written_by_something_else_is_damage_whatever_it_holds(tmp_path):
    """Checksums right, entries not ours: too deep for the decoder, not a list, not
    strings: each is `DamagedIndex`, which callers answer by rebuilding."""
    CommandIndex.from_tools(EXAMPLE_TOOLS).save(tmp_path)
    path = tmp_path / "index.bin"
    saved = cachefile.read(path, *KINDS["index.bin"])
    sections = {name: bytes(saved.section(name)) for name in saved._table}
    count = len(saved.array("offsets", "q")) - 1
    for entry in (b"[" * 100_000 + b"]" * 100_000, b"{}", b"[1, 2, 3, 4]", b"[]"):
        blob = entry * count
        offsets = array("q", range(0, len(blob) + 1, len(entry)))
        changed = {"entries": blob, "offsets": offsets.tobytes()}
        cachefile.write(path, *KINDS["index.bin"], saved.meta, {**sections, **changed})
        with pytest.raises(DamagedIndex, match="entry"):
            CommandIndex.load(tmp_path).search("pods", rerank=False)


# -- the machine's index -------------------------------------------------------------------


@pytest.fixture
def machine(tmp_path, isolated_home) -> Path:
    """Three tools recorded by a real scan: two native, one described by a shim."""
    bin_dir = tmp_path / "bin"
    tool_script(
        bin_dir,
        "alpha",
        minimal(name="alpha", commands={"feed": {"description": "Feed the zebra"}}),
    )
    tool_script(
        bin_dir,
        "beta",
        minimal(name="beta", commands={"ride": {"description": "Ride the horse"}}),
    )
    legacy = plain_script(bin_dir, "legacy", "exit 2")
    hash_ = sha256_file(legacy)
    shim = minimal(
        name="legacy",
        commands={"pack": {"description": "Compression of old files"}},
        binary={"hash": hash_, "name": "legacy", "version": "1.0"},
    )
    path = LocalRegistry().shim_path(hash_)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(shim))
    found = scan([str(bin_dir)])
    assert sorted(f.name for f in found.found) == ["alpha", "beta", "legacy"]
    assert LocalRegistry().read().tools["legacy"].source == "shim"
    return bin_dir


def counts(report: Any) -> tuple[int, int, int, bool]:
    return report.tools, report.read, report.reused, report.updated


def test_the_machine_index_reads_each_tool_once_then_loads(machine):
    index_dir().mkdir(parents=True)
    for legacy in ("index.msgpack", "state.json"):  # an older atipkit's: removed
        (index_dir() / legacy).write_bytes(b"old")
    index, report = machine_index()
    assert counts(report) == (3, 3, 0, True)
    assert (report.commands, report.skipped) == (3, [])
    assert names(index.search("zebra", rerank=False)) == ["alpha_feed"]
    assert names(index.search("compressing", rerank=False)) == ["legacy_pack"]
    assert sorted(os.listdir(index_dir())) == [
        "documents.msgpack",
        "index.bin",
        "state.bin",
        "update.lock",
    ]
    again, report = machine_index()
    assert counts(report) == (3, 0, 0, False)
    assert again.names == index.names
    assert again.search("zebra", rerank=False) == index.search("zebra", rerank=False)


def test_a_new_tool_is_read_alone(machine):
    machine_index()
    tool_script(
        machine, "gamma", minimal(name="gamma", commands={"graze": {"description": "Graze"}})
    )
    scan([str(machine)])
    index, report = machine_index()
    assert counts(report) == (4, 1, 3, True)
    assert names(index.search("graze", rerank=False)) == ["gamma_graze"]
    assert counts(machine_index()[1]) == (4, 0, 0, False)


def test_an_override_for_a_tool_is_picked_up(machine):
    machine_index()
    override = LocalRegistry().override_path(sha256_file(machine / "beta"))
    override.parent.mkdir(parents=True)
    override.write_text(json.dumps({"commands": {"ride": {"description": "Ride the okapi"}}}))
    index, report = machine_index()
    assert report.updated
    assert names(index.search("okapi", rerank=False)) == ["beta_ride"]
    assert index.search("horse", rerank=False) == []
    # edited in place (no rename: the directory stays as it was)
    with override.open("w") as f:
        f.write(json.dumps({"commands": {"ride": {"description": "Ride the camel"}}}))
    index, report = machine_index()
    assert names(index.search("camel", rerank=False)) == ["beta_ride"]
    assert counts(report) == (3, 1, 2, True)


def test_a_shim_edited_in_place_is_read_again(machine):
    """The check stats each file a document is read from (decision 582 watches
    directories only for files that are not there): an edit in place, of the same size,
    changes nothing but the file's own mtime."""
    machine_index()
    path = LocalRegistry().shim_path(sha256_file(machine / "legacy"))
    before = path.read_text()
    with path.open("r+") as f:
        f.write(before.replace("Compression", "Compactions"))
    assert path.stat().st_size == len(before)
    index, report = machine_index()
    assert counts(report) == (3, 1, 2, True)
    assert names(index.search("compactions", rerank=False)) == ["legacy_pack"]


def test_the_check_stats_no_file_its_directory_lacks(machine, monkeypatch):
    """legacy's shim by name does not exist: one listing of the shim directory says so
    for every tool, where a stat each cost a third of a 1 500-tool check (decision 465);
    when it appears, the listing shows it and the index follows."""
    machine_index()
    by_name = str(LocalRegistry().data_dir / "shims" / "legacy.json")
    stat, seen = os.stat, []

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen.append(os.fspath(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)
    assert counts(machine_index()[1]) == (3, 0, 0, False)
    assert by_name not in seen
    shim = minimal(name="legacy", commands={"pack": {"description": "Packing of old files"}})
    Path(by_name).write_text(json.dumps(shim))
    assert machine_index()[1].updated
    assert by_name in seen


def test_user_patterns_are_picked_up(machine):
    machine_index()
    patterns = LocalRegistry().data_dir / "patterns"
    patterns.mkdir()
    gallop = {"name": "gallop", "description": "Go fast", "steps": [{"command": "beta ride"}]}
    (patterns / "beta.json").write_text(json.dumps([gallop]))
    index, report = machine_index()
    assert report.updated
    assert names(index.search("gallop", rerank=False)) == ["beta_ride"]


def test_registry_patterns_are_picked_up_once_fetched(machine, tmp_path, monkeypatch):
    """The index reads a registry's patterns as resolving does, from the cache: a fetch
    that brings them in brings the index up to date."""
    from atipkit.registry.remote import RemoteRegistries
    from tests.servers import nginx
    from tests.test_registry_patterns import serve

    gallop = {"name": "gallop", "description": "Go fast", "steps": [{"command": "beta ride"}]}
    serve(tmp_path / "site", {"version": "1", "tools": {"beta": [gallop]}})
    with nginx(tmp_path / "site", tmp_path / "nginx") as org:
        monkeypatch.setenv("ATIP_REGISTRIES", org.url)
        index, report = machine_index()
        assert index.search("gallop", rerank=False) == []
        with RemoteRegistries.from_environment() as remote:
            [found] = remote.refresh_patterns()
        assert found.outcome == "found"
    index, report = machine_index()
    assert report.updated
    assert names(index.search("gallop", rerank=False)) == ["beta_ride"]


def test_a_binary_changed_since_it_was_recorded_is_left_out(machine):
    machine_index()
    with (machine / "alpha").open("a") as f:
        f.write("# upgraded in place, not scanned again\n")
    index, report = machine_index()
    assert counts(report) == (2, 0, 2, True)
    [why] = report.skipped
    assert why.startswith("alpha: its binary changed since it was recorded")
    assert index.search("zebra", rerank=False) == []
    assert names(index.search("horse", rerank=False)) == ["beta_ride"]
    again = machine_index()[1]  # loaded as saved, and still saying what it left out
    assert (counts(again), again.skipped) == ((2, 0, 0, False), [why])
    scan([str(machine)])
    index, report = machine_index()
    assert (counts(report), report.skipped) == ((3, 1, 2, True), [])
    assert names(index.search("zebra", rerank=False)) == ["alpha_feed"]


def test_a_deleted_shim_is_left_out(machine):
    machine_index()
    LocalRegistry().shim_path(sha256_file(machine / "legacy")).unlink()
    index, report = machine_index()
    assert counts(report) == (2, 0, 2, True)
    assert [line.split(":")[0] for line in report.skipped] == ["legacy"]
    assert index.search("compression", rerank=False) == []


def test_a_deleted_binary_is_left_out(machine):
    machine_index()
    (machine / "beta").unlink()
    index, report = machine_index()
    assert counts(report) == (2, 0, 2, True)
    assert [line.split(":")[0] for line in report.skipped] == ["beta"]
    assert index.search("horse", rerank=False) == []


@pytest.fixture
def shim_server(tmp_path) -> Iterator[tuple[str, Path]]:
    """A static remote registry: Python's http.server on a loopback port, serving a root
    the test fills (URL, root)."""
    from tests.servers import free_port, stop, wait_for_port

    root = tmp_path / "remote"
    root.mkdir()
    port = free_port()
    log = tmp_path / "http.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", "-b", "127.0.0.1", "-d", str(root), str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, server, log)
        yield f"http://127.0.0.1:{port}", root
    finally:
        stop(server)


def test_a_tool_described_by_a_remote_shim_is_indexed_from_the_cache(
    machine, shim_server, monkeypatch
):
    url, root = shim_server
    remote = plain_script(machine, "remote-tool", "exit 3")
    hash_ = sha256_file(remote)
    shim = minimal(
        name="remote-tool",
        commands={"sync": {"description": "Synchronise the wildebeest"}},
        binary={"hash": hash_, "name": "remote-tool", "version": "1.0"},
    )
    path = root / "shims" / "sha256" / f"{hash_.removeprefix('sha256:')}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(shim))
    monkeypatch.setenv("ATIP_REGISTRIES", url)
    assert resolve_tool(str(remote)).source == "shim"  # fetched, cached and recorded
    assert LocalRegistry().read().tools["remote-tool"].shim_registry == url
    index, report = machine_index()
    assert (counts(report), report.skipped) == ((4, 4, 0, True), [])
    assert names(index.search("wildebeest", rerank=False)) == ["remote-tool_sync"]
    # nothing is asked of the registry: the cached copy is what is indexed
    path.unlink()
    assert counts(machine_index()[1]) == (4, 0, 0, False)
    # a registry no longer configured is no longer trusted: its shim is left out
    monkeypatch.setenv("ATIP_REGISTRIES", "http://127.0.0.1:9")
    index, report = machine_index()
    assert counts(report) == (3, 0, 3, True)
    assert [line.split(":")[0] for line in report.skipped] == ["remote-tool"]
    assert index.search("wildebeest", rerank=False) == []


CACHE_DAMAGE = {
    "garbage": lambda good: b"\x00garbage\xff",
    "truncated": lambda good: good[: len(good) // 2],
    "empty": lambda good: b"",
}


@pytest.mark.parametrize("damage", list(CACHE_DAMAGE))
@pytest.mark.parametrize("file", ["index.bin", "state.bin"])
def test_a_damaged_cache_is_rebuilt_never_an_error(machine, file, damage):
    first, _ = machine_index()
    path = index_dir() / file
    path.write_bytes(CACHE_DAMAGE[damage](path.read_bytes()))
    index, report = machine_index()
    assert counts(report) == (3, 0, 3, True)  # from the documents kept
    assert index.search("zebra", rerank=False) == first.search("zebra", rerank=False)
    assert counts(machine_index()[1]) == (3, 0, 0, False)


@pytest.mark.parametrize("damage", list(CACHE_DAMAGE))
def test_damaged_documents_are_read_again_at_the_next_update(machine, damage):
    machine_index()
    path = index_dir() / "documents.msgpack"
    path.write_bytes(CACHE_DAMAGE[damage](path.read_bytes()))
    assert counts(machine_index()[1]) == (3, 0, 0, False)  # the index itself is whole
    tool_script(machine, "gamma", minimal(name="gamma"))
    scan([str(machine)])
    index, report = machine_index()
    assert counts(report) == (4, 4, 0, True)
    assert names(index.search("zebra", rerank=False)) == ["alpha_feed"]


def test_a_cache_of_the_right_shape_with_wrong_values_is_rebuilt(machine):
    first, _ = machine_index()
    path = index_dir() / "index.bin"
    path.write_bytes(damaged_postings(path))
    index, report = machine_index()  # one block: verified at load
    assert counts(report) == (3, 0, 3, True)
    assert index.search("zebra", rerank=False) == first.search("zebra", rerank=False)
    state = index_dir() / "state.bin"
    saved = cachefile.read(state, *KINDS["state.bin"])
    sections = {name: bytes(saved.section(name)) for name in ("watched", "states")}
    for meta, changed in (
        ({**saved.meta, "tools": "3"}, {}),
        ({**saved.meta, "skipped": [1]}, {}),
        ({**saved.meta, "where": []}, {}),
        ({"where": saved.meta["where"]}, {}),
        (saved.meta, {"states": sections["states"][:-8]}),
        (saved.meta, {"watched": sections["watched"] + b"\0/x"}),
    ):
        cachefile.write(state, *KINDS["state.bin"], meta, {**sections, **changed})
        index, report = machine_index()
        assert report.updated, (meta, changed)
        assert index.search("zebra", rerank=False) == first.search("zebra", rerank=False)


def test_postings_that_pass_the_checksum_but_name_no_command_are_rebuilt(machine):
    """A file written by something else, checksum and all: the load does not read every
    posting (decision 174), the query that reads one says the index is damaged, and the
    machine index is rebuilt from the documents it keeps."""
    first, _ = machine_index()
    path = index_dir() / "index.bin"
    path.write_bytes(damaged_postings(path, checksum=True))
    index, report = machine_index()
    assert not report.updated  # loaded: nothing at load tells
    with pytest.raises(DamagedIndex, match="a posting names no command"):
        index.search("zebra", rerank=False)
    index, report = machine_index(rebuild=True)
    assert counts(report) == (3, 0, 3, True)  # from the documents kept
    assert index.search("zebra", rerank=False) == first.search("zebra", rerank=False)
    assert not machine_index()[1].updated  # saved again, whole


def test_a_broken_registry_is_an_error_not_an_empty_index(isolated_home):
    from atipkit.registry.local import RegistryError

    registry = LocalRegistry()
    registry.data_dir.mkdir(parents=True)
    registry.index_path.write_text("{not json")
    with pytest.raises(RegistryError):
        machine_index()
    assert not (index_dir() / "state.json").exists()


# -- atip search ---------------------------------------------------------------------------


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """A machine of the test's own for `atip` processes: an empty registry, and a bin
    directory for tools."""
    return machine_env(tmp_path)


def test_atip_search_answers_hits_and_how_the_index_was_had(tmp_path, env):
    bin_dir = tmp_path / "bin"
    for name, word in (("alpha", "zebra"), ("beta", "horse"), ("delta", "zebra")):
        tool_script(
            bin_dir,
            name,
            minimal(name=name, commands={"feed": {"description": f"Feed the {word}"}}),
        )
    assert atip_run(env, "scan", "--path", str(bin_dir)).returncode == 0
    code, out, stderr = atip_answer(env, "search", "feed a zebra", "--ranking", "bm25", "--json")
    assert code == 0, out
    result = out["result"]
    assert set(result) == {"query", "hits", "ranking", "index"}
    assert result["ranking"] == "bm25"
    assert result["query"] == "feed a zebra"
    assert [h["name"] for h in result["hits"]] == ["alpha_feed", "delta_feed", "beta_feed"]
    assert set(result["hits"][0]) == {"tool", "command", "name", "score", "description"}
    assert result["hits"][0] == {
        "tool": "alpha",
        "command": "feed",
        "name": "alpha_feed",
        "score": result["hits"][0]["score"],
        "description": "Feed the zebra",
    }
    assert result["hits"][0]["score"] == result["hits"][1]["score"] > result["hits"][2]["score"]
    index = result["index"]
    keys = {"tools", "commands", "updated", "read", "reused", "skipped", "seconds", "unsaved"}
    assert set(index) == keys
    assert (index["tools"], index["commands"], index["updated"], index["read"]) == (3, 3, True, 3)
    assert index["unsaved"] is None
    assert out["meta"]["tool"] == "atip.search"
    assert stderr == ""  # notes go to people, not to JSON readers

    code, out, _ = atip_answer(env, "search", "feed a zebra", "--ranking", "bm25", "--limit", "1")
    assert [h["name"] for h in out["result"]["hits"]] == ["alpha_feed"]
    assert out["result"]["index"]["updated"] is False

    # a tool scanned since: only it is read
    tool_script(bin_dir, "gamma", minimal(name="gamma", commands={"graze": {"description": "x"}}))
    assert atip_run(env, "scan", "--path", str(bin_dir)).returncode == 0
    code, out, _ = atip_answer(env, "search", "graze", "--ranking", "bm25")
    assert [h["name"] for h in out["result"]["hits"]] == ["gamma_graze"]
    index = out["result"]["index"]
    assert (index["tools"], index["read"], index["reused"]) == (4, 1, 3)

    text = atip_run(env, "search", "feed zebra", "--ranking", "bm25", "--text")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert [line.split()[1] for line in lines] == ["alpha_feed", "delta_feed", "beta_feed"]
    assert lines[0].endswith("Feed the zebra")
    assert text.stderr == ""  # the index was not updated: nothing to say


def test_atip_search_text_says_what_it_updated_and_left_out(tmp_path, env):
    bin_dir = tmp_path / "bin"
    tool_script(bin_dir, "alpha", minimal(name="alpha"))
    assert atip_run(env, "scan", "--path", str(bin_dir)).returncode == 0
    with (bin_dir / "alpha").open("a") as f:
        f.write("# changed\n")
    text = atip_run(env, "search", "run", "--ranking", "bm25", "--text")
    assert text.returncode == 0
    notes = text.stderr.splitlines()
    assert notes[0].startswith("index updated: 0 tools, 0 commands (0 read, 0 unchanged)")
    assert notes[1].startswith("left out: alpha: its binary changed since it was recorded")
    assert notes[2].startswith("warning: the index is empty")
    assert text.stdout == ""


def test_atip_search_on_an_empty_registry_warns(env):
    code, out, stderr = atip_answer(env, "search", "list files", "--ranking", "bm25")
    assert (code, stderr) == (0, "")  # JSON readers find the warning in meta
    assert out["result"]["hits"] == []
    assert out["result"]["index"]["tools"] == 0
    [warning] = out["meta"]["warnings"]
    assert warning.startswith("the index is empty: record tools first")
    text = atip_run(env, "search", "list files", "--ranking", "bm25", "--text")
    assert (text.returncode, text.stdout) == (0, "")
    assert "warning: the index is empty: record tools first" in text.stderr


def test_atip_search_errors(env, tmp_path):
    for empty in ("", "   "):
        code, out, _ = atip_answer(env, "search", empty, "--ranking", "bm25")
        assert (code, out["error"]["code"]) == (2, "E1002")
        assert out["error"]["details"]["param"] == "query"
    code, out, _ = atip_answer(env, "search", "x", "--ranking", "bm25", "--limit", "0")
    assert code == 2
    registry = Path(env["XDG_DATA_HOME"]) / "agent-tools" / "registry.json"
    registry.parent.mkdir(parents=True)
    registry.write_text("garbage")
    code, out, _ = atip_answer(env, "search", "x", "--ranking", "bm25")
    assert (code, out["error"]["code"]) == (65, "E1010")
    assert str(registry) in out["error"]["message"]


# -- the MCP gateway's search_tools --------------------------------------------------------


def test_the_gateway_searches_its_catalog_with_the_same_index(machine):
    from atipkit.serve.gateway import Gateway, Selection

    logged: list[str] = []
    gateway = Gateway(
        Selection(every=True, files=(EXAMPLES / "tools" / "gh.json",)),
        deferred=True,
        log=logged.append,
    )
    catalog = gateway.catalog
    assert "index" in catalog.__dict__  # built before the first search, not during it
    assert catalog.index.names == catalog.names  # the MCP compile's names, in its order
    [hit] = catalog.search("compressing old files")
    assert set(hit) == {"name", "title", "description", "annotations"}
    assert hit == {key: catalog.definitions["legacy_pack"][key] for key in hit}
    found = [h["name"] for h in catalog.search("list open pull requests", 2)]
    assert found[0] == "gh_pr_list"
    assert found == [h.name for h in catalog.index.search("list open pull requests", 2)]
    assert catalog.search("the of and") == []
    assert catalog.search("xyzzy") == []
    # the index follows the catalog: a tool scanned since is found after a reload
    tool_script(machine, "gamma", minimal(name="gamma", commands={"graze": {"description": "x"}}))
    scan([str(machine)])
    assert gateway.reload()
    assert [h["name"] for h in gateway.catalog.search("graze")] == ["gamma_graze"]
    assert "index" in gateway.catalog.__dict__


def test_gateway_hits_are_named_through_the_compile_bindings():
    """Names that collide and get a hash suffix come out as the catalog's MCP names."""
    from atipkit.serve.gateway import GatewayCatalog, Loaded

    tools = [
        tool("my.tool", {"run": {"description": "Start the engine"}}),
        tool("my_tool", {"run": {"description": "Start the engine"}}),
        tool("t", {"secret": {"description": "Start the engine", "hidden": True}}),
    ]
    catalog = GatewayCatalog(Loaded(tools, {}, []))
    found = [hit["name"] for hit in catalog.search("engine")]
    assert sorted(found) == sorted(catalog.names)
    assert "my_tool_run" in found
    assert all(name in catalog.definitions for name in found)


def test_without_the_search_packages_the_commands_say_what_to_install(machine, monkeypatch):
    from importlib import util

    from tests.helpers import atip, envelope_of

    monkeypatch.setitem(sys.modules, "bm25s", None)  # no longer needed (decision 291)
    assert atip("search", "zebra").exit_code == 0
    monkeypatch.delitem(sys.modules, "bm25s")
    machine_index()  # saved while the packages are there: the next search only loads it
    monkeypatch.setitem(sys.modules, "Stemmer", None)
    terms._stem.cache_clear()
    result = atip("search", "zebra")
    out = envelope_of(result)
    assert (result.exit_code, out["error"]["message"]) == (40, "atip search needs PyStemmer")
    terms._stem.cache_clear()

    find_spec = util.find_spec
    monkeypatch.setattr(
        util, "find_spec", lambda name, *a: None if name == "Stemmer" else find_spec(name, *a)
    )
    result = atip("mcp", "serve", "--all", "--deferred")
    out = envelope_of(result)
    assert (result.exit_code, out["error"]["code"]) == (40, "E4010")
    assert out["error"]["message"] == "atip mcp serve --deferred needs PyStemmer"
    assert "atipkit[mcp]" in out["error"]["suggestion"]["fix"]


def test_atip_search_rebuilds_postings_that_name_no_command(tmp_path, env):
    """Damage the load does not check (decision 174) is found by the query, and `atip
    search` rebuilds the index and answers, not exit 70."""
    bin_dir = tmp_path / "bin"
    tool_script(bin_dir, "alpha", minimal(name="alpha", commands={"feed": {"description": "x"}}))
    assert atip_run(env, "scan", "--path", str(bin_dir)).returncode == 0
    code, good, _ = atip_answer(env, "search", "feed", "--ranking", "bm25")
    assert (code, [h["name"] for h in good["result"]["hits"]]) == (0, ["alpha_feed"])
    path = tmp_path / "cache" / "search" / "index.bin"
    path.write_bytes(damaged_postings(path, checksum=True))
    code, out, _ = atip_answer(env, "search", "feed", "--ranking", "bm25")
    assert code == 0, out
    assert out["result"]["hits"] == good["result"]["hits"]
    assert out["result"]["index"]["updated"]
    code, out, _ = atip_answer(env, "search", "feed", "--ranking", "bm25")
    assert (code, out["result"]["index"]["updated"]) == (0, False)  # saved again, whole


def test_searches_at_once_build_the_index_once(tmp_path, env):
    bin_dir = tmp_path / "bin"
    for name in ("alpha", "beta", "gamma"):
        tool_script(bin_dir, name, minimal(name=name))
    assert atip_run(env, "scan", "--path", str(bin_dir)).returncode == 0
    procs = [
        subprocess.Popen(
            [*ATIP, "search", "run it"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(6)
    ]
    answers = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(a["ok"] for a in answers), answers
    hits = {json.dumps(a["result"]["hits"]) for a in answers}
    assert len(hits) == 1
    assert [h["name"] for h in answers[0]["result"]["hits"]] == [
        "alpha_run",
        "beta_run",
        "gamma_run",
    ]
    # under the lock, one process updated; the others loaded what it saved
    assert sum(a["result"]["index"]["updated"] for a in answers) == 1


def test_a_cache_directory_that_cannot_be_written_gives_an_index_in_memory(tmp_path):
    """A read-only home must not turn a search into an internal error: the index is built
    in memory, the hits are the same, and the warning says why and what to do."""
    subprocess.run(
        [sys.executable, "-m", "atipkit", "scan", "--path", str(EXAMPLES / "bin"), "--json"],
        env=machine_env(tmp_path),
        capture_output=True,
        check=True,
    )
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    done = subprocess.run(
        [sys.executable, "-m", "atipkit", "search", "roll back to the previous release", "--json"],
        env=machine_env(tmp_path, ATIP_CACHE_DIR=str(blocked)),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    result = json.loads(done.stdout)
    assert result["result"]["hits"][0]["name"] == "deploy_release_rollback"
    assert result["result"]["index"]["unsaved"].startswith(str(blocked))
    assert any("could not be kept" in w for w in result["meta"]["warnings"])
    assert blocked.read_text() == "a file where the cache directory should be"


@pytest.mark.skipif(os.name != "posix", reason="mapped where a mapped file can be replaced")
def test_a_cache_file_is_read_in_place_and_replaced_under_its_reader(tmp_path):
    """A cache file's sections are the file's pages, not a copy of its megabytes
    (decision 722); a new file written over it leaves what was read as it was, and an
    empty file is refused like any other that is not a cache file."""
    import tracemalloc

    path = tmp_path / "big.bin"
    rows = bytes(range(256)) * (4 << 12)  # 4 MiB
    cachefile.write(path, "test", 1, {"n": 1}, {"rows": rows})
    tracemalloc.start()
    try:
        saved = cachefile.read(path, "test", 1)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(rows) // 8
    cachefile.write(path, "test", 1, {"n": 2}, {"rows": b"\0" * len(rows)})
    assert saved.meta == {"n": 1}
    assert saved.section("rows") == rows
    assert cachefile.read(path, "test", 1).meta == {"n": 2}
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="not an atipkit cache file"):
        cachefile.read(path, "test", 1)
