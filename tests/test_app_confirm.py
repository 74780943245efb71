"""A command that asks (`ctx.confirm`) or needs a human's approval (human in the loop),
called through its app's servers: over MCP the human at the client is asked through
elicitation (the official client, answering as a user would, or not at all); over HTTP
the request answers with `yes=true`, or is told so. Real server processes of
tests/apps/served_app.py; its shelf file shows whether a command went on."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp.types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from atipkit.app.http import openapi
from tests.apps import served_app
from tests.helpers import app_env
from tests.servers import listening

APP = Path(served_app.__file__)
BOOKS = {"dune": "Herbert", "emma": "Austen"}
QUESTION = "shelf.clear: Remove all 2 books?"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "shelf.json").write_text(json.dumps(BOOKS))
    return app_env(tmp_path, SHELF=str(tmp_path / "shelf.json"))


def shelf(tmp_path: Path) -> dict[str, str]:
    books: dict[str, str] = json.loads((tmp_path / "shelf.json").read_text())
    return books


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def runner(*args: str) -> list[str]:
    """The app's own command line, from its file (it has no __main__ block)."""
    code = f"import runpy, sys; runpy.run_path({str(APP)!r})['app'](sys.argv[1:])"
    return [sys.executable, "-c", code, *args]


@asynccontextmanager
async def stdio(
    tmp_path: Path, env: dict[str, str], *args: str, **kwargs: Any
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=runner("mcp", "serve", *args)[0],
        args=runner("mcp", "serve", *args)[1:],
        env=env,
        cwd=tmp_path,
    )
    kwargs.setdefault("mode", "legacy")
    with open(tmp_path / "server.err", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), **kwargs) as client:
            yield client


def answering(action: str, confirm: bool | None, asked: list[str]) -> Any:
    """An elicitation callback that answers as a user would: accept (ticking the box or
    not), decline or cancel."""

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        assert params.requested_schema["required"] == ["confirm"]  # type: ignore[union-attr]
        content = None if confirm is None else {"confirm": confirm}
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return elicit


# MCP ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "confirm", "removed"),
    [("accept", True, 2), ("accept", False, 0), ("decline", None, 0)],
)
@pytest.mark.parametrize("mode", ["legacy", "auto"])  # a request; the 2026-07-28 rounds
def test_the_question_is_asked_through_elicitation(tmp_path, env, mode, action, confirm, removed):
    asked: list[str] = []

    async def scenario() -> None:
        elicit = answering(action, confirm, asked)
        async with stdio(tmp_path, env, mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("clear", {})
            assert result.structured_content == {
                "ok": True,
                "result": {"removed": removed},
                "meta": result.structured_content["meta"],  # type: ignore[index]
            }

    run(scenario)
    assert asked == [QUESTION]
    assert shelf(tmp_path) == ({} if removed else BOOKS)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_two_questions_are_asked_in_turn(tmp_path, env, mode):
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": "author" in params.message})

    async def scenario() -> None:
        async with stdio(tmp_path, env, mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("sort", {})
            assert result.structured_content["result"] == {  # type: ignore[index]
                "by_author": True,
                "by_year": False,
            }

    run(scenario)
    # each question asked once, though the command runs three times in rounds
    assert asked == ["shelf.sort: Sort by author?", "shelf.sort: Sort by year?"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_dismissed_question_stops_the_call(tmp_path, env, mode):
    asked: list[str] = []

    async def scenario() -> None:
        elicit = answering("cancel", None, asked)
        async with stdio(tmp_path, env, mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("clear", {})
            assert result.is_error is True
            error = result.structured_content["error"]  # type: ignore[index]
            assert (error["code"], error["exit_code"]) == ("E2003", 30)
            assert error["details"] == {"question": "Remove all 2 books?", "answer": "cancel"}

    run(scenario)
    assert asked == [QUESTION]
    assert shelf(tmp_path) == BOOKS


def test_a_client_that_fails_to_answer_stops_the_call(tmp_path, env):
    async def broken(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        raise RuntimeError("the dialog crashed")

    async def scenario() -> None:
        async with stdio(tmp_path, env, elicitation_callback=broken) as client:
            result = await client.call_tool("clear", {})
            error = result.structured_content["error"]  # type: ignore[index]
            assert (error["code"], error["exit_code"]) == ("E2003", 30)
            assert error["message"].startswith("the client did not answer the question")

    run(scenario)
    assert shelf(tmp_path) == BOOKS


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_that_cannot_be_asked_gets_a_handoff_not_a_hang(tmp_path, env, mode):
    async def scenario() -> None:
        async with stdio(tmp_path, env, mode=mode) as client:  # no elicitation callback
            result = await client.call_tool("clear", {})
            error = result.structured_content["error"]  # type: ignore[index]
            assert (error["code"], error["exit_code"]) == ("E2002", 101)
            assert error["message"].startswith(
                "shelf.clear asks 'Remove all 2 books?', and this MCP client cannot be asked: "
                "the server asks through elicitation, and the client did not offer it"
            )
            assert error["suggestion"]["action"] == "ask_human"
            assert error["details"] == {"question": "Remove all 2 books?"}

    run(scenario)
    assert shelf(tmp_path) == BOOKS


def test_serve_yes_answers_questions_but_never_approvals(tmp_path, env):
    async def scenario() -> None:
        async with stdio(tmp_path, env, "--yes") as client:
            cleared = await client.call_tool("clear", {})
            assert cleared.structured_content["result"] == {"removed": 2}  # type: ignore[index]
            donated = await client.call_tool("donate", {"title": "dune"})
            assert donated.structured_content["error"]["exit_code"] == 101  # type: ignore[index]

    run(scenario)
    assert shelf(tmp_path) == {}


@pytest.mark.parametrize(
    ("mode", "confirm", "donated"),
    [("legacy", True, True), ("auto", True, True), ("legacy", False, False)],
)
def test_a_human_in_the_loop_command_asks_for_approval(tmp_path, env, mode, confirm, donated):
    asked: list[str] = []

    async def scenario() -> None:
        elicit = answering("accept", confirm, asked)
        async with stdio(tmp_path, env, mode=mode, elicitation_callback=elicit) as client:
            result = await client.call_tool("donate", {"title": "dune"})
            envelope = result.structured_content
            assert envelope is not None
            if donated:
                assert envelope["result"] == {"donated": "dune"}
            else:
                assert (envelope["error"]["code"], envelope["error"]["exit_code"]) == ("E2003", 30)

    run(scenario)
    assert asked == [
        "shelf.donate needs your approval: shelf donate is marked human-in-the-loop. Go ahead?"
    ]
    assert ("dune" in shelf(tmp_path)) is not donated


def test_run_tool_in_deferred_mode_asks_too(tmp_path, env):
    asked: list[str] = []

    async def scenario() -> None:
        elicit = answering("accept", True, asked)
        async with stdio(
            tmp_path, env, "--deferred", mode="auto", elicitation_callback=elicit
        ) as client:
            ran = await client.call_tool("run_tool", {"name": "clear", "arguments": {}})
            assert ran.structured_content["result"] == {"removed": 2}  # type: ignore[index]

    run(scenario)
    assert asked == [QUESTION]


# HTTP -----------------------------------------------------------------------------------


def test_over_http_the_request_answers_with_yes(tmp_path, env):
    with (
        listening(runner("api", "serve"), env, tmp_path) as url,
        httpx.Client(base_url=url, timeout=30) as http,
    ):
        asked = http.post("/v1/clear", json={})
        assert asked.status_code == 400
        error = asked.json()["error"]
        assert (error["code"], error["exit_code"]) == ("E1006", 2)
        assert error["message"] == (
            "shelf.clear asks 'Remove all 2 books?': answer yes with the query parameter yes=true"
        )
        assert error["details"] == {"question": "Remove all 2 books?", "param": "yes"}
        assert error["suggestion"]["example"] == "POST /v1/clear?yes=true"
        assert shelf(tmp_path) == BOOKS

        for bad, code in [("maybe", "E1002"), ("true&yes=true", "E1002")]:
            refused = http.post(f"/v1/clear?yes={bad}", json={})
            assert (refused.status_code, refused.json()["error"]["code"]) == (400, code)
        never = http.post("/v1/list?yes=true", json={})  # list never asks
        assert never.status_code == 400
        assert never.json()["error"]["message"] == "shelf list takes no yes: it never asks"
        handoff = http.post("/v1/donate?yes=true", json={"title": "dune"})
        assert (handoff.status_code, handoff.json()["error"]["exit_code"]) == (403, 101)
        assert shelf(tmp_path) == BOOKS

        done = http.post("/v1/clear?yes=true", json={})
        assert (done.status_code, done.json()["result"]) == (200, {"removed": 2})
        assert shelf(tmp_path) == {}
        assert http.get("/openapi.json").json() == json.loads(json.dumps(openapi(served_app.app)))


def test_openapi_documents_yes_where_a_command_may_ask():
    document = openapi(served_app.app)
    parameter = document["components"]["parameters"]["yes"]
    assert parameter["in"] == "query"
    assert parameter["schema"] == {"type": "boolean", "default": False}
    ref = {"$ref": "#/components/parameters/yes"}
    assert ref in document["paths"]["/v1/clear"]["post"]["parameters"]
    assert ref in document["paths"]["/v1/donate"]["post"]["parameters"]
    assert ref not in document["paths"]["/v1/list"]["post"]["parameters"]
    assert document["info"]["x-atipkit"] == {"permissions": {"fs": "write"}}
