"""`atip mcp serve`: the MCP gateway, driven by the official `mcp` client (v2) against real
`atip` processes over stdio and streamable HTTP, and by the MCP Inspector's CLI where
node has it.

The tools are real: `tests/apps/notes` is a native ATIP tool that keeps notes as files,
recorded by a real `atip scan`, so every call's effect (or its absence) is seen on disk.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from atipkit.bridge import compile_tools
from atipkit.model import load
from atipkit.registry.local import LocalRegistry
from atipkit.serve.gateway import PAGE_SIZE, Gateway, Selection
from atipkit.serve.gateway.catalog import call_output
from tests.helpers import EXAMPLES, machine_env
from tests.servers import free_port, mcp_initialize, preflight, stop, wait_for_port

NOTES = Path(__file__).parent / "apps" / "notes"
ATIP = [sys.executable, "-m", "atipkit.cli"]
NOTES_TOOLS = ["notes_list", "notes_add", "notes_delete", "notes_token", "notes_wait"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return notes_machine(tmp_path)


def notes_machine(tmp_path: Path) -> dict[str, str]:
    """A machine of the test's own: an empty registry, a bin directory with the notes tool
    on PATH, the notes in a folder of the test."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(NOTES, bin_dir / "notes")
    (tmp_path / "notes").mkdir()
    found = machine_env(
        tmp_path,
        NOTES_DIR=str(tmp_path / "notes"),
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    )
    scan(found, bin_dir)
    return found


def scan(env: dict[str, str], directory: Path) -> None:
    done = subprocess.run(
        [*ATIP, "scan", "--path", str(directory), "--json"],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


@asynccontextmanager
async def gateway(
    tmp_path: Path, env: dict[str, str], *args: str, mode: str = "legacy", **client: Any
) -> AsyncIterator[Client]:
    """A real client on a real `atip mcp serve` process; its stderr kept in tmp_path."""
    params = StdioServerParameters(
        command=ATIP[0], args=[*ATIP[1:], "mcp", "serve", *args], env=env, cwd=tmp_path
    )
    with open(tmp_path / "gateway.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, **client) as session:
            yield session


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert block.type == "text"
    return block.text


# Listing --------------------------------------------------------------------------------


def test_lists_each_command_as_the_bridge_compiles_it(tmp_path, env):
    notes = load_notes(tmp_path, env)
    compiled = {t["name"]: t for t in compile_tools(notes, "mcp").tools}

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes") as client:
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == NOTES_TOOLS
            for tool in listed:
                sent = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                assert sent == {**compiled[tool.name], "outputSchema": call_output()}
            by_name = {t.name: t for t in listed}
            assert by_name["notes_delete"].annotations.destructive_hint is True
            assert "⚠️ DESTRUCTIVE" in by_name["notes_delete"].description
            assert by_name["notes_list"].annotations.read_only_hint is True

    run(scenario)


def load_notes(tmp_path: Path, env: dict[str, str]) -> Any:
    """The notes tool's metadata, as the tool itself gives it."""
    out = subprocess.run(
        [str(tmp_path / "bin" / "notes"), "--agent"], capture_output=True, env=env, check=True
    ).stdout
    document = tmp_path / "notes.json"
    document.write_bytes(out)
    return load(document)


def test_a_long_tool_list_comes_in_pages(tmp_path, env):
    """A gateway over a whole machine may offer thousands of commands: tools/list pages
    through them, and a cursor that is not one of the gateway's is refused."""
    count = PAGE_SIZE * 2 + 17
    document = {
        "atip": {"version": "0.6"},
        "name": "big",
        "version": "1",
        "description": "Many commands",
        "commands": {f"c{i:04d}": {"description": f"Command {i}"} for i in range(count)},
    }
    path = tmp_path / "big.json"
    path.write_text(json.dumps(document))

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--tool", str(path)) as client:
            names: list[str] = []
            cursor = None
            pages = 0
            while True:
                page = await client.list_tools(cursor=cursor)
                pages += 1
                names += [t.name for t in page.tools]
                cursor = page.next_cursor
                if cursor is None:
                    break
            assert pages == 3
            assert names == [f"big_c{i:04d}" for i in range(count)]
            with pytest.raises(MCPError) as refused:
                await client.list_tools(cursor="not-a-cursor")
            assert refused.value.error.code == types.INVALID_PARAMS
            assert "list again from the start" in refused.value.error.message

    run(scenario)


def test_compile_warnings_are_logged_with_where_they_are(tmp_path, env):
    """Two commands whose words give one function name (`x a b`, `x a_b`): both are
    offered, and the compiler's warning about the one renamed is logged on stderr with
    the function it names (a `Problem`'s location)."""
    document = {
        "atip": {"version": "0.6"},
        "name": "x",
        "version": "1",
        "description": "Clashing words",
        "commands": {
            "a": {"description": "Group", "commands": {"b": {"description": "Nested"}}},
            "a_b": {"description": "Flat"},
        },
    }
    path = tmp_path / "x.json"
    path.write_text(json.dumps(document))
    [expected] = compile_tools(load(path), "mcp").warnings
    assert expected.code == "names.function-clash"
    assert expected.location not in ("", "x_a_b")

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--tool", str(path)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"x_a_b", expected.location}

    run(scenario)
    logged = (tmp_path / "gateway.err").read_text().splitlines()
    assert f"warning: {expected.location}: {expected.message}" in logged


# Calls ----------------------------------------------------------------------------------


def test_calls_run_the_command_and_answer_its_filtered_output(tmp_path, env):
    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes") as client:
            added = await client.call_tool("notes_add", {"title": "milk", "body": "2 litres"})
            assert added.is_error is False, text_of(added)
            assert (tmp_path / "notes" / "milk").read_text() == "2 litres"
            report = added.structured_content
            assert report["decision"] == "allow"
            assert report["argv"][1:] == ["add", "--body", "2 litres", "milk"]
            assert report["exitCode"] == 0

            listed = await client.call_tool("notes_list", {})
            assert text_of(listed).split() == ["milk"]

            token = await client.call_tool("notes_token", {})
            assert text_of(token).strip() == "token: [REDACTED:github-token]"

            waited = await client.call_tool("notes_wait", {})  # declares a 1 s timeout
            assert waited.is_error is True
            assert text_of(waited).startswith("[timed out]")

            wrong = await client.call_tool("notes_add", {"title": "x", "colour": "red"})
            assert wrong.is_error is True
            assert "colour" in text_of(wrong)
            assert not (tmp_path / "notes" / "x").exists()

            with pytest.raises(MCPError) as unknown:
                await client.call_tool("notes_ad", {})
            assert unknown.value.error.code == types.INVALID_PARAMS
            assert unknown.value.error.data["did_you_mean"][0] == "notes_add"

    run(scenario)


def test_output_is_cut_to_max_output(tmp_path, env):
    for n in range(100):
        (tmp_path / "notes" / f"note-{n:03d}").write_text("")

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes", "--max-output", "200") as client:
            listed = text_of(await client.call_tool("notes_list", {}))
            full = "\n".join(f"note-{n:03d}" for n in range(100)) + "\n"  # 900 characters
            assert f"truncated: {len(full) - 200} of {len(full)} characters omitted" in listed
            assert listed.startswith("note-000\nnote-001")  # head and tail kept
            assert listed.rstrip().endswith("note-099")

    run(scenario)


def test_what_the_policy_wants_confirmed_is_not_run_when_nobody_can_confirm(tmp_path, env):
    (tmp_path / "notes" / "milk").write_text("2 litres")

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes") as client:
            denied = await client.call_tool("notes_delete", {"title": "milk"})
            assert denied.is_error is True
            assert denied.structured_content["decision"] == "deny"
            assert denied.structured_content["stopped"] == "unconfirmed"
            assert "--yes" in text_of(denied)
        assert (tmp_path / "notes" / "milk").exists()

        async with gateway(tmp_path, env, "--only", "notes", "--yes") as client:
            done = await client.call_tool("notes_delete", {"title": "milk"})
            assert done.is_error is False, text_of(done)
        assert not (tmp_path / "notes" / "milk").exists()

    run(scenario)


@pytest.mark.parametrize(("answer", "deleted"), [("accept", True), ("decline", False)])
def test_confirmation_is_asked_through_elicitation(tmp_path, env, answer, deleted):
    (tmp_path / "notes" / "milk").write_text("2 litres")
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"confirm": True} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes", elicitation_callback=elicit) as c:
            result = await c.call_tool("notes_delete", {"title": "milk"})
            assert result.is_error is (not deleted), text_of(result)

    run(scenario)
    assert asked == ["Run notes delete? The policy asks: destructive: confirm first."]
    assert (tmp_path / "notes" / "milk").exists() is not deleted


def test_the_policy_file_decides(tmp_path, env):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"allowFilesystemWrite": False}))

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes", "--policy", str(policy)) as c:
            denied = await c.call_tool("notes_add", {"title": "milk", "body": "2 litres"})
            assert denied.is_error is True
            assert text_of(denied).startswith("denied by policy:")
            assert (await c.call_tool("notes_list", {})).is_error is False

    run(scenario)
    assert not (tmp_path / "notes" / "milk").exists()


# Deferred mode --------------------------------------------------------------------------


def test_deferred_mode_searches_describes_and_calls(tmp_path, env):
    examples = [str(EXAMPLES / "tools" / f"{name}.json") for name in ("gh", "kubectl")]
    tool_args = [arg for path in examples for arg in ("--tool", path)]

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes", *tool_args, "--deferred") as c:
            listed = (await c.list_tools()).tools
            assert [t.name for t in listed] == ["search_tools", "get_tool_schema", "run_tool"]
            run_tool = listed[2]
            assert run_tool.annotations.destructive_hint is True  # some command destroys

            found = await c.call_tool("search_tools", {"query": "delete a note", "limit": 3})
            hits = found.structured_content["tools"]
            assert hits[0]["name"] == "notes_delete"
            assert set(hits[0]) == {"name", "title", "description", "annotations"}
            assert json.loads(text_of(found)) == found.structured_content

            pods = await c.call_tool("search_tools", {"query": "pods"})
            assert pods.structured_content["tools"][0]["name"].startswith("kubectl_")

            # atipkit.search's BM25: stems meet, stop words alone find nothing
            deleting = await c.call_tool("search_tools", {"query": "deleting notes", "limit": 1})
            assert [t["name"] for t in deleting.structured_content["tools"]] == ["notes_delete"]
            nothing = await c.call_tool("search_tools", {"query": "the of a"})
            assert (nothing.is_error, nothing.structured_content) == (False, {"tools": []})

            schema = await c.call_tool("get_tool_schema", {"name": "notes_add"})
            direct = {t["name"]: t for t in compile_tools(load_notes(tmp_path, env), "mcp").tools}
            assert schema.structured_content == {
                **direct["notes_add"],
                "outputSchema": call_output(),
            }

            ran = await c.call_tool(
                "run_tool", {"name": "notes_add", "arguments": {"title": "tea", "body": "green"}}
            )
            assert ran.is_error is False, text_of(ran)
            assert ran.structured_content["argv"][1:] == ["add", "--body", "green", "tea"]
            # the name before 0.2 is still answered, unlisted (decision 366)
            old = await c.call_tool(
                "call_tool", {"name": "notes_add", "arguments": {"title": "oolong", "body": "b"}}
            )
            assert old.is_error is False, text_of(old)
            assert (tmp_path / "notes" / "oolong").read_text() == "b"

            missing = await c.call_tool("get_tool_schema", {"name": "notes_ad"})
            assert missing.is_error is True
            assert missing.structured_content["did_you_mean"][0] == "notes_add"

            bad = await c.call_tool("search_tools", {"limit": 0})
            assert bad.is_error is True
            assert text_of(bad).startswith("arguments")

            with pytest.raises(MCPError):
                await c.call_tool("notes_add", {})  # not a tool in this mode

    run(scenario)
    assert (tmp_path / "notes" / "tea").read_text() == "green"


# Output schemas -------------------------------------------------------------------------


def conforms(tool: types.Tool, result: types.CallToolResult) -> None:
    """`result`'s structuredContent is valid against the `outputSchema` `tool` declares
    (the client checks answers that are not errors itself; errors are checked here)."""
    import jsonschema

    assert tool.output_schema is not None, tool.name
    jsonschema.validate(result.structured_content, tool.output_schema)


def test_every_answer_conforms_to_the_output_schema_its_tool_declares(tmp_path, env):
    """MCP: a tool with an `outputSchema` MUST answer structured content that conforms.
    The official client validates every answer that is not an error against it (a
    mismatch raises); errors — denied, timed out, bad arguments, unknown names,
    refusals of deferred mode — are checked here against the same schema."""
    (tmp_path / "notes" / "milk").write_text("2 litres")

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--only", "notes") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            calls = [
                ("notes_add", {"title": "tea", "body": "green"}, False),
                ("notes_list", {}, False),
                ("notes_delete", {"title": "milk"}, True),  # nobody to confirm: denied
                ("notes_wait", {}, True),  # timed out
                ("notes_add", {"title": "x", "colour": "red"}, True),  # unknown parameter
            ]
            for name, arguments, failed in calls:
                result = await client.call_tool(name, arguments)
                assert result.is_error is failed, (name, text_of(result))
                conforms(tools[name], result)
        async with gateway(tmp_path, env, "--only", "notes", "--deferred") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            calls = [
                ("search_tools", {"query": "delete a note"}, False),
                ("get_tool_schema", {"name": "notes_add"}, False),
                ("run_tool", {"name": "notes_list", "arguments": {}}, False),
                ("get_tool_schema", {"name": "notes_ad"}, True),
                ("search_tools", {"limit": 0}, True),
                ("run_tool", {"name": "notes_delete", "arguments": {"title": "tea"}}, True),
            ]
            for name, arguments, failed in calls:
                result = await client.call_tool(name, arguments)
                assert result.is_error is failed, (name, text_of(result))
                conforms(tools[name], result)

    run(scenario)


def test_the_report_schema_refuses_what_the_report_is_not():
    """The schema checks what it declares: a report missing a field, or with a decision
    no policy gives, does not conform."""
    import jsonschema

    schema = call_output()
    good = {
        "call": {"name": "notes_list", "tool": "notes", "command": ["list"]},
        "decision": "allow",
        "reasons": [],
        "argv": ["notes", "list"],
        "exitCode": 0,
        "isError": False,
        "text": "",
    }
    jsonschema.validate(good, schema)
    jsonschema.validate({"error": "no such command", "name": "x"}, schema)
    for bad in ({**good, "decision": "maybe"}, {k: v for k, v in good.items() if k != "argv"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


# MCP servers through the gateway --------------------------------------------------------


def test_an_imported_mcp_server_is_served_and_called_through_the_gateway(tmp_path, env):
    """`atip import mcp` writes a document whose x-mcp says how to reach the server; the
    gateway offers its tools as its own and sends their calls to the server, under the
    same policy and filter as a command line's."""
    server = Path(__file__).parent / "apps" / "mcp_import_server.py"
    imported = tmp_path / "desk.json"
    done = subprocess.run(
        [*ATIP, "import", "mcp", "--out", str(imported), "--", sys.executable, str(server)],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--tool", str(imported)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "notes-desk_create_note" in names
            created = await client.call_tool(
                "notes-desk_create_note", {"title": "Buy milk", "due": {"date": "2030-01-01"}}
            )
            assert created.is_error is False, text_of(created)
            assert text_of(created) == "created Buy milk"
            report = created.structured_content
            assert report["request"]["params"]["name"] == "create_note"
            assert report["structuredContent"] == {"id": "n3", "title": "Buy milk"}
            failed = await client.call_tool("notes-desk_fail", {"why": "on purpose"})
            assert failed.is_error is True
            assert "it failed: on purpose" in text_of(failed)

    run(scenario)


# The list follows the registry ----------------------------------------------------------


def add_second_tool(tmp_path: Path, env: dict[str, str]) -> None:
    """A new native tool appears in a new directory, and `atip scan` records it."""
    more = tmp_path / "more"
    more.mkdir()
    text = NOTES.read_text().replace('"name": "notes"', '"name": "memo"')
    (more / "memo").write_text(text)
    (more / "memo").chmod(0o755)
    scan(env, more)


def test_a_reload_serves_the_new_tools_and_says_whether_clients_see_a_change(tmp_path):
    """What clients see decides whether they are told; what runs is always the newest:
    a change that leaves the list alone (here the homepage) still replaces the catalog,
    and keeps its version, so cursors stay good."""
    document = json.loads((EXAMPLES / "tools" / "gh.json").read_text())
    path = tmp_path / "gh.json"
    path.write_text(json.dumps(document))
    gateway = Gateway(Selection(files=(path,)), registry=LocalRegistry(tmp_path / "data"))
    first = gateway.catalog
    assert gateway.reload() is False  # nothing changed: nothing read
    assert gateway.catalog is first

    document["homepage"] = "https://example.org/gh"
    path.write_text(json.dumps(document) + " ")
    assert gateway.reload() is False
    assert gateway.catalog is not first
    assert gateway.catalog.loaded.tools[0].homepage == "https://example.org/gh"
    assert gateway.catalog.version == first.version

    document["commands"]["pr"]["commands"]["merge"]["description"] = "Merge it now"
    path.write_text(json.dumps(document))
    assert gateway.reload() is True
    assert gateway.catalog.version == first.version + 1
    assert "Merge it now" in gateway.catalog.definitions["gh_pr_merge"]["description"]

    path.write_text("{")  # broken: the last good tools stay
    served = gateway.catalog
    assert gateway.reload() is False
    assert gateway.catalog is served


def test_a_value_the_metadata_cannot_check_is_an_atdf_error_not_the_internal_message(tmp_path):
    """An argument `pattern` of `(`, valid to `atip validate` before, reached `re.search`:
    the client was sent re.error's text ("missing ), unterminated subpattern"). Now the
    value check says the pattern is unusable, as an ATDF error."""
    document = {
        "atip": {"version": "0.6"},
        "name": "echo",
        "version": "1",
        "description": "Print words",
        "commands": {
            "say": {
                "description": "Say a word",
                "arguments": [{"name": "word", "type": "string", "pattern": "("}],
                "effects": {"network": False, "filesystem": {"write": False}},
            }
        },
    }
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(document))
    env = machine_env(tmp_path)

    async def scenario() -> None:
        async with gateway(tmp_path, env, "--tool", str(path), "--yes") as client:
            result = await client.call_tool("echo_say", {"word": "hi"})
            assert result.is_error
            [error] = json.loads(text_of(result))["errors"]
            assert error["parameter_name"] == "word"
            assert "pattern '(', which is not a regular expression" in error["detail"]

    run(scenario)
    assert "subpattern" not in (tmp_path / "gateway.err").read_text()


def test_a_failure_inside_the_gateway_is_logged_and_answered_without_its_text(tmp_path):
    """Whatever breaks inside the gateway (here, by injection, the result filter) is the
    gateway's bug: logged whole on its side; the client hears that it failed, not the
    exception's text."""
    from atipkit.bridge.result_filter import ResultFilter

    class Broken(ResultFilter):
        def __call__(self, text: str) -> str:
            raise RuntimeError("internal detail: /home/secret/path")

    document = {
        "atip": {"version": "0.6"},
        "name": "true",
        "version": "1",
        "description": "Succeed",
        "commands": {"": {"description": "Succeed", "effects": {"network": False}}},
    }
    path = tmp_path / "true.json"
    path.write_text(json.dumps(document))
    logged: list[str] = []
    served = Gateway(
        Selection(files=(path,)),
        result_filter=Broken(),
        yes=True,
        registry=LocalRegistry(tmp_path / "data"),
        log=logged.append,
    )
    result = anyio.run(served.call, None, "true", {})
    assert result.is_error
    assert "internal detail" not in text_of(result)
    assert "the gateway failed to complete this call of 'true'" in text_of(result)
    assert "RuntimeError: internal detail: /home/secret/path" in logged[-1]


def test_the_billable_budget_is_the_gateways_not_spent_again_after_a_reload(tmp_path):
    """A policy's budget of billable calls holds for the gateway's whole life: a reload
    (a new catalog) does not give it back."""
    from atipkit.policy import Policy

    document = {
        "atip": {"version": "0.6"},
        "name": "true",
        "version": "1",
        "description": "Succeed, for a fee",
        "commands": {"": {"description": "Succeed", "effects": {"cost": {"billable": True}}}},
    }
    path = tmp_path / "true.json"
    path.write_text(json.dumps(document))
    gateway = Gateway(
        Selection(files=(path,)),
        policy=Policy(billable_budget=1),
        registry=LocalRegistry(tmp_path / "data"),
    )
    assert gateway.catalog.call("true", {}).decision.action == "allow"
    document["description"] = "Succeed, for a fee, again"
    path.write_text(json.dumps(document))
    gateway.reload()
    second = gateway.catalog.call("true", {})
    assert (second.decision.action, second.stopped) == ("deny", "unconfirmed")
    assert gateway.catalog.executor.billable_used == 1


def test_clients_are_told_when_the_tool_list_changes(tmp_path, env):
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async def scenario() -> None:
        async with gateway(
            tmp_path, env, "--all", "--interval", "0.2", message_handler=on_message
        ) as client:
            assert [t.name for t in (await client.list_tools()).tools] == NOTES_TOOLS
            await anyio.to_thread.run_sync(add_second_tool, tmp_path, env)
            with anyio.fail_after(20):
                await changed.wait()
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == [n.replace("notes", "memo") for n in NOTES_TOOLS] + NOTES_TOOLS
            memo = await client.call_tool("memo_list", {})
            assert memo.is_error is False, text_of(memo)

    run(scenario)


def test_an_upgraded_binary_changes_the_list_without_a_scan(tmp_path, env):
    """The gateway watches the binaries the registry records, not only registry.json: a
    tool replaced in place by a version with another command is seen at the next look."""
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    def upgrade() -> None:
        script = tmp_path / "bin" / "notes"
        text = script.read_text().replace(
            '"list": {', '"archive": {"description": "Archive every note"},\n        "list": {'
        )
        script.write_text(text.replace('"version": "1.0.0"', '"version": "1.1.0"'))

    async def scenario() -> None:
        async with gateway(
            tmp_path, env, "--all", "--interval", "0.2", message_handler=on_message
        ) as client:
            assert "notes_archive" not in [t.name for t in (await client.list_tools()).tools]
            await anyio.to_thread.run_sync(upgrade)
            with anyio.fail_after(20):
                await changed.wait()
            assert "notes_archive" in [t.name for t in (await client.list_tools()).tools]

    run(scenario)


def test_modern_clients_hear_of_changes_on_subscriptions_listen(tmp_path, env):
    async def scenario() -> None:
        async with gateway(tmp_path, env, "--all", "--interval", "0.2", mode="auto") as client:
            assert client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS
            assert len((await client.list_tools()).tools) == len(NOTES_TOOLS)
            async with client.listen(tools_list_changed=True) as subscription:
                await anyio.to_thread.run_sync(add_second_tool, tmp_path, env)
                with anyio.fail_after(20):
                    async for event in subscription:
                        assert type(event).__name__ == "ToolsListChanged"
                        break
            assert len((await client.list_tools()).tools) == 2 * len(NOTES_TOOLS)

    run(scenario)


# Streamable HTTP, stdout, errors ---------------------------------------------------------


def test_streamable_http(tmp_path, env):
    port = free_port()
    log = tmp_path / "http.log"
    command = [*ATIP, "mcp", "serve", "--only", "notes", "--transport", "http", "--jsonl"]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port)], stdout=out, stderr=subprocess.STDOUT, env=env
        )
    try:
        wait_for_port(port, process, log)
        url = f"http://127.0.0.1:{port}/mcp"

        async def scenario() -> None:
            async with Client(url, mode="legacy") as client:
                assert [t.name for t in (await client.list_tools()).tools] == NOTES_TOOLS
                added = await client.call_tool("notes_add", {"title": "tea", "body": "green"})
                assert added.is_error is False

        run(scenario)
        taken = subprocess.run([*command, "--port", str(port)], env=env, capture_output=True)
        assert taken.returncode == 20
        assert json.loads(taken.stdout.splitlines()[-1])["ok"] is False
    finally:
        stop(process)
    started = json.loads(log.read_text().splitlines()[0])
    assert started == {"url": url, "tools": len(NOTES_TOOLS), "mode": "one tool a command"}
    assert (tmp_path / "notes" / "tea").read_text() == "green"


def test_over_http_only_loopback_hosts_and_the_pages_allowed_are_answered(tmp_path, env):
    """The SDK's guard let any page of `http://localhost:<any port>` (a dev server, an
    unrelated local app) run this machine's commands through the gateway. Now a page is
    answered only from an --allow-origin origin, with CORS; and a Host that is not this
    machine's (DNS rebinding) never."""
    import httpx

    port = free_port()
    log = tmp_path / "http.log"
    inspector = "http://localhost:6274"
    command = [*ATIP, "mcp", "serve", "--only", "notes", "--transport", "http", "--jsonl"]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*command, "--port", str(port), "--allow-origin", inspector],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        wait_for_port(port, process, log)
        url = f"http://127.0.0.1:{port}/mcp"

        def initialize(**headers: str) -> httpx.Response:
            return mcp_initialize(url, **headers)

        for origin in ("http://localhost:5173", "http://127.0.0.1:8080", "https://evil.example"):
            refused = initialize(Origin=origin)
            assert refused.status_code == 403, origin
            assert refused.json()["error"] == "origin-not-allowed"
            assert "access-control-allow-origin" not in refused.headers
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.nip.io"):
            rebound = initialize(Host=host)
            assert rebound.status_code == 403, host
            assert rebound.json()["error"] == "host-not-allowed"
        page = initialize(Origin=inspector)
        assert page.status_code == 200, page.text
        assert page.headers["access-control-allow-origin"] == inspector
        asked = preflight(url, inspector, "POST", "content-type, mcp-session-id")
        assert asked.status_code == 204
        assert asked.headers["access-control-allow-methods"] == "GET, POST, DELETE, OPTIONS"
        assert initialize().status_code == 200  # not a browser: no Origin
    finally:
        stop(process)


def test_stdout_carries_only_the_protocol_and_the_exit_is_clean(tmp_path, env):
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1],
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "notes_add", "arguments": {"title": "a", "body": "b"}},
        },
    ]
    process = subprocess.Popen(
        [*ATIP, "mcp", "serve", "--only", "notes", "--interval", "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(3)]
        process.stdin.close()  # the client goes: the server ends, and says nothing more
        rest = process.stdout.read()
        process.wait(30)
    finally:
        stop(process)
    assert process.returncode == 0
    assert rest == ""
    assert [a.get("id") for a in answers] == [1, 2, 3]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert answers[2]["result"]["isError"] is False


@pytest.mark.parametrize(
    ("args", "exit_code", "says"),
    [
        ([], 2, "name the tools to offer"),
        (["--only", "no-such-tool"], 10, "no executable 'no-such-tool'"),
        (["--tool", "missing.json"], 10, "--tool missing.json: no such file"),
        (["--tool", "broken.json"], 65, "--tool broken.json:"),
        (["--only", "notes", "--policy", "broken.json"], 65, "not a policy"),
    ],
)
def test_what_cannot_be_served_is_an_error_with_its_exit_code(tmp_path, env, args, exit_code, says):
    (tmp_path / "broken.json").write_text('{"atip": {"version": "0.6"}, "name": ')
    load_notes(tmp_path, env)  # writes notes.json
    done = subprocess.run(
        [*ATIP, "mcp", "serve", *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == exit_code, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["exit_code"] == exit_code
    assert says in error["message"]


# The MCP Inspector ----------------------------------------------------------------------


def inspector() -> str | None:
    """The MCP Inspector (`npx @modelcontextprotocol/inspector`): installed by .ci/run
    under /opt/mcp-inspector, named by MCP_INSPECTOR, or on PATH."""
    for candidate in (
        os.environ.get("MCP_INSPECTOR"),
        "/opt/mcp-inspector/node_modules/.bin/mcp-inspector",
        shutil.which("mcp-inspector"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def test_the_mcp_inspector_lists_and_calls_the_tools(tmp_path, env):
    found = inspector()
    if found is None or shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("the MCP Inspector is not installed (.ci/run installs it)")
        pytest.skip("the MCP Inspector CLI is not installed")
    # the Inspector gives the server only PATH, HOME and the like: the rest is passed on
    passed = ("PATH", "PYTHONPATH", "NOTES_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")
    server = [found, "--cli", *(f"-e{name}={env[name]}" for name in passed)]
    server += [*ATIP, "mcp", "serve", "--only", "notes", "--interval", "0"]
    listed = subprocess.run(
        [*server, "--method", "tools/list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
    assert names == NOTES_TOOLS
    arguments = ["--tool-arg", "title=tea", "--tool-arg", "body=green"]
    called = subprocess.run(
        [*server, "--method", "tools/call", "--tool-name", "notes_add", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["isError"] is False
    assert (tmp_path / "notes" / "tea").read_text() == "green"
