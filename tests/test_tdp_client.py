"""The TDP consumer (spec "For Tool Consumers" and "Caching"): a manifest kept by the
server's `Cache-Control` and revalidated with its ETag, against a real nginx; the user's
preferences merged into the spec's own example manifest (agent-manager)."""

from __future__ import annotations

import json
import time

import pytest

from atipkit.errors import DocumentError
from atipkit.interop import tdp
from tests.helpers import FIXTURES, atip, envelope_of
from tests.servers import nginx

SNAKE = FIXTURES / "tdp" / "manifests" / "agent-manager.snake.json"
MANIFEST = "/api/v1/tools"
CACHE_CONTROLS = {
    "spec": "public, max-age=60",  # what the spec's provider sends
    "short": "max-age=3",
    "revalidate": "no-cache",
    "nothing": "no-store",
}


@pytest.fixture
def scenarios(tmp_path):
    """One scenario a `Cache-Control`, each at /<name>/api/v1/tools, nginx giving each
    an ETag and answering `If-None-Match` with 304."""
    root = tmp_path / "root"
    blocks = []
    for name, value in CACHE_CONTROLS.items():
        (root / name / "api" / "v1").mkdir(parents=True)
        (root / name / "api" / "v1" / "tools").write_bytes(SNAKE.read_bytes())
        header = f'add_header Cache-Control "{value}";'
        blocks.append(f"location /{name}/ {{ default_type application/json; {header} }}")
    log = "$request $status $http_if_none_match"
    tdp.clear_cache()
    with nginx(root, tmp_path / "nginx", extra="\n".join(blocks), log_format=log) as server:
        yield server
    tdp.clear_cache()


def asked(server, name: str) -> list[str]:
    """`STATUS` or `STATUS ETAG-SENT` of each request for the scenario's manifest."""
    out = []
    for line in server.requests():
        request, _, rest = line.partition(" HTTP/1.1 ")
        if request == f"GET /{name}{MANIFEST}":
            status, _, sent = rest.partition(" ")
            sent = sent.replace("\\x22", '"')  # nginx escapes the quotes it logs
            out.append(status if sent == "-" else f"{status} {sent}")
    return out


def test_max_age_is_kept_then_revalidated_with_the_etag(scenarios):
    url = f"{scenarios.url}/short{MANIFEST}"
    first = tdp.fetch(url)
    assert tdp.fetch(url) is first  # fresh for max-age=3: not asked
    time.sleep(3.2)
    assert tdp.fetch(url) is first  # stale: revalidated, 304, the same manifest
    assert tdp.fetch(url) is first  # fresh again for max-age
    [fetched, revalidated] = asked(scenarios, "short")
    assert fetched == "200"
    assert revalidated.startswith('304 "')  # the ETag nginx gave, sent back


def test_no_cache_is_revalidated_every_time_and_no_store_never_kept(scenarios):
    revalidate = f"{scenarios.url}/revalidate{MANIFEST}"
    first = tdp.fetch(revalidate)
    assert tdp.fetch(revalidate) is first
    assert tdp.fetch(revalidate) is first
    answers = asked(scenarios, "revalidate")
    assert [a.split()[0] for a in answers] == ["200", "304", "304"]
    nothing = f"{scenarios.url}/nothing{MANIFEST}"
    tdp.fetch(nothing)
    tdp.fetch(nothing)
    assert asked(scenarios, "nothing") == ["200", "200"]  # no validator sent: nothing kept


def test_the_specs_max_age_60_is_reused_and_refresh_revalidates(scenarios):
    url = f"{scenarios.url}/spec{MANIFEST}"
    first = tdp.fetch(url)
    assert tdp.fetch(url) is first
    assert tdp.fetch(url, refresh=True) is first  # asked, and unchanged
    assert [a.split()[0] for a in asked(scenarios, "spec")] == ["200", "304"]


def test_a_changed_manifest_replaces_the_kept_one(scenarios):
    url = f"{scenarios.url}/revalidate{MANIFEST}"
    tdp.fetch(url)
    changed = json.loads(SNAKE.read_text())
    changed["scenario"]["version"] = "2.0.0"
    path = scenarios.root / "revalidate" / "api" / "v1" / "tools"
    path.write_text(json.dumps(changed))
    assert tdp.fetch(url).scenario.version == "2.0.0"
    assert [a.split()[0] for a in asked(scenarios, "revalidate")] == ["200", "200"]


# Preferences ------------------------------------------------------------------------------

PREFERENCES = {
    "agent-manager": {
        "spawn_coding_agent": {"enabled": False},
        "purge_agent_history": {"enabled": True},
        "list_agent_runs": {"requires_approval": True},
        "stop_agent_run": {"requires_approval": False},
    }
}


def test_preferences_merge_into_the_specs_example_manifest():
    """ "Merge tool definitions with user preferences", then "pass enabled tools to the
    LLM": `enabled` replaces the default both ways; an approval can be added, never
    waived."""
    manifest = tdp.parse(SNAKE.read_bytes())
    assert [t.name for t in tdp.enabled_tools(manifest)] == [
        "spawn_coding_agent",
        "stop_agent_run",
        "list_agent_runs",
    ]
    merged = tdp.merge_preferences(manifest, tdp.read_preferences(PREFERENCES))
    assert [t.name for t in tdp.enabled_tools(merged)] == [
        "stop_agent_run",
        "list_agent_runs",
        "purge_agent_history",
    ]
    approval = {t.name: t.metadata.requires_approval for t in merged.tools}
    assert approval == {
        "spawn_coding_agent": False,
        "stop_agent_run": True,  # the server asks: the user cannot waive it
        "list_agent_runs": True,  # the user asks
        "purge_agent_history": True,
    }
    other = tdp.read_preferences({"research-agent": {"spawn_coding_agent": {"enabled": False}}})
    assert tdp.merge_preferences(manifest, other) is manifest  # another scenario's


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"agent-manager": {"spawn_coding_agent": {"enabld": False}}}, "enabld"),
        ({"agent-manager": {"spawn_coding_agent": {"enabled": "no"}}}, "enabled"),
        ({"agent-manager": ["spawn_coding_agent"]}, "agent-manager"),
        ([], "$"),
    ],
)
def test_preferences_that_cannot_be_used_are_refused_with_where(bad, where):
    with pytest.raises(DocumentError) as caught:
        tdp.read_preferences(bad)
    problem = caught.value.problems[0]
    assert where in f"{problem.location} {problem.message}"


def test_atip_import_tdp_merges_the_users_preferences(tmp_path, monkeypatch):
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "config.json").write_text(json.dumps({"tdp": {"preferences": PREFERENCES}}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    document = envelope_of(atip("import", "tdp", str(SNAKE)))["result"]
    commands = document["commands"]
    assert "spawn_coding_agent" not in commands  # the user disabled it
    assert set(commands) == {"stop_agent_run", "list_agent_runs", "purge_agent_history"}
    listed = commands["list_agent_runs"]["x-tdp"]["metadata"]
    assert listed["requires_approval"] is True
    purged = commands["purge_agent_history"]["x-tdp"]["metadata"]
    assert purged["enabled_by_default"] is True  # the user enabled it
    (config / "config.json").write_text(json.dumps({"tdp": {"preferences": {"x": 1}}}))
    broken = atip("import", "tdp", str(SNAKE))
    assert broken.exit_code == 2
    assert envelope_of(broken)["error"]["code"] == "E1009"


def test_an_approval_the_manifest_or_the_user_asks_for_is_asked_before_a_call():
    """`requires_approval`, from the server or added by the user's preferences, is not
    only kept under x-tdp: the policy asks for confirmation before such a command runs,
    and leaves the others as their effects decide."""
    from atipkit import Policy
    from atipkit.policy import decide

    manifest = tdp.merge_preferences(
        tdp.parse(SNAKE.read_bytes()), tdp.read_preferences(PREFERENCES)
    )
    tool = tdp.to_atip(manifest)
    policy = Policy(allow_destructive=True, allow_network=True, allow_filesystem_write=True)

    def codes(name: str) -> list[str]:
        return [f.code for f in decide(policy, tool, (name,)).findings]

    assert "policy.requires-approval" in codes("list_agent_runs")  # the user asks
    assert "policy.requires-approval" in codes("stop_agent_run")  # the server asks
    assert "policy.requires-approval" not in codes("spawn_coding_agent")
    assert decide(policy, tool, ("list_agent_runs",)).action == "confirm"
    assert decide(policy, tool, ("spawn_coding_agent",)).action == "allow"
