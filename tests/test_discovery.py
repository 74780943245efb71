"""Resolution and scanning against real executables written by the tests."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import atipkit
from atipkit import scan
from atipkit.cli import cli
from atipkit.registry.local import LocalRegistry
from atipkit.resolve import NoMetadata, ToolNotFound, resolve_tool
from atipkit.trust.digest import sha256_file
from tests.helpers import BUSY, EXAMPLES, atip, envelope_of, minimal


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """Registry, config and cache in the test's own directories."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("ATIP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ATIP_REFRESH", raising=False)


def tool_script(directory: Path, name: str, doc: dict | None = None, body: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True, mode=0o755)
    path = directory / name
    doc = doc or minimal(name=name)
    path.write_text(
        f"#!/bin/sh\n{body}\nif [ \"$1\" = --agent ]; then echo '{json.dumps(doc)}';"
        " exit 0; fi\nexit 1\n"
    )
    path.chmod(0o755)
    return path


def plain_script(directory: Path, name: str, body: str = "exit 0") -> Path:
    directory.mkdir(parents=True, exist_ok=True, mode=0o755)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


# -- resolve -------------------------------------------------------------------------------


def test_probe_then_cache_then_refresh_when_the_binary_changes(tmp_path):
    exe = tool_script(tmp_path / "bin", "mytool")
    first = resolve_tool(str(exe))
    assert (first.source, first.cached) == ("native", False)
    assert first.hash == sha256_file(exe)
    second = resolve_tool(str(exe))
    assert second.cached
    assert second.tool == first.tool
    tool_script(tmp_path / "bin", "mytool", minimal(name="mytool", version="2.0"))
    third = resolve_tool(str(exe))
    assert (third.cached, third.tool.version) == (False, "2.0")
    assert resolve_tool(str(exe), refresh=True).cached is False


def test_refresh_by_environment(tmp_path, monkeypatch):
    exe = tool_script(tmp_path / "bin", "mytool")
    resolve_tool(str(exe))
    monkeypatch.setenv("ATIP_REFRESH", "1")
    assert resolve_tool(str(exe)).cached is False


def test_expired_entries_are_probed_again(tmp_path):
    exe = tool_script(tmp_path / "bin", "mytool")
    resolve_tool(str(exe))
    registry = LocalRegistry()
    with registry.transaction() as index:
        index.tools["mytool"].last_checked = "2020-01-01T00:00:00Z"
    assert resolve_tool(str(exe)).cached is False


def test_shim_by_hash_for_a_tool_without_agent(tmp_path):
    exe = plain_script(tmp_path / "bin", "legacy", "echo legacy; exit 2")
    hash_ = sha256_file(exe)
    registry = LocalRegistry()
    shim = minimal(name="legacy", binary={"hash": hash_, "name": "legacy", "version": "1.0"})
    shim_path = registry.shim_path(hash_)
    shim_path.parent.mkdir(parents=True)
    shim_path.write_text(json.dumps(shim))
    resolved = resolve_tool(str(exe))
    assert (resolved.source, resolved.tool.binary.hash) == ("shim", hash_)
    assert resolved.origins["metadata"] == f"shim:{shim_path}"


def test_a_shim_for_another_binary_is_refused(tmp_path):
    exe = plain_script(tmp_path / "bin", "legacy", "exit 2")
    hash_ = sha256_file(exe)
    other = "sha256:" + "0" * 64
    registry = LocalRegistry()
    path = registry.shim_path(hash_)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(minimal(name="legacy", binary={"hash": other, "name": "legacy", "version": "1"}))
    )
    with pytest.raises(NoMetadata):
        resolve_tool(str(exe))


def test_legacy_unversioned_shim_by_name(tmp_path):
    registry = LocalRegistry()
    (registry.data_dir / "shims").mkdir(parents=True)
    (registry.data_dir / "shims" / "nowhere.json").write_text(
        json.dumps(minimal(atip="0.1", name="nowhere"))
    )
    resolved = resolve_tool("nowhere")
    assert (resolved.source, resolved.path, resolved.tool.atip.version) == ("shim", None, "0.1")


def test_inferred_metadata_when_allowed(tmp_path):
    exe = tmp_path / "bin" / "oldtool"
    exe.parent.mkdir()
    exe.write_text(
        f"#!{sys.executable}\n"
        + (
            "import argparse\n"
            "p = argparse.ArgumentParser(description='Frobnicate files.')\n"
            "p.add_argument('--count', type=int, metavar='N', help='how many')\n"
            "p.parse_args()\n"
        )
    )
    exe.chmod(0o755)
    with pytest.raises(NoMetadata):
        resolve_tool(str(exe))
    first = resolve_tool(str(exe), allow_inferred=True)
    assert (first.source, first.tool.trust.source) == ("inferred", "inferred")
    assert first.origins["metadata"].startswith("inferred:")
    count = next(o for o in first.tool.commands[""].options if o.name == "count")
    assert count.type == "integer"
    again = resolve_tool(str(exe))  # no inference needed any more
    assert (again.source, again.cached) == ("inferred", True)
    assert LocalRegistry().read().tools["oldtool"].source == "inferred"


def test_not_found_and_no_metadata(tmp_path):
    with pytest.raises(ToolNotFound):
        resolve_tool("no-such-tool-anywhere")
    with pytest.raises(NoMetadata, match="exited with status 1"):
        resolve_tool(str(plain_script(tmp_path / "bin", "mute", "exit 1")))


def test_override_is_a_merge_patch_and_patterns_layer(tmp_path, monkeypatch):
    exe = tool_script(
        tmp_path / "bin",
        "mytool",
        minimal(
            name="mytool",
            patterns=[
                {"name": "a", "description": "from the tool", "steps": [{"command": "mytool run"}]}
            ],
        ),
    )
    hash_ = sha256_file(exe)
    registry = LocalRegistry()
    override = registry.override_path(hash_)
    override.parent.mkdir(parents=True)
    override.write_text(
        json.dumps(
            {"description": "Overridden", "commands": {"run": {"effects": {"destructive": True}}}}
        )
    )
    user = registry.data_dir / "patterns"
    user.mkdir(parents=True)
    (user / "mytool-team.json").write_text(
        json.dumps(
            {
                "patterns": [
                    {
                        "name": "a",
                        "description": "from the user",
                        "steps": [{"command": "mytool run -v"}],
                    },
                    {
                        "name": "b",
                        "description": "from the user",
                        "steps": [{"command": "mytool run"}],
                    },
                ]
            }
        )
    )
    project = tmp_path / "project" / ".agent-tools" / "patterns"
    project.mkdir(parents=True)
    (project / "mytool.json").write_text(
        json.dumps(
            [{"name": "b", "description": "from the project", "steps": [{"command": "mytool run"}]}]
        )
    )
    (project / "other.json").write_text(
        json.dumps([{"name": "c", "description": "not for mytool", "steps": [{"command": "x"}]}])
    )
    resolved = resolve_tool(str(exe), project_dir=tmp_path / "project")
    tool = resolved.tool
    assert tool.description == "Overridden"
    assert tool.commands["run"].effects.destructive is True
    assert tool.commands["run"].effects.network is False  # merged, not replaced
    assert {p.name: p.description for p in tool.patterns} == {
        "a": "from the user",
        "b": "from the project",
    }
    assert resolved.origins["override"] == str(override)
    assert resolved.origins["pattern:b"] == str(project / "mytool.json")


def test_a_pattern_file_nested_past_the_json_limit_is_left_out(tmp_path):
    """A project's `.agent-tools/patterns` comes with whatever repository is checked out:
    one nested 100 000 deep is skipped like any file that does not parse."""
    exe = tool_script(tmp_path / "bin", "mytool")
    project = tmp_path / "project" / ".agent-tools" / "patterns"
    project.mkdir(parents=True)
    (project / "mytool.json").write_text("[" * 100_000 + "]" * 100_000)
    (project / "mytool-ok.json").write_text(
        json.dumps([{"name": "ok", "description": "kept", "steps": [{"command": "mytool run"}]}])
    )
    resolved = resolve_tool(str(exe), project_dir=tmp_path / "project")
    assert [p.name for p in resolved.tool.patterns] == ["ok"]


def test_partial_discovery_asks_tools_that_support_it_and_cuts_the_others():
    cloud = resolve_tool(str(EXAMPLES / "bin" / "cloudctl"), commands=["dns"])
    assert (cloud.origins["partial"], list(cloud.tool.commands)) == ("tool", ["dns"])
    deploy = resolve_tool(str(EXAMPLES / "bin" / "deploy"), depth=1)
    assert deploy.origins["partial"] == "local"
    assert deploy.tool.omitted.safety_assumption == "unknown"
    assert all(not c.commands for c in deploy.tool.commands.values())


# -- scan ---------------------------------------------------------------------------------


def test_scan_finds_tools_and_reports_unsafe_dirs(tmp_path):
    good = tmp_path / "good"
    tool_script(good, "alpha")
    plain_script(good, "plain")
    shared = tmp_path / "shared"
    tool_script(shared, "beta")
    shared.chmod(0o777)
    report = scan([str(good), str(shared), "relative/bin", str(tmp_path / "missing")])
    assert [f.name for f in report.found] == ["alpha"]
    reasons = {s.path: s.reason for s in report.skipped_dirs}
    assert reasons[str(shared)] == "world-writable"
    assert reasons["relative/bin"] == "relative PATH entry"
    assert str(tmp_path / "missing") in reasons
    assert LocalRegistry().read().tools["alpha"].source == "native"
    everything = scan([str(shared)], allow_unsafe_dirs=True)
    assert [f.name for f in everything.found] == ["beta"]


def test_a_tool_whose_agent_document_is_nested_500_deep_does_not_stop_the_scan(tmp_path):
    """The value 500 arrays deep where a string belongs made jsonschema-rs give up
    ("Recursion limit reached") and the whole scan exit 70; the reader now refuses it
    first, and the other tools are recorded."""
    bin_dir = tmp_path / "bin"
    deep = json.dumps(minimal(name="deep")).replace('"1.0"', "[" * 500 + "]" * 500)
    (bin_dir / "deep").parent.mkdir(parents=True)
    (bin_dir / "deep").write_text(f"#!/bin/sh\necho '{deep}'\n")
    (bin_dir / "deep").chmod(0o755)
    tool_script(bin_dir, "fine")
    result = atip("scan", "--path", str(bin_dir), "--json")
    assert result.exit_code == 0, result.output
    assert [f["name"] for f in envelope_of(result)["result"]["found"]] == ["fine"]


def test_rescan_reuses_what_did_not_change(tmp_path):
    bin_dir = tmp_path / "bin"
    tool_script(bin_dir, "alpha")
    for i in range(5):
        plain_script(bin_dir, f"plain{i}")
    first = scan([str(bin_dir)])
    assert (first.probed, first.reused) == (6, 0)
    counter = LocalRegistry().read().counter
    second = scan([str(bin_dir)])
    assert (second.probed, second.reused) == (0, 6)
    assert LocalRegistry().read().counter == counter  # nothing new, nothing written
    tool_script(bin_dir, "alpha", minimal(name="alpha", version="9"))
    third = scan([str(bin_dir)])
    assert third.probed == 1
    assert LocalRegistry().read().tools["alpha"].version == "9"


def test_a_scanned_tool_resolves_by_name_off_path(tmp_path):
    tool_script(tmp_path / "elsewhere", "hidden-gem")
    scan([str(tmp_path / "elsewhere")])
    resolved = resolve_tool("hidden-gem")
    assert resolved.path == str(tmp_path / "elsewhere" / "hidden-gem")
    assert resolved.cached


def test_first_on_path_wins_and_links_are_probed_once(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    tool_script(first, "dup", minimal(name="dup", version="1"))
    tool_script(second, "dup", minimal(name="dup", version="2"))
    (first / "alias").symlink_to(first / "dup")
    report = scan([str(first), str(second)])
    assert [(f.name, f.version) for f in report.found] == [("dup", "1")]
    assert report.executables == 1


def test_commands_on_the_skip_list_are_never_run(tmp_path):
    marker = tmp_path / "ran"
    bin_dir = tmp_path / "bin"
    for name in ("reboot", "shutdown", "systemctl", "passwd"):
        plain_script(bin_dir, name, f"touch {marker}-{name}")
    (bin_dir / "restart-machine").symlink_to(bin_dir / "reboot")
    report = scan([str(bin_dir)])
    assert report.executables == 0
    assert list(tmp_path.glob("ran-*")) == []


def test_skip_list_is_configurable(tmp_path, monkeypatch):
    monkeypatch.setenv("ATIP_SANDBOX", "none")  # the scripts leave their marks in tmp_path
    bin_dir = tmp_path / "bin"
    for name in ("one", "two", "three"):
        plain_script(bin_dir, name, f"touch {tmp_path}/ran-{name}")
    config = tmp_path / "xdg-config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "config.json").write_text(json.dumps({"scan": {"skip": ["one"]}}))
    result = CliRunner().invoke(cli, ["scan", "--path", str(bin_dir), "--skip", "two"])
    assert result.exit_code == 0
    assert [p.name for p in tmp_path.glob("ran-*")] == ["ran-three"]


def test_a_config_file_nested_too_deeply_is_ignored_like_a_broken_one(tmp_path):
    """json.loads raised RecursionError, which the reader of config.json (meant to shrug
    off a broken file) did not catch: every scan exited 70."""
    bin_dir = tmp_path / "bin"
    tool_script(bin_dir, "alpha")
    config = tmp_path / "xdg-config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    result = CliRunner().invoke(cli, ["scan", "--path", str(bin_dir), "--json"])
    assert result.exit_code == 0, result.output
    assert [f["name"] for f in envelope_of(result)["result"]["found"]] == ["alpha"]


def test_hostile_corpus_is_scanned_within_the_time_bound(tmp_path):
    bin_dir = tmp_path / "bin"
    tool_script(bin_dir, "good1")
    tool_script(bin_dir, "good2", body="trap '' TERM")
    plain_script(bin_dir, "hang", "sleep 60")
    plain_script(bin_dir, "noterm", "trap '' TERM; while :; do sleep 1; done")
    plain_script(bin_dir, "flood", "exec yes")
    plain_script(bin_dir, "stdin", "cat")
    plain_script(bin_dir, "tty", "echo hi > /dev/tty")
    plain_script(bin_dir, "writer", 'touch "$HOME/x" ./y; echo "{}"')
    plain_script(bin_dir, "forker", "sleep 300 & echo '{\"atip\": 1}'")
    plain_script(bin_dir, "binary", "printf '\\377\\376'")
    plain_script(bin_dir, "no-atip", 'echo \'{"name": "x"}\'')
    timeout, jobs = 1.0, 4
    start = time.monotonic()
    report = scan([str(bin_dir)], timeout=timeout, jobs=jobs)
    elapsed = time.monotonic() - start
    assert sorted(f.name for f in report.found) == ["good1", "good2"]
    bound = timeout * math.ceil(report.executables / jobs) + 1.5
    assert elapsed < bound, (elapsed, bound)
    assert not (tmp_path / "y").exists()


# -- command line -------------------------------------------------------------------------


def envelope(*args: str) -> tuple[int, dict]:
    """Exit status and the envelope (Click's runner is no terminal: JSON by default)."""
    result = atip(*args)
    return result.exit_code, envelope_of(result)


@pytest.fixture
def examples_on_path(tmp_path, monkeypatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(mode=0o755)
    for name in ("deploy", "cloudctl"):
        shutil.copy(EXAMPLES / "bin" / name, bin_dir / name)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def test_cli_scan_list_show_refresh_and_compile_by_name(examples_on_path):
    bin_dir = examples_on_path
    code, scanned = envelope("scan", "--path", str(bin_dir), "--json")
    assert code == 0, scanned
    assert {f["name"] for f in scanned["result"]["found"]} == {"deploy", "cloudctl"}
    assert scanned["meta"]["tool"] == "atip.scan"
    _, listed = envelope("list")
    assert set(listed["result"]) == {"deploy", "cloudctl"}
    shown = atip("show", "deploy", "--text")
    assert "destroy" in shown.stdout
    assert "⚠️ DESTRUCTIVE" in shown.stdout
    _, partial = envelope("show", "cloudctl", "--depth", "1")
    assert atipkit.from_dict(partial["result"]).partial
    code, out = envelope("show", "deploy", "--commands", "nope")
    assert (code, out["error"]["code"]) == (2, "E1002")
    assert out["error"]["details"]["param"] == "commands"
    refreshed = atip("refresh", "--text")
    assert refreshed.stdout.splitlines() == ["cloudctl: 0.9.0 (native)", "deploy: 2.1.0 (native)"]
    _, compiled = envelope("compile", "deploy", "--provider", "mcp")
    assert "deploy_destroy" in [t["name"] for t in compiled["result"]]
    code, missing = envelope("compile", "not-a-tool-or-file")
    assert (code, missing["error"]["code"]) == (10, "E3001")
    assert "no executable" in missing["error"]["message"]


def test_scan_text_is_a_summary_with_notes_on_stderr_and_json_is_the_report(
    examples_on_path, tmp_path
):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    plain_script(examples_on_path, "plain", "echo plain")  # speaks no ATIP
    result = atip("scan", "--path", f"{examples_on_path}:{shared}", "--text")
    assert result.exit_code == 0
    first, *rows = result.stdout.splitlines()
    assert first.startswith("3 executables in ")
    assert first.endswith(" s: 3 probed, 0 unchanged")
    assert rows == [
        "  2  speak ATIP   cloudctl, deploy",
        "  0  have a shim",
        "  0  inferred     by earlier runs",
        "  1  no metadata  atip scan --infer describes them",
        'Next: atip search "what to do" finds commands; atip show NAME shows one tool; '
        "atip list lists them all",
    ]
    assert result.stderr.splitlines() == [f"skipped {shared}: world-writable"]
    (examples_on_path / "plain").unlink()
    quiet = atip("scan", "--path", f"{examples_on_path}:{shared}", "--text", "-q")
    assert quiet.stderr == ""
    code, out = envelope("scan", "--path", f"{examples_on_path}:{shared}")
    assert code == 0
    report = out["result"]
    assert set(report) == {
        "found",
        "skipped_dirs",
        "executables",
        "probed",
        "reused",
        "seconds",
        "inferred",
        "inference",
        "renamed",
        "failures",
        "isolation",
        "left",
        "complete",
    }
    assert (report["left"], report["complete"]) == ([], True)
    assert report["renamed"] == []
    assert (report["inferred"], report["inference"]) == (0, None)  # no --infer
    assert (report["failures"], report["isolation"]) == ([], None)  # nothing was run
    assert report["skipped_dirs"] == [{"path": str(shared), "reason": "world-writable"}]
    assert (report["probed"], report["reused"]) == (0, 2)


def test_scan_probe_timeout_bounds_each_probe(tmp_path):
    bin_dir = tmp_path / "bin"
    plain_script(bin_dir, "hang", "sleep 30")
    start = time.monotonic()
    code, out = envelope("scan", "--path", str(bin_dir), "--probe-timeout", "0.5")
    assert code == 0
    assert out["result"]["found"] == []
    assert out["result"]["probed"] == 1
    assert time.monotonic() - start < 0.5 + 2 * BUSY  # the process's start, not the 30 s sleep


def test_a_probe_timeout_below_the_budgets_minimum_still_probes(tmp_path):
    bin_dir = tmp_path / "bin"
    plain_script(bin_dir, "quick", "exit 1")
    for infer in (False, True):
        report = atipkit.discover(dirs=[str(bin_dir)], timeout=0.1, infer=infer, refresh=True)
        assert (report.probed, report.left) == (1, [])


def test_list_text_and_entries_that_name_their_source(examples_on_path):
    assert envelope("list")[1]["result"] == {}
    atip("scan", "--path", str(examples_on_path))
    text = atip("list", "--text").stdout.splitlines()
    assert text == [
        f"cloudctl  native  0.9.0       {examples_on_path / 'cloudctl'}",
        f"deploy    native  2.1.0       {examples_on_path / 'deploy'}",
    ]
    entry = envelope("list")[1]["result"]["deploy"]
    assert entry["source"] == "native"  # stated, though the registry file leaves it out
    assert entry["hash"] == sha256_file(examples_on_path / "deploy")


def test_a_broken_registry_file_is_a_data_format_error(tmp_path):
    registry = LocalRegistry()
    registry.data_dir.mkdir(parents=True)
    registry.index_path.write_text("{not json")
    code, out = envelope("list")
    assert (code, out["error"]["code"]) == (65, "E1010")
    assert str(registry.index_path) in out["error"]["message"]
    code, out = envelope("refresh")
    assert (code, out["error"]["code"]) == (65, "E1010")


@pytest.mark.parametrize("override", ["{not json", '{"version": 3}'])
def test_an_override_that_breaks_the_metadata_is_a_data_format_error(tmp_path, override):
    exe = tool_script(tmp_path / "bin", "mytool")
    path = LocalRegistry().override_path(sha256_file(exe))
    path.parent.mkdir(parents=True)
    path.write_text(override)
    code, out = envelope("show", str(exe))
    assert (code, out["error"]["code"]) == (65, "E1010")
    assert "an override or pattern file makes its metadata invalid" in out["error"]["message"]
    assert out["error"]["details"]["overrides"] == str(path.parent)


def test_show_result_is_the_document_and_where_it_came_from_is_a_note(examples_on_path):
    text = atip("show", "deploy", "--text")
    assert text.stdout.splitlines()[0] == (
        "deploy 2.1.0 — Deploy services to environments (an ATIP 0.6 example)"
    )
    assert "source: native; " + str(examples_on_path / "deploy") in text.stderr
    assert "  metadata: probe:" in text.stderr
    code, out = envelope("show", "deploy")
    assert code == 0
    doc = atipkit.from_dict(out["result"])
    assert doc == atipkit.loads(
        subprocess.run([examples_on_path / "deploy", "--agent"], capture_output=True).stdout
    )
    saved = atip("show", "deploy", "--plain").stdout  # `--plain > FILE` saves the document
    assert saved == atipkit.dumps(doc).decode() + "\n"
    again = atip("show", "deploy", "--text")
    assert "source: native (cached); " in again.stderr
    partial = atip("show", "cloudctl", "--depth", "1", "--text").stdout.splitlines()
    assert partial[1].startswith("partial: ")


def test_show_errors_say_what_was_missing_and_what_to_try(tmp_path):
    code, out = envelope("show", "no-such-tool-anywhere")
    assert (code, out["error"]["code"], out["error"]["category"]) == (10, "E3001", "state")
    mute = plain_script(tmp_path / "bin", "mute", "exit 1")
    code, out = envelope("show", str(mute))
    assert (code, out["error"]["code"]) == (10, "E3011")
    assert out["error"]["details"]["probe"] == "exit-code"
    assert out["error"]["suggestion"]["example"] == f"atip show {mute} --infer"
    text = atip("show", str(mute), "--text")
    assert text.exit_code == 10
    assert text.stdout == ""
    assert text.stderr.splitlines()[0].startswith(f"error: {mute} has no ATIP metadata")


def test_show_infer_describes_a_tool_from_its_help(tmp_path):
    exe = tmp_path / "bin" / "oldtool"
    exe.parent.mkdir()
    exe.write_text(
        f"#!{sys.executable}\n"
        "import argparse\n"
        "p = argparse.ArgumentParser(description='Frobnicate files.')\n"
        "p.add_argument('--count', type=int, metavar='N', help='how many')\n"
        "p.parse_args()\n"
    )
    exe.chmod(0o755)
    code, out = envelope("show", str(exe), "--infer")
    assert code == 0
    assert out["result"]["trust"]["source"] == "inferred"
    assert out["result"]["description"] == "Frobnicate files."


def test_a_broken_registries_file_is_a_warning_not_a_failure(tmp_path):
    exe = plain_script(tmp_path / "bin", "legacy", "exit 2")
    registry = LocalRegistry()
    (registry.data_dir / "shims").mkdir(parents=True)
    (registry.data_dir / "shims" / "legacy.json").write_text(
        json.dumps(minimal(atip="0.1", name="legacy"))
    )
    config = tmp_path / "xdg-config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "registries.json").write_text("{not json")
    code, out = envelope("show", str(exe))
    assert code == 0
    assert out["result"]["name"] == "legacy"
    [warning] = out["meta"]["warnings"]
    assert warning.startswith("remote registries were not asked: ")
    assert "registries.json" in warning


def test_refresh_reports_what_failed_and_fails_with_the_report(examples_on_path):
    atip("scan", "--path", str(examples_on_path))
    (examples_on_path / "cloudctl").unlink()
    (examples_on_path / "deploy").write_text("#!/bin/sh\nexit 1\n")
    code, out = envelope("refresh")
    assert (code, out["error"]["code"]) == (10, "E3001")  # not found, of two kinds
    assert out["error"]["message"] == "2 of 2 tool(s) could not be refreshed: cloudctl, deploy"
    report = out["result"]
    assert report["refreshed"] == []
    assert [(f["name"], f["error"]["code"]) for f in report["failed"]] == [
        ("cloudctl", "E3001"),  # gone
        ("deploy", "E3011"),  # no --agent any more
    ]
    text = atip("refresh", "deploy", "--text")
    assert text.exit_code == 10
    assert text.stdout == ""
    assert text.stderr.splitlines()[0].startswith("deploy: ")
    assert "error: 1 of 1 tool(s) could not be refreshed: deploy [E3011]" in text.stderr


def test_eight_processes_scanning_and_refreshing_at_once(tmp_path):
    import subprocess
    import sys

    dirs = []
    for p in range(8):
        directory = tmp_path / f"bin{p}"
        for t in range(3):
            tool_script(directory, f"p{p}t{t}")
        dirs.append(directory)
    env = dict(os.environ)
    atip = [sys.executable, "-m", "atipkit.cli"]
    procs = [
        subprocess.Popen(
            [*atip, "scan", "--path", str(d)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for d in dirs
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    env["PATH"] = os.pathsep.join([*map(str, dirs), env["PATH"]])
    procs = [
        subprocess.Popen(
            [*atip, "refresh"] if p % 2 else [*atip, "scan", "--refresh", "--path", str(dirs[p])],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for p in range(8)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    index = LocalRegistry().read()
    assert sorted(index.tools) == sorted(f"p{p}t{t}" for p in range(8) for t in range(3))
    assert all(entry.source == "native" and entry.hash for entry in index.tools.values())
