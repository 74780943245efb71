"""A registry's patterns (RFC 0.6 §4.4.1) in tool resolution, against a real nginx:
validated as pattern files are, read from the cache only, layered between the tool's own
and the local pattern files; hostile indexes refused without breaking resolution."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from atipkit.registry.config import Defaults, RemoteRegistry, Settings
from atipkit.registry.remote import MAX_REGISTRY_PATTERNS, RemoteRegistries
from atipkit.resolve import Resolved, resolve_tool
from tests.helpers import atip, envelope_of
from tests.servers import deep, nginx

pytestmark = pytest.mark.usefixtures("isolated_home")

# §3.9's own example, as a registry serves it for `git`
FEATURE_BRANCH = {
    "name": "feature-branch-workflow",
    "description": "Create feature branch, make changes, open PR",
    "steps": [
        {"command": "git checkout -b {branch}", "description": "Create branch"},
        {"command": "gh pr create --fill", "description": "Open PR"},
    ],
    "variables": {"branch": {"type": "string", "description": "Branch name"}},
    "executable": False,
}
RELEASE = {"name": "release", "description": "Tag it", "steps": [{"command": "git tag v1"}]}


def native_git(tmp_path: Path) -> Path:
    """A `git` that answers `--agent` with one pattern of its own, `release`."""
    document = {
        "atip": {"version": "0.6"},
        "name": "git",
        "version": "2.0",
        "description": "Version control",
        "commands": {"tag": {"description": "Tag", "effects": {"network": False}}},
        "patterns": [{**RELEASE, "description": "The tool's own"}],
    }
    path = tmp_path / "bin" / "git"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(document)}\nEOF\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def serve(root: Path, index: Any) -> None:
    """A registry at `root` whose manifest names its patterns index `index`."""
    manifest = {"registry": {"name": "org"}, "endpoints": {"patterns": "/patterns/index.json"}}
    (root / ".well-known").mkdir(parents=True)
    (root / ".well-known" / "atip-registry.json").write_text(json.dumps(manifest))
    (root / "patterns").mkdir()
    raw = index if isinstance(index, str) else json.dumps(index)
    (root / "patterns" / "index.json").write_text(raw)


def resolved_with(tmp_path: Path, index: Any, **options: Any) -> tuple[Resolved, list, str]:
    """`git` resolved with a registry serving `index`, after `refresh_patterns`: the
    resolution, what the refresh reported, and the index's URL."""
    git = native_git(tmp_path)
    serve(tmp_path / "site", index)
    with nginx(tmp_path / "site", tmp_path / "nginx") as org:
        registry = RemoteRegistry(url=org.url, name="org", **options)
        settings = Settings(registries=[registry], defaults=Defaults())
        with RemoteRegistries(settings, cache_dir=tmp_path / "cache") as remote:
            attempts = remote.refresh_patterns()
            resolved = resolve_tool(str(git), remote=remote)
    return resolved, attempts, f"{org.url}/patterns/index.json"


def test_registry_patterns_are_layered_from_the_cache_between_the_tool_and_local_files(
    tmp_path, monkeypatch
):
    """Resolution asks nobody: before `atip registry fetch` the registry's patterns are
    not there; after it they are, over the tool's own and under the user's files."""
    git = native_git(tmp_path)
    serve(tmp_path / "site", {"version": "1", "tools": {"git": [FEATURE_BRANCH, RELEASE]}})
    with nginx(tmp_path / "site", tmp_path / "nginx") as org:
        monkeypatch.setenv("ATIP_REGISTRIES", org.url)
        before = resolve_tool(str(git))
        assert [p.name for p in before.tool.patterns] == ["release"]
        assert org.requests() == []  # resolving asked the registry nothing
        fetched = envelope_of(atip("registry", "fetch", "a" * 64))["result"]
        assert fetched["patterns"][0]["outcome"] == "found"
        asked = len(org.requests())
        resolved = resolve_tool(str(git), refresh=True)
        assert len(org.requests()) == asked  # still nothing: the cache
    index = f"{org.url}/patterns/index.json"
    assert [(p.name, p.description) for p in resolved.tool.patterns] == [
        ("release", "Tag it"),  # the registry's replaces the tool's own of its name
        ("feature-branch-workflow", FEATURE_BRANCH["description"]),
    ]
    assert resolved.origins["pattern:feature-branch-workflow"] == index
    assert resolved.origins["pattern:release"] == index
    mine = tmp_path / "data" / "agent-tools" / "patterns"
    mine.mkdir(parents=True)
    (mine / "git.json").write_text(json.dumps([{**RELEASE, "description": "Mine"}]))
    layered = resolve_tool(str(git))  # the user's file replaces the registry's
    assert [p.description for p in layered.tool.patterns if p.name == "release"] == ["Mine"]
    assert layered.origins["pattern:release"] == str(mine / "git.json")


_VALID = {**RELEASE, "name": "valid"}


@pytest.mark.parametrize(
    ("tools", "kept", "note"),
    [
        ({"git": [{"name": "no-steps", "description": "x"}, _VALID]}, ["valid"], "steps"),
        ({"git": [{**_VALID, "steps": "git tag"}, _VALID]}, ["valid"], "[0].steps"),
        ({"git": [{**_VALID, "executable": "yes"}, _VALID]}, ["valid"], "[0].executable"),
        ({"git": ["release", 7, None, _VALID]}, ["valid"], "[0]"),
        ({"git": [{**_VALID, "variables": {"v": {"type": "regex("}}}]}, [], "variables"),
        ({"git": {"name": "valid"}}, [], "not a list of patterns"),
        ({"git": [_VALID] * (MAX_REGISTRY_PATTERNS + 1)}, [], "more than 256"),
        ([_VALID], [], "not a patterns index"),
    ],
)
def test_hostile_pattern_indexes_are_refused_and_resolution_goes_on(tmp_path, tools, kept, note):
    """Each pattern is validated as a pattern file is: a bad one is refused with its
    problem (in `origins`), the others kept; a list or index of the wrong shape is
    refused whole. The tool still resolves, with its own pattern."""
    index = {"version": "1", "tools": tools} if isinstance(tools, dict) else tools
    resolved, _, url = resolved_with(tmp_path, index)
    assert [p.name for p in resolved.tool.patterns] == ["release", *kept]
    refused = resolved.origins[f"rejected:{url}"]
    assert note in refused


@pytest.mark.parametrize("hostile", [deep(200), "{" * 10, '{"tools": ' + "[" * 70 + "]" * 70 + "}"])
def test_an_index_too_deep_or_broken_is_never_cached_nor_breaks_resolution(tmp_path, hostile):
    resolved, [attempt], _ = resolved_with(tmp_path, hostile)
    assert attempt.outcome == "rejected"
    assert [p.name for p in resolved.tool.patterns] == ["release"]


@pytest.mark.parametrize(("trust", "executable"), [("medium", False), ("high", True)])
def test_a_registry_pattern_is_executable_only_from_a_registry_trusted_high(
    tmp_path, trust, executable
):
    """§3.9: an agent running a pattern MUST respect trust levels."""
    index = {"tools": {"git": [{**RELEASE, "name": "run", "executable": True}]}}
    resolved, _, url = resolved_with(tmp_path, index, trust=trust)
    [run] = [p for p in resolved.tool.patterns if p.name == "run"]
    assert run.executable is executable
    note = resolved.origins.get(f"rejected:{url}", "")
    assert ("advisory here" in note) is not executable
