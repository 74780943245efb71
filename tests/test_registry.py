"""The local registry: every form read, writes atomic and serialized, hashes checked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from atipkit.registry.local import Entry, LocalRegistry, parse_index
from atipkit.trust.digest import BadHash, sha256_hex

HEX = "ab" * 32


@pytest.fixture
def registry(tmp_path: Path) -> LocalRegistry:
    return LocalRegistry(tmp_path / "data", tmp_path / "config")


def test_empty_registry_reads_as_version_2(registry):
    index = registry.read()
    assert (index.version, index.counter, index.tools) == ("2", 0, {})


def test_transactions_bump_the_counter_and_write_version_2(registry):
    for n in (1, 2):
        with registry.transaction() as index:
            index.tools[f"t{n}"] = Entry(path=f"/bin/t{n}", hash=f"sha256:{HEX}")
    data = json.loads(registry.index_path.read_text())
    assert data["version"] == "2"
    assert data["counter"] == 2
    assert set(data["tools"]) == {"t1", "t2"}
    assert data["tools"]["t1"]["hash"] == f"sha256:{HEX}"


def test_every_entry_says_its_source_as_the_rfc_lookup_reads_it(registry):
    """RFC 0.6 §4.3's lookup reads `entry["source"]`; a native entry (the default) must
    carry it too, in the example's key order, and read back the same."""
    with registry.transaction() as index:
        index.tools["gh"] = Entry(path="/bin/gh", hash=f"sha256:{HEX}", last_checked="x")
        index.tools["curl"] = Entry(path="/bin/curl", source="shim", shim_registry="https://r")
    tools = json.loads(registry.index_path.read_text())["tools"]
    assert list(tools["gh"]) == ["path", "hash", "source", "lastChecked"]
    assert tools["gh"]["source"] == "native"
    assert tools["curl"] == {"path": "/bin/curl", "source": "shim", "shimRegistry": "https://r"}
    assert registry.read().tools == index.tools


def test_reads_the_0_1_form():
    index = parse_index(
        {
            "version": "0.1",
            "updated": "2026-01-05T10:30:00Z",
            "tools": {
                "gh": {
                    "path": "/opt/homebrew/bin/gh",
                    "version": "2.45.0",
                    "atipVersion": "0.1",
                    "source": "native",
                    "lastChecked": "2026-01-05T10:30:00Z",
                    "metadataPath": "./tools/gh.json",
                },
                "curl": {
                    "path": "/usr/bin/curl",
                    "source": "shim",
                    "shimPath": "./shims/curl.json",
                },
            },
        }
    )
    assert index.version == "2"
    assert index.tools["gh"].path == "/opt/homebrew/bin/gh"
    assert index.tools["gh"].hash is None  # unknown: refreshed on first use
    assert index.tools["curl"].source == "shim"


@pytest.mark.parametrize("style", ["camel", "snake"])
def test_reads_the_version_1_list_form(style):
    key = {"camel": "binaryHash", "snake": "binary_hash"}[style]
    checked = {"camel": "lastChecked", "snake": "last_checked"}[style]
    index = parse_index(
        {
            "version": "1",
            "tools": [
                {"name": "gh", "path": "/usr/bin/gh", key: HEX, checked: "2026-01-01T00:00:00Z"}
            ],
        }
    )
    assert index.tools["gh"].hash == f"sha256:{HEX}"
    assert index.tools["gh"].last_checked == "2026-01-01T00:00:00Z"


def test_unknown_forms_are_refused(registry):
    registry.data_dir.mkdir(parents=True)
    registry.index_path.write_text('{"version": "9", "tools": {}}')
    with pytest.raises(Exception, match="unknown registry version"):
        registry.read()


@pytest.mark.parametrize(
    "bad",
    [
        "../../etc/passwd",
        "sha256:../../etc/passwd",
        HEX.upper(),
        HEX[:-1],
        HEX + "\n",
        "sha512:" + HEX,
        "",
    ],
)
def test_hashes_that_are_not_hashes_never_become_paths(registry, bad):
    with pytest.raises(BadHash):
        registry.shim_path(bad)
    with pytest.raises(BadHash):
        sha256_hex(bad)


_WRITER = """
import sys
from atipkit.registry.local import Entry, LocalRegistry
registry = LocalRegistry(sys.argv[1], sys.argv[1])
me = int(sys.argv[2])
for n in range(int(sys.argv[3])):
    with registry.transaction() as index:
        index.tools[f"w{me}-{n}"] = Entry(path=f"/bin/w{me}-{n}", version=str(n))
"""


def test_eight_concurrent_writers_lose_nothing(tmp_path):
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(i), "15"])
        for i in range(8)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    index = LocalRegistry(tmp_path, tmp_path).read()
    assert len(index.tools) == 8 * 15
    assert index.counter == 8 * 15


_KILLED = """
import sys
from atipkit.registry.local import Entry, LocalRegistry
registry = LocalRegistry(sys.argv[1], sys.argv[1])
n = 0
while True:
    n += 1
    with registry.transaction() as index:
        index.tools = {f"t{i}": Entry(path="/bin/" + "x" * 200, version=str(n))
                       for i in range(2000)}
"""


def test_a_writer_killed_mid_write_never_leaves_a_corrupt_file(tmp_path):
    registry = LocalRegistry(tmp_path, tmp_path)
    for round_ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(tmp_path)])
        time.sleep(0.6 + 0.13 * round_)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        index = registry.read()  # parses, or raises: a half-written file would raise
        assert len(index.tools) in (0, 2000)
    with registry.transaction():  # the next writer clears what killed writers left
        pass
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


# -- files read whole, read only within their caps (issue 19, item 11) -----------------------


def sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that costs no disk (and all of `size` to read)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def test_a_registry_json_over_the_cap_is_refused_before_it_is_read(tmp_path):
    """245 MB made `atip list` use 1.3 GB: now a clear error naming the file, exit 65,
    without reading it, and a scan does not replace it (nothing stored is lost)."""
    from atipkit.registry.local import MAX_INDEX_BYTES
    from tests.helpers import atip_measured, machine_env

    index = sparse(tmp_path / "data" / "agent-tools" / "registry.json", 300 * 1024 * 1024)
    env = machine_env(tmp_path)
    listed = atip_measured(env, "list")
    assert listed.returncode == 65, listed.stdout
    error = listed.envelope()["error"]
    assert error["code"] == "E1010"
    assert error["message"] == (
        f"{index}: document is {300 * 1024 * 1024:,} bytes; the limit is {MAX_INDEX_BYTES:,} bytes"
    )
    assert listed.peak_mb < 64
    before = index.stat()
    (tmp_path / "empty").mkdir()
    scanned = atip_measured(env, "scan", "--path", str(tmp_path / "empty"))
    assert (scanned.returncode, scanned.peak_mb < 64) == (65, True)
    assert (index.stat().st_size, index.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_store_files_over_their_caps_are_not_read(tmp_path):
    """A cached metadata file too large is not ours: the tool is probed again. An override
    too large, or nested too deep, is a clear error naming it (65), never a crash (70)."""
    import shutil

    from atipkit.trust.digest import sha256_file
    from tests.helpers import EXAMPLES, atip_measured, machine_env

    binary = tmp_path / "bin" / "deploy"
    binary.parent.mkdir()
    shutil.copy(EXAMPLES / "bin" / "deploy", binary)
    hex_digits = sha256_file(binary).removeprefix("sha256:")
    env = machine_env(tmp_path)
    assert atip_measured(env, "show", str(binary)).returncode == 0
    cached = tmp_path / "data" / "agent-tools" / "tools" / f"sha256-{hex_digits}.json"
    assert cached.is_file()
    sparse(cached, 300 * 1024 * 1024)
    shown = atip_measured(env, "show", str(binary))
    assert shown.returncode == 0, shown.stdout
    assert shown.envelope()["result"]["name"] == "deploy"  # probed again
    assert shown.peak_mb < 64

    override = tmp_path / "config" / "agent-tools" / "overrides" / "sha256" / f"{hex_digits}.json"
    sparse(override, 300 * 1024 * 1024)
    too_large = atip_measured(env, "show", str(binary))
    assert (too_large.returncode, too_large.peak_mb < 64) == (65, True)
    message = too_large.envelope()["error"]["message"]
    assert str(override) in message
    assert "the limit is 16,777,216 bytes" in message
    override.write_text("[" * 100_000 + "]" * 100_000)
    too_deep = atip_measured(env, "show", str(binary))
    assert too_deep.returncode == 65, too_deep.stdout
    assert "nested too deeply" in too_deep.envelope()["error"]["message"]
