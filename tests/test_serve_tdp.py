"""`atip serve --tdp` as a real process answering real HTTP requests: the manifest of the
local registry's tools (probed from real programs by `atip scan`), checked against the
spec's tables; one tool, a JSON 404, HEAD, ETag and 304, OPTIONS, 405; the Host and Origin
guards, and CORS only for the origins allowed; 503 while
the registry cannot be read; rebuilt when the registry or a tool changes and only then;
`--tool` documents; one server with `--registry` beside it; `fetch()` against it round-
tripping ATIP → TDP → ATIP; the usage errors before serving."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from click.testing import CliRunner

import atipkit
from atipkit._duration import parse_duration
from atipkit.bridge import Compiler
from atipkit.cli import cli
from atipkit.interop import tdp
from atipkit.model import UNSET, dumps, effective_effects, from_dict, get_command, load
from atipkit.registry import layout
from atipkit.validation import validate
from tests.helpers import ATIP_VARIABLES, EXAMPLES, FIXTURES
from tests.servers import preflight

ATIP = [sys.executable, "-m", "atipkit"]
SCHEMA = jsonschema.Draft202012Validator(
    json.loads((FIXTURES / "tdp" / "manifests" / "tool-manifest.schema.json").read_text())
)
PROGRAMS = ("deploy", "cloudctl", "legacy-tool")
HELLO = """#!/usr/bin/env python3
import json, sys
if "--agent" in sys.argv[1:]:
    print(json.dumps({"atip": {"version": "0.6"}, "name": "hello", "version": "1.0",
        "description": "Say hello", "commands": {"": {"description": "Greet someone",
        "arguments": [{"name": "who", "type": "string", "description": "Whom"}],
        "effects": {"network": False, "filesystem": {"write": False}, "idempotent": True}}}}))
    sys.exit(0)
print("hello")
"""


@dataclass
class Home:
    """A registry of its own: XDG directories under `root`, programs in `bin`."""

    root: Path
    bin: Path
    env: dict[str, str]

    @property
    def index(self) -> Path:
        return self.root / "data" / "agent-tools" / "registry.json"

    def atip(self, *args: str) -> dict[str, Any]:
        done = subprocess.run(
            [*ATIP, *args, "--json"], env=self.env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)


def make_home(root: Path) -> Home:
    bin_dir = root / "bin"
    bin_dir.mkdir(mode=0o755, parents=True)
    for name in PROGRAMS:
        shutil.copy(EXAMPLES / "bin" / name, bin_dir / name)
    env = {k: v for k, v in os.environ.items() if k not in ATIP_VARIABLES}
    env |= {
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "ATIP_CACHE_DIR": str(root / "cache"),
    }
    home = Home(root, bin_dir, env)
    scanned = home.atip("scan", "--path", str(bin_dir))
    assert {f["name"] for f in scanned["result"]["found"]} == set(PROGRAMS)
    return home


@dataclass
class Server:
    started: dict[str, str]
    log: Path

    @property
    def tools(self) -> str:
        return self.started["tdp"]

    def requests(self, line: str) -> int:
        """How many requests the server logged that contain `line`."""
        return self.log.read_text().count(line)


@contextmanager
def serving(home: Home, *args: str) -> Iterator[Server]:
    log = home.root / f"server-{time.monotonic_ns()}.log"
    with open(log, "w") as err:
        process = subprocess.Popen(
            [*ATIP, "serve", *args, "--port", "0", "--jsonl"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=home.env,
        )
        try:
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line, log.read_text()
            yield Server(json.loads(line), log)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(10)
    assert process.returncode == 0, log.read_text()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Home:
    return make_home(tmp_path_factory.mktemp("tdp-home"))


@pytest.fixture(scope="module")
def served(home) -> Iterator[Server]:
    with serving(home, "--tdp") as server:
        yield server


def conforms(manifest: dict[str, Any]) -> None:
    errors = [f"{e.json_path}: {e.message}" for e in SCHEMA.iter_errors(manifest)]
    assert not errors, errors


def originals() -> list[Any]:
    """What the programs say of themselves: the documents the manifest is made of."""
    return [
        from_dict(
            json.loads(
                subprocess.run(
                    [str(EXAMPLES / "bin" / n), "--agent"], capture_output=True, check=True
                ).stdout
            )
        )
        for n in PROGRAMS
    ]


def cors(response: httpx.Response) -> None:
    """No CORS unless asked for (`--allow-origin`): no web page may read the tools of
    this machine."""
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


# -- the endpoints -----------------------------------------------------------------------------


def test_the_manifest_of_the_registry(served):
    assert served.tools == served.started["url"] + "api/v1/tools"
    response = httpx.get(served.tools)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "public, max-age=60"
    cors(response)
    manifest = response.json()
    conforms(manifest)
    assert manifest["scenario"]["name"] == "atip"
    assert manifest["scenario"]["version"] == atipkit.__version__
    names = {t["name"] for t in manifest["tools"]}
    expected = {t.name.replace("-", "_") for t in Compiler(originals()).flat}
    assert names == expected
    assert {"deploy_destroy", "cloudctl_compute_create", "legacy_tool"} <= names
    entries = {t["name"]: t for t in manifest["tools"]}
    assert entries["deploy_destroy"]["metadata"]["requires_approval"] is True
    assert entries["cloudctl_billing_create"]["metadata"]["requires_approval"] is True  # billable
    assert entries["deploy_status"]["metadata"]["requires_approval"] is False
    assert entries["deploy_release_create"]["metadata"]["timeout_seconds"] == 300
    assert {c["id"] for c in manifest["categories"]} >= {"deploy", "deploy_release", "cloudctl_dns"}


def test_one_tool_and_a_json_404(served):
    manifest = httpx.get(served.tools).json()
    entry = next(t for t in manifest["tools"] if t["name"] == "deploy_destroy")
    response = httpx.get(f"{served.tools}/deploy_destroy")
    assert response.status_code == 200
    assert response.json() == entry
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "public, max-age=60"
    cors(response)
    for path in ("/nope", "/deploy-destroy"):
        missing = httpx.get(served.tools + path)
        assert missing.status_code == 404
        assert missing.headers["content-type"] == "application/json"
        cors(missing)
        name = path[1:]
        assert missing.json() == {
            "error": "not-found",
            "message": f"no tool named {name!r} in this manifest",
        }
    elsewhere = httpx.get(served.started["url"] + "api/v2/tools")
    assert elsewhere.status_code == 404
    assert elsewhere.json()["error"] == "not-found"


def test_head_etag_options_and_other_methods(served):
    got = httpx.get(served.tools)
    head = httpx.head(served.tools)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(got.content))
    assert head.headers["etag"] == got.headers["etag"]
    assert head.headers["cache-control"] == "public, max-age=60"
    cors(head)
    cached = httpx.get(served.tools, headers={"If-None-Match": got.headers["etag"]})
    assert cached.status_code == 304
    assert cached.content == b""
    assert cached.headers["etag"] == got.headers["etag"]
    tool_etag = httpx.get(f"{served.tools}/deploy_status").headers["etag"]
    assert tool_etag != got.headers["etag"]
    assert httpx.get(served.tools, headers={"If-None-Match": tool_etag}).status_code == 200
    options = httpx.options(f"{served.tools}/deploy_status")
    assert options.status_code == 204
    assert options.headers["allow"] == "GET, HEAD, OPTIONS"
    cors(options)
    asked = preflight(f"{served.tools}/deploy_status", "https://inbox.example", "GET", "x-api-key")
    assert asked.status_code == 403  # a page no --allow-origin named
    assert asked.json()["error"] == "origin-not-allowed"
    cors(asked)
    for method in ("POST", "PUT", "DELETE", "PATCH", "TRACE"):
        refused = httpx.request(method, served.tools)
        assert refused.status_code == 405, method
        assert refused.headers["allow"] == "GET, HEAD, OPTIONS"
        assert refused.headers["content-type"] == "application/json"
        cors(refused)
        assert refused.json()["error"] == "method-not-allowed"


def test_fetch_round_trips_atip_through_tdp(served):
    tdp.clear_cache()
    manifest = tdp.fetch(served.started["url"])
    assert tdp.fetch(served.tools) is manifest  # public, max-age=60: not asked again
    assert served.requests('"GET /api/v1/tools HTTP/1.1" 200') >= 1
    before = served.requests('"GET /api/v1/tools HTTP/1.1"')
    tdp.fetch(served.tools)
    assert served.requests('"GET /api/v1/tools HTTP/1.1"') == before
    document = tdp.to_atip(manifest)
    assert validate(dumps(document)).ok
    assert document.name == "atip"
    tools = {t.name: t for t in originals()}
    flat = Compiler(list(tools.values())).flat
    assert set(document.commands) == {f.name.replace("-", "_") for f in flat}
    for f in flat:
        command = document.commands[f.name.replace("-", "_")]
        target = f.binding.targets[""]
        original = tools[target.tool]
        # effects: exactly the command's effective effects (x-atip)
        assert command.effects == effective_effects(original, target.path), f.name
        # parameters: one option per property, named by its key, required as it was
        assert [o.name for o in command.options] == list(f.input_schema["properties"])
        required = [o.name for o in command.options if o.required]
        assert required == f.input_schema.get("required", [])
        for option in command.options:
            ref = target.params[option.name]
            own = get_command(original, target.path)
            params = {
                "argument": own.arguments,
                "option": own.options,
                "global": original.global_options,
            }[ref.kind]
            spec = next(p for p in params if p.name == ref.name)
            assert option.type == _carried(spec), (f.name, option.name)
            if spec.enum:
                assert option.enum == spec.enum
            if spec.default is not UNSET:
                assert option.default == spec.default


def _carried(spec: Any) -> str:
    """The ATIP type that survives TDP: paths and URLs are strings there (their kind is
    in the description), a variadic parameter an array."""
    if spec.variadic:
        return "array"
    return {"file": "string", "directory": "string", "url": "string"}.get(spec.type, spec.type)


# -- the state behind the manifest ---------------------------------------------------------------


def test_rebuilt_when_the_registry_or_a_tool_changes_and_only_then(tmp_path):
    home = make_home(tmp_path)
    with serving(home, "--tdp") as server:
        first = httpx.get(server.tools)
        time.sleep(1.1)  # generated_at has seconds: a rebuild now would show
        again = httpx.get(server.tools)
        assert again.content == first.content  # the registry did not change: not rebuilt
        assert again.headers["etag"] == first.headers["etag"]
        hello = home.bin / "hello"
        hello.write_text(HELLO)
        hello.chmod(0o755)
        home.atip("scan", "--path", str(home.bin))
        grown = httpx.get(server.tools).json()
        assert grown["generated_at"] != first.json()["generated_at"]
        assert "hello" in {t["name"] for t in grown["tools"]}
        # a program that changes (an upgrade) is seen without a rescan
        deploy = home.bin / "deploy"
        deploy.write_text(deploy.read_text().replace('"version": "2.1.0"', '"version": "2.2.0"'))
        upgraded = httpx.get(f"{server.tools}/deploy_status").json()
        assert upgraded["x-atip"]["version"] == "2.2.0"


def test_503_while_the_registry_cannot_be_read(tmp_path):
    home = make_home(tmp_path)
    good = home.index.read_bytes()
    with serving(home, "--tdp") as server:
        assert httpx.get(server.tools).status_code == 200
        home.index.write_text('{"version": "2", "tools": {"deploy": ')
        for url in (server.tools, f"{server.tools}/deploy_status"):
            down = httpx.get(url)
            assert down.status_code == 503
            assert down.headers["content-type"] == "application/json"
            assert down.headers["cache-control"] == "no-store"
            assert down.headers["retry-after"] == "60"
            cors(down)
            body = down.json()
            assert body["error"] == "unavailable"
            assert body["message"].startswith(f"{home.index}: cannot be read")
        assert httpx.head(server.tools).status_code == 503
        home.index.write_bytes(good)
        assert httpx.get(server.tools).status_code == 200  # back as soon as it is readable


def test_documents_given_with_tool(tmp_path):
    home = Home(tmp_path, tmp_path, {**os.environ, "XDG_DATA_HOME": str(tmp_path / "none")})
    gh = tmp_path / "gh.json"
    shutil.copy(EXAMPLES / "tools" / "gh.json", gh)
    kubectl = EXAMPLES / "tools" / "kubectl.json"
    with serving(
        home, "--tdp", "--tool", str(gh), "--tool", str(kubectl), "--scenario", "dev"
    ) as s:
        manifest = httpx.get(s.tools).json()
        conforms(manifest)
        assert manifest["scenario"]["name"] == "dev"
        names = {t["name"] for t in manifest["tools"]}
        assert {"gh_pr_create", "kubectl_delete"} <= names
        changed = json.loads(gh.read_text())
        changed["commands"]["pr"]["commands"]["close"] = {
            "description": "Close a pull request",
            "effects": {"network": True, "idempotent": True},
        }
        gh.write_text(json.dumps(changed))
        assert httpx.get(f"{s.tools}/gh_pr_close").status_code == 200
        gh.write_text("{")
        down = httpx.get(s.tools)
        assert down.status_code == 503
        assert down.json()["message"].startswith(f"{gh}: line 1, column 2: invalid JSON")
    with serving(home, "--tdp", "--tool", str(kubectl), "--no-x-atip") as s:
        manifest = httpx.get(s.tools).json()
        conforms(manifest)
        assert not [k for t in manifest["tools"] for k in t if k.startswith("x-")]
        document = tdp.to_atip(tdp.fetch(s.tools, refresh=True))
        delete = document.commands["kubectl_delete"]
        original = load(kubectl)
        assert delete.effects.destructive is UNSET  # requires_approval proves nothing
        assert delete.extensions["x-tdp"]["metadata"]["requires_approval"] is True
        stated = effective_effects(original, ("delete",))
        assert delete.effects.idempotent == (stated.idempotent or False)
        if stated.duration and stated.duration.timeout:
            seconds = math.ceil(parse_duration(stated.duration.timeout))
            assert delete.effects.duration.timeout == f"{seconds}s"


def test_the_registry_and_the_tdp_from_one_server(home, tmp_path):
    from tests.test_registry_build import CURL, EPOCH, put

    src = tmp_path / "src"
    put(src, CURL.name, CURL.read_bytes())
    built = CliRunner(env={**home.env, "SOURCE_DATE_EPOCH": EPOCH}).invoke(
        cli, ["registry", "build", str(src), str(tmp_path / "site")]
    )
    assert built.exit_code == 0, built.output
    site = tmp_path / "site"
    with serving(home, "--registry", str(site), "--tdp") as server:
        assert set(server.started) == {"registry", "tdp", "url"}
        assert server.started["registry"] == str(site)
        url = server.started["url"]
        assert httpx.get(server.tools).json()["protocol_version"] == "1.0"
        catalog = httpx.get(url + layout.CATALOG)
        assert catalog.status_code == 200
        assert catalog.content == (site / layout.CATALOG).read_bytes()
        assert httpx.get(url).headers["content-type"] == "text/html; charset=utf-8"
        other = httpx.get(url + "api/v1/other")
        assert other.status_code == 404
        assert other.json()["message"] == "no such file in this registry"


def test_text_output_says_where_the_protocol_is(home):
    process = subprocess.Popen(
        [*ATIP, "serve", "--tdp", "--port", "0", "--text"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=home.env,
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        url = line.removeprefix("serving the Tool Discovery Protocol at ").split(" ")[0]
        assert line == f"serving the Tool Discovery Protocol at {url} (Ctrl-C to stop)\n"
        assert url.endswith("/api/v1/tools")
        assert httpx.get(url).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(10)
    assert process.returncode == 0


# -- who may ask: Host, Origin, CORS ----------------------------------------------------------


def test_a_foreign_host_or_a_page_of_another_origin_is_refused(served):
    """DNS rebinding: a page of attacker.example makes the browser reach this server
    under the page's own name, which is then the Host. And a page of any other origin,
    another port of localhost too, must not read what this machine can run (the server
    sent `Access-Control-Allow-Origin: *` to everyone)."""
    port = served.started["url"].rsplit(":", 1)[1].rstrip("/")
    for host in ("attacker.example", "127.evil.com", "localhost.attacker.example", "127.1"):
        refused = httpx.get(served.tools, headers={"Host": f"{host}:{port}"})
        assert refused.status_code == 403, host
        assert refused.json()["error"] == "host-not-allowed"
        cors(refused)
    for host in ("localhost", "127.0.0.1", "127.0.0.2", "[::1]"):
        assert httpx.get(served.tools, headers={"Host": f"{host}:{port}"}).status_code == 200
    for origin in ("http://localhost:3000", "https://inbox.example", "null"):
        page = httpx.get(served.tools, headers={"Origin": origin})
        assert page.status_code == 403, origin
        assert page.json()["error"] == "origin-not-allowed"
        cors(page)
    own = httpx.get(served.tools, headers={"Origin": served.started["url"].rstrip("/")})
    assert own.status_code == 200  # a page the server itself served
    cors(own)


def test_cors_only_for_the_origins_allowed(home):
    inbox = "https://inbox.example"
    with serving(
        home, "--tdp", "--allow-origin", inbox, "--allow-origin", "http://LOCALHOST:3000/"
    ) as server:
        got = httpx.get(server.tools, headers={"Origin": inbox})
        assert got.status_code == 200
        assert got.headers["access-control-allow-origin"] == inbox
        assert got.headers["vary"] == "Origin"
        local = httpx.get(server.tools, headers={"Origin": "http://localhost:3000"})
        assert local.headers["access-control-allow-origin"] == "http://localhost:3000"
        asked = preflight(f"{server.tools}/deploy_status", inbox, "GET", "x-api-key")
        assert asked.status_code == 204
        assert asked.headers["access-control-allow-origin"] == inbox
        assert asked.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
        assert asked.headers["access-control-allow-headers"] == "x-api-key"
        other = httpx.get(server.tools, headers={"Origin": "http://localhost:3001"})
        assert other.status_code == 403
        assert "access-control-allow-origin" not in other.headers
    with serving(home, "--tdp", "--allow-origin", "*", "--allow-host", "tools.lan") as server:
        anyone = httpx.get(server.tools, headers={"Origin": "https://a.example"})
        assert anyone.headers["access-control-allow-origin"] == "*"
        named = httpx.get(server.tools, headers={"Host": "tools.lan:8000"})
        assert named.status_code == 200
        assert httpx.get(server.tools, headers={"Host": "other.lan"}).status_code == 403


# -- before serving ------------------------------------------------------------------------------


def refused(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["serve", *args, "--port", "0"], catch_exceptions=False)
    error = json.loads(result.stdout)["error"]
    assert result.exit_code == error["exit_code"]
    return error


@pytest.mark.usefixtures("isolated_home")
def test_usage_errors_before_serving(tmp_path):
    neither = refused()
    assert (neither["exit_code"], neither["code"]) == (2, "E1001")
    assert neither["message"] == "Missing option '--registry' or '--tdp'."
    assert "--tdp" in neither["suggestion"]["fix"]
    alone = refused("--tool", str(EXAMPLES / "tools" / "gh.json"))
    assert (alone["exit_code"], alone["code"]) == (2, "E1002")
    assert alone["message"] == "--tool, --scenario and --no-x-atip go with --tdp"
    missing = refused("--tdp", "--tool", str(tmp_path / "none.json"))
    assert (missing["exit_code"], missing["message"]) == (
        10,
        f"--tool {tmp_path / 'none.json'}: no such file",
    )
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"atip": {"version": "0.6"}, "name": "x"}))
    invalid = refused("--tdp", "--tool", str(bad))
    assert invalid["exit_code"] == 65
    assert invalid["message"].startswith(f"--tool {bad}: ")
    for origin in ("localhost:3000", "http://x.example/path", "ftp://x.example"):
        not_one = refused("--tdp", "--allow-origin", origin)
        assert (not_one["exit_code"], not_one["details"]) == (2, {"param": "allow_origin"})
        assert not_one["message"].startswith(f"{origin!r} is not an origin")
