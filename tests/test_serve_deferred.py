"""`atipkit.serve.deferred`: what deferred mode decides before a command runs, the same
for an app's server and the gateway (which tests/test_app_mcp.py and tests/test_gateway.py
drive through a real MCP client)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from atipkit.serve import deferred

RUN = deferred.run_schema({"type": "object", "additionalProperties": False})


class Shelf:
    """A catalog of two commands."""

    definitions = {  # noqa: RUF012 - read only
        "pack": {"name": "pack", "inputSchema": {"type": "object"}},
        "unpack": {"name": "unpack", "inputSchema": {"type": "object"}},
    }

    def search(self, query: str, limit: int) -> list[dict[str, Any]]:
        return [{"name": name} for name in self.definitions if query in name][:limit]

    def definition_of(self, name: str) -> dict[str, Any] | None:
        return self.definitions.get(name)

    def command_names(self) -> Iterable[str]:
        return self.definitions


def test_the_old_run_tool_name_is_answered_as_the_new_one():
    assert deferred.canonical("run_tool") == deferred.canonical("call_tool") == "run_tool"
    assert deferred.canonical("search_tools") == "search_tools"
    assert deferred.canonical("pack") is None
    assert deferred.input_schema("call_tool", RUN) is RUN
    assert deferred.input_schema("get_tool_schema", RUN) is deferred.NAME_SCHEMA


def test_search_schema_and_run_are_told_apart():
    shelf = Shelf()
    found = deferred.handle("search_tools", {"query": "pack", "limit": 1}, shelf, RUN)
    assert found == deferred.Answered({"tools": [{"name": "pack"}]})
    schema = deferred.handle("get_tool_schema", {"name": "unpack"}, shelf, RUN)
    assert schema == deferred.Answered(Shelf.definitions["unpack"])
    run = deferred.handle(
        "run_tool", {"name": "pack", "arguments": {"x": 1}, "options": {}}, shelf, RUN
    )
    assert run == deferred.Run("pack", {"x": 1}, {})
    assert deferred.handle("run_tool", {"name": "pack"}, shelf, RUN) == deferred.Run("pack", {})


@pytest.mark.parametrize(
    ("tool", "arguments", "code", "message"),
    [
        ("search_tools", {"query": "x", "limit": 0}, "E1002", "arguments.limit: 0 is less than"),
        ("search_tools", [], "E1001", "arguments: [] is not of type"),
        ("run_tool", {"name": "pack", "colour": 1}, "E1001", "arguments: Additional properties"),
        ("run_tool", {"name": "pack", "options": {"x": 1}}, "E1002", "arguments.options: "),
    ],
)
def test_arguments_the_schema_refuses_name_the_place(tool, arguments, code, message):
    refused = deferred.handle(tool, arguments, Shelf(), RUN)
    assert isinstance(refused, deferred.Refusal)
    assert (refused.code, refused.message[: len(message)]) == (code, message)
    assert refused.details["errors"]


def test_an_unknown_name_is_refused_with_the_nearest():
    refused = deferred.handle("run_tool", {"name": "pak"}, Shelf(), RUN)
    assert refused == deferred.Refusal(
        "no command is called 'pak'; did you mean pack, unpack?",
        "E1002",
        {"param": "name", "name": "pak", "did_you_mean": ["pack", "unpack"]},
        "Find the command's name with search_tools.",
    )
