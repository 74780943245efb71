"""Registries that answer badly (issue 19, items 7, 9 and 10), against `atip` processes.

A hostile registry (tests/servers.py `hostile_registry`) is asked first, a healthy nginx
after it. Every bad answer — compression bombs, deep nesting, huge bodies, drips,
redirect loops, validators that are not ASCII — must be refused with its reason within
its registry's deadline, with at most 64 MB of memory over the fetch, and the healthy
registry must still be asked and answer.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import BUSY, Measured, atip_measured, machine_env, minisign_keys
from tests.servers import (
    BAD_DATE,
    BAD_ETAG,
    BEHAVIOURS,
    HostileRegistry,
    Nginx,
    hostile_registry,
    hostile_shim,
    nginx,
)

A = "a" * 64
"""A binary both registries have a shim for: the hostile one answers first."""
DEADLINE = 1.0
"""The `timeout` of a hostile registry refused by the clock (`TIMED`): the deadline of one
response, headers included. The healthy one keeps the default (10 s): it must answer,
however busy the machine."""
TIMED = frozenset({"drip", "gzip-drip", "drip-headers", "stall"})
"""The behaviours only a deadline stops: each drips or stalls for a minute or more."""
ROOM = 30.0
"""The `timeout` of every other hostile registry: its refusal's reason (a size, a depth,
an encoding) is what the test checks, not a race with the clock. Decoding a bomb to its
16 MiB cap took more than 1 s under the load of a shared machine (decision 710)."""
SLACK = BUSY
"""Time beyond the deadline for the refusal itself and the next request, on a busy
machine; far below the minute a deadline that did not hold would cost."""


def deadline(url: str) -> float:
    """The `timeout` a hostile registry at `url` (`HostileRegistry.registry`) is asked with."""
    return DEADLINE if url.rsplit("/", 1)[-1] in TIMED else ROOM


PEAK_MB = 64
CAP_MB = 16
"""A shim's size limit (`maxBytes`, 16 MiB), which a refused answer may fill first."""
TOO_DEEP = "JSON is nested too deeply: more than 64 levels of arrays and objects"
"""The refusal of every answer nested past `_jsontext.MAX_DEPTH`."""


@pytest.fixture
def hostile() -> Any:
    with hostile_registry() as server:
        yield server


@pytest.fixture
def healthy(tmp_path: Path) -> Any:
    """nginx with a shim for `A`, logging when each request arrived."""
    root = tmp_path / "healthy-root"
    (root / "shims" / "sha256").mkdir(parents=True)
    shim = hostile_shim(A, description="The healthy registry's shim")
    shim["binary"]["name"] = "healthy"
    (root / "shims" / "sha256" / f"{A}.json").write_text(json.dumps(shim))
    with nginx(root, tmp_path / "healthy", log_format="$msec $request $status") as server:
        yield server


def machine(
    tmp_path: Path,
    *urls: str,
    healthy: Nginx | None = None,
    signed: Path | None = None,
    **defaults: Any,
) -> dict[str, str]:
    """An `atip` environment asking `urls` in order, each with its `deadline`, then
    `healthy`; `signed`: the first requires minisign signatures by that public key."""
    registries: list[dict[str, Any]] = []
    for position, url in enumerate(urls):
        entry: dict[str, Any] = {"name": f"r{position}", "url": url, "priority": position}
        registries.append({**entry, "timeout": deadline(url)})
    if healthy is not None:
        registries.append({"name": "healthy", "url": healthy.url, "priority": len(urls)})
    if signed is not None:
        registries[0] |= {"requireSignatures": True, "minisignKeys": [str(signed)]}
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True, exist_ok=True)
    (config / "registries.json").write_text(
        json.dumps({"registries": registries, "defaults": defaults})
    )
    return machine_env(tmp_path)


def healthy_asked_at(healthy: Nginx, path: str) -> float:
    """When nginx received the first request for `path` (its log's `$msec`)."""
    for line in healthy.requests():
        moment, request = line.split(" ", 1)
        if f" {path} " in request:
            return float(moment)
    raise AssertionError(f"the healthy registry was never asked for {path}: {healthy.requests()}")


def refused_then_found(
    run: Measured, hostile: HostileRegistry, healthy: Nginx, registry: str
) -> dict[str, Any]:
    """The checks every bad answer must pass; returns the hostile registry's attempt."""
    assert run.returncode == 0, (run.stdout, run.stderr)
    result = run.envelope()["result"]
    bad, good = result["attempts"]
    assert good["outcome"] == "found"
    assert (result["registry"], result["shim"]["binary"]["name"]) == (healthy.url, "healthy")
    assert bad["outcome"] in ("rejected", "unreachable"), bad
    first = min(a.at for a in hostile.asked if a.registry == registry)
    took = healthy_asked_at(healthy, f"/shims/sha256/{A}.json") - first
    assert took < deadline(registry) + SLACK, f"the bad answer held the lookup {took:.2f} s"
    assert run.peak_mb <= PEAK_MB, f"peak memory {run.peak_mb:.0f} MB"
    return bad


SHIM_ANSWERS = [
    # behaviour, outcome, reason (a part of it)
    ("gzip-bomb", "rejected", "more than the limit of 16777216 bytes"),
    ("deflate-bomb", "rejected", "more than the limit of 16777216 bytes"),
    ("gzip-gzip-bomb", "rejected", "Content-Encoding 'gzip, gzip': more than one layer"),
    ("br", "rejected", "Content-Encoding 'br' is not accepted (gzip or deflate)"),
    ("zstd", "rejected", "Content-Encoding 'zstd' is not accepted (gzip or deflate)"),
    ("invalid-json", "rejected", "not a valid shim: line 1, column 40: invalid JSON"),
    ("html", "rejected", "not a valid shim: line 1, column 1: invalid JSON"),
    ("other-binary", "rejected", f"binary.hash is sha256:{'0' * 64}, not the lookup key"),
    ("deep-500", "rejected", TOO_DEEP),
    ("deep-100000", "rejected", TOO_DEEP),
    ("deep-commands", "rejected", TOO_DEEP),
    ("huge", "rejected", "more than the limit of 16777216 bytes"),
    ("huge-declared", "rejected", "10000000000 bytes, more than the limit 16777216"),
    ("drip", "unreachable", f"the response took longer than {DEADLINE:g} s"),
    ("gzip-drip", "unreachable", f"the response took longer than {DEADLINE:g} s"),
    ("drip-headers", "unreachable", f"no response within {DEADLINE:g} s"),
    ("stall", "unreachable", f"no response within {DEADLINE:g} s"),
    ("redirect-loop", "rejected", "more than 5 redirects"),
    ("redirect-chain", "rejected", "more than 5 redirects"),
    ("redirect-away", "rejected", "redirect to another origin"),
    ("redirect-bad-port", "rejected", "redirect to an invalid address (http://127.0.0.1:99999/"),
    ("redirect-bad-host", "unreachable", "Invalid URL in location header"),  # httpx's own
    ("redirect-ftp", "rejected", "redirect to a non-HTTP address (ftp://127.0.0.1/x.json)"),
    ("status-500", "unreachable", "HTTP 500"),
    ("gzip-cut-short", "rejected", "the gzip body is cut short"),
    ("gzip-trailing", "rejected", "data after the end of the gzip body"),
    ("gzip-corrupt", "rejected", "the gzip body does not decode"),
]


def test_every_behaviour_is_covered() -> None:
    answering = {"healthy", "bad-etag", "vouching", "local-bundle", *COMPRESSED}  # valid
    assert {b for b, _, _ in SHIM_ANSWERS} == set(BEHAVIOURS) - answering


@pytest.mark.parametrize(("behaviour", "outcome", "reason"), SHIM_ANSWERS, ids=lambda v: str(v))
def test_a_bad_shim_is_refused_in_time_and_the_next_registry_answers(
    hostile, healthy, tmp_path, behaviour, outcome, reason
):
    env = machine(tmp_path, hostile.registry(behaviour), healthy=healthy)
    run = atip_measured(env, "registry", "fetch", A)
    bad = refused_then_found(run, hostile, healthy, behaviour)
    assert (bad["outcome"], bad["url"]) == (
        outcome,
        f"{hostile.registry(behaviour)}/shims/sha256/{A}.json",
    )
    assert reason in bad["reason"]


MANIFEST_ANSWERS = [
    ("gzip-gzip-bomb", "rejected", "more than one layer"),
    ("deep-500", "rejected", TOO_DEEP),
    ("deep-100000", "rejected", TOO_DEEP),
    ("invalid-json", "rejected", "invalid JSON"),
    ("huge", "rejected", "more than the limit of 1048576 bytes"),
    ("drip-headers", "unreachable", f"no response within {DEADLINE:g} s"),
    ("redirect-loop", "rejected", "more than 5 redirects"),
]


@pytest.mark.parametrize(("behaviour", "outcome", "reason"), MANIFEST_ANSWERS, ids=lambda v: str(v))
def test_a_bad_manifest_is_refused_in_time_and_the_next_registry_answers(
    hostile, healthy, tmp_path, behaviour, outcome, reason
):
    url = hostile.registry(behaviour, at="manifest")
    run = atip_measured(machine(tmp_path, url, healthy=healthy), "registry", "fetch", A)
    bad = refused_then_found(run, hostile, healthy, f"manifest/{behaviour}")
    assert (bad["outcome"], bad["url"]) == (outcome, url)
    assert reason in bad["reason"]


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("gzip-gzip-bomb", "more than one layer"),
        ("huge", "more than the limit of 1048576 bytes"),
        ("drip-headers", f"no response within {DEADLINE:g} s"),
    ],
)
def test_a_bad_signature_answer_refuses_the_shim_and_the_next_registry_answers(
    hostile, healthy, tmp_path, behaviour, reason
):
    _, public = minisign_keys(tmp_path)
    url = hostile.registry(behaviour, at="signature")
    run = atip_measured(
        machine(tmp_path, url, healthy=healthy, signed=public), "registry", "fetch", A
    )
    bad = refused_then_found(run, hostile, healthy, f"signature/{behaviour}")
    assert (bad["outcome"], bad["refusal"]) == ("rejected", "unsigned")
    assert bad["reason"].startswith("signatures are required: ")
    assert reason in bad["reason"]


def legacy_tool(tmp_path: Path) -> tuple[Path, str]:
    """An executable that does not speak ATIP, and its sha256."""
    from atipkit.trust.digest import sha256_file

    path = tmp_path / "bin" / "oldtool"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\necho 'oldtool: usage: oldtool FILE' >&2\nexit 2\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path, sha256_file(path).removeprefix("sha256:")


def test_atip_show_asks_past_every_bad_registry(hostile, healthy, tmp_path):
    """Every hostile registry at once, then the healthy one: `atip show` of a binary only
    the healthy one describes finds it, each bad answer costing at most its deadline, and
    the memory of at most one response at the cap: what a refused answer held is given
    back before the next registry is asked."""
    binary, hex_digits = legacy_tool(tmp_path)
    shim = hostile_shim(hex_digits, description="Found past every bad registry")
    (healthy.root / "shims" / "sha256" / f"{hex_digits}.json").write_text(json.dumps(shim))
    alone = atip_measured(machine(tmp_path / "alone", healthy=healthy), "show", str(binary))
    assert alone.returncode == 0, alone.stdout
    bad = [b for b, _, _ in SHIM_ANSWERS] + [f"manifest/{b}" for b, _, _ in MANIFEST_ANSWERS]
    urls = [
        hostile.registry(b.split("/")[-1], at=b.split("/")[0] if "/" in b else "shim") for b in bad
    ]
    run = atip_measured(machine(tmp_path, *urls, healthy=healthy), "show", str(binary), timeout=300)
    assert run.returncode == 0, (run.stdout, run.stderr)
    shown = run.envelope()["result"]
    assert shown["description"] == "Found past every bad registry"
    assert run.peak_mb <= alone.peak_mb + CAP_MB + 4, (run.peak_mb, alone.peak_mb)
    firsts = [min(a.at for a in hostile.asked if a.registry == name) for name in bad]
    firsts.append(healthy_asked_at(healthy, f"/shims/sha256/{hex_digits}.json"))
    for name, start, end in zip(bad, firsts, firsts[1:], strict=False):
        took = end - start
        assert took < deadline(name) + SLACK, f"{name} held the lookup {took:.2f} s"


# -- validators (item 10) ------------------------------------------------------------------


def cached(tmp_path: Path, hex_digits: str = A) -> dict[str, Any]:
    return json.loads((tmp_path / "cache" / "shims" / "sha256" / f"{hex_digits}.json").read_text())


def test_a_validator_that_is_not_visible_ascii_is_neither_kept_nor_sent(hostile, tmp_path):
    env = machine(tmp_path, hostile.registry("bad-etag"))
    first = atip_measured(env, "registry", "fetch", A)
    assert first.returncode == 0, first.stdout
    assert "_etag" not in cached(tmp_path)
    assert "_last_modified" not in cached(tmp_path)
    again = atip_measured(env, "registry", "fetch", A, "--refresh")
    assert again.returncode == 0, again.stdout
    assert again.envelope()["result"]["attempts"][0]["outcome"] == "found"  # fetched whole
    revalidation = hostile.requests_to("bad-etag")[-1]
    assert "If-None-Match" not in revalidation.headers
    assert "If-Modified-Since" not in revalidation.headers


def test_a_poisoned_cache_is_ignored_and_repaired(hostile, healthy, tmp_path):
    """A cache written before validators were checked: the shim's and the manifest's bad
    ETag are dropped, never sent, and the next registries are still asked."""
    env = machine(tmp_path, hostile.registry("bad-etag"), ttl="0s")
    assert atip_measured(env, "registry", "fetch", A).returncode == 0
    path = tmp_path / "cache" / "shims" / "sha256" / f"{A}.json"
    path.write_text(json.dumps({**cached(tmp_path), "_etag": BAD_ETAG, "_last_modified": BAD_DATE}))
    repaired = atip_measured(env, "registry", "fetch", A)
    assert repaired.returncode == 0, repaired.stdout
    assert "If-None-Match" not in hostile.requests_to("bad-etag")[-1].headers
    assert "_etag" not in cached(tmp_path)

    # the manifest's stamp: every lookup of that registry revalidates it
    manifest = hostile.registry("bad-etag", at="manifest")
    env = machine(tmp_path, manifest, healthy=healthy, ttl="0s")
    assert atip_measured(env, "registry", "fetch", A).returncode == 0
    [stamp] = [
        p
        for p in (tmp_path / "cache" / "registries").glob("*.json")
        if json.loads(p.read_text())["url"] == manifest
    ]
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "etag": BAD_ETAG}))
    binary, hex_digits = legacy_tool(tmp_path)
    shim = hostile_shim(hex_digits, description="Described by the healthy registry")
    (healthy.root / "shims" / "sha256" / f"{hex_digits}.json").write_text(json.dumps(shim))
    shown = atip_measured(env, "show", str(binary))
    assert shown.returncode == 0, (shown.stdout, shown.stderr)
    assert shown.envelope()["result"]["description"] == "Described by the healthy registry"
    manifests = [
        a
        for a in hostile.requests_to("bad-etag", at="manifest")
        if a.path.endswith(".json") and "well-known" in a.path
    ]
    assert len(manifests) == 2  # fetched, then revalidated after the TTL
    assert "If-None-Match" not in manifests[-1].headers


@pytest.mark.parametrize("stamp", ["2024-01-01T00:00:00", "yesterday", 5])
@pytest.mark.parametrize("at", ["shim", "manifest"])
def test_a_damaged_cache_time_costs_one_fetch(hostile, tmp_path, at, stamp):
    """A cache stamp that is not a time with its zone (a damaged cache, an edit by
    hand) is a damaged entry like any other: fetched again and rewritten. A naive time
    or a word made every later lookup exit 70, the next registries never asked."""
    from atipkit.registry.config import RemoteRegistry, Settings
    from atipkit.registry.remote import RemoteRegistries

    settings = Settings(registries=[RemoteRegistry(url=hostile.registry("healthy"))])
    with RemoteRegistries(settings, cache_dir=tmp_path) as remote:
        assert remote.lookup(A).tool is not None
    shim = tmp_path / "shims" / "sha256" / f"{A}.json"
    [manifest] = (tmp_path / "registries").glob("*.json")
    damaged, key = (shim, "_cached_at") if at == "shim" else (manifest, "cachedAt")
    damaged.write_text(json.dumps({**json.loads(damaged.read_text()), key: stamp}))
    if at == "manifest":
        shim.unlink()  # so that the registry, and so its manifest, is asked
    with RemoteRegistries(settings, cache_dir=tmp_path) as remote:
        found = remote.lookup(A)
    assert (found.tool is not None, found.cached) == (True, False)
    assert json.loads(damaged.read_text())[key].endswith("Z")  # rewritten


# -- encodings and the other callers of the guarded client (item 7) ---------------------------

COMPRESSED = ["gzip", "deflate", "raw-deflate"]


@pytest.mark.parametrize("behaviour", COMPRESSED)
def test_one_layer_of_gzip_or_deflate_is_decoded(hostile, tmp_path, behaviour):
    from atipkit.registry.config import RemoteRegistry, Settings
    from atipkit.registry.remote import RemoteRegistries

    registry = RemoteRegistry(url=hostile.registry(behaviour))
    with RemoteRegistries(Settings(registries=[registry]), cache_dir=tmp_path) as remote:
        found = remote.lookup(A)
    assert found.tool is not None
    assert found.tool.description == "A shim from a hostile registry"
    [asked] = hostile.requests_to(behaviour)[-1:]
    assert asked.headers["Accept-Encoding"] == "gzip, deflate"


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("gzip-gzip-bomb", "Content-Encoding 'gzip, gzip': more than one layer is not accepted"),
        ("gzip-bomb", "more than the limit of 16777216 bytes"),
        ("br", "Content-Encoding 'br' is not accepted (gzip or deflate)"),
    ],
)
def test_atip_import_tdp_refuses_a_bad_encoding_within_its_limits(
    hostile, tmp_path, behaviour, reason
):
    """Refused for its encoding or its size within the memory cap: the deadline is
    `ROOM`, so that the reason checked is never the clock's (decision 710)."""
    url = f"{hostile.registry(behaviour, at='any')}/api/v1/tools"
    run = atip_measured(machine_env(tmp_path), "import", "tdp", url, "--timeout", f"{ROOM:g}")
    assert run.returncode == 65, (run.stdout, run.stderr)
    assert reason in run.envelope()["error"]["message"]
    assert run.peak_mb <= PEAK_MB


@pytest.mark.parametrize(
    ("behaviour", "error", "reason"),
    [
        ("gzip-gzip-bomb", "EncodingRefused", "more than one layer"),
        ("gzip-bomb", "ResponseTooLarge", "more than the limit of 2097152 bytes"),  # decoded
        ("huge", "ResponseTooLarge", "more than the limit of 2097152 bytes"),
        ("drip", "NetworkError", f"the response took longer than {DEADLINE:g} s"),
    ],
)
def test_the_crawlers_downloads_keep_their_own_limits(hostile, tmp_path, behaviour, error, reason):
    """A download asks for `identity`; an answer compressed anyway is decoded within the
    crawler's own cap (here 2 MiB) and deadline, and leaves no file behind."""
    import time

    from atipkit._http import Fetcher, HttpError
    from atipkit.crawl.sources import Limits, SourceContext

    allowed = deadline(behaviour)
    limits = Limits(max_download=2 * 1024 * 1024, download_seconds=allowed)
    with Fetcher() as fetcher:
        ctx = SourceContext(fetcher=fetcher, work=tmp_path, limits=limits)
        started = time.monotonic()
        with pytest.raises(HttpError) as refused:
            ctx.download(
                f"{hostile.registry(behaviour, at='any')}/tool.tar.gz", tmp_path / "a", digest=None
            )
    assert time.monotonic() - started < allowed + SLACK
    assert (type(refused.value).__name__, reason in str(refused.value)) == (error, True)
    assert list(tmp_path.iterdir()) == []
    assert hostile.asked[-1].headers["Accept-Encoding"] == "identity"


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ('"6b06e142-fc"', True),
        ('W/"abc"', True),
        ('""', True),
        (BAD_ETAG, False),
        ('"a"b"', False),
        ("unquoted", False),
        ('"tab\there"', False),
        ('"new\nline"', False),
        ('"' + "x" * 2000 + '"', False),
        (None, False),
        (17, False),
    ],
)
def test_only_entity_tags_rfc_9110_allows_are_kept(value, kept):
    from atipkit._http import entity_tag

    assert entity_tag(value) == (value if kept else None)


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        ("Wed, 21 Oct 2015 07:28:00 GMT", True),
        (BAD_DATE, False),
        ("yesterday", False),
        ("Wed, 21 Oct 2015 07:28:00 GMT\r\nX-Injected: 1", False),
        (None, False),
    ],
)
def test_only_http_dates_are_kept(value, kept):
    from atipkit._http import http_date

    assert http_date(value) == (value if kept else None)


def test_a_header_that_cannot_be_sent_is_an_http_error_not_a_crash(hostile):
    from atipkit._http import Fetcher, HttpError

    with Fetcher() as fetcher, pytest.raises(HttpError, match="If-None-Match header holds bytes"):
        fetcher.get(
            hostile.registry("healthy"), max_bytes=1024, headers={"If-None-Match": BAD_ETAG}
        )
    assert hostile.asked == []


# -- the trust cases: shims that name local files, shims that vouch for themselves ----------

SECRET = "ghp_FAKEt0kenTHATmustNEVERbePRINTED0123456"


class FifoWatch:
    """Whether anyone opened a FIFO for reading: a non-blocking open for writing
    succeeds only while a reader holds it open (else ENXIO). A read of it would also
    block the reader for ever, so a run that ends did not read it."""

    def __init__(self, path: Path) -> None:
        import os
        import threading

        os.mkfifo(path)
        self.path = path
        self.opened = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import os

        while not self._stop.wait(0.005):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                continue
            self.opened = True
            os.close(fd)

    def stop(self) -> bool:
        self._stop.set()
        self._thread.join()
        return self.opened


@pytest.mark.parametrize("target", ["secret-file", "fifo", "/proc/self/environ"])
def test_a_shim_naming_a_local_file_never_makes_atip_verify_read_it(hostile, tmp_path, target):
    """A served shim names a local file as its signature bundle, its shim signature's and
    its provenance: `atip verify` neither opens nor quotes it, and says why in the check."""
    secret = tmp_path / "aws" / "credentials"
    secret.parent.mkdir()
    secret.write_text(f"[default]\naws_secret_access_key = {SECRET}\n")
    fifo = FifoWatch(tmp_path / "pipe") if target == "fifo" else None
    hostile.local_path = {"secret-file": str(secret), "fifo": str(tmp_path / "pipe")}.get(
        target, target
    )
    binary, _ = legacy_tool(tmp_path)
    env = {
        **machine(tmp_path, hostile.registry("local-bundle")),
        "GITHUB_TOKEN": SECRET,  # in /proc/self/environ, last
    }
    try:
        run = atip_measured(env, "verify", str(binary), timeout=60)
    finally:
        opened = fifo.stop() if fifo else False
    assert not opened
    assert run.returncode == 30, (run.stdout, run.stderr)
    report = run.envelope()["result"]
    checks = {c["name"]: c for c in report["checks"]}
    assert report["level"] == "UNVERIFIED"
    assert checks["signature"]["ok"] is None
    assert checks["signature"]["detail"] == (
        f"a cosign signature is declared; its bundle {hostile.local_path} is not read: the "
        "metadata names an absolute path; material is read beside the binary, from an https "
        "URL, or relative to a --metadata file"
    )
    assert checks["provenance"]["ok"] is None
    assert checks["provenance"]["detail"].startswith(f"provenance {hostile.local_path} is not read")
    for part in (SECRET, SECRET[:12], SECRET[-12:]):
        assert part not in run.stdout + run.stderr


def vouching(hostile: HostileRegistry, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A binary and an environment in which the one registry, over plain http and
    unsigned, serves a shim for it saying `"trust": {"source": "vendor", "verified":
    true}`. For the trust checks (issue 19, item 2): the shim must get the registry's
    configured trust, never `high` for what it says of itself."""
    binary, _ = legacy_tool(tmp_path)
    return binary, machine(tmp_path, hostile.registry("vouching"))


def test_a_shim_that_vouches_for_itself_is_served_and_trusted_as_its_registry(hostile, tmp_path):
    binary, env = vouching(hostile, tmp_path)
    shown = atip_measured(env, "show", str(binary))
    assert shown.returncode == 0, shown.stdout
    assert shown.envelope()["result"]["trust"] == {"source": "vendor", "verified": True}
    verified = atip_measured(env, "verify", str(binary))
    report = verified.envelope()["result"]
    assert report["level"] == "UNSIGNED"  # nothing signs it
    assert report["sourceTrust"] == "low"  # the registry's default trust, not "vendor"
    policy = tmp_path / "high.json"
    policy.write_text(json.dumps({"minimumTrust": "high"}))
    call = json.dumps({"name": binary.name, "arguments": {}})
    run = atip_measured(env, "run", "--call", call, "--tool", str(binary), "--policy", str(policy))
    assert run.returncode == 30, run.stdout
    assert "is trusted low (a shim from" in run.envelope()["error"]["message"]


@pytest.mark.usefixtures("isolated_home")
def test_resolve_tool_asks_past_a_registry_whose_shim_cannot_be_validated(
    hostile, healthy, tmp_path, monkeypatch
):
    from atipkit.resolve import resolve_tool

    binary, hex_digits = legacy_tool(tmp_path)
    shim = hostile_shim(hex_digits, description="From the healthy registry")
    (healthy.root / "shims" / "sha256" / f"{hex_digits}.json").write_text(json.dumps(shim))
    monkeypatch.setenv("ATIP_REGISTRIES", f"{hostile.registry('deep-500')},{healthy.url}")
    resolved = resolve_tool(str(binary))
    assert resolved.tool.description == "From the healthy registry"
    refused = f"rejected:{hostile.registry('deep-500')}/shims/sha256/{hex_digits}.json"
    assert resolved.origins[refused].startswith("not a valid shim: $.patterns[0][0]")
    assert resolved.origins[refused].endswith("more than 64 levels of arrays and objects")


@pytest.mark.parametrize("wbits", [15, -15], ids=["zlib-wrapped", "raw"])
@pytest.mark.parametrize("step", [1, 2, 3, 4096, 1 << 20])
@pytest.mark.parametrize("body", ["shims", "one-past-a-step"])
def test_deflate_is_decoded_however_its_bytes_arrive(wbits, step, body):
    """Whether deflate has its zlib wrapper is told by its first two bytes, which may
    arrive one at a time; and output that a full 64 KiB step left inside the decoder
    comes out though no input is left (raw deflate has no trailer to push it out: one
    byte past a step was refused as cut short)."""
    import zlib

    from atipkit._http import _STEP, _Decoder

    plain = {
        "shims": json.dumps(hostile_shim(A)).encode() * 50,
        "one-past-a-step": b"a" * (_STEP + 1),
    }[body]
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
    packed = packer.compress(plain) + packer.flush()
    decoder = _Decoder("http://x", "deflate")
    out = b"".join(
        b"".join(decoder.feed(packed[i : i + step])) for i in range(0, len(packed), step)
    )
    decoder.finish()
    assert out == plain
