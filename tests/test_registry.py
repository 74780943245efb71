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
