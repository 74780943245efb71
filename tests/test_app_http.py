"""`<app> api serve` as a real process answering real HTTP: the OpenAPI document, and every
answer checked against the response schema the document gives for it (jsonschema), with
the envelope and error objects compared to what the same app prints on the command line.

The app is tests/apps/http_app.py, started as `python -m tests.apps.http_app api serve`
with its own state and configuration directories and a counter file its side-effecting
commands write, so a test can tell a call that ran from one answered without running.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from atipkit.app.http import STATUS, openapi
from atipkit.app.schema import hints
from tests.apps.http_app import app as demo
from tests.helpers import STARTUP
from tests.servers import free_port, preflight, stop, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
MODULE = [sys.executable, "-m", "tests.apps.http_app"]
DOC_URI = "urn:atipkit:test:openapi"


@dataclass
class Server:
    url: str
    env: dict[str, str]
    cwd: Path
    counter: Path
    process: subprocess.Popen[bytes]

    def count(self) -> int:
        return int(self.counter.read_text()) if self.counter.exists() else 0

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The same app on the command line, with the server's environment."""
        return subprocess.run(
            [*MODULE, *args],
            env=self.env,
            cwd=self.cwd,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("http")) as started:
        yield started


@contextlib.contextmanager
def serving(base: Path, *args: str) -> Iterator[Server]:
    """`api serve ARGS` of the demo app, its state under `base`, until the block ends."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_CONFIG_HOME": str(base / "config"),
        "HTTP_APP_COUNTER": str(base / "counter"),
    }
    for name in list(env):
        if name.startswith("HTTPDEMO_"):
            del env[name]
    port = free_port()
    log = base / "server.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [*MODULE, "api", "serve", "--port", str(port), *args],
            env=env,
            cwd=base,  # no project configuration of this repository applies
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, process, log)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP
        while httpx.get(f"{url}/openapi.json").status_code != 200:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield Server(url, env, base, base / "counter", process)
    finally:
        stop(process)
    assert process.returncode == 0, log.read_text()[-3000:]
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


@pytest.fixture(scope="module")
def document(server) -> dict[str, Any]:
    response = httpx.get(f"{server.url}/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    return response.json()


def post(server: Server, command: str, body: Any = None, **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/v1/{command}", json=body, timeout=10, **kwargs)


def _pointer(*parts: str) -> str:
    return "#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


def _resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """A Response Object, following the `$ref` to components it may be."""
    ref = node.get("$ref")
    if ref is None:
        return node
    target: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    return target


def check_against_document(
    doc: dict[str, Any], path: str, method: str, response: httpx.Response, body: Any = None
) -> None:
    """`response` is what the document says: its status is listed for the operation, it
    is JSON, and its body (or `body` in its place) validates against that status's
    schema, `$ref`s to components resolved within the document."""
    responses = doc["paths"][path][method]["responses"]
    status = str(response.status_code)
    assert status in responses, f"{method.upper()} {path}: {status} is not documented"
    declared = _resolve(doc, responses[status])
    assert response.headers["content-type"].startswith("application/json")
    assert "application/json" in declared["content"]
    if "$ref" in responses[status]:
        where = responses[status]["$ref"] + "/content/application~1json/schema"
    else:
        where = _pointer("paths", path, method, "responses", status, "content")
        where += "/application~1json/schema"
    registry = Registry().with_resource(
        DOC_URI, Resource.from_contents(doc, default_specification=DRAFT202012)
    )
    validator = jsonschema.Draft202012Validator({"$ref": DOC_URI + where}, registry=registry)
    errors = sorted(validator.iter_errors(response.json() if body is None else body), key=str)
    assert not errors, [e.message for e in errors]


# The document ---------------------------------------------------------------------------


def test_document_is_served_as_openapi_builds_it(document):
    assert document == json.loads(json.dumps(openapi(demo)))


def test_document_has_one_operation_a_command(document):
    assert document["openapi"].startswith("3.1.")
    assert document["info"] == {
        "title": "httpdemo",
        "version": "0.3.0",
        "description": "A small app served over HTTP by the tests",
    }
    shown = [spec for spec in demo.walk() if not spec.hidden]
    assert {s.path for s in demo.walk() if s.hidden} == {("internal",), ("bail",)}
    assert "/v1/internal" not in document["paths"]
    assert "/v1/bail" not in document["paths"]
    operation_ids = []
    for spec in shown:
        path = "/v1/" + "/".join(spec.path)
        assert set(document["paths"][path]) == {"post"}
        op = document["paths"][path]["post"]
        operation_ids.append(op["operationId"])
        assert op["operationId"] == "_".join(spec.path)
        assert op["summary"] == spec.summary
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        assert schema == spec.signature.input_schema()
        assert "$ref" not in json.dumps(schema)
        assert op["requestBody"]["required"] == bool(schema.get("required"))
        assert op["x-atipkit"]["annotations"] == hints(spec)
        for status in STATUS.values():
            assert str(status) in op["responses"]
        success = op["responses"]["200"]["content"]["application/json"]["schema"]
        assert success["properties"]["ok"] == {"const": True}
    assert len(set(operation_ids)) == len(operation_ids)
    assert document["paths"]["/v1/pr/create"]["post"]["tags"] == ["pr"]
    assert document["paths"]["/v1/slow"]["post"]["x-atipkit"]["timeoutSeconds"] == 0.5
    params = {
        p["$ref"].rsplit("/", 1)[1] for p in document["paths"]["/v1/numbers"]["post"]["parameters"]
    }
    assert {"limit", "cursor", "idempotency_key"} <= params
    assert "dry_run" not in params
    remove = document["paths"]["/v1/remove"]["post"]
    assert _resolve(document, remove["parameters"][0])["name"] == "dry_run"
    assert document["paths"]["/v1/"]["get"]
    assert document["paths"]["/openapi.json"]["get"]


def test_document_is_valid_openapi_3_1(document):
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)  # raises on any structural error
    broken = json.loads(json.dumps(document))
    del broken["paths"]["/v1/greet"]["post"]["requestBody"]["content"]
    with pytest.raises(Exception, match="content"):
        validator.validate(broken)


def test_export_openapi_prints_the_same_document(server):
    result = server.cli("api", "export-openapi")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(json.dumps(openapi(demo)))


# Calls ----------------------------------------------------------------------------------


def test_a_call_answers_the_envelope_the_cli_prints(server, document):
    response = post(server, "greet", {"name": "bob", "times": 2})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["ok"] is True
    assert body["result"] == {"greeting": "hello bob hello bob"}
    assert body["meta"]["tool"] == "httpdemo.greet"
    assert body["meta"]["version"] == "0.3.0"
    check_against_document(document, "/v1/greet", "post", response)
    cli = server.cli("greet", "bob", "--times", "2", "--json")
    assert cli.returncode == 0, cli.stderr
    printed = json.loads(cli.stdout)
    for envelope in (printed, body):
        envelope["meta"].pop("duration_ms")
    assert printed == body


def test_the_response_check_refuses_what_the_document_does_not_describe(server, document):
    ok = post(server, "greet", {"name": "ann"})
    wrong_result = {**ok.json(), "result": "not an object"}
    no_meta = {"ok": True, "result": {}}
    for body in (wrong_result, no_meta, {**ok.json(), "extra": 1}):
        with pytest.raises(AssertionError):
            check_against_document(document, "/v1/greet", "post", ok, body)
    failed = post(server, "greet", {"name": " "})
    error = failed.json()
    del error["error"]["exit_code"]
    with pytest.raises(AssertionError):
        check_against_document(document, "/v1/greet", "post", failed, error)
    wrong_category = failed.json()
    wrong_category["error"]["category"] = "oops"
    with pytest.raises(AssertionError):
        check_against_document(document, "/v1/greet", "post", failed, wrong_category)


def test_a_command_in_a_group_and_a_hidden_one(server, document):
    response = post(server, "pr/create", {"title": "Fix it", "draft": True})
    assert response.status_code == 200
    assert response.json()["result"] == {"title": "Fix it", "draft": True}
    assert response.json()["meta"]["tool"] == "httpdemo.pr.create"
    check_against_document(document, "/v1/pr/create", "post", response)
    # hidden: left out of the document and the list, still callable (as on the CLI)
    hidden = post(server, "internal", {})
    assert hidden.status_code == 200
    assert hidden.json()["result"] == {"hidden": True}


def test_an_empty_body_is_no_arguments(server):
    response = httpx.post(f"{server.url}/v1/internal", headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    missing = httpx.post(f"{server.url}/v1/greet", headers={"content-type": "application/json"})
    assert missing.status_code == 400
    assert missing.json()["error"]["code"] == "E1001"
    assert "name" in missing.json()["error"]["message"]


def test_bad_argument_from_the_command_is_the_clis_error(server, document):
    response = post(server, "greet", {"name": " "})
    assert response.status_code == 400
    check_against_document(document, "/v1/greet", "post", response)
    error = response.json()["error"]
    assert error["code"] == "E1002"
    cli = server.cli("greet", " ", "--json")
    assert cli.returncode == 2
    assert json.loads(cli.stdout)["error"] == error


def test_bad_argument_refused_by_the_schema(server, document):
    response = post(server, "greet", {"name": "bob", "times": 0})
    assert response.status_code == 400
    check_against_document(document, "/v1/greet", "post", response)
    error = response.json()["error"]
    cli = server.cli("greet", "bob", "--times", "0", "--json")
    assert cli.returncode == 2
    printed = json.loads(cli.stdout)["error"]
    # Click words the message on the command line, the input schema over JSON; what an
    # agent acts on is the same.
    for key in ("code", "category", "is_retryable", "exit_code"):
        assert error[key] == printed[key], key
    assert error["code"] == "E1002"
    assert error["details"]["param"] == printed["details"]["param"] == "times"
    assert error["details"]["expected"] == printed["details"]["expected"]
    assert error["details"]["expected"]["minimum"] == 1


def test_not_found(server, document):
    response = post(server, "remove", {"name": "missing"})
    assert response.status_code == 404
    check_against_document(document, "/v1/remove", "post", response)
    cli = server.cli("remove", "missing", "--yes", "--json")  # destructive: confirmed
    assert cli.returncode == 10
    assert json.loads(cli.stdout)["error"] == response.json()["error"]


@pytest.mark.parametrize(
    ("command", "body", "status", "code", "exit_code"),
    [
        ("parse", {"text": "no equals sign"}, 422, "E1003", 65),
        ("deploy", {"target": "prod"}, 403, "E2002", 101),
    ],
)
def test_error_statuses_follow_exit_codes(server, document, command, body, status, code, exit_code):
    response = post(server, command, body)
    assert response.status_code == status
    check_against_document(document, f"/v1/{command}", "post", response)
    error = response.json()["error"]
    assert (error["code"], error["exit_code"]) == (code, exit_code)
    assert response.json()["meta"]["tool"] == f"httpdemo.{command}"


def test_a_result_json_cannot_hold_is_the_clis_internal_error(server, document):
    response = post(server, "opaque", {})
    assert response.status_code == 500
    check_against_document(document, "/v1/opaque", "post", response)
    error = response.json()["error"]
    assert (error["code"], error["exit_code"]) == ("E5001", 70)
    cli = server.cli("opaque", "--json")
    assert cli.returncode == 70
    assert json.loads(cli.stdout)["error"] == error


def test_sys_exit_in_a_command_does_not_stop_the_server(server):
    response = post(server, "bail", {})
    assert response.status_code == 500
    assert response.json()["error"]["message"] == "SystemExit: 3"
    assert server.process.poll() is None
    assert post(server, "greet", {"name": "still here"}).status_code == 200


def test_timeout_answers_504_without_waiting_for_the_function(server, document):
    started = time.monotonic()
    # a function of 4 s, its timeout 0.5 s: 3 s of room for a busy machine (1.5 s against
    # 1.3 was a race), and shorter than `stop`'s 5 s grace at the server's end
    response = post(server, "slow", {"seconds": 4.0})
    elapsed = time.monotonic() - started
    assert response.status_code == 504
    assert elapsed < 3.5, elapsed
    check_against_document(document, "/v1/slow", "post", response)
    error = response.json()["error"]
    assert error["code"] == "E4002"
    assert error["is_retryable"] is True
    assert error["details"] == {"timeout_seconds": 0.5}
    quick = post(server, "slow", {"seconds": 0})
    assert quick.status_code == 200


# Malformed requests ---------------------------------------------------------------------


def test_body_that_is_not_json(server, document):
    response = httpx.post(
        f"{server.url}/v1/greet",
        content=b"{name: bob",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    check_against_document(document, "/v1/greet", "post", response)
    assert response.json()["error"]["code"] == "E1003"
    assert response.json()["meta"]["tool"] == "httpdemo.greet"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"[" * 2000 + b"]" * 2000, "line 1, column 65: JSON is nested too deeply"),
        (b'{"name": ' + b"[" * 100 + b"]" * 100 + b"}", "$.name" + "[0]" * 63 + ": JSON is"),
        (b'{"name": "\\ud800"}', "\\ud800 is half a UTF-16 surrogate pair"),
        (b'{"name": "\xff"}', "not UTF-8"),
        (b'{"name": NaN}', "invalid character"),
        (b'{"name": 1e999}', "out of range"),
    ],
    ids=["deep", "deep-inside", "lone-surrogate", "not-utf8", "nan", "huge-number"],
)
def test_a_body_too_deep_or_not_json_is_400_never_500(server, document, body, said):
    response = httpx.post(
        f"{server.url}/v1/greet", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 400, response.text
    check_against_document(document, "/v1/greet", "post", response)
    error = response.json()["error"]
    assert error["code"] == "E1003"
    assert said in error["message"]


def test_body_that_is_not_an_object(server, document):
    response = post(server, "greet", ["bob"])
    assert response.status_code == 400
    check_against_document(document, "/v1/greet", "post", response)
    assert response.json()["error"]["code"] == "E1001"


def test_body_not_sent_as_json(server, document):
    before = server.count()
    response = httpx.post(f"{server.url}/v1/tick", content=b'{"label": "x"}')
    assert response.status_code == 415
    check_against_document(document, "/v1/tick", "post", response)
    form = httpx.post(f"{server.url}/v1/tick", data={"label": "x"})
    assert form.status_code == 415
    assert form.json()["error"]["details"]["content_type"] == "application/x-www-form-urlencoded"
    assert server.count() == before


def test_oversize_body(server, document):
    big = {"name": "x" * 5000}
    response = post(server, "greet", big)
    assert response.status_code == 413
    check_against_document(document, "/v1/greet", "post", response)
    error = response.json()["error"]
    assert error["code"] == "E1007"
    assert error["details"] == {"limit_bytes": 4096}

    def chunks() -> Iterator[bytes]:  # no Content-Length: refused while it streams in
        yield b'{"name": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}'

    streamed = httpx.post(
        f"{server.url}/v1/greet", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert streamed.json()["error"]["code"] == "E1007"
    assert post(server, "greet", {"name": "x" * 3000}).status_code == 200


def test_unknown_route_is_a_json_404(server):
    for path in ("/v1/gret", "/nothing/here", "/v1/pr", "/v1/pr/create/more", "/"):
        response = httpx.post(f"{server.url}{path}", json={})
        assert response.status_code == 404, path
        body = response.json()
        assert body["ok"] is False
        assert body["error"]["code"] == "E3001"
        assert body["error"]["exit_code"] == 10
    near = httpx.post(f"{server.url}/v1/gret", json={}).json()["error"]
    assert near["details"]["did_you_mean"][0] == "/v1/greet"
    assert httpx.get(f"{server.url}/v1/internal/x").status_code == 404


def test_wrong_method_is_a_json_405(server):
    response = httpx.get(f"{server.url}/v1/greet")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["ok"] is False
    assert response.json()["error"]["details"]["allowed"] == ["POST"]
    assert response.json()["meta"]["tool"] == "httpdemo.greet"
    for method in ("PUT", "DELETE", "OPTIONS"):
        assert httpx.request(method, f"{server.url}/v1/greet").status_code == 405
    wrong = httpx.post(f"{server.url}/openapi.json", json={})
    assert wrong.status_code == 405
    assert wrong.headers["allow"] == "GET, HEAD"


# Global flags ---------------------------------------------------------------------------


def test_idempotency_key_replays_without_running(server, document):
    before = server.count()
    key = {"Idempotency-Key": "replay-1"}
    first = post(server, "tick", {"label": "a"}, headers=key)
    assert first.status_code == 200
    assert server.count() == before + 1
    assert "replayed" not in first.json()["meta"]
    second = post(server, "tick", {"label": "a"}, headers=key)
    assert second.status_code == 200
    check_against_document(document, "/v1/tick", "post", second)
    assert second.json()["meta"]["replayed"] is True
    assert second.json()["result"] == first.json()["result"]
    assert server.count() == before + 1  # not run again
    other = post(server, "tick", {"label": "b"}, headers=key)
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "E3003"
    check_against_document(document, "/v1/tick", "post", other)
    fresh = post(server, "tick", {"label": "a"}, headers={"Idempotency-Key": "replay-2"})
    assert fresh.json()["result"]["count"] == before + 2
    assert server.count() == before + 2


def test_dry_run_query(server, document):
    before = server.count()
    response = post(server, "remove", {"name": "a"}, params={"dry_run": "true"})
    assert response.status_code == 200
    check_against_document(document, "/v1/remove", "post", response)
    body = response.json()
    assert body["result"] == {"dry_run": True, "actions": [{"action": "delete", "target": "a"}]}
    assert body["meta"]["dry_run"] is True
    assert server.count() == before
    real = post(server, "remove", {"name": "a"}, params={"dry_run": "false"})
    assert real.json()["result"] == {"removed": "a", "count": before + 1}
    check_against_document(document, "/v1/remove", "post", real)
    unsupported = post(server, "tick", {"label": "x"}, params={"dry_run": "1"})
    assert unsupported.status_code == 400
    assert unsupported.json()["error"]["code"] == "E1008"
    assert server.count() == before + 1


def test_pagination_and_truncation_queries(server, document):
    first = post(server, "numbers", {"n": 8})
    assert first.json()["result"] == [0, 1, 2]
    check_against_document(document, "/v1/numbers", "post", first)
    cursor = first.json()["meta"]["pagination"]["next_cursor"]
    second = post(server, "numbers", {"n": 8}, params={"cursor": cursor, "limit": "4"})
    assert second.json()["result"] == [3, 4, 5, 6]
    cut = post(server, "numbers", {"n": 8}, params={"limit": "5", "max_items": "2"})
    assert cut.json()["result"] == [0, 1]
    assert cut.json()["meta"]["truncation"]["reason"] == "max_items"
    check_against_document(document, "/v1/numbers", "post", cut)
    cli = server.cli("numbers", "8", "--limit", "5", "--max-items", "2", "--json")
    printed, answered = json.loads(cli.stdout), cut.json()
    for envelope in (printed, answered):
        envelope["meta"].pop("duration_ms")
    assert printed == answered
    not_paginated = post(server, "greet", {"name": "x"}, params={"limit": "2"})
    assert not_paginated.status_code == 400


@pytest.mark.parametrize(
    ("params", "code", "param"),
    [
        ({"limit": "0"}, "E1002", "limit"),
        ({"limit": "many"}, "E1002", "limit"),
        ({"max_bytes": "-1"}, "E1002", "max_bytes"),
        ({"dry_run": "perhaps"}, "E1002", "dry_run"),
        ({"response_format": "verbose"}, "E1002", "response_format"),
        ({"dry-run": "true"}, "E1001", "dry-run"),
        ({"json": "1"}, "E1001", "json"),
    ],
)
def test_bad_query_values_are_400(server, document, params, code, param):
    before = server.count()
    response = post(server, "tick", {"label": "q"}, params=params)
    assert response.status_code == 400
    check_against_document(document, "/v1/tick", "post", response)
    error = response.json()["error"]
    assert (error["code"], error["details"]["param"]) == (code, param)
    assert server.count() == before


def test_repeated_query_parameter_and_blank_key(server):
    twice = httpx.post(f"{server.url}/v1/numbers?limit=2&limit=3", json={"n": 5})
    assert twice.status_code == 400
    assert twice.json()["error"]["details"]["param"] == "limit"
    blank = post(server, "tick", {"label": "k"}, headers={"Idempotency-Key": ""})
    assert blank.status_code == 400
    assert blank.json()["error"]["details"]["param"] == "Idempotency-Key"


# The other endpoints --------------------------------------------------------------------


def test_command_list(server, document):
    response = httpx.get(f"{server.url}/v1/")
    assert response.status_code == 200
    check_against_document(document, "/v1/", "get", response)
    listed = response.json()["result"]
    assert listed["name"] == "httpdemo"
    assert [c["path"] for c in listed["commands"]] == [
        p for p in document["paths"] if p.startswith("/v1/") and p != "/v1/"
    ]
    greet = next(c for c in listed["commands"] if c["command"] == "greet")
    assert greet["annotations"]["readOnlyHint"] is True
    assert httpx.get(f"{server.url}/v1").json() == response.json()
    head = httpx.head(f"{server.url}/openapi.json")
    assert (head.status_code, head.content) == (200, b"")


def test_foreign_host_is_refused(server):
    response = httpx.get(f"{server.url}/v1/", headers={"Host": "attacker.example:80"})
    assert response.status_code == 403
    assert response.json()["error"]["details"] == {"host": "attacker.example"}
    before = server.count()
    refused = post(server, "tick", {"label": "r"}, headers={"Host": "attacker.example"})
    assert refused.status_code == 403
    assert server.count() == before
    assert httpx.get(f"{server.url}/v1/", headers={"Host": "localhost"}).status_code == 200


def test_a_page_of_another_origin_is_refused_before_the_command_runs(server, document):
    """A page of another localhost port (a dev server) or a rebound name must not run
    the app's commands; the app's own pages and clients that are not browsers may."""
    before = server.count()
    for origin in ("http://localhost:3000", "https://evil.example", "null"):
        refused = post(server, "tick", {"label": "o"}, headers={"Origin": origin})
        assert refused.status_code == 403, origin
        check_against_document(document, "/v1/tick", "post", refused)
        assert refused.json()["error"]["details"] == {"origin": origin}
        assert "access-control-allow-origin" not in refused.headers
    rebound = post(server, "tick", {"label": "h"}, headers={"Host": "127.evil.com"})
    assert rebound.status_code == 403
    assert server.count() == before
    own = post(server, "tick", {"label": "own"}, headers={"Origin": server.url})
    assert own.status_code == 200
    assert server.count() == before + 1


def test_cors_for_the_origins_allowed_only(tmp_path):
    page = "http://localhost:3000"
    with serving(tmp_path, "--allow-origin", page, "--allow-host", "notes.lan") as served:
        answered = post(served, "tick", {"label": "p"}, headers={"Origin": page})
        assert answered.status_code == 200
        assert answered.headers["access-control-allow-origin"] == page
        assert answered.headers["vary"] == "Origin"
        asked = preflight(f"{served.url}/v1/tick", page, "POST", "content-type")
        assert asked.status_code == 204
        assert asked.headers["access-control-allow-methods"] == "GET, HEAD, POST, OPTIONS"
        assert asked.headers["access-control-allow-headers"] == "content-type"
        other = post(served, "tick", {"label": "x"}, headers={"Origin": "http://localhost:3001"})
        assert other.status_code == 403
        assert (
            post(served, "tick", {"label": "n"}, headers={"Host": "notes.lan"}).status_code == 200
        )
        assert served.count() == 2
    bad = served.cli("api", "serve", "--port", "0", "--allow-origin", "localhost:3000")
    assert bad.returncode == 2
    assert "'localhost:3000' is not an origin" in json.loads(bad.stdout)["error"]["message"]


def test_address_in_use_is_a_clear_error(server):
    port = server.url.rsplit(":", 1)[1]
    result = server.cli("api", "serve", "--port", port)
    assert result.returncode == 20
    assert "Traceback" not in result.stderr
    error = json.loads(result.stdout)["error"]  # not a terminal: the JSON envelope
    assert error["code"] == "E3002"  # a conflict: the address is in use
    assert error["message"] == f"127.0.0.1:{port} is already in use"
    assert error["details"] == {"host": "127.0.0.1", "port": int(port)}


def test_operation_ids_stay_unique():
    from atipkit.app import App

    app = App("clash", version="1")

    @app.command(name="a_b")
    def flat() -> dict:
        """One."""
        return {}

    @app.group("a").command(name="b")
    def nested() -> dict:
        """Two."""
        return {}

    @app.command(name="openapi")
    def named_like_the_document() -> dict:
        """Three."""
        return {}

    doc = openapi(app)
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))
    assert doc["paths"]["/v1/a_b"]["post"]["operationId"] == "a_b"
    assert doc["paths"]["/v1/a/b"]["post"]["operationId"] == "a_b_2"
    assert doc["paths"]["/v1/openapi"]["post"]["operationId"] == "openapi_2"


def test_a_server_bug_is_still_an_envelope():
    """An app whose command cannot be defined fails when the document is built, inside
    the server: the answer is a 500 envelope, not Starlette's plain-text page. (In
    process: a real ASGI app and real requests, without a socket.)"""
    import anyio

    from atipkit.app import App
    from atipkit.app.http import asgi_app

    broken = App("broken", version="1")

    @broken.command()
    def bad(value: complex) -> dict:  # complex has no JSON Schema: a DefinitionError
        """Cannot be defined."""
        return {}

    async def fetch() -> httpx.Response:
        transport = httpx.ASGITransport(app=asgi_app(broken), raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            return await c.get("/openapi.json")

    response = anyio.run(fetch)
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["ok"] is False
    assert body["error"]["code"] == "E5001"
    assert body["error"]["details"]["exception"] == "DefinitionError"
    assert body["meta"]["tool"] == "broken"
