"""Real servers for the tests, started on loopback: nginx serving a directory, and moto's
standalone S3-compatible server.

`.ci/run` installs what they need (nginx with apt-get, moto with the test extra). Where a
program is missing, a test that needs it is skipped locally and fails under CI (`CI` set),
so CI can never pass by skipping.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


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


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path, timeout: float = 15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited ({process.returncode}): {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port}: {log.read_text()[-2000:]}")


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
        """The request lines served so far (`GET /path HTTP/1.1 200`), oldest first."""
        if not self.access_log.exists():
            return []
        return [line.strip() for line in self.access_log.read_text().splitlines() if line.strip()]


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
        {extra}
    }}
}}
"""


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
        wait_for_port(port, process, log, timeout=30)
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        stop(process)
