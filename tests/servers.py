"""Real servers for the tests, started on loopback: nginx serving a directory, moto's
standalone S3-compatible server, and a hostile registry (`hostile_registry`) that answers
with compression bombs, deep nesting, drips, redirect loops, bad validators and shims
that vouch for themselves.

`.ci/run` installs what they need (nginx with apt-get, moto with the test extra). Where a
program is missing, a test that needs it is skipped locally and fails under CI (`CI` set),
so CI can never pass by skipping.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import STARTUP


def require(program: str, hint: str) -> str:
    """The path of `program`; skip (fail under CI) when it is not installed."""
    found = shutil.which(program) or next(
        (p for p in (f"/usr/sbin/{program}", f"/sbin/{program}") if os.access(p, os.X_OK)), None
    )
    if found is None:
        message = f"{program} is not installed ({hint})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(
    port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = STARTUP
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited ({process.returncode}): {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port}: {log.read_text()[-2000:]}")


@contextlib.contextmanager
def listening(command: list[str], env: dict[str, str], cwd: Path) -> Iterator[str]:
    """`command` (which takes `--port PORT`) as a server process on a free port, its
    output in `cwd`/server.log, until the block ends: the block gets its base URL."""
    port = free_port()
    log = cwd / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd
        )
    try:
        wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Nginx:
    url: str
    port: int
    root: Path
    access_log: Path

    def requests(self) -> list[str]:
        """The request lines served so far (`GET /path HTTP/1.1 200`), oldest first.

        nginx logs a request after sending its response, so a client can hold the answer
        before the line is written. A request to the sync location first (logged to its
        own file) settles that: the one worker handles events in turn, so once the sync
        line is written, every request answered before it has been logged too."""
        sync = self.access_log.with_name("sync.log")
        seen = _lines(sync)
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(f"{self.url}{SYNC_PATH}", timeout=30):
            pass
        deadline = time.monotonic() + 30
        while _lines(sync) == seen:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nginx wrote no line to {sync} within 30 s")
            time.sleep(0.01)
        return [line.strip() for line in _read(self.access_log).splitlines() if line.strip()]


SYNC_PATH = "/.atip-test-sync"


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _lines(path: Path) -> int:
    return _read(path).count("\n")


NGINX_CONF = """
worker_processes 1;
daemon off;
{user}
pid {run}/nginx.pid;
error_log {run}/error.log warn;
events {{ worker_connections 128; }}
http {{
    types {{
        text/html html;
        application/json json bundle;
        text/plain minisig sig txt;
        application/gzip gz tgz;
        application/zip zip whl;
    }}
    default_type application/octet-stream;
    log_format lines '{log_format}';
    access_log {run}/access.log lines;
    client_body_temp_path {run}/body;
    proxy_temp_path {run}/proxy;
    fastcgi_temp_path {run}/fastcgi;
    uwsgi_temp_path {run}/uwsgi;
    scgi_temp_path {run}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ try_files $uri $uri/index.html =404; }}
        location = {sync_path} {{ access_log {run}/sync.log lines; return 204; }}
        {extra}
    }}
}}
"""


def preflight(url: str, origin: str, method: str, headers: str) -> Any:
    """A browser's CORS preflight for `method` with `headers` from a page at `origin`."""
    import httpx

    return httpx.options(
        url,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers,
        },
    )


@contextlib.contextmanager
def nginx(
    root: Path, run: Path, *, extra: str = "", log_format: str = "$request $status"
) -> Iterator[Nginx]:
    """nginx serving `root` on a free loopback port; `run` holds its config and logs.
    `extra` is added inside the server block (more `location`s, say); `log_format` is
    what each line of `requests()` holds (nginx variables, e.g. `$http_authorization`)."""
    binary = require("nginx", "apt-get install nginx; .ci/run does")
    run.mkdir(parents=True, exist_ok=True)
    port = free_port()
    conf = run / "nginx.conf"
    conf.write_text(
        NGINX_CONF.format(
            user="user root;" if os.geteuid() == 0 else "",
            run=run,
            port=port,
            root=root,
            extra=extra,
            log_format=log_format,
            sync_path=SYNC_PATH,
        )
    )
    log = run / "error.log"
    process = subprocess.Popen(
        [binary, "-p", str(run), "-c", str(conf), "-e", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process, log)
        yield Nginx(f"http://127.0.0.1:{port}", port, root, run / "access.log")
    finally:
        stop(process)


@dataclass
class S3Server:
    endpoint: str
    key: str = "test-key"
    secret: str = "test-secret"
    region: str = "us-east-1"

    def client(self):  # a boto3 client, for what the test itself sets up
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.key,
            aws_secret_access_key=self.secret,
            region_name=self.region,
        )


@contextlib.contextmanager
def moto_s3(run: Path) -> Iterator[S3Server]:
    """moto's standalone server (an S3-compatible HTTP server) in its own process."""
    pytest.importorskip("moto.server", reason="moto[server] comes with the test extra")
    run.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = run / "moto.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, process, log)
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        stop(process)


# -- a hostile registry ------------------------------------------------------------------------


def _deflate_zeros(size: int, wbits: int) -> bytes:
    """`size` zero bytes compressed (gzip for wbits 31, raw deflate for -15), built in
    a few milliseconds: after a full flush the compressor starts afresh, so every MiB of
    zeros compresses to the same bytes, which are repeated."""
    import zlib

    mib = bytes(1 << 20)
    head = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = head.compress(mib) + head.flush(zlib.Z_FULL_FLUSH)
    block = head.compress(mib) + head.flush(zlib.Z_FULL_FLUSH)
    body = first + block * (size // len(mib) - 1)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block
    if wbits < 0:
        return body + end
    crc = 0
    for _ in range(size // len(mib)):
        crc = zlib.crc32(mib, crc)
    return body + end + crc.to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little")


@functools.cache
def bomb(kind: str, size: int = 1 << 30) -> bytes:
    """A compression bomb of `size` zero bytes: `gzip`, `deflate`, or `gzip, gzip` (a
    gzip stream of a gzip stream: 1 GiB in under 2 KB)."""
    import gzip

    if kind == "gzip, gzip":
        return gzip.compress(_deflate_zeros(size, 31), 9)
    return _deflate_zeros(size, 31 if kind == "gzip" else -15)


def deep(depth: int) -> str:
    """JSON arrays nested `depth` deep."""
    return "[" * depth + "]" * depth


def hostile_shim(hex_digits: str, **extra: Any) -> dict[str, Any]:
    """A valid shim for the binary `hex_digits`, with `extra` keys on top."""
    return {
        "atip": {"version": "0.6"},
        "binary": {"hash": f"sha256:{hex_digits}", "name": "victim", "version": "1.0"},
        "trust": {"source": "community"},
        "description": "A shim from a hostile registry",
        "commands": {"": {"description": "Run it", "effects": {"network": False}}},
        **extra,
    }


@dataclass
class Asked:
    """One request the hostile registry received."""

    registry: str
    """The registry asked: the path prefix (`gzip-bomb`, `manifest/deep-500`)."""
    path: str
    """The path under the registry (`/shims/sha256/<hex>.json`)."""
    headers: dict[str, str]
    at: float
    """When the request arrived (`time.time()`)."""


@dataclass
class HostileRegistry:
    """Registries that answer badly, one per behaviour, on one loopback server.

    `registry(behaviour)` is the URL of a registry whose shims (`/shims/sha256/<hex>.json`)
    get that answer; `registry(behaviour, at="manifest")` one whose manifest
    (`/.well-known/atip-registry.json`) gets it and whose shims are missing;
    `at="signature"` answers its signature files (`.json.bundle`, `.minisig`, `.sig`) so,
    its shims being healthy; `at="any"` answers every path so (a TDP manifest, a crawler's
    download). `BEHAVIOURS` lists them. `asked` records every request, so a
    test can see which registries were asked, with which headers.

    `local_path` is the file the `local-bundle` shim names as its signature bundle and
    provenance (a secret, `/proc/self/environ`, a FIFO).
    """

    url: str
    asked: list[Asked]
    local_path: str = "/proc/self/environ"

    def registry(self, behaviour: str, *, at: str = "shim") -> str:
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {behaviour!r}")
        prefix = "" if at == "shim" else f"{at}/"
        return f"{self.url}/{prefix}{behaviour}"

    def requests_to(self, behaviour: str, *, at: str = "shim") -> list[Asked]:
        name = behaviour if at == "shim" else f"{at}/{behaviour}"
        return [a for a in self.asked if a.registry == name]


_MANIFEST = ".well-known/atip-registry.json"
BAD_ETAG = '"\xff\xfe\xe9"'  # bytes ff fe e9 on the wire (latin-1), not visible ASCII
BAD_DATE = "Thu, 01 Jan 1970 00:00:00 GMT\xff\xfe\xe9"


def _behaviours() -> dict[str, Any]:
    """Each behaviour by name: a function (handler, hex digits of the shim asked for) that
    writes the whole answer through the `_Handler`'s helpers."""

    def valid(h: _Handler, hex_digits: str, **extra: Any) -> bytes:
        """A valid shim, or a valid manifest when the manifest is asked for."""
        if h.at == "manifest":
            return json.dumps({"registry": {"name": "hostile"}}).encode()
        return json.dumps(hostile_shim(hex_digits, **extra)).encode()

    def send(h: _Handler, body: bytes, *, status: int = 200, **headers: str) -> None:
        h.answer(status, body, headers)

    def encoded(kind: str) -> Any:
        def answer(h: _Handler, hex_digits: str) -> None:
            raw = b"junk that is not brotli nor zstd" if kind in ("br", "zstd") else bomb(kind)
            send(h, raw, **{"Content-Type": "application/json", "Content-Encoding": kind})

        return answer

    def compressed(kind: str, change: Any = bytes) -> Any:
        """A valid shim, compressed (`gzip`, `deflate` in its zlib wrapper, `raw-deflate`
        without it, as some servers send), then passed through `change`."""

        def answer(h: _Handler, hex_digits: str) -> None:
            import zlib

            wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[kind]
            packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
            body = change(packer.compress(valid(h, hex_digits)) + packer.flush())
            send(h, body, **{"Content-Encoding": kind.removeprefix("raw-")})

        return answer

    def nested(depth: int) -> Any:
        """Arrays nested `depth` deep where the schema expects patterns: it walks them."""

        def answer(h: _Handler, hex_digits: str) -> None:
            doc = json.dumps(hostile_shim(hex_digits, patterns=0))
            send(h, doc.replace('"patterns": 0', f'"patterns": {deep(depth)}', 1).encode())

        return answer

    def deep_commands(depth: int) -> Any:
        """Commands within commands: a nesting the schema itself walks."""

        def answer(h: _Handler, hex_digits: str) -> None:
            level = '{"description": "level", "commands": {"sub": '
            inner = level * depth + '{"description": "leaf"}' + "}}" * depth
            doc = json.dumps(hostile_shim(hex_digits, commands=0))
            send(h, doc.replace('"commands": 0', f'"commands": {{"": {inner}}}', 1).encode())

        return answer

    def huge(h: _Handler, hex_digits: str) -> None:
        h.answer_stream(200, (b" " * 65536 for _ in range(400)), {})  # 25 MiB, no length

    def huge_declared(h: _Handler, hex_digits: str) -> None:
        h.answer_head(200, {"Content-Length": str(10**10)})

    def drip(h: _Handler, hex_digits: str) -> None:
        h.answer_stream(200, h.dripping(valid(h, hex_digits), 0.2), {})

    def gzip_drip(h: _Handler, hex_digits: str) -> None:
        """A gzip header whose file name never ends: bytes that decode to nothing."""
        header = b"\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\xff"  # FNAME: a name follows
        h.answer_stream(200, h.dripping(header + b"n" * 200, 0.2), {"Content-Encoding": "gzip"})

    def drip_headers(h: _Handler, hex_digits: str) -> None:
        h.drip_raw(b"HTTP/1.0 200 OK\r\n" + b"X-Padding: " + b"p" * 1000 + b"\r\n\r\n", 0.2)

    def stall(h: _Handler, hex_digits: str) -> None:
        h.server.closing.wait(60)  # type: ignore[attr-defined]

    def redirect_loop(h: _Handler, hex_digits: str) -> None:
        send(h, b"", status=302, Location=h.path)

    def redirect_to(location: str) -> Any:
        return lambda h, hex_digits: send(h, b"", status=302, Location=location)

    def redirect_away(h: _Handler, hex_digits: str) -> None:
        send(h, b"", status=302, Location=f"http://localhost:{free_port()}/x.json")

    def redirect_chain(h: _Handler, hex_digits: str) -> None:
        """Always one more hop, each to a new address: a loop no URL repeats in."""
        hop = int(h.path.partition("?hop=")[2] or 0)
        send(h, b"", status=302, Location=f"{h.path.split('?')[0]}?hop={hop + 1}")

    def bad_etag(h: _Handler, hex_digits: str) -> None:
        if h.headers.get("If-None-Match") == BAD_ETAG:
            send(h, b"", status=304, ETag=BAD_ETAG)
            return
        send(h, valid(h, hex_digits), ETag=BAD_ETAG, **{"Last-Modified": BAD_DATE})

    def vouching(h: _Handler, hex_digits: str) -> None:
        trust = {"source": "vendor", "verified": True}
        send(h, valid(h, hex_digits, trust=trust))

    def local_bundle(h: _Handler, hex_digits: str) -> None:
        path = h.server.registry.local_path  # type: ignore[attr-defined]
        signature = {"type": "cosign", "identity": "x@example.com", "issuer": "https://x"}
        trust = {
            "source": "vendor",
            "verified": True,
            "integrity": {"signature": {**signature, "bundle": path}},
            "provenance": {"url": path, "slsaLevel": 3, "builder": "https://x"},
            "shimIntegrity": {"signature": {**signature, "bundle": path}},
        }
        send(h, valid(h, hex_digits, trust=trust))

    return {
        "healthy": lambda h, x: send(h, valid(h, x)),
        "gzip-bomb": encoded("gzip"),
        "deflate-bomb": encoded("deflate"),
        "gzip-gzip-bomb": encoded("gzip, gzip"),
        "br": encoded("br"),
        "zstd": encoded("zstd"),
        "gzip": compressed("gzip"),
        "deflate": compressed("deflate"),
        "raw-deflate": compressed("raw-deflate"),
        "gzip-cut-short": compressed("gzip", lambda body: body[: len(body) // 2]),
        "gzip-trailing": compressed("gzip", lambda body: body + b"more"),
        "gzip-corrupt": compressed("gzip", lambda body: body[:12] + b"\xff" * 8 + body[20:]),
        "invalid-json": lambda h, x: send(h, b'{"atip": {"version": "0.6"}, "binary": '),
        "html": lambda h, x: send(
            h, b"<html><body>Welcome</body></html>", **{"Content-Type": "text/html"}
        ),
        "other-binary": lambda h, x: send(h, valid(h, "0" * 64)),
        "deep-500": nested(500),
        "deep-100000": nested(100_000),
        "deep-commands": deep_commands(500),
        "huge": huge,
        "huge-declared": huge_declared,
        "drip": drip,
        "gzip-drip": gzip_drip,
        "drip-headers": drip_headers,
        "stall": stall,
        "redirect-loop": redirect_loop,
        "redirect-chain": redirect_chain,
        "redirect-away": redirect_away,
        "redirect-bad-port": redirect_to("http://127.0.0.1:99999/x.json"),
        "redirect-bad-host": redirect_to("http://[::1/x.json"),
        "redirect-ftp": redirect_to("ftp://127.0.0.1/x.json"),
        "status-500": lambda h, x: send(h, b"oops", status=500),
        "bad-etag": bad_etag,
        "vouching": vouching,
        "local-bundle": local_bundle,
    }


class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "hostile/1"
    at = "shim"
    """What is being answered: `shim`, `manifest` or `signature`."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        registry: HostileRegistry = self.server.registry  # type: ignore[attr-defined]
        parts = self.path.split("?")[0].strip("/").split("/")
        at = parts[0] if parts and parts[0] in ("manifest", "signature", "any") else "shim"
        if at != "shim":
            parts = parts[1:]
        behaviour, rest = (parts[0], "/" + "/".join(parts[1:])) if parts else ("", "/")
        name = behaviour if at == "shim" else f"{at}/{behaviour}"
        self.at = at
        registry.asked.append(Asked(name, rest, dict(self.headers.items()), time.time()))
        answer = BEHAVIOURS.get(behaviour)
        shim = re.fullmatch(r"/shims/sha256/([0-9a-f]{64})\.json", rest)
        signature = re.fullmatch(r"/shims/sha256/([0-9a-f]{64})\.json\.(bundle|minisig|sig)", rest)
        target = {"shim": shim, "signature": signature}.get(at)
        if answer and (at == "any" or (at == "manifest" and rest == "/" + _MANIFEST)):
            answer(self, "0" * 64)
        elif at == "signature" and shim:
            BEHAVIOURS["healthy"](self, shim.group(1))
        elif answer and target:
            answer(self, target.group(1))
        else:
            self.answer(404, b"not here", {})

    # -- ways to answer --

    def answer_head(self, status: int, headers: dict[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.answer_head(status, {"Content-Length": str(len(body)), **headers})
        self._write(body)

    def answer_stream(self, status: int, chunks: Iterator[bytes], headers: dict[str, str]) -> None:
        self.answer_head(status, headers)  # no length: the body ends when the connection does
        for chunk in chunks:
            if not self._write(chunk):
                return

    def dripping(self, body: bytes, pause: float) -> Iterator[bytes]:
        for i in range(len(body)):
            if self.server.closing.wait(pause):  # type: ignore[attr-defined]
                return
            yield body[i : i + 1]

    def drip_raw(self, raw: bytes, pause: float) -> None:
        for chunk in self.dripping(raw, pause):
            if not self._write(chunk):
                return

    def _write(self, data: bytes) -> bool:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:  # the client gave up: as it should
            return False
        return True


BEHAVIOURS: dict[str, Any] = _behaviours()


@contextlib.contextmanager
def hostile_registry() -> Iterator[HostileRegistry]:
    """The hostile registries (`HostileRegistry`), served from a thread on a free
    loopback port for the duration of the block."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.closing = threading.Event()  # type: ignore[attr-defined]
    registry = HostileRegistry(f"http://127.0.0.1:{server.server_port}", [])
    server.registry = registry  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="hostile-registry", daemon=True)
    thread.start()
    try:
        yield registry
    finally:
        server.closing.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
        thread.join(5)


# -- https on loopback ----------------------------------------------------------------------


@dataclass
class TlsServer:
    url: str
    """`https://127.0.0.1:<port>`, serving `root`."""
    root: Path
    client_context: ssl.SSLContext
    """A client context that trusts the server's own self-signed certificate."""


def _self_signed(run: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with `cryptography`."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = run / "cert.pem", run / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@contextlib.contextmanager
def tls_server(root: Path, run: Path) -> Iterator[TlsServer]:
    """A static https server for `root` on a free loopback port, with a self-signed
    certificate that only `client_context` trusts."""
    run.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = _self_signed(run)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, name="tls-server", daemon=True)
    thread.start()
    client = ssl.create_default_context(cafile=str(cert_file))
    try:
        yield TlsServer(f"https://127.0.0.1:{server.server_port}", root, client)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def mcp_initialize(url: str, **headers: str) -> Any:
    """A raw JSON-RPC `initialize` POSTed to a streamable-HTTP MCP server at `url`, with
    `headers` as given (a forged `Origin` or `Host`, as a web page's request would carry
    them): the `httpx.Response`."""
    import httpx

    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "page", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    # the first answer may wait for the server to import the MCP SDK: STARTUP, not 10 s
    return httpx.post(url, json=request, headers={**accept, **headers}, timeout=STARTUP)
