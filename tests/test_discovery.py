"""Resolution and scanning against real executables written by the tests."""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import atipkit
from atipkit.cli import cli
from atipkit.registry.local import LocalRegistry
from atipkit.resolve import NoMetadata, ToolNotFound, resolve_tool
from atipkit.scan import scan
from atipkit.trust.digest import sha256_file
from tests.helpers import EXAMPLES, minimal


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
    assert first.tool.commands[""].options[0].type == "integer"
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


def test_skip_list_is_configurable(tmp_path):
    bin_dir = tmp_path / "bin"
    for name in ("one", "two", "three"):
        plain_script(bin_dir, name, f"touch {tmp_path}/ran-{name}")
    config = tmp_path / "xdg-config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "config.json").write_text(json.dumps({"scan": {"skip": ["one"]}}))
    result = CliRunner().invoke(cli, ["scan", "--path", str(bin_dir), "--skip", "two"])
    assert result.exit_code == 0
    assert [p.name for p in tmp_path.glob("ran-*")] == ["ran-three"]


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


def test_cli_scan_list_show_refresh_and_compile_by_name(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(mode=0o755)
    for name in ("deploy", "cloudctl"):
        shutil.copy(EXAMPLES / "bin" / name, bin_dir / name)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    runner = CliRunner()
    scanned = runner.invoke(cli, ["scan", "--path", str(bin_dir), "--json"])
    assert scanned.exit_code == 0, scanned.output
    assert {f["name"] for f in json.loads(scanned.stdout)["found"]} == {"deploy", "cloudctl"}
    listed = json.loads(runner.invoke(cli, ["list", "--json"]).stdout)
    assert set(listed) == {"deploy", "cloudctl"}
    shown = runner.invoke(cli, ["show", "deploy"])
    assert "destroy" in shown.stdout
    assert "⚠️ DESTRUCTIVE" in shown.stdout
    doc = atipkit.loads(runner.invoke(cli, ["show", "cloudctl", "--depth", "1", "--json"]).stdout)
    assert doc.partial
    assert runner.invoke(cli, ["show", "deploy", "--commands", "nope"]).exit_code == 2
    refreshed = runner.invoke(cli, ["refresh"])
    assert refreshed.stdout.splitlines() == ["cloudctl: 0.9.0 (native)", "deploy: 2.1.0 (native)"]
    compiled = json.loads(runner.invoke(cli, ["compile", "deploy", "--provider", "mcp"]).stdout)
    assert "deploy_destroy" in [t["name"] for t in compiled]
    missing = runner.invoke(cli, ["compile", "not-a-tool-or-file"])
    assert missing.exit_code == 2
    assert "no executable" in missing.stderr


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
