"""`atip app serve FILE.py` (PRD §19.3 item 1) and the App options of PRD §7.1
(`default_output`, `permissions`, `mcp_transport`): a real `atip` process serving a
file that has no glue, to the official MCP client, and the files it refuses."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from atipkit.app import App, DefinitionError
from atipkit.app.loading import load_app
from tests.apps import served_app
from tests.helpers import app_env

APP = Path(served_app.__file__)
ATIP = [sys.executable, "-m", "atipkit"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return app_env(tmp_path, SHELF=str(tmp_path / "shelf.json"))


def atip(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ATIP, *args, "--json"], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_file_without_glue_is_served_over_stdio(tmp_path, env):
    (tmp_path / "shelf.json").write_text(json.dumps({"ulysses": "Joyce"}))
    params = StdioServerParameters(
        command=ATIP[0], args=[*ATIP[1:], "app", "serve", str(APP)], env=env, cwd=tmp_path
    )

    async def scenario() -> None:
        with open(tmp_path / "server.err", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                assert client.server_info.name == "shelf"
                listed = await client.call_tool("list", {})
                assert listed.structured_content["result"] == ["ulysses"]  # type: ignore[index]
                prompts = (await client.list_prompts()).prompts
                assert prompts[0].name == "review"

    anyio.run(scenario)


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


@pytest.mark.parametrize(
    ("name", "source", "exit_code", "message"),
    [
        ("absent.py", None, 10, "absent.py: no such file"),
        ("syntax.py", "x = (\n", 65, "syntax.py:1: the app cannot be loaded: SyntaxError"),
        (
            "raises.py",
            "from atipkit.app import App\napp = App('a', version='1')\n1 / 0\n",
            65,
            "raises.py:3: the app cannot be loaded: ZeroDivisionError: division by zero",
        ),
        (
            "shadow.py",
            """\
            from __future__ import annotations
            from atipkit.app import App
            app = App("todo", version="1")

            @app.command()
            def list() -> list[str]:
                return []
            """,
            65,
            "the function 'list' hides the built-in type 'list'",
        ),
        (
            "unguarded.py",
            "from atipkit.app import App\napp = App('a', version='1')\napp()\n",
            65,
            "unguarded.py: exits when imported (status 0)",
        ),
        ("empty.py", "x = 1\n", 2, "empty.py: defines no App"),
        (
            "two.py",
            "from atipkit.app import App\nfirst = App('a', version='1')\n"
            "second = App('b', version='1')\n",
            2,
            "two.py: defines several apps (first, second): name one",
        ),
    ],
)
def test_a_file_that_cannot_be_served_is_refused_with_its_reason(
    tmp_path, env, name, source, exit_code, message
):
    path = tmp_path / name if source is None else write(tmp_path, name, source)
    done = atip(env, "app", "serve", str(path))
    assert done.returncode == exit_code, done.stderr
    envelope = json.loads(done.stdout)
    assert message in envelope["error"]["message"]
    assert envelope["error"]["details"]["file"] == str(path)


def test_app_names_the_one_to_serve(tmp_path):
    source = "from atipkit.app import App\nfirst = App('a', version='1')\n"
    path = write(tmp_path, "two.py", source + "second = App('b', version='1')\n")
    assert load_app(path, "second").name == "b"
    with pytest.raises(Exception, match="no App named 'third'"):
        load_app(path, "third")


def test_default_output_is_the_mode_of_a_call_that_names_none():
    app = App("shelf", version="1", default_output="text")

    @app.command()
    def show() -> dict:
        return {"title": "dune"}

    runner = CliRunner()
    assert runner.invoke(app.click_group, ["show"]).output == "title: dune\n"
    as_json = runner.invoke(app.click_group, ["show", "--json"]).output
    assert json.loads(as_json)["result"] == {"title": "dune"}
    wrong = runner.invoke(app.click_group, ["show", "--colour"])  # before the command runs
    assert wrong.exit_code == 2
    assert wrong.output.startswith("error: No such option '--colour'.")  # text, not JSON
    with pytest.raises(DefinitionError, match="default_output is one of auto, json"):
        App("shelf", version="1", default_output="yaml")


def test_mcp_transport_is_the_default_transport_and_sse_is_refused():
    app = App("shelf", version="1", mcp_transport="http")
    help_text = CliRunner().invoke(app.click_group, ["mcp", "serve", "--help"]).output
    assert "[default: http]" in help_text
    with pytest.raises(DefinitionError, match="replaced MCP's SSE transport"):
        App("shelf", version="1", mcp_transport="sse")


def test_permissions_are_stated_to_agents_and_checked():
    agent = json.loads(CliRunner().invoke(served_app.app.click_group, ["--agent"]).output)
    assert agent["x-atipkit"] == {"permissions": {"fs": "write"}}
    from atipkit.app.docs import skill_md

    assert "Permissions it needs: `fs`: write." in skill_md(served_app.app)
    assert App("a", version="1", permissions={"net": ["a.example", "b.example"]}).permissions == {
        "net": ["a.example", "b.example"]
    }
    with pytest.raises(DefinitionError, match="permissions map a scope name"):
        App("a", version="1", permissions={"fs": 3})  # type: ignore[dict-item]
