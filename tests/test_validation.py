"""`validate` over the fixture corpus: the RFCs' own examples pass, every deliberately
invalid document fails at the exact JSON path of its defect."""

from __future__ import annotations

import json
import re

import pytest

import atipkit
from tests.helpers import EXAMPLES, FIXTURES, minimal, read_json

EXPECTED = read_json(FIXTURES / "invalid" / "expected.json")
RFC = sorted((FIXTURES / "rfc").glob("*.json"))
# Not complete documents as printed (tests/fixtures/rfc/README.md says why): each must fail
# with exactly these problems and nothing else.
REQUIRED = "missing required field"
NOT_VALID_AS_PRINTED = {
    # placeholder hashes ("sha256:a1b2c3d4e5f6g7h8...", "sha256:${HASH}") are not hashes;
    # corrected copies (*-fixed-hash.json) sit beside them
    "rfc06-4.5-curl-shim.json": {"$.binary.hash": "expected 'sha256:'"},
    "rfc06-4.9-mytool-shim.json": {"$.binary.hash": "expected 'sha256:'"},
    # abridged illustrations that elide required fields
    "rfc01-3.1-mytool-agent-output.json": {"$": REQUIRED},
    "rfc06-1.2-gh-agent-output.json": {"$": REQUIRED},
    "rfc06-3.1-mytool-agent-output.json": {"$": REQUIRED},
    "rfc06-3.1.1-partial-discovery.json": {"$": REQUIRED},
    "rfc06-3.2.1-atip-object.json": {"$": REQUIRED},
    "rfc06-3.2.2-curl-community-shim.json": {"$": REQUIRED},
    "rfc06-4.10.4-inferred-shim.json": {"$": "(missing required field|a shim needs)"},
    "rfc06-12.2-x-acme-corp.json": {"$": REQUIRED},
}


@pytest.mark.parametrize("path", RFC, ids=lambda p: p.name)
def test_rfc_examples(path):
    report = atipkit.validate_file(path)
    expected = NOT_VALID_AS_PRINTED.get(path.name)
    if expected is None:
        assert report.ok, [p.format(path.name) for p in report.errors]
        return
    assert report.errors
    for problem in report.errors:
        assert problem.location in expected, problem
        assert re.match(expected[problem.location], problem.message), problem


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=str)
def test_invalid_fixture_is_rejected_at_the_defect(name):
    report = atipkit.validate_file(FIXTURES / "invalid" / name)
    assert not report.ok
    locations = [p.location for p in report.errors]
    assert EXPECTED[name]["location"] in locations, (EXPECTED[name]["why"], locations)


def test_every_invalid_fixture_has_an_expectation():
    files = {p.name for p in (FIXTURES / "invalid").glob("*.json")} - {"expected.json"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.json")), ids=lambda p: p.name)
def test_examples_pass_strict(path):
    assert atipkit.validate_file(path).problems == []


def test_bom_is_tolerated():
    assert atipkit.validate_file(FIXTURES / "bad-json" / "bom.json").ok


@pytest.mark.parametrize(
    ("mutate", "code", "location"),
    [
        (
            lambda d: d["commands"]["run"]["options"].append(
                {"name": "v2", "flags": ["-v"], "type": "boolean", "description": "x"}
            ),
            "flags.duplicate",
            "$.commands.run.options[1].flags",
        ),
        (
            lambda d: d.update(
                globalOptions=[
                    {"name": "g", "flags": ["-v"], "type": "boolean", "description": "g"}
                ]
            ),
            "flags.shadows-global",
            "$.commands.run.options[0].flags",
        ),
        (lambda d: d["commands"]["run"].pop("effects"), "effects.missing", "$.commands.run"),
        (
            lambda d: d["commands"]["run"].update(effects={"x-note": "says nothing"}),
            "effects.missing",
            "$.commands.run",
        ),
        (
            lambda d: d["commands"]["run"]["options"][0].update(type="integer", default="3"),
            "default.type",
            "$.commands.run.options[0].default",
        ),
        (
            lambda d: d["commands"]["run"].update(
                arguments=[
                    {"name": "a", "type": "string", "required": False, "description": "a"},
                    {"name": "b", "type": "string", "description": "b"},
                ]
            ),
            "arguments.required-after-optional",
            "$.commands.run.arguments[1]",
        ),
        (
            lambda d: d["atip"].update(version="0.3", features=["content-addressable"]),
            "features.too-new",
            "$.atip.features[0]",
        ),
        (
            lambda d: d.update(effects={"cost": {"estimate": "cheap"}}),
            "effects.cost-estimate",
            "$.effects.cost.estimate",
        ),
        (lambda d: d["atip"].update(version="0.7"), "version.newer", "$.atip"),
        (
            lambda d: d.update(partial=True, totalCommands=0),
            "partial.total-count",
            "$.totalCommands",
        ),
        (
            lambda d: d.update(
                partial=True,
                filter={"depth": 1},
                commands={"a": {"description": "a", "commands": {"b": {"description": "b"}}}},
            ),
            "partial.too-deep",
            "$.filter.depth",
        ),
        (  # a warning: MCP servers send such schemas, kept as they are
            lambda d: d["commands"]["run"]["options"][0].update(
                schema={"type": "string", "pattern": "[a-"}
            ),
            "parameter-schema.invalid",
            "$.commands.run.options[0].schema",
        ),
    ],
)
def test_semantic_checks(mutate, code, location):
    doc = minimal()
    mutate(doc)
    report = atipkit.validate(json.dumps(doc))
    assert (code, location) in [(p.code, p.location) for p in report.problems], report.problems


def test_newer_version_turns_unknown_fields_into_warnings():
    doc = minimal(atip={"version": "0.8"}, laterField=1)
    report = atipkit.validate(json.dumps(doc))
    assert report.ok
    assert {p.code for p in report.warnings} == {"version.newer", "schema.unknown-field"}


def test_hash_named_file_must_match(tmp_path):
    shim = read_json(EXAMPLES / "shims" / next((EXAMPLES / "shims").glob("*.json")).name)
    right = tmp_path / (shim["binary"]["hash"][7:] + ".json")
    right.write_text(json.dumps(shim))
    assert atipkit.validate_file(right).ok
    wrong = tmp_path / ("0" * 64 + ".json")
    wrong.write_text(json.dumps(shim))
    assert [p.code for p in atipkit.validate_file(wrong).errors] == ["binary.hash-mismatch"]


@pytest.mark.parametrize(
    "path",
    [*sorted(EXAMPLES.glob("**/*.json")), *RFC, *sorted((FIXTURES / "invalid").glob("*.json"))],
    ids=lambda p: p.name,
)
def test_validating_decoded_text_reports_what_validating_the_text_does(path):
    """The probe and the remote registry decode first (to look at the JSON), then
    `validate_decoded`, which does not walk it again: the same report as `validate`."""
    from atipkit import _jsontext
    from atipkit.errors import DocumentError
    from atipkit.validation import validate_decoded

    raw = path.read_bytes()
    try:
        data = _jsontext.decode(raw, path.name)
    except DocumentError:
        return
    expected = atipkit.validate(raw, source=path.name).to_dict()
    assert validate_decoded(data, source=path.name, raw=raw).to_dict() == expected
    assert atipkit.validate(data, source=path.name).to_dict() == expected
