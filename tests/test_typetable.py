"""The one ATIP ↔ JSON Schema ↔ Python type table (decision 385)."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from atipkit import typetable
from atipkit.model import AtipType
from atipkit.typetable import FORMATS, SCALARS, TYPES, fits, from_python, json_schema

SRC = Path(typetable.__file__).parent


def test_the_table_names_every_atip_type_once() -> None:
    assert set(TYPES) == set(typing.get_args(AtipType))


@pytest.mark.parametrize("name", sorted(TYPES))
def test_each_type_reads_back_from_its_json_schema(name: str) -> None:
    """A reader given what a writer wrote (type and format) finds the type again; `enum`
    is a string with values, which the readers tell by the values."""
    row = TYPES[name]
    back = FORMATS[row.format] if row.format else row.json_type
    assert back == ("string" if name == "enum" else name)
    assert back in SCALARS or back in FORMATS.values() or back == "array"


def test_python_values_fit_their_type() -> None:
    for name, row in TYPES.items():
        value = {str: "x", int: 1, float: 1.5, bool: True, list: ["a"]}[row.python]
        assert fits(value, name)
        assert from_python(row.python) in (name, "string")
    assert fits(1, "number")
    assert not fits(True, "number")
    assert not fits(1.5, "integer")


def test_json_schema_is_new_each_call() -> None:
    first = json_schema("array")
    first["items"]["type"] = "integer"
    assert json_schema("array") == {"type": "array", "items": {"type": "string"}}


def test_no_other_module_spells_the_formats() -> None:
    """The formats RFC 0.6 §3.7 gives the path types are written in the table alone."""
    spelled = re.compile(r"[\"'](file-path|directory-path)[\"']")
    holders = [
        str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if spelled.search(p.read_text("utf-8"))
    ]
    assert holders == ["typetable.py"]
