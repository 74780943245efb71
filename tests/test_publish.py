"""`atip registry publish` to a real S3-compatible server (moto, on loopback) read back
over plain HTTP, and to a local directory: bytes, headers, order, only what changed; the
dry-run plan, failures with their exit status (and what was uploaded before one), and the
output for people."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from atipkit.cli import cli
from atipkit.registry import layout
from atipkit.registry.publish import upload_order
from tests.servers import S3Server, moto_s3
from tests.test_registry_build import CURL, EPOCH, make_shim, put, tree

SECRET = "s3cr3t-never-shown"
MINISIG = b"untrusted comment: signature\nRWQ=\n"


@pytest.fixture(scope="module")
def s3(tmp_path_factory) -> S3Server:
    with moto_s3(tmp_path_factory.mktemp("moto")) as server:
        yield server


@pytest.fixture(autouse=True)
def isolated(isolated_home, tmp_path, monkeypatch, s3):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    # the filesystem's usual environment, and nothing of this machine's own AWS setup
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3.secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", s3.region)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def bucket(s3, request) -> str:
    """A fresh bucket anyone may read, as a public registry's would be."""
    name = request.node.name.lower().replace("_", "-")[:50]
    client = s3.client()
    client.create_bucket(Bucket=name)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{name}/*",
            }
        ],
    }
    client.put_bucket_policy(Bucket=name, Policy=json.dumps(policy))
    return name


@pytest.fixture
def src(tmp_path) -> Path:
    folder = tmp_path / "src"
    put(folder, CURL.name, CURL.read_bytes())
    put(folder, f"{CURL.name}.minisig", MINISIG)
    for version, platform in (("1.7", "linux-amd64"), ("1.7", "darwin-arm64"), ("1.6", None)):
        hex_, data = make_shim("jq", version, platform)
        put(folder, f"{hex_}.json", data)
    return folder


def build(src: Path, dest: Path) -> None:
    result = CliRunner().invoke(
        cli, ["registry", "build", str(src), str(dest)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output


def publish(*args: str) -> Result:
    """`atip registry publish ARGS`: the JSON envelope on stdout unless ARGS ask for text."""
    return CliRunner().invoke(cli, ["registry", "publish", *args], catch_exceptions=False)


def publish_json(*args: str) -> dict:
    """The report of a publish that succeeded (the envelope's result)."""
    result = publish(*args, "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["ok"] is True
    return answer["result"]


def test_s3_gets_every_file_with_its_headers_then_nothing_more(s3, bucket, src, tmp_path):
    dest = tmp_path / "site"
    build(src, dest)
    target = f"s3://{bucket}/atip"
    report = publish_json(str(dest), target, "--endpoint-url", s3.endpoint)
    files = tree(dest)
    uploaded = [u["path"] for u in report["uploaded"]]
    assert sorted(uploaded) == sorted(files)
    assert report["unchanged"] == 0
    assert report["uploadedBytes"] == sum(len(b) for b in files.values())
    # signatures, then shims, then what lists them, the manifest last
    minisig, manifest = f"shims/sha256/{CURL.name}.minisig", layout.MANIFEST
    assert uploaded[0] == minisig
    assert set(uploaded[1:5]) == {p for p in files if p.endswith(".json") and "/sha256/" in p}
    assert set(uploaded[5:8]) == {layout.CATALOG, layout.COVERAGE, layout.INDEX_HTML}
    assert uploaded[-1] == manifest
    assert uploaded == sorted(uploaded, key=upload_order)

    with httpx.Client() as http:  # anonymous, as any client of the registry
        for rel, data in files.items():
            response = http.get(f"{s3.endpoint}/{bucket}/atip/{rel}")
            assert response.status_code == 200, rel
            assert response.content == data
            assert response.headers["content-type"] == layout.content_type(rel)
            assert response.headers["cache-control"] == layout.cache_control(rel)
        shim = http.get(f"{s3.endpoint}/{bucket}/atip/shims/sha256/{CURL.name}")
        assert shim.headers["cache-control"] == layout.SHIM_CACHE_CONTROL
        assert http.get(f"{s3.endpoint}/{bucket}/atip/{minisig}").headers["content-type"] == (
            "text/plain; charset=utf-8"
        )

    again = publish_json(str(dest), target, "--endpoint-url", s3.endpoint)
    assert again["uploaded"] == []
    assert again["unchanged"] == len(files)
    assert again["unchangedBytes"] == report["uploadedBytes"]


def test_a_changed_shim_uploads_it_and_what_lists_it(s3, bucket, src, tmp_path):
    dest = tmp_path / "site"
    build(src, dest)
    target = f"s3://{bucket}"
    publish_json(str(dest), target, "--endpoint-url", s3.endpoint)
    # jq 1.7 for darwin-arm64 speaks for jq in the catalog (newest version, first platform)
    jq = next(p for p in src.glob("*.json") if b'"darwin-arm64"' in p.read_bytes())
    jq.write_bytes(jq.read_bytes().replace(b"jq does things", b"jq filters JSON"))
    build(src, dest)
    report = publish_json(str(dest), target, "--endpoint-url", s3.endpoint)
    # the description is in the catalog and the page; coverage and manifest are unchanged
    assert [u["path"] for u in report["uploaded"]] == [
        f"shims/sha256/{jq.name}",
        layout.CATALOG,
        layout.INDEX_HTML,
    ]
    assert report["unchanged"] == len(tree(dest)) - 3
    body = httpx.get(f"{s3.endpoint}/{bucket}/shims/sha256/{jq.name}").content
    assert body == jq.read_bytes()


def test_dry_run_uploads_nothing(s3, bucket, src, tmp_path):
    dest = tmp_path / "site"
    build(src, dest)
    target = f"s3://{bucket}/p"
    result = publish(str(dest), target, "--endpoint-url", s3.endpoint, "--dry-run", "--text")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"would upload shims/sha256/{CURL.name}.minisig ({len(MINISIG)} bytes, "
        "text/plain; charset=utf-8)"
    )
    assert lines[-1].startswith(f"{target}: {len(tree(dest))} would upload (")
    assert len(lines) == len(tree(dest)) + 1

    planned = publish(str(dest), target, "--endpoint-url", s3.endpoint, "--dry-run")
    assert planned.exit_code == 0, planned.output
    answer = json.loads(planned.stdout)
    assert answer["meta"]["dry_run"] is True
    plan = answer["result"]
    assert plan["dry_run"] is True
    assert plan["result"]["dryRun"] is True
    files = tree(dest)
    assert plan["actions"] == [
        {
            "action": "upload",
            "target": u["path"],
            "details": {"size": len(files[u["path"]]), "content_type": u["content_type"]},
        }
        for u in plan["result"]["uploaded"]
    ]
    assert sorted(a["target"] for a in plan["actions"]) == sorted(files)
    assert s3.client().list_objects_v2(Bucket=bucket).get("KeyCount") == 0


def test_local_directory_target(src, tmp_path):
    dest, www = tmp_path / "site", tmp_path / "www"
    build(src, dest)
    report = publish_json(str(dest), str(www))
    assert len(report["uploaded"]) == len(tree(dest))
    assert tree(www) == tree(dest)
    assert publish_json(str(dest), f"file://{www}")["uploaded"] == []
    (www / "shims" / "sha256" / CURL.name).write_bytes(b"{}")  # damaged on the target
    report = publish_json(str(dest), str(www))
    assert [u["path"] for u in report["uploaded"]] == [f"shims/sha256/{CURL.name}"]
    assert tree(www) == tree(dest)
    old = www / "shims" / "sha256" / f"{'0' * 64}.json"
    old.write_bytes(b"a shim no longer built")
    assert publish_json(str(dest), str(www))["uploaded"] == []
    assert old.exists()  # nothing is ever deleted


def test_a_failure_partway_reports_what_was_uploaded_before(src, tmp_path):
    """The manifest goes last; when it cannot be written, the shims and the catalog are
    already there, and the report says so (a rerun sends only the rest)."""
    dest, www = tmp_path / "site", tmp_path / "www"
    build(src, dest)
    www.mkdir()
    (www / ".well-known").write_text("a file where the manifest's folder should be")
    result = publish(str(dest), str(www), "--json")
    assert result.exit_code == 40
    answer = json.loads(result.stdout)
    assert answer["ok"] is False
    assert (answer["error"]["code"], answer["error"]["exit_code"]) == ("E4001", 40)
    assert answer["error"]["message"].startswith(f"{www}: ")
    assert answer["error"]["suggestion"]["action"] == "retry"
    report = answer["result"]
    sent = [u["path"] for u in report["uploaded"]]
    assert report["ok"] is False
    assert sorted(sent) == sorted(p for p in tree(dest) if p != layout.MANIFEST)
    assert report["uploadedBytes"] == sum(u["size"] for u in report["uploaded"])
    assert answer["error"]["details"] == {"uploaded_before": len(sent)}
    assert all((www / p).is_file() for p in sent)
    assert result.stderr == ""

    for_people = publish(str(dest), str(www), "--text")  # the rest was unchanged by now
    assert for_people.exit_code == 40
    assert for_people.stdout == f"{www}: 0 uploaded (0 bytes) before the failure\n"
    assert for_people.stderr.startswith(f"error: {www}: ")

    (www / ".well-known").unlink()
    assert [u["path"] for u in publish_json(str(dest), str(www))["uploaded"]] == [layout.MANIFEST]


def test_what_was_uploaded_before_a_failure_is_shown_to_people(src, tmp_path):
    dest, www = tmp_path / "site", tmp_path / "www"
    build(src, dest)
    www.mkdir()
    (www / ".well-known").write_text("in the way")
    result = publish(str(dest), str(www), "--text")
    assert result.exit_code == 40
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"uploaded shims/sha256/{CURL.name}.minisig (")
    assert len(lines) == len(tree(dest))  # every file but the manifest, and the summary
    assert lines[-1].startswith(f"{www}: {len(lines) - 1} uploaded (")
    assert lines[-1].endswith(") before the failure")
    [error, fix] = result.stderr.splitlines()
    assert error.startswith(f"error: {www}: ")
    assert error.endswith("[E4001]")
    assert fix.startswith("  fix: Fix the store's problem and publish again")


def test_human_output(src, tmp_path):
    dest = tmp_path / "site"
    build(src, dest)
    result = publish(str(dest), str(tmp_path / "www"), "--text")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    size = len((dest / layout.MANIFEST).read_bytes())
    assert lines[-2] == f"uploaded .well-known/atip-registry.json ({size} bytes, application/json)"
    assert lines[-1].startswith(f"{tmp_path / 'www'}: {len(lines) - 1} uploaded (")
    assert lines[-1].endswith(", 0 unchanged (0 bytes)")


@pytest.mark.parametrize(
    ("target", "option", "code", "message"),
    [
        ("bogus://bucket/x", "key=k", 2, "Protocol not known: bogus"),
        ("s3://no-such-bucket/x", "key=k", 40, "The specified bucket does not exist"),
        ("s3://no-such-bucket/x", "nonsense=1", 2, "bad storage option: "),
        ("{www}", "key=k", 2, "--endpoint-url is for object storage"),
    ],
)
def test_bad_targets(s3, src, tmp_path, target, option, code, message):
    dest = tmp_path / "site"
    build(src, dest)
    target = target.format(www=tmp_path / "www")
    args = [str(dest), target, "--endpoint-url", s3.endpoint]
    args += ["--storage-option", f"secret={SECRET}", "--storage-option", option]
    result = publish(*args)
    assert result.exit_code == code, result.output
    answer = json.loads(result.stdout)
    assert answer["error"]["exit_code"] == code
    assert message in answer["error"]["message"]
    assert "result" not in answer or answer["result"]["uploaded"] == []
    assert result.stderr == ""
    for_people = publish(*args, "--text")
    assert for_people.exit_code == code
    assert for_people.stdout in ("", f"{target}: 0 uploaded (0 bytes) before the failure\n")
    assert for_people.stderr.startswith("error: ")
    assert message in for_people.stderr.splitlines()[0]
    assert SECRET not in result.output + for_people.output
    assert not (tmp_path / "www").exists()


def test_a_storage_option_is_key_equals_value(src, tmp_path):
    dest = tmp_path / "site"
    build(src, dest)
    result = publish(str(dest), str(tmp_path / "www"), "--storage-option", "anon")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["message"].startswith("Invalid value for '--storage-option': ")
    assert error["details"]["param"] == "storage_option"
    assert not (tmp_path / "www").exists()


def test_a_storage_option_nested_too_deeply_is_text_not_a_crash():
    """json.loads raised RecursionError at 100 000 levels: exit 70."""
    from atipkit.cli.publish import _option_value

    deep = "[" * 100_000 + "]" * 100_000
    assert _option_value(deep) == deep
    assert _option_value('{"region": "eu", "n": 3}') == {"region": "eu", "n": 3}
    assert _option_value("anon") == "anon"


def test_not_a_registry(tmp_path):
    (tmp_path / "plain").mkdir()
    result = publish(str(tmp_path / "plain"), str(tmp_path / "www"))
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["message"] == (
        f"{tmp_path / 'plain'}: not a built registry "
        "(no .well-known/atip-registry.json); run atip registry build"
    )
    assert error["category"] == "input"


def test_a_missing_registry_is_not_found(tmp_path):
    result = publish(str(tmp_path / "nothing"), str(tmp_path / "www"), "--text")
    assert result.exit_code == 10
    assert result.stderr.splitlines()[0] == (
        f"error: {tmp_path / 'nothing'}: no such directory (DEST) [E3001]"
    )
    assert not (tmp_path / "www").exists()


def test_a_missing_filesystem_names_what_to_install(src, tmp_path):
    if importlib.util.find_spec("gcsfs"):
        pytest.skip("gcsfs is installed: the point is a filesystem that is not")
    dest = tmp_path / "site"
    build(src, dest)
    result = publish(str(dest), "gs://bucket/x")
    assert result.exit_code == 40
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["category"]) == ("E4010", "runtime")
    assert "gcsfs" in error["message"]
    assert "pip install 'atipkit[publish]'" in error["suggestion"]["fix"]
    assert error["suggestion"]["action"] == "ask_human"


def test_atipkits_client_reads_the_published_registry_over_http(s3, bucket, src, tmp_path):
    """The whole path: build, publish to S3, then look a shim up by hash through the
    bucket's HTTP endpoint, as an agent would, and revalidate it with a 304."""
    from atipkit.registry import RemoteRegistries, RemoteRegistry, Settings

    dest = tmp_path / "site"
    build(src, dest)
    publish_json(str(dest), f"s3://{bucket}/atip", "--endpoint-url", s3.endpoint)
    hex_, _ = make_shim("jq", "1.7", "linux-amd64")
    registry = RemoteRegistry(url=f"{s3.endpoint}/{bucket}/atip", name="s3")
    settings = Settings(registries=[registry])
    with RemoteRegistries(settings, cache_dir=tmp_path / "c") as remote:
        found = remote.lookup(hex_)
        assert found.tool is not None
        assert (found.tool.name, found.tool.binary.platform) == ("jq", "linux-amd64")
        assert remote.manifest(registry).registry.version  # the built manifest, served
    with RemoteRegistries(settings, cache_dir=tmp_path / "c", refresh=True) as remote:
        assert remote.lookup(hex_).revalidated
