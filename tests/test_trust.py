"""Trust: real signatures made in the tests, real Sigstore bundles verified offline,
SLSA provenance signed with test keys, and the trust levels they add up to."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

import atipkit
from atipkit.cli import cli
from atipkit.trust import signatures as sig
from atipkit.trust.levels import TrustLevel, TrustPolicy, verify_tool
from atipkit.trust.slsa import sign_envelope, verify_provenance
from tests.helpers import SIGSTORE, minimal, minisign_keys, needs_sigstore, ssh_key

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
    runner = CliRunner()
    signed = runner.invoke(cli, ["shim", "sign", str(shim), "--minisign-key", str(secret)])
    assert signed.exit_code == 0
    assert signed.stdout.strip() == f"{shim}.minisig"
    ok = runner.invoke(cli, ["shim", "verify", str(shim), "--minisign-key", str(public)])
    assert ok.exit_code == 0
    flip(shim)
    bad = runner.invoke(cli, ["shim", "verify", str(shim), "--minisign-key", str(public)])
    assert bad.exit_code == 1
    assert "NOT verified" in bad.stdout
    assert runner.invoke(cli, ["shim", "sign", str(shim)]).exit_code == 2


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
    monkeypatch.setenv("ATIP_CACHE_DIR", str(tmp_path / "cache"))
    from atipkit.trust.digest import sha256_file

    good = tmp_path / "good.json"
    good.write_text(json.dumps(minimal(trust={"integrity": {"checksum": sha256_file(binary)}})))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(minimal(trust={"integrity": {"checksum": "sha256:" + "0" * 64}})))
    runner = CliRunner()
    result = runner.invoke(cli, ["verify", str(binary), "--metadata", str(good), "--json"])
    assert result.exit_code == 1  # not compromised, but unsigned
    assert json.loads(result.stdout)["level"] == "UNSIGNED"
    assert runner.invoke(cli, ["verify", str(binary), "--metadata", str(bad)]).exit_code == 3
