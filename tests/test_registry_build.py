"""`atip registry build`: layout, verbatim bytes, signatures, catalog and coverage computed
from real shims, refusals that leave DEST whole (each with its exit status and error),
determinism, and the output for people."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner, Result

from atipkit.cli import cli
from atipkit.model import (
    UNSET,
    AtipVersion,
    Binary,
    Command,
    Effects,
    FilesystemEffects,
    Option,
    Tool,
    Trust,
    dumps,
)
from atipkit.registry import layout
from atipkit.registry.build import BuildOptions, InvalidSource, build_registry
from atipkit.registry.catalog import ShimInfo, build_catalog, build_coverage, version_key
from atipkit.trust.signatures import minisign_sign, minisign_verify
from tests.helpers import EXAMPLES, SIGSTORE, envelope_of, minisign_keys, needs_sigstore

CURL = EXAMPLES / "shims" / "2bf33383566fa5fcf7b6a305ab882a7fbe4dc673a542349710d60dae906eb852.json"
EPOCH = "1768435200"  # 2026-01-15T00:00:00Z
UPDATED = "2026-01-15T00:00:00Z"


@pytest.fixture(autouse=True)
def reproducible(isolated_home, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)


# -- shims to build from (the other registry tests use these too) ---------------------------


def make_shim(
    name: str,
    version: str,
    platform: str | None = None,
    *,
    description: str | None = None,
    source: str = "community",
    homepage: str | None = None,
    salt: str = "",
) -> tuple[str, bytes]:
    """A valid shim made with the model, for a made-up binary: (hex, bytes)."""
    hex_ = hashlib.sha256(f"{name}/{version}/{platform}/{salt}".encode()).hexdigest()
    tool = Tool(
        atip=AtipVersion(version="0.6"),
        name=name,
        version=version,
        description=description or f"{name} does things",
        homepage=homepage or UNSET,
        binary=Binary(
            hash=f"sha256:{hex_}", name=name, version=version, platform=platform or UNSET
        ),
        trust=Trust(source=source),  # type: ignore[arg-type]
        commands={
            "": Command(
                description=f"Run {name} on a file",
                options=[
                    Option(
                        name="verbose",
                        flags=["-v", "--verbose"],
                        type="boolean",
                        description="Say more",
                    )
                ],
                effects=Effects(network=False, filesystem=FilesystemEffects(write=False)),
            ),
            "push": Command(
                description=f"Push {name} results to a server",
                effects=Effects(network=True, destructive=True, reversible=False),
            ),
        },
    )
    return hex_, dumps(tool) + b"\n"


def put(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def build(*args: str) -> Result:
    """`atip registry build ARGS`: the JSON envelope on stdout unless ARGS ask for text."""
    return CliRunner().invoke(cli, ["registry", "build", *args], catch_exceptions=False)


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def read_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


@pytest.fixture
def src(tmp_path) -> Path:
    """curl from examples, jq on three platforms and two versions, a script without a
    platform, in the crawler's layout, flat, and under a made-up name."""
    folder = tmp_path / "src"
    put(folder, CURL.name, CURL.read_bytes())
    for version, platforms in (
        ("1.6", ["linux-amd64"]),
        ("1.7.1", ["linux-amd64", "darwin-arm64"]),
    ):
        for platform in platforms:
            hex_, data = make_shim(
                "jq",
                version,
                platform,
                description=f"Command-line JSON processor {version}",
                homepage="https://jqlang.org",
            )
            put(folder, f"shims/sha256/{hex_}.json", data)
    hex_, data = make_shim("mkrel", "0.3", description="Release helper script", source="org")
    put(folder, "hand-made/mkrel.json", data)
    return folder


# -- layout ----------------------------------------------------------------------------------


def test_layout_bytes_verbatim_and_manifest(src, tmp_path):
    dest = tmp_path / "site"
    result = build(
        str(src),
        str(dest),
        "--name",
        "Acme tools",
        "--url",
        "https://atip.acme.test/r",
        "--signer",
        "shims@acme.test=https://accounts.google.com",
        "--text",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"built {dest.resolve()}: 5 shims of 3 tools, 0 signatures (updated {UPDATED})\n"
    )
    files = tree(dest)
    sources = {p.name: p.read_bytes() for p in src.rglob("*.json")}
    shim_files = {k for k in files if k.startswith("shims/sha256/")}
    assert len(shim_files) == 5
    for rel in shim_files:  # named by binary.hash, bytes as in SRC
        data = files[rel]
        hex_ = json.loads(data)["binary"]["hash"].removeprefix("sha256:")
        assert rel == f"shims/sha256/{hex_}.json"
        assert data in sources.values()
    assert files[f"shims/sha256/{CURL.name}"] == CURL.read_bytes()
    assert set(files) - shim_files == {
        ".well-known/atip-registry.json",
        "shims/index.json",
        "coverage.json",
        "index.html",
    }
    manifest = read_json(dest / layout.MANIFEST)
    assert manifest == {
        "atip": {"version": "0.6"},
        "registry": {
            "name": "Acme tools",
            "url": "https://atip.acme.test/r",
            "type": "static",
            "version": "2026.01.15",
        },
        "endpoints": {
            "shims": "/shims/sha256/{hash}.json",
            "signatures": "/shims/sha256/{hash}.json.bundle",
            "catalog": "/shims/index.json",
            "coverage": "/coverage.json",
        },
        "trust": {
            "requireSignatures": False,
            "signers": [{"identity": "shims@acme.test", "issuer": "https://accounts.google.com"}],
        },
    }
    parsed = msgspec.convert(manifest, layout.RegistryManifest)  # what the client reads
    assert parsed.shim_endpoint(CURL.stem) == f"/shims/sha256/{CURL.name}"
    assert all(oct(p.stat().st_mode)[-3:] == "644" for p in dest.rglob("*") if p.is_file())
    assert oct(dest.stat().st_mode)[-3:] == "755"


@needs_sigstore
def test_signatures_go_beside_their_shim_renamed(src, tmp_path):
    secret, public = minisign_keys(tmp_path)
    jq = next((src / "shims" / "sha256").glob("*.json"))
    minisign_sign(jq, secret)  # a real signature over the source bytes
    bundle = (SIGSTORE / "production-v03-message-gha" / "bundle.sigstore.json").read_bytes()
    put(src, f"{CURL.name}.sigstore.json", bundle)
    put(src, "hand-made/mkrel.json.sig", b"-----BEGIN SSH SIGNATURE-----\n")
    put(src, "stray.json.minisig", b"untrusted comment: nothing to sign\n")
    dest = tmp_path / "site"
    result = build(str(src), str(dest), "--json")
    assert result.exit_code == 0, result.output
    answer = envelope_of(result)
    report = answer["result"]
    assert report["signatures"] == 3
    assert [(w["file"], w["code"]) for w in report["warnings"]] == [
        ("stray.json.minisig", "build.orphan-signature")
    ]
    [warned] = answer["meta"]["warnings"]  # the same finding, one line, for any reader
    assert warned.startswith("stray.json.minisig: ")
    assert warned.endswith(report["warnings"][0]["message"])
    shims = dest / "shims" / "sha256"
    assert (shims / f"{CURL.name}.bundle").read_bytes() == bundle
    assert not list(shims.glob("*.sigstore*"))
    assert minisign_verify(shims / jq.name, str(public)).ok  # bytes verbatim: it verifies
    mkrel = next(p for p in shims.glob("*.json") if b'"mkrel"' in p.read_bytes())
    assert Path(f"{mkrel}.sig").read_bytes() == b"-----BEGIN SSH SIGNATURE-----\n"
    assert sorted(p.name.split(".", 1)[1] for p in shims.iterdir()) == [
        *["json"] * 5,
        "json.bundle",
        "json.minisig",
        "json.sig",
    ]


# -- catalog and coverage --------------------------------------------------------------------


def test_catalog_is_computed_from_the_shims(src, tmp_path):
    dest = tmp_path / "site"
    assert build(str(src), str(dest)).exit_code == 0
    catalog = read_json(dest / layout.CATALOG)
    jq = {
        h: json.loads((dest / "shims" / "sha256" / f"{h}.json").read_bytes())["binary"]
        for h in (p.stem for p in (src / "shims" / "sha256").glob("*.json"))
    }
    by_key = {(b["version"], b["platform"]): b["hash"] for b in jq.values()}
    assert catalog == {
        "version": "1",
        "updated": UPDATED,
        "tools": {
            "curl": {
                "description": "Transfer data from or to a server",
                "versions": {"8.4.0": {"darwin-arm64": f"sha256:{CURL.stem}"}},
            },
            "jq": {
                "description": "Command-line JSON processor 1.7.1",  # the newest version's
                "homepage": "https://jqlang.org",
                "versions": {
                    "1.6": {"linux-amd64": by_key["1.6", "linux-amd64"]},
                    "1.7.1": {
                        "darwin-arm64": by_key["1.7.1", "darwin-arm64"],
                        "linux-amd64": by_key["1.7.1", "linux-amd64"],
                    },
                },
            },
            "mkrel": {
                "description": "Release helper script",
                "versions": {"0.3": {"any": f"sha256:{make_shim('mkrel', '0.3')[0]}"}},
            },
        },
        "totalShims": 5,
    }


def test_versions_in_natural_order_and_duplicates_warned(tmp_path):
    src = tmp_path / "src"
    for version in ("1.10", "1.9", "1.2"):
        put(src, f"{version}.json", make_shim("tool", version, "linux-amd64")[1])
    twins = sorted([make_shim("tool", "1.9", "linux-amd64", salt=s) for s in ("a", "b")])
    for hex_, data in twins:
        put(src, f"{hex_}.json", data)
    dest = tmp_path / "site"
    result = build(str(src), str(dest), "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # JSON output: warnings are in the envelope, not on stderr
    versions = read_json(dest / layout.CATALOG)["tools"]["tool"]["versions"]
    assert list(versions) == ["1.2", "1.9", "1.10"]
    assert version_key("1.10") > version_key("1.9") > version_key("1.2")
    # three shims for tool 1.9 linux-amd64: the smallest hash is listed, all are served
    listed = min([make_shim("tool", "1.9", "linux-amd64")[0]] + [h for h, _ in twins])
    assert versions["1.9"] == {"linux-amd64": f"sha256:{listed}"}
    answer = envelope_of(result)
    warnings = answer["result"]["warnings"]
    assert [w["code"] for w in warnings] == ["build.duplicate"]
    assert "tool 1.9 (linux-amd64) has 3 shims" in warnings[0]["message"]
    [warned] = answer["meta"]["warnings"]
    assert warned == f"{warnings[0]['file']}: $.binary: {warnings[0]['message']}"
    for_people = build(str(src), str(dest), "--text")  # up to date, and still warned
    assert for_people.stdout.startswith("up to date: ")
    assert for_people.stderr == f"warning: {warned}\n"
    assert len(list((dest / "shims" / "sha256").glob("*.json"))) == 5
    assert read_json(dest / layout.CATALOG)["totalShims"] == 5


def test_coverage_counts_tools_and_lists_what_is_missing(src, tmp_path):
    hex_, data = make_shim("rg", "14.1", "linux-amd64", source="inferred")
    put(src, f"{hex_}.json", data)
    dest = tmp_path / "site"
    platforms = ["linux-amd64", "darwin-arm64", "windows-amd64", "linux-amd64"]  # a repeat
    args = [a for p in platforms for a in ("--platform", p)]
    assert build(str(src), str(dest), *args).exit_code == 0
    assert read_json(dest / layout.COVERAGE) == {
        "coverage": {
            "tracked_tools": 4,
            "total_shims": 6,
            "platforms": {"any": 1, "darwin-arm64": 2, "linux-amd64": 2},
            "by_source": {"community": 2, "inferred": 1, "org": 1},
            "missing": [
                {"name": "curl", "platforms": ["linux-amd64", "windows-amd64"]},
                {"name": "jq", "platforms": ["windows-amd64"]},
                {"name": "rg", "platforms": ["darwin-arm64", "windows-amd64"]},
            ],  # mkrel has a platform-independent shim: it misses nothing
        }
    }
    # without --platform: every platform some shim names
    assert build(str(src), str(dest)).exit_code == 0
    assert read_json(dest / layout.COVERAGE)["coverage"]["missing"] == [
        {"name": "curl", "platforms": ["linux-amd64"]},
        {"name": "rg", "platforms": ["darwin-arm64"]},
    ]


def test_catalog_and_coverage_functions_are_pure():
    shims = [
        ShimInfo(hash=f"sha256:{c * 64}", name=n, version=v, platform=p, source=s)
        for c, n, v, p, s in (
            ("a", "x", "2.0", "linux-amd64", "vendor"),
            ("b", "x", "10.0", "linux-arm64", "community"),
            ("c", "y", "1", "linux-amd64", "community"),
        )
    ]
    catalog, duplicates = build_catalog(shims, updated=UPDATED)
    assert build_catalog(list(reversed(shims)), updated=UPDATED) == (catalog, duplicates)
    assert list(catalog["tools"]["x"]["versions"]) == ["2.0", "10.0"]
    coverage = build_coverage(shims, ["linux-amd64"])["coverage"]
    assert coverage["by_source"] == {"community": 2}  # x's newest shim (10.0) is community
    assert coverage["missing"] == []
    assert build_coverage(shims)["coverage"]["missing"] == [
        {"name": "y", "platforms": ["linux-arm64"]}
    ]


# -- refusals --------------------------------------------------------------------------------


def test_invalid_shims_exit_65_with_file_and_path_and_dest_untouched(src, tmp_path):
    dest = tmp_path / "site"
    assert build(str(src), str(dest)).exit_code == 0
    before = tree(dest)
    mtimes = {p: p.stat().st_mtime_ns for p in dest.rglob("*")}
    bad = json.loads(make_shim("broken", "1.0", "linux-amd64")[1])
    bad["commands"][""]["options"][0]["flags"] = ["verbose"]
    put(src, "bad/broken.json", json.dumps(bad).encode())
    put(src, "notes.json", b'{"todo": ')
    metadata = json.loads(make_shim("native", "1.0")[1])
    del metadata["binary"]
    put(src, "native.json", json.dumps(metadata).encode())
    result = build(str(src), str(dest), "--text")
    assert result.exit_code == 65
    lines = result.stdout.splitlines()  # the report: one line a problem
    assert len(lines) == 3
    assert any(
        line.startswith('bad/broken.json: $.commands[""].options[0].flags') for line in lines
    ), lines
    assert any(line.startswith("notes.json: line 1, column 10") for line in lines)
    assert any(line.startswith("native.json: $: not a shim") for line in lines)
    assert result.stderr.splitlines()[0] == (
        f"error: 3 problems in {src}; {dest} left as it was [E1003]"
    )

    refused = build(str(src), str(dest))  # the same failure for machines
    assert refused.exit_code == 65
    answer = envelope_of(refused)
    assert answer["ok"] is False
    assert (answer["error"]["code"], answer["error"]["exit_code"]) == ("E1003", 65)
    assert answer["error"]["details"] == {"problems": 3}
    assert answer["result"]["ok"] is False
    assert answer["result"]["dest"] == str(dest)
    assert sorted(e["file"] for e in answer["result"]["errors"]) == [
        "bad/broken.json",
        "native.json",
        "notes.json",
    ]
    assert tree(dest) == before
    assert {p: p.stat().st_mtime_ns for p in dest.rglob("*")} == mtimes
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no debris


ORG_POLICY = {
    "policy": {
        "version": "1",
        "organization": "Acme Corp",
        "approval": {"mode": "allowlist", "note": "Only shims in this registry are approved"},
        "trust": {"requireSignatures": True, "allowedSigners": ["secops@acme.com"]},
        "execution": {"requireConfirmation": {"destructive": True}, "auditAllCalls": True},
    }
}
RELEASE = {
    "name": "release",
    "description": "Tag and push a release",
    "steps": [{"command": "git tag {version}"}, {"command": "git push origin {version}"}],
    "variables": {"version": {"description": "The version", "type": "string"}},
}


def test_a_policy_and_patterns_are_served_beside_the_shims(src, tmp_path):
    """§4.8's policy.json (the RFC's own example) is published verbatim, and pattern
    files become patterns/index.json (§4.4.1); the manifest names both, and neither is
    taken for a shim."""
    policy = put(src, "policy.json", json.dumps(ORG_POLICY, indent=1).encode())
    put(src, "patterns/git.json", json.dumps([RELEASE]).encode())
    other = {**RELEASE, "name": "hotfix", "description": "Branch for a hotfix"}
    put(src, "patterns/team-git.json", json.dumps({"tool": "git", "patterns": [other]}).encode())
    dest = tmp_path / "site"
    result = build(str(src), str(dest))
    assert result.exit_code == 0, result.output
    assert (dest / layout.POLICY).read_bytes() == policy.read_bytes()
    index = read_json(dest / layout.PATTERNS)
    assert index == {"version": "1", "updated": UPDATED, "tools": {"git": [RELEASE, other]}}
    manifest = msgspec.convert(read_json(dest / layout.MANIFEST), layout.RegistryManifest)
    assert (manifest.endpoints.patterns, manifest.endpoints.policy) == (
        "/patterns/index.json",
        "/policy.json",
    )
    assert envelope_of(build(str(src), str(tmp_path / "again")))["result"]["shims"] == 5
    plain = tmp_path / "plain"  # without them, the manifest names neither
    for extra in (policy, *(src / "patterns").iterdir()):
        extra.unlink()
    build(str(src), str(plain))
    assert "patterns" not in read_json(plain / layout.MANIFEST)["endpoints"]
    assert not (plain / layout.POLICY).exists()


@pytest.mark.parametrize(
    ("file", "data", "where"),
    [
        ("policy.json", {"policy": {"organisation": "typo"}}, "policy.json: $.policy"),
        ("policy.json", {"allowDestructive": "yes"}, "policy.json: $.allowDestructive"),
        ("patterns/git.json", [{"name": "x", "description": "d", "steps": []}], "$[0].steps"),
        ("patterns/git.json", [RELEASE, RELEASE], "another pattern named 'release'"),
        ("patterns/git.json", {"patterns": "no"}, "expected a list of patterns"),
        ("patterns/git.json", {"tool": "a b", "patterns": []}, "expected a list of patterns"),
    ],
)
def test_a_bad_policy_or_pattern_file_refuses_the_build(src, tmp_path, file, data, where):
    dest = tmp_path / "site"
    put(src, file, json.dumps(data).encode())
    result = build(str(src), str(dest), "--text")
    assert result.exit_code == 65, result.output
    assert where in result.stdout, result.stdout
    assert not dest.exists()


def test_two_files_for_one_hash_is_an_error(tmp_path):
    src = tmp_path / "src"
    hex_, data = make_shim("tool", "1.0", "linux-amd64")
    put(src, f"a/{hex_}.json", data)
    put(src, f"b/{hex_}.json", data)  # an identical copy is fine
    assert build(str(src), str(tmp_path / "ok")).exit_code == 0
    put(src, f"c/{hex_}.json", data.replace(b"tool does things", b"tool does other things"))
    result = build(str(src), str(tmp_path / "site"), "--json")
    assert result.exit_code == 65
    errors = envelope_of(result)["result"]["errors"]
    assert [(e["file"], e["code"], e["location"]) for e in errors] == [
        (f"c/{hex_}.json", "build.hash-collision", "$.binary.hash")
    ]
    assert f"also described by a/{hex_}.json" in errors[0]["message"]
    assert not (tmp_path / "site").exists()


def test_require_signatures(src, tmp_path):
    secret, _public = minisign_keys(tmp_path)
    for shim in [p for p in src.rglob("*.json") if "mkrel" not in p.name]:
        minisign_sign(shim, secret)
    dest = tmp_path / "site"
    result = build(str(src), str(dest), "--require-signatures", "--text")
    assert result.exit_code == 65
    [line] = result.stdout.splitlines()
    assert line.startswith("hand-made/mkrel.json: $: no signature beside it")
    assert not dest.exists()
    minisign_sign(src / "hand-made" / "mkrel.json", secret)
    assert build(str(src), str(dest), "--require-signatures").exit_code == 0
    assert read_json(dest / layout.MANIFEST)["trust"]["requireSignatures"] is True


def test_library_raises_with_every_problem(src, tmp_path):
    put(src, "a.json", b"[]")
    put(src, "b.json", b"{}")
    with pytest.raises(InvalidSource) as caught:
        build_registry(src, tmp_path / "site", BuildOptions())
    assert [f.file for f in caught.value.problems][:2] == ["a.json", "b.json"]
    assert str(caught.value).startswith("a.json: $: ")


@pytest.mark.parametrize(
    "case", ["not-a-registry", "inside-src", "no-shims", "bad-url", "blank-platform"]
)
def test_unusable_places_exit_2(src, tmp_path, case):
    dest = tmp_path / "site"
    args = [str(src), str(dest)]
    if case == "not-a-registry":
        put(dest, "precious.txt", b"keep me")
    elif case == "inside-src":
        args = [str(src), str(src / "site")]
    elif case == "no-shims":
        (tmp_path / "empty").mkdir()
        args = [str(tmp_path / "empty"), str(dest)]
    elif case == "bad-url":
        args += ["--url", "ftp://example.test"]
    else:
        args += ["--platform", "linux-amd64", "--platform", " "]
    result = build(*args)
    assert result.exit_code == 2, result.output
    error = envelope_of(result)["error"]
    assert (error["category"], error["exit_code"]) == ("input", 2)
    expected = {
        "not-a-registry": "not empty and not a registry",
        "inside-src": "SRC and DEST must not contain one another",
        "no-shims": "no shims (*.json files) found",
        "bad-url": "the registry URL must be http:// or https://",
        "blank-platform": "a platform for coverage must not be blank",
    }[case]
    assert expected in error["message"]
    assert result.stderr == ""
    if case == "not-a-registry":
        assert tree(dest) == {"precious.txt": b"keep me"}
    else:
        assert not dest.exists()
    for_people = build(*args, "--text")
    assert for_people.exit_code == 2
    assert for_people.stdout == ""
    assert for_people.stderr.startswith("error: ")
    assert expected in for_people.stderr


def test_a_missing_src_is_not_found(tmp_path):
    result = build(str(tmp_path / "nothing"), str(tmp_path / "site"))
    assert result.exit_code == 10
    error = envelope_of(result)["error"]
    assert error["code"] == "E3001"
    assert error["message"] == f"{tmp_path / 'nothing'}: no such directory (SRC)"
    assert error["details"] == {"path": str(tmp_path / "nothing")}
    assert not (tmp_path / "site").exists()


def test_a_signer_is_identity_equals_issuer(src, tmp_path):
    for bad in ("shims@acme.test", "=https://accounts.google.com", "shims@acme.test="):
        result = build(str(src), str(tmp_path / "site"), "--signer", bad)
        assert result.exit_code == 2, bad
        error = envelope_of(result)["error"]
        assert error["message"].startswith("Invalid value for '--signer': ")
        assert error["details"]["param"] == "signer"
        assert not (tmp_path / "site").exists()
    # the form is in the schema, for an agent to read before it calls
    schema = json.loads(CliRunner().invoke(cli, ["registry", "build", "--schema"]).stdout)
    pattern = schema["input_schema"]["properties"]["signer"]["items"]["pattern"]
    assert re.search(pattern, "shims@acme.test=https://accounts.google.com")
    assert not re.search(pattern, "shims@acme.test")


# -- determinism -----------------------------------------------------------------------------


def test_same_input_same_bytes(src, tmp_path):
    assert build(str(src), str(tmp_path / "one")).exit_code == 0
    assert build(str(src), str(tmp_path / "two")).exit_code == 0
    assert tree(tmp_path / "one") == tree(tmp_path / "two")


def test_rebuild_keeps_the_previous_moment_until_something_changes(src, tmp_path, monkeypatch):
    dest = tmp_path / "site"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1580608922")  # built long ago
    assert build(str(src), str(dest)).exit_code == 0
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    long_ago = 1580608922 * 10**9
    for path in dest.rglob("*"):
        os.utime(path, ns=(long_ago, long_ago))
    before = tree(dest)

    result = build(str(src), str(dest), "--text")  # nothing changed: nothing written
    assert result.exit_code == 0
    assert result.stdout.startswith("up to date:")
    assert "updated 2020-02-02T02:02:02Z" in result.stdout
    assert tree(dest) == before
    assert {p.stat().st_mtime_ns for p in dest.rglob("*")} == {long_ago}

    jq = next((src / "shims" / "sha256").glob("*.json"))
    jq.write_bytes(jq.read_bytes().replace(b"Say more", b"Say much more"))
    result = build(str(src), str(dest), "--text")
    assert result.stdout.startswith("built ")
    updated = read_json(dest / layout.CATALOG)["updated"]
    assert updated > "2026-01-01"  # now
    assert f"updated {updated}" in result.stdout
    assert read_json(dest / layout.MANIFEST)["registry"]["version"] == updated[:10].replace(
        "-", "."
    )
    changed = {p.name for p in dest.rglob("*") if p.is_file() and p.stat().st_mtime_ns != long_ago}
    assert changed == {jq.name, "index.json", "index.html", "atip-registry.json"}
