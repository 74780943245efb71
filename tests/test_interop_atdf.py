"""ATDF in and out: every export valid under the ATDF schemas (checked again here with the
reference `jsonschema`), enhanced export → import gives the ATIP document back, hand-written
ATDF documents import into valid ATIP, bad input fails with its JSON path and exit code
through the real `atip` CLI, and outcomes of a real executor running real commands render
as valid enriched responses."""

from __future__ import annotations

import copy
import datetime as dt
import errno
import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import atipkit
from atipkit.bridge import Compiler, compile_tools, parse_tool_calls
from atipkit.bridge.safety import suffix
from atipkit.cli._resolve import file_error
from atipkit.execute import Executor
from atipkit.interop.atdf import (
    AtdfError,
    ToolNameError,
    check_descriptor,
    enriched_response,
    export_atdf,
    flavour,
    import_atdf,
    read_atdf,
)
from atipkit.interop.atdf.schemas import SCHEMA_FILES, load_schema, schema_text
from atipkit.model import UNSET, effective_effects, get_command, iter_commands, load, to_dict
from atipkit.policy import Policy
from atipkit.validation import validate
from tests.helpers import EXAMPLES, FIXTURES, atip, envelope_of, minimal, read_json

TOOLS = sorted((EXAMPLES / "tools").glob("*.json"))
HANDWRITTEN = FIXTURES / "atdf" / "descriptors"
SPEC = Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "atdf"


def reference(name: str) -> jsonschema.Draft7Validator:
    """The reference implementation, with formats (date-time) checked."""
    return jsonschema.Draft7Validator(load_schema(name), format_checker=jsonschema.FormatChecker())


def assert_atip_valid(tool: atipkit.Tool) -> None:
    report = validate(to_dict(tool))
    assert report.ok, [p.format() for p in report.errors]


# -- the schema files ----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCHEMA_FILES))
def test_shipped_schemas_are_draft_07_and_the_specifications_own(name):
    jsonschema.Draft7Validator.check_schema(load_schema(name))
    if not SPEC.is_dir():
        pytest.skip("the specification folder is not beside the repository")
    assert schema_text(name) == (SPEC / SCHEMA_FILES[name]).read_text("utf-8")


# -- export ----------------------------------------------------------------------------------


@pytest.mark.parametrize("enhanced", [False, True], ids=["basic", "enhanced"])
@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_every_export_validates_and_is_named_as_compile_names(path, enhanced):
    tool = load(path)
    descriptors = export_atdf(tool, enhanced=enhanced)
    validator = reference("enhanced" if enhanced else "basic")
    for descriptor in descriptors:
        validator.validate(descriptor)
        assert "id" not in descriptor
        assert flavour(descriptor) == ("enhanced" if enhanced else "basic")
        assert check_descriptor(descriptor) == []
    compiled = Compiler(tool).compile("openai")
    assert [d["tool_id"] for d in descriptors] == [t["function"]["name"] for t in compiled.tools]


def test_several_tools_export_into_one_list_with_unique_names():
    tools = [load(p) for p in TOOLS]
    descriptors = export_atdf(tools, enhanced=True)
    names = [d["tool_id"] for d in descriptors]
    assert len(names) == len(set(names)) == sum(len(export_atdf(t)) for t in tools)
    assert {d["x-atip"]["tool"]["name"] for d in descriptors} == {t.name for t in tools}


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_basic_descriptors_carry_safety_in_their_text(path):
    """Basic ATDF has no field for effects: the suffix of SPEC-NOTES 17 ends the
    description, and when_to_use says the same in words."""
    tool = load(path)
    table = Compiler(tool).compile("mcp").table
    for descriptor in export_atdf(tool):
        effects = effective_effects(tool, table[descriptor["tool_id"]])
        flags = suffix(effects)
        assert descriptor["description"].endswith(flags)
        words = descriptor["when_to_use"]
        assert ("destroys data" in words) == (effects.destructive is True)
        assert ("cannot be undone" in words) == (effects.reversible is False)
        assert ("do not retry" in words) == (effects.idempotent is False)
        assert ("may cost money" in words) == bool(effects.cost and effects.cost.billable)
        codes = {f["code"] for f in descriptor["how_to_use"]["outputs"]["failure"]}
        assert ("CONFIRMATION_REQUIRED" in codes) == (
            effects.destructive is True or bool(effects.cost and effects.cost.billable)
        )


def test_unknown_effects_are_said_to_be_unknown():
    doc = minimal()
    del doc["commands"]["run"]["effects"]
    [descriptor] = export_atdf(atipkit.from_dict(doc))
    assert "not stated" in descriptor["when_to_use"]
    assert "[" not in descriptor["description"]  # no flag is made up


def test_basic_inputs_say_in_words_what_basic_atdf_has_no_field_for():
    kubectl = load(EXAMPLES / "tools" / "kubectl.json")
    by_id = {d["tool_id"]: d for d in export_atdf(kubectl)}
    inputs = {i["name"]: i for i in by_id["kubectl_apply"]["how_to_use"]["inputs"]}
    assert inputs["filename"]["description"].endswith("Required")
    assert "(file path)" in inputs["filename"]["description"]
    assert '"client"' in inputs["dry-run"]["description"]  # the allowed values
    assert set(inputs["filename"]) == {"name", "type", "description"}


def test_enhanced_descriptors_state_types_requirements_and_prerequisites():
    gh = load(EXAMPLES / "tools" / "gh.json")
    by_id = {d["tool_id"]: d for d in export_atdf(gh, enhanced=True)}
    create = by_id["gh_issue_create"]
    assert create["schema_version"] == "2.0.0"
    assert create["metadata"]["version"] == gh.version
    inputs = {i["name"]: i for i in create["how_to_use"]["inputs"]}
    assert inputs["title"]["required"] is True
    assert inputs["body"]["required"] is False
    scopes = [s for m in gh.authentication.methods for s in (m.scopes or [])]
    assert create["prerequisites"]["permissions"] == scopes
    assert any("gh auth status" in c for c in create["prerequisites"]["conditions"])
    state = {i["name"]: i for i in by_id["gh_pr_list"]["how_to_use"]["inputs"]}["state"]
    assert state["schema"]["enum"] == ["open", "closed", "merged", "all"]
    assert state["schema"]["default"] == "open"
    terraform = load(EXAMPLES / "tools" / "terraform.json")
    apply = {d["tool_id"]: d for d in export_atdf(terraform, enhanced=True)}["terraform_apply"]
    plan = {i["name"]: i for i in apply["how_to_use"]["inputs"]}["plan"]
    assert plan["schema"]["format"] == "file-path"  # RFC 0.6 §3.7


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_enhanced_examples_are_calls_that_run_the_example_command(path):
    """Each example's input_values, sent as a tool call, build a command line holding
    the example's values; the dry run accepts them. Every example of the example tools
    reads back as a call, so none is missing."""
    tool = load(path)
    compiled = compile_tools(tool, "mcp")
    executor = Executor(tool, policy=Policy(allow_destructive=True, allow_billable=True))
    seen = 0
    for descriptor in export_atdf(tool, enhanced=True):
        for example in descriptor.get("examples", []):
            call_ = {"name": descriptor["tool_id"], "arguments": example["input_values"]}
            [call] = parse_tool_calls("mcp", call_, compiled)
            outcome = executor.execute(call, dry_run=True)
            assert not outcome.is_error, outcome.text
            line = example["goal"].split("`")[1]
            argv = outcome.invocation.argv
            for value in (str(v) for vs in example["input_values"].values() for v in _list(vs)):
                assert any(w.endswith(value) for w in shlex.split(line)), (value, line)
                assert any(w.endswith(value) for w in argv), (value, argv)
            seen += 1
    assert seen == sum(len(c.examples) for _, c in iter_commands(tool)) > 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_two_tools_of_one_name_cannot_be_exported_together():
    gh = load(EXAMPLES / "tools" / "gh.json")
    with pytest.raises(ValueError, match="two tools are named 'gh'"):
        export_atdf([gh, atipkit.from_dict(to_dict(gh))])


# -- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", TOOLS, ids=lambda p: p.stem)
def test_enhanced_export_then_import_gives_the_tool_back(path):
    tool = load(path)
    text = json.dumps(export_atdf(tool, enhanced=True))
    again = import_atdf(json.loads(text))
    assert_atip_valid(again)
    assert to_dict(again) == to_dict(tool)
    for words, command in iter_commands(tool):
        assert effective_effects(again, words) == effective_effects(tool, words)
        assert get_command(again, words).options == command.options


def test_the_round_trip_keeps_root_commands_groups_and_extensions():
    """What the example tools do not have: a root command, a group with parameters of
    its own and effects its commands inherit, three levels, positional patterns,
    environment variables, extensions. Only the hidden command is left out, as
    `atip compile` leaves it out, and a cache's internal stamp (SPEC-NOTES 8)."""
    doc = minimal(
        globalOptions=[
            {"name": "config", "flags": ["-c", "--config"], "type": "file", "description": "c"}
        ],
        effects={"network": True},
        **{"x-vendor": {"keep": [1, 2]}, "_cached_at": "2025-01-01T00:00:00Z"},
    )
    doc["commands"][""] = {
        "description": "Run the default",
        "arguments": [
            {"name": "target", "type": "string", "pattern": "^[a-z]+$", "required": False}
        ],
        "effects": {"idempotent": True},
    }
    doc["commands"]["db"] = {
        "description": "Databases",
        "options": [{"name": "url", "flags": ["--url"], "type": "url", "envVar": "DB_URL"}],
        "effects": {"destructive": True},
        "x-group-note": "kept",
        "commands": {
            "table": {
                "description": "Tables",
                "commands": {
                    "drop": {
                        "description": "Drop a table",
                        "arguments": [{"name": "names", "type": "string", "variadic": True}],
                        "options": [
                            {"name": "a", "flags": ["-a"], "type": "boolean", "exclusive": ["b"]},
                            {"name": "b", "flags": ["-b"], "type": "boolean"},
                        ],
                        "effects": {"reversible": False, "cost": {"billable": True}},
                        "x-owner": {"team": "data"},
                    },
                    "peek": {"description": "Peek", "hidden": True},
                },
            }
        },
    }
    tool = atipkit.from_dict(doc)
    assert_atip_valid(tool)
    again = import_atdf(export_atdf(tool, enhanced=True))
    expected = copy.deepcopy(to_dict(tool))
    del expected["commands"]["db"]["commands"]["table"]["commands"]["peek"]
    del expected["_cached_at"]
    assert to_dict(again) == expected
    assert effective_effects(again, "db table drop") == effective_effects(tool, "db table drop")


def test_basic_export_then_import_invents_no_effects():
    kubectl = load(EXAMPLES / "tools" / "kubectl.json")
    again = import_atdf(export_atdf(kubectl), name="kubectl")
    assert_atip_valid(again)
    assert list(again.commands) == [t.name for t in Compiler(kubectl).flat]
    for _, command in iter_commands(again):
        assert command.effects is UNSET
        assert all(o.flags == [f"--{o.name}"] for o in command.options)
    delete = again.commands["kubectl_delete"]
    assert delete.description.endswith("[⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE]")  # said, in words


def test_atdf_to_atip_to_atdf_keeps_what_atip_cannot_say():
    original = read_json(HANDWRITTEN / "booking.enhanced.json")
    tool = read_atdf(HANDWRITTEN / "booking.enhanced.json")
    [again] = export_atdf(tool, enhanced=True)
    reference("enhanced").validate(again)
    for key in ("when_to_use", "metadata", "localization", "prerequisites", "feedback"):
        assert again[key] == original[key], key
    assert again["examples"] == original["examples"]
    assert again["how_to_use"]["outputs"] == original["how_to_use"]["outputs"]
    types = {i["name"]: i["type"] for i in again["how_to_use"]["inputs"]}
    assert types == {i["name"]: i["type"] for i in original["how_to_use"]["inputs"]}
    guest = {i["name"]: i for i in again["how_to_use"]["inputs"]}["guest"]
    assert guest["schema"]["required"] == ["name"]
    [basic] = export_atdf(tool)
    reference("basic").validate(basic)
    assert basic["when_to_use"] == original["when_to_use"]


# -- import of hand-written documents --------------------------------------------------------


def _all_descriptors() -> list[Any]:
    out: list[Any] = []
    for path in sorted(HANDWRITTEN.glob("*.json")):
        data = read_json(path)
        out += data if isinstance(data, list) else data.get("tools", [data])
    return out


def _mutations(descriptor: dict[str, Any]) -> list[Any]:
    both = {**descriptor, "id": "x", "tool_id": "x"}
    bare = {k: v for k, v in descriptor.items() if k not in ("id", "tool_id")}
    typed = copy.deepcopy(descriptor)
    typed["how_to_use"]["outputs"]["failure"] = [{"code": ""}]
    extra = {**descriptor, "x-vendor": 1}
    return [descriptor, both, bare, typed, extra, {**descriptor, "when_to_use": None}]


@pytest.mark.parametrize(
    "descriptor",
    [m for d in _all_descriptors() for m in _mutations(d)],
    ids=lambda d: f"{d.get('tool_id', d.get('id', '?'))}",
)
def test_our_check_agrees_with_the_reference_validator(descriptor):
    expected = reference(flavour(descriptor)).is_valid(descriptor)
    assert (check_descriptor(descriptor) == []) == expected


def test_import_a_basic_descriptor():
    tool = read_atdf(HANDWRITTEN / "weather.atdf.json")
    assert_atip_valid(tool)
    assert (tool.name, tool.version) == ("weather", "unknown")
    command = tool.commands["get_weather"]
    assert command.description == "Current weather for a city"
    assert [(o.name, o.flags, o.type, o.required) for o in command.options] == [
        ("location", ["--location"], "string", False),
        ("units", ["--units"], "string", False),
    ]
    assert command.effects is UNSET  # ATDF states none; none is made up
    kept = command.extensions["x-atdf"]
    assert kept["when_to_use"].startswith("When the user asks")
    assert [f["code"] for f in kept["outputs"]["failure"]] == [
        "LOCATION_NOT_FOUND",
        "SERVICE_UNAVAILABLE",
    ]


def test_import_an_enhanced_descriptor_with_id():
    tool = read_atdf(HANDWRITTEN / "booking.enhanced.json")
    assert_atip_valid(tool)
    assert (tool.name, tool.version) == ("booking", "1.4.0")
    options = {o.name: o for o in tool.commands["book_hotel"].options}
    assert options["hotel_id"].required
    assert options["nights"].required
    assert (options["room"].type, options["room"].enum) == ("enum", ["single", "double", "suite"])
    assert options["room"].default == "double"
    assert options["voucher"].type == "file"
    assert options["nights"].extensions["x-atdf"]["schema"]["minimum"] == 1
    assert options["code"].schema["pattern"] == "^[A-Z]{4}[0-9]{2}$"
    assert (options["guest"].type, options["guest"].extensions["x-atdf"]["type"]) == (
        "string",
        "object",
    )
    kept = tool.commands["book_hotel"].extensions["x-atdf"]
    assert kept["localization"]["es"]["description"] == "Reserva una habitación de hotel"
    assert kept["metadata"]["author"] == "Travel Team"


def test_a_list_and_a_tools_object_import_alike():
    listed = read_atdf(HANDWRITTEN / "toolbox.list.json")
    wrapped = read_atdf(HANDWRITTEN / "toolbox.tools.json")
    assert_atip_valid(listed)
    assert to_dict(listed) == to_dict(wrapped)
    assert list(listed.commands) == ["search_hotels", "cancel_booking"]  # tool_id, then id
    [_city, price] = listed.commands["search_hotels"].options
    assert (price.name, price.flags, price.type) == ("max price", ["--max-price"], "number")


def test_an_imported_tool_compiles_and_runs(tmp_path):
    """The import is an ATIP tool like any other: compiled for a model, a call mapped
    back, run by the executor as `weather get_weather --location Madrid`."""
    script = _script(tmp_path, "weather", 'echo "sunny: $*"')
    tool = read_atdf(HANDWRITTEN / "weather.atdf.json")
    compiled = compile_tools(tool, "anthropic")
    use = {"type": "tool_use", "id": "t1", "name": "weather_get_weather"}
    response = {"content": [{**use, "input": {"location": "Madrid"}}]}
    [call] = parse_tool_calls("anthropic", response, compiled)
    outcome = Executor(tool, executables={"weather": str(script)}).execute(call)
    assert outcome.text == "sunny: get_weather --location Madrid\n"


# -- bad input, through the real CLI ----------------------------------------------------------

BASIC = read_json(HANDWRITTEN / "weather.atdf.json")


def _fails(tmp_path: Path, document: Any, code: int, *args: str, raw: bytes | None = None) -> str:
    path = tmp_path / "bad.json"
    path.write_bytes(raw if raw is not None else json.dumps(document).encode())
    result = atip("import", "atdf", str(path), *args)
    envelope = envelope_of(result)
    assert result.exit_code == code, result.output
    assert envelope["ok"] is False
    assert envelope["error"]["exit_code"] == code
    message: str = envelope["error"]["message"]
    assert "\n" not in message
    assert "Traceback" not in result.output
    return message


def with_(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASIC)
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not None}


@pytest.mark.parametrize(
    ("document", "where", "what"),
    [
        (with_(id="weather"), "$", "both 'tool_id' and 'id'"),
        (with_(tool_id=None), "$", "missing required field 'tool_id' (or 'id')"),
        (with_(when_to_use=None), "$", "missing required field 'when_to_use'"),
        (with_(description=""), "$.description", "non-empty string"),
        (with_(how_to_use={"inputs": {}, "outputs": {}}), "$.how_to_use.inputs", "expected array"),
        ([BASIC, with_(description=7)], "$[1].description", "expected string, got integer"),
        (
            {"tools": [with_(how_to_use={"inputs": [{"name": "x", "type": 3}], "outputs": {}})]},
            "$.tools[0].how_to_use.inputs[0].type",
            "expected string, got integer",
        ),
        (with_(vendor="acme"), "$.vendor", "unknown field 'vendor'"),
        (with_(schema_version="3.0.0"), "$.schema_version", "neither 1.x"),
        ([], "$", "no descriptors"),
        ("get_weather", "$", "got string"),
        ({"tools": {}}, "$.tools", "expected an array"),
        ([BASIC, BASIC], "$[1]", "names two commands"),
    ],
)
def test_invalid_atdf_is_exit_65_with_its_json_path(tmp_path, document, where, what):
    message = _fails(tmp_path, document, 65, "--name", "t")
    assert f"bad.json: {where}: " in message
    assert what in message


def test_duplicate_input_names_are_refused(tmp_path):
    inputs = [{"name": "a", "type": "string"}, {"name": "a", "type": "number"}]
    doc = with_(how_to_use={"inputs": inputs, "outputs": BASIC["how_to_use"]["outputs"]})
    message = _fails(tmp_path, doc, 65)
    assert "$.how_to_use.inputs[1].name: input 'a' is given twice" in message


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        (b"{nope", "line 1, column 2: invalid JSON"),
        (b"", "empty document"),
        (b"[" * 100_000 + b"]" * 100_000, "line 1, column 65: JSON is nested too deeply"),
        (b'{"tool_id": "\xff"}', "not UTF-8"),
    ],
    ids=["syntax", "empty", "deep", "utf-8"],
)
def test_what_is_not_json_is_exit_65(tmp_path, raw, what):
    assert what in _fails(tmp_path, None, 65, "--name", "t", raw=raw)


def test_a_huge_document_is_refused_before_it_is_read(tmp_path):
    raw = b'{"tool_id": "' + b"x" * (17 * 1024 * 1024) + b'"}'
    message = _fails(tmp_path, None, 65, "--name", "t", raw=raw)
    assert "the limit is 16,777,216 bytes" in message


def test_nesting_within_the_limit_is_converted_and_past_it_refused(tmp_path):
    def document(levels: int) -> dict[str, Any]:
        nested: dict[str, Any] = {}
        for _ in range(levels):
            nested = {"a": nested}
        inputs = [{"name": "x", "type": "string", "schema": {"properties": {"p": nested}}}]
        return with_(
            schema_version="2.0.0",
            how_to_use={"inputs": inputs, "outputs": BASIC["how_to_use"]["outputs"]},
        )

    path = tmp_path / "deep.json"
    path.write_text(json.dumps(document(40)))  # depth 47 in ATDF, 55 once in ATIP
    assert_atip_valid(read_atdf(path))
    message = _fails(tmp_path, document(60), 65, "--name", "t")  # depth 67
    where = "$.how_to_use.inputs[0].schema.properties.p" + ".a" * 58
    assert message == f"{tmp_path / 'bad.json'}: {where}: " + (
        "JSON is nested too deeply: more than 64 levels of arrays and objects"
    )


def test_usage_and_not_found(tmp_path):
    result = atip("import", "atdf", str(tmp_path / "missing.json"))
    assert result.exit_code == 10, result.output
    result = atip("import", "atdf", "-", input=json.dumps(BASIC))
    assert result.exit_code == 2
    assert "--name" in envelope_of(result)["error"]["suggestion"]["fix"]
    path = tmp_path / "w.json"
    path.write_text(json.dumps(BASIC))
    result = atip("import", "atdf", str(path), "--name", "two words")
    assert result.exit_code == 2, result.output
    result = atip("export", "atdf", str(tmp_path / "no-such-tool-here"))
    assert result.exit_code == 10, result.output
    bad = tmp_path / "bad-atip.json"
    bad.write_text(json.dumps(minimal(name=7)))
    assert atip("export", "atdf", str(bad)).exit_code == 65
    gh = str(EXAMPLES / "tools" / "gh.json")
    assert atip("export", "atdf", gh, gh).exit_code == 2


def test_a_file_that_cannot_be_read_fails_as_every_input_file_does(tmp_path):
    """`atip import atdf` and `atip import tdp` read FILE alike (`cli._resolve.file_error`):
    no such file 10, a directory 2, no permission 30 (made by hand: the tests may run as
    root, who may read anything)."""
    folder = atip("import", "atdf", str(tmp_path))
    error = envelope_of(folder)["error"]
    reason = os.strerror(errno.EISDIR)
    assert (folder.exit_code, error["message"]) == (2, f"{tmp_path}: cannot read: {reason}")
    assert error["details"] == {"file": str(tmp_path)}
    assert envelope_of(atip("import", "tdp", str(tmp_path)))["error"] == error
    denied = file_error(PermissionError(13, "Permission denied"), "t.atdf.json", "Name one.")
    assert (denied.exit_code, denied.message) == (30, "t.atdf.json: cannot read: Permission denied")
    missing = file_error(FileNotFoundError(2, "No such file"), "-", "Name one.")
    assert (missing.exit_code, missing.message) == (10, "<stdin>: no such file")


def test_an_x_atdf_that_atdf_refuses_fails_the_export_with_its_path(tmp_path):
    """What an import kept under x-atdf goes back as it is; edited into something the
    ATDF schema refuses, the export fails (65) rather than write an invalid descriptor."""
    doc = minimal()
    doc["commands"]["run"]["x-atdf"] = {"outputs": {"success": 5, "failure": []}}
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    result = atip("export", "atdf", str(path))
    assert result.exit_code == 65, result.output
    error = envelope_of(result)["error"]
    assert error["message"].endswith("$.how_to_use.outputs.success: expected string, got integer")
    assert "x-atdf" in error["suggestion"]["fix"]


def test_tampered_x_atip_is_refused_with_its_path(tmp_path):
    gh = load(EXAMPLES / "tools" / "gh.json")
    descriptors = export_atdf(gh, enhanced=True)
    descriptors[1]["x-atip"]["parents"] = []
    message = _fails(tmp_path, descriptors, 65)
    assert '$[1]["x-atip"].parents: 0 parents for a command 2 deep' in message
    kubectl = load(EXAMPLES / "tools" / "kubectl.json")
    mixed = export_atdf([gh, kubectl], enhanced=True)
    message = _fails(tmp_path, mixed, 65)
    assert "of tool 'kubectl', but $[0] is of 'gh'; import one tool at a time" in message
    twice = export_atdf(gh, enhanced=True)
    twice.append(twice[0])
    assert "described twice" in _fails(tmp_path, twice, 65)
    edited = export_atdf(gh, enhanced=True)
    edited[2]["x-atip"]["command"]["options"][0]["flags"] = ["merge"]
    message = _fails(tmp_path, edited, 65)
    assert "invalid at $.commands.pr.commands.merge.options[0].flags: expected" in message


def test_a_failed_import_leaves_out_alone(tmp_path):
    out = tmp_path / "tool.json"
    out.write_text("precious\n")
    (tmp_path / "bad.json").write_text("{}")
    result = atip("import", "atdf", str(tmp_path / "bad.json"), "--out", str(out))
    assert result.exit_code == 65
    assert out.read_text() == "precious\n"


def test_names_of_the_library():
    with pytest.raises(ToolNameError):
        import_atdf(BASIC)  # nothing names the tool
    with pytest.raises(ToolNameError):
        import_atdf(BASIC, name="a/b")
    with pytest.raises(AtdfError) as info:
        import_atdf({"tool_id": "x"}, name="t")
    assert info.value.problems[0].location == "$"


# -- the CLI, end to end ------------------------------------------------------------------------


def test_cli_round_trip_through_files(tmp_path):
    atdf, back = tmp_path / "tf.atdf.json", tmp_path / "tf.json"
    source = EXAMPLES / "tools" / "terraform.json"
    result = atip("export", "atdf", str(source), "--enhanced", "--out", str(atdf))
    assert result.exit_code == 0, result.output
    assert envelope_of(result)["result"] == {
        "written": str(atdf),
        "descriptors": 5,
        "flavour": "enhanced",
    }
    result = atip("import", "atdf", str(atdf), "--out", str(back))
    assert result.exit_code == 0, result.output
    assert envelope_of(result)["result"]["written"] == str(back)
    assert to_dict(atipkit.load(back)) == to_dict(load(source))


def test_cli_export_is_the_document_and_import_reads_stdin():
    gh, kubectl = str(EXAMPLES / "tools" / "gh.json"), str(EXAMPLES / "tools" / "kubectl.json")
    result = atip("export", "atdf", gh, kubectl, "--plain")
    assert result.exit_code == 0, result.output
    descriptors = json.loads(result.stdout)
    assert [d["tool_id"] for d in descriptors] == [
        t.name for t in Compiler([load(Path(gh)), load(Path(kubectl))]).flat
    ]
    result = atip("import", "atdf", "-", "--name", "both", input=result.stdout)
    assert result.exit_code == 0, result.output
    envelope = envelope_of(result)
    tool = atipkit.from_dict(envelope["result"])
    assert_atip_valid(tool)
    assert len(tool.commands) == len(descriptors)
    assert any("state no effects" in w for w in envelope["meta"]["warnings"])


# -- enriched responses from real runs -------------------------------------------------------


def _script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


KUBECTL_SCRIPT = """case "$1" in
  get) echo "NAME READY"; echo "web 1/1";;
  exec) echo "error: pod $2 not found" >&2; exit 3;;
  *) echo "ok $*";;
esac"""

SVC = {
    "atip": {"version": "0.6"},
    "name": "svc",
    "version": "1.0",
    "description": "A service",
    "commands": {
        "wait": {
            "description": "Wait for it",
            "effects": {"network": False, "duration": {"timeout": "300ms"}},
        },
        "login": {"description": "Log in", "effects": {"interactive": {"stdin": "required"}}},
        "flood": {"description": "Say a lot", "effects": {"network": False}},
    },
}


def _call(compiled: Any, name: str, arguments: dict[str, Any]) -> Any:
    [call] = parse_tool_calls("mcp", {"name": name, "arguments": arguments}, compiled)
    return call


@pytest.fixture
def kubectl(tmp_path):
    tool = load(EXAMPLES / "tools" / "kubectl.json")
    return tool, str(_script(tmp_path, "kubectl", KUBECTL_SCRIPT)), compile_tools(tool, "mcp")


def check_response(response: dict[str, Any], status: str) -> dict[str, Any]:
    reference("enriched-response").validate(response)
    assert response["status"] == status
    stamp = dt.datetime.fromisoformat(response["meta"]["timestamp"].replace("Z", "+00:00"))
    assert abs((dt.datetime.now(dt.UTC) - stamp).total_seconds()) < 60
    return response["data"]


def test_success_is_a_success_response(kubectl):
    tool, script, compiled = kubectl
    outcome = Executor(tool, executables={"kubectl": script}).execute(
        _call(compiled, "kubectl_get", {"resource": ["pods"]})
    )
    data = check_response(enriched_response(outcome), "success")
    assert data["output"] == outcome.text == "NAME READY\nweb 1/1\n"
    assert data["exit_code"] == 0
    assert data["argv"] == [script, "get", "pods"]


def _codes_announced(tool: atipkit.Tool, name: str) -> set[str]:
    descriptor = next(d for d in export_atdf(tool) if d["tool_id"] == name)
    return {f["code"] for f in descriptor["how_to_use"]["outputs"]["failure"]}


def test_failures_are_error_responses(kubectl, tmp_path):
    tool, script, compiled = kubectl
    run = Executor(tool, executables={"kubectl": script})
    cases = {
        "NON_ZERO_EXIT": run.execute(
            _call(compiled, "kubectl_exec", {"pod": "web", "command": ["ls"]})
        ),
        "CONFIRMATION_REQUIRED": run.execute(
            _call(compiled, "kubectl_delete", {"resource": "pod/web"})
        ),
        "INVALID_ARGUMENTS": Executor(
            tool, policy=Policy(allow_destructive=True), executables={"kubectl": script}
        ).execute(_call(compiled, "kubectl_delete", {"resource": "pod/web", "output": "xml"})),
        "DENIED_BY_POLICY": Executor(tool, policy=Policy(allow_network=False)).execute(
            _call(compiled, "kubectl_get", {"resource": ["pods"]})
        ),
        "NOT_STARTED": Executor(
            tool, executables={"kubectl": str(tmp_path / "not-installed")}
        ).execute(_call(compiled, "kubectl_get", {"resource": ["pods"]})),
        "INVALID_CALL": run.execute(_call(compiled, "kubectl_nope", {})),
        "UNKNOWN_TOOL": Executor(load(EXAMPLES / "tools" / "gh.json")).execute(
            _call(compiled, "kubectl_get", {"resource": ["pods"]})
        ),
    }
    for code, outcome in cases.items():
        assert outcome.is_error, code
        data = check_response(enriched_response(outcome), "error")
        assert data["code"] == code, (code, data)
        details = data["details"]
        assert details["solution"]
        assert details["expected"]["conditions"]
        if code not in ("DENIED_BY_POLICY", "INVALID_CALL", "UNKNOWN_TOOL"):
            # what depends on the command (not on the policy or the caller) is announced
            assert code in _codes_announced(tool, outcome.call.name), code
    invalid = check_response(enriched_response(cases["INVALID_ARGUMENTS"]), "error")
    assert invalid["details"]["field"] == "output"
    assert invalid["details"]["received"] == {"output": "xml"}
    assert invalid["details"]["expected"]["examples"]["valid"] == {"output": "json"}
    assert invalid["details"]["validation_results"] == {"output": False}
    failed = check_response(enriched_response(cases["NON_ZERO_EXIT"]), "error")
    assert failed["details"]["received"]["exit_code"] == 3
    assert "pod web not found" in failed["details"]["received"]["output"]
    denied = check_response(enriched_response(cases["DENIED_BY_POLICY"]), "error")
    assert denied["details"]["validation_results"] == dict.fromkeys(
        cases["DENIED_BY_POLICY"].decision.reasons, False
    )


@pytest.mark.parametrize(
    ("arguments", "wrong"),
    [
        ({}, {"resource": None}),
        ({"resource": "pod/web", "bogus": True}, {"bogus": True}),
        ({"bogus": 1, "output": "xml"}, {"bogus": 1, "resource": None, "output": "xml"}),
    ],
    ids=["missing", "unknown", "all-at-once"],
)
def test_missing_and_unknown_parameters_get_the_atdf_error_as_bad_values_do(
    kubectl, arguments, wrong
):
    """What the model reads is the ATDF error naming each parameter, never plain text,
    and the enriched response says INVALID_ARGUMENTS; nothing runs."""
    tool, script, compiled = kubectl
    allowed = Executor(tool, policy=Policy(allow_destructive=True), executables={"kubectl": script})
    outcome = allowed.execute(_call(compiled, "kubectl_delete", arguments))
    assert (outcome.stopped, outcome.result) == ("invalid-arguments", None)
    told = json.loads(outcome.text)
    reference("error").validate(told)
    named = {e["parameter_name"]: e["context"]["received"] for e in told["errors"]}
    assert named == wrong
    data = check_response(enriched_response(outcome), "error")
    assert data["code"] == "INVALID_ARGUMENTS"
    assert data["details"]["received"] == wrong
    assert data["details"]["validation_results"] == dict.fromkeys(wrong, False)


def test_timeouts_refused_input_and_floods_are_error_responses(tmp_path):
    tool = atipkit.from_dict(SVC)
    script = _script(
        tmp_path,
        "svc",
        'case "$1" in wait) sleep 5;; flood) head -c 5000000 /dev/zero;; *) cat;; esac',
    )
    compiled = compile_tools(tool, "mcp")
    run = Executor(tool, executables={"svc": str(script)})
    expected = {
        "svc_wait": "TIMED_OUT",
        "svc_login": "INPUT_REFUSED",
        "svc_flood": "OUTPUT_TOO_LARGE",
    }
    responses = {}
    for name, code in expected.items():
        outcome = run.execute(_call(compiled, name, {}))
        responses[name] = data = check_response(enriched_response(outcome), "error")
        assert data["code"] == code
        assert code in _codes_announced(tool, name)
    assert "300ms" in " ".join(
        f["description"] for d in export_atdf(tool) for f in d["how_to_use"]["outputs"]["failure"]
    )
    assert responses["svc_wait"]["details"]["received"]["seconds"] < 5


def test_a_dry_run_and_a_fixed_clock():
    tool = load(EXAMPLES / "tools" / "gh.json")
    compiled = compile_tools(tool, "mcp")
    outcome = Executor(tool).execute(_call(compiled, "gh_pr_list", {"state": "open"}), dry_run=True)
    moment = dt.datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    response = enriched_response(outcome, now=moment)
    reference("enriched-response").validate(response)
    assert response["meta"]["timestamp"] == "2025-01-02T03:04:05.678Z"
    assert response["data"]["argv"] == ["gh", "pr", "list", "--state", "open"]


def test_atip_is_cheap_to_import_without_atdf():
    """The package is imported where it is used: `import atipkit` does not load it."""
    import subprocess
    import sys

    code = "import sys, atipkit; print('atipkit.interop.atdf' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
