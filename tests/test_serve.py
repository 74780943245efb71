"""`atip serve --registry` as a real process: where it listens said at once (`--jsonl`, text),
files with their types, ETag and Last-Modified with 304s, HEAD, JSON 404s, no traversal;
atipkit's own remote client reads a registry through it; its failures and exit statuses."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from atipkit.cli import cli
from atipkit.registry import layout
from atipkit.registry.remote import RemoteRegistries
from tests.test_registry_build import CURL, EPOCH, make_shim, put

SERVE = [sys.executable, "-m", "atipkit", "serve"]


@dataclass
class Served:
    url: str
    port: int
    root: Path
    process: subprocess.Popen[str]


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("serve")
    src = base / "src"
    put(src, CURL.name, CURL.read_bytes())
    hex_, data = make_shim("jq", "1.7", "linux-amd64")
    put(src, f"{hex_}.json", data)
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH}
    result = CliRunner(env=env).invoke(cli, ["registry", "build", str(src), str(base / "site")])
    assert result.exit_code == 0, result.output
    (base / "secret.txt").write_text("outside the registry")
    (base / "site" / "leak.json").symlink_to(base / "secret.txt")
    (base / "site" / ".hidden").write_text("a dotfile")
    return base / "site"


@pytest.fixture(scope="module")
def served(registry) -> Iterator[Served]:
    process = subprocess.Popen(
        [*SERVE, "--registry", str(registry), "--port", "0", "--jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line, process.stderr.read()  # type: ignore[union-attr]
        started = json.loads(line)
        assert started["registry"] == str(registry)
        url = started["url"]
        yield Served(url, int(url.rsplit(":", 1)[1].strip("/")), registry, process)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(10)
    assert process.returncode == 0, process.stderr.read()  # type: ignore[union-attr]
    assert process.stdout.read() == ""  # type: ignore[union-attr]  # the one record, no more


pytestmark = pytest.mark.usefixtures("isolated_home")


def raw_get(served: Served, path: str) -> tuple[int, dict[str, str], bytes]:
    """A request with the path exactly as written: httpx would normalize `..` away."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_a_shim_with_its_type_cache_control_and_validators(served):
    response = httpx.get(f"{served.url}shims/sha256/{CURL.name}")
    assert response.status_code == 200
    assert response.content == CURL.read_bytes()
    assert response.headers["content-type"] == "application/vnd.atip+json"
    assert response.headers["cache-control"] == layout.SHIM_CACHE_CONTROL
    etag, modified = response.headers["etag"], response.headers["last-modified"]
    assert etag.startswith('"')
    assert modified.endswith(" GMT")

    for headers in ({"If-None-Match": etag}, {"If-None-Match": f'"x", W/{etag}'}):
        again = httpx.get(f"{served.url}shims/sha256/{CURL.name}", headers=headers)
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == etag
    since = httpx.get(
        f"{served.url}shims/sha256/{CURL.name}", headers={"If-Modified-Since": modified}
    )
    assert since.status_code == 304
    other = httpx.get(f"{served.url}shims/sha256/{CURL.name}", headers={"If-None-Match": '"x"'})
    assert other.status_code == 200
    # If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3)
    both = {"If-None-Match": '"x"', "If-Modified-Since": modified}
    assert httpx.get(f"{served.url}shims/sha256/{CURL.name}", headers=both).status_code == 200


def test_head_and_the_page_and_the_manifest(served):
    head = httpx.head(f"{served.url}{layout.CATALOG}")
    assert head.status_code == 200
    assert head.content == b""
    size = (served.root / layout.CATALOG).stat().st_size
    assert head.headers["content-length"] == str(size)
    assert head.headers["cache-control"] == layout.INDEX_CACHE_CONTROL
    page = httpx.get(served.url)
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.content == (served.root / "index.html").read_bytes()
    manifest = httpx.get(f"{served.url}{layout.MANIFEST}")
    assert manifest.json()["registry"]["type"] == "static"


@pytest.mark.parametrize(
    "path",
    [
        "/../secret.txt",
        "/shims/../../secret.txt",
        "/shims/%2e%2e/%2e%2e/secret.txt",
        "/shims/..%2f..%2fsecret.txt",
        "/leak.json",  # a symlink that leads out
        "/.hidden",
        "/shims",
        "/shims/",
        "/shims/sha256/",
        "/shims//index.json",
        "/nothing.json",
        "/shims/sha256/" + "0" * 64 + ".json",
    ],
)
def test_nothing_else_is_served(served, path):
    status, headers, body = raw_get(served, path)
    assert status == 404
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": "not-found", "message": "no such file in this registry"}


def test_only_get_and_head(served):
    response = httpx.post(f"{served.url}{layout.CATALOG}", content=b"{}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"
    assert response.json()["error"] == "method-not-allowed"


def test_the_remote_client_reads_the_served_registry(served, monkeypatch):
    monkeypatch.setenv("ATIP_REGISTRIES", served.url.rstrip("/"))
    with RemoteRegistries.from_environment() as remote:
        found = remote.lookup(CURL.stem)
        assert found.tool is not None
        assert found.tool.name == "curl"
        assert not found.cached
        assert remote.manifest(remote.registries[0]).registry.version == "2026.01.15"  # type: ignore[union-attr]
    with RemoteRegistries.from_environment(refresh=True) as remote:
        again = remote.lookup(CURL.stem)
        assert again.revalidated  # our ETag, sent back by the client, answered 304
        missing = remote.lookup("f" * 64)
        assert missing.tool is None
        assert [a.outcome for a in missing.attempts] == ["not-found"]


def test_text_output_says_where_it_listens_before_serving(registry):
    """For people: the old line, at once, while the server runs; Ctrl-C ends it with 0."""
    process = subprocess.Popen(
        [*SERVE, "--registry", str(registry), "--port", "0", "--text"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        url = line.removeprefix(f"serving the registry {registry} at ").split(" ")[0]
        assert line == f"serving the registry {registry} at {url} (Ctrl-C to stop)\n"
        assert httpx.get(f"{url}{layout.CATALOG}").status_code == 200  # it is serving
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(10)
    assert process.returncode == 0, process.stderr.read()  # type: ignore[union-attr]


def serve(*args: str) -> dict:
    """`atip serve ARGS` that fails before serving: its exit status and error."""
    result = CliRunner().invoke(cli, ["serve", *args], catch_exceptions=False)
    error = json.loads(result.stdout)["error"]
    assert result.exit_code == error["exit_code"]
    return error


def test_failures_before_serving(tmp_path):
    missing = serve()
    assert (missing["exit_code"], missing["code"]) == (2, "E1001")
    assert missing["message"] == "Missing option '--registry' or '--tdp'."
    none = serve("--registry", str(tmp_path / "none"))
    assert (none["exit_code"], none["code"]) == (10, "E3001")
    assert none["message"] == f"{tmp_path / 'none'}: no such directory (--registry)"
    assert serve("--registry", str(tmp_path), "--port", "70000")["exit_code"] == 2
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = serve("--registry", str(tmp_path), "--port", str(port))
    assert (taken["exit_code"], taken["code"], taken["category"]) == (20, "E3002", "state")
    assert taken["message"] == f"127.0.0.1:{port} is already in use"
    assert taken["details"] == {"host": "127.0.0.1", "port": port}
    assert "--port (0 picks a free one)" in taken["suggestion"]["fix"]


def test_without_the_serve_extra_it_names_the_extra(registry, tmp_path):
    """starlette and uvicorn hidden from the import system of a real process."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('starlette', 'uvicorn'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(hide), os.environ.get("PYTHONPATH")])),
    }
    process = subprocess.run(
        [*SERVE, "--registry", str(registry), "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert process.returncode == 40, process.stderr
    error = json.loads(process.stdout)["error"]
    assert error["code"] == "E4010"
    assert "serve extra" in error["message"]
    assert error["suggestion"]["fix"] == "Install it: pip install 'atipkit[serve]'"
