"""`atipkit.app.mcp`: an app's commands as an MCP server, checked with the official MCP
client (v2) against real server processes, over stdio and over streamable HTTP.

The example app is tests/apps/mcp_app.py, run as a script (`python mcp_app.py mcp serve`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from atipkit.app.mcp import FLAGS_META_KEY, AppCatalog, tool_definitions
from atipkit.app.output import encode
from atipkit.app.schema import hints
from atipkit.search import words
from tests.apps import mcp_app
from tests.helpers import BUSY, STARTUP
from tests.servers import free_port, mcp_initialize, stop, wait_for_port

APP = Path(mcp_app.__file__)
LISTED = ["grep", "show", "purge", "publish", "sync", "numbers", "count", "broken", "tag_add"]
MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The server's environment: its state, configuration and home in the test's folder."""
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }


@asynccontextmanager
async def stdio(
    tmp_path: Path, env: dict[str, str], *args: str, mode: str = "legacy"
) -> AsyncIterator[Client]:
    """A real client on a real `mcp serve` process; its stderr kept in tmp_path."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(APP), "mcp", "serve", *args],
        env=env,
        cwd=tmp_path,
    )
    with open(tmp_path / "server.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def envelope_of(result: Any) -> dict[str, Any]:
    """The structured content, after checking the text block says the same."""
    assert result.structured_content is not None
    [block] = result.content
    assert block.type == "text"
    assert json.loads(block.text) == result.structured_content
    assert result.is_error is (result.structured_content["ok"] is not True)
    return result.structured_content


# Definitions ----------------------------------------------------------------------------


def test_definitions_name_every_visible_command_and_keep_its_schemas():
    import mcp.types

    definitions = tool_definitions(mcp_app.app)
    assert [d["name"] for d in definitions] == LISTED  # `internal` is hidden
    specs = {s.path: s for s in mcp_app.app.walk()}
    for definition in definitions:
        assert MCP_NAME.match(definition["name"])
        spec = specs[tuple(definition["title"].split()[1:])]
        assert definition["inputSchema"] == spec.signature.input_schema()
        assert definition["annotations"] == {"title": spec.display_name, **hints(spec)}
        mcp.types.Tool.model_validate(definition)  # what the SDK would send
    by_name = {d["name"]: d for d in definitions}
    assert by_name["tag_add"]["title"] == "jot tag add"
    assert by_name["grep"]["description"].endswith("a phrase. [🔒 READ-ONLY]")
    assert "[⚠️ DESTRUCTIVE" in by_name["purge"]["description"]
    assert "HumanHandoff (exit 101)" in by_name["publish"]["description"]


def test_names_are_unique_and_short_whatever_the_paths():
    from atipkit.app import App

    app = App("deep", version="1")

    @app.command(name="a_b")
    def top() -> None:
        """Top."""

    @app.group("a").command(name="b")
    def nested() -> None:
        """Nested."""

    @app.group("x" * 70).command(name="y" * 70)
    def long() -> None:
        """Long."""

    names = [d["name"] for d in tool_definitions(app)]
    assert names[0] == "a_b"  # spelled as written keeps the plain name
    assert names[1].startswith("a_b_")
    assert len(set(names)) == 3
    assert all(MCP_NAME.match(n) and len(n) <= 64 for n in names)
    catalog = AppCatalog(app)
    assert [catalog.by_name[n].path for n in names] == [s.path for s in app.walk()]


def test_export_prints_what_tools_list_answers():
    runner = CliRunner()
    result = runner.invoke(mcp_app.app.click_group, ["mcp", "export"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"tools": json.loads(encode(tool_definitions(mcp_app.app)))}
    deferred = runner.invoke(mcp_app.app.click_group, ["mcp", "export", "--deferred"])
    assert deferred.exit_code == 0, deferred.output
    names = [t["name"] for t in json.loads(deferred.output)["tools"]]
    assert names == ["search_tools", "get_tool_schema", "run_tool"]


def test_search_ranks_by_shared_words_deterministically():
    catalog = AppCatalog(mcp_app.app)
    assert words("ignoreCase tag-add NOTES glass") == [
        "ignore",
        "case",
        "tag",
        "add",
        "note",
        "glass",
    ]
    # words of a description, not the name: grep's "lines containing a phrase"
    assert catalog.search("lines containing phrase")[0]["name"] == "grep"
    assert catalog.search("delete notes for good")[0]["name"] == "purge"
    assert catalog.search("tag")[0]["name"] == "tag_add"  # name beats parameter help
    assert catalog.search("wiki publish", limit=1) == catalog.search("publish wiki", limit=1)
    assert catalog.search("internal maintenance") == []  # hidden
    assert catalog.search("zebra") == []


# stdio ----------------------------------------------------------------------------------


def test_stdio_initialize_and_list_tools(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env) as client:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS  # initialize
            assert "envelope" in (client.instructions or "")
            assert client.server_info.name == "jot"
            assert client.server_info.version == "3.1.4"
            assert client.server_capabilities.tools.list_changed is False
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == LISTED
            expected = {d["name"]: d for d in tool_definitions(mcp_app.app)}
            for tool in listed:
                assert tool.input_schema == expected[tool.name]["inputSchema"]
                assert tool.output_schema == expected[tool.name]["outputSchema"]
                assert tool.description == expected[tool.name]["description"]
                assert tool.title == expected[tool.name]["title"]
            grep = next(t for t in listed if t.name == "grep")
            assert grep.annotations.read_only_hint is True  # ReadOnly
            assert grep.annotations.open_world_hint is False  # ClosedWorld
            assert grep.annotations.destructive_hint is False
            assert grep.annotations.title == "jot grep"
            purge = next(t for t in listed if t.name == "purge")
            assert purge.annotations.destructive_hint is True  # Destructive
            assert purge.annotations.idempotent_hint is True  # Idempotent
            assert purge.annotations.read_only_hint is False

    run(scenario)


def test_stdio_calls_answer_with_the_envelope(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env) as client:
            ok = envelope_of(await client.call_tool("grep", {"phrase": "milk"}))
            assert ok["ok"] is True
            assert ok["result"] == [{"title": "groceries", "line": "eggs, milk"}]
            assert ok["meta"]["tool"] == "jot.grep"
            assert ok["meta"]["version"] == "3.1.4"

            note = envelope_of(await client.call_tool("show", {"title": "todo"}))
            assert note["result"] == {"title": "todo", "body": "write the MCP tests"}

            nested = envelope_of(await client.call_tool("tag_add", {"title": "x", "tag": ["a"]}))
            assert nested["result"] == {"title": "x", "tags": ["a"]}

            wrong = envelope_of(await client.call_tool("grep", {"phrase": 3}))
            assert wrong["ok"] is False
            assert wrong["error"]["code"] == "E1002"
            assert wrong["error"]["exit_code"] == 2
            assert wrong["error"]["details"]["param"] == "phrase"

            missing = envelope_of(await client.call_tool("grep", {}))
            assert (missing["error"]["code"], missing["error"]["exit_code"]) == ("E1001", 2)

            extra = envelope_of(await client.call_tool("grep", {"phrase": "a", "color": 1}))
            assert extra["error"]["exit_code"] == 2

            absent = envelope_of(await client.call_tool("show", {"title": "nope"}))
            assert absent["error"]["code"] == "E3001"
            assert absent["error"]["exit_code"] == 10
            assert absent["error"]["suggestion"]["fix"] == "List them with: jot grep ''"

            human = envelope_of(await client.call_tool("publish", {"title": "todo"}))
            assert human["error"]["code"] == "E2002"
            assert human["error"]["exit_code"] == 101
            assert human["error"]["suggestion"]["action"] == "ask_human"

    run(scenario)


def test_a_result_that_breaks_its_annotation_is_an_error_the_client_accepts(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env) as client:
            await client.list_tools()  # the client now holds broken's outputSchema
            envelope = envelope_of(await client.call_tool("broken", {}))
            assert envelope["error"]["code"] == "E5002"
            assert envelope["error"]["exit_code"] == 70
            assert envelope["error"]["details"]["result"] == "two"
            assert "'two' is not of type 'integer'" in envelope["error"]["message"]

    run(scenario)


def test_stdio_flags_timeouts_pages_and_dry_runs(tmp_path, env):
    def flags(**values: Any) -> dict[str, Any]:
        return {FLAGS_META_KEY: values}

    async def scenario() -> None:
        async with stdio(tmp_path, env, mode="auto") as client:
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS  # no handshake

            slow = envelope_of(await client.call_tool("sync", {"seconds": 5}))
            assert slow["error"]["code"] == "E4002"
            assert slow["error"]["exit_code"] == 50
            assert slow["error"]["is_retryable"] is True
            assert slow["meta"]["duration_ms"] < 3000  # answered at the deadline, not after

            quick = envelope_of(await client.call_tool("sync", {"seconds": 0.05}))
            assert quick["result"] == {"synced": True}

            first = envelope_of(await client.call_tool("numbers", {"n": 7}))
            assert first["result"] == [0, 1, 2]
            cursor = first["meta"]["pagination"]["next_cursor"]
            second = await client.call_tool("numbers", {"n": 7}, meta=flags(cursor=cursor))
            assert envelope_of(second)["result"] == [3, 4, 5]

            plan = await client.call_tool("purge", {"older_than": 3}, meta=flags(dry_run=True))
            planned = envelope_of(plan)
            assert planned["meta"]["dry_run"] is True
            assert planned["result"]["actions"] == [
                {"action": "delete", "target": "groceries"},
                {"action": "delete", "target": "todo"},
            ]

            # a misspelt flag is refused, not ignored: the real thing must not run
            typo = await client.call_tool(
                "purge", {"older_than": 3}, meta=flags(**{"dry-run": True})
            )
            refused = envelope_of(typo)
            assert (refused["error"]["code"], refused["error"]["exit_code"]) == ("E1001", 2)
            assert refused["error"]["details"]["did_you_mean"] == ["dry_run"]

            bad = envelope_of(await client.call_tool("grep", {"phrase": "a"}, meta=flags(limit=0)))
            assert (bad["error"]["code"], bad["error"]["exit_code"]) == ("E1002", 2)
            unpaged = await client.call_tool("grep", {"phrase": "a"}, meta=flags(limit=2))
            assert envelope_of(unpaged)["error"]["message"] == "jot grep is not paginated"

            key = flags(idempotency_key="purge-1")
            once = envelope_of(await client.call_tool("purge", {"older_than": 9}, meta=key))
            twice = envelope_of(await client.call_tool("purge", {"older_than": 9}, meta=key))
            assert twice["result"] == once["result"]
            assert twice["meta"]["replayed"] is True

    run(scenario)


def test_unknown_tools_are_protocol_errors_and_hidden_ones_answer(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("grp", {"phrase": "a"})
            assert "Unknown tool: grp" in caught.value.message
            assert caught.value.data == {"did_you_mean": ["grep"]}
            hidden = envelope_of(await client.call_tool("internal", {}))
            assert hidden["result"] == {"internal": True}

    run(scenario)


def test_stdout_carries_protocol_only(tmp_path, env):
    """Raw JSON-RPC over the pipes: a command that prints still leaves stdout to MCP."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count"}},
        {  # runs on, abandoned, after its 0.5 s timeout
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "sync", "arguments": {"seconds": 60}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, str(APP), "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        cwd=tmp_path,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    replies = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request).encode() + b"\n")
            process.stdin.flush()
            if "id" in request:
                replies.append(json.loads(process.stdout.readline()))
        gone = time.monotonic()
        rest, err = process.communicate(timeout=50)  # closes stdin: the client is gone
        exited = time.monotonic() - gone
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert rest == b""  # nothing after the replies
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert all(r["jsonrpc"] == "2.0" and "result" in r for r in replies)
    assert replies[1]["result"]["structuredContent"]["result"] == 2
    assert replies[2]["result"]["structuredContent"]["error"]["exit_code"] == 50
    assert b"counting notes" in err  # the command's print went to stderr
    assert process.returncode == 0
    assert exited < 3 * BUSY  # the abandoned call did not hold the process for its 60 s


# Deferred mode --------------------------------------------------------------------------


def test_deferred_mode_searches_then_runs(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env, "--deferred") as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == ["search_tools", "get_tool_schema", "run_tool"]
            run_tool = listed[2]
            assert run_tool.annotations.destructive_hint is True  # purge is among them
            assert "⚠️ DESTRUCTIVE" in run_tool.description

            # words of grep's description, none of them its name
            query = {"query": "bodies containing a phrase"}
            found = envelope_of(await client.call_tool("search_tools", query))
            hit = found["result"]["tools"][0]
            assert hit["name"] == "grep"
            assert hit["annotations"]["readOnlyHint"] is True
            assert hit["description"].endswith("[🔒 READ-ONLY]")

            schema = envelope_of(await client.call_tool("get_tool_schema", {"name": "grep"}))
            assert (
                schema["result"]["inputSchema"]
                == mcp_app.app.command_at(["grep"]).signature.input_schema()
            )

            ran = await client.call_tool(
                "run_tool", {"name": hit["name"], "arguments": {"phrase": "eggs"}}
            )
            assert envelope_of(ran)["result"] == [{"title": "groceries", "line": "eggs, milk"}]

            plan = await client.call_tool(
                "run_tool",
                {"name": "purge", "arguments": {"older_than": 1}, "options": {"dry_run": True}},
            )
            assert envelope_of(plan)["meta"]["dry_run"] is True

            human = await client.call_tool(
                "run_tool", {"name": "publish", "arguments": {"title": "a"}}
            )
            assert envelope_of(human)["error"]["exit_code"] == 101

            typo = envelope_of(await client.call_tool("run_tool", {"name": "tag_ad"}))
            assert typo["error"]["code"] == "E1002"
            assert typo["error"]["details"]["did_you_mean"] == ["tag_add"]
            empty = envelope_of(await client.call_tool("search_tools", {"query": ""}))
            assert empty["error"]["exit_code"] == 2
            with pytest.raises(MCPError):
                await client.call_tool("grep", {"phrase": "a"})  # not a tool in this mode

    run(scenario)


# Streamable HTTP ------------------------------------------------------------------------


def answers_http(url: str, timeout: float = STARTUP) -> None:
    """Wait until `url` answers HTTP at all (the socket listens before the app serves)."""
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx.get(url, timeout=1)  # a GET without a session: any answer will do
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_streamable_http_server_process(tmp_path, env):
    port = free_port()
    log = tmp_path / "http.log"
    command = [sys.executable, str(APP), "mcp", "serve", "--transport", "http"]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
            cwd=tmp_path,
        )
    try:
        wait_for_port(port, process, log)
        answers_http(f"http://127.0.0.1:{port}/mcp")

        async def scenario() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
                assert [t.name for t in (await client.list_tools()).tools] == LISTED
                ok = envelope_of(await client.call_tool("grep", {"phrase": "milk"}))
                assert ok["result"] == [{"title": "groceries", "line": "eggs, milk"}]
                absent = envelope_of(await client.call_tool("show", {"title": "nope"}))
                assert absent["error"]["exit_code"] == 10

        run(scenario)
        url = f"http://127.0.0.1:{port}/mcp"
        # the SDK's own guard answered any page of http://localhost:<any port>
        page = mcp_initialize(url, Origin="http://localhost:9")
        assert (page.status_code, page.json()["error"]) == (403, "origin-not-allowed")
        rebound = mcp_initialize(url, Host="evil.example")
        assert (rebound.status_code, rebound.json()["error"]) == (403, "host-not-allowed")

        taken = subprocess.run(
            [*command, "--port", str(port)],
            capture_output=True,
            env={**os.environ, **env},
            cwd=tmp_path,
            timeout=30,
        )
        assert taken.returncode == 20
        error = json.loads(taken.stdout)["error"]
        assert error["message"] == f"127.0.0.1:{port} is already in use"
    finally:
        stop(process)
    assert process.returncode == 0  # SIGTERM: being stopped is how a server ends (decision 370)
    assert f"http://127.0.0.1:{port}/mcp" in log.read_text()
