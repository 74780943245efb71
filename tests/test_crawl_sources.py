"""The crawler's HTTP sources against a real nginx on loopback: PyPI's JSON API with wheels
built here, an npm registry, GitHub's releases API, direct URLs. Digests are checked
(a tampered download is refused), per-platform choices are right, `--check` downloads
nothing, and a GitHub token goes to the API only."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from atipkit.crawl.platforms import host
from atipkit.validation import validate_file
from tests.servers import Nginx, nginx
from tests.test_crawl import help_script, manifest, options_of, report, run, shims

pytestmark = pytest.mark.usefixtures("isolated_home")

_WHEEL_MACHINE = {"linux-amd64": "x86_64", "linux-arm64": "aarch64"}


@pytest.fixture
def server(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    with nginx(www, tmp_path / "nginx", log_format="$request $status $http_authorization") as n:
        yield n


def downloads(server: Nginx) -> list[str]:
    """Request lines for anything but API documents."""
    return [r for r in server.requests() if "/dl/" in r or "/packages/" in r or "/-/" in r]


def publish(server: Nginx, path: str, data: bytes) -> str:
    target = server.root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return f"{server.url}/{path}"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def linux_only() -> None:
    if not host().startswith("linux-") or host() not in _WHEEL_MACHINE:
        pytest.skip("the wheels built here are for Linux on amd64 or arm64")


def tarball(members: dict[str, bytes], *, executable: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if name in executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


# -- PyPI -----------------------------------------------------------------------------

GREET = b"""import argparse


def main():
    parser = argparse.ArgumentParser(prog="greet", description="Greet people politely.")
    parser.add_argument("name", help="Who to greet")
    parser.add_argument("--shout", action="store_true", help="Greet loudly")
    parser.add_argument("--times", type=int, default=1, help="How many greetings")
    args = parser.parse_args()
    for _ in range(args.times):
        print(("HELLO " if args.shout else "Hello ") + args.name)
"""


def wheel(
    name: str,
    version: str,
    files: dict[str, bytes],
    *,
    tag: str = "py3-none-any",
    entry_points: str | None = None,
) -> tuple[str, bytes]:
    """A wheel made by the book (PEP 427/491): dist-info with METADATA, WHEEL, RECORD
    (sha256 and size of every file) and entry_points.txt; scripts executable."""
    dist = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    purelib = "true" if tag.endswith("-any") else "false"
    files[f"{dist}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: atipkit-tests\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n"
    ).encode()
    if entry_points:
        files[f"{dist}/entry_points.txt"] = entry_points.encode()
    lines = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{path},sha256={digest},{len(data)}\n")
    files[f"{dist}/RECORD"] = ("".join(lines) + f"{dist}/RECORD,,\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0))
            mode = 0o755 if "/scripts/" in path else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return f"{name}-{version}-{tag}.whl", out.getvalue()


def pypi_json(
    server: Nginx,
    name: str,
    version: str,
    wheels: list[tuple[str, bytes]],
    *,
    published: dict[str, str] | None = None,
) -> None:
    urls = []
    for filename, data in wheels:
        urls.append(
            {
                "filename": filename,
                "url": publish(server, f"packages/{filename}", data),
                "digests": {"sha256": (published or {}).get(filename, sha256(data))},
                "packagetype": "bdist_wheel",
                "size": len(data),
                "yanked": False,
            }
        )
    document = {"info": {"name": name, "version": version}, "urls": urls}
    publish(server, f"pypi/{name}/json", json.dumps(document).encode())


def test_pypi_console_script_is_the_wrapper_pip_writes(tmp_path, server):
    filename, data = wheel(
        "greet",
        "1.0",
        {"greet/__init__.py": b"", "greet/cli.py": GREET},
        entry_points="[console_scripts]\ngreet = greet.cli:main\n",
    )
    pypi_json(server, "greet", "1.0", [(filename, data)])
    manifest(
        tmp_path / "tools",
        "greet",
        f"""
        name: greet
        description: Greet people
        sources:
          pypi: {{index: "{server.url}", platforms: [linux-amd64, linux-arm64]}}
        """,
    )
    # the hash, computed apart: pip's wrapper with the default interpreter as first line
    wheel_file = tmp_path / filename
    wheel_file.write_bytes(data)
    target = tmp_path / "independent"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(wheel_file),
        ],
        check=True,
    )
    script = (target / "bin" / "greet").read_bytes()
    expected = sha256(b"#!/usr/bin/python3\n" + script.partition(b"\n")[2])

    result = run(tmp_path, "greet")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert shim.name == f"{expected}.json"
    assert validate_file(shim).ok
    doc = json.loads(shim.read_text())
    assert doc["binary"]["platform"] == "any"  # one pure wheel for both platforms asked
    assert doc["trust"]["source"] == "inferred"
    assert doc["_generation"]["source"] == f"pypi:greet==1.0/{filename}"
    ran = {"help": ["-h", "--help"], "shout": ["--shout"], "times": ["--times"]}  # decision 315
    assert options_of(shim) == ran  # it ran
    assert "[greet] Downloading any from PyPI..." in result.stderr


def test_pypi_bundled_binary_is_hashed_as_shipped(tmp_path, server):
    linux_only()
    other = "linux-arm64" if host() != "linux-arm64" else "linux-amd64"
    binary = help_script("fastbin", "natively")
    built = {
        p: wheel(
            "fastbin",
            "2.0",
            {"fastbin-2.0.data/scripts/fastbin": binary if p == host() else b"\x7fELF other"},
            tag=f"py3-none-manylinux_2_17_{_WHEEL_MACHINE[p]}",
        )
        for p in (host(), other)
    }
    pypi_json(server, "fastbin", "2.0", list(built.values()))
    manifest(
        tmp_path / "tools",
        "fastbin",
        f"""
        name: fastbin
        sources:
          pypi: {{index: "{server.url}", platforms: [{host()}, {other}]}}
        """,
    )

    result = run(tmp_path, "fastbin", "--json")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert shim.name == f"{sha256(binary)}.json"
    assert options_of(shim) == {"verbose": ["-v", "--verbose"], "level": ["--level"]}
    artifacts = {a["platform"]: a for a in report(result)["tools"][0]["artifacts"]}
    assert artifacts[host()]["status"] == "generated"
    assert artifacts[other]["status"] == "skipped"
    assert "cannot run on this machine" in artifacts[other]["reason"]
    assert [r for r in downloads(server) if built[other][0] in r] == []  # not even fetched


def test_pypi_python_script_is_rewritten_for_the_interpreter_named(tmp_path, server):
    """A `#!python` script in `.data/scripts/` is rewritten by pip like a console
    script: its hash is that of the manifest's interpreter line over the rest."""
    script = b"#!python\n" + GREET + b"\nmain()\n"
    filename, data = wheel("greet", "1.0", {"greet-1.0.data/scripts/greet": script})
    pypi_json(server, "greet", "1.0", [(filename, data)])
    manifest(
        tmp_path / "tools",
        "greet",
        f"""
        name: greet
        sources:
          pypi: {{index: "{server.url}", interpreter: /opt/python/bin/python3}}
        """,
    )

    result = run(tmp_path, "greet")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    expected = sha256(b"#!/opt/python/bin/python3\n" + script.partition(b"\n")[2])
    assert shim.name == f"{expected}.json"
    ran = {"help": ["-h", "--help"], "shout": ["--shout"], "times": ["--times"]}
    assert options_of(shim) == ran


def test_pypi_wheel_whose_sha256_differs_from_the_index_is_refused(tmp_path, server):
    filename, data = wheel(
        "greet",
        "1.0",
        {"greet/__init__.py": b"", "greet/cli.py": GREET},
        entry_points="[console_scripts]\ngreet = greet.cli:main\n",
    )
    pypi_json(server, "greet", "1.0", [(filename, data)], published={filename: "ab" * 32})
    manifest(
        tmp_path / "tools", "greet", f'name: greet\nsources: {{pypi: {{index: "{server.url}"}}}}'
    )

    result = run(tmp_path, "greet", "--json")

    assert result.exit_code == 40
    [artifact] = report(result)["tools"][0]["artifacts"]
    assert artifact["status"] == "failed"
    assert f"the source published {'ab' * 32}; refused" in artifact["reason"]
    assert shims(tmp_path) == []
    assert list((tmp_path / "work" / "tmp").iterdir()) == []


# -- npm ------------------------------------------------------------------------------


def npm_package(server: Nginx, tgz: bytes, *, integrity_of: bytes | None = None) -> None:
    digest = hashlib.sha512(tgz if integrity_of is None else integrity_of).digest()
    packument = {
        "name": "hello-cli",
        "dist-tags": {"latest": "3.1.0"},
        "versions": {
            "3.1.0": {
                "name": "hello-cli",
                "version": "3.1.0",
                "dist": {
                    "tarball": publish(server, "npm/-/hello-cli-3.1.0.tgz", tgz),
                    "integrity": "sha512-" + base64.b64encode(digest).decode(),
                },
            }
        },
    }
    publish(server, "npm/hello-cli", json.dumps(packument).encode())


def hello_tarball() -> tuple[bytes, bytes]:
    script = help_script("hello", "in JavaScript's place")
    package_json = {"name": "hello-cli", "version": "3.1.0", "bin": {"hello": "bin/hello"}}
    tgz = tarball(
        {"package/package.json": json.dumps(package_json).encode(), "package/bin/hello": script}
    )
    return tgz, script


def test_npm_bin_of_a_verified_tarball(tmp_path, server, monkeypatch):
    tgz, script = hello_tarball()
    npm_package(server, tgz)
    monkeypatch.setenv("ATIP_NPM_REGISTRY", f"{server.url}/npm")  # the environment's registry
    manifest(tmp_path / "tools", "hello", "name: hello\nsources: {npm: {package: hello-cli}}")

    result = run(tmp_path, "hello")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert shim.name == f"{sha256(script)}.json"
    doc = json.loads(shim.read_text())
    assert doc["binary"]["platform"] == "any"
    assert doc["_generation"]["source"] == "npm:hello-cli@3.1.0"
    assert set(options_of(shim)) == {"verbose", "level"}


def test_a_package_json_nested_100_000_deep_fails_that_package_not_the_crawl(tmp_path, server):
    deep = b"[" * 100_000 + b"]" * 100_000
    npm_package(server, tarball({"package/package.json": deep, "package/bin/hello": b"x"}))
    manifest(
        tmp_path / "tools",
        "hello",
        f'name: hello\nsources: {{npm: {{package: hello-cli, registry: "{server.url}/npm"}}}}',
    )
    result = run(tmp_path, "hello", "--json")
    assert result.exit_code == 40, result.output
    [artifact] = report(result)["tools"][0]["artifacts"]
    assert (
        "package.json: unreadable package.json (line 1, column 65: JSON is nested"
        in (artifact["reason"])
    )


def test_npm_tarball_that_does_not_match_its_integrity_is_refused(tmp_path, server):
    tgz, _ = hello_tarball()
    npm_package(server, tgz, integrity_of=tgz + b"tampered")
    manifest(
        tmp_path / "tools",
        "hello",
        f'name: hello\nsources: {{npm: {{package: hello-cli, registry: "{server.url}/npm"}}}}',
    )

    result = run(tmp_path, "hello")

    assert result.exit_code == 40
    assert "[hello] Failed any: " in result.stderr
    assert "sha512 of the download is" in result.stderr
    assert "refused" in result.stderr
    assert shims(tmp_path) == []


# -- GitHub releases ------------------------------------------------------------------

PLATFORMS = sorted({host(), "linux-amd64", "linux-arm64", "darwin-arm64"})
TEMPLATE = """
template:
  commands:
    "":
      description: Frobnicate files
      options:
        - {name: level, flags: ["--level"], type: integer, description: "Level, 1 to 9"}
      effects: {network: false, destructive: false}
"""


def release(server: Nginx, *, digests: bool = True, corrupt: str | None = None) -> dict[str, bytes]:
    """Release v2.3.0 of acme/tool: one tarball per platform (the host's runs), plus a
    checksums file no pattern matches; the asset of platform `corrupt` does not match
    its digest. Returns each platform's binary."""
    binaries = {p: help_script() if p == host() else f"binary for {p}".encode() for p in PLATFORMS}
    assets = []
    for p, binary in binaries.items():
        name = f"tool-2.3.0-{p}.tar.gz"
        data = tarball(
            {"tool-2.3.0/bin/tool": binary, "tool-2.3.0/README": b"hi"},
            executable=("tool-2.3.0/bin/tool",),
        )
        asset = {"name": name, "browser_download_url": publish(server, f"dl/{name}", data)}
        if digests:
            asset["digest"] = f"sha256:{sha256(data + (b'!' if p == corrupt else b''))}"
        assets.append(asset)
    assets.append({"name": "checksums.txt", "browser_download_url": f"{server.url}/dl/sums"})
    document = {"tag_name": "v2.3.0", "assets": assets}
    publish(server, "api/repos/acme/tool/releases/latest", json.dumps(document).encode())
    return binaries


def github_manifest(tmp_path: Path, *, template: str = TEMPLATE, api: str | None = None) -> None:
    patterns = "".join(f"      {p}: 'tool-*-{p}.tar.gz'\n" for p in PLATFORMS)
    manifest(
        tmp_path / "tools",
        "tool",
        "name: tool\nsources:\n  github:\n    repo: acme/tool\n"
        + (f"    api: {api}\n" if api else "")
        + "    binary_path: 'tool-*/bin/tool'\n    asset_patterns:\n"
        + patterns
        + template,
    )


def test_github_release_asset_per_platform(tmp_path, server):
    binaries = release(server)
    github_manifest(tmp_path)

    result = run(tmp_path, "tool", "--github-api", f"{server.url}/api")

    assert result.exit_code == 0, result.stderr
    written = {json.loads(s.read_text())["binary"]["platform"]: s for s in shims(tmp_path)}
    assert set(written) == set(PLATFORMS)
    for p, shim in written.items():
        assert shim.name == f"{sha256(binaries[p])}.json"
        doc = json.loads(shim.read_text())
        assert doc["version"] == "2.3.0"
        assert doc["_generation"]["source"] == f"github:acme/tool@v2.3.0/tool-2.3.0-{p}.tar.gz"
        assert doc["trust"]["source"] == "community"
    ran = json.loads(written[host()].read_text())
    assert ran["_generation"]["method"] == "template+help-parsing"
    assert options_of(written[host()]) == {"verbose": ["-v", "--verbose"], "level": ["--level"]}
    level = ran["commands"][""]["options"][1]
    assert (level["type"], level["description"]) == ("integer", "Level, 1 to 9")  # template's
    elsewhere = next(p for p in PLATFORMS if p != host())
    assert json.loads(written[elsewhere].read_text())["_generation"]["method"] == "template"
    assert options_of(written[elsewhere]) == {"level": ["--level"]}
    fetched = sorted(r.split()[1] for r in downloads(server))
    assert fetched == sorted(f"/dl/tool-2.3.0-{p}.tar.gz" for p in PLATFORMS)
    assert "[tool] Found new version: 2.3.0" in result.stderr


def test_github_without_template_skips_what_cannot_run_here(tmp_path, server):
    release(server)
    github_manifest(tmp_path, template="", api=f"{server.url}/api")

    result = run(tmp_path, "tool")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert json.loads(shim.read_text())["binary"]["platform"] == host()
    for p in PLATFORMS:
        if p != host():
            assert f"[tool] Skipped {p}: no template, and {p} binaries cannot run" in result.stderr


def test_check_then_crawl_then_nothing_to_download(tmp_path, server):
    release(server)
    github_manifest(tmp_path, api=f"{server.url}/api")

    checked = run(tmp_path, "tool", "--check", "--json")
    assert checked.exit_code == 0, checked.stderr
    statuses = {a["status"] for a in report(checked)["tools"][0]["artifacts"]}
    assert statuses == {"new"}
    assert downloads(server) == []  # the releases API only
    assert len(server.requests()) == 1

    assert run(tmp_path, "tool").exit_code == 0
    assert len(downloads(server)) == len(PLATFORMS)

    again = run(tmp_path, "tool", "--check", "--json")
    statuses = {a["status"] for a in report(again)["tools"][0]["artifacts"]}
    assert statuses == {"unchanged"}
    recrawl = run(tmp_path, "tool")
    assert recrawl.exit_code == 0
    assert len(downloads(server)) == len(PLATFORMS)  # the same digests: nothing fetched
    assert "[tool] No new version: 2.3.0" in recrawl.stderr


def test_without_published_digests_a_recrawl_downloads_and_finds_them_known(tmp_path, server):
    release(server, digests=False)
    github_manifest(tmp_path, api=f"{server.url}/api")
    assert run(tmp_path, "tool").exit_code == 0
    first = {s: s.stat().st_mtime_ns for s in shims(tmp_path)}

    again = run(tmp_path, "tool")

    assert again.exit_code == 0
    assert len(downloads(server)) == 2 * len(PLATFORMS)
    assert again.stderr.count("  Known: shims/sha256/") == len(PLATFORMS)
    assert {s: s.stat().st_mtime_ns for s in shims(tmp_path)} == first


def test_github_asset_that_does_not_match_its_digest_fails_alone(tmp_path, server):
    elsewhere = next(p for p in PLATFORMS if p != host())
    release(server, corrupt=elsewhere)
    github_manifest(tmp_path, api=f"{server.url}/api")

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 40
    answer = json.loads(result.stdout)
    assert answer["ok"] is False
    error = answer["error"]
    assert (error["code"], error["category"]) == ("E4001", "runtime")
    assert error["message"] == "crawl incomplete: 1 artifact failed; the rest is done"
    assert error["details"] == {"failed_artifacts": 1, "failed_sources": 0}
    done = answer["result"]  # the report, what was done included
    assert done["ok"] is False
    assert done["tools"][0]["ok"] is False
    artifacts = {a["platform"]: a for a in done["tools"][0]["artifacts"]}
    statuses = {p: a["status"] for p, a in artifacts.items()}
    assert statuses == {p: "failed" if p == elsewhere else "generated" for p in PLATFORMS}
    assert "refused" in artifacts[elsewhere]["reason"]
    assert result.stderr == ""
    assert len(shims(tmp_path)) == len(PLATFORMS) - 1

    for_people = run(tmp_path, "tool")  # the others are unchanged now; it fails again
    assert for_people.exit_code == 40
    assert f"[tool] Failed {elsewhere}: " in for_people.stderr
    assert for_people.stderr.endswith(
        "error: crawl incomplete: 1 artifact failed; the rest is done [E4001]\n"
        "  fix: See the reasons in result.tools (artifacts[].reason, errors); crawl again "
        "once the cause is fixed: what is done is skipped.\n"
    )
    lines = [line.split("\t") for line in for_people.stdout.splitlines()]
    assert {(line[2], line[4]) for line in lines} == {
        (p, "failed" if p == elsewhere else "unchanged") for p in PLATFORMS
    }


def test_github_token_goes_to_the_api_only(tmp_path, server, monkeypatch):
    release(server)
    github_manifest(tmp_path, api=f"{server.url}/api")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret123")

    result = run(tmp_path, "tool")

    assert result.exit_code == 0
    [api] = [r for r in server.requests() if "/api/" in r]
    assert api.endswith("Bearer ghp_secret123")
    assert all(r.endswith(" -") for r in downloads(server))
    assert "ghp_secret123" not in result.output


def test_an_asset_pattern_matching_two_assets_fails_that_platform(tmp_path, server):
    release(server)
    manifest(
        tmp_path / "tools",
        "tool",
        f"""
        name: tool
        sources:
          github:
            repo: acme/tool
            api: {server.url}/api
            asset_patterns: {{{host()}: "tool-2.3.0-*.tar.gz"}}
        """,
    )
    result = run(tmp_path, "tool")
    assert result.exit_code == 40
    assert f"[tool] Failed {host()}: {len(PLATFORMS)} assets of v2.3.0 match" in result.stderr


def test_a_release_api_that_is_not_there_fails_the_tool(tmp_path, server):
    github_manifest(tmp_path, api=f"{server.url}/api")
    result = run(tmp_path, "tool", "--json")
    assert result.exit_code == 40
    assert json.loads(result.stdout)["error"]["message"] == (
        "crawl incomplete: 1 source failed; the rest is done"
    )
    [error] = report(result)["tools"][0]["errors"]
    assert error.startswith("github: ")
    assert error.endswith("HTTP 404")
    for_people = run(tmp_path, "tool")
    assert for_people.stdout == f"tool\tgithub\t\t\tfailed\t{error}\n"


def test_an_api_answer_nested_100_000_deep_fails_that_source_not_the_crawl(tmp_path, server):
    """json.loads raised RecursionError, which no source error catches: exit 70."""
    publish(server, "api/repos/acme/tool/releases/latest", b"[" * 100_000 + b"]" * 100_000)
    github_manifest(tmp_path, api=f"{server.url}/api")
    result = run(tmp_path, "tool", "--json")
    assert result.exit_code == 40, result.output
    [error] = report(result)["tools"][0]["errors"]
    assert error.startswith("github: ")
    assert "not JSON (line 1, column 65: JSON is nested too deeply" in error


# -- direct URLs ----------------------------------------------------------------------


def url_manifest(tmp_path: Path, url: str, digest: str | None) -> None:
    pinned = f", sha256: '{digest}'" if digest else ""
    manifest(
        tmp_path / "tools",
        "tool",
        f"""
        name: tool
        sources:
          url:
            version: "2.3.0"
            platforms: {{{host()}: {{url: "{url}"{pinned}}}}}
        """,
    )


def test_url_raw_binary_with_its_sha256(tmp_path, server):
    binary = help_script()
    publish(server, "dl/2.3.0/tool", binary)
    url_manifest(tmp_path, f"{server.url}/dl/{{version}}/tool", sha256(binary))

    result = run(tmp_path, "tool")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert shim.name == f"{sha256(binary)}.json"
    assert "[tool] Downloading " + host() + " from URL..." in result.stderr
    assert set(options_of(shim)) == {"verbose", "level"}


def test_the_packages_own_libraries_are_on_the_library_path(tmp_path, server):
    """A binary that needs a library of its package finds it when its --help is read."""
    binary = b"""#!/bin/sh
for dir in $(echo "$LD_LIBRARY_PATH" | tr ':' ' '); do
  [ -e "$dir/libfrob.so.1" ] && found=yes
done
[ "$1" = --help ] && printf 'Usage: tool [OPTIONS]\\n\\nOptions:\\n  --%s  Linked\\n' \\
  "${found:-no}-lib"
"""
    data = tarball(
        {"tool-2.3.0/bin/tool": binary, "tool-2.3.0/lib/x86/libfrob.so.1": b"\x7fELF"},
        executable=("tool-2.3.0/bin/tool",),
    )
    publish(server, "dl/tool.tgz", data)
    url_manifest(tmp_path, f"{server.url}/dl/tool.tgz", sha256(data))

    result = run(tmp_path, "tool")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert shim.name == f"{sha256(binary)}.json"
    assert options_of(shim) == {"yes-lib": ["--yes-lib"]}


def test_url_download_with_a_wrong_sha256_is_refused(tmp_path, server):
    publish(server, "dl/tool", help_script())
    url_manifest(tmp_path, f"{server.url}/dl/tool", "0" * 64)

    result = run(tmp_path, "tool")

    assert result.exit_code == 40
    assert f"the source published {'0' * 64}; refused" in result.stderr
    assert shims(tmp_path) == []
    assert list((tmp_path / "work" / "tmp").iterdir()) == []


def test_url_hostile_archive_is_refused_and_writes_nothing_outside(tmp_path, server):
    data = tarball({"tool-2.3.0/bin/tool": help_script(), "../../escaped": b"gotcha"})
    publish(server, "dl/tool.tar.gz", data)
    url_manifest(tmp_path, f"{server.url}/dl/tool.tar.gz", sha256(data))

    result = run(tmp_path, "tool")

    assert result.exit_code == 40
    assert "../../escaped: path with '..'" in result.stderr
    assert not list(tmp_path.rglob("escaped"))
    assert shims(tmp_path) == []


def test_a_download_larger_than_the_limit_is_refused(tmp_path, server):
    data = b"\0" * (2 << 20)
    publish(server, "dl/big", data)
    url_manifest(tmp_path, f"{server.url}/dl/big", None)

    result = run(tmp_path, "tool", "--max-download", "1")

    assert result.exit_code == 40
    assert "more than the limit" in result.stderr
    assert shims(tmp_path) == []
