"""The stdio front (`atipkit.serve.front`): `atip mcp serve` and an app's `mcp serve`
answer the handshake and the tool list before the MCP SDK is imported, exactly as the SDK
answers them, and hand the stream over to the SDK's server without losing a byte.

"Before the SDK is imported" is seen, not timed: a `sitecustomize` on the server's path
holds every import of `mcp` or `mcp_types` until the test opens a gate file, so whatever
the server answers while the gate is shut, the front answered. The same requests are
then sent to the server with the front off (`ATIP_MCP_FRONT=0`) and the answers compared,
with the real `mcp` client and as raw bytes; and at each hand-over the server compares the
SDK's own (dropped) answers to the front's replayed requests with the front's, and says so
on stderr when they differ.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from atipkit.serve.front import Handover
from atipkit.serve.gateway import PAGE_SIZE
from tests.apps import mcp_app
from tests.test_gateway import NOTES_TOOLS, add_second_tool, notes_machine, text_of

ATIP = [sys.executable, "-m", "atipkit.cli"]
APP = Path(mcp_app.__file__)
DRIFT = "otherwise than the MCP SDK"
GATE = '''
import os, sys, time

_GATE = os.environ.get("ATIP_TEST_SDK_GATE")
_HELD = os.environ.get("ATIP_TEST_HELD", "mcp,mcp_types").split(",")


class _HeldUntilTheGateOpens:
    """Holds the loading of the MCP SDK's packages (not the finding) until the gate
    file exists."""

    def find_spec(self, name, path=None, target=None):
        if name not in _HELD:
            return None
        for finder in sys.meta_path:
            found = None if finder is self else finder.find_spec(name, path, target)
            if found is not None:
                found.loader = _Held(found.loader)
                return found
        return None


class _Held:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        while not os.path.exists(_GATE):
            time.sleep(0.02)
        self.loader.exec_module(module)


if _GATE:
    sys.meta_path.insert(0, _HeldUntilTheGateOpens())
'''


@pytest.fixture
def notes(tmp_path: Path) -> dict[str, str]:
    """test_gateway's machine: the notes tool on PATH, scanned into an empty registry."""
    return notes_machine(tmp_path)


def gated(tmp_path: Path, env: dict[str, str], *also: str) -> tuple[dict[str, str], Path]:
    """`env` with the SDK (and the modules `also` names) held back until the returned
    gate file is written."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(GATE)
    gate = tmp_path / "gate-open"
    held = {
        **env,
        "PYTHONPATH": os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
        "ATIP_TEST_SDK_GATE": str(gate),
        "ATIP_TEST_HELD": ",".join(("mcp", "mcp_types", *also)),
    }
    return held, gate


def without_front(env: dict[str, str]) -> dict[str, str]:
    return {**env, "ATIP_MCP_FRONT": "0"}


@asynccontextmanager
async def client_of(
    command: list[str], env: dict[str, str], errlog: Path, **options: Any
) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    with open(errlog, "w") as err:
        async with Client(stdio_client(params, errlog=err), mode="legacy", **options) as client:
            yield client


def handshake(client: Client) -> dict[str, Any]:
    """What a client keeps of the `initialize` answer."""
    assert client.server_info is not None
    return {
        "protocolVersion": client.protocol_version,
        "serverInfo": client.server_info.model_dump(mode="json", by_alias=True),
        "capabilities": client.server_capabilities.model_dump(mode="json", by_alias=True),
        "instructions": client.instructions,
    }


def dumped(listed: types.ListToolsResult) -> list[dict[str, Any]]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]


# The real client, through the hand-over ---------------------------------------------------


def test_the_gateway_answers_before_the_sdk_as_the_sdk_does_then_hands_over(tmp_path, notes):
    """Handshake and tool list come while the SDK cannot be imported; then a call that
    the policy wants confirmed runs through the SDK's server, elicitation included."""
    (tmp_path / "notes" / "milk").write_text("2 litres")
    held, gate = gated(tmp_path, notes)
    serve = [*ATIP, "mcp", "serve", "--only", "notes"]
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def scenario() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        with anyio.fail_after(60):  # a front that imports the SDK would wait here forever
            async with client_of(
                serve, held, tmp_path / "front.err", elicitation_callback=elicit
            ) as client:
                shaken = handshake(client)
                listed = dumped(await client.list_tools())
                assert [t["name"] for t in listed] == NOTES_TOOLS
                assert not gate.exists()  # both answered with the SDK held back
                gate.write_text("")
                deleted = await client.call_tool("notes_delete", {"title": "milk"})
                assert deleted.is_error is False, text_of(deleted)
                assert [t["name"] for t in dumped(await client.list_tools())] == NOTES_TOOLS
        return shaken, listed

    async def reference() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        async with client_of(serve, without_front(notes), tmp_path / "sdk.err") as client:
            return handshake(client), dumped(await client.list_tools())

    front = anyio.run(scenario)
    assert asked == ["Run notes delete? The policy asks: destructive: confirm first."]
    assert not (tmp_path / "notes" / "milk").exists()
    assert front == anyio.run(reference)
    assert DRIFT not in (tmp_path / "front.err").read_text()


def test_the_first_tools_list_imports_no_executor(tmp_path, notes):
    """Every gateway tool declares the executor's report as its `outputSchema`, yet the
    handshake and the first tool list come while the executor's module is held back as
    the SDK is: the schema is read from `atipkit.execute.report` alone (decision 481)."""
    held, gate = gated(tmp_path, notes, "atipkit.execute.executor")
    serve = [*ATIP, "mcp", "serve", "--only", "notes"]

    async def scenario() -> list[dict[str, Any]]:
        with anyio.fail_after(60):  # a front that imports the executor would wait here
            async with client_of(serve, held, tmp_path / "front.err") as client:
                listed = dumped(await client.list_tools())
                assert not gate.exists()
                gate.write_text("")
                return listed

    listed = anyio.run(scenario)
    assert [t["name"] for t in listed] == NOTES_TOOLS
    assert all(t["outputSchema"]["anyOf"][0]["required"][0] == "call" for t in listed)


def test_a_client_that_listed_through_the_front_hears_of_list_changes(tmp_path, notes):
    """The front's `tools/list` is replayed to the SDK's server at the hand-over, so a
    handshake-era client that listed only through the front is still told."""
    held, gate = gated(tmp_path, notes)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def scenario() -> None:
        serve = [*ATIP, "mcp", "serve", "--all", "--interval", "0.2"]
        with anyio.fail_after(60):
            async with client_of(
                serve, held, tmp_path / "front.err", message_handler=on_message
            ) as client:
                assert [t.name for t in (await client.list_tools()).tools] == NOTES_TOOLS
                gate.write_text("")
                await anyio.to_thread.run_sync(add_second_tool, tmp_path, notes)
                await changed.wait()
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == [n.replace("notes", "memo") for n in NOTES_TOOLS] + NOTES_TOOLS

    anyio.run(scenario)
    assert DRIFT not in (tmp_path / "front.err").read_text()


def test_an_apps_mcp_server_answers_before_the_sdk_as_the_sdk_does(tmp_path):
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    held, gate = gated(tmp_path, env)
    serve = [sys.executable, str(APP), "mcp", "serve"]

    async def scenario(environment: dict[str, str], err: str) -> tuple[Any, ...]:
        with anyio.fail_after(60):
            async with client_of(serve, environment, tmp_path / err) as client:
                shaken, listed = handshake(client), dumped(await client.list_tools())
                gate.write_text("")
                called = await client.call_tool("show", {"name": "x"})
                return shaken, listed, called.structured_content["ok"]

    front = anyio.run(scenario, held, "front.err")
    assert front == anyio.run(scenario, without_front(env), "sdk.err")
    assert DRIFT not in (tmp_path / "front.err").read_text()


# Raw JSON-RPC: bytes, versions, pages, malformed lines ----------------------------------


class Raw:
    """A server process spoken to line by line, as bytes."""

    def __init__(self, command: list[str], env: dict[str, str], err: Path) -> None:
        self.err = err
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err.open("w"), env=env
        )

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def ask(self, *messages: dict[str, Any] | bytes, answers: int = 1) -> list[bytes]:
        self.send(
            b"".join(
                m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages
            )
        )
        assert self.process.stdout is not None
        return [self.process.stdout.readline() for _ in range(answers)]

    def until(self, identifier: str) -> list[bytes]:
        """Every line up to the answer to a ping of `identifier`, sent now: what the server
        said, or did not say, to what came before."""
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": identifier, "method": "ping"}).encode() + b"\n"
        )
        assert self.process.stdout is not None
        said = []
        while not said or json.loads(said[-1]).get("id") != identifier:
            said.append(self.process.stdout.readline())
            assert said[-1], "the server closed stdout"
        return said

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(60)


def initialize(version: str, identifier: int | str = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": identifier,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def listing(identifier: int, cursor: str | None = None) -> dict[str, Any]:
    params = {} if cursor is None else {"cursor": cursor}
    return {"jsonrpc": "2.0", "id": identifier, "method": "tools/list", "params": params}


def big_document(tmp_path: Path) -> Path:
    count = PAGE_SIZE * 2 + 17
    document = {
        "atip": {"version": "0.6"},
        "name": "big",
        "version": "1",
        "description": 'Many commands, ünïcode and "quotes"',
        "commands": {
            f"c{i:04d}": {
                "description": f"Command {i} ✓",
                "options": [
                    {"name": "n", "flags": ["--n"], "type": "number", "description": "a number"}
                ],
            }
            for i in range(count)
        },
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document))
    return path


def conversation(raw: Raw, version: str) -> list[bytes]:
    """initialize, initialized, three pages, a ping, a cursor that is not the server's."""
    said = raw.ask(initialize(version))
    said += raw.ask(INITIALIZED, listing(2))
    cursor = json.loads(said[-1])["result"]["nextCursor"]
    said += raw.ask(listing(3, cursor))
    cursor = json.loads(said[-1])["result"]["nextCursor"]
    said += raw.ask(listing("four", cursor))  # type: ignore[arg-type]
    said += raw.ask({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    said += raw.ask(listing(6, "not-a-cursor"))
    return said


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_the_gateways_answers_are_the_sdks_byte_for_byte(tmp_path, notes, version):
    serve = [*ATIP, "mcp", "serve", "--interval", "0", "--tool", str(big_document(tmp_path))]
    held, gate = gated(tmp_path, notes)
    gate.write_text("")  # not held: the hand-over may come at any point of the talk
    front = Raw(serve, held, tmp_path / "front.err")
    by_front = conversation(front, version)
    assert front.close() == 0
    sdk = Raw(serve, without_front(notes), tmp_path / "sdk.err")
    assert by_front == conversation(sdk, version)
    assert sdk.close() == 0
    assert json.loads(by_front[-1])["error"]["code"] == types.INVALID_PARAMS
    assert DRIFT not in (tmp_path / "front.err").read_text()


def test_the_front_answers_the_pages_itself_and_the_sdk_agrees(tmp_path, notes):
    """With the SDK held, the whole conversation but the refused cursor is the front's;
    the SDK, given the replay, answers each of those requests the same (no drift logged)."""
    serve = [*ATIP, "mcp", "serve", "--interval", "0", "--tool", str(big_document(tmp_path))]
    held, gate = gated(tmp_path, notes)
    raw = Raw(serve, held, tmp_path / "front.err")
    said = raw.ask(initialize("2025-11-25", "one"))
    said += raw.ask(INITIALIZED, listing(2))
    cursor = json.loads(said[-1])["result"]["nextCursor"]
    said += raw.ask(listing(3, cursor))
    said += raw.ask({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert not gate.exists()
    gate.write_text("")
    said += raw.ask(listing(6, "not-a-cursor"))  # the SDK's to refuse
    assert raw.close() == 0
    sdk = Raw(serve, without_front(notes), tmp_path / "sdk.err")
    expected = sdk.ask(initialize("2025-11-25", "one"))
    expected += sdk.ask(INITIALIZED, listing(2))
    expected += sdk.ask(listing(3, cursor))
    expected += sdk.ask({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    expected += sdk.ask(listing(6, "not-a-cursor"))
    sdk.close()
    assert said == expected
    assert DRIFT not in (tmp_path / "front.err").read_text()


INIT = json.dumps(initialize("2025-06-18")).encode() + b"\n"
MALFORMED: list[list[bytes]] = [
    [b"{not json\n"],
    [b"\n"],
    [b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 7}}\n'],
    [json.dumps(initialize("1999-01-01")).encode() + b"\n"],
    [INIT, b'{"jsonrpc":"2.0","id":2,\n'],
    [INIT, b'[{"jsonrpc":"2.0","id":2}]\n'],
    [INIT, b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":3}}\n'],
    [INIT, json.dumps(listing(2)).encode() + b"\n"],  # before `initialized`
    [INIT, b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}\n'],
]


@pytest.mark.parametrize("lines", MALFORMED)
def test_what_the_front_leaves_is_answered_by_the_sdk(tmp_path, notes, lines):
    """Malformed JSON (which the SDK drops without a word), an unknown version, a bad
    cursor, a request out of order, a notification it does not take: the SDK's answer,
    the same with the front on as off, and the server goes on."""
    serve = [*ATIP, "mcp", "serve", "--interval", "0", "--only", "notes"]
    answers = []
    for environment, err in ((notes, "front.err"), (without_front(notes), "sdk.err")):
        raw = Raw(serve, environment, tmp_path / err)
        raw.send(b"".join(lines))
        answers.append(raw.until("probe"))
        assert raw.close() == 0
    assert answers[0] == answers[1]
    assert DRIFT not in (tmp_path / "front.err").read_text()


def test_a_line_split_across_the_hand_over_is_read_whole(tmp_path, notes):
    """Half a request read by the front when the SDK becomes ready, the rest after: the
    SDK's server reads the one line."""
    held, gate = gated(tmp_path, notes)
    raw = Raw(
        [*ATIP, "mcp", "serve", "--interval", "0", "--only", "notes"], held, tmp_path / "front.err"
    )
    raw.ask(initialize("2025-11-25"))
    raw.send(json.dumps(INITIALIZED).encode() + b"\n")
    call = (
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "notes_list", "arguments": {}},
            }
        ).encode()
        + b"\n"
    )
    raw.send(call[:20])
    gate.write_text("")
    time.sleep(3)  # the import ends and the hand-over takes the half line (or not yet)
    [answer] = raw.ask(call[20:])
    assert json.loads(answer)["id"] == 2
    assert json.loads(answer)["result"]["isError"] is False
    assert raw.close() == 0


def test_the_prefix_is_read_before_the_wire():
    read, write = os.pipe()
    os.write(write, b'2}\n{"b":3}\n')
    os.close(write)
    handover = Handover(server=None, wire=read, prefix=b'{"a":1}\n{"a":', answered={}, log=print)  # type: ignore[arg-type]
    assert handover.stdin().readlines() == ['{"a":1}\n', '{"a":2}\n', '{"b":3}\n']


@pytest.mark.parametrize("after_handover", [False, True])
def test_a_client_killed_with_sigkill_leaves_no_server_behind(tmp_path, notes, after_handover):
    held, gate = gated(tmp_path, notes)
    if after_handover:
        gate.write_text("")
    client = subprocess.Popen(
        [sys.executable, "-c", KILLED_CLIENT, *ATIP, "mcp", "serve", "--only", "notes"],
        stdout=subprocess.PIPE,
        env={**held, "HANDOVER": "1" if after_handover else ""},
    )
    assert client.stdout is not None
    server = int(client.stdout.readline())
    assert client.stdout.readline() == b"answered\n"
    client.send_signal(signal.SIGKILL)
    client.wait()
    gate.write_text("")  # the server ends once the import it began has
    assert gone_within(server, 30)


KILLED_CLIENT = """
import json, os, subprocess, sys, time
server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL)
print(server.pid, flush=True)
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "k", "version": "0"}}}
server.stdin.write(json.dumps(init).encode() + b"\\n")
server.stdin.flush()
server.stdout.readline()
if os.environ.get("HANDOVER"):
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n'
                       b'{"jsonrpc":"2.0","id":2,"method":"resources/list"}\\n')
    server.stdin.flush()
    server.stdout.readline()  # the SDK's answer: the hand-over is done
print("answered", flush=True)
time.sleep(600)
"""


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` ended (or is a zombie waiting for its new parent)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return False


def test_the_front_answers_only_versions_the_sdk_negotiates():
    """The front answers only versions the installed SDK negotiates: it reads them from
    the SDK's own file, so a client's unknown version goes to the SDK (LATEST)."""
    from atipkit.serve import front

    assert set(front._sdk_versions()) == set(HANDSHAKE_PROTOCOL_VERSIONS)
    assert set(front.FRONT_VERSIONS) <= set(HANDSHAKE_PROTOCOL_VERSIONS)


def test_a_client_that_goes_after_the_first_answers_ends_the_server_cleanly(tmp_path, notes):
    """stdin closed while the SDK is still being imported: the server waits for the
    import to end before it exits (a thread importing while the interpreter finalizes
    could abort the process: status -6), then exits 0."""
    held, gate = gated(tmp_path, notes)
    raw = Raw([*ATIP, "mcp", "serve", "--only", "notes"], held, tmp_path / "front.err")
    raw.ask(initialize("2025-11-25"))
    raw.ask(INITIALIZED, listing(2))
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    time.sleep(1)
    assert raw.process.poll() is None  # the import is held at the gate, and waited for
    gate.write_text("")
    assert raw.process.wait(60) == 0
