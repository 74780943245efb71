"""The document model: loading every version, normalizing, dumping, walking, effects."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import atipkit
from atipkit import UNSET, Effects
from atipkit.model import Cost, FilesystemEffects, may_have_reserved_keys, merge_effects
from tests.helpers import minimal


def test_legacy_string_version_becomes_object_form():
    tool = atipkit.from_dict({"atip": "0.1", "name": "t", "version": "1", "description": "d"})
    assert tool.atip.version == "0.1"
    assert atipkit.to_dict(tool)["atip"] == {"version": "0.1"}


def test_object_form_keeps_features_and_min_agent_version():
    doc = minimal(
        atip={"version": "0.6", "features": ["partial-discovery"], "minAgentVersion": "0.3"}
    )
    out = atipkit.to_dict(atipkit.from_dict(doc))
    assert out["atip"] == doc["atip"]


def test_unsupported_major_version_is_refused():
    with pytest.raises(atipkit.UnsupportedVersion) as info:
        atipkit.from_dict(minimal(atip="1.0"))
    assert info.value.problems[0].location == "$.atip"
    assert "1.0" in str(info.value)


def test_newer_minor_version_is_read_and_unknown_fields_are_ignored():
    doc = minimal(atip={"version": "0.9"}, futureField={"a": 1})
    doc["commands"]["run"]["futureToo"] = True
    tool = atipkit.from_dict(doc)
    out = atipkit.to_dict(tool)
    assert "futureField" not in out
    assert "futureToo" not in out["commands"]["run"]


def test_known_version_refuses_unknown_fields_with_exact_path():
    doc = minimal()
    doc["commands"]["run"]["effects"]["destructve"] = True
    with pytest.raises(atipkit.InvalidDocument) as info:
        atipkit.from_dict(doc)
    problem = info.value.problems[0]
    assert problem.location == "$.commands.run.effects.destructve"
    assert "destructive" in problem.message  # did-you-mean


def test_null_is_not_a_value_of_optional_fields():
    doc = minimal()
    doc["commands"]["run"]["options"][0]["description"] = None
    with pytest.raises(atipkit.InvalidDocument) as info:
        atipkit.from_dict(doc)
    assert info.value.problems[0].location == "$.commands.run.options[0].description"


def test_extensions_are_kept_at_every_level_and_written_back_sorted():
    doc = minimal(
        **{
            "x-zeta": 1,
            "x-acme-corp": {"owner": "platform"},
            "_cached_at": 5,
            "$schema": "https://atip.dev/schema/0.6.json",
        }
    )
    run = doc["commands"]["run"]
    run["x-mcp"] = {"server": "s"}
    run["options"][0]["x-hint"] = [1, {"x-": "nested values are untouched"}]
    run["effects"]["filesystem"]["x-paths-note"] = "n"
    tool = atipkit.from_dict(doc)
    assert tool.extensions["x-acme-corp"] == {"owner": "platform"}
    assert tool.commands["run"].extensions == {"x-mcp": {"server": "s"}}
    out = atipkit.to_dict(tool)
    assert out == doc
    assert list(out)[-4:] == ["$schema", "_cached_at", "x-acme-corp", "x-zeta"]


def test_shim_takes_name_and_version_from_binary():
    shim = {
        "atip": {"version": "0.6"},
        "description": "Transfer a URL",
        "binary": {"hash": "sha256:" + "ab" * 32, "name": "curl", "version": "8.4.0"},
    }
    tool = atipkit.from_dict(shim)
    assert (tool.name, tool.version, tool.kind) == ("curl", "8.4.0", "shim")
    out = atipkit.to_dict(tool)
    assert out["name"] == "curl"
    assert out["version"] == "8.4.0"


def test_dumps_is_deterministic_and_round_trips():
    doc = minimal()
    doc["commands"] = {"b": doc["commands"]["run"], "a": copy.deepcopy(doc["commands"]["run"])}
    shuffled = dict(reversed(list(doc.items())))  # same content, other key order
    one, two = atipkit.from_dict(doc), atipkit.from_dict(shuffled)
    assert atipkit.dumps(one) == atipkit.dumps(two)
    assert atipkit.loads(atipkit.dumps(one)) == one
    assert list(json.loads(atipkit.dumps(one))["commands"]) == ["b", "a"]  # author's order


def test_defaults_are_left_out_of_dumps():
    doc = minimal()
    doc["commands"]["run"]["options"][0]["required"] = False
    doc["commands"]["run"]["arguments"] = [
        {"name": "f", "type": "file", "required": True, "description": "f"}
    ]
    out = atipkit.to_dict(atipkit.from_dict(doc))
    assert "required" not in out["commands"]["run"]["options"][0]
    assert "required" not in out["commands"]["run"]["arguments"][0]


def _tree() -> atipkit.Tool:
    doc = minimal()
    leaf = {"description": "leaf"}
    doc["commands"] = {
        "": {"description": "root invocation"},
        "pr": {"description": "group", "commands": {"create": leaf, "list": leaf}},
        "repo": {"description": "group", "commands": {"delete": leaf}},
    }
    return atipkit.from_dict(doc)


def test_iter_commands_gives_argv_paths_in_document_order():
    paths = [path for path, _ in atipkit.iter_commands(_tree())]
    assert paths == [(), ("pr",), ("pr", "create"), ("pr", "list"), ("repo",), ("repo", "delete")]
    assert atipkit.count_commands(_tree()) == 6


def test_get_command_by_tuple_or_words():
    tool = _tree()
    assert atipkit.get_command(tool, ("pr", "create")).description == "leaf"
    assert atipkit.get_command(tool, "pr list").description == "leaf"
    assert atipkit.get_command(tool, ()).description == "root invocation"
    with pytest.raises(KeyError, match="pr merge"):
        atipkit.get_command(tool, "pr merge")


def test_a_command_tree_past_the_nesting_limit_is_refused_before_it_is_walked():
    doc = minimal()
    node = doc["commands"]["run"]
    for i in range(300):
        node["commands"] = {f"c{i}": {"description": "d"}}
        node = node["commands"][f"c{i}"]
    with pytest.raises(atipkit.DocumentTooLarge) as caught:
        atipkit.from_dict(doc)
    assert caught.value.problems[0].location.endswith(".commands.c30")
    del doc["commands"]["run"]["commands"]["c0"]["commands"]["c1"]["commands"]
    assert atipkit.count_commands(atipkit.from_dict(doc)) == 3


def test_effective_effects_fold_tool_group_and_command():
    doc = minimal(
        effects={"network": True, "idempotent": True, "filesystem": {"read": True, "write": False}}
    )
    doc["commands"] = {
        "pr": {
            "description": "g",
            "effects": {"cost": {"billable": True}},
            "commands": {
                "merge": {
                    "description": "m",
                    "effects": {
                        "network": False,
                        "idempotent": False,
                        "filesystem": {"write": True},
                    },
                }
            },
        }
    }
    effects = atipkit.effective_effects(atipkit.from_dict(doc), "pr merge")
    assert effects.network is True  # OR: the tool says network
    assert effects.idempotent is False  # either side false
    assert effects.filesystem == FilesystemEffects(read=True, write=True)  # field by field
    assert effects.cost == Cost(billable=True)  # from the group


tri = st.sampled_from([True, False, UNSET])


@given(a=tri, b=tri)
def test_merge_truth_tables(a, b):
    merged = merge_effects(
        Effects(destructive=a, reversible=a), Effects(destructive=b, reversible=b)
    )
    values = {a, b} - {UNSET}
    assert merged.destructive == (True if True in values else (False if values else UNSET))
    assert merged.reversible == (False if False in values else (True if values else UNSET))


@given(a=tri, b=tri)
def test_merge_is_order_independent_for_safety_fields(a, b):
    one = merge_effects(Effects(network=a, idempotent=b), Effects(network=b, idempotent=a))
    two = merge_effects(Effects(network=b, idempotent=a), Effects(network=a, idempotent=b))
    assert (one.network, one.idempotent) == (two.network, two.idempotent)


def test_escaped_extension_key_is_still_an_extension():
    text = json.dumps(minimal()).replace('"name"', '"\\u0078-note": 1, "name"', 1)
    assert '"x-' not in text
    tool = atipkit.loads(text)
    assert tool.extensions == {"x-note": 1}


def test_fast_path_still_refuses_unknown_fields():
    doc = minimal()
    doc["commands"]["run"]["oops"] = 1
    text = json.dumps(doc)
    assert not may_have_reserved_keys(text.encode())
    with pytest.raises(atipkit.InvalidDocument, match=r"\$\.commands\.run\.oops"):
        atipkit.loads(text)


@given(key=st.text(), prefix=st.sampled_from(["x-", "_", "$"]), ascii_only=st.booleans())
def test_reserved_keys_are_always_detected(key, prefix, ascii_only):
    raw = json.dumps({prefix + key: 1}, ensure_ascii=ascii_only).encode()
    assert may_have_reserved_keys(raw)


def test_text_holding_a_lone_surrogate_is_malformed_json_not_a_unicode_error():
    with pytest.raises(atipkit.MalformedJSON, match="not UTF-8"):
        atipkit.loads('{"name": "\ud800"}')
    with pytest.raises(atipkit.MalformedJSON, match="half a UTF-16 surrogate pair"):
        atipkit.loads('{"name": "\\ud800"}')


def test_every_command_walked_is_found_by_its_path_even_under_a_root_with_children():
    """A root command (`""`) with subcommands is invalid (`command.root-has-subcommands`)
    but is read, and its children are walked at its parent's level; `get_command` finds
    them there, so an export of such a document answers instead of crashing (exit 70:
    found by the ATDF fuzz test)."""
    doc = minimal()
    doc["commands"] = {
        "issue": {"description": "Issues", "commands": {"list": {"description": "List"}}},
        "": {
            "description": "The root, wrongly a group",
            "commands": {
                "create": {"description": "Create"},
                "": {"description": "Deeper", "commands": {"merge": {"description": "Merge"}}},
            },
        },
    }
    tool = atipkit.loads(json.dumps(doc))
    walked = list(atipkit.iter_commands(tool))
    assert {path for path, _ in walked} >= {("issue", "list"), ("create",), ("merge",)}
    paths = [path for path, _ in walked]
    for path, command in walked:  # `()` is both roots' path: the outer one is found
        assert atipkit.get_command(tool, path) is command or paths.count(path) > 1
    with pytest.raises(KeyError):
        atipkit.get_command(tool, ("merge", "create"))
    from atipkit.interop.atdf import export_atdf

    assert {d["tool_id"] for d in export_atdf(tool)} >= {"t_create", "t_merge"}
