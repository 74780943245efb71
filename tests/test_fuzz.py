"""Hostile and broken documents, thousands of them: `validate`, `compile`, `import atdf`,
`import tdp`, `import mcp` and `export atdf` never exit 70 and never print a traceback.

The inputs are mutations of the valid documents of each kind (examples/, the fixtures, and
the ATDF and TDP that atipkit itself writes from them) and arbitrary JSON: parts deleted,
values of the wrong type, of a wrong enum value or taken from elsewhere in the document,
nesting at and past the limit (64) and far past it (100 000), strings of 100 000
characters, lone surrogates (escaped, and raw in the bytes), NaN and Infinity, keys given
twice, odd Unicode, bytes cut or garbled. Each command runs in-process through Click's
runner (`tests.helpers.atip`); its exit status must be one the command documents.

`import mcp` reads a server: its listing goes through the pure `describe` (what the
command does with what the SDK hands it) in-process, and a sample goes through the whole
command against a real MCP server (streamable HTTP, in a thread of this process).

Examples per command are fixed (5 000 and more in all) and the generation is derandomized,
so CI runs the same inputs every time; `ATIP_FUZZ_SCALE=10` runs ten times as many, with a
random seed each run, to look for new failures. Every failure found has a plain test of
its own next to the fix.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atipkit.errors import DocumentError
from atipkit.interop.atdf import export_atdf
from atipkit.interop.mcp import Endpoint, Listing, McpError, describe
from atipkit.interop.tdp import manifest
from atipkit.model import dumps, load, to_dict
from atipkit.validation import validate, validate_file
from tests.apps.mcp_import_server import TOOLS as MCP_TOOLS
from tests.helpers import EXAMPLES, FIXTURES, STARTUP, atip

SCALE = float(os.environ.get("ATIP_FUZZ_SCALE", "1"))
"""More (or fewer) examples than CI runs: 10 for a long local search."""
EXIT_CODES = {0, 2, 10, 20, 30, 40, 50, 65}
"""What the commands may answer (SPEC-NOTES 23); 70 means a bug."""


def fuzz_settings(examples: int) -> Any:
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        derandomize=SCALE == 1,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


# -- seeds: valid documents of each kind -----------------------------------------------------

_ATIP_FILES = [
    *sorted((EXAMPLES / "tools").glob("*.json")),
    *sorted((EXAMPLES / "shims").glob("*.json")),
    *sorted((FIXTURES / "rfc").glob("*.json")),
]
ATIP_SEEDS: list[Any] = [
    json.loads(p.read_text("utf-8")) for p in _ATIP_FILES if validate_file(p).ok
]
_TOOLS = [load(p) for p in [*sorted((EXAMPLES / "tools").glob("*.json"))]]
ATDF_SEEDS: list[Any] = [
    *(
        json.loads(p.read_text("utf-8"))
        for p in sorted((FIXTURES / "atdf" / "descriptors").glob("*.json"))
    ),
    export_atdf(_TOOLS, enhanced=True),
    export_atdf(_TOOLS[:1]),
]
TDP_SEEDS: list[Any] = [
    json.loads((FIXTURES / "tdp" / "manifests" / name).read_text("utf-8"))
    for name in ("agent-manager.snake.json", "agent-manager.proto3.json")
] + [manifest(_TOOLS)]
MCP_SEEDS: list[Any] = [copy.deepcopy(MCP_TOOLS), [copy.deepcopy(t) for t in MCP_TOOLS[:2]]]


# -- values that break things ----------------------------------------------------------------

_DEEP = "\x00DEEP:{}\x00"
"""Stands for JSON nested N arrays deep, written into the text when it is serialized."""
_RAW_SURROGATE = "\x00RAW-SURROGATE\x00"
"""Stands for a lone surrogate written as raw bytes (ED A0 80), not as an escape."""

ODD_TEXT = [
    "",
    " ",
    "\ud800",
    "a\udfffb",
    "\ud83d\ude80",
    "\x00",
    "\u202e\u2066evil",
    "e\u0301" * 50,
    "\ufeff",
    "\uffff",
    "🚀" * 10,
    "x" * 100_000,
    "(",
    "[a-",
    "*",
    "-",
    "--",
    "--x=y",
    "../../etc/passwd",
    "/",
    "${HOME}",
    "sha256:" + "0" * 64,
    "sha256:zz",
    "0.6",
    "9.9",
    "1.0",
    "x-",
    "_private",
    "$ref",
    "__proto__",
    "string",
    "enum",
    "object",
    "array",
    "true",
    "null",
    "NaN",
    _RAW_SURROGATE,
]
ODD_NUMBERS = [
    0,
    -1,
    1,
    2**31,
    2**63,
    10**30,
    -(10**30),
    0.5,
    -0.0,
    1e308,
    math.nan,
    math.inf,
    -math.inf,
]


_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(ODD_NUMBERS),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(ODD_TEXT),
    st.text(max_size=12),
    st.sampled_from([_DEEP.format(n) for n in (63, 64, 65, 500, 100_000)]),
)
KEYS = st.one_of(st.sampled_from(ODD_TEXT[:-1]), st.text(max_size=8))
JSON = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=6,
)
"""Any JSON value (and a few that JSON cannot say), odd ones first."""


# -- mutations -----------------------------------------------------------------------------


def _places(document: Any) -> list[tuple[Any, ...]]:
    """Every path into `document` (keys and indexes) but the root, deepest first:
    Hypothesis draws small indexes most, and the leaves are where most values are."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for key, child in items:
            out.append((*path, key))
            stack.append((child, (*path, key)))
    return sorted(out, key=len, reverse=True)


def _get(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


ACTIONS = st.sampled_from(["delete", "replace", "swap", "add", "wrap", "rename"])
SOFT = st.sampled_from(["like", "like", "like", "delete", "copy", "repeat"])
"""Changes that tend to keep a document valid, so the commands get past validation."""
TEXT = st.one_of(st.sampled_from(ODD_TEXT), st.text(max_size=20))


def _pick(draw: st.DrawFn, places: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    return places[draw(st.integers(0, len(places) - 1))]


def _like(draw: st.DrawFn, value: Any) -> Any:
    """Another value of the same JSON type: odd text for text, any number for a number."""
    if isinstance(value, bool):
        return draw(st.booleans())
    if isinstance(value, str):
        return draw(TEXT)
    if isinstance(value, int | float):
        return draw(st.one_of(st.sampled_from(ODD_NUMBERS), st.integers(-5, 10**6)))
    if isinstance(value, list):
        return value[::-1] if draw(st.booleans()) else []
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if draw(st.booleans())}
    return draw(JSON)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[Any]) -> Any:
    """A seed document changed one to three times: most of the changes keep to the
    document's shape (a value of the same type, a part copied or repeated), so the
    commands get past validation into what follows it; the others break it."""
    document = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):
        places = _places(document)
        if not places:
            break
        path = _pick(draw, places)
        parent, key = _get(document, path[:-1]), path[-1]
        if not isinstance(parent, dict | list):
            continue
        action = draw(SOFT) if draw(st.integers(0, 3)) else draw(ACTIONS)
        if action == "like":
            parent[key] = _like(draw, parent[key])
        elif action == "copy" and isinstance(parent, dict):  # a sibling under a new name
            parent[draw(TEXT)] = copy.deepcopy(parent[key])
        elif action in ("copy", "repeat") and isinstance(parent, list):
            parent.insert(draw(st.integers(0, len(parent))), copy.deepcopy(parent[key]))
        elif action == "repeat":  # the same part inside itself: nested commands
            parent[key] = copy.deepcopy(parent[key])
            inner = parent[key]
            if isinstance(inner, dict) and isinstance(inner.get("commands"), dict):
                inner["commands"]["again"] = copy.deepcopy(inner)
        elif action == "delete":
            del parent[key]
        elif action == "replace":
            parent[key] = draw(JSON)
        elif action == "swap":  # a value from elsewhere: a wrong enum value, a wrong type
            parent[key] = copy.deepcopy(_get(document, _pick(draw, places)))
        elif action == "add" and isinstance(parent, dict):
            parent[draw(KEYS)] = draw(JSON)
        elif action == "add":
            parent.append(draw(JSON))
        elif action == "wrap":
            parent[key] = [parent[key]] if draw(st.booleans()) else {"x": parent[key]}
        elif isinstance(parent, dict):  # rename: the value under another (perhaps odd) key
            parent[draw(KEYS)] = parent.pop(key)
    return document


@st.composite
def text_of(draw: st.DrawFn, document: Any) -> bytes:
    """`document` as JSON text: deep markers expanded, raw surrogates as raw bytes, NaN
    and Infinity as Python writes them, sometimes a key twice or the bytes garbled."""
    text = json.dumps(document, ensure_ascii=draw(st.booleans()), allow_nan=True)
    text = re.sub(
        r'"\\u0000DEEP:(\d+)\\u0000"|"\x00DEEP:(\d+)\x00"',
        lambda m: "[" * int(m.group(1) or m.group(2)) + "]" * int(m.group(1) or m.group(2)),
        text,
    )
    raw = text.encode("utf-8", "surrogatepass")
    raw = raw.replace(b"\\u0000RAW-SURROGATE\\u0000", b"\xed\xa0\x80")
    raw = raw.replace(b"\x00RAW-SURROGATE\x00", b"\xed\xa0\x80")
    twist = draw(st.integers(0, 39))
    if twist == 0 and raw.startswith(b"{") and b'": ' in raw:  # a key given twice
        first = raw.index(b'": ')
        key_start = raw.rindex(b'"', 0, first)
        raw = b"{" + raw[key_start : first + 3] + b"1, " + raw[1:]
    elif twist == 1 and raw:  # cut short
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif twist == 2 and raw:  # a byte garbled
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    elif twist == 3:
        raw = b"\xef\xbb\xbf" + raw + draw(st.sampled_from([b"", b"\n", b" x", b"\x00"]))
    return raw


def documents(seeds: list[Any]) -> st.SearchStrategy[bytes]:
    """Mutated seeds (nine in ten), else arbitrary JSON, as text."""
    shape = st.one_of(*[mutated(seeds)] * 9, JSON)
    return shape.flatmap(text_of)


# -- running a command ---------------------------------------------------------------------


def run_clean(*args: str) -> Any:
    """`atip ARGS`: an exit status the command documents, no traceback, no exception
    escaping the command."""
    result = atip(*args)
    where = f"atip {' '.join(args)}"
    assert result.exit_code in EXIT_CODES, (
        f"{where}: exit {result.exit_code}\n{result.output[-2000:]}"
    )
    assert "Traceback" not in result.output, f"{where}\n{result.output[-2000:]}"
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), f"{where}: {result.exception!r}"
    return result


@pytest.mark.parametrize(
    ("module", "attribute", "command"),
    [
        ("atipkit.validation", "check_tool", ["validate"]),
        ("atipkit.interop.atdf.export", "flatten", ["export", "atdf", "--plain"]),
    ],
)
@pytest.mark.parametrize(
    "bug", [KeyError("bug"), ValueError("bug"), msgspec.ValidationError("bug")], ids=repr
)
def test_the_harness_sees_a_bug_inside_a_command(monkeypatch, module, attribute, command, bug):
    """`run_clean` must fail when a command's own code raises, whatever it raises: `export
    atdf` caught every ValueError as "two tools of one name" (exit 2, a documented code),
    so a bug raising one, msgspec's errors among them, passed the fuzz test."""
    import importlib

    def crash(*_args: Any, **_kwargs: Any) -> Any:
        raise bug

    monkeypatch.setattr(importlib.import_module(module), attribute, crash)
    with pytest.raises(AssertionError, match="exit 70"):
        run_clean(*command, str(EXAMPLES / "tools" / "gh.json"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def write(workdir: Path, name: str, raw: bytes) -> str:
    path = workdir / name
    path.write_bytes(raw)
    return str(path)


PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"]


@fuzz_settings(1300)
@given(raw=documents(ATIP_SEEDS))
def test_validate_never_crashes(workdir, raw):
    run_clean("validate", write(workdir, "v.json", raw))


@fuzz_settings(1000)
@given(raw=documents(ATIP_SEEDS), provider=st.sampled_from(PROVIDERS), strict=st.booleans())
def test_compile_never_crashes(workdir, raw, provider, strict):
    path = write(workdir, "c.json", raw)
    run_clean("compile", path, "--provider", provider, "--strict" if strict else "--no-strict")


@fuzz_settings(800)
@given(raw=documents(ATIP_SEEDS), enhanced=st.booleans())
def test_export_atdf_and_its_import_never_crash(workdir, raw, enhanced):
    path = write(workdir, "e.json", raw)
    flag = "--enhanced" if enhanced else "--no-enhanced"
    result = run_clean("export", "atdf", path, flag, "--plain")
    if result.exit_code == 0:  # what was written is read back
        run_clean("import", "atdf", write(workdir, "e.atdf.json", result.stdout.encode()))


@fuzz_settings(800)
@given(raw=documents(ATDF_SEEDS), named=st.booleans())
def test_import_atdf_never_crashes(workdir, raw, named):
    path = write(workdir, "a.atdf.json", raw)
    run_clean("import", "atdf", path, *(["--name", "fuzzed"] if named else []))


@fuzz_settings(700)
@given(raw=documents(TDP_SEEDS))
def test_import_tdp_never_crashes(workdir, raw):
    run_clean("import", "tdp", write(workdir, "m.json", raw))


@fuzz_settings(500)
@given(tools=st.one_of(*[mutated(MCP_SEEDS)] * 9, JSON), info=JSON)
def test_an_mcp_listing_is_described_or_refused_never_crashes(tools, info):
    """What `atip import mcp` does with a listing the SDK accepted (and more: values
    the SDK would refuse); an `McpError` is its exit 40/65, anything else exit 70."""
    listing = Listing(
        endpoint=Endpoint.stdio(["fuzzed-server"]),
        protocol_version="2025-06-18",
        server_info=info if isinstance(info, dict) else None,
        tools=tools if isinstance(tools, list) else [tools],
    )
    try:
        tool = describe(listing)
    except (McpError, DocumentError):
        return
    assert validate(dumps(tool)).ok
    assert validate(to_dict(tool)).ok


# -- `atip import mcp` against a real server -------------------------------------------------


class FuzzServer:
    """An MCP server (the SDK's, streamable HTTP) in a thread, listing `tools` as given."""

    def __init__(self) -> None:
        import mcp.types as types
        import uvicorn
        from mcp.server.lowlevel import Server

        self.tools: list[Any] = []

        async def list_tools(_ctx: Any, _params: Any) -> Any:
            return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in self.tools])

        web = Server("fuzzed", version="1", on_list_tools=list_tools).streamable_http_app(
            host="127.0.0.1"
        )
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}/mcp"
        self.server = uvicorn.Server(uvicorn.Config(web, log_level="critical", lifespan="on"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> FuzzServer:
        self.thread.start()
        deadline = time.monotonic() + STARTUP
        while not self.server.started:
            assert time.monotonic() < deadline, "the MCP server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.socket.close()


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[FuzzServer]:
    with FuzzServer() as server:
        yield server


@fuzz_settings(25)
@given(tools=mutated(MCP_SEEDS))
def test_import_mcp_from_a_real_server_never_crashes(mcp_server, tools):
    mcp_server.tools = tools if isinstance(tools, list) else [tools]
    run_clean("import", "mcp", "--url", mcp_server.url, "--timeout", "20")
