"""The remote registry client against a real nginx: lookup by hash, cache, 304, TTL,
priority, embedded hash, signatures, auth, redirects, size and time limits, offline."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from atipkit.cli import cli
from atipkit.registry import layout
from atipkit.registry.config import (
    Auth,
    Defaults,
    RegistryConfigError,
    RemoteRegistry,
    Settings,
    load_settings,
)
from atipkit.registry.remote import RemoteRegistries
from atipkit.resolve import resolve_tool
from atipkit.trust import signatures
from atipkit.trust.digest import BadHash, sha256_file
from tests.helpers import BUSY, SIGSTORE, atip, envelope_of, minisign_keys, needs_sigstore
from tests.servers import Nginx, free_port, nginx

A = "a" * 64
B = "b" * 64
C = "c" * 64


pytestmark = pytest.mark.usefixtures("isolated_home")


def shim(hex_digits: str, name: str = "tool", description: str = "A tool") -> dict[str, Any]:
    return {
        "atip": {"version": "0.6"},
        "binary": {"hash": f"sha256:{hex_digits}", "name": name, "version": "1.0"},
        "trust": {"source": "community"},
        "description": description,
        "commands": {
            "": {
                "description": "Run it",
                "effects": {"network": False, "filesystem": {"write": False}},
            }
        },
    }


def put(root: Path, hex_digits: str, document: dict[str, Any] | bytes, *, prefix: str = "") -> Path:
    path = root / prefix / "shims" / "sha256" / f"{hex_digits}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(document if isinstance(document, bytes) else json.dumps(document).encode())
    return path


def settings(*registries: RemoteRegistry, **defaults: Any) -> Settings:
    return Settings(registries=list(registries), defaults=Defaults(**defaults))


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with nginx(root, tmp_path / "nginx") as server:
        yield server


def client(server: Nginx, tmp_path: Path, **options: Any) -> RemoteRegistries:
    registry = RemoteRegistry(url=server.url, name="test")
    return RemoteRegistries(settings(registry), cache_dir=tmp_path / "cache", **options)


def shim_requests(server: Nginx) -> list[str]:
    return [line for line in server.requests() if "/shims/" in line]


# -- lookup, cache, revalidation --------------------------------------------------------------


def test_fetch_by_hash_then_cache_then_304_on_refresh(served, tmp_path):
    put(served.root, A, shim(A, "jq"))
    with client(served, tmp_path) as remote:
        first = remote.lookup(f"sha256:{A}")
        assert first.tool is not None
        assert first.tool.name == "jq"
        assert (first.cached, first.registry) == (False, served.url)
        assert first.url == f"{served.url}/shims/sha256/{A}.json"
        again = remote.lookup(A)  # within the TTL: no request at all
        assert again.cached
        assert again.tool.name == "jq"
    assert shim_requests(served) == [f"GET /shims/sha256/{A}.json HTTP/1.1 200"]
    cached = json.loads((tmp_path / "cache" / "shims" / "sha256" / f"{A}.json").read_text())
    assert cached["_cached_from"] == served.url
    assert cached["_etag"]
    assert cached["_last_modified"]
    assert cached["_cached_at"]

    with client(served, tmp_path, refresh=True) as remote:
        refreshed = remote.lookup(A)
    assert refreshed.revalidated
    assert refreshed.cached
    assert refreshed.tool.name == "jq"
    assert shim_requests(served)[-1] == f"GET /shims/sha256/{A}.json HTTP/1.1 304"


def documented_shim_types() -> str:
    """The `types` block the registry keepers' page gives `location /shims/sha256/`."""
    page = (Path(__file__).parents[1] / "docs" / "registry-keepers" / "registry.md").read_text()
    block = re.search(r"location /shims/sha256/ \{\s*(types \{[^}]*\})", page)
    assert block, "the page no longer shows the shims' types"
    return "location /shims/sha256/ { " + re.sub(r"#[^\n]*", "", block.group(1)) + " }"


def test_shims_ask_for_and_take_the_atip_media_type(tmp_path):
    """RFC 0.1 Appendix B: ATIP metadata is `application/vnd.atip+json`. The client asks
    for it first, and takes it from an nginx configured as the docs show; `atip serve`
    and the publisher give it to shims (`layout.content_type`)."""
    root = tmp_path / "root"
    put(root, A, shim(A, "jq"))
    log = "$request $status $http_accept | $sent_http_content_type"
    with nginx(root, tmp_path / "nginx", extra=documented_shim_types(), log_format=log) as server:
        with client(server, tmp_path) as remote:
            assert remote.lookup(A).tool.name == "jq"
        [line] = shim_requests(server)
    assert line == (
        f"GET /shims/sha256/{A}.json HTTP/1.1 200 {layout.SHIM_ACCEPT} | {layout.ATIP_MEDIA_TYPE}"
    )
    assert layout.content_type(f"shims/sha256/{A}.json") == "application/vnd.atip+json"
    assert layout.content_type("shims/index.json") == "application/json"
    assert layout.content_type(f"shims/sha256/{A}.json.bundle") == "application/json"


def test_patterns_a_registry_serves_are_read_by_tool_and_cached(tmp_path):
    """§4.4.1: `patterns/index.json` of a built registry, asked only because its manifest
    names it, by tool, as layers (the highest priority last); cached for the TTL."""
    src = tmp_path / "src"
    put(src, A, shim(A, "git"))
    release = {"name": "release", "description": "Tag it", "steps": [{"command": "git tag v1"}]}
    (src / "patterns").mkdir()
    (src / "patterns" / "git.json").write_text(json.dumps([release]))
    assert atip("registry", "build", str(src), str(tmp_path / "site")).exit_code == 0
    plain = tmp_path / "plain"  # a folder of shims: no manifest, so nothing more is asked
    put(plain, B, shim(B, "jq"))
    with (
        nginx(tmp_path / "site", tmp_path / "n1") as org,
        nginx(plain, tmp_path / "n2") as folder,
    ):
        registries = [
            RemoteRegistry(url=org.url, name="org", priority=1),
            RemoteRegistry(url=folder.url, name="folder", priority=2),
        ]
        with RemoteRegistries(settings(*registries), cache_dir=tmp_path / "cache") as remote:
            [layer] = remote.patterns("git")
            assert (layer.source, layer.patterns, layer.notes) == (
                f"{org.url}/patterns/index.json",
                [release],
                [],
            )
            assert remote.patterns("jq") == []
            assert remote.policies() == []
        with RemoteRegistries(settings(*registries), cache_dir=tmp_path / "cache") as remote:
            assert remote.patterns("git")[0].patterns == [release]  # within the TTL: the cache
        asked = [line for line in org.requests() if "patterns" in line]
        assert asked == ["GET /patterns/index.json HTTP/1.1 200"]
        assert [line for line in folder.requests() if "patterns" in line] == []


def test_the_ttl_elapses_and_a_changed_shim_replaces_the_cached_one(served, tmp_path):
    path = put(served.root, A, shim(A, description="old words"))
    registry = RemoteRegistry(url=served.url)
    with RemoteRegistries(settings(registry, ttl="0s"), cache_dir=tmp_path / "c") as remote:
        assert remote.lookup(A).tool.description == "old words"
        assert remote.lookup(A).revalidated  # TTL 0: asked again, unchanged -> 304
        path.write_text(json.dumps(shim(A, description="documentation fixed")))
        os.utime(path, (1, 2_000_000_000))  # a new mtime, so a new ETag
        updated = remote.lookup(A)
    assert updated.tool.description == "documentation fixed"
    assert not updated.cached
    assert [line.split()[-1] for line in shim_requests(served)] == ["200", "304", "200"]


def test_a_withdrawn_shim_leaves_the_cache(served, tmp_path):
    path = put(served.root, A, shim(A))
    with client(served, tmp_path) as remote:
        assert remote.lookup(A).tool is not None
    path.unlink()
    with client(served, tmp_path, refresh=True) as remote:
        gone = remote.lookup(A)
    assert gone.tool is None
    assert [a.outcome for a in gone.attempts] == ["not-found"]
    assert not (tmp_path / "cache" / "shims" / "sha256" / f"{A}.json").exists()


@pytest.mark.parametrize(
    "bad",
    [
        "../../etc/passwd",
        "sha256:../../etc/passwd",
        "../" * 21 + "x",
        "A" * 64,
        "a" * 63,
        "a" * 64 + "\n",
        f"sha256:{A}/../../x",
        f"md5:{A}",
        "",
    ],
)
def test_a_hash_that_is_not_a_hash_is_refused_before_any_request(served, tmp_path, bad):
    with client(served, tmp_path) as remote, pytest.raises(BadHash):
        remote.lookup(bad)
    assert served.requests() == []
    assert not (tmp_path / "cache").exists()


# -- what is accepted -----------------------------------------------------------------------------


def test_a_shim_whose_embedded_hash_differs_is_rejected_and_the_next_registry_asked(
    served, tmp_path
):
    put(served.root, A, shim(B), prefix="evil")  # served under A's name, describes B
    put(served.root, A, shim(A, "honest"), prefix="good")
    evil = RemoteRegistry(url=f"{served.url}/evil", name="evil", priority=10)
    good = RemoteRegistry(url=f"{served.url}/good", name="good", priority=20)
    with RemoteRegistries(settings(good, evil), cache_dir=tmp_path / "c") as remote:
        result = remote.lookup(A)
    assert result.tool is not None
    assert result.tool.name == "honest"
    assert result.registry == good.url
    [refused] = result.rejected
    assert refused.registry == "evil"
    assert refused.reason == f"binary.hash is sha256:{B}, not the lookup key sha256:{A}"
    cached = json.loads((tmp_path / "c" / "shims" / "sha256" / f"{A}.json").read_text())
    assert cached["binary"]["hash"] == f"sha256:{A}"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not a valid shim: "),
        (b"[]", "not a shim: it has no binary block"),
        (
            json.dumps({"atip": "0.6", "name": "t", "version": "1", "description": "d"}).encode(),
            "not a shim: it has no binary block",
        ),
        (
            json.dumps({**shim(A), "commands": {"x": {"effects": {"network": "yes"}}}}).encode(),
            "not a valid shim: ",
        ),
    ],
)
def test_invalid_answers_are_rejected_with_a_reason(served, tmp_path, body, reason):
    put(served.root, A, body)
    with client(served, tmp_path) as remote:
        result = remote.lookup(A)
    assert result.tool is None
    [refused] = result.rejected
    assert refused.reason.startswith(reason)
    assert not (tmp_path / "cache" / "shims").exists()


def test_registries_are_asked_in_priority_order(served, tmp_path):
    put(served.root, A, shim(A, "from-org"), prefix="org")
    put(served.root, A, shim(A, "from-community"), prefix="community")
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "registries.json").write_text(
        json.dumps(
            {
                "registries": [
                    {"name": "community", "url": f"{served.url}/community", "priority": 100},
                    {"name": "org", "url": f"{served.url}/org", "priority": 50},
                    {"name": "off", "url": f"{served.url}/off", "enabled": False},
                ]
            }
        )
    )
    loaded = load_settings()
    assert [r.name for r in loaded.ordered] == ["org", "community"]
    with RemoteRegistries(loaded) as remote:
        assert remote.lookup(A).tool.name == "from-org"
    assert not any("/community/" in line for line in served.requests())


def test_a_manifest_names_the_endpoints(served, tmp_path):
    manifest = {
        "atip": {"version": "0.6"},
        "registry": {"name": "Custom", "url": served.url, "type": "static", "version": "1"},
        "endpoints": {"shims": "/v2/by-hash/{hash}.json"},
    }
    (served.root / ".well-known").mkdir()
    (served.root / ".well-known" / "atip-registry.json").write_text(json.dumps(manifest))
    (served.root / "v2" / "by-hash").mkdir(parents=True)
    (served.root / "v2" / "by-hash" / f"{A}.json").write_text(json.dumps(shim(A)))
    with client(served, tmp_path) as remote:
        assert remote.manifest(remote.registries[0]).registry.name == "Custom"
        assert remote.lookup(A).url == f"{served.url}/v2/by-hash/{A}.json"


@pytest.mark.parametrize(
    "endpoint", ["https://elsewhere.example/{hash}.json", "/shims/../../{hash}", "/no-hash.json"]
)
def test_a_manifest_with_an_endpoint_outside_the_registry_is_refused(served, tmp_path, endpoint):
    (served.root / ".well-known").mkdir()
    (served.root / ".well-known" / "atip-registry.json").write_text(
        json.dumps({"registry": {"name": "x"}, "endpoints": {"shims": endpoint}})
    )
    with client(served, tmp_path) as remote:
        result = remote.lookup(A)
    assert result.tool is None
    [refused] = result.rejected
    assert "endpoints.shims must be a path under the registry" in refused.reason
    assert shim_requests(served) == []


# -- signatures -----------------------------------------------------------------------------------


def require_signatures_manifest(root: Path, signers: list[dict[str, str]] | None = None) -> None:
    (root / ".well-known").mkdir(exist_ok=True)
    (root / ".well-known" / "atip-registry.json").write_text(
        json.dumps(
            {
                "registry": {"name": "signed"},
                "trust": {"requireSignatures": True, "signers": signers or []},
            }
        )
    )


def test_signatures_required_by_the_manifest_are_checked(served, tmp_path):
    secret, public = minisign_keys(tmp_path)
    require_signatures_manifest(served.root)
    signatures.minisign_sign(put(served.root, A, shim(A, "signed")), secret)
    put(served.root, B, shim(B, "unsigned"))
    forged = put(served.root, C, shim(C, "forged"))
    other = tmp_path / "other.json"
    other.write_text("something else")
    signatures.minisign_sign(other, secret)
    Path(f"{forged}.minisig").write_bytes(Path(f"{other}.minisig").read_bytes())

    registry = RemoteRegistry(url=served.url, name="signed", minisign_keys=[str(public)])
    with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c") as remote:
        good = remote.lookup(A)
        unsigned = remote.lookup(B)
        bad = remote.lookup(C)
    assert good.tool is not None
    assert good.verified == "minisign: test.pub"
    assert unsigned.tool is None
    assert unsigned.rejected[0].reason == (
        f"signatures are required: no signature at {served.url}/shims/sha256/{B}.json.minisig"
        " (HTTP 404)"
    )
    assert bad.tool is None
    assert "minisign (test.pub): signature does not verify" in bad.rejected[0].reason


def test_signatures_required_with_no_signer_configured_reject_everything(served, tmp_path):
    put(served.root, A, shim(A))
    registry = RemoteRegistry(url=served.url, require_signatures=True)
    with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c") as remote:
        result = remote.lookup(A)
    assert result.tool is None
    assert "no signer is configured for this registry" in result.rejected[0].reason


@needs_sigstore
def test_a_sigstore_bundle_is_verified_against_the_shim_offline(served, tmp_path):
    """A real Sigstore bundle (signing another file) fails against the shim it is served
    with: the real verifier, against a trusted root on disk, with no network."""
    p1 = SIGSTORE / "production-v03-message-gha"
    identity = (
        "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
        ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"
    )
    issuer = "https://token.actions.githubusercontent.com"
    require_signatures_manifest(served.root, [{"identity": identity, "issuer": issuer}])
    path = put(served.root, A, shim(A))
    Path(f"{path}.bundle").write_bytes((p1 / "bundle.sigstore.json").read_bytes())
    registry = RemoteRegistry(
        url=served.url, trusted_root=str(SIGSTORE / "trusted_root.production.json")
    )
    with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c") as remote:
        result = remote.lookup(A)
    assert result.tool is None
    reason = result.rejected[0].reason
    assert reason.startswith(f"signatures are required: sigstore ({identity}): bundle does not")
    # the same bundle does verify the file it signs, through the same function
    assert signatures.sigstore_verify(
        (p1 / "a.txt").read_bytes(),
        (p1 / "bundle.sigstore.json").read_bytes(),
        identity=identity,
        issuer=issuer,
        trusted_root=SIGSTORE / "trusted_root.production.json",
    ).ok


def test_a_cached_unverified_shim_is_not_served_once_signatures_are_required(served, tmp_path):
    put(served.root, A, shim(A))
    with client(served, tmp_path) as remote:
        assert remote.lookup(A).tool is not None
    strict = RemoteRegistry(url=served.url, name="test", require_signatures=True)
    with RemoteRegistries(settings(strict), cache_dir=tmp_path / "cache") as remote:
        result = remote.lookup(A)
    assert result.tool is None
    assert result.rejected


# -- authentication, redirects, limits ------------------------------------------------------------

TOKEN = "s3cret-t0ken-value"


@pytest.fixture
def guarded(tmp_path):
    """nginx that serves /private/ only with the bearer token, logs the Authorization header
    it got, and redirects /moved/ within itself and /away/ to a second nginx."""
    root = tmp_path / "root"
    (root / "private").mkdir(parents=True)
    with nginx(
        tmp_path / "other-root",
        tmp_path / "other",
        log_format="$request $status $http_authorization",
    ) as other:
        extra = f"""
        location /private/ {{
            if ($http_authorization != "Bearer {TOKEN}") {{ return 401; }}
            try_files $uri =404;
        }}
        location /moved/ {{ rewrite ^/moved/(.*)$ /private/$1 redirect; }}
        location /away/ {{ rewrite ^/away/(.*)$ {other.url}/$1 redirect; }}
        """
        (tmp_path / "other-root").mkdir(exist_ok=True)
        with nginx(
            root, tmp_path / "main", extra=extra, log_format="$request $status $http_authorization"
        ) as main:
            yield main, other


def test_a_bearer_token_goes_to_its_registry_only_and_is_never_reported(
    guarded, tmp_path, monkeypatch
):
    main, other = guarded
    put(main.root, A, shim(A), prefix="private")
    put(other.root, B, shim(B), prefix="shims-b")
    auth = Auth(type="bearer", token_env_var="ATIP_TEST_TOKEN")

    def lookup(url: str, hash_: str, **extra: Any):
        registry = RemoteRegistry(url=url, auth=auth, **extra)
        with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c", refresh=True) as r:
            return r.lookup(hash_)

    missing = lookup(f"{main.url}/private", A)
    assert [a.outcome for a in missing.attempts] == ["skipped"]
    assert "ATIP_TEST_TOKEN is not set" in missing.attempts[0].reason

    monkeypatch.setenv("ATIP_TEST_TOKEN", "wrong")
    denied = lookup(f"{main.url}/private", A)
    [refused] = denied.attempts
    assert refused.outcome == "denied"
    assert refused.reason == f"{main.url}/private/.well-known/atip-registry.json: HTTP 401"

    monkeypatch.setenv("ATIP_TEST_TOKEN", TOKEN)
    assert lookup(f"{main.url}/private", A).tool is not None
    # a redirect elsewhere, allowed by the configuration, does not carry the token along
    put(other.root, B, shim(B))
    moved = lookup(f"{main.url}/away", B, allow_redirects_to=[other.url])
    assert moved.tool is not None
    assert any(line.endswith(f"Bearer {TOKEN}") for line in main.requests())
    assert other.requests()
    assert all(TOKEN not in line for line in other.requests())
    for result in (missing, denied, moved):
        assert TOKEN not in json.dumps(result.to_dict())


def test_redirects_stay_on_their_origin_unless_allowed(guarded, tmp_path, monkeypatch):
    main, other = guarded
    monkeypatch.setenv("ATIP_TEST_TOKEN", TOKEN)
    put(main.root, A, shim(A), prefix="private")
    put(other.root, A, shim(A))
    auth = Auth(type="bearer", token_env_var="ATIP_TEST_TOKEN")
    same = RemoteRegistry(url=f"{main.url}/moved", auth=auth)
    away = RemoteRegistry(url=f"{main.url}/away")
    with RemoteRegistries(settings(same), cache_dir=tmp_path / "a") as remote:
        assert remote.lookup(A).tool is not None  # /moved -> /private on the same origin
    with RemoteRegistries(settings(away), cache_dir=tmp_path / "b") as remote:
        refused = remote.lookup(A)
    assert refused.tool is None
    assert "redirect to another origin" in refused.rejected[0].reason
    assert not any("/shims/" in line for line in other.requests())


@pytest.mark.parametrize("compressed", [False, True])
def test_a_shim_over_the_size_limit_is_not_read(tmp_path, compressed):
    big = shim(A, description="x" * 180)
    big["commands"]["more"] = {"description": "y " * 20_000, "effects": {"network": False}}
    root = tmp_path / "root"
    put(root, A, big)
    # gzip on the fly: no Content-Length, so the limit is enforced while reading
    extra = "gzip on; gzip_types application/json; gzip_min_length 1;" if compressed else ""
    with nginx(root, tmp_path / "n", extra=extra) as server:
        registry = RemoteRegistry(url=server.url, max_bytes=10_000)
        with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c") as remote:
            result = remote.lookup(A)
    assert result.tool is None
    assert "more than the limit" in result.rejected[0].reason


@pytest.mark.parametrize(
    ("drip", "reasons"),
    [
        ("limit_rate 40;", {"no response within 1 s"}),  # even the headers drip
        (
            "limit_rate_after 1k; limit_rate 40;",  # headers at once, then the body drips
            {"the response took longer than 1 s", "timed out while reading"},
        ),
    ],
)
def test_a_registry_that_drips_is_cut_off_at_the_deadline(tmp_path, drip, reasons):
    root = tmp_path / "root"
    put(root, A, shim(A, description="z" * 190) | {"x-padding": "p" * 4000})
    location = f"location /shims/ {{ {drip} }}"  # the manifest's 404 comes at full speed
    with nginx(root, tmp_path / "n", extra=location) as server:
        registry = RemoteRegistry(url=server.url, timeout=1.0)
        with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c") as remote:
            started = time.monotonic()
            result = remote.lookup(A)
            seconds = time.monotonic() - started
    assert result.tool is None
    [attempt] = result.attempts
    assert (attempt.outcome, attempt.url) == ("unreachable", f"{server.url}/shims/sha256/{A}.json")
    assert attempt.reason in reasons
    assert seconds < 1 + BUSY  # the drip takes 100 s


# -- offline, unreachable, configuration changes ---------------------------------------


def test_offline_serves_the_cache_only(served, tmp_path):
    put(served.root, A, shim(A))
    with client(served, tmp_path) as remote:
        remote.lookup(A)
    before = len(served.requests())
    offline = Settings(registries=[RemoteRegistry(url=served.url, name="test")], offline=True)
    with RemoteRegistries(offline, cache_dir=tmp_path / "cache", refresh=True) as remote:
        assert remote.lookup(A).tool is not None
        assert remote.lookup(B).tool is None
    assert len(served.requests()) == before


def age(path: Path, days: float) -> None:
    """Make a cached shim `days` old: its stamp and its mtime (which a 304 renews)."""
    data = json.loads(path.read_text())
    moment = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    data["_cached_at"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(json.dumps(data))
    os.utime(path, (moment.timestamp(), moment.timestamp()))


def test_an_unreachable_registry_leaves_a_stale_copy_until_the_cache_expires(tmp_path):
    root = tmp_path / "root"
    put(root, A, shim(A))
    with nginx(root, tmp_path / "n") as server:
        url = server.url
        with RemoteRegistries(settings(RemoteRegistry(url=url)), cache_dir=tmp_path / "c") as r:
            assert r.lookup(A).tool is not None
    cached = tmp_path / "c" / "shims" / "sha256" / f"{A}.json"
    age(cached, 2)
    with RemoteRegistries(settings(RemoteRegistry(url=url)), cache_dir=tmp_path / "c") as r:
        stale = r.lookup(A)
    assert stale.tool is not None
    assert stale.stale
    assert [a.outcome for a in stale.attempts] == ["unreachable"]
    age(cached, 8)
    with RemoteRegistries(settings(RemoteRegistry(url=url)), cache_dir=tmp_path / "c") as r:
        assert r.lookup(A).tool is None


def test_a_cached_shim_from_a_registry_no_longer_configured_is_not_served(served, tmp_path):
    put(served.root, A, shim(A, "first"), prefix="one")
    put(served.root, A, shim(A, "second"), prefix="two")
    one = RemoteRegistry(url=f"{served.url}/one")
    two = RemoteRegistry(url=f"{served.url}/two")
    with RemoteRegistries(settings(one), cache_dir=tmp_path / "c") as remote:
        assert remote.lookup(A).tool.name == "first"
    with RemoteRegistries(settings(two), cache_dir=tmp_path / "c") as remote:
        assert remote.lookup(A).tool.name == "second"


# -- configuration ----------------------------------------------------------------------------


def write_config(tmp_path: Path, data: Any) -> None:
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    (config / "registries.json").write_text(text)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{", "registries.json: line 1, column 2"),
        ({"registries": [{"url": "https://x", "priority": "high"}]}, "Expected `int`"),
        ({"registries": [{"url": "ftp://x"}]}, "url must start with http:// or https://"),
        ({"registries": [{"name": "no url"}]}, "missing required field `url`"),
        ({"registries": [], "defaults": {"ttl": "a day"}}, "not a duration"),
        ({"registries": [{"url": "https://x", "auth": {"type": "basic"}}]}, "auth.type"),
    ],
)
def test_a_broken_registries_file_is_one_clear_error(tmp_path, data, message):
    write_config(tmp_path, data)
    with pytest.raises(RegistryConfigError) as error:
        load_settings()
    assert "registries.json" in str(error.value)
    assert message in str(error.value)


def test_atip_registries_replaces_the_list_and_keeps_known_settings(tmp_path, monkeypatch):
    auth = {"type": "bearer", "tokenEnvVar": "ORG_TOKEN"}
    write_config(
        tmp_path,
        {
            "registries": [
                {"url": "https://org.example/atip", "auth": auth, "priority": 1},
                {"url": "https://community.example"},
            ]
        },
    )
    monkeypatch.setenv("ATIP_REGISTRIES", "https://new.example, https://org.example/atip/")
    loaded = load_settings()
    assert [r.url for r in loaded.ordered] == [
        "https://new.example",
        "https://org.example/atip",
    ]
    assert loaded.ordered[1].auth.token_env_var == "ORG_TOKEN"
    assert loaded.source.startswith("ATIP_REGISTRIES with ")
    monkeypatch.setenv("ATIP_REGISTRIES", "not-a-url")
    with pytest.raises(RegistryConfigError, match="ATIP_REGISTRIES: url must start with"):
        load_settings()
    monkeypatch.setenv("ATIP_OFFLINE", "1")
    monkeypatch.delenv("ATIP_REGISTRIES")
    assert load_settings().offline


def test_a_token_is_never_sent_over_plain_http_beyond_loopback(tmp_path, monkeypatch):
    monkeypatch.setenv("ATIP_TEST_TOKEN", TOKEN)
    auth = Auth(type="bearer", token_env_var="ATIP_TEST_TOKEN")
    registry = RemoteRegistry(url="http://registry.example", auth=auth)
    with RemoteRegistries(settings(registry), cache_dir=tmp_path / "c") as remote:
        result = remote.lookup(A)
    assert [a.outcome for a in result.attempts] == ["skipped"]
    assert "refusing to send a bearer token over plain http" in result.attempts[0].reason


# -- resolution and the command line ---------------------------------------------------------------


def legacy_tool(tmp_path: Path) -> Path:
    """An executable that does not speak ATIP."""
    path = tmp_path / "bin" / "oldtool"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\necho 'oldtool: usage: oldtool FILE' >&2\nexit 2\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_resolution_finds_a_shim_in_a_remote_registry(served, tmp_path, monkeypatch):
    binary = legacy_tool(tmp_path)
    hex_digits = sha256_file(binary).removeprefix("sha256:")
    put(served.root, hex_digits, shim(hex_digits, "oldtool", "An old tool"))
    monkeypatch.setenv("ATIP_REGISTRIES", served.url)
    resolved = resolve_tool(str(binary))
    assert (resolved.source, resolved.tool.description) == ("shim", "An old tool")
    assert resolved.origins["metadata"] == f"remote:{served.url}/shims/sha256/{hex_digits}.json"
    from atipkit.registry.local import LocalRegistry

    assert LocalRegistry().read().tools["oldtool"].shim_registry == served.url
    monkeypatch.delenv("ATIP_REGISTRIES")
    with pytest.raises(LookupError):  # without the registry, nothing describes it
        resolve_tool(str(binary), refresh=True)


def test_atip_registry_fetch(served, tmp_path, monkeypatch):
    put(served.root, A, shim(A, "jq"))
    monkeypatch.setenv("ATIP_REGISTRIES", served.url)
    found = atip("registry", "fetch", f"sha256:{A}", "--text")
    assert found.exit_code == 0
    assert json.loads(found.stdout)["binary"]["hash"] == f"sha256:{A}"  # the shim itself
    assert f"sha256:{A}: jq 1.0 from {served.url} (fetched)" in found.stderr
    report = envelope_of(atip("registry", "fetch", A))["result"]
    assert (report["found"], report["cached"], report["shim"]["binary"]["name"]) == (
        True,
        True,
        "jq",
    )
    assert (report["hash"], report["registry"]) == (f"sha256:{A}", served.url)
    # a cached copy is the same document as the fetched one: no cache stamps (§4.7)
    assert report["shim"] == json.loads(found.stdout)
    assert not [key for key in report["shim"] if key.startswith("_")]


def test_atip_registry_fetch_failures(served, tmp_path, monkeypatch):
    put(served.root, B, shim(C))  # served under B's name, describes C
    monkeypatch.setenv("ATIP_REGISTRIES", served.url)
    missing = atip("registry", "fetch", "d" * 64)
    assert missing.exit_code == 10
    out = envelope_of(missing)
    assert out["result"]["attempts"][0]["outcome"] == "not-found"
    assert out["result"]["shim"] is None
    text = atip("registry", "fetch", "d" * 64, "--text")
    assert (text.exit_code, text.stdout) == (10, "")
    assert "no registry has a shim for this binary" in text.stderr
    rejected = atip("registry", "fetch", B)
    assert rejected.exit_code == 30
    out = envelope_of(rejected)
    assert out["error"]["code"] == "E2010"
    assert out["result"]["attempts"][0]["reason"].startswith(f"binary.hash is sha256:{C}")
    assert out["result"]["attempts"][0]["refusal"] == "other-binary"
    assert "rejected: binary.hash is" in atip("registry", "fetch", B, "--text").stderr
    before = len(served.requests())
    bad = atip("registry", "fetch", "zz-not-a-tool")
    assert bad.exit_code == 10
    assert "is not a sha256 hash" in envelope_of(bad)["error"]["message"]
    short = atip("registry", "fetch", "sha256:abc")
    assert (short.exit_code, envelope_of(short)["error"]["code"]) == (2, "E1002")
    assert len(served.requests()) == before  # neither was asked of any registry
    monkeypatch.delenv("ATIP_REGISTRIES")
    none = atip("registry", "fetch", A)
    assert none.exit_code == 2
    out = envelope_of(none)
    assert (out["error"]["code"], "no registries configured" in out["error"]["message"]) == (
        "E1009",
        True,
    )
    write_config(tmp_path, "{")
    broken = atip("registry", "fetch", A)
    assert (broken.exit_code, envelope_of(broken)["error"]["code"]) == (2, "E1009")
    assert "registries.json" in envelope_of(broken)["error"]["message"]


def test_atip_registry_fetch_an_invalid_shim_is_a_data_format_error(served, monkeypatch):
    put(served.root, A, b"{not json")
    monkeypatch.setenv("ATIP_REGISTRIES", served.url)
    invalid = atip("registry", "fetch", A)
    assert invalid.exit_code == 65
    assert envelope_of(invalid)["result"]["attempts"][0]["reason"].startswith("not a valid shim: ")
    assert envelope_of(invalid)["result"]["attempts"][0]["refusal"] == "invalid"


def test_atip_registry_fetch_an_unsigned_shim_is_refused(served, tmp_path, monkeypatch):
    put(served.root, A, shim(A))
    _, public = minisign_keys(tmp_path)
    registry = {"url": served.url, "requireSignatures": True, "minisignKeys": [str(public)]}
    write_config(tmp_path, {"registries": [registry]})
    unsigned = atip("registry", "fetch", A)
    assert unsigned.exit_code == 30
    out = envelope_of(unsigned)
    assert out["error"]["code"] == "E2011"
    assert out["result"]["attempts"][0]["reason"].startswith("signatures are required")
    assert out["result"]["attempts"][0]["refusal"] == "unsigned"


def test_atip_registry_fetch_says_access_was_denied_and_how_to_give_credentials(
    tmp_path, monkeypatch
):
    extra = f"""
    location /forbidden/ {{ return 403; }}
    location /private/ {{
        if ($http_authorization != "Bearer {TOKEN}") {{ return 401; }}
        try_files $uri =404;
    }}
    """
    (tmp_path / "root").mkdir()
    with nginx(tmp_path / "root", tmp_path / "nginx", extra=extra) as server:
        put(server.root, A, shim(A), prefix="private")
        forbidden = f"{server.url}/forbidden"
        monkeypatch.setenv("ATIP_REGISTRIES", forbidden)
        out = envelope_of(answer := atip("registry", "fetch", A))
        assert (answer.exit_code, out["error"]["code"]) == (30, "E2013")
        message, fix = out["error"]["message"], out["error"]["suggestion"]["fix"]
        assert "denied access" in message
        assert f"{forbidden}/.well-known/atip-registry.json: HTTP 403" in message
        assert "network" not in message + fix
        assert '"auth": {"type": "bearer", "tokenEnvVar": "REGISTRY_TOKEN"}' in fix
        assert f'"url": "{forbidden}"' in fix
        assert str(tmp_path / "config" / "agent-tools" / "registries.json") in fix
        assert [a["outcome"] for a in out["result"]["attempts"]] == ["denied"]
        text = atip("registry", "fetch", A, "--text")
        assert "denied" in text.stderr
        assert "unreachable" not in text.stderr
        [row] = envelope_of(atip("registry", "list", "--check"))["result"]["registries"]
        assert row["check"]["detail"].startswith("denied access: ")

        # a token configured and refused: the fix is the token, not the configuration
        private = f"{server.url}/private"
        auth = {"type": "bearer", "tokenEnvVar": "ATIP_TEST_TOKEN"}
        write_config(tmp_path, {"registries": [{"url": private, "auth": auth}]})
        monkeypatch.delenv("ATIP_REGISTRIES")
        monkeypatch.setenv("ATIP_TEST_TOKEN", "expired")
        out = envelope_of(answer := atip("registry", "fetch", A))
        assert (answer.exit_code, out["error"]["code"]) == (30, "E2013")
        assert "HTTP 401" in out["error"]["message"]
        assert "$ATIP_TEST_TOKEN was refused" in out["error"]["suggestion"]["fix"]
        assert "expired" not in json.dumps(out)
        monkeypatch.setenv("ATIP_TEST_TOKEN", TOKEN)
        assert atip("registry", "fetch", A).exit_code == 0


def test_atip_registry_fetch_unreachable_registries(tmp_path, monkeypatch):
    monkeypatch.setenv("ATIP_REGISTRIES", f"http://127.0.0.1:{free_port()}")
    down = atip("registry", "fetch", A)
    assert down.exit_code == 40
    out = envelope_of(down)
    assert out["error"]["is_retryable"] is True
    assert [a["outcome"] for a in out["result"]["attempts"]] == ["unreachable"]


def test_atip_registry_list_never_shows_a_token(served, tmp_path, monkeypatch):
    monkeypatch.setenv("ORG_TOKEN", TOKEN)
    closed = f"http://127.0.0.1:{free_port()}"
    write_config(
        tmp_path,
        {
            "registries": [
                {
                    "name": "org",
                    "url": served.url,
                    "priority": 1,
                    "auth": {"type": "bearer", "tokenEnvVar": "ORG_TOKEN"},
                },
                {"name": "down", "url": closed, "requireSignatures": True, "trust": "medium"},
            ]
        },
    )
    listed = atip("registry", "list", "--check")
    assert listed.exit_code == 40  # `down` does not answer
    out = envelope_of(listed)
    assert out["error"]["message"].startswith("down does not answer: ")
    data = out["result"]
    assert [
        (r["name"], r["auth"], r["requireSignatures"], r["trust"]) for r in data["registries"]
    ] == [
        ("org", "ORG_TOKEN", False, "low"),
        ("down", None, True, "medium"),
    ]
    assert data["registries"][0]["check"]["ok"]
    assert not data["registries"][1]["check"]["ok"]
    human = atip("registry", "list", "--text")
    assert human.exit_code == 0
    assert TOKEN not in listed.output + human.output
    assert human.stdout.splitlines() == [
        f"org  {served.url}  (priority 1, trust low, token from $ORG_TOKEN)",
        f"down  {closed}  (priority 100, trust medium, signatures required)",
    ]
    assert envelope_of(atip("registry", "list"))["result"]["registries"][0]["name"] == "org"


def test_atip_registry_list_empty_broken_and_offline(tmp_path, monkeypatch):
    empty = atip("registry", "list", "--text")
    assert (empty.exit_code, empty.stdout) == (
        0,
        "no registries configured (registries.json or ATIP_REGISTRIES)\n",
    )
    monkeypatch.setenv("ATIP_OFFLINE", "1")
    monkeypatch.setenv("ATIP_REGISTRIES", "https://registry.example")
    offline = atip("registry", "list", "--check", "--text")  # offline: nothing is asked
    assert offline.exit_code == 0
    assert offline.stderr == "offline (ATIP_OFFLINE): only cached shims are used\n"
    assert envelope_of(atip("registry", "list"))["result"]["offline"] is True
    monkeypatch.setenv("ATIP_REGISTRIES", "not-a-url")
    broken = atip("registry", "list")
    assert (broken.exit_code, envelope_of(broken)["error"]["code"]) == (2, "E1009")


# -- a registry built by atip registry build, served by nginx -------------------------------------


def test_a_built_registry_served_by_nginx(tmp_path):
    """The issue's path end to end: `atip registry build` makes the static layout, nginx
    serves it, the client fetches by hash, revalidates with a 304, refuses a shim the host
    swapped for another binary's, refuses an unsigned shim when signatures are required,
    and sends nothing for a hash that is not one."""
    secret, public = minisign_keys(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    for hex_digits, name in ((A, "signed"), (B, "unsigned"), (C, "other")):
        (src / f"{hex_digits}.json").write_text(json.dumps(shim(hex_digits, name)))
    signatures.minisign_sign(src / f"{A}.json", secret)
    built = CliRunner().invoke(cli, ["registry", "build", str(src), str(tmp_path / "site")])
    assert built.exit_code == 0, built.output
    site = tmp_path / "site"
    assert (site / "shims" / "sha256" / f"{A}.json.minisig").is_file()

    with nginx(site, tmp_path / "nginx") as server:
        plain = RemoteRegistry(url=server.url, name="built")
        with RemoteRegistries(settings(plain), cache_dir=tmp_path / "c1") as remote:
            assert remote.lookup(A).tool.name == "signed"
        with RemoteRegistries(settings(plain), cache_dir=tmp_path / "c1", refresh=True) as r:
            assert r.lookup(A).revalidated
        assert shim_requests(server)[-1] == f"GET /shims/sha256/{A}.json HTTP/1.1 304"

        # the host is compromised: C's file now holds B's shim
        (site / "shims" / "sha256" / f"{C}.json").write_bytes(
            (site / "shims" / "sha256" / f"{B}.json").read_bytes()
        )
        with RemoteRegistries(settings(plain), cache_dir=tmp_path / "c2") as remote:
            swapped = remote.lookup(C)
        assert swapped.tool is None
        assert swapped.rejected[0].reason.startswith(f"binary.hash is sha256:{B}")

        strict = RemoteRegistry(
            url=server.url, require_signatures=True, minisign_keys=[str(public)]
        )
        with RemoteRegistries(settings(strict), cache_dir=tmp_path / "c3") as remote:
            assert remote.lookup(A).verified == "minisign: test.pub"
            unsigned = remote.lookup(B)
            before = len(server.requests())
            with pytest.raises(BadHash):
                remote.lookup("../../etc/passwd")
        assert unsigned.tool is None
        assert "no signature at" in unsigned.rejected[0].reason
        assert len(server.requests()) == before


def test_a_registry_given_in_code_is_trusted_as_its_settings_say(served, tmp_path):
    """The trust of a shim's registry comes from the registries actually asked (a library
    caller's `remote`), not from reading registries.json again; the lookup reports it."""
    binary = legacy_tool(tmp_path)
    hex_digits = sha256_file(binary).removeprefix("sha256:")
    put(served.root, hex_digits, shim(hex_digits, "oldtool"))
    trusted = RemoteRegistry(url=served.url, name="ours", trust="high")
    remote = RemoteRegistries(settings(trusted), cache_dir=tmp_path / "cache")
    with remote:
        found = resolve_tool(str(binary), remote=remote)
        assert found.evidence.registry_trust == "high"
        assert remote.lookup(hex_digits).to_dict()["trust"] == "high"  # from the cache too


def test_a_damaged_signature_stamp_in_the_cache_costs_one_fetch(served, tmp_path):
    put(served.root, A, shim(A, "jq"))
    with client(served, tmp_path) as remote:
        assert remote.lookup(A).tool is not None
    path = tmp_path / "cache" / "shims" / "sha256" / f"{A}.json"
    data = json.loads(path.read_text())
    data["_verified"] = {"not": "a string"}
    path.write_text(json.dumps(data))
    with client(served, tmp_path) as remote:
        again = remote.lookup(A)
    assert again.verified is None
    assert again.tool is not None
