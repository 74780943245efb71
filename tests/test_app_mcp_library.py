"""`@app.resource` and `@app.prompt` (PRD §11.2, §19.3 item 2): listed and served by
the app's MCP server, checked with the official MCP client against real server
processes over stdio and over streamable HTTP. The app is tests/apps/served_app.py."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from atipkit.app import App, DefinitionError
from tests.apps import served_app
from tests.helpers import app_env
from tests.servers import listening

APP = Path(served_app.__file__)
ATIP = [sys.executable, "-m", "atipkit"]
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "shelf.json").write_text(json.dumps({"dune": "Herbert", "emma": "Austen"}))
    return app_env(tmp_path, SHELF=str(tmp_path / "shelf.json"))


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


@asynccontextmanager
async def stdio(tmp_path: Path, env: dict[str, str], **kwargs: object) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", f"import runpy; runpy.run_path({str(APP)!r})['app'](['mcp', 'serve'])"],
        env=env,
        cwd=tmp_path,
    )
    with open(tmp_path / "server.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), **kwargs) as client:  # type: ignore[arg-type]
            yield client


async def check_library(client: Client) -> None:
    """What both transports must answer alike."""
    assert client.server_capabilities.resources is not None
    assert client.server_capabilities.prompts is not None

    resources = (await client.list_resources()).resources
    assert [(r.uri, r.name, r.mime_type) for r in resources] == [
        ("shelf://titles", "titles", "application/json")
    ]
    assert resources[0].description == "Every title, sorted."
    templates = (await client.list_resource_templates()).resource_templates
    assert [(t.uri_template, t.name) for t in templates] == [
        ("shelf://book/{title}", "book"),
        ("shelf://cover/{title}/{size}", "cover"),
    ]

    [titles] = (await client.read_resource("shelf://titles")).contents
    assert (titles.mime_type, json.loads(titles.text)) == ("application/json", ["dune", "emma"])
    [author] = (await client.read_resource("shelf://book/emma")).contents
    assert (author.uri, author.mime_type, author.text) == (
        "shelf://book/emma",
        "text/plain",
        "Austen",
    )
    [cover] = (await client.read_resource("shelf://cover/dune/258")).contents
    assert cover.mime_type == "image/x-test"
    assert base64.b64decode(cover.blob) == b"\x02\x02\x02"

    with pytest.raises(MCPError) as nowhere:  # a URI nothing serves
        await client.read_resource("shelf://title")
    assert nowhere.value.code == INVALID_PARAMS
    assert nowhere.value.message == "no resource at shelf://title"
    assert nowhere.value.data["code"] == "E3001"
    assert nowhere.value.data["details"]["did_you_mean"][0] == "shelf://titles"
    with pytest.raises(MCPError) as absent:  # the function's own NotFoundError
        await client.read_resource("shelf://book/ulysses")
    assert (absent.value.code, absent.value.message) == (
        INVALID_PARAMS,
        "no book 'ulysses' on the shelf",
    )
    with pytest.raises(MCPError) as typed:  # {size} is an int
        await client.read_resource("shelf://cover/dune/big")
    assert typed.value.code == INVALID_PARAMS
    assert typed.value.data["code"] == "E1002"
    assert typed.value.data["details"]["param"] == "size"
    assert "'big' is not a valid integer" in typed.value.message

    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["review", "broken"]
    review = prompts[0]
    assert (review.title, review.description) == ("Review a book", "Ask for a review of one book.")
    assert [(a.name, a.required, a.description) for a in review.arguments or []] == [
        ("title", True, "The book to review"),
        ("words", False, "How long the review is (an integer)"),
        ("tone", False, "One of kind, blunt"),
    ]
    got = await client.get_prompt("review", {"title": "dune", "words": "50", "tone": "blunt"})
    assert [(m.role, m.content.text) for m in got.messages] == [  # type: ignore[union-attr]
        ("user", "Review 'dune' by Herbert in about 50 words."),
        ("assistant", "I will be blunt."),
    ]
    default = await client.get_prompt("review", {"title": "emma"})
    assert default.messages[0].content.text.endswith("about 100 words.")  # type: ignore[union-attr]

    for arguments, code, param in [
        ({"title": "dune", "words": "many"}, "E1002", "words"),  # not an integer
        ({"title": "dune", "words": "3"}, "E1002", "words"),  # under its minimum
        ({"title": "dune", "tone": "rude"}, "E1002", "tone"),  # not a choice
        ({"words": "50"}, "E1001", "title"),  # required, missing
        ({"title": "dune", "colour": "red"}, "E1001", "colour"),  # no such argument
    ]:
        with pytest.raises(MCPError) as wrong:
            await client.get_prompt("review", arguments)
        assert wrong.value.code == INVALID_PARAMS, arguments
        assert (wrong.value.data["code"], wrong.value.data["details"]["param"]) == (code, param)
    with pytest.raises(MCPError) as unknown:
        await client.get_prompt("reveiw", {})
    assert unknown.value.code == INVALID_PARAMS
    assert unknown.value.data["details"]["did_you_mean"] == ["review"]
    with pytest.raises(MCPError) as bug:
        await client.get_prompt("broken", {})
    assert bug.value.code == INTERNAL_ERROR
    assert bug.value.data["code"] == "E5001"

    assert [t.name for t in (await client.list_tools()).tools] == [
        "list",
        "clear",
        "sort",
        "donate",
    ]


def test_resources_and_prompts_over_stdio(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env, mode="legacy") as client:
            await check_library(client)
        async with stdio(tmp_path, env) as client:  # the modern protocol: no handshake
            await check_library(client)

    run(scenario)


def test_resources_and_prompts_over_streamable_http(tmp_path, env):
    with listening([*ATIP, "app", "serve", str(APP), "--http"], env, tmp_path) as url:

        async def scenario() -> None:
            async with Client(f"{url}/mcp", mode="legacy") as client:
                await check_library(client)

        run(scenario)


def test_an_app_without_them_claims_neither_capability(tmp_path, env):
    from atipkit.app.mcp_library import handlers

    assert handlers(App("bare", version="1")) == {}
    assert set(handlers(served_app.app)) == {
        "on_list_resources",
        "on_list_resource_templates",
        "on_read_resource",
        "on_list_prompts",
        "on_get_prompt",
    }


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("books/{title}", "a URI starts with a scheme"),
        ("shelf://book/{name}", "the URI's variables (name) must be the parameters of f (title)"),
    ],
)
def test_a_resource_that_cannot_be_served_is_refused_where_it_is_defined(uri, message):
    app = App("shelf", version="1")
    with pytest.raises(DefinitionError, match=message.replace("(", r"\(").replace(")", r"\)")):

        @app.resource(uri)
        def f(title: str) -> str:
            return title


def test_a_prompt_argument_text_cannot_spell_is_refused_when_the_server_starts():
    from atipkit.app.mcp_library import handlers

    app = App("shelf", version="1")

    @app.prompt()
    def many(titles: list[str]) -> str:
        return ""

    with pytest.raises(DefinitionError, match="parameter 'titles': given as text"):
        handlers(app)
    with pytest.raises(DefinitionError, match="defined twice"):
        app.prompt("many")(lambda: "")
