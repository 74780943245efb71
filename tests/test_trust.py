"""Trust: real signatures made in the tests, real Sigstore bundles verified offline,
SLSA provenance signed with test keys, and the trust levels they add up to."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

import atipkit
from atipkit.trust import signatures as sig
from atipkit.trust.levels import TrustLevel, TrustPolicy, verify_tool
from atipkit.trust.slsa import sign_envelope, verify_provenance
from tests.helpers import (
    SIGSTORE,
    atip,
    envelope_of,
    minimal,
    minisign_keys,
    needs_sigstore,
    ssh_key,
)

GHA = (
    "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
    ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"
)
GHA_ISSUER = "https://token.actions.githubusercontent.com"
GITHUB_ISSUER = "https://github.com/login/oauth"


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture
def shim(tmp_path: Path) -> Path:
    path = tmp_path / "tool.json"
    path.write_text(json.dumps(minimal()))
    return path


# -- minisign and SSH ----------------------------------------------------------------------


def test_minisign_sign_verify_and_a_flipped_byte(tmp_path, shim):
    secret, public = minisign_keys(tmp_path)
    signature = sig.minisign_sign(shim, secret, trusted_comment="shim-maintainers")
    assert signature == Path(f"{shim}.minisig")
    good = sig.minisign_verify(shim, str(public))
    assert (good.ok, good.signer) == (True, "shim-maintainers")
    flip(shim)
    bad = sig.minisign_verify(shim, str(public))
    assert not bad.ok
    assert bad.reason.startswith("signature does not verify")


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_ssh_sign_verify_and_a_flipped_byte(tmp_path, shim):
    key, public = ssh_key(tmp_path, "alice")
    _, other = ssh_key(tmp_path, "mallory")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'alice@example.com namespaces="atip" {public}\n')
    sig.ssh_sign(shim, key)
    assert sig.ssh_verify(shim, allowed, "alice@example.com").ok
    assert not sig.ssh_verify(shim, allowed, "mallory@example.com").ok
    flip(shim)
    bad = sig.ssh_verify(shim, allowed, "alice@example.com")
    assert not bad.ok
    assert "does not verify" in bad.reason
    del other


def test_shim_sign_and_verify_commands(tmp_path, shim):
    secret, public = minisign_keys(tmp_path)
    signed = atip("shim", "sign", str(shim), "--minisign-key", str(secret))
    assert signed.exit_code == 0
    assert envelope_of(signed)["result"] == {
        "file": str(shim),
        "signature": f"{shim}.minisig",
        "method": "minisign",
    }
    ok = atip("shim", "verify", str(shim), "--minisign-key", str(public))
    assert ok.exit_code == 0
    report = envelope_of(ok)["result"]
    assert report["signer"].startswith("timestamp:")  # minisign's default trusted comment
    assert report == {
        "file": str(shim),
        "ok": True,
        "method": "minisign",
        "reason": "",
        "signer": report["signer"],
        "missing": None,
    }
    flip(shim)
    bad = atip("shim", "verify", str(shim), "--minisign-key", str(public))
    assert bad.exit_code == 30
    out = envelope_of(bad)
    assert (out["error"]["code"], out["result"]["ok"]) == ("E2011", False)
    assert out["result"]["reason"].startswith("signature does not verify")
    text = atip("shim", "verify", str(shim), "--minisign-key", str(public), "--text")
    assert text.stdout.startswith(f"{shim}: NOT verified (minisign) — signature does not verify")
    assert "[E2011]" in text.stderr


def test_shim_sign_text_output_is_the_signature_path(tmp_path, shim):
    secret, _ = minisign_keys(tmp_path)
    signed = atip("shim", "sign", str(shim), "--minisign-key", str(secret), "--text")
    assert (signed.exit_code, signed.stdout) == (0, f"{shim}.minisig\n")


def test_shim_sign_and_verify_usage_and_missing_files(tmp_path, shim, monkeypatch):
    secret, public = minisign_keys(tmp_path)
    neither = atip("shim", "sign", str(shim))
    assert neither.exit_code == 2
    assert "exactly one of --minisign-key and --ssh-key" in envelope_of(neither)["error"]["message"]
    both = atip("shim", "sign", str(shim), "--minisign-key", str(secret), "--ssh-key", str(secret))
    assert both.exit_code == 2
    no_shim = atip("shim", "sign", str(tmp_path / "none.json"), "--minisign-key", str(secret))
    assert (no_shim.exit_code, envelope_of(no_shim)["error"]["code"]) == (10, "E3001")
    no_key = atip("shim", "sign", str(shim), "--minisign-key", str(tmp_path / "none.key"))
    assert no_key.exit_code == 10
    monkeypatch.delenv("ATIP_TEST_UNSET", raising=False)
    unset = atip(
        "shim",
        "sign",
        str(shim),
        "--minisign-key",
        str(secret),
        "--password-env",
        "ATIP_TEST_UNSET",
    )
    assert unset.exit_code == 2
    assert "ATIP_TEST_UNSET is not set" in envelope_of(unset)["error"]["message"]
    not_a_key = tmp_path / "not.key"
    not_a_key.write_text("hello\n")
    unusable = atip("shim", "sign", str(shim), "--minisign-key", str(not_a_key))
    assert (unusable.exit_code, envelope_of(unusable)["error"]["code"]) == (2, "E1002")
    assert not Path(f"{shim}.minisig").exists()
    unsigned = atip("shim", "verify", str(shim), "--minisign-key", str(public))
    assert unsigned.exit_code == 10  # no FILE.minisig beside it
    assert envelope_of(unsigned)["result"]["reason"] == f"missing file: {shim}.minisig"
    assert envelope_of(unsigned)["result"]["missing"] == f"{shim}.minisig"
    how = atip("shim", "verify", str(shim))
    assert (how.exit_code, envelope_of(how)["error"]["code"]) == (2, "E1001")
    who = atip("shim", "verify", str(shim), "--allowed-signers", str(public))
    assert "--allowed-signers needs --identity" in envelope_of(who)["error"]["message"]


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_shim_sign_and_verify_commands_with_ssh(tmp_path, shim):
    key, public = ssh_key(tmp_path, "alice")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'alice@example.com namespaces="atip" {public}\n')
    signed = atip("shim", "sign", str(shim), "--ssh-key", str(key))
    assert signed.exit_code == 0, signed.output
    assert envelope_of(signed)["result"]["signature"] == f"{shim}.sig"
    args = ["shim", "verify", str(shim), "--allowed-signers", str(allowed)]
    ok = atip(*args, "--identity", "alice@example.com", "--text")
    assert (ok.exit_code, ok.stdout) == (0, f"{shim}: verified (ssh); signer: alice@example.com\n")
    other = atip(*args, "--identity", "mallory@example.com")
    assert (other.exit_code, envelope_of(other)["error"]["code"]) == (30, "E2011")
    not_a_key = tmp_path / "not-a-key"
    not_a_key.write_text("hello\n")
    failed = atip("shim", "sign", str(shim), "--ssh-key", str(not_a_key))
    assert failed.exit_code == 40  # ssh-keygen refused it
    assert "ssh-keygen could not sign" in envelope_of(failed)["error"]["message"]


# -- Sigstore, offline ---------------------------------------------------------------------


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def root(name: str) -> Path:
    return SIGSTORE / f"trusted_root.{name}.json"


MESSAGE_SETS = [
    # set, artifact, bundle, identity, issuer, good root, foreign root
    (
        "S1",
        "staging-v03-message/bundle_v3.txt",
        "staging-v03-message/bundle_v3.txt.sigstore",
        "william@yossarian.net",
        GITHUB_ISSUER,
        "staging",
        "production",
    ),
    (
        "S2",
        "staging-rekor-v2-message-tsa/staging-rekor-v2.txt",
        "staging-rekor-v2-message-tsa/staging-rekor-v2.txt.sigstore.json",
        "jku@goto.fi",
        GITHUB_ISSUER,
        "staging",
        "production",
    ),
    (
        "P1",
        "production-v03-message-gha/a.txt",
        "production-v03-message-gha/bundle.sigstore.json",
        GHA,
        GHA_ISSUER,
        "production",
        "staging",
    ),
]


@needs_sigstore
@pytest.mark.parametrize("case", MESSAGE_SETS, ids=[c[0] for c in MESSAGE_SETS])
def test_sigstore_message_bundles(case, no_network):
    _, artifact, bundle, identity, issuer, good, foreign = case
    artifact, bundle = SIGSTORE / artifact, SIGSTORE / bundle
    assert sig.sigstore_verify(
        artifact, bundle, identity=identity, issuer=issuer, trusted_root=root(good)
    ).ok
    tampered = Path(f"{artifact}.tampered")
    result = sig.sigstore_verify(
        tampered, bundle, identity=identity, issuer=issuer, trusted_root=root(good)
    )
    assert not result.ok
    assert "digest mismatch" in result.reason
    wrong = sig.sigstore_verify(
        artifact,
        bundle,
        identity="someone-else@example.com",
        issuer=issuer,
        trusted_root=root(good),
    )
    assert "SANs do not match" in wrong.reason
    elsewhere = sig.sigstore_verify(
        artifact, bundle, identity=identity, issuer=issuer, trusted_root=root(foreign)
    )
    assert not elsewhere.ok


@needs_sigstore
def test_sigstore_wrong_issuer_and_shipped_root(no_network):
    artifact = SIGSTORE / "staging-v03-message/bundle_v3.txt"
    bundle = SIGSTORE / "staging-v03-message/bundle_v3.txt.sigstore"
    result = sig.sigstore_verify(
        artifact,
        bundle,
        identity="william@yossarian.net",
        issuer="https://accounts.google.com",
        trusted_root=root("staging"),
    )
    assert "OIDCIssuer does not match" in result.reason
    p1 = SIGSTORE / "production-v03-message-gha"
    assert sig.sigstore_verify(
        p1 / "a.txt", p1 / "bundle.sigstore.json", identity=GHA, issuer=GHA_ISSUER
    ).ok  # the sigstore package's own root


@needs_sigstore
@pytest.mark.parametrize(
    ("bundle", "good", "bad_roots"),
    [
        (
            "staging-rekor-v2-dsse-intoto/a.dsse.staging-rekor-v2.txt.sigstore.json",
            "staging",
            ["staging.stale", "production"],
        ),
        ("production-dsse-intoto/bundle.sigstore.json", "production", ["staging"]),
    ],
)
def test_sigstore_dsse_bundles_carry_provenance(bundle, good, bad_roots, no_network):
    path = SIGSTORE / bundle
    result, statement = sig.sigstore_verify_dsse(
        path, identity=GHA, issuer=GHA_ISSUER, trusted_root=root(good)
    )
    assert result.ok
    subject = path.parent / "a.txt"
    from atipkit.trust.digest import sha256_file
    from atipkit.trust.slsa import check_statement

    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    builder = statement["predicate"]["runDetails"]["builder"]["id"]
    assert check_statement(
        statement, artifact_digest=sha256_file(subject), allowed_builders=[builder], claimed_level=3
    ).ok
    mismatch = check_statement(
        statement, artifact_digest="sha256:" + "0" * 64, allowed_builders=[builder], claimed_level=3
    )
    assert mismatch.reason == "digest"
    for bad in bad_roots:
        assert not sig.sigstore_verify_dsse(
            path, identity=GHA, issuer=GHA_ISSUER, trusted_root=root(bad)
        )[0].ok
    assert not sig.sigstore_verify_dsse(
        path, identity="https://github.com/evil/x", issuer=GHA_ISSUER, trusted_root=root(good)
    )[0].ok
    assert not sig.sigstore_verify(
        subject, path, identity=GHA, issuer=GHA_ISSUER, trusted_root=root(good)
    ).ok  # DSSE is not a message sig


# -- SLSA ----------------------------------------------------------------------------------

BUILDER = "https://github.com/slsa-framework/slsa-github-generator/.github/workflows/builder.yml"


def statement(digest: str, predicate_type: str = "https://slsa.dev/provenance/v1") -> dict:
    predicate = (
        {"runDetails": {"builder": {"id": BUILDER}}}
        if predicate_type.endswith("v1")
        else {"builder": {"id": BUILDER}}
    )
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": "tool", "digest": {"sha256": digest}}],
        "predicateType": predicate_type,
        "predicate": predicate,
    }


@pytest.fixture
def keys():
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    return ed25519.Ed25519PrivateKey.generate(), ec.generate_private_key(ec.SECP256R1())


def slsa_check(key, envelope, digest, **change):
    args = {
        "public_keys": [key.public_key()],
        "artifact_digest": f"sha256:{digest}",
        "allowed_builders": [BUILDER],
        "claimed_level": 3,
        "minimum_level": 2,
        **change,
    }
    return verify_provenance(envelope, **args)


@pytest.mark.parametrize(
    "predicate", ["https://slsa.dev/provenance/v1", "https://slsa.dev/provenance/v0.2"]
)
def test_slsa_good_and_each_failure_with_its_reason(keys, predicate):
    digest = "ab" * 32
    for key, stranger in ((keys[0], keys[1]), (keys[1], keys[0])):
        envelope = sign_envelope(statement(digest, predicate), key)
        assert slsa_check(key, envelope, digest).ok
        assert (
            slsa_check(key, envelope, digest, artifact_digest="sha256:" + "cd" * 32).reason
            == "digest"
        )
        assert (
            slsa_check(key, envelope, digest, allowed_builders=["https://example.com/other"]).reason
            == "builder"
        )
        assert slsa_check(key, envelope, digest, claimed_level=1).reason == "level"
        tampered = dict(envelope, payload=envelope["payload"][:-4] + "AAAA")
        assert slsa_check(key, tampered, digest).reason == "signature"
        assert (
            slsa_check(key, envelope, digest, public_keys=[stranger.public_key()]).reason
            == "signature"
        )


def test_a_non_slsa_predicate_is_refused(keys):
    envelope = sign_envelope(statement("ab" * 32, "https://example.com/other"), keys[0])
    result = verify_provenance(
        envelope,
        public_keys=[keys[0].public_key()],
        artifact_digest="sha256:" + "ab" * 32,
        allowed_builders=[BUILDER],
        claimed_level=3,
    )
    assert result.reason == "predicate"


@pytest.mark.parametrize("signed", [["not", "a", "statement"], "text", 7, None])
def test_a_signed_payload_that_is_no_statement_is_refused(keys, signed):
    """A trusted key may sign any JSON: what is not an object is refused, never read."""
    envelope = sign_envelope(signed, keys[0])
    result = slsa_check(keys[0], envelope, "ab" * 32)
    assert (result.ok, result.reason) == (False, "signature")
    assert "the signed statement is not a JSON object" in result.message


# -- trust levels --------------------------------------------------------------------------


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    path = tmp_path / "tool"
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o755)
    return path


def document(**trust) -> atipkit.Tool:
    return atipkit.from_dict(minimal(trust=trust))


def test_levels(tmp_path, binary, keys):
    from atipkit.trust.digest import sha256_file

    digest = sha256_file(binary)
    assert verify_tool(binary, document()).level is TrustLevel.UNSIGNED
    bad = document(integrity={"checksum": "sha256:" + "0" * 64})
    assert verify_tool(binary, bad).level is TrustLevel.COMPROMISED
    declared = document(
        integrity={
            "checksum": digest,
            "signature": {"type": "cosign", "identity": "x", "issuer": "y"},
        }
    )
    report = verify_tool(binary, declared)
    assert report.level is TrustLevel.UNVERIFIED  # declared, no bundle here
    secret, public = minisign_keys(tmp_path)
    sig.minisign_sign(binary, secret)
    policy = TrustPolicy(minisign_keys=[str(public)])
    assert (
        verify_tool(binary, document(integrity={"checksum": digest}), policy).level
        is TrustLevel.VERIFIED
    )
    shim = atipkit.from_dict(
        minimal(binary={"hash": "sha256:" + "1" * 64, "name": "t", "version": "1.0"})
    )
    assert verify_tool(binary, shim, policy).level is TrustLevel.COMPROMISED
    from cryptography.hazmat.primitives import serialization

    pem = tmp_path / "provenance.pub"
    pem.write_bytes(
        keys[0]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    Path(f"{binary}.intoto.json").write_text(
        json.dumps(sign_envelope(statement(digest.removeprefix("sha256:")), keys[0]))
    )
    with_provenance = document(provenance={"slsaLevel": 3, "builder": BUILDER})
    strict = TrustPolicy(
        minisign_keys=[str(public)], provenance_keys=[str(pem)], minimum_slsa_level=3
    )
    assert verify_tool(binary, with_provenance, strict).level is TrustLevel.VERIFIED
    too_low = document(provenance={"slsaLevel": 2, "builder": BUILDER})
    report = verify_tool(binary, too_low, strict)
    assert report.level is TrustLevel.PROVENANCE_FAIL
    assert any(c.name == "provenance" and c.detail.startswith("level") for c in report.checks)


def test_atip_verify_exit_codes(tmp_path, binary, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("ATIP_CACHE_DIR", str(tmp_path / "cache"))
    from atipkit.trust.digest import sha256_file

    good = tmp_path / "good.json"
    good.write_text(json.dumps(minimal(trust={"integrity": {"checksum": sha256_file(binary)}})))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(minimal(trust={"integrity": {"checksum": "sha256:" + "0" * 64}})))
    result = atip("verify", str(binary), "--metadata", str(good))
    assert result.exit_code == 30  # not compromised, but unsigned
    out = envelope_of(result)
    assert (out["error"]["code"], out["result"]["level"]) == ("E2011", "UNSIGNED")
    assert out["result"]["binary"] == str(binary)
    compromised = atip("verify", str(binary), "--metadata", str(bad))
    assert compromised.exit_code == 30
    out = envelope_of(compromised)
    assert (out["error"]["code"], out["result"]["level"]) == ("E2010", "COMPROMISED")
    assert [c["ok"] for c in out["result"]["checks"] if c["name"] == "checksum"] == [False]


def test_atip_verify_verified_and_its_text(tmp_path, binary, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    from atipkit.trust.digest import sha256_file

    secret, public = minisign_keys(tmp_path)
    sig.minisign_sign(binary, secret)
    metadata = tmp_path / "tool.json"
    metadata.write_text(json.dumps(minimal(trust={"integrity": {"checksum": sha256_file(binary)}})))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"minisignKeys": [str(public)]}))
    verified = atip("verify", str(binary), "--metadata", str(metadata), "--policy", str(policy))
    assert verified.exit_code == 0
    assert envelope_of(verified)["result"]["level"] == "VERIFIED"
    text = atip(
        "verify", str(binary), "--metadata", str(metadata), "--policy", str(policy), "--text"
    )
    name = minimal()["name"]
    assert text.stdout.startswith(f"{name}: VERIFIED (metadata source trust: ")
    assert "  checksum: ok — " in text.stdout
    unsigned = atip("verify", str(binary), "--metadata", str(metadata), "--text")
    assert unsigned.stdout.startswith(f"{name}: UNSIGNED (metadata source trust: ")
    assert f"error: {name} is UNSIGNED, not VERIFIED [E2011]" in unsigned.stderr


def test_atip_verify_missing_and_invalid_inputs(tmp_path, binary, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    metadata = tmp_path / "tool.json"
    metadata.write_text(json.dumps(minimal()))
    gone = atip("verify", str(tmp_path / "no-such-tool"), "--metadata", str(metadata))
    assert gone.exit_code == 10
    no_doc = atip("verify", str(binary), "--metadata", str(tmp_path / "none.json"))
    assert no_doc.exit_code == 10
    invalid = tmp_path / "invalid.json"
    invalid.write_text('{"atip": {"version": "0.6"}}')
    assert atip("verify", str(binary), "--metadata", str(invalid)).exit_code == 65
    bad_policy = tmp_path / "policy.json"
    bad_policy.write_text('{"minimumSlsaLevel": "high"}')
    result = atip("verify", str(binary), "--metadata", str(metadata), "--policy", str(bad_policy))
    assert result.exit_code == 65
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "config.json").write_text('{"trust": {"requireSignature": "yes"}}')
    broken = atip("verify", str(binary), "--metadata", str(metadata))
    assert (broken.exit_code, envelope_of(broken)["error"]["code"]) == (2, "E1009")
    assert "config.json" in envelope_of(broken)["error"]["message"]
    undescribed = atip("verify", str(binary))  # no --agent, no shim
    assert (undescribed.exit_code, envelope_of(undescribed)["error"]["code"]) == (10, "E3011")
    nowhere = atip("verify", "no-such-tool-anywhere")
    assert (nowhere.exit_code, envelope_of(nowhere)["error"]["code"]) == (10, "E3001")


# -- where bundles and provenance are read from (issue 19, item 6) ---------------------------

P1 = SIGSTORE / "production-v03-message-gha"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def signed(bundle: str, provenance: str | None = None) -> dict:
    """A document declaring P1's signer, its bundle at `bundle`."""
    signature = {"type": "cosign", "identity": GHA, "issuer": GHA_ISSUER, "bundle": bundle}
    trust: dict = {"integrity": {"signature": signature}}
    if provenance is not None:
        trust["provenance"] = {"url": provenance, "slsaLevel": 3, "builder": BUILDER}
    return minimal(trust=trust)


@pytest.fixture
def p1_binary(tmp_path: Path) -> Path:
    """P1's signed message as a binary, and a policy trusting P1's root."""
    path = tmp_path / "bin" / "tool"
    path.parent.mkdir()
    shutil.copy(P1 / "a.txt", path)
    path.chmod(0o755)
    (tmp_path / "policy.json").write_text(json.dumps({"trustedRoot": str(root("production"))}))
    return path


def verify_with(tmp_path: Path, binary: Path, document: dict) -> tuple[int, dict, str]:
    """`atip verify BINARY --metadata meta/tool.json --policy policy.json`: its status,
    the signature and provenance checks by name, and everything it printed."""
    meta = tmp_path / "meta" / "tool.json"
    meta.parent.mkdir(exist_ok=True)
    meta.write_text(json.dumps(document))
    policy = tmp_path / "policy.json"
    result = atip("verify", str(binary), "--metadata", str(meta), "--policy", str(policy))
    report = envelope_of(result).get("result") or {}
    checks = {c["name"]: c for c in report.get("checks", [])}
    return result.exit_code, {"level": report.get("level"), **checks}, result.output


@needs_sigstore
def test_a_metadata_file_may_name_a_bundle_inside_its_own_directory(
    tmp_path, p1_binary, monkeypatch
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bundle = P1 / "bundle.sigstore.json"
    (tmp_path / "meta" / "sigs").mkdir(parents=True)
    shutil.copy(bundle, tmp_path / "meta" / "sigs" / "tool.sigstore.json")
    shutil.copy(bundle, tmp_path / "outside.json")
    status, checks, _ = verify_with(tmp_path, p1_binary, signed("sigs/tool.sigstore.json"))
    assert (status, checks["level"], checks["signature"]["ok"]) == (0, "VERIFIED", True)
    for named, why in (
        ("../outside.json", f"is not read: it leads out of {tmp_path / 'meta'}"),
        (str(tmp_path / "outside.json"), "is not read: the metadata names an absolute path"),
        ("~/outside.json", "is not read: the metadata names a path in a home directory"),
        (f"file://{tmp_path}/outside.json", "is not read: the metadata names a file: URL"),
    ):
        status, checks, _ = verify_with(tmp_path, p1_binary, signed(named))
        assert (status, checks["level"], checks["signature"]["ok"]) == (30, "UNVERIFIED", None)
        assert why in checks["signature"]["detail"]


def test_what_a_bundle_or_provenance_file_holds_is_never_echoed(tmp_path, binary):
    """A file named as a bundle or as provenance that is neither — a credentials file —
    is a failed check that names the file and the kind of problem, never its content,
    and never exit 70 (a non-JSON provenance file exited 70)."""
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "credentials").write_text(
        f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {SECRET}\n"
    )
    (tmp_path / "meta" / "config.json").write_text(json.dumps({"password": SECRET}))
    (tmp_path / "policy.json").write_text("{}")
    (tmp_path / "meta" / "envelope.json").write_text(
        json.dumps({"payloadType": SECRET, "payload": "", "signatures": []})
    )
    for named, bundle, provenance in (
        ("credentials", "not JSON", f"format: {tmp_path / 'meta'}/credentials is not a DSSE"),
        ("config.json", "missing fields", "signature: envelope does not verify: not a DSSE"),
        ("envelope.json", "", "signature: envelope does not verify: the payload type is not"),
    ):
        status, checks, output = verify_with(tmp_path, binary, signed(named, named))
        assert status == 30
        assert checks["level"] == "UNSIGNED"  # the bundle is read, and is not one
        assert checks["signature"]["detail"].startswith("sigstore: not a Sigstore bundle: ")
        assert bundle in checks["signature"]["detail"]
        assert checks["provenance"]["ok"] is False
        assert checks["provenance"]["detail"].startswith(provenance)
        for part in (SECRET, SECRET[-8:], SECRET[:8], "AKIA", "aws_secret", "password"):
            assert part not in output


@needs_sigstore
def test_a_bundle_at_an_https_url_is_fetched_once_and_verified_offline(tmp_path, p1_binary):
    import httpx

    from atipkit._http import Fetcher
    from atipkit.trust.material import Sources
    from tests.servers import tls_server

    (tmp_path / "www").mkdir()
    shutil.copy(P1 / "bundle.sigstore.json", tmp_path / "www" / "tool.bundle")
    policy = TrustPolicy(trusted_root=str(root("production")))
    cache = tmp_path / "trust-cache"
    with tls_server(tmp_path / "www", tmp_path / "tls") as server:
        tool = atipkit.from_dict(signed(f"{server.url}/tool.bundle"))
        transport = httpx.HTTPTransport(verify=server.client_context)
        with Fetcher(transport=transport) as fetcher:
            sources = Sources(fetch=True, fetcher=fetcher, cache_dir=cache)
            assert (
                verify_tool(p1_binary, tool, policy, sources=sources).level is TrustLevel.VERIFIED
            )
    assert len(list(cache.iterdir())) == 1
    offline = verify_tool(p1_binary, tool, policy, sources=Sources(cache_dir=cache))
    assert offline.level is TrustLevel.VERIFIED  # the server is gone: the cached copy
    never = verify_tool(p1_binary, tool, policy, sources=Sources(cache_dir=tmp_path / "none"))
    assert never.level is TrustLevel.UNVERIFIED
    [signature] = [c for c in never.checks if c.name == "signature"]
    assert signature.detail.endswith("is not fetched here (offline, or not asked to fetch)")
    plain = atipkit.from_dict(signed("http://127.0.0.1:9/tool.bundle"))
    report = verify_tool(p1_binary, plain, policy, sources=Sources(fetch=True, cache_dir=cache))
    [signature] = [c for c in report.checks if c.name == "signature"]
    assert (report.level, signature.ok) == (TrustLevel.UNVERIFIED, None)
    assert "the metadata names a http: URL (only https is fetched)" in signature.detail


@needs_sigstore
@pytest.mark.parametrize("offline", [False, True])
def test_atip_run_fetches_the_bundle_its_policy_needs_to_verify(tmp_path, offline):
    """A policy that wants VERIFIED binaries makes `atip run` fetch the bundle the
    metadata names by https URL (§3.2.2), as `atip verify` does; ATIP_OFFLINE keeps it
    from fetching, and the call is then refused as UNVERIFIED. Nothing runs either way
    (a dry run); only the decision differs."""
    from tests.helpers import atip_answer, machine_env
    from tests.servers import tls_server

    www, bin_ = tmp_path / "www", tmp_path / "bin"
    www.mkdir()
    bin_.mkdir()
    shutil.copy(P1 / "bundle.sigstore.json", www / "tool.bundle")
    shutil.copy(P1 / "a.txt", bin_ / "t")
    (bin_ / "t").chmod(0o755)
    policy = tmp_path / "policy.json"
    policy.write_text(
        json.dumps(
            {"minimumVerification": "VERIFIED", "trust": {"trustedRoot": str(root("production"))}}
        )
    )
    with tls_server(www, tmp_path / "tls") as server:
        document = tmp_path / "t.json"
        document.write_text(json.dumps(signed(f"{server.url}/tool.bundle")))
        env = machine_env(
            tmp_path,
            PATH=f"{bin_}{os.pathsep}{os.environ['PATH']}",
            SSL_CERT_FILE=str(tmp_path / "tls" / "cert.pem"),
            **({"ATIP_OFFLINE": "1"} if offline else {}),
        )
        call = json.dumps({"name": "t_run", "arguments": {}})
        status, answer, _ = atip_answer(
            env,
            "run",
            "--tool",
            str(document),
            "--call",
            call,
            "--policy",
            str(policy),
            "--dry-run",
            "--json",
        )
    if offline:
        assert status == 30, answer
        assert any("UNVERIFIED" in r for r in answer["result"]["reasons"])
    else:
        assert status == 0, answer
        planned = answer["result"].get("result", answer["result"])  # the dry run's plan
        assert planned["decision"] == "allow", answer


@pytest.mark.parametrize(
    ("named", "why"),
    [
        ("https://[::1/x", "is not read: not a URL nor a path"),
        ("a\x00b", "is not read: not a URL nor a path"),
        ("https://127.0.0.1:99999/x", "cannot be fetched: not a valid address"),
        ("https://127.0.0.1:1/\x00", "is not read: not a URL nor a path"),
        ("..", "is not read: it leads out of"),
        (".", "is not read: not a regular file"),
    ],
)
def test_a_name_that_is_neither_url_nor_path_is_a_check_not_a_crash(tmp_path, binary, named, why):
    from atipkit.trust.material import Sources

    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "tool.json").write_text("{}")
    sources = Sources(metadata_file=tmp_path / "meta" / "tool.json", fetch=True, cache_dir=tmp_path)
    tool = atipkit.from_dict(signed(named, named))
    report = verify_tool(binary, tool, sources=sources)
    checks = {c.name: c for c in report.checks}
    assert report.level is TrustLevel.UNVERIFIED
    assert why in checks["signature"].detail
    assert why in checks["provenance"].detail


@pytest.mark.parametrize(
    ("kind", "where", "why"),
    [
        ("fifo", "binary", "not a regular file"),
        ("device", "binary", "not a regular file"),
        ("fifo", "metadata", "not a regular file"),
        ("device", "metadata", "it leads out of"),  # /dev is out of the file's directory
    ],
)
def test_a_fifo_or_a_device_named_as_material_is_never_read(tmp_path, binary, kind, where, why):
    """The trust page's promise: only regular files are read, a FIFO or a device refused
    before it is opened (opening a FIFO waits for a writer; /dev/zero never ends)."""
    import os

    from atipkit.trust.material import Sources

    meta = tmp_path / "meta" / "tool.json"
    meta.parent.mkdir()
    meta.write_text("{}")
    place = Path(f"{binary}.sigstore.json") if where == "binary" else meta.parent / "b"
    if kind == "fifo":
        os.mkfifo(place)
    else:
        place.symlink_to("/dev/zero")
    tool = atipkit.from_dict(signed("b"))
    report = verify_tool(binary, tool, sources=Sources(metadata_file=meta))
    [signature] = [c for c in report.checks if c.name == "signature"]
    assert (report.level, signature.ok) == (TrustLevel.UNVERIFIED, None)
    assert f" is not read: {why}" in signature.detail


def test_a_copy_fetched_before_is_used_when_the_url_cannot_be_fetched_again(tmp_path):
    """Past its 24 h a cached bundle is fetched again; when that fails, the copy is still
    used, as it is offline: it is verified like any bundle, and being online must not
    make a verification worse than being offline."""
    import hashlib
    import os
    import time

    from atipkit.trust import material

    url = "https://127.0.0.1:1/tool.bundle"  # nothing answers there
    cache = tmp_path / "trust"
    cache.mkdir()
    copy = cache / hashlib.sha256(url.encode()).hexdigest()
    copy.write_bytes(b"the bundle fetched before")
    old = time.time() - 2 * material.CACHE_SECONDS
    os.utime(copy, (old, old))
    for fetch in (False, True):
        found = material.find(
            tmp_path / "tool", (), url, material.Sources(fetch=fetch, cache_dir=cache), 99
        )
        assert found == material.Material(url, b"the bundle fetched before"), fetch


def test_material_at_an_https_url_is_fetched_within_its_own_limits(tmp_path, binary):
    """A bundle larger than 1 MiB and provenance larger than 4 MiB, at the URLs a
    document names: each refused by its own cap (not a registry's 16 MiB), nothing
    cached."""
    import httpx

    from atipkit._http import Fetcher
    from atipkit.trust import material
    from tests.servers import tls_server

    www = tmp_path / "www"
    www.mkdir()
    (www / "big.bundle").write_bytes(b" " * (material.BUNDLE_MAX_BYTES + 1))
    (www / "big.intoto.json").write_bytes(b" " * (material.PROVENANCE_MAX_BYTES + 1))
    cache = tmp_path / "trust-cache"
    with tls_server(www, tmp_path / "tls") as server:
        tool = atipkit.from_dict(
            signed(f"{server.url}/big.bundle", f"{server.url}/big.intoto.json")
        )
        transport = httpx.HTTPTransport(verify=server.client_context)
        with Fetcher(transport=transport) as fetcher:
            sources = material.Sources(fetch=True, fetcher=fetcher, cache_dir=cache)
            report = verify_tool(binary, tool, sources=sources)
    checks = {c.name: c for c in report.checks}
    assert report.level is TrustLevel.UNVERIFIED
    assert checks["signature"].detail.endswith(
        f"cannot be fetched: {material.BUNDLE_MAX_BYTES + 1} bytes, more than the limit "
        f"{material.BUNDLE_MAX_BYTES}"
    )
    assert checks["provenance"].detail.endswith(
        f"cannot be fetched: {material.PROVENANCE_MAX_BYTES + 1} bytes, more than the limit "
        f"{material.PROVENANCE_MAX_BYTES}"
    )
    assert not cache.exists()
