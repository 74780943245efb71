"""The crawler's package-manager sources against a real nginx on loopback: Homebrew (the
formula JSON of formulae.brew.sh and bottles served as ghcr.io serves OCI blobs), Scoop
(a bucket's app manifest) and Chocolatey (an OData feed entry and its .nupkg), with
fixtures shaped as the real ones and archives built here. Each published hash is
checked (a mismatch is refused), and hostile input — a path out of an archive, a `bin`
out of the app, wrong types, a feed with entities, an oversized document — fails that
tool or platform with a reason, never the crawl, and writes nothing."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import stat
import zipfile
from pathlib import Path

import pytest

from atipkit.crawl import CrawlSettings, Limits, crawl, load_manifest
from atipkit.crawl.platforms import host
from tests.servers import Nginx, nginx
from tests.test_crawl import help_script, manifest, options_of, report, run, shims
from tests.test_crawl_sources import TEMPLATE, publish, sha256, tarball

pytestmark = pytest.mark.usefixtures("isolated_home")

BOTTLE_TAG = {"linux-amd64": "x86_64_linux", "linux-arm64": "arm64_linux"}


@pytest.fixture
def server(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    log = "$request $status $http_authorization"
    with nginx(www, tmp_path / "nginx", log_format=log) as n:
        yield n


def artifacts(result) -> dict[str, dict]:
    return {a["platform"]: a for a in report(result)["tools"][0]["artifacts"]}


# -- Homebrew -------------------------------------------------------------------------


def bottle(binary: bytes, *, version: str = "2.3.0_1", extra: dict | None = None) -> bytes:
    """A bottle as `brew bottle` makes one: the keg under FORMULA/VERSION."""
    keg = f"tool/{version}"
    members = {
        f"{keg}/bin/tool": binary,
        f"{keg}/share/man/man1/tool.1": b".TH TOOL 1\n",
        f"{keg}/.brew/tool.rb": b"class Tool < Formula\nend\n",
        f"{keg}/INSTALL_RECEIPT.json": b"{}",
        **(extra or {}),
    }
    return tarball(members, executable=(f"{keg}/bin/tool",))


def formula(server: Nginx, bottles: dict[str, bytes], *, published: dict[str, str] | None = None):
    """formulae.brew.sh's `api/formula/tool.json`, its bottles as ghcr.io blobs
    (`v2/homebrew/core/tool/blobs/sha256:<hex>`); `published` overrides a tag's sha256."""
    files = {}
    for tag, data in bottles.items():
        digest = sha256(data)
        publish(server, f"v2/homebrew/core/tool/blobs/sha256:{digest}", data)
        files[tag] = {
            "cellar": ":any_skip_relocation",
            "url": f"{server.url}/v2/homebrew/core/tool/blobs/sha256:{digest}",
            "sha256": (published or {}).get(tag, digest),
        }
    document = {
        "name": "tool",
        "full_name": "tool",
        "tap": "homebrew/core",
        "desc": "Frobnicate files",
        "versions": {"stable": "2.3.0", "head": None, "bottle": True},
        "revision": 1,
        "bottle": {
            "stable": {"rebuild": 0, "root_url": f"{server.url}/v2/homebrew/core", "files": files}
        },
    }
    publish(server, "api/formula/tool.json", json.dumps(document).encode())
    return document


def homebrew_manifest(tmp_path: Path, server: Nginx, *, template: str = TEMPLATE) -> None:
    manifest(
        tmp_path / "tools",
        "tool",
        f"name: tool\nsources:\n  homebrew:\n    api: {server.url}/api\n" + template,
    )


def linux_bottle_host() -> str:
    if host() not in BOTTLE_TAG:
        pytest.skip("Linux bottles run on Linux amd64 or arm64")
    return BOTTLE_TAG[host()]


def test_homebrew_bottles_per_platform_from_the_formula_json(tmp_path, server):
    tag = linux_bottle_host()
    here = help_script()
    formula(
        server,
        {
            tag: bottle(here),
            "arm64_sonoma": bottle(b"mach-o arm64"),
            "arm64_ventura": bottle(b"older mach-o arm64"),
            "sonoma": bottle(b"mach-o x86_64"),
        },
    )
    homebrew_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 0, result.stdout
    found = artifacts(result)
    assert found[host()]["origin"] == f"homebrew:tool@2.3.0_1/{tag}"
    assert found["darwin-arm64"]["origin"] == "homebrew:tool@2.3.0_1/arm64_sonoma"  # newest
    assert found["darwin-amd64"]["hash"] == f"sha256:{sha256(b'mach-o x86_64')}"
    skipped = found["linux-arm64" if host() == "linux-amd64" else "linux-amd64"]
    assert skipped["status"] == "skipped"
    assert "has no bottle for" in skipped["reason"]
    written = {json.loads(s.read_text())["binary"]["platform"]: s for s in shims(tmp_path)}
    assert written[host()].name == f"{sha256(here)}.json"
    assert set(options_of(written[host()])) == {"verbose", "level"}  # --help was read
    blobs = [r for r in server.requests() if "/blobs/" in r]
    assert len(blobs) == 3
    assert all(r.endswith("Bearer QQ==") for r in blobs)
    assert not any("Bearer" in r for r in server.requests() if "/api/" in r)


def test_homebrew_bottle_that_does_not_match_its_sha256_is_refused(tmp_path, server):
    tag = linux_bottle_host()
    data = bottle(help_script())
    formula(server, {tag: data})
    document = json.loads((server.root / "api/formula/tool.json").read_text())
    tampered = data + b"\0"  # the blob served differs from the digest published
    (server.root / f"v2/homebrew/core/tool/blobs/sha256:{sha256(data)}").write_bytes(tampered)
    publish(server, "api/formula/tool.json", json.dumps(document).encode())
    homebrew_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--platform", host())

    assert result.exit_code == 40
    assert f"the source published {sha256(data)}; refused" in result.stderr
    assert shims(tmp_path) == []


def test_homebrew_url_naming_another_blob_than_its_sha256_is_refused(tmp_path, server):
    tag = linux_bottle_host()
    formula(server, {tag: bottle(help_script())}, published={tag: "ab" * 32})
    homebrew_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--platform", host())

    assert result.exit_code == 40
    assert "its url names blob sha256:" in result.stderr
    assert [r for r in server.requests() if "/blobs/" in r] == []


def test_homebrew_bottle_with_a_path_out_of_the_keg_is_refused(tmp_path, server):
    tag = linux_bottle_host()
    formula(server, {tag: bottle(help_script(), extra={"../../escaped": b"gotcha"})})
    homebrew_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--platform", host())

    assert result.exit_code == 40
    assert "../../escaped: path with '..'" in result.stderr
    assert not list(tmp_path.rglob("escaped"))
    assert shims(tmp_path) == []


def test_homebrew_binary_that_brew_relocates_is_skipped_not_hashed(tmp_path, server):
    """A binary holding brew's placeholders differs once poured: no shim names it."""
    tag = linux_bottle_host()
    relocated = help_script() + b"# @@HOMEBREW_PREFIX@@/lib\n"
    formula(server, {tag: bottle(relocated)})
    homebrew_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--platform", host(), "--json")

    assert result.exit_code == 0
    found = artifacts(result)[host()]
    assert found["status"] == "skipped"
    assert "brew rewrites tool/2.3.0_1/bin/tool when it pours this bottle" in found["reason"]
    assert shims(tmp_path) == []


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"name": "tool", "versions": {"stable": 2}}, "Expected `str`, got `int` - at `$.versions"),
        (
            {"name": "tool", "versions": {"stable": "1"}, "bottle": {"stable": {"files": []}}},
            "Expected `object`, got `array` - at `$.bottle.stable.files`",
        ),
        ([], "Expected `object`, got `array`"),
    ],
)
def test_homebrew_formula_json_of_the_wrong_shape_fails_the_source(
    tmp_path, server, document, expected
):
    publish(server, "api/formula/tool.json", json.dumps(document).encode())
    homebrew_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 40
    [error] = report(result)["tools"][0]["errors"]
    assert "not a Homebrew formula" in error
    assert expected in error


def test_a_formula_json_larger_than_the_metadata_limit_is_refused(tmp_path, server):
    tag = linux_bottle_host()
    document = formula(server, {tag: bottle(help_script())})
    document["desc"] = "x" * 100_000
    publish(server, "api/formula/tool.json", json.dumps(document).encode())
    homebrew_manifest(tmp_path, server)
    settings = CrawlSettings(
        out=tmp_path / "out", work=tmp_path / "work", limits=Limits(max_metadata=64 << 10)
    )

    result = crawl([load_manifest(tmp_path / "tools" / "tool.yaml")], settings)

    [tool] = result.tools
    assert not tool.ok
    assert "more than the limit" in tool.errors[0]
    assert "65536" in tool.errors[0]
    assert [r for r in server.requests() if "/blobs/" in r] == []


# -- Scoop ----------------------------------------------------------------------------

EXE = b"MZ\x90\x00 a Windows program"


def app_zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, data)
    return out.getvalue()


def scoop_app(server: Nginx, app: dict) -> None:
    publish(server, "bucket/tool.json", json.dumps(app).encode())


def scoop_manifest(tmp_path: Path, server: Nginx, *, platforms: str = "", extra: str = "") -> None:
    manifest(
        tmp_path / "tools",
        "tool",
        f"name: tool\nsources:\n  scoop:\n    bucket: {server.url}/bucket\n{platforms}{extra}"
        + TEMPLATE,
    )


def test_scoop_app_per_architecture_with_extract_dir_and_bin(tmp_path, server):
    archive = app_zip({"tool-2.3.0/bin/tool.exe": EXE, "tool-2.3.0/README.md": b"hi"})
    raw = b"MZ\x90\x00 the 32-bit program"
    scoop_app(
        server,
        {
            "version": "2.3.0",
            "description": "Frobnicate files",
            "homepage": "https://example.com/tool",
            "license": "MIT",
            "architecture": {
                "64bit": {
                    "url": publish(server, "dl/tool-2.3.0-win64.zip", archive),
                    "hash": sha256(archive),
                    "extract_dir": "tool-2.3.0",
                },
                "32bit": {
                    "url": publish(server, "dl/tool32", raw) + "#/tool.exe",
                    "hash": f"sha256:{sha256(raw).upper()}",
                    "bin": "tool.exe",
                },
            },
            "bin": [["bin\\tool.exe", "tool"]],
            "checkver": "github",
        },
    )
    scoop_manifest(tmp_path, server, platforms="    platforms: [windows-amd64, windows-386]\n")

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 0, result.stdout
    found = artifacts(result)
    assert found["windows-amd64"]["hash"] == f"sha256:{sha256(EXE)}"
    assert found["windows-amd64"]["origin"] == "scoop:tool@2.3.0/64bit"
    assert found["windows-386"]["hash"] == f"sha256:{sha256(raw)}"
    for shim in shims(tmp_path):
        doc = json.loads(shim.read_text())
        assert doc["_generation"]["method"] == "template"  # Windows binaries do not run here
        assert doc["binary"]["platform"] in ("windows-amd64", "windows-386")


def test_scoop_download_that_does_not_match_its_hash_is_refused(tmp_path, server):
    archive = app_zip({"tool.exe": EXE})
    scoop_app(
        server,
        {
            "version": "2.3.0",
            "url": publish(server, "dl/tool.zip", archive),
            "hash": "sha512:" + "0" * 128,
            "bin": "tool.exe",
        },
    )
    scoop_manifest(tmp_path, server)

    result = run(tmp_path, "tool")

    assert result.exit_code == 40
    assert "sha512 of the download is" in result.stderr
    assert "refused" in result.stderr
    assert shims(tmp_path) == []


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"bin": "..\\..\\evil.exe"}, "bin '..\\\\..\\\\evil.exe' is outside the app"),
        ({"bin": "C:\\Windows\\evil.exe"}, "is outside the app (absolute path)"),
        ({"extract_dir": "../up"}, "extract_dir '../up' is outside the app"),
        ({"hash": "sha1:" + "0" * 40}, "only an sha1 hash is published; refused"),
        ({"hash": None}, "0 hashes for one download; refused"),
        ({"version": 2}, "not a Scoop app manifest: Expected `str`, got `int` - at `$.version`"),
        ({"bin": {"tool": 1}}, "not a Scoop app manifest"),
    ],
)
def test_scoop_hostile_app_manifests_fail_the_source(tmp_path, server, changes, expected):
    archive = app_zip({"tool.exe": EXE})
    app = {
        "version": "2.3.0",
        "url": publish(server, "dl/tool.zip", archive),
        "hash": sha256(archive),
        "bin": "tool.exe",
    }
    scoop_app(server, {k: v for k, v in {**app, **changes}.items() if v is not None})
    scoop_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 40
    [error] = report(result)["tools"][0]["errors"]
    assert expected in error
    assert not [r for r in server.requests() if "/dl/" in r]
    assert shims(tmp_path) == []


def test_scoop_bin_missing_from_the_download_names_what_it_holds(tmp_path, server):
    archive = app_zip({"other.exe": EXE})
    url = publish(server, "dl/tool.zip", archive)
    scoop_app(server, {"version": "1", "url": url, "hash": sha256(archive), "bin": "tool.exe"})
    scoop_manifest(tmp_path, server)

    result = run(tmp_path, "tool")

    assert result.exit_code == 40
    assert "bin 'tool.exe' is not in the download (it holds other.exe)" in result.stderr


# -- Chocolatey -----------------------------------------------------------------------

FEED_ENTRY = """<entry>
  <id>{base}/Packages(Id='tool',Version='{version}')</id>
  <title type="text">tool</title>
  <summary type="text">Frobnicate files</summary>
  <updated>2024-01-01T00:00:00Z</updated>
  <author><name>acme</name></author>
  <content type="application/zip" src="{src}" />
  <m:properties>
    <d:Version>{version}</d:Version>
    <d:IsLatestVersion m:type="Edm.Boolean">true</d:IsLatestVersion>
    <d:PackageHash>{hash}</d:PackageHash>
    <d:PackageHashAlgorithm>SHA512</d:PackageHashAlgorithm>
    <d:PackageSize m:type="Edm.Int64">{size}</d:PackageSize>
  </m:properties>
</entry>"""

FEED = """<?xml version="1.0" encoding="utf-8"?>
<feed xml:base="{base}/" xmlns="http://www.w3.org/2005/Atom"
      xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices"
      xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">
  <title type="text">Packages</title>
  <id>{base}/Packages</id>
  <updated>2024-01-01T00:00:00Z</updated>
  {entry}
</feed>"""

NUSPEC = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://schemas.microsoft.com/packaging/2015/06/nuspec.xsd">
  <metadata>
    <id>{id}</id>
    <version>{version}</version>
    <title>tool</title>
    <authors>acme</authors>
    <description>Frobnicate files</description>
  </metadata>
</package>"""


def nupkg(
    *, version: str = "2.3.0", nuspec_version: str | None = None, tools: dict | None = None
) -> bytes:
    members = {
        "tool.nuspec": NUSPEC.format(id="tool", version=nuspec_version or version).encode(),
        "[Content_Types].xml": b"<Types/>",
        "tools/chocolateyInstall.ps1": b"$ErrorActionPreference = 'Stop'\n",
        **({"tools/tool.exe": EXE} if tools is None else tools),
    }
    return app_zip(members)


def chocolatey_feed(
    server: Nginx, package: bytes, *, version: str = "2.3.0", feed: str | None = None
) -> None:
    base = f"{server.url}/api/v2"
    src = publish(server, f"api/v2/package/tool/{version}", package)
    digest = base64.b64encode(hashlib.sha512(package).digest()).decode()
    entry = FEED_ENTRY.format(base=base, version=version, src=src, hash=digest, size=len(package))
    publish(server, "api/v2/Packages()", (feed or FEED.format(base=base, entry=entry)).encode())


def chocolatey_manifest(tmp_path: Path, server: Nginx) -> None:
    manifest(
        tmp_path / "tools",
        "tool",
        f"name: tool\nsources:\n  chocolatey:\n    feed: {server.url}/api/v2\n" + TEMPLATE,
    )


def test_chocolatey_package_from_its_feed_entry(tmp_path, server):
    chocolatey_feed(server, nupkg())
    chocolatey_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 0, result.stdout
    found = artifacts(result)["windows-amd64"]
    assert (found["status"], found["origin"]) == ("generated", "chocolatey:tool@2.3.0")
    assert found["hash"] == f"sha256:{sha256(EXE)}"
    assert found["digest"].startswith("sha512:")
    [shim] = shims(tmp_path)
    assert json.loads(shim.read_text())["binary"]["platform"] == "windows-amd64"
    [query] = [r for r in server.requests() if "Packages()" in r]
    assert "IsLatestVersion" in query


def test_chocolatey_package_that_does_not_match_its_hash_is_refused(tmp_path, server):
    chocolatey_feed(server, nupkg())
    (server.root / "api/v2/package/tool/2.3.0").write_bytes(nupkg(tools={"tools/tool.exe": b"X"}))
    chocolatey_manifest(tmp_path, server)

    result = run(tmp_path, "tool")

    assert result.exit_code == 40
    assert "sha512 of the download is" in result.stderr
    assert "refused" in result.stderr
    assert shims(tmp_path) == []


@pytest.mark.parametrize(
    ("package", "expected"),
    [
        (nupkg(nuspec_version="9.9.9"), "tool.nuspec describes 'tool' '9.9.9', not tool 2.3.0"),
        (nupkg(tools={}), "tools/chocolateyInstall.ps1 downloads it at install time"),
        (nupkg(tools={"tools/../../escaped.exe": EXE}), "path with '..'"),
    ],
)
def test_chocolatey_packages_that_cannot_be_trusted_fail(tmp_path, server, package, expected):
    chocolatey_feed(server, package)
    chocolatey_manifest(tmp_path, server)

    result = run(tmp_path, "tool")

    assert result.exit_code == 40
    assert expected in result.stderr
    assert shims(tmp_path) == []
    assert not list(tmp_path.rglob("escaped.exe"))


def test_chocolatey_executable_marked_ignore_is_skipped(tmp_path, server):
    chocolatey_feed(server, nupkg(tools={"tools/tool.exe": EXE, "tools/tool.exe.ignore": b""}))
    chocolatey_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 0
    found = artifacts(result)["windows-amd64"]
    assert found["status"] == "skipped"
    assert "Chocolatey does not put it on PATH" in found["reason"]


def test_chocolatey_feed_with_an_entity_declaration_is_refused(tmp_path, server):
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><feed>&b;</feed>'
    )
    chocolatey_feed(server, nupkg(), feed=bomb)
    chocolatey_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 40
    [error] = report(result)["tools"][0]["errors"]
    assert "XML with a document type declaration; refused" in error


def test_manifests_of_the_new_sources_are_checked_before_anything_runs(tmp_path):
    manifest(
        tmp_path / "tools", "tool", "name: tool\nsources:\n  scoop: {platforms: [linux-amd64]}\n"
    )
    result = run(tmp_path, "tool")
    assert result.exit_code == 65
    assert "scoop packages are Windows binaries, not linux-amd64" in result.stderr
    manifest(tmp_path / "tools", "tool", "name: tool\nsources:\n  homebrew: {formula: '-rf'}\n")
    result = run(tmp_path, "tool")
    assert result.exit_code == 65
    assert "'-rf' is not a valid formula name for homebrew" in result.stderr


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("<d:PackageHash>", "<d:PackageHash>!!", "PackageHash is not base64; refused"),
        ("SHA512</d:PackageHashAlgorithm>", "MD5</d:PackageHashAlgorithm>", "no SHA512 or SHA256"),
        ('src="http', 'src="file', "no http(s) content src"),
        ('<title type="text">tool', '<title type="text">other', "0 entries for tool"),
    ],
)
def test_chocolatey_feed_entries_of_the_wrong_shape_fail_the_source(
    tmp_path, server, old, new, expected
):
    chocolatey_feed(server, nupkg())
    feed = server.root / "api/v2/Packages()"
    feed.write_text(feed.read_text().replace(old, new, 1))
    chocolatey_manifest(tmp_path, server)

    result = run(tmp_path, "tool", "--json")

    assert result.exit_code == 40
    [error] = report(result)["tools"][0]["errors"]
    assert expected in error
    assert not [r for r in server.requests() if "/package/" in r]
