"""A registry that does not answer costs one timeout, not one per command: the failure is
remembered on disk for `UNREACHABLE_FOR` seconds, so the next `atip` process does not
ask it again. Against a real black hole: a socket that accepts and never answers."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from atipkit.registry.remote import UNREACHABLE_FOR
from tests.helpers import atip_measured, machine_env

TIMEOUT = 2.0


@contextlib.contextmanager
def black_hole() -> Iterator[tuple[str, list[socket.socket]]]:
    """A loopback HTTP address whose server accepts every connection and never answers;
    the connections it accepted, so a test can count them."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.1)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(server.accept()[0])

    thread = threading.Thread(target=accept, name="black-hole", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}", held
    finally:
        done.set()
        thread.join(5)
        for connection in held:
            connection.close()
        server.close()


def dry_run(tmp_path: Path, env: dict[str, str], *extra: str):
    document = tmp_path / "keeper.json"
    document.write_text(
        json.dumps(
            {
                "atip": {"version": "0.6"},
                "name": "keeper",
                "version": "1.0",
                "description": "Keep things",
                "commands": {"list": {"description": "List", "effects": {"network": False}}},
            }
        )
    )
    call = json.dumps({"name": "keeper_list", "arguments": {}})
    return atip_measured(env, "run", "--call", call, "--tool", str(document), "--dry-run", *extra)


@pytest.fixture
def hole(tmp_path):
    with black_hole() as (url, held):
        config = tmp_path / "config" / "agent-tools"
        config.mkdir(parents=True)
        registries = {"registries": [{"name": "hole", "url": url, "timeout": TIMEOUT}]}
        (config / "registries.json").write_text(json.dumps(registries))
        yield machine_env(tmp_path), held


def test_a_black_hole_registry_is_waited_for_once_then_remembered(tmp_path, hole):
    """The first `atip run` waits for the registry's timeout (its organization policy
    is asked for, §4.8), and is then left out as unreachable; the second does not
    connect at all; `--refresh`-like ATIP_REFRESH asks again."""
    env, held = hole
    first = dry_run(tmp_path, env)
    assert first.returncode == 0, first.stderr
    assert first.seconds >= TIMEOUT
    asked = len(held)
    assert asked == 1
    second = dry_run(tmp_path, env)
    assert second.returncode == 0, second.stderr
    assert len(held) == asked  # not even a connection
    assert second.seconds < first.seconds - TIMEOUT * 0.75, (first.seconds, second.seconds)
    forced = dry_run(tmp_path, {**env, "ATIP_REFRESH": "1"})
    assert forced.returncode == 0
    assert len(held) == asked + 1
    assert forced.seconds >= TIMEOUT


def test_the_memory_of_a_failure_expires(tmp_path, hole):
    """The marker holds the time of the failure; older than `UNREACHABLE_FOR`, the
    registry is asked again (and a damaged marker is the same as none)."""
    env, held = hole
    dry_run(tmp_path, env)
    [marker] = (tmp_path / "cache" / "registries").glob("*.unreachable.json")
    noted = json.loads(marker.read_text())
    assert "no response within" in noted["reason"] or "timed out" in noted["reason"]
    noted["at"] = "2000-01-01T00:00:00Z"
    marker.write_text(json.dumps(noted))
    dry_run(tmp_path, env)
    assert len(held) == 2
    marker.write_text("{damaged")
    dry_run(tmp_path, env)
    assert len(held) == 3
    assert UNREACHABLE_FOR >= 30  # long enough to spare a burst of commands


def test_an_explicit_check_asks_at_once(tmp_path, hole):
    """`atip registry list --check` is asked to find out now: it asks the registry
    remembered as unreachable, and says it does not answer (exit 40)."""
    env, held = hole
    dry_run(tmp_path, env)
    checked = atip_measured(env, "registry", "list", "--check")
    assert checked.returncode == 40, checked.stderr
    assert len(held) == 2
    assert "does not answer" in checked.envelope()["error"]["message"]
