"""The human review of crawled shims (RFC 0.6 §4.10.1 step 5): `atip crawl --review`
queues what it generates; `atip review list/show/approve/reject` decide, with a diff
against what is published, clear exit statuses, and state that survives `kill -9` at
any moment (each hash queued or published, never lost, never half-written)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from atipkit.cli import cli
from atipkit.crawl import review
from atipkit.crawl.platforms import host
from atipkit.validation import validate_file
from tests.servers import Nginx, nginx
from tests.test_crawl import help_script, manifest, report, run, shims
from tests.test_crawl_sources import publish, sha256

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def server(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    with nginx(www, tmp_path / "nginx") as n:
        yield n


def tool_at(tmp_path: Path, server: Nginx, version: str) -> bytes:
    """Version `version` of a tool served raw, and its manifest (no template: inferred)."""
    binary = help_script(version=version)
    publish(server, f"dl/{version}/tool", binary)
    manifest(
        tmp_path / "tools",
        "tool",
        f"""
        name: tool
        sources:
          url:
            version: "{version}"
            platforms: {{{host()}: {{url: "{server.url}/dl/{version}/tool",
                                    sha256: "{sha256(binary)}"}}}}
        """,
    )
    return binary


def atip(tmp_path: Path, *args: str) -> Result:
    """`atip review ARGS --out OUT --json`."""
    argv = ["review", *args, "--out", str(tmp_path / "out"), "--json"]
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def result_of(outcome: Result) -> dict:
    return json.loads(outcome.stdout)["result"]


def test_review_queues_then_approve_publishes_and_promotes(tmp_path, server):
    binary = tool_at(tmp_path, server, "1.0")

    crawled = run(tmp_path, "tool", "--review", "--json")

    assert crawled.exit_code == 0, crawled.stdout
    [artifact] = report(crawled)["tools"][0]["artifacts"]
    assert artifact["status"] == "queued"
    assert shims(tmp_path) == []  # nothing published
    [entry] = result_of(atip(tmp_path, "list"))["entries"]
    assert (entry["tool"], entry["version"], entry["hash"]) == (
        "tool",
        "1.0",
        f"sha256:{sha256(binary)}",
    )
    assert "document" not in entry
    # a re-crawl neither downloads nor queues again
    again = run(tmp_path, "tool", "--review", "--json")
    assert report(again)["tools"][0]["artifacts"][0]["status"] == "unchanged"
    assert len([r for r in server.requests() if "/dl/" in r]) == 1

    shown = result_of(atip(tmp_path, "show", sha256(binary)[:8]))
    assert shown["shim"]["trust"]["source"] == "inferred"
    assert shown["diff"].startswith("--- (nothing published)\n")
    assert '+  "name": "tool",' in shown["diff"]

    approved = atip(tmp_path, "approve", sha256(binary)[:8])

    assert approved.exit_code == 0, approved.stdout
    assert result_of(approved)["entries"][0]["status"] == "approved"
    [shim] = shims(tmp_path)
    assert shim.name == f"{sha256(binary)}.json"
    doc = json.loads(shim.read_text())
    assert doc["trust"] == {"source": "community", "verified": False}  # a person checked it
    assert "reviewed" in doc["_generation"]
    assert validate_file(shim).ok
    assert result_of(atip(tmp_path, "list"))["entries"] == []
    # the queue is not a document to `atip validate` nor to `atip registry build`
    validated = CliRunner().invoke(cli, ["validate", str(tmp_path / "out"), "--json"])
    assert validated.exit_code == 0, validated.stdout
    built = CliRunner().invoke(
        cli, ["registry", "build", str(tmp_path / "out"), str(tmp_path / "site"), "--json"]
    )
    assert built.exit_code == 0, built.stdout


def test_show_diffs_a_new_version_against_the_published_one(tmp_path, server):
    tool_at(tmp_path, server, "1.0")
    run(tmp_path, "tool", "--review")
    atip(tmp_path, "approve", result_of(atip(tmp_path, "list"))["entries"][0]["hash"])
    [first] = shims(tmp_path)
    newer = tool_at(tmp_path, server, "2.0")

    assert run(tmp_path, "tool", "--review").exit_code == 0

    shown = result_of(atip(tmp_path, "show", sha256(newer)))
    assert shown["entry"]["replaces"] == f"shims/sha256/{first.name}"
    assert f"--- shims/sha256/{first.name}\n" in shown["diff"]
    assert '-  "version": "1.0"' in shown["diff"]
    assert '+  "version": "2.0"' in shown["diff"]
    text = CliRunner().invoke(
        cli, ["review", "show", sha256(newer), "--out", str(tmp_path / "out"), "--text"]
    )
    assert text.stdout.startswith(f"tool 2.0 {host()} (url:")


def test_a_rejected_shim_is_kept_and_never_queued_again(tmp_path, server):
    binary = tool_at(tmp_path, server, "1.0")
    run(tmp_path, "tool", "--review")

    rejected = atip(tmp_path, "reject", sha256(binary), "--reason", "options are wrong")

    assert rejected.exit_code == 0
    assert result_of(atip(tmp_path, "list"))["entries"] == []
    [kept] = result_of(atip(tmp_path, "list", "--rejected"))["entries"]
    assert kept["reason"] == "options are wrong"
    again = run(tmp_path, "tool", "--review", "--json")
    [artifact] = report(again)["tools"][0]["artifacts"]
    assert artifact["status"] == "rejected"
    assert "options are wrong" in artifact["reason"]
    assert result_of(atip(tmp_path, "list"))["entries"] == []
    assert shims(tmp_path) == []


def queue_many(out: Path, count: int) -> list[str]:
    """`count` valid queued shims, written as a crawl would; their hashes."""
    hashes = []
    for n in range(count):
        hash_ = f"sha256:{sha256(str(n).encode())}"
        document = {
            "atip": {"version": "0.6"},
            "name": f"tool{n}",
            "version": "1.0",
            "description": "A tool",
            "binary": {"hash": hash_, "name": f"tool{n}", "platform": "linux-amd64"},
            "trust": {"source": "inferred", "verified": False},
            "commands": {},
        }
        entry = review.ReviewEntry(
            tool=f"tool{n}",
            source="url",
            platform="linux-amd64",
            version="1.0",
            origin="url:x",
            hash=hash_,
            shim=f"shims/sha256/{hash_[7:]}.json",
            queued=f"2026-01-01T00:00:{n:02d}Z",
            document=document,
        )
        review.queue(out, entry)
        hashes.append(hash_)
    return hashes


def published(out: Path) -> set[str]:
    return {f"sha256:{p.stem}" for p in (out / "shims" / "sha256").glob("*.json")}


def test_kill_9_while_approving_loses_nothing(tmp_path):
    """`atip review approve` killed once 5, 15, 25 shims are out: each time, every shim is
    queued or published (valid), and approving what is left finishes the job."""
    out = tmp_path / "out"
    hashes = queue_many(out, 40)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}
    command = [sys.executable, "-m", "atipkit", "review", "approve"]
    interrupted = 0
    for after in (5, 15, 25):
        remaining = [e.hash for e in review.entries(out)]
        process = subprocess.Popen(
            [*command, *remaining, "--out", str(out)], env=env, stdout=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while len(published(out)) < after and process.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.wait()
        queued = {e.hash for e in review.entries(out)}
        assert queued | published(out) == set(hashes)  # every shim is somewhere
        interrupted += bool(queued)
        for path in (out / "shims" / "sha256").glob("*.json"):
            assert validate_file(path).ok  # never half-written
    assert interrupted  # some run was killed mid-way
    if left := [e.hash for e in review.entries(out)]:
        assert atip(tmp_path, "approve", *left).exit_code == 0
    assert review.entries(out) == []
    assert published(out) == set(hashes)


def test_an_approval_killed_after_writing_is_finished_by_the_next(tmp_path):
    """Killed between writing the shim and deleting the entry: approving again keeps
    the published shim and clears the entry."""
    out = tmp_path / "out"
    [hash_] = queue_many(out, 1)
    entry = review.find(out, hash_)
    (out / entry.shim).parent.mkdir(parents=True)
    (out / entry.shim).write_text(json.dumps(review.promoted(entry.document, "then")))

    again = atip(tmp_path, "approve", hash_)

    assert again.exit_code == 0
    assert result_of(again)["entries"][0]["status"] == "already-published"
    assert review.entries(out) == []
    assert json.loads((out / entry.shim).read_text())["_generation"]["reviewed"] == "then"


def test_exit_statuses_of_review_commands(tmp_path):
    out = tmp_path / "out"
    hashes = queue_many(out, 30)
    missing = atip(tmp_path, "show", "abcdef0123")
    assert missing.exit_code == 10
    assert json.loads(missing.stdout)["error"]["message"].startswith("no shim in the review queue")
    assert atip(tmp_path, "approve", "not-a-hash").exit_code == 2
    # one unknown hash among good ones: nothing is approved
    partial = atip(tmp_path, "approve", hashes[0], "ffffff")
    assert partial.exit_code == 10
    assert len(review.entries(out)) == 30
    assert not (out / "shims").exists()
    # a damaged entry is a data error, not a traceback
    path = next((out / ".review" / "queue").iterdir())
    path.write_text("{not json")
    damaged = atip(tmp_path, "list")
    assert damaged.exit_code == 65
    assert "damaged review entry" in json.loads(damaged.stdout)["error"]["message"]


def test_an_ambiguous_prefix_is_a_usage_error(tmp_path):
    out = tmp_path / "out"
    for hash_ in ("sha256:" + "ab" * 32, "sha256:" + "ab" * 3 + "cd" * 29):
        entry = review.ReviewEntry(
            tool="t",
            source="url",
            platform="any",
            version="1",
            origin="o",
            hash=hash_,
            shim=f"shims/sha256/{hash_[7:]}.json",
            queued="2026",
            document={},
        )
        review.queue(out, entry)

    result = atip(tmp_path, "show", "ababab")

    assert result.exit_code == 2
    assert "names 2 queued shims" in json.loads(result.stdout)["error"]["message"]
