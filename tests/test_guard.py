"""Loopback, exactly (`atipkit._http.is_loopback`), and the rules of the one guard every
server runs behind (`atipkit.serve.guard`). The servers themselves are tried with real
requests in their own tests: test_serve_tdp.py, test_gateway.py, test_app_http.py and
test_app_mcp.py."""

from __future__ import annotations

import pytest

from atipkit._http import is_loopback, is_loopback_host
from atipkit.registry.config import Auth, Defaults, RemoteRegistry, Settings
from atipkit.registry.remote import RemoteRegistries
from atipkit.serve.guard import GuardError, Rules, host_name, origin_of


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/x",
        "http://127.8.9.10/",
        "http://localhost/",
        "http://LOCALHOST:9/",
        "http://[::1]:80/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
def test_loopback_urls(url):
    assert is_loopback(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.evil.com/",  # a name: anyone can point it anywhere
        "http://127.0.0.1.nip.io/",
        "http://localhost.evil.com/",
        "http://localhost./",
        "http://127.1/",  # not an IP literal to every parser: refused, not guessed
        "http://2130706433/",
        "http://[::ffff:10.0.0.1]/",
        "http://10.0.0.1/",
        "http://[::1/",  # malformed
        "http:///nothing",
    ],
)
def test_names_that_only_look_like_loopback_are_not(url):
    assert not is_loopback(url)


def test_a_bearer_token_never_goes_over_plain_http_to_a_name_starting_with_127(
    tmp_path, monkeypatch
):
    """`is_loopback` was `host.startswith("127.")`: a registry at http://127.evil.com
    would have been sent the token unencrypted."""
    monkeypatch.setenv("ATIP_TEST_TOKEN", "t0ken-never-sent")
    auth = Auth(type="bearer", token_env_var="ATIP_TEST_TOKEN")
    registry = RemoteRegistry(url="http://127.evil.com", auth=auth)
    settings = Settings(registries=[registry], defaults=Defaults())
    with RemoteRegistries(settings, cache_dir=tmp_path / "cache") as remote:
        result = remote.lookup("a" * 64)
    [attempt] = result.attempts
    assert attempt.outcome == "skipped"
    assert "refusing to send a bearer token over plain http" in attempt.reason


def test_host_headers_are_read_like_servers_read_them():
    assert host_name("LocalHost:8000") == "localhost"
    assert host_name("[::1]:80") == "::1"
    assert host_name("[::1]") == "::1"
    assert host_name("example.org") == "example.org"
    assert is_loopback_host("[::1]")
    assert not is_loopback_host("127.0.0.1.evil.com")


def test_who_a_loopback_server_answers():
    rules = Rules("127.0.0.1")
    for name in ("localhost", "127.0.0.1", "127.0.0.53", "::1"):
        assert rules.host_allowed(name), name
    for name in ("evil.example", "127.evil.com", "192.168.1.5", "0.0.0.0", ""):
        assert not rules.host_allowed(name), name
    assert rules.origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000")  # its own page
    assert rules.origin_allowed("http://localhost", "localhost:80")
    assert not rules.origin_allowed("http://localhost:3000", "127.0.0.1:8000")
    assert not rules.origin_allowed("null", "127.0.0.1:8000")
    assert rules.cors_origin("http://127.0.0.1:8000") is None  # no CORS unless asked


def test_who_a_server_on_every_address_answers():
    rules = Rules("0.0.0.0", hosts=["Registry.Example.org"])
    assert rules.host_allowed("192.168.1.5")  # an IP address cannot be rebound
    assert rules.host_allowed("registry.example.org")
    assert not rules.host_allowed("attacker.example")
    bound = Rules("192.168.1.5")
    assert bound.host_allowed("192.168.1.5")
    assert not bound.host_allowed("192.168.1.6")


def test_allowed_origins_and_their_spellings():
    rules = Rules("127.0.0.1", origins=["HTTP://LocalHost:3000/", "https://app.example:443"])
    assert rules.origin_allowed("http://localhost:3000", "127.0.0.1:8000")
    assert rules.cors_origin("http://localhost:3000") == "http://localhost:3000"
    assert rules.cors_origin("https://app.example") == "https://app.example"
    assert rules.cors_origin("http://localhost:3001") is None
    assert not rules.origin_allowed("null", "127.0.0.1:8000")
    files = Rules("127.0.0.1", origins=["null"])  # sandboxed pages and files, when asked
    assert files.cors_origin("null") == "null"
    assert not files.origin_allowed("garbage", "127.0.0.1:8000")
    anyone = Rules("127.0.0.1", origins=["*"])
    assert anyone.cors_origin("https://whoever.example") == "*"
    assert origin_of("http://[::1]:8000") == "http://[::1]:8000"
    for bad in ("localhost:3000", "http://x.example/path", "ftp://x", "http://", "http://a:b"):
        with pytest.raises(GuardError):
            origin_of(bad)


def test_websockets_are_guarded_like_every_request():
    """A page may open a websocket to any address: the browser sends its Origin but asks
    no preflight, and a rebound name is the Host. No server of atipkit has a websocket
    route today; one added behind the guard is guarded (it let every websocket by)."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from atipkit.serve.guard import guard, json_refusal

    async def inventory(websocket):
        await websocket.accept()
        await websocket.send_text("the machine's tools")
        await websocket.close()

    web = Starlette(routes=[WebSocketRoute("/ws", inventory)])
    client = TestClient(guard(web, Rules("127.0.0.1"), json_refusal, ("GET",)))
    url = "ws://127.0.0.1:8000/ws"
    for headers in (
        {"origin": "https://evil.example"},
        {"origin": "http://localhost:3000"},
        {"host": "evil.example"},
        {"host": "127.evil.com:8000", "origin": "http://127.evil.com:8000"},
    ):
        with (  # closed before it is accepted: 403 from a real server
            pytest.raises(WebSocketDisconnect) as closed,
            client.websocket_connect(url, headers=headers) as socket,
        ):
            socket.receive_text()
        assert closed.value.code == 1008, headers
    for headers in ({}, {"host": "[::1]:8000", "origin": "http://[::1]:8000"}):
        with client.websocket_connect(url, headers=headers) as socket:
            assert socket.receive_text() == "the machine's tools"
