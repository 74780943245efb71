"""The Tool Discovery Protocol library and `atip import tdp`: manifests written from ATIP
tools (checked against the spec's tables, names, categories, metadata, examples), manifests
read in both JSON shapes of SPEC-NOTES 22 (the two fixtures give byte-identical ATIP
documents), every kind of bad input with its JSON path, and `fetch` against a real HTTP
server on loopback (status codes, non-JSON, network failures, caching)."""

from __future__ import annotations

import contextlib
import datetime as dt
import http.server
import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from atipkit.bridge import compile_tools
from atipkit.errors import DocumentTooLarge, MalformedJSON
from atipkit.interop import tdp
from atipkit.model import UNSET, dumps, effective_effects, from_dict, load, to_dict
from atipkit.validation import validate
from tests.helpers import EXAMPLES, FIXTURES, atip, envelope_of

TDP = FIXTURES / "tdp" / "manifests"
SNAKE = TDP / "agent-manager.snake.json"
PROTO3 = TDP / "agent-manager.proto3.json"
SCHEMA = json.loads((TDP / "tool-manifest.schema.json").read_text())
NAME = re.compile(r"^[A-Za-z0-9_]+$")


def tables() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(SCHEMA)


def conforms(manifest: dict[str, Any]) -> None:
    """The manifest fits the spec's tables (tests/fixtures/tdp/tool-manifest.schema.json)."""
    errors = [f"{e.json_path}: {e.message}" for e in tables().iter_errors(manifest)]
    assert not errors, errors


def examples() -> list[Any]:
    """gh, kubectl, terraform, and deploy as the real program describes itself."""
    out = [load(EXAMPLES / "tools" / f"{n}.json") for n in ("gh", "kubectl", "terraform")]
    agent = subprocess.run(
        [str(EXAMPLES / "bin" / "deploy"), "--agent"], capture_output=True, check=True
    )
    return [*out, from_dict(json.loads(agent.stdout))]


def tool(commands: dict[str, Any], name: str = "t", **extra: Any) -> Any:
    return from_dict(
        {
            "atip": {"version": "0.6"},
            "name": name,
            "version": "1.0",
            "description": "A test tool",
            "commands": commands,
            **extra,
        }
    )


def by_name(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in manifest["tools"]}


def valid(document: Any) -> None:
    report = validate(dumps(document))
    assert report.ok, [p.format() for p in report.errors]


# -- writing -------------------------------------------------------------------------------


def test_the_manifest_of_real_tools_fits_the_spec_tables():
    tools = examples()
    moment = dt.datetime(2024, 1, 15, 11, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    manifest = tdp.manifest(tools, generated_at=moment)
    conforms(manifest)
    assert manifest["protocol_version"] == "1.0"
    assert manifest["generated_at"] == "2024-01-15T10:30:00Z"
    assert manifest["scenario"]["name"] == "atip"
    assert all(NAME.match(t["name"]) for t in manifest["tools"])
    assert len(manifest["tools"]) == len(compile_tools(tools, "mcp").tools)
    alone = tdp.manifest(tools[0])  # one tool: the scenario is the tool itself
    assert alone["scenario"] == {
        "name": "gh",
        "version": "2.45.0",
        "description": "Work seamlessly with GitHub from the command line",
    }
    custom = tdp.manifest(tools[0], scenario={"name": "s", "base_url": "http://h:1"})
    assert custom["scenario"] == {
        "name": "s",
        "version": "0.0.0",
        "description": "",
        "base_url": "http://h:1",
    }


def test_two_tools_of_one_name_are_both_listed_as_a_compile_names_them():
    gh = examples()[0]
    newer = from_dict({**to_dict(gh), "version": "3.0"})
    manifest = tdp.manifest([gh, newer])
    conforms(manifest)
    compiled = compile_tools([gh, newer], "mcp")
    names = [t["name"] for t in manifest["tools"]]
    assert len(set(names)) == len(names) == 2 * len(compile_tools(gh, "mcp").tools)
    assert names == list(tdp.tdp_names(t["name"] for t in compiled.tools).values())
    tools = {t["x-atip"]["version"]: t["x-atip"]["tool"] for t in manifest["tools"]}
    assert tools["2.45.0"] == "gh"  # the first keeps the name
    assert tools["3.0"].startswith("gh_")
    categories = [c["id"] for c in manifest["categories"]]
    assert len(set(categories)) == len(categories)


def test_names_are_the_bridge_names_with_dashes_spelled_as_underscores():
    tools = [
        *examples(),
        tool(
            {
                "a-b": {"description": "dash", "effects": {"network": False}},
                "a_b": {"description": "underscore", "effects": {"network": False}},
                "roll-out": {"description": "only a dash", "effects": {"network": False}},
            }
        ),
    ]
    bridge = compile_tools(tools, "mcp").table
    manifest = tdp.manifest(tools)
    names = [t["name"] for t in manifest["tools"]]
    assert len(set(names)) == len(names)
    assert all(NAME.match(n) and len(n) <= 64 for n in names)
    back = {t["x-atip"]["name"]: t["name"] for t in manifest["tools"]}
    assert set(back) == set(bridge)  # every command atip compile names, by that name
    for bridge_name, name in back.items():
        if bridge_name not in ("t_a-b",):
            assert name == bridge_name.replace("-", "_")
    # `t_a_b` is spelled so by its command: it keeps the name; `a-b` yields, with a hash
    assert back["t_a_b"] == "t_a_b"
    assert re.fullmatch(r"t_a_b_[0-9a-f]{6}", back["t_a-b"])
    assert back["t_roll-out"] == "t_roll_out"
    entries = by_name(manifest)
    assert entries["t_a_b"]["x-atip"]["command"] == ["a_b"]
    assert entries[back["t_a-b"]]["x-atip"]["command"] == ["a-b"]
    # names that are not taken are never renamed by one that is added
    assert tdp.tdp_names(["x-y"]) == {"x-y": "x_y"}
    assert tdp.tdp_names(["x-y", "z"]) == {"x-y": "x_y", "z": "z"}


def test_categories_are_the_command_groups():
    legacy = from_dict(
        json.loads(
            subprocess.run(
                [str(EXAMPLES / "bin" / "legacy-tool"), "--agent"], capture_output=True, check=True
            ).stdout
        )
    )
    manifest = tdp.manifest([*examples(), legacy])
    entries = by_name(manifest)
    assert entries["gh_pr_create"]["category"] == "gh_pr"
    assert entries["gh_issue_create"]["category"] == "gh_issue"
    assert entries["kubectl_get"]["category"] == "kubectl"  # top level: the tool
    assert entries["deploy_release_rollback"]["category"] == "deploy_release"
    assert entries["deploy_status"]["category"] == "deploy"
    assert entries["legacy_tool"]["category"] == "legacy_tool"  # the root command
    categories = {c["id"]: c for c in manifest["categories"]}
    assert categories["gh_pr"] == {
        "id": "gh_pr",
        "name": "gh pr",
        "description": "Manage pull requests",
    }
    assert categories["kubectl"]["description"] == "Control Kubernetes clusters"
    assert categories["deploy_release"]["description"] == "Manage releases"
    assert {t["category"] for t in manifest["tools"]} == set(categories)


def test_metadata_from_the_effects():
    entries = by_name(tdp.manifest(examples()))
    destroy = entries["deploy_destroy"]
    assert destroy["description"].endswith("[⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE]")
    assert destroy["metadata"]["requires_approval"] is True
    assert {"destructive", "not-reversible", "network"} <= set(destroy["metadata"]["tags"])
    rollback = entries["deploy_release_rollback"]["metadata"]  # not reversible, not destructive
    assert rollback["requires_approval"] is True
    assert "interactive" in rollback["tags"]  # it may prompt
    create = entries["deploy_release_create"]["metadata"]  # timeout 5m, not idempotent
    assert create["timeout_seconds"] == 300
    assert create["long_running"] is True
    assert create["idempotent"] is False
    assert create["requires_approval"] is False
    status = entries["deploy_status"]["metadata"]
    assert status["idempotent"] is True
    assert status["requires_approval"] is False
    assert status["enabled_by_default"] is True
    assert "timeout_seconds" not in status
    assert "long_running" not in status
    plain = tool(
        {
            "cheap": {
                "description": "c",
                "effects": {
                    "cost": {"estimate": "none"},
                    "duration": {"typical": "1-5s", "timeout": "1500ms"},
                    "network": False,
                    "filesystem": {"write": False},
                },
            },
            "slow": {
                "description": "s",
                "effects": {"cost": {"estimate": "medium"}, "duration": {"typical": "2-10m"}},
            },
            "pay": {
                "description": "p",
                "effects": {"cost": {"estimate": "$5 an hour", "billable": True}},
            },
            "old": {"description": "o", "deprecated": True, "effects": {"idempotent": True}},
            "unknown": {"description": "u"},
        }
    )
    entries = by_name(tdp.manifest(plain))
    cheap = entries["t_cheap"]["metadata"]
    assert (cheap["cost_estimate"], cheap["timeout_seconds"], cheap["long_running"]) == (
        "low",
        2,
        False,
    )
    assert "read-only" in cheap["tags"]
    slow = entries["t_slow"]["metadata"]
    assert (slow["cost_estimate"], slow["long_running"]) == ("medium", True)
    pay = entries["t_pay"]["metadata"]
    assert pay["requires_approval"] is True  # billable
    assert "cost_estimate" not in pay  # not one of TDP's words: left to x-atip
    assert entries["t_pay"]["x-atip"]["effects"]["cost"]["estimate"] == "$5 an hour"
    old = entries["t_old"]["metadata"]
    assert old["enabled_by_default"] is False
    assert "deprecated" in old["tags"]
    unknown = entries["t_unknown"]["metadata"]  # effects unknown: nothing is claimed
    assert unknown == {"enabled_by_default": True, "requires_approval": False}


def test_parameters_are_the_bridge_schema_with_string_enums_only():
    entries = by_name(tdp.manifest(examples()))
    listing = entries["gh_pr_list"]["parameters"]
    assert listing["type"] == "object"
    assert listing["additionalProperties"] is False
    assert listing["properties"]["state"]["enum"] == ["open", "closed", "merged", "all"]
    assert listing["properties"]["state"]["default"] == "open"
    assert "required" not in listing
    assert entries["gh_issue_create"]["parameters"]["required"] == ["title"]
    numbered = tool(
        {
            "level": {
                "description": "Set the level",
                "arguments": [
                    {"name": "n", "type": "integer", "enum": [1, 2, 3], "description": "Level"}
                ],
                "effects": {"network": False},
            }
        }
    )
    manifest = tdp.manifest(numbered)
    conforms(manifest)
    level = manifest["tools"][0]["parameters"]["properties"]["n"]
    assert "enum" not in level
    assert level == {"type": "integer", "description": "Level (one of 1, 2, 3)"}


def test_examples_only_where_the_line_is_one_true_call():
    entries = by_name(tdp.manifest(examples()))
    assert entries["gh_pr_create"]["metadata"]["examples"] == [
        {
            "description": "gh pr create --title 'Fix bug' --body 'Description'",
            "input": {"title": "Fix bug", "body": "Description"},
        }
    ]
    made = tool(
        {
            "copy": {
                "description": "Copy files",
                "arguments": [
                    {"name": "files", "type": "file", "variadic": True, "description": "Files"},
                ],
                "options": [
                    {"name": "count", "flags": ["-n", "--count"], "type": "integer"},
                    {"name": "force", "flags": ["-f"], "type": "boolean"},
                    {"name": "ratio", "flags": ["--ratio"], "type": "number"},
                    {"name": "to", "flags": ["--to"], "type": "string", "required": True},
                ],
                "examples": [
                    "t -v copy a.txt b.txt --to=out -n 3 -f",  # true (globals first, as run)
                    "t copy a.txt --to out --unknown",  # a flag it does not have
                    "t copy a.txt -n many --to out",  # not an integer
                    "t copy a.txt -nf --to out",  # bundled short flags
                    "t copy a.txt --to out --ratio nan",  # a number JSON cannot carry
                    "t copy a.txt",  # --to is required
                    "t other a.txt --to out",  # another command
                    "t copy 'unclosed --to out",  # not a command line
                ],
                "effects": {"network": False},
            }
        },
        globalOptions=[{"name": "verbose", "flags": ["-v"], "type": "boolean"}],
    )
    [entry] = tdp.manifest(made)["tools"]
    assert entry["metadata"]["examples"] == [
        {
            "description": "t -v copy a.txt b.txt --to=out -n 3 -f",
            "input": {
                "verbose": True,
                "files": ["a.txt", "b.txt"],
                "to": "out",
                "count": 3,
                "force": True,
            },
        }
    ]


def test_x_atip_carries_the_exact_facts_and_can_be_left_out():
    tools = examples()
    manifest = tdp.manifest(tools)
    destroy = by_name(manifest)["deploy_destroy"]["x-atip"]
    deploy = next(t for t in tools if t.name == "deploy")
    assert destroy["tool"] == "deploy"
    assert destroy["version"] == "2.1.0"
    assert destroy["command"] == ["destroy"]
    assert destroy["parameters"]["service"] == {"kind": "argument", "name": "service"}
    assert destroy["parameters"]["env"] == {"kind": "global", "name": "env"}
    effects = tdp.atip_effects(destroy["effects"], [])
    assert effects == effective_effects(deploy, ("destroy",))
    plain = tdp.manifest(tools, extensions=False)
    conforms(plain)
    assert not [k for t in plain["tools"] for k in t if k.startswith("x-")]


# -- reading ----------------------------------------------------------------------------------


def test_both_shapes_of_one_manifest_give_byte_identical_atip_documents():
    snake = tdp.to_atip(tdp.parse(SNAKE.read_bytes(), source=str(SNAKE)))
    proto3 = tdp.to_atip(tdp.parse(PROTO3.read_bytes(), source=str(PROTO3)))
    assert dumps(snake) == dumps(proto3)
    valid(snake)
    conforms(json.loads(SNAKE.read_text()))


def test_what_a_manifest_becomes():
    document = tdp.to_atip(tdp.parse(PROTO3.read_bytes()))
    assert (document.name, document.version) == ("agent-manager", "1.0.0")
    assert document.extensions["x-tdp"]["scenario"]["base_url"] == "http://localhost:15000"
    assert [c["id"] for c in document.extensions["x-tdp"]["categories"]] == [
        "agent_lifecycle",
        "agent_history",
    ]
    spawn = document.commands["spawn_coding_agent"]
    options = {o.name: o for o in spawn.options}
    assert list(options) == [
        "task",
        "runner_type",
        "max_turns",
        "temperature",
        "dry_run",
        "labels",
        "limits",
        "callback_url",
    ]
    assert options["task"].required
    assert options["task"].flags == ["--task"]
    assert (options["runner_type"].type, options["runner_type"].default) == ("enum", "claude-code")
    assert options["runner_type"].enum == ["claude-code", "codex", "opencode"]
    assert (options["max_turns"].type, options["max_turns"].default) == ("integer", 20)
    assert options["max_turns"].schema == {"type": "integer", "minimum": 1, "maximum": 200}
    assert options["temperature"].default == 0.5
    assert options["dry_run"].default is True
    assert (options["labels"].type, options["labels"].default) == ("array", ["agent", "coding"])
    assert options["limits"].type == "string"  # an object: its schema says so
    assert options["limits"].schema["type"] == "object"
    assert options["limits"].extensions["x-tdp"]["default"] == {"cpu": 2}
    assert options["callback_url"].type == "url"
    effects = spawn.effects
    assert effects.idempotent is False
    assert effects.cost.estimate == "high"
    assert effects.duration.timeout == "30s"
    assert effects.destructive is UNSET
    meta = spawn.extensions["x-tdp"]["metadata"]
    assert meta["rate_limit_per_minute"] == 10
    assert meta["long_running"] is True
    assert meta["examples"][0]["input"]["limits"] == {"cpu": 4}
    assert meta["examples"][0]["input"]["dry_run"] is False
    stop = document.commands["stop_agent_run"]
    # requires_approval is kept, and does not make the command destructive
    assert stop.extensions["x-tdp"]["metadata"]["requires_approval"] is True
    assert stop.effects.destructive is UNSET
    assert stop.effects.idempotent is True
    purge = document.commands["purge_agent_history"]
    assert purge.extensions["x-tdp"]["metadata"]["enabled_by_default"] is False
    assert purge.options[0].extensions["x-tdp"] == {"default": None}
    assert purge.effects.cost.estimate == "variable"


def test_exact_effects_from_x_atip_and_the_safety_suffix_not_doubled():
    tools = examples()
    manifest = tdp.manifest(tools)
    document = tdp.to_atip(tdp.parse(json.dumps(manifest)))
    valid(document)
    deploy = next(t for t in tools if t.name == "deploy")
    destroy = document.commands["deploy_destroy"]
    assert destroy.effects == effective_effects(deploy, ("destroy",))
    assert destroy.description == "Delete a service and its data"
    compiled = compile_tools(document, "mcp").tools
    [again] = [t for t in compiled if t["name"] == "atip_deploy_destroy"]
    assert again["description"].count("DESTRUCTIVE") == 1
    # without x-atip: only what TDP says; requires_approval never becomes destructive
    bare = tdp.to_atip(tdp.parse(json.dumps(tdp.manifest(tools, extensions=False))))
    valid(bare)
    destroy = bare.commands["deploy_destroy"]
    assert destroy.effects.destructive is UNSET
    assert destroy.extensions["x-tdp"]["metadata"]["requires_approval"] is True
    create = bare.commands["deploy_release_create"]
    assert (create.effects.idempotent, create.effects.duration.timeout) == (False, "300s")


def test_newer_minor_versions_are_read_and_unknown_majors_refused():
    data = json.loads(SNAKE.read_text())
    data["protocol_version"] = "1.3"
    data["trace_id"] = "abc"
    data["tools"][0]["owner"] = "team-a"
    data["tools"][0]["metadata"]["priority"] = 3
    document = tdp.to_atip(tdp.parse(data))
    valid(document)
    assert document.extensions["x-tdp"]["extra"] == {"trace_id": "abc"}
    spawn = document.commands["spawn_coding_agent"].extensions["x-tdp"]
    assert spawn["extra"] == {"owner": "team-a"}
    assert spawn["metadata"]["extra"] == {"priority": 3}
    for key, version in (("protocol_version", "2.0"), ("protocolVersion", "0.9")):
        with pytest.raises(tdp.UnsupportedProtocol) as caught:
            tdp.parse({key: version, "scenario": {"name": "x"}}, source="m.json")
        assert caught.value.problems[0].location == f"$.{key}"
        assert str(caught.value) == (
            f"m.json: $.{key}: protocol version {version} is not supported: this reader "
            "knows 1.x, and a major version changes the response schema"
        )


def test_integers_as_proto3_writes_int64_and_shape_independent_zero_values():
    manifest = tdp.parse(
        {
            "protocolVersion": "1.0",
            "scenario": {"name": "s"},
            "tools": [
                {"name": "a", "metadata": {"timeoutSeconds": "45", "rateLimitPerMinute": 6.0}}
            ],
        }
    )
    meta = manifest.tools[0].metadata
    assert (meta.timeout_seconds, meta.rate_limit_per_minute) == (45, 6)
    assert (meta.idempotent, meta.requires_approval, meta.enabled_by_default) == (False,) * 3
    document = tdp.to_atip(manifest)
    valid(document)
    assert document.version == "0.0.0"
    assert document.commands["a"].effects.duration.timeout == "45s"


BASE = {"protocol_version": "1.0", "scenario": {"name": "s"}}


def with_tool(**fields: Any) -> dict[str, Any]:
    return {**BASE, "tools": [{"name": "a", **fields}]}


def deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return with_tool(parameters={"type": "object", "properties": {"p": schema}})


BAD: list[tuple[Any, str, str]] = [
    ([], "$", "expected an object, got array"),
    ({"scenario": {"name": "s"}}, "$.protocol_version", "missing 'protocol_version'"),
    ({**BASE, "protocol_version": 1.0}, "$.protocol_version", "expected a string, got number"),
    ({**BASE, "protocol_version": "one"}, "$.protocol_version", 'expected a version such as "1.0"'),
    ({"protocol_version": "1.0"}, "$.scenario", "missing 'scenario'"),
    ({**BASE, "scenario": {"name": ""}}, "$.scenario.name", "expected a non-empty string"),
    ({**BASE, "scenario": []}, "$.scenario", "expected an object, got array"),
    ({**BASE, "tools": {}}, "$.tools", "expected an array, got object"),
    ({**BASE, "tools": ["a"]}, "$.tools[0]", "expected an object, got string"),
    ({**BASE, "tools": [{}]}, "$.tools[0].name", "missing 'name'"),
    (
        {**BASE, "tools": [{"name": "a"}, {"name": "a"}]},
        "$.tools[1].name",
        "tool name 'a' is also the name of $.tools[0]",
    ),
    (with_tool(description=3), "$.tools[0].description", "expected a string, got integer"),
    (
        with_tool(metadata={"timeout_seconds": "soon"}),
        "$.tools[0].metadata.timeout_seconds",
        "expected a non-negative integer, got 'soon'",
    ),
    (
        with_tool(metadata={"timeout_seconds": -1}),
        "$.tools[0].metadata.timeout_seconds",
        "expected a non-negative integer, got -1",
    ),
    (
        with_tool(metadata={"requires_approval": "yes"}),
        "$.tools[0].metadata.requires_approval",
        "expected true or false, got string",
    ),
    (with_tool(metadata={"tags": [1]}), "$.tools[0].metadata.tags[0]", "expected a string"),
    (
        with_tool(metadata={"timeout_seconds": 1, "timeoutSeconds": 1}),
        "$.tools[0].metadata.timeoutSeconds",
        "'timeout_seconds' and 'timeoutSeconds' are one field; give it once",
    ),
    (
        with_tool(metadata={"examples": [{"input": []}]}),
        "$.tools[0].metadata.examples[0].input",
        "expected an object, got array",
    ),
    (with_tool(parameters={"type": "string"}), "$.tools[0].parameters.type", 'expected "object"'),
    (
        with_tool(parameters={"type": "object", "properties": []}),
        "$.tools[0].parameters.properties",
        "expected an object, got array",
    ),
    (
        with_tool(parameters={"type": "object", "properties": {"": {"type": "string"}}}),
        '$.tools[0].parameters.properties[""]',
        "a parameter needs a non-empty name",
    ),
    (
        with_tool(parameters={"type": "object", "properties": {"p": {"type": 4}}}),
        "$.tools[0].parameters.properties.p.type",
        "expected a type name, got integer",
    ),
    (
        with_tool(parameters={"type": "object", "required": "p"}),
        "$.tools[0].parameters.required",
        "expected an array, got string",
    ),
    (
        {**BASE, "categories": [{"name": "no id"}]},
        "$.categories[0].id",
        "missing 'id'",
    ),
    (
        with_tool(**{"x-atip": {"effects": {"destructive": "yes"}}}),
        '$.tools[0]["x-atip"].effects.destructive',
        "",
    ),
    (
        with_tool(**{"x-atip": []}),
        '$.tools[0]["x-atip"]',
        "expected an object, got array",
    ),
]


def test_a_manifest_past_the_nesting_limit_is_refused_naming_where():
    where = "$.tools[0].parameters.properties.p" + ".items" * 59
    for data in (deep(70), json.dumps(deep(70))):  # decoded, and text
        with pytest.raises(DocumentTooLarge) as caught:
            tdp.parse(data, source="m.json")
        assert caught.value.problems[0].location == where
        assert "more than 64 levels" in str(caught.value)
    tdp.parse(deep(50))  # within it


@pytest.mark.parametrize(("data", "location", "message"), BAD)
def test_bad_manifests_are_refused_naming_the_json_path(data, location, message):
    with pytest.raises(tdp.ManifestError) as caught:
        tdp.parse(json.dumps(data), source="m.json")
    problem = caught.value.problems[0]
    assert problem.location == location
    assert message in problem.message
    assert str(caught.value).startswith(f"m.json: {location}: ")
    assert "\n" not in str(caught.value)


def test_wrapped_values_of_the_wrong_kind_are_refused_in_the_proto3_shape():
    data = {
        "protocolVersion": "1.0",
        "scenario": {"name": "s"},
        "tools": [
            {
                "name": "a",
                "parameters": {
                    "type": "object",
                    "properties": {"p": {"type": "string", "default": {"stringValue": 5}}},
                },
            }
        ],
    }
    with pytest.raises(tdp.ManifestError) as caught:
        tdp.parse(data)
    problem = caught.value.problems[0]
    assert problem.location == "$.tools[0].parameters.properties.p.default.stringValue"
    assert problem.message == "expected a string, got integer"
    # in the snake_case shape the same object is a plain default, kept as it is
    snake = {**data, "protocol_version": "1.0"}
    del snake["protocolVersion"]
    kept = tdp.parse(snake).tools[0].parameters["properties"]["p"]["default"]
    assert kept == {"stringValue": 5}


def test_text_that_is_not_json_or_too_large():
    with pytest.raises(MalformedJSON) as caught:
        tdp.parse(b'{"protocol_version": "1.0",', source="m.json")
    assert str(caught.value).startswith("m.json: line 1, column 28: invalid JSON")
    with pytest.raises(DocumentTooLarge, match="the limit is 16,777,216 bytes"):
        tdp.parse(b" " * (16 * 1024 * 1024 + 1))
    with pytest.raises(DocumentTooLarge) as caught:  # text counts in UTF-8, as a file would
        tdp.parse("€" * (6 * 1024 * 1024), source="m.json")
    assert "m.json" in str(caught.value)
    assert "document is 18,874,368 bytes; the limit is 16,777,216 bytes" in str(caught.value)
    with pytest.raises(tdp.ManifestError, match=r"\$.tools: 20001 tools; the limit is 20000"):
        tdp.parse({**BASE, "tools": [{"name": f"t{i}"} for i in range(20_001)]})


def test_a_scenario_name_that_cannot_name_an_atip_tool():
    manifest = tdp.parse({**BASE, "scenario": {"name": "agent manager"}})
    with pytest.raises(tdp.ManifestError, match=r"\$.scenario.name: scenario name 'agent manager'"):
        tdp.to_atip(manifest)


def test_what_options_cannot_say_is_kept():
    data = with_tool(
        parameters={
            "type": "object",
            "properties": {
                "n": {"type": "integer", "default": "five", "description": ""},
                "mode": {"type": "string", "enum": ["a", 1]},
                "maybe": {"type": ["string", "null"], "description": "Nullable"},
                "any": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            },
            "required": ["n", "ghost"],
            "additionalProperties": True,
            "description": "Parameters of a",
        }
    )
    document = tdp.to_atip(tdp.parse(data))
    valid(document)
    command = document.commands["a"]
    options = {o.name: o for o in command.options}
    assert options["n"].required
    assert options["n"].description is UNSET  # an empty description is none
    assert options["n"].extensions["x-tdp"] == {"default": "five"}
    assert (options["mode"].type, options["mode"].enum) == ("string", UNSET)
    assert options["mode"].schema == {"type": "string", "enum": ["a", 1]}
    assert (options["maybe"].type, options["maybe"].description) == ("string", "Nullable")
    assert options["any"].schema == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert command.extensions["x-tdp"]["parameters"] == {
        "description": "Parameters of a",
        "additionalProperties": True,
        "required": ["ghost"],
    }


# -- fetch, against a real HTTP server ------------------------------------------------------


class Site:
    """A real HTTP server on loopback answering what each test puts in `routes`
    (path → status, headers, body, delay), counting requests per path."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, dict[str, str], bytes, float]] = {}
        self.hits: dict[str, int] = {}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits[self.path] = site.hits.get(self.path, 0) + 1
                status, headers, body, delay = site.routes.get(
                    self.path, (404, {"Content-Type": "text/plain"}, b"no", 0.0)
                )
                time.sleep(delay)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)  # a client that gave up on a slow answer

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # polled often: shutdown() waits for the next poll (half a second by default)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def put(
        self, path: str, body: bytes, status: int = 200, delay: float = 0.0, **headers: str
    ) -> None:
        headers = {k.replace("_", "-"): v for k, v in headers.items()}
        self.routes[path] = (status, {"Content-Type": "application/json", **headers}, body, delay)


@pytest.fixture
def site() -> Iterator[Site]:
    tdp.clear_cache()
    served = Site()
    yield served
    served.server.shutdown()
    served.server.server_close()
    tdp.clear_cache()


def test_fetch_reads_both_shapes_from_a_base_url_or_the_manifest_url(site):
    site.put("/api/v1/tools", PROTO3.read_bytes())
    site.put("/snake/manifest.json", SNAKE.read_bytes())
    proto3 = tdp.fetch(site.url)  # a base URL gets /api/v1/tools
    snake = tdp.fetch(f"{site.url}/snake/manifest.json")
    assert dumps(tdp.to_atip(proto3)) == dumps(tdp.to_atip(snake))
    assert tdp.manifest_url("http://h:1/") == "http://h:1/api/v1/tools"
    with pytest.raises(ValueError, match="ftp://h/x: expected an http or https URL"):
        tdp.fetch("ftp://h/x")


def test_fetch_caches_for_max_age_or_sixty_seconds(site):
    site.put("/a/api/v1/tools", SNAKE.read_bytes(), Cache_Control="public, max-age=60")
    site.put("/b/api/v1/tools", SNAKE.read_bytes(), Cache_Control="no-store")
    site.put("/c/api/v1/tools", SNAKE.read_bytes())
    site.put("/d/api/v1/tools", SNAKE.read_bytes(), Cache_Control="max-age=0")
    for path in ("/a", "/b", "/c", "/d"):
        first = tdp.fetch(f"{site.url}{path}/api/v1/tools")
        second = tdp.fetch(f"{site.url}{path}/api/v1/tools")
        assert first == second
    assert site.hits == {
        "/a/api/v1/tools": 1,  # max-age=60: reused
        "/b/api/v1/tools": 2,  # no-store: asked again
        "/c/api/v1/tools": 1,  # nothing said: the spec's 60 seconds
        "/d/api/v1/tools": 2,  # max-age=0: stale at once
    }
    tdp.fetch(f"{site.url}/a/api/v1/tools", refresh=True)
    assert site.hits["/a/api/v1/tools"] == 2


def test_fetch_failures_are_precise(site):
    body = json.dumps({"error": "unavailable", "message": "registry.json is corrupt"}).encode()
    site.put("/down/api/v1/tools", body, status=503)
    site.put("/html/api/v1/tools", b"<html>hello</html>", Content_Type="text/html")
    site.put("/slow/api/v1/tools", SNAKE.read_bytes(), delay=3.0)
    site.put("/v2/api/v1/tools", b'{"protocol_version": "2.0", "scenario": {"name": "s"}}')
    with pytest.raises(tdp.ManifestStatusError) as caught:
        tdp.fetch(f"{site.url}/missing/api/v1/tools")
    assert caught.value.status == 404
    assert str(caught.value) == f"{site.url}/missing/api/v1/tools: HTTP 404"
    with pytest.raises(tdp.ManifestStatusError) as caught:
        tdp.fetch(f"{site.url}/down/api/v1/tools")
    assert caught.value.status == 503
    assert str(caught.value).endswith("HTTP 503: registry.json is corrupt")
    with pytest.raises(tdp.ManifestError) as caught:
        tdp.fetch(f"{site.url}/html/api/v1/tools")
    assert str(caught.value) == (
        f"{site.url}/html/api/v1/tools: line 1, column 1: not JSON (Content-Type: text/html): "
        "invalid JSON: invalid character"
    )
    with pytest.raises(tdp.UnsupportedProtocol):
        tdp.fetch(f"{site.url}/v2/api/v1/tools")
    started = time.monotonic()
    with pytest.raises(tdp.NetworkError, match="slow/api/v1/tools"):
        tdp.fetch(f"{site.url}/slow/api/v1/tools", timeout=0.5)
    assert time.monotonic() - started < 2.5
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(tdp.NetworkError, match=f"127.0.0.1:{port}/api/v1/tools"):
        tdp.fetch(f"http://127.0.0.1:{port}/")


# -- atip import tdp ----------------------------------------------------------------------------


def test_import_a_file_in_either_shape_or_stdin():
    snake = atip("import", "tdp", str(SNAKE), "--plain")
    proto3 = atip("import", "tdp", str(PROTO3), "--plain")
    piped = atip("import", "tdp", "-", "--plain", input=PROTO3.read_bytes())
    assert snake.exit_code == proto3.exit_code == piped.exit_code == 0, snake.output
    assert snake.stdout == proto3.stdout == piped.stdout
    assert snake.stdout.encode() == dumps(tdp.to_atip(tdp.parse(SNAKE.read_bytes()))) + b"\n"
    envelope = envelope_of(atip("import", "tdp", str(SNAKE), "--json"))
    assert envelope["result"]["name"] == "agent-manager"


def test_import_writes_into_a_directory_or_a_file(tmp_path):
    out = tmp_path / "out"
    result = envelope_of(atip("import", "tdp", str(PROTO3), "--out", str(out), "--json"))
    path = out / "agent-manager.json"
    assert result["result"] == {"written": str(path), "tool": "agent-manager", "commands": 4}
    valid(load(path))
    again = atip("import", "tdp", str(SNAKE), "--out", str(tmp_path / "one.json"), "--text")
    assert again.exit_code == 0
    assert (tmp_path / "one.json").read_bytes() == path.read_bytes()
    assert [p.name for p in out.iterdir()] == ["agent-manager.json"]  # no temporary left


def error_of(*args: str, input: bytes | None = None) -> dict[str, Any]:
    result = atip("import", "tdp", *args, "--json", input=input)
    envelope = envelope_of(result)
    assert result.exit_code == envelope["error"]["exit_code"]
    return envelope["error"]


def test_import_failures_and_their_exit_statuses(tmp_path):
    missing = error_of(str(tmp_path / "none.json"))
    assert (missing["exit_code"], missing["message"]) == (
        10,
        f"{tmp_path / 'none.json'}: no such file",
    )
    assert error_of(str(tmp_path))["exit_code"] == 2  # a directory
    bad = error_of("-", input=b"{nope")
    assert bad["exit_code"] == 65
    assert bad["message"].startswith("<stdin>: line 1, column 2: invalid JSON")
    v2 = error_of("-", input=b'{"protocol_version": "2.1", "scenario": {"name": "s"}}')
    assert (v2["exit_code"], v2["details"]["problems"][0]["location"]) == (65, "$.protocol_version")
    wrong = error_of("-", input=json.dumps(with_tool(metadata={"idempotent": 1})).encode())
    assert wrong["message"] == (
        "<stdin>: $.tools[0].metadata.idempotent: expected true or false, got integer"
    )
    hidden = json.dumps({**BASE, "scenario": {"name": ".hidden"}}).encode()
    refused = error_of("-", "--out", str(tmp_path / "dir"), input=hidden)
    assert (refused["exit_code"], refused["code"]) == (2, "E1002")
    assert not (tmp_path / "dir").exists() or not list((tmp_path / "dir").iterdir())
    assert error_of("ftp://example.invalid/x")["exit_code"] == 2
    newer = atip(
        "import", "tdp", "-", "--json", input=json.dumps({**BASE, "protocol_version": "1.2"})
    )
    assert newer.exit_code == 0
    assert "protocol version 1.2 is newer than 1.0" in envelope_of(newer)["meta"]["warnings"][0]
