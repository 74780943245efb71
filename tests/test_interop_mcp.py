"""`atip import mcp` and the calls of imported tools, against real MCP servers written with
the official SDK (tests/apps/mcp_import_server.py) started as real processes: over stdio,
and over streamable HTTP on a loopback port. What a server can send but the SDK's server
would not (hostile names, recursive or exploding schemas, thousands of tools) is fed to
the pure `describe` directly.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp.types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atipkit.bridge import compile_tools, parse_tool_calls
from atipkit.bridge.flatten import ParamRef
from atipkit.execute import AuditLog, Executor, InvalidArguments
from atipkit.interop.mcp import (
    Endpoint,
    Listing,
    McpCaller,
    NotDescribable,
    ServerFailed,
    ServerTimeout,
    call,
    describe,
    fetch,
    import_server,
    request,
)
from atipkit.model import from_dict, to_dict
from atipkit.policy import Policy
from atipkit.validation import validate
from tests.apps import mcp_import_server as server
from tests.helpers import BUSY, atip, envelope_of
from tests.servers import free_port, stop, wait_for_port

SERVER = Path(server.__file__)
NAMES = [t["name"] for t in server.TOOLS]
S3CRET_SHA256 = hashlib.sha256(b"s3cret").hexdigest()  # what the echo tool says it was sent
MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
LABEL = {  # label_notes' Label, its $refs inlined
    "type": "object",
    "title": "Label",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "color": {"type": "string", "enum": ["red", "green"], "title": "Color"},
    },
    "required": ["name"],
}


def command(*args: str) -> list[str]:
    return [sys.executable, str(SERVER), *args]


def originals() -> dict[str, dict[str, Any]]:
    """The server's tools, with label_notes' $refs inlined (ATIP options stand alone)."""
    tools = {t["name"]: copy.deepcopy(t) for t in server.TOOLS}
    properties = tools["label_notes"]["inputSchema"]["properties"]
    properties["labels"]["items"] = LABEL
    properties["main"] = {**LABEL, "description": "The label shown first"}
    return tools


def mcp_meaning(annotations: dict[str, Any] | None) -> dict[str, bool]:
    """The four hints as MCP defines them: an absent one takes MCP's default, and a
    read-only tool destroys nothing and is safe to repeat (its destructive and idempotent
    hints mean nothing)."""
    hints = {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    hints.update({k: v for k, v in (annotations or {}).items() if k in hints})
    if hints["readOnlyHint"]:
        hints.update(destructiveHint=False, idempotentHint=True)
    return hints


def listing(tools: list[dict[str, Any]], **info: Any) -> Listing:
    """What a server could answer, for the pure `describe`."""
    return Listing(
        endpoint=Endpoint.stdio(["some-server", "--stdio"]),
        protocol_version="2025-06-18",
        server_info=info or {"name": "demo", "version": "1.0"},
        tools=tools,
    )


def one_tool(input_schema: Any, name: str = "t", **more: Any) -> Listing:
    return listing([{"name": name, "inputSchema": input_schema, **more}])


@pytest.fixture(autouse=True)
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """The token that documents name as ${NOTES_SECRET} and never hold."""
    monkeypatch.setenv("NOTES_SECRET", "s3cret")


@pytest.fixture(scope="module")
def imported() -> Any:
    """The server imported by the library, two tools a page (five pages)."""
    return import_server(Endpoint.stdio(command("--page-size", "2")), timeout=30)


@pytest.fixture(scope="module")
def imported_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The same server imported by `atip import mcp --out`, with a token in its
    environment named, not written."""
    out = tmp_path_factory.mktemp("cli") / "new" / "notes.json"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NOTES_SECRET", "s3cret")  # the import connects with it too
        result = atip(
            "import",
            "mcp",
            "--plain",
            "--out",
            str(out),
            "--env",
            "NOTES_TOKEN=${NOTES_SECRET}",
            "--",
            *command("--page-size", "4"),
        )
    return result, out


# -- describing --------------------------------------------------------------------------


def test_import_round_trips_names_schemas_and_annotations(imported):
    """ATIP → MCP through our own compiler gives back the server's tools: every name,
    each input schema (the documented additions only: `additionalProperties: false`, a
    description for a property without one, ATIP's default note after a description,
    $refs inlined) and the annotations as MCP means them."""
    assert validate(to_dict(imported)).ok
    assert list(imported.commands) == NAMES  # all five pages, in the server's order
    compiled = compile_tools(imported, "mcp")
    by_name = originals()
    assert len(compiled.tools) == len(NAMES)
    for definition in compiled.tools:
        mcp.types.Tool.model_validate(definition)  # what the SDK accepts
        [key] = compiled.bindings[definition["name"]].targets[""].path
        original = by_name[imported.commands[key].extensions["x-mcp"]["name"]]
        assert key == original["name"]
        schema, given = definition["inputSchema"], original["inputSchema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert sorted(schema.get("required", [])) == sorted(given.get("required", []))
        assert list(schema["properties"]) == list(given.get("properties", {}))
        for prop, want in given.get("properties", {}).items():
            got = schema["properties"][prop]
            where = f"{key}.{prop}"
            assert set(got) - set(want) <= {"description"}, where
            for keyword, value in want.items():
                if keyword == "description":
                    assert got["description"].startswith(value), where
                else:
                    assert got[keyword] == value, where
        hints = {k: v for k, v in definition["annotations"].items() if k != "title"}
        assert hints == mcp_meaning(original.get("annotations")), key


def test_the_server_and_how_to_reach_it_are_recorded(imported):
    reach = imported.extensions["x-mcp"]
    assert (imported.name, imported.version, imported.title) == (
        "notes-desk",
        "2.4.1",
        "Notes desk",
    )
    assert imported.description == "Team notes over MCP"
    assert imported.trust.source == "native"
    assert imported.trust.verified is False
    assert reach["transport"] == "stdio"
    assert reach["command"] == command("--page-size", "2")
    assert reach["instructions"] == server.INSTRUCTIONS
    assert reach["serverInfo"]["description"] == "Team notes over MCP"
    from mcp.types.version import KNOWN_PROTOCOL_VERSIONS

    assert reach["protocolVersion"] in KNOWN_PROTOCOL_VERSIONS
    by_name = {t["name"]: t for t in server.TOOLS}
    for key, cmd in imported.commands.items():
        kept = cmd.extensions["x-mcp"]
        assert kept.get("annotations") == by_name[key].get("annotations")
        assert kept.get("outputSchema") == by_name[key].get("outputSchema")
        assert kept.get("title") == by_name[key].get("title")
    # what no option holds is kept: label_notes' $defs
    assert imported.commands["label_notes"].extensions["x-mcp"]["inputSchema"] == {
        "$defs": by_name["label_notes"]["inputSchema"]["$defs"]
    }


def test_options_use_atip_types_where_they_are_exact_and_keep_the_schema_elsewhere(imported):
    options = {o.name: o for o in imported.commands["search_notes"].options}
    assert options["query"].required
    assert options["query"].flags == ["--query"]
    assert (options["limit"].type, options["limit"].default) == ("integer", 10)
    assert (options["sort"].type, options["sort"].enum) == ("enum", ["newest", "oldest"])
    assert [options[n].type for n in ("tags", "exact", "min_score")] == [
        "array",
        "boolean",
        "number",
    ]
    assert all(not o.schema for o in options.values())  # ATIP says each exactly
    note = {o.name: o for o in imported.commands["create_note"].options}
    assert (note["priority"].type, note["priority"].enum) == ("integer", [1, 2, 3])
    assert note["due"].type == "string"
    assert note["due"].schema["type"] == "object"
    assert note["due"].required
    assert note["due"].description == "When it is due"
    assert "description" not in note["due"].schema  # said once, by the option
    assert note["attachments"].schema["items"]["required"] == ["name"]
    assert note["color"].schema == {"type": ["string", "null"]}


def test_effects_never_claim_more_safety_than_the_annotations():
    from atipkit.interop.mcp import effects

    none = effects({})  # MCP's defaults: may destroy, not idempotent, open world
    assert (none.destructive, none.idempotent, none.network) == (True, False, True)
    assert not none.filesystem  # MCP says nothing of files
    read_only = effects({"readOnlyHint": True, "openWorldHint": False})
    assert read_only.filesystem.write is False
    assert read_only.filesystem.delete is False
    assert (read_only.destructive, read_only.idempotent, read_only.network) == (
        False,
        True,
        False,
    )
    contradictory = effects({"readOnlyHint": True, "destructiveHint": True})
    assert contradictory.destructive is True  # the cautious hint wins
    additive = effects({"destructiveHint": False, "idempotentHint": True})
    assert (additive.destructive, additive.idempotent, additive.network) == (False, True, True)


def test_names_that_are_not_command_keys_are_rewritten_and_called_by_their_own():
    names = ["notes_search", "notes/search", "-rf", "two words", "x" * 300]
    tool = describe(listing([{"name": n, "inputSchema": {"type": "object"}} for n in names]))
    assert validate(to_dict(tool)).ok
    keys = list(tool.commands)
    assert keys[0] == "notes_search"  # a valid name is its own key
    assert len(set(keys)) == len(keys)
    assert all(MCP_NAME.match(k) for k in keys)
    assert not any(k.startswith("-") for k in keys)
    assert [c.extensions["x-mcp"]["name"] for c in tool.commands.values()] == names
    compiled = compile_tools(tool, "mcp")
    for definition, name in zip(compiled.tools, names, strict=True):
        [parsed] = parse_tool_calls("mcp", {"name": definition["name"]}, compiled)
        assert request(tool, parsed.path, parsed.values)["params"]["name"] == name


@pytest.mark.parametrize(
    ("tools", "tool", "reason"),
    [
        (
            [{"name": "twice", "inputSchema": {}}, {"name": "twice", "inputSchema": {}}],
            "twice",
            "two tools have this name",
        ),
        ([{"name": "", "inputSchema": {}}], None, "has no name"),
        ([{"name": "t", "inputSchema": []}], "t", "inputSchema must be an object"),
        ([{"name": "t", "inputSchema": {"type": "string"}}], "t", "of type 'object'"),
        (
            [{"name": "t", "inputSchema": {"properties": {"p": False}}}],
            "t",
            "inputSchema.properties.p: the schema `false` accepts no value",
        ),
        (
            [{"name": "t", "inputSchema": {"properties": {"p": {"$ref": "https://x/s.json"}}}}],
            "t",
            "points outside the input schema",
        ),
        (
            [{"name": "t", "inputSchema": {"properties": {"p": {"$ref": "#/$defs/Nope"}}}}],
            "t",
            "points at nothing",
        ),
        ([{"name": "t", "inputSchema": {}, "annotations": ["readOnlyHint"]}], "t", "annotations"),
    ],
)
def test_what_atip_cannot_hold_is_refused_naming_the_tool(tools, tool, reason):
    with pytest.raises(NotDescribable) as caught:
        describe(listing(tools))
    assert caught.value.tool == tool
    assert reason in str(caught.value)


def test_recursive_exploding_and_deep_schemas_are_refused_not_followed():
    node = {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/Node"}}}}
    tree = {"$defs": {"Node": node}, "properties": {"root": {"$ref": "#/$defs/Node"}}}
    with pytest.raises(NotDescribable, match=r"root.*recursive"):
        describe(one_tool(tree, name="tree"))
    # 30 levels, each referring twice to the next: 2**30 objects if written out
    defs = {
        f"d{i}": {
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}}
        }
        for i in range(30)
    }
    defs["d30"] = {"type": "string"}
    # CPU seconds of this thread, which a busy machine does not add to (decision 710)
    started = time.thread_time()
    with pytest.raises(NotDescribable, match="grows past"):
        describe(one_tool({"$defs": defs, "properties": {"p": {"$ref": "#/$defs/d0"}}}))
    assert time.thread_time() - started < 5
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        deep = {"type": "object", "properties": {"a": deep}}
    with pytest.raises(NotDescribable, match="nested too deeply: more than 64 levels"):
        describe(one_tool({"properties": {"p": deep}}))
    # shallow as JSON, deep once its references are inlined
    chain = {f"d{i}": {"properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}}} for i in range(70)}
    chain["d70"] = {"type": "string"}
    with pytest.raises(NotDescribable, match="deeper than 64"):
        describe(one_tool({"$defs": chain, "properties": {"p": {"$ref": "#/$defs/d0"}}}))


def test_a_property_whose_type_is_not_a_name_keeps_its_schema():
    """`"type": {}` passes the SDK (an input schema is any object) and made `_nearest`
    raise TypeError (unhashable dict): exit 70 from `atip import mcp`."""
    odd = {"type": {"not": "a type name"}, "description": "odd"}
    tool = describe(one_tool({"properties": {"p": odd, "q": {"type": [{}], "enum": [{}]}}}))
    [p, q] = tool.commands["t"].options
    assert (p.type, p.schema) == ("string", {"type": {"not": "a type name"}})
    assert q.schema == {"type": [{}], "enum": [{}]}
    assert validate(to_dict(tool)).ok


def test_a_lone_surrogate_in_a_listing_is_refused_not_written():
    with pytest.raises(NotDescribable, match=r"tool 1 of the listing, \$\.description: a string"):
        describe(one_tool({}, description="a\udc00"))
    with pytest.raises(NotDescribable, match="server's info"):
        describe(listing([{"name": "t", "inputSchema": {}}], name="\ud800"))
    report = validate({**to_dict(describe(one_tool({}))), "description": "\ud800"})
    assert [(p.code, p.location) for p in report.errors] == [
        ("json.lone-surrogate", "$.description")
    ]


def test_a_huge_listing_is_refused():
    tools = [{"name": f"t{i}", "inputSchema": {}} for i in range(10_001)]
    with pytest.raises(NotDescribable, match="10001 tools"):
        describe(listing(tools))


def test_odd_but_valid_schemas_still_give_a_valid_document_that_compiles_exactly():
    properties = {
        "nullable_default": {"type": "string", "default": None},
        "mixed_enum": {"enum": ["a", 1, None]},
        "union": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "wrong_default": {"type": "string", "default": 10},
        "ints": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
        "bad description": {"type": "string", "description": 42},
        "with $ref sibling": {"$ref": "#/$defs/S", "minLength": 2},
    }
    schema = {"$defs": {"S": {"type": "string", "maxLength": 5}}, "properties": properties}
    tool = describe(one_tool(schema, required=["gone"]))
    assert validate(to_dict(tool)).ok
    result = compile_tools(tool, "mcp")
    [compiled] = result.tools
    keys = result.bindings[compiled["name"]].targets[""].params  # key → the option
    got = {keys[k].name: v for k, v in compiled["inputSchema"]["properties"].items()}
    assert keys["bad_description"].name == "bad description"  # keys providers accept
    for prop, want in properties.items():
        if "$ref" in want:
            want = {"type": "string", "maxLength": 5, "minLength": 2}
        extra = {k: v for k, v in got[prop].items() if k != "description"}
        assert extra == {k: v for k, v in want.items() if k != "description"}, prop
    flags = [f for o in tool.commands["t"].options for f in o.flags]
    assert len(set(flags)) == len(flags)
    assert all(" " not in f for f in flags)


def test_integer_bounds_and_any_value_survive_a_compile():
    properties = {
        "n": {"type": "integer", "minimum": 1},
        "any": {},
        "wrong_default": {"type": "integer", "default": "ten"},
    }
    tool = describe(one_tool({"properties": properties}))
    assert [o.schema for o in tool.commands["t"].options] == list(properties.values())
    [compiled] = compile_tools(tool, "mcp").tools
    got = compiled["inputSchema"]["properties"]
    assert {k: {x: v for x, v in got[k].items() if x != "description"} for k in got} == properties


def test_schemas_openai_strict_mode_cannot_take_fall_back_to_non_strict():
    """A server's schema may leave a property untyped or a nested one optional; OpenAI's
    strict mode refuses both, so those tools are compiled non-strict, with a warning."""
    nested = {"type": "object", "properties": {"a": {"type": "string"}}}
    tool = describe(one_tool({"properties": {"any": {}, "obj": nested}}))
    compiled = compile_tools(tool, "openai", strict=True)
    assert compiled.tools[0]["function"]["strict"] is False
    [warning] = compiled.warnings
    assert warning.code == "openai.strict-limit"
    assert "no stated type (any)" in warning.message
    assert "not required (a)" in warning.message
    plain = describe(one_tool({"properties": {"n": {"type": "integer", "minimum": 1}}}))
    assert compile_tools(plain, "openai", strict=True).tools[0]["function"]["strict"] is True


def test_server_names_a_tool_its_name_or_the_command():
    weird = describe(listing([], name="@acme/notes server", version=""))
    assert weird.name == "@acme-notes-server"
    assert weird.version == "unknown"
    nameless = describe(listing([], version="1"))
    assert nameless.name == "some-server"  # the server named none: its command's last word
    named = describe(listing([]), name="notes")
    assert named.name == "notes"
    with pytest.raises(ValueError, match="not a tool name"):
        describe(listing([]), name="two words")


# -- calling -------------------------------------------------------------------------------


def test_request_maps_values_back_and_checks_them_first(imported):
    values = {
        ParamRef("option", "title"): "Buy milk",
        ParamRef("option", "due"): {"date": "2030-01-01", "remind": True},
    }
    sent = request(imported, ("create_note",), values)
    assert sent == {
        "method": "tools/call",
        "params": {
            "name": "create_note",
            "arguments": {"title": "Buy milk", "due": {"date": "2030-01-01", "remind": True}},
        },
    }
    bad = {ParamRef("option", "title"): "", ParamRef("option", "due"): {"remind": "yes"}}
    with pytest.raises(InvalidArguments) as caught:
        request(imported, ("create_note",), bad)
    problems = {p.parameter: p.message for p in caught.value.problems}
    assert set(problems) == {"title", "due"}
    assert "shorter than 1" in problems["title"]
    errors = caught.value.to_atdf()["errors"]
    assert {e["parameter_name"] for e in errors} == {"title", "due"}
    with pytest.raises(InvalidArguments, match="is required"):
        request(imported, ("create_note",), {ParamRef("option", "title"): "x"})


def test_values_are_checked_offline_and_lone_surrogates_refused(imported):
    """jsonschema-rs fetches a `$ref`'s URL unless told not to: a document's option schema
    made `atip run` send a GET wherever it pointed. And a lone surrogate in a value
    reached jsonschema-rs as UnicodeEncodeError (exit 70)."""
    import http.server
    import threading

    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"type": "object"}')

        def log_message(self, *args: Any) -> None:
            pass

    listening = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=listening.serve_forever, daemon=True).start()
    try:
        document = to_dict(imported)
        for option in document["commands"]["create_note"]["options"]:
            if option["name"] == "due":
                option["schema"] = {"$ref": f"http://127.0.0.1:{listening.server_port}/s.json"}
        tool = from_dict(document)
        values = {ParamRef("option", "title"): "t", ParamRef("option", "due"): {"date": "x"}}
        assert request(tool, ("create_note",), values)["params"]["arguments"]["title"] == "t"
        assert asked == []
        said = [p.location for p in validate(document).warnings if p.code.startswith("parameter")]
        assert said == ["$.commands.create_note.options[3].schema"]  # due
    finally:
        listening.shutdown()
        listening.server_close()
    lone = {ParamRef("option", "title"): "t", ParamRef("option", "due"): {"date": "\udc00"}}
    with pytest.raises(InvalidArguments) as caught:
        request(imported, ("create_note",), lone)
    [problem] = caught.value.problems
    assert problem.message.startswith("date: a string holds a lone UTF-16 surrogate")


def test_call_answers_text_structured_content_and_errors(imported):
    values = {ParamRef("option", "title"): "t", ParamRef("option", "due"): {"date": "2030-01-01"}}
    created = call(imported, ("create_note",), values, timeout=30)
    assert (created.text, created.is_error) == ("created t", False)
    assert created.structured_content == {"id": "n3", "title": "t"}
    failed = call(imported, ("fail",), {ParamRef("option", "why"): "disk full"}, timeout=30)
    assert (failed.text, failed.is_error) == ("it failed: disk full", True)


def test_a_slow_call_times_out_and_the_server_is_stopped(imported):
    started = time.monotonic()
    with pytest.raises(ServerTimeout):
        call(imported, ("slow",), {ParamRef("option", "seconds"): 30}, timeout=1)
    assert time.monotonic() - started < 1 + BUSY  # not the call's 30 s


def run_call(document: Path, name: str, arguments: dict[str, Any], *more: str) -> Any:
    payload = json.dumps({"name": f"notes-desk_{name}", "arguments": arguments})
    return atip("run", "--tool", str(document), "--call", payload, *more)


def test_cli_import_writes_the_document_it_prints(imported, imported_file):
    result, out = imported_file
    assert result.exit_code == 0, result.output
    assert result.stdout.encode() == out.read_bytes()  # --plain: the document itself
    document = json.loads(out.read_text())
    assert validate(document).ok
    assert document["commands"] == to_dict(imported)["commands"]
    reach = document["x-mcp"]
    assert reach["env"] == {"NOTES_TOKEN": "${NOTES_SECRET}"}  # named, not written
    assert reach["cwd"] == os.getcwd()
    assert reach["command"] == command("--page-size", "4")


def test_atip_run_calls_an_imported_tool_under_the_policy(imported_file, tmp_path):
    """A closed-world tool runs where the policy forbids the network, and gets the
    token its environment names; an open-world one is denied without starting anything."""
    _, document = imported_file
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"allowNetwork": False}))
    audit = tmp_path / "audit.jsonl"
    args = {"text": "hi", "count": 2, "ratio": 0.5, "loud": True, "words": ["a"], "nested": {}}
    ran = run_call(document, "echo", args, "--policy", str(policy), "--audit", str(audit))
    assert ran.exit_code == 0, ran.output
    report = envelope_of(ran)["result"]
    # the token reached the server (its digest says which) and, being a secret, not the
    # model: neither in the text nor in the structured result
    assert json.loads(report["text"]) == {
        "tool": "echo",
        "arguments": args,
        "token": "[REDACTED:token]",
        "sha256": S3CRET_SHA256,
    }
    assert report["structuredContent"]["token"] == "[REDACTED:token]"
    assert report["structuredContent"]["sha256"] == S3CRET_SHA256
    assert (report["decision"], report["isError"], report["exitCode"]) == ("allow", False, 0)
    page = {"url": "https://example.com"}
    denied = run_call(document, "fetch_page", page, "--policy", str(policy), "--audit", str(audit))
    assert denied.exit_code == 30, denied.output
    assert envelope_of(denied)["result"]["argv"] is None  # nothing started
    [first, second] = AuditLog(audit).read()
    assert first["request"]["params"] == {"name": "echo", "arguments": args}
    assert first["decision"] == "allow"
    assert first["exit_code"] == 0
    assert second["decision"] == "deny"
    assert "request" not in second


def test_atip_run_on_a_document_whose_x_mcp_is_broken_says_so(imported_file, tmp_path):
    """Nothing can be started when x-mcp does not say how: a data-format error (65) naming
    x-mcp, not 'invalid arguments'."""
    _, document = imported_file
    broken = json.loads(document.read_text())
    broken["x-mcp"]["transport"] = "pigeon"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    ran = run_call(path, "echo", {"text": "hi"})
    assert ran.exit_code == 65, ran.output
    error = envelope_of(ran)["error"]
    assert "x-mcp" in error["message"]
    assert "x-mcp" in error["suggestion"]["fix"]
    assert envelope_of(ran)["result"]["stopped"] == "not-started"


def test_atip_run_asks_before_a_destructive_imported_tool(imported_file):
    _, document = imported_file
    unasked = run_call(document, "delete_note", {"id": "n1"})
    assert unasked.exit_code == 2, unasked.output  # no terminal to ask, no --yes
    assert "destructive" in envelope_of(unasked)["error"]["message"]
    confirmed = run_call(document, "delete_note", {"id": "n1"}, "--yes")
    assert confirmed.exit_code == 0, confirmed.output
    said = json.loads(envelope_of(confirmed)["result"]["text"])
    assert said["arguments"] == {"id": "n1"}
    assert said["tool"] == "delete_note"


def test_atip_run_dry_run_reports_the_request_and_starts_nothing(imported_file):
    _, document = imported_file
    args = {"title": "t", "due": {"date": "2030-01-01"}}
    planned = run_call(document, "create_note", args, "--dry-run")
    assert planned.exit_code == 0, planned.output
    text = envelope_of(planned)["result"]["result"]["text"]
    assert json.loads(text.removeprefix("dry run: ")) == {
        "method": "tools/call",
        "params": {"name": "create_note", "arguments": args},
    }
    refused = run_call(document, "echo", {}, "--stdin", "data")
    assert refused.exit_code == 2, refused.output
    invalid = run_call(document, "create_note", {"title": "", "due": {}})
    assert invalid.exit_code == 65, invalid.output
    assert "title" in envelope_of(invalid)["result"]["text"]


def test_a_variable_the_document_names_must_be_set_when_calling(imported_file, monkeypatch):
    _, document = imported_file
    monkeypatch.delenv("NOTES_SECRET")
    result = run_call(document, "echo", {})
    assert result.exit_code == 40, result.output
    assert "${NOTES_SECRET}, which is not set" in envelope_of(result)["error"]["message"]


def test_import_names_the_variable_that_is_not_set(monkeypatch, tmp_path):
    monkeypatch.delenv("NOTES_SECRET")
    out = tmp_path / "notes.json"
    result = atip(
        "import", "mcp", "--out", str(out), "--env", "NOTES_TOKEN=${NOTES_SECRET}",
        "--", *command(),
    )  # fmt: skip
    assert result.exit_code == 40, result.output
    error = envelope_of(result)["error"]
    assert error["details"]["variable"] == "NOTES_SECRET"
    assert "NOTES_SECRET" in error["suggestion"]["fix"]
    assert not out.exists()


def test_atip_run_reports_a_tool_error_as_a_failed_dependency(imported_file):
    _, document = imported_file
    failed = run_call(document, "fail", {"why": "disk full"})
    assert failed.exit_code == 40, failed.output
    report = envelope_of(failed)["result"]
    assert (report["isError"], report["text"]) == (True, "it failed: disk full")


# -- over streamable HTTP ------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("http") / "server.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            command("--http", str(port)), stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def test_http_import_and_calls_send_the_named_header(http_url, imported, tmp_path):
    out = tmp_path / "notes.json"
    result = atip(
        "import", "mcp", "--url", http_url, "--header", "X-Notes-Token: ${NOTES_SECRET}",
        "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert validate(document).ok
    assert document["commands"] == to_dict(imported)["commands"]
    assert {k: document["x-mcp"][k] for k in ("transport", "url", "headers")} == {
        "transport": "http",
        "url": http_url,
        "headers": {"X-Notes-Token": "${NOTES_SECRET}"},
    }
    from atipkit.model import load

    tool = load(out)
    compiled = compile_tools(tool, "openai")
    executor = Executor(tool, policy=Policy(allow_destructive=True), remote=[McpCaller()])
    response = {
        "tool_calls": [
            {"id": "1", "function": {"name": "notes-desk_echo", "arguments": '{"text": "x"}'}},
            {
                "id": "2",
                "function": {
                    "name": "notes-desk_create_note",
                    "arguments": '{"title": "h", "due": {"date": "2030-01-01"}}',
                },
            },
        ]
    }
    echo, created = executor.execute_all(parse_tool_calls("openai", response, compiled))
    said = json.loads(echo.text)
    assert said["token"] == "[REDACTED:token]"  # sent with the header; not shown to the model
    assert said["sha256"] == S3CRET_SHA256
    assert said["arguments"] == {"text": "x"}
    assert echo.invocation.argv == [http_url]
    assert created.structured_content == {"id": "n3", "title": "h"}
    assert created.request["params"]["name"] == "create_note"


# -- failures ------------------------------------------------------------------------------


def test_import_needs_exactly_one_server():
    neither = atip("import", "mcp")
    assert neither.exit_code == 2
    assert "neither" in envelope_of(neither)["error"]["message"]
    both = atip("import", "mcp", "--url", "http://127.0.0.1:9/mcp", "--", "srv")
    assert both.exit_code == 2
    assert "both" in envelope_of(both)["error"]["message"]
    for args in (
        ["--url", "ftp://x/mcp"],
        ["--url", "http://127.0.0.1:9/mcp", "--header", "no colon"],
        ["--url", "http://127.0.0.1:9/mcp", "--env", "A=1"],
        ["--name", "two words", "--", "srv"],
        ["--env", "novalue", "--", "srv"],
    ):
        result = atip("import", "mcp", *args)
        assert result.exit_code == 2, (args, result.output)


def test_import_of_a_command_that_does_not_exist_is_not_found(tmp_path):
    result = atip("import", "mcp", "--out", str(tmp_path / "x.json"), "--", "no-such-server-x")
    assert result.exit_code == 10, result.output
    assert not (tmp_path / "x.json").exists()


def test_import_of_a_server_that_dies_says_what_it_said():
    result = atip("import", "mcp", "--", *command("--mode", "dies"))
    assert result.exit_code == 40, result.output
    error = envelope_of(result)["error"]
    assert "cannot open the notes database" in error["message"]
    assert "cannot open the notes database" in error["details"]["stderr"]


def test_import_of_a_server_that_never_answers_times_out():
    started = time.monotonic()
    result = atip("import", "mcp", "--timeout", "1", "--", *command("--mode", "silent"))
    assert result.exit_code == 50, result.output
    with pytest.raises(ServerTimeout):
        fetch(Endpoint.stdio(command("--mode", "silent")), timeout=1)
    assert time.monotonic() - started < 2 + 2 * BUSY  # two timeouts and two processes' starts


def test_import_of_a_recursive_schema_names_the_tool(tmp_path):
    out = tmp_path / "tree.json"
    out.write_text("kept")
    result = atip("import", "mcp", "--out", str(out), "--", *command("--mode", "recursive"))
    assert result.exit_code == 65, result.output
    error = envelope_of(result)["error"]
    assert error["details"]["tool"] == "tree"
    assert "recursive" in error["message"]
    assert out.read_text() == "kept"  # nothing half-written


def test_a_listing_that_never_ends_is_stopped():
    with pytest.raises(NotDescribable, match="cursor the server gave before"):
        fetch(Endpoint.stdio(command("--mode", "stuck-cursor")), timeout=30)
    with pytest.raises(NotDescribable, match="past 5 pages"):
        fetch(Endpoint.stdio(command("--mode", "endless")), timeout=30, max_pages=5)


def test_an_unreachable_url_fails_as_a_dependency():
    with pytest.raises(ServerFailed):
        fetch(Endpoint.http(f"http://127.0.0.1:{free_port()}/mcp"), timeout=10)


@pytest.mark.parametrize("installed", [None, "1.26.0"])
def test_without_the_mcp_sdk_the_import_asks_for_the_extra(monkeypatch, installed):
    """The SDK cannot be uninstalled (or downgraded) here: the package metadata says it
    is missing, or of version 1."""
    import importlib.metadata

    real = importlib.metadata.version

    def version(name: str) -> str:
        if name != "mcp":
            return real(name)
        if installed is None:
            raise importlib.metadata.PackageNotFoundError(name)
        return installed

    monkeypatch.setattr(importlib.metadata, "version", version)
    result = atip("import", "mcp", "--", sys.executable)
    assert result.exit_code == 40, result.output
    error = envelope_of(result)["error"]
    assert error["code"] == "E4010"
    assert "version 2 or later" in error["message"]
    assert ("found 1.26.0" in error["message"]) == (installed is not None)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYWORDS = st.sampled_from(
    ["type", "properties", "required", "items", "enum", "default", "description", "$ref",
     "$defs", "anyOf", "additionalProperties", "title", "minimum", "format"]
)  # fmt: skip
SCHEMA = st.recursive(
    JSON,
    lambda inner: st.dictionaries(KEYWORDS | st.text(max_size=6), inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=40, deadline=None)
@given(
    tools=st.lists(
        st.fixed_dictionaries(
            {"name": st.text(max_size=20) | JSON, "inputSchema": SCHEMA},
            optional={"annotations": JSON, "description": JSON, "outputSchema": JSON},
        ),
        max_size=4,
    ),
    info=JSON,
)
def test_any_listing_gives_a_valid_document_or_says_why(tools, info):
    """Whatever a server lists, `describe` answers a valid document or `NotDescribable`:
    never another exception, never an invalid document."""
    hostile = Listing(
        endpoint=Endpoint.stdio(["srv"]), protocol_version="x", server_info=info, tools=tools
    )
    try:
        outcome: Any = describe(hostile)
    except NotDescribable as exc:
        outcome = exc
    if isinstance(outcome, NotDescribable):
        assert str(outcome)
        return
    assert validate(to_dict(outcome)).ok
    compile_tools(outcome, "mcp")


# -- the executor's caller -------------------------------------------------------------------


def test_the_mcp_caller_is_given_only_for_tools_of_a_server(imported):
    """`atip run` and the gateway get `McpCaller` from `remote_callers` when a tool was
    imported from a server, and nothing (not even the package) for command lines."""
    from atipkit.interop import callers
    from atipkit.interop.mcp import EXTENSION

    assert callers.MCP_EXTENSION == EXTENSION
    plain = from_dict({"atip": {"version": "0.6"}, "name": "t", "version": "1", "description": "d"})
    assert callers.remote_callers([plain]) == []
    [caller] = callers.remote_callers([plain, imported])
    assert isinstance(caller, McpCaller)
    assert caller.claims(imported)
    script = (
        "import sys, atipkit\n"
        "from atipkit.interop.callers import remote_callers\n"
        "tool = atipkit.from_dict({'atip': {'version': '0.6'}, 'name': 't', 'version': '1',"
        " 'description': 'd'})\n"
        "print(remote_callers([tool]), 'atipkit.interop.mcp' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["[]", "False"]
