"""The canonical schema: well-formed, usable by other validators, and in agreement with the
model on every fixture and on random mutations of them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referencing import Registry, Resource

import atipkit
from atipkit import schema
from atipkit.protocol import declared_version
from tests.helpers import EXAMPLES, FIXTURES, read_json

FIXTURE_FILES = sorted(FIXTURES.glob("*/*.json")) + sorted(EXAMPLES.rglob("*.json"))
DOCUMENTS = [p for p in FIXTURE_FILES if p.parent.name != "bad-json"]


def reference_validator(kind: schema.Kind) -> jsonschema.Draft202012Validator:
    """The shipped files, wired together the way an outside user would."""
    resources = [
        (schema.load_schema(k)["$id"], Resource.from_contents(schema.load_schema(k)))
        for k in ("metadata", "shim")
    ]
    registry = Registry().with_resources(resources)
    return jsonschema.Draft202012Validator(schema.load_schema(kind), registry=registry)


@pytest.mark.parametrize("kind", ["metadata", "shim"])
def test_schema_files_are_valid_draft_2020_12(kind):
    jsonschema.Draft202012Validator.check_schema(schema.load_schema(kind))


def schema_accepts(data: Any) -> bool:
    return not [p for p in schema.check(data) if p.is_error]


def model_accepts(data: Any) -> bool:
    try:
        atipkit.from_dict(data)
    except atipkit.DocumentError:
        return False
    return True


def declared_newer(data: Any) -> bool:
    version = declared_version(data)
    return bool(version and version.is_newer)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_validator_agrees_with_jsonschema_rs(path: Path):
    data = read_json(path)
    kind = schema.document_kind(data)
    reference = reference_validator(kind).is_valid(data)
    assert reference == schema_accepts(data)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_model_agrees_with_schema(path: Path):
    data = read_json(path)
    if declared_newer(data):
        pytest.skip("newer minor versions: unknown fields are ignored by policy")
    assert model_accepts(data) == schema_accepts(data)


VALID_PATHS = [p for p in DOCUMENTS if schema_accepts(read_json(p))]


@pytest.mark.parametrize("path", VALID_PATHS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_valid_documents_round_trip_through_the_model(path: Path):
    data = read_json(path)
    tool = atipkit.from_dict(data)
    dumped = atipkit.dumps(tool)
    assert schema_accepts(json.loads(dumped))
    assert atipkit.loads(dumped) == tool
    assert atipkit.dumps(atipkit.loads(dumped)) == dumped


# -- random mutations: wherever a document is changed, schema and model decide alike ------

VALID = [
    read_json(p)
    for p in DOCUMENTS
    if schema_accepts(read_json(p)) and not declared_newer(read_json(p))
]
REPLACEMENTS = [
    None,
    0,
    -1,
    1.5,
    True,
    "",
    "x",
    "-x",
    "enum",
    "0.6",
    "1.0",
    [],
    ["-a"],
    {},
    {"description": "d"},
    "sha256:" + "0" * 64,
    "sha256:" + "0" * 63,
]


def locations(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += locations(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += locations(value, (*prefix, index))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(VALID)))
    where = draw(st.sampled_from(locations(doc)[1:]))
    parent = doc
    for part in where[:-1]:
        parent = parent[part]
    action = draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "delete" and isinstance(parent, dict):
        del parent[where[-1]]
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["unknownField", "x-vendor", "_internal", "Name"]))] = 1
    else:
        parent[where[-1]] = draw(st.sampled_from(REPLACEMENTS))
    return doc


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_model_agrees_with_schema_on_mutations(doc):
    assert model_accepts(doc) == schema_accepts(doc)
