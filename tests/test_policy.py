"""The policy package: one `decide` that the validator, the executor, `atip run` and the
gateway all ask; trust from what atipkit verified, never from what a document says of
itself; binaries verified before they run; policy files read strictly.

The tools are real executables written by the tests: each run appends to a log, so a call
that must not run is seen not to have run.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import atipkit
from atipkit.bridge import Validator, compile_tools, parse_tool_calls
from atipkit.execute import Executor
from atipkit.policy import (
    Decision,
    Delegation,
    Evidence,
    Policy,
    PolicyFileError,
    TrustLevel,
    decide,
    read_policy,
    read_trust_policy,
    source_trust,
)
from atipkit.resolve import resolve_tool
from atipkit.trust import signatures
from atipkit.trust.digest import sha256_file
from tests.helpers import atip, envelope_of, minisign_keys
from tests.servers import nginx

pytestmark = pytest.mark.usefixtures("isolated_home")

KEEPER = {
    "atip": {"version": "0.6"},
    "name": "keeper",
    "version": "1.0",
    "description": "Keep things",
    "trust": {"source": "native"},
    "commands": {
        "list": {
            "description": "List things",
            "effects": {"network": False, "filesystem": {"write": False}, "idempotent": True},
        },
        "fetch": {
            "description": "Fetch things from the network",
            "effects": {"network": True, "filesystem": {"write": False}},
        },
        "wipe": {
            "description": "Wipe everything",
            "effects": {"destructive": True, "network": False},
        },
    },
}


class Keeper:
    """A native ATIP tool on PATH whose every run (but `--agent`) is logged."""

    def __init__(self, root: Path, document: dict[str, Any] | None = None) -> None:
        self.bin = root / "bin"
        self.bin.mkdir(exist_ok=True)
        self.path = self.bin / "keeper"
        self.log = root / "keeper.log"
        self.document = document or KEEPER
        self.path.write_text(
            "#!/bin/sh\n"
            f"[ \"$1\" = --agent ] && echo '{json.dumps(self.document)}' && exit 0\n"
            f'echo "$@" >> {self.log}\n'
            'echo "did $1"\n'
        )
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)

    @property
    def runs(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    @property
    def tool(self) -> atipkit.Tool:
        return atipkit.from_dict(self.document)


@pytest.fixture
def keeper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Keeper:
    found = Keeper(tmp_path)
    monkeypatch.setenv("PATH", f"{found.bin}{os.pathsep}{os.environ['PATH']}")
    return found


def call_of(tool: atipkit.Tool, name: str, arguments: dict[str, Any] | None = None):
    compiled = compile_tools(tool, "mcp")
    [call] = parse_tool_calls("mcp", {"name": name, "arguments": arguments or {}}, compiled)
    return call


def write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def run_call(name: str, *args: str) -> Any:
    return atip("run", "--call", json.dumps({"name": name, "arguments": {}}), *args)


# -- 1. binaries are verified before they run ------------------------------------------------


def test_a_binary_that_does_not_match_its_checksum_never_runs(keeper, tmp_path):
    lying = {**KEEPER, "trust": {"integrity": {"checksum": "sha256:" + "0" * 64}}}
    tool = atipkit.from_dict(lying)
    outcome = Executor(tool).execute(call_of(tool, "keeper_list"))
    assert (outcome.decision.action, outcome.result) == ("deny", None)
    assert "COMPROMISED" in outcome.text
    assert "checksum" in outcome.text
    # atip run, with the document given as a file and the binary found on PATH
    document = write(tmp_path / "keeper.json", lying)
    result = run_call("keeper_list", "--tool", str(document))
    assert result.exit_code == 30, result.output
    error = envelope_of(result)["error"]
    assert error["code"] == "E2012"
    assert "COMPROMISED" in error["message"]
    assert keeper.runs == []


def described(keeper: Keeper) -> tuple[Executor, Any]:
    """The keeper resolved as `atip run` resolves it, an executor running the binary it
    was described from (`Resolved.evidence`), and a call of `keeper list`."""
    resolved = resolve_tool("keeper")
    assert resolved.evidence.path == str(keeper.path)
    assert resolved.evidence.hash == sha256_file(keeper.path)
    executor = Executor(resolved.tool, evidence={"keeper": resolved.evidence})
    return executor, call_of(resolved.tool, "keeper_list")


def test_a_binary_replaced_after_its_metadata_was_read_never_runs(keeper):
    executor, call = described(keeper)
    with keeper.path.open("a") as f:
        f.write("# replaced\n")
    outcome = executor.execute(call)
    assert outcome.decision.action == "deny"
    assert "not the binary its metadata was read for" in outcome.text
    assert keeper.runs == []


def test_a_binary_rewritten_to_the_same_size_and_mtime_is_still_caught(keeper):
    """Anyone can put an mtime back (`touch -r`); nobody can put a ctime back."""
    executor, call = described(keeper)
    assert executor.execute(call).decision.action == "allow"
    before = keeper.path.stat()
    content = keeper.path.read_bytes()
    keeper.path.write_bytes(content.replace(b"did", b"hid"))  # same size, same inode
    os.utime(keeper.path, ns=(before.st_atime_ns, before.st_mtime_ns))
    outcome = executor.execute(call)
    assert outcome.decision.action == "deny"
    assert "not the binary its metadata was read for" in outcome.text
    assert keeper.runs == ["list"]


def test_the_digest_store_is_read_back_and_a_damaged_one_is_written_anew(tmp_path, monkeypatch):
    """The store is JSON read by the standard library (a fused search reads it: decision
    641), in the form msgspec wrote: an entry whose fields are not of their types (a
    bool is no int) makes the store unread, and the file is hashed and written again."""
    from atipkit.trust import digest

    binary, store = tmp_path / "tool", tmp_path / "digests.json"
    binary.write_bytes(b"#!/bin/sh\n")
    expected = sha256_file(binary)
    hashed: list[str] = []
    real_hash = digest.hash_file

    def counted(path: Any, algorithm: Any = "sha256") -> str:
        hashed.append(str(path))
        return real_hash(path, algorithm)

    monkeypatch.setattr(digest, "hash_file", counted)

    def fresh_process() -> str:
        monkeypatch.setattr(digest, "_memory", {})
        return digest.file_digest(binary, cache=store)

    assert fresh_process() == expected
    saved = json.loads(store.read_text())["digests"][f"sha256:{binary.resolve()}"]
    assert set(saved) == {"size", "mtime_ns", "inode", "digest", "ctime_ns", "device"}
    assert fresh_process() == expected
    assert len(hashed) == 1  # the second read it from the store
    good = store.read_text()
    for bad in ('{"digests": []}', "[1]", "not json", good.replace('"size":', '"size":true,"x":')):
        store.write_text(bad)
        assert fresh_process() == expected
        assert json.loads(store.read_text())["digests"][f"sha256:{binary.resolve()}"] == saved
    assert len(hashed) == 5
    # an old entry without ctime_ns and device is read, and then differs from the file
    entry = {k: v for k, v in saved.items() if k not in ("ctime_ns", "device")}
    store.write_text(json.dumps({"digests": {f"sha256:{binary.resolve()}": entry}}))
    assert fresh_process() == expected
    assert len(hashed) == 6


def test_a_binary_replaced_by_a_fifo_is_refused_without_reading_it(keeper):
    executor, call = described(keeper)
    keeper.path.unlink()
    os.mkfifo(keeper.path)  # reading it would block until a writer came
    outcome = executor.execute(call)
    assert outcome.decision.action == "deny"
    assert "is not a regular file" in outcome.text


def test_atip_run_enforces_minimum_verification(keeper, tmp_path):
    strict = write(tmp_path / "strict.json", {"minimumVerification": "VERIFIED"})
    unsigned = run_call("keeper_list", "--tool", "keeper", "--policy", str(strict))
    assert unsigned.exit_code == 30, unsigned.output
    reasons = envelope_of(unsigned)["result"]["reasons"]
    assert any("the binary is UNSIGNED" in r and "requires VERIFIED" in r for r in reasons)
    assert keeper.runs == []
    # signed by a key the policy trusts: the same call runs
    secret, public = minisign_keys(tmp_path)
    signatures.minisign_sign(keeper.path, secret)
    trusting = write(
        tmp_path / "trusting.json",
        {"minimumVerification": "VERIFIED", "trust": {"minisignKeys": [str(public)]}},
    )
    signed = run_call("keeper_list", "--tool", "keeper", "--policy", str(trusting))
    assert signed.exit_code == 0, signed.output
    assert keeper.runs == ["list"]


def test_a_subagents_keys_cannot_vouch_for_a_binary_its_lead_does_not_trust(keeper, tmp_path):
    """`narrow` can only make a policy stricter: a binary must verify under the trust of
    every policy of the chain, not only the innermost one's."""
    from atipkit.policy import TrustPolicy

    secret, public = minisign_keys(tmp_path)
    signatures.minisign_sign(keeper.path, secret)
    own_keys = TrustPolicy(minisign_keys=[str(public)])
    tool = keeper.tool
    call = call_of(tool, "keeper_list")

    def action(policy: Policy) -> str:
        return Executor(tool, policy=policy).execute(call, dry_run=True).decision.action

    lead = Policy(minimum_verification="VERIFIED")
    assert action(lead) == "deny"  # the lead trusts no key: UNSIGNED
    assert action(lead.narrow(Policy(trust=own_keys))) == "deny"  # nor does its subagent
    trusting = Policy(minimum_verification="VERIFIED", trust=own_keys)
    assert action(trusting) == "allow"
    assert action(trusting.narrow(Policy())) == "allow"  # a subagent verifies as its lead
    assert trusting.narrow(Policy(trust=own_keys)).trust_chain() == [own_keys]
    assert keeper.runs == []


def test_the_gateway_verifies_before_it_runs(keeper, tmp_path):
    from atipkit.registry.local import LocalRegistry
    from atipkit.serve.gateway import Gateway, Selection

    gateway = Gateway(
        Selection(names=("keeper",)),
        policy=Policy(minimum_verification="VERIFIED"),
        registry=LocalRegistry(),
    )
    outcome = gateway.catalog.call("keeper_list", {})
    assert outcome.decision.action == "deny"
    assert "UNSIGNED" in outcome.text
    with keeper.path.open("a") as f:  # replaced behind the gateway's back
        f.write("# replaced\n")
    replaced = Gateway(Selection(names=("keeper",)), registry=LocalRegistry())
    fresh = replaced.catalog.call("keeper_list", {})
    assert fresh.decision.action == "allow"  # described anew: the new binary's own
    with keeper.path.open("a") as f:
        f.write("# and again\n")
    stale = replaced.catalog.call("keeper_list", {})
    assert stale.decision.action == "deny"
    assert "COMPROMISED" in stale.text
    assert keeper.runs == ["list"]


# -- 2. trust from evidence, never from the document -----------------------------------------


VENDOR = {"source": "vendor", "verified": True}


@pytest.mark.parametrize(
    ("evidence", "claimed", "expected"),
    [
        (Evidence(origin="native"), None, "high"),
        (Evidence(origin="native"), "inferred", "very-low"),  # a document may lower itself
        (Evidence(origin="given"), "vendor", "low"),  # ... never raise itself
        (Evidence(origin="user"), "native", "low"),
        (Evidence(origin="system"), "vendor", "medium"),
        (Evidence(origin="inferred"), "vendor", "very-low"),
        (Evidence(origin="registry", registry="https://r.example"), "vendor", "low"),
        (
            Evidence(origin="registry", registry="https://r.example", registry_trust="high"),
            "vendor",
            "high",
        ),
        (
            Evidence(origin="registry", registry="https://r.example", registry_trust="high"),
            "community",
            "low",
        ),
        # plain http to another host: anyone on the path could have written it
        (
            Evidence(origin="registry", registry="http://r.example", registry_trust="high"),
            "vendor",
            "low",
        ),
        (
            Evidence(
                origin="registry",
                registry="http://r.example",
                registry_trust="high",
                signer="keepers@r.example",
            ),
            None,
            "high",
        ),
        (
            Evidence(origin="registry", registry="http://127.evil.example", registry_trust="high"),
            None,
            "low",
        ),
        (
            Evidence(origin="registry", registry="http://127.0.0.1:8080", registry_trust="high"),
            None,
            "high",
        ),
    ],
)
def test_source_trust_comes_from_evidence(evidence, claimed, expected):
    document = {**KEEPER, "trust": {"source": claimed}} if claimed else KEEPER
    assert source_trust(evidence, atipkit.from_dict(document)) == expected


def legacy_tool(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "oldtool"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "oldtool.log"}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def vouching_shim(hex_digits: str) -> dict[str, Any]:
    """A shim that says everything good of itself, unsigned."""
    return {
        "atip": {"version": "0.6"},
        "binary": {"hash": f"sha256:{hex_digits}", "name": "oldtool", "version": "1"},
        "trust": VENDOR,
        "description": "An old tool",
        "commands": {
            "": {"description": "Run it", "effects": {"network": False, "idempotent": True}}
        },
    }


def test_a_remote_shim_does_not_vouch_for_itself(tmp_path, monkeypatch):
    binary = legacy_tool(tmp_path)
    hex_digits = sha256_file(binary).removeprefix("sha256:")
    root = tmp_path / "root"
    (root / "shims" / "sha256").mkdir(parents=True)
    write(root / "shims" / "sha256" / f"{hex_digits}.json", vouching_shim(hex_digits))
    high = write(tmp_path / "high.json", {"minimumTrust": "high"})
    monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ['PATH']}")
    with nginx(root, tmp_path / "nginx") as server:
        monkeypatch.setenv("ATIP_REGISTRIES", server.url)
        denied = run_call("oldtool", "--tool", "oldtool", "--policy", str(high))
        assert denied.exit_code == 30, denied.output
        [reason] = envelope_of(denied)["result"]["reasons"]
        assert reason == (
            f"oldtool's metadata is trusted low (a shim from {server.url}, unsigned); the "
            "policy requires high"
        )
        verified = envelope_of(atip("verify", "oldtool"))
        assert verified["result"]["sourceTrust"] == "low"
        # the user's registries.json is what raises a registry's trust
        config = tmp_path / "config" / "agent-tools"
        config.mkdir(parents=True)
        write(config / "registries.json", {"registries": [{"url": server.url, "trust": "high"}]})
        allowed = run_call("oldtool", "--tool", "oldtool", "--policy", str(high))
        assert allowed.exit_code == 0, allowed.output
        assert envelope_of(atip("verify", "oldtool"))["result"]["sourceTrust"] == "high"
    runs = (tmp_path / "oldtool.log").read_text().splitlines()
    assert [r for r in runs if r != "--agent"] == [""]  # probed, then run once


def test_an_organization_registry_policy_applies_to_every_call(keeper, tmp_path, monkeypatch):
    """§4.8: a registry built with a policy.json serves it, and every `atip run` with
    that registry configured is narrowed under it (it can only add rules); a policy the
    registry names but cannot serve stops the command: nothing runs (E1009)."""
    src = tmp_path / "src"
    shim = {
        "atip": {"version": "0.6"},
        "binary": {"hash": "sha256:" + "a" * 64, "name": "other", "version": "1.0"},
        "description": "Another tool",
    }
    src.mkdir()
    write(src / "other.json", shim)
    org = {
        "policy": {"organization": "Acme", "execution": {"requireConfirmation": {"network": True}}}
    }
    write(src / "policy.json", org)
    root = tmp_path / "site"
    assert atip("registry", "build", str(src), str(root)).exit_code == 0
    before = run_call("keeper_fetch", "--tool", "keeper")
    assert before.exit_code == 0, before.output
    with nginx(root, tmp_path / "nginx") as server:
        monkeypatch.setenv("ATIP_REGISTRIES", server.url)
        asked = run_call("keeper_fetch", "--tool", "keeper")
        assert asked.exit_code == 2, asked.output
        [reason] = envelope_of(asked)["result"]["reasons"]
        assert reason == "not confirmed: network: the policy wants it confirmed"
        assert run_call("keeper_list", "--tool", "keeper").exit_code == 0
        (root / "policy.json").write_text('{"policy": {"organisation": "typo"}}')
        monkeypatch.setenv("ATIP_REFRESH", "1")
        broken = run_call("keeper_list", "--tool", "keeper")
    assert broken.exit_code != 0
    assert envelope_of(broken)["error"]["code"] == "E1009"
    assert "policy.json" in envelope_of(broken)["error"]["message"]
    assert keeper.runs == ["fetch", "list"]


def test_a_document_given_is_trusted_low_whatever_it_claims(keeper, tmp_path):
    claims = write(tmp_path / "keeper.json", {**KEEPER, "trust": VENDOR})
    policy = write(tmp_path / "p.json", {"minimumTrust": "medium"})
    given = run_call("keeper_list", "--tool", str(claims), "--policy", str(policy))
    assert given.exit_code == 30
    assert "trusted low (a document given to atipkit)" in envelope_of(given)["error"]["message"]
    probed = run_call("keeper_list", "--tool", "keeper", "--policy", str(policy))
    assert probed.exit_code == 0, probed.output  # the binary's own --agent: high
    assert keeper.runs == ["list"]


# -- 4. policy files are read strictly ---------------------------------------------------------


def problems_of(data: Any, **kwargs: Any) -> list[tuple[str, str]]:
    with pytest.raises(PolicyFileError) as caught:
        read_policy(json.dumps(data), "p.json", **kwargs)
    return [(p.location, p.message) for p in caught.value.problems]


def test_an_unknown_key_is_an_error_with_its_location_and_a_suggestion():
    assert problems_of({"alowNetwork": False}) == [
        ("$.alowNetwork", "unknown key 'alowNetwork'; did you mean 'allowNetwork'?")
    ]
    assert problems_of({"delegation": {"deniedComands": ["gh repo delete"]}}) == [
        (
            "$.delegation.deniedComands",
            "unknown key 'deniedComands'; did you mean 'deniedCommands'?",
        )
    ]
    # every problem at once, values and keys of closed sets too
    assert problems_of(
        {
            "maxCost": "hgh",
            "delegation": {"effectRestrictions": {"destructiv": False}},
            "confirmEffects": ["netwrk"],
            "parent": {},
        }
    ) == [
        ("$.maxCost", "unknown value 'hgh'; did you mean 'high'?"),
        (
            "$.delegation.effectRestrictions.destructiv",
            "unknown key 'destructiv'; did you mean 'destructive'?",
        ),
        ("$.confirmEffects[0]", "unknown value 'netwrk'; did you mean 'network'?"),
        ("$.parent", "unknown key 'parent'; expected one of: " + ", ".join(_policy_keys())),
    ]


def test_a_near_miss_of_two_keys_names_both():
    """`allowFilesystem: false` meant to forbid writing and deleting; steering its author
    to one of them would leave the other allowed."""
    assert problems_of({"allowFilesystem": False}) == [
        (
            "$.allowFilesystem",
            "unknown key 'allowFilesystem'; did you mean 'allowFilesystemWrite' or "
            "'allowFilesystemDelete'?",
        )
    ]
    assert problems_of({"delegation": {"effectRestrictions": {"filesystem": False}}}) == [
        (
            "$.delegation.effectRestrictions.filesystem",
            "unknown key 'filesystem'; did you mean 'filesystem.write' or 'filesystem.delete'?",
        )
    ]
    assert problems_of({"allowFileSystemDelete": False}) == [  # one clearly closest
        (
            "$.allowFileSystemDelete",
            "unknown key 'allowFileSystemDelete'; did you mean 'allowFilesystemDelete'?",
        )
    ]


def _policy_keys() -> list[str]:
    import msgspec

    return [f.encode_name for f in msgspec.structs.fields(Policy) if f.name != "parent"]


def test_wrong_types_are_located():
    assert problems_of({"allowNetwork": "no"}) == [("$.allowNetwork", "Expected `bool`, got `str`")]
    assert problems_of({"delegation": {"allowedTools": "gh"}}) == [
        ("$.delegation.allowedTools", "Expected `array | null`, got `str`")
    ]
    assert problems_of([]) == [("$", "Expected `object`, got `array`")]


def test_a_file_of_thousands_of_unknown_keys_costs_little_to_refuse(keeper, tmp_path):
    """Each unknown key is compared with every known one, and its problem lists them all:
    a file of 40 000 short keys was megabytes of problems and seconds of difflib."""
    hostile = {f"allowNet{i:x}": 0 for i in range(40_000)}
    found = problems_of(hostile)
    assert len(found) == 51
    assert found[:1] == [("$.allowNet0", "unknown key 'allowNet0'; did you mean 'allowNetwork'?")]
    assert found[-1] == ("$", "more than 50 problems: the rest are not listed")
    result = run_call("keeper_list", "--policy", str(write(tmp_path / "p.json", hostile)))
    assert result.exit_code == 65
    assert len(result.output) < 32_000
    assert keeper.runs == []


def test_extension_keys_are_ignored():
    assert read_policy('{"x-acme": {"owner": "me"}, "allowNetwork": false}').allow_network is False


def test_atip_run_refuses_a_misspelt_policy_and_runs_nothing(keeper, tmp_path):
    typo = write(tmp_path / "typo.json", {"alowNetwork": False})
    result = run_call("keeper_fetch", "--tool", "keeper", "--policy", str(typo))
    assert result.exit_code == 65, result.output
    error = envelope_of(result)["error"]
    assert error["message"] == (
        f"--policy {typo}: not a policy: $.alowNetwork: unknown key 'alowNetwork'; "
        "did you mean 'allowNetwork'?"
    )
    assert error["details"]["problems"][0]["location"] == "$.alowNetwork"
    spelt = write(tmp_path / "spelt.json", {"allowNetwork": False})
    denied = run_call("keeper_fetch", "--tool", "keeper", "--policy", str(spelt))
    assert denied.exit_code == 30
    assert keeper.runs == []


def test_atip_verify_and_config_refuse_misspelt_trust_policies(keeper, tmp_path):
    typo = write(tmp_path / "trust.json", {"requireSignatur": True})
    result = atip("verify", "keeper", "--policy", str(typo))
    assert result.exit_code == 65
    assert "did you mean 'requireSignature'?" in envelope_of(result)["error"]["message"]
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True)
    write(config / "config.json", {"trust": {"minisignKey": ["k.pub"]}})
    broken = atip("verify", "keeper")
    assert broken.exit_code == 2
    error = envelope_of(broken)["error"]
    assert error["code"] == "E1009"
    assert "did you mean 'minisignKeys'?" in error["message"]
    assert read_trust_policy('{"requireSignature": true}').require_signature


def test_atip_verify_reads_the_trust_of_the_policy_file_atip_run_reads(keeper, tmp_path):
    """One --policy file for both commands: `atip verify` takes its `trust`."""
    secret, public = minisign_keys(tmp_path)
    signatures.minisign_sign(keeper.path, secret)
    policy = write(
        tmp_path / "policy.json",
        {"minimumVerification": "VERIFIED", "trust": {"minisignKeys": [str(public)]}},
    )
    verified = atip("verify", "keeper", "--policy", str(policy))
    assert verified.exit_code == 0, verified.output
    assert envelope_of(verified)["result"]["level"] == "VERIFIED"
    assert run_call("keeper_list", "--tool", "keeper", "--policy", str(policy)).exit_code == 0
    typo = write(tmp_path / "typo.json", {"allowNetwork": False, "trust": {"minisignKey": []}})
    refused = atip("verify", "keeper", "--policy", str(typo))
    assert refused.exit_code == 65
    assert "$.trust.minisignKey" in envelope_of(refused)["error"]["message"]
    assert read_trust_policy('{"allowNetwork": false}') == read_trust_policy("{}")


# -- 4. an organization's policy.json (RFC 0.6 §4.8) ---------------------------------------------


def org(**policy: Any) -> dict[str, Any]:
    return {"policy": {"version": "1", "organization": "Acme Corp", **policy}}


def test_an_organization_policy_maps_every_field_the_rfc_defines():
    policy = read_policy(
        json.dumps(
            {
                "registry": "https://atip.internal.acme.com",
                **org(
                    approval={"mode": "allowlist", "note": "only ours"},
                    trust={"requireSignatures": True, "allowedSigners": ["secops@acme.com"]},
                    execution={
                        "requireConfirmation": {"destructive": True, "network": True},
                        "auditAllCalls": True,
                    },
                ),
            }
        )
    )
    assert policy.approved_registries == ["https://atip.internal.acme.com"]
    assert policy.trust is not None
    assert (policy.trust.require_signature, policy.trust.allowed_signers) == (
        True,
        ["secops@acme.com"],
    )
    assert (policy.allow_destructive, policy.confirm_effects) == (False, ["network"])
    assert policy.audit_all_calls is True
    # §3.2.2 writes the trust fields on the policy itself, in the singular
    flat = read_policy(json.dumps(org(requireSignature=True, minimumSlsaLevel=2)))
    assert flat.trust is not None
    assert (flat.trust.require_signature, flat.trust.minimum_slsa_level) == (True, 2)
    assert flat.minimum_verification == "VERIFIED"


def test_an_organization_policy_is_read_strictly():
    assert problems_of(org(execution={"requireConfirmaton": {"destructive": True}})) == [
        (
            "$.policy.execution.requireConfirmaton",
            "unknown key 'requireConfirmaton'; did you mean 'requireConfirmation'?",
        )
    ]
    assert problems_of(org(approval={"mode": "allowlst"})) == [
        ("$.policy.approval.mode", "unknown value 'allowlst'; did you mean 'allowlist'?")
    ]
    [(where, message)] = problems_of(org(approval={"mode": "allowlist"}))
    assert where == "$.policy.approval.mode"
    assert "names none" in message
    assert problems_of({"policy": {"version": "2"}}) == [
        ("$.policy.version", "policy version '2' is not one atipkit reads (1)")
    ]
    # served by the registry it belongs to, an allowlist knows its registry
    served = read_policy(json.dumps(org(approval={"mode": "allowlist"})), registry="https://r")
    assert served.approved_registries == ["https://r"]


def test_atip_run_enforces_an_organization_policy(keeper, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    confirming = write(
        tmp_path / "org.json",
        org(execution={"requireConfirmation": {"network": True}, "auditAllCalls": True}),
    )
    asked = run_call("keeper_fetch", "--tool", "keeper", "--policy", str(confirming))
    assert asked.exit_code == 2, asked.output  # no terminal to ask, no --yes
    assert envelope_of(asked)["error"]["code"] == "E1006"
    assert keeper.runs == []
    done = run_call("keeper_fetch", "--tool", "keeper", "--policy", str(confirming), "--yes")
    assert done.exit_code == 0, done.output
    assert keeper.runs == ["fetch"]
    audit = tmp_path / "state" / "agent-tools" / "audit.jsonl"
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(line["path"], line["decision"]) for line in lines] == [
        (["fetch"], "deny"),
        (["fetch"], "allow"),
    ]
    approving = write(
        tmp_path / "approve.json",
        {"registry": "https://atip.internal.acme.com", **org(approval={"mode": "allowlist"})},
    )
    refused = run_call("keeper_list", "--tool", "keeper", "--policy", str(approving))
    assert refused.exit_code == 30
    assert "keeper is not approved" in envelope_of(refused)["error"]["message"]
    signing = write(tmp_path / "sign.json", org(trust={"requireSignatures": True}))
    unsigned = run_call("keeper_list", "--tool", "keeper", "--policy", str(signing))
    assert unsigned.exit_code == 30
    assert "no verified signature vouches" in envelope_of(unsigned)["error"]["message"]
    assert keeper.runs == ["fetch"]


def test_a_policy_that_audits_every_call_denies_calls_nobody_audits(keeper):
    tool = keeper.tool
    outcome = Executor(tool, policy=Policy(audit_all_calls=True)).execute(
        call_of(tool, "keeper_list")
    )
    assert outcome.decision.reasons == ["the policy requires an audit log of every call"]
    assert keeper.runs == []


# -- 5. one decision, asked by the validator and the executor -----------------------------------


POLICIES = [
    Policy(),
    Policy(allow_destructive=True),
    Policy(allow_network=False),
    Policy(minimum_trust="high"),
    Policy(confirm_effects=["network"]),
    Policy(delegation=Delegation(denied_commands=["keeper wipe"])),
    Policy(delegation=Delegation(effect_restrictions={"network": False})),
    Policy(allow_destructive=True).narrow(Policy(delegation=Delegation(allowed_tools=["gh"]))),
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", ["keeper_list", "keeper_fetch", "keeper_wipe"])
def test_the_validator_and_the_executor_give_one_answer(keeper, policy, name):
    tool = keeper.tool
    call = call_of(tool, name)
    evidence = {"keeper": Evidence(origin="native")}
    problems = Validator(tool, policy, evidence=evidence).check(call)
    outcome = Executor(tool, policy=policy, evidence=evidence).execute(call, dry_run=True)
    decision = outcome.decision
    if decision.action == "deny" and decision.reasons[0].startswith("not confirmed"):
        expected = "confirm"  # the executor asked nobody
    else:
        expected = decision.action
    by_problems = (
        "deny" if any(p.is_error for p in problems) else "confirm" if problems else "allow"
    )
    assert by_problems == expected
    direct = decide(policy, tool, call.path or (), call.values, evidence=evidence["keeper"])
    assert [(f.code, f.message) for f in direct.findings] == [(p.code, p.message) for p in problems]


def test_the_validator_applies_delegation_and_paths_as_the_executor_does(keeper):
    tool = atipkit.from_dict(
        {
            **KEEPER,
            "commands": {
                **KEEPER["commands"],
                "read": {
                    "description": "Read a file",
                    "arguments": [{"name": "file", "type": "file", "description": "File"}],
                    "effects": {"network": False, "filesystem": {"write": False}},
                },
            },
        }
    )
    sub = Policy(delegation=Delegation(denied_commands=["keeper wipe"]), path_deny=["/etc/*"])
    validator = Validator(tool, sub)
    assert [p.code for p in validator.check(call_of(tool, "keeper_wipe"))] == [
        "policy.destructive",
        "policy.delegation",
    ]
    assert [
        p.message for p in validator.check(call_of(tool, "keeper_read", {"file": "/etc/shadow"}))
    ] == ["file: /etc/shadow is a denied path"]


def test_path_rules_judge_the_file_a_value_names_not_its_spelling(tmp_path, monkeypatch):
    """A model's value goes to argv without a shell, and the kernel follows symlinks: a
    rule must hold for the file opened, however the value spells it."""
    reader = atipkit.from_dict(
        {
            **KEEPER,
            "commands": {
                "read": {
                    "description": "Read a file",
                    "arguments": [{"name": "file", "type": "file", "description": "File"}],
                    "effects": {"network": False, "filesystem": {"write": False}},
                }
            },
        }
    )
    secret, work, home = tmp_path / "secret", tmp_path / "work", tmp_path / "home"
    for directory in (secret, work / "~", home):
        directory.mkdir(parents=True)
    (work / "link").symlink_to(secret)
    (home / "projects").symlink_to(work)
    monkeypatch.setenv("HOME", str(home))

    def verdict(policy: Policy, value: str) -> list[str]:
        call = call_of(reader, "keeper_read", {"file": value})
        found = decide(policy, reader, ("read",), call.values, cwd=str(work))
        return found.reasons

    guarded = Policy(path_deny=[f"{secret}/*"])
    assert verdict(guarded, f"{secret}/key") == [f"file: {secret}/key is a denied path"]
    assert verdict(guarded, "link/key") == [f"file: {secret}/key is a denied path"]
    # `~` is a directory here: `~/../../secret/key` is tmp/secret/key to the kernel
    assert verdict(guarded, "~/../../secret/key") == [f"file: {secret}/key is a denied path"]
    assert verdict(guarded, "notes.txt") == []
    # a glob written through a symlink allows what it leads to, and nothing else
    fenced = Policy(path_allow=["~/projects/*"])
    assert verdict(fenced, "notes.txt") == []
    assert verdict(fenced, "link/key") == [f"file: {secret}/key is outside the allowed paths"]


def test_decision_of_keeps_the_strictest_and_every_finding():
    from atipkit.policy import Finding

    findings = [
        Finding("confirm", "policy.destructive", "destructive: confirm first"),
        Finding("deny", "policy.network", "uses the network; not allowed"),
    ]
    decision = Decision.of(findings)
    assert (decision.action, decision.reasons) == ("deny", ["uses the network; not allowed"])
    assert decision.findings == findings
    assert Decision.of([]).action == "allow"


def test_verified_levels_decide_with_their_reason():
    tool = atipkit.from_dict(KEEPER)
    strict = Policy(minimum_verification="VERIFIED")
    unsigned = decide(
        strict,
        tool,
        ("list",),
        evidence=Evidence(level=TrustLevel.UNSIGNED, verification="no signature"),
    )
    assert unsigned.reasons == [
        "the binary is UNSIGNED (no signature); the policy requires VERIFIED"
    ]
    unknown = decide(strict, tool, ("list",), evidence=Evidence())
    assert unknown.reasons == ["the binary was not verified; the policy requires VERIFIED"]
    compromised = decide(Policy(), tool, ("list",), evidence=Evidence(level=TrustLevel.COMPROMISED))
    assert compromised.action == "deny"
    assert decide(strict, tool, ("list",), evidence=Evidence(level=TrustLevel.VERIFIED)).allowed


@pytest.mark.parametrize("wanted", ["0.9", "1.0", "v0.3"])
def test_metadata_for_a_newer_agent_is_confirmed_before_it_runs(tmp_path, monkeypatch, wanted):
    """§3.2.1 `minAgentVersion` above what atipkit implements (or unreadable): its
    safety may be stated in terms atipkit does not know, so even a read-only call asks
    (decision 405); validation says why."""
    document = {**KEEPER, "atip": {"version": "0.6", "minAgentVersion": wanted}}
    keeper = Keeper(tmp_path, document)
    monkeypatch.setenv("PATH", f"{keeper.bin}{os.pathsep}{os.environ['PATH']}")
    asked = run_call("keeper_list", "--tool", "keeper")
    assert asked.exit_code == 2, asked.output
    [reason] = envelope_of(asked)["result"]["reasons"]
    assert f"ATIP {wanted} or later" in reason
    assert keeper.runs == []
    assert run_call("keeper_list", "--tool", "keeper", "--yes").exit_code == 0
    assert keeper.runs == ["list"]
    [problem] = atipkit.validate(json.dumps(document).encode()).problems
    assert (problem.code, problem.severity) == ("version.agent-too-old", "warning")


def test_metadata_for_an_older_agent_runs_as_before(keeper):
    """The RFC's own example asks for 0.3: atipkit, at 0.6, is new enough."""
    keeper.document = {**KEEPER, "atip": {"version": "0.6", "minAgentVersion": "0.3"}}
    tool = keeper.tool
    assert decide(Policy(), tool, ("list",), evidence=Evidence(level=TrustLevel.UNSIGNED)).allowed
    assert atipkit.validate(json.dumps(keeper.document).encode()).problems == []


# -- §11.1: untrusted tools run in the sandbox when the policy asks ------------------------


def escaping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Keeper:
    """A keeper whose every run also writes outside its working directory."""
    found = Keeper(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    text = found.path.read_text().replace(
        'echo "did $1"\n', f'echo escaped > {outside}/mark 2>/dev/null; echo "did $1"\n'
    )
    found.path.write_text(text)
    monkeypatch.setenv("PATH", f"{found.bin}{os.pathsep}{os.environ['PATH']}")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # the working directory: the one writable place
    return found


def namespaces() -> bool:
    from atipkit import sandbox

    return sandbox.isolation() != "none"


@pytest.mark.skipif("not namespaces()", reason="the kernel allows no namespaces here")
@pytest.mark.parametrize("isolate", ["always", "unverified"])
def test_the_policy_isolates_untrusted_tools(tmp_path, monkeypatch, isolate):
    escaping(tmp_path, monkeypatch)
    policy = write(tmp_path / "isolate.json", {"isolate": isolate})
    result = run_call("keeper_list", "--tool", "keeper", "--policy", str(policy))
    assert result.exit_code == 0, result.output
    report = envelope_of(result)["result"]
    assert report["isolation"] in ("bwrap", "unshare")
    assert report["text"] == "did list\n"
    assert not (tmp_path / "outside" / "mark").exists()  # read-only outside cwd
    plain = run_call("keeper_list", "--tool", "keeper")
    assert "isolation" not in envelope_of(plain)["result"]
    assert (tmp_path / "outside" / "mark").exists()  # without the policy, it escapes


def test_a_verified_binary_is_not_isolated_by_unverified(keeper):
    tool = keeper.tool
    call = call_of(tool, "keeper_list")
    policy = Policy(isolate="unverified")
    verified = decide(policy, tool, ("list",), evidence=Evidence(level=TrustLevel.VERIFIED))
    unsigned = decide(policy, tool, ("list",), evidence=Evidence(level=TrustLevel.UNSIGNED))
    assert (verified.isolate, unsigned.isolate) == (False, True)
    narrowed = Policy().narrow(Policy(isolate="always"))  # a subagent asks: it holds
    assert decide(narrowed, tool, call.path or (), evidence=Evidence()).isolate


def test_without_namespaces_an_isolated_call_is_not_run(tmp_path, monkeypatch):
    found = escaping(tmp_path, monkeypatch)
    monkeypatch.setenv("ATIP_SANDBOX", "none")
    policy = write(tmp_path / "isolate.json", {"isolate": "always"})
    result = run_call("keeper_list", "--tool", "keeper", "--policy", str(policy))
    assert result.exit_code == 40, result.output
    assert "isolation was asked for and cannot be given" in envelope_of(result)["error"]["message"]
    assert found.runs == []
    assert not (tmp_path / "outside" / "mark").exists()
