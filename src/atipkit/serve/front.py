"""The stdio front of an MCP server: the handshake and the first `tools/list` answered
before the SDK is imported, then the stream handed to the SDK's server.

Importing the MCP SDK takes most of a stdio server's start-up (decision 372), while a
client's first requests need only the server's identity and its tool list, which atipkit
holds as plain data. The front reads JSON-RPC lines itself and answers exactly four
things: `initialize` (first, for a handshake-era version it knows), then
`notifications/initialized`, `tools/list` and `ping`. Anything else, or anything it cannot
be sure to answer as the SDK would (malformed JSON, an unknown field or version, a
cursor it did not give), it does not answer: it hands over. The SDK is imported in a
thread from the first answer on, and the hand-over happens as soon as it is ready or at
the first message the front leaves, whichever comes first.

At the hand-over the SDK's server reads, before the rest of the stream, every message
the front answered (its request ids replaced by the front's own, so their answers are
recognized and dropped), then every byte the front read and did not answer: the SDK's
session is the one it would have had (the protocol version, the client's capabilities,
the listing that subscribes a handshake-era client to list changes), and nothing is lost
or said twice. Each dropped answer is compared with the front's, byte for byte; a
difference is logged, so a front that drifted from the SDK shows.

The answers are written as the SDK writes them: pydantic's compact JSON of the protocol's
wire models, whose fields are in alphabetical order (`_meta` first, a JSON Schema's
declared keys before its others), `None` left out. `ATIP_MCP_FRONT=0` turns the front off.
"""

from __future__ import annotations

import io
import json
import math
import os
import select
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

__all__ = ["Front", "Handover", "Identity", "Page", "enabled", "run"]

FRONT_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The handshake-era versions whose wire models the front writes (those of 2025-11-25,
which the SDK uses for all four); a version the installed SDK does not list is left to it."""
SWITCH = "ATIP_MCP_FRONT"
"""The environment variable that turns the front off when it is `0`."""

Page = tuple[list[dict[str, Any]], str | None]
"""One page of tool definitions (the MCP wire form) and the cursor of the next."""


@dataclass(frozen=True)
class Identity:
    """What a server says of itself in its `initialize` answer; the SDK `Server` is built
    from the same fields, so both paths say the same."""

    name: str
    version: str
    title: str | None = None
    description: str | None = None
    instructions: str | None = None
    website_url: str | None = None
    list_changed: bool = False
    """Whether the server tells handshake-era clients when its tool list changes."""

    def server_fields(self) -> dict[str, Any]:
        """The keyword arguments of the SDK `Server` that say the same, beside the name."""
        return {
            "version": self.version,
            "title": self.title,
            "description": self.description,
            "instructions": self.instructions,
            "website_url": self.website_url,
        }

    def initialize(self, version: str) -> dict[str, Any]:
        """The `initialize` result for the negotiated `version`, in the SDK's key order."""
        info = {
            "description": self.description,
            "name": self.name,
            "title": self.title,
            "version": self.version,
            "websiteUrl": self.website_url,
        }
        return _present(
            {
                "capabilities": {"tools": {"listChanged": self.list_changed}},
                "instructions": self.instructions,
                "protocolVersion": version,
                "serverInfo": _present(info),
            }
        )


@dataclass(frozen=True)
class Front:
    """A server as the front needs it: its identity, its tool list, and how to build the
    real one (which imports the SDK)."""

    identity: Identity
    listing: Callable[[str | None], Page | None]
    """The page a cursor asks for (None: the first), or None for a cursor that is not the
    server's (the SDK then answers the error)."""
    build: Callable[[], Server]
    log: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr))


@dataclass
class Handover:
    """What the SDK's server is given: the wire's descriptor, the bytes to read before
    it, and the answers of the front's replayed requests, to be dropped."""

    server: Server
    wire: int
    prefix: bytes
    answered: dict[str, bytes]
    log: Callable[[str], None]

    def stdin(self) -> io.TextIOWrapper:
        """The text stream the SDK reads lines from: the prefix, then the wire."""
        raw = _Prefixed(self.prefix, self.wire)
        return io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")

    def restore(self) -> None:
        """Point fd 0 back at the wire (the descriptor stays open: a worker thread may
        still be reading it, as the SDK's transport notes of its own)."""
        os.dup2(self.wire, 0)


def enabled() -> bool:
    """Whether stdio servers start with the front: on POSIX, unless `ATIP_MCP_FRONT=0`."""
    return os.name == "posix" and os.environ.get(SWITCH, "1") != "0"


def run(front: Front) -> Handover | None:
    """Answer what the front can on stdin/stdout, then return the hand-over (None: the
    client went having asked nothing the SDK must answer)."""
    import fcntl

    versions = _sdk_versions()
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)  # as the SDK does: fd 0 is not the wire
    os.dup2(null, 0)
    os.close(null)
    session = _Session(front, [v for v in FRONT_VERSIONS if v in versions])
    wake, woken = os.pipe()
    ready: list[Server | BaseException] = []

    def prepare() -> None:
        try:
            import anyio  # noqa: F401  (what serving imports, now rather than later)
            import mcp.server.stdio  # noqa: F401

            ready.append(front.build())
        except BaseException as exc:  # re-raised in the serving thread
            ready.append(exc)
        finally:
            os.write(woken, b".")

    thread = threading.Thread(target=prepare, name="atipkit-mcp-import", daemon=True)
    buffer = b""
    while not ready:
        if b"\n" in buffer:
            line, _, rest = buffer.partition(b"\n")
            reply = session.answer(line)
            if reply is None:
                break  # this line and all after it are the SDK's
            buffer = rest
            if not _write(reply):
                _gone(wire, thread, (wake, woken))
                return None
            if thread.ident is None:
                thread.start()
            continue
        if wake in select.select([wire, wake], [], [])[0]:
            continue
        data = os.read(wire, 65536)
        if not data:
            if not buffer:  # everything the client sent is answered
                _gone(wire, thread, (wake, woken))
                return None
            break  # a last line without its newline: the SDK's to read
        buffer += data
    if thread.ident is None:
        thread.start()
    thread.join()
    os.close(wake)
    os.close(woken)
    [server] = ready
    if isinstance(server, BaseException):
        os.dup2(wire, 0)
        raise server
    return Handover(server, wire, session.replay() + buffer, session.answered, front.log)


def _gone(wire: int, thread: threading.Thread, pipe: tuple[int, int]) -> None:
    """The client went with nothing left for the SDK: fd 0 is the wire again, once the
    import, if it began, has ended (a thread still importing while the interpreter
    finalizes can abort the process)."""
    if thread.ident is not None:
        thread.join()
    for fd in pipe:
        os.close(fd)
    os.dup2(wire, 0)


class _Session:
    """What the front has read and answered of one client."""

    def __init__(self, front: Front, versions: list[str]) -> None:
        self.front = front
        self.versions = versions
        self.state = "new"  # then "initialized" (answered), then "ready" (notified)
        self.replayed: list[bytes] = []
        self.answered: dict[str, bytes] = {}
        self.nonce = os.urandom(6).hex()

    def answer(self, line: bytes) -> bytes | None:
        """The front's answer to one line (b"" for a notification it takes), or None:
        the line and all after it are the SDK's."""
        message = _message(line)
        result: dict[str, Any] | None = None
        if message is None:
            return None
        method, params = message["method"], message.get("params")
        if "id" not in message:
            if method != "notifications/initialized" or self.state != "initialized":
                return None
            if params is not None and params != {}:
                return None
            self.state = "ready"
            self.replayed.append(line)
            return b""
        if method == "initialize" and self.state == "new":
            result = self._initialize(params)
            if result is not None:
                self.state = "initialized"
        elif method == "tools/list" and self.state == "ready":
            result = self._tools(params)
        elif method == "ping" and self.state == "ready" and params in (None, {}):
            result = {}
        if result is None:
            return None
        body = _dumps(result)
        private = f"atipkit-front-{self.nonce}-{len(self.answered)}"
        self.answered[private] = body
        self.replayed.append(_dumps({**message, "id": private}))
        return b'{"jsonrpc":"2.0","id":' + _dumps(message["id"]) + b',"result":' + body + b"}\n"

    def replay(self) -> bytes:
        return b"".join(line + b"\n" for line in self.replayed)

    def _initialize(self, params: Any) -> dict[str, Any] | None:
        if not isinstance(params, dict) or set(params) != {
            "protocolVersion",
            "capabilities",
            "clientInfo",
        }:
            return None
        version, capabilities, client = (
            params["protocolVersion"],
            params["capabilities"],
            params["clientInfo"],
        )
        if version not in self.versions or not isinstance(capabilities, dict):
            return None
        if not all(isinstance(value, dict) for value in capabilities.values()):
            return None
        if not isinstance(client, dict) or not {"name", "version"} <= set(client):
            return None
        if not set(client) <= {"name", "version", "title", "description", "websiteUrl"}:
            return None
        if not all(isinstance(value, str) for value in client.values()):
            return None
        return self.front.identity.initialize(version)

    def _tools(self, params: Any) -> dict[str, Any] | None:
        if params is None:
            params = {}
        if not isinstance(params, dict) or not set(params) <= {"cursor"}:
            return None
        cursor = params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            return None
        page = self.front.listing(cursor)
        if page is None:
            return None
        tools, following = page
        written = [_tool(tool) for tool in tools]
        if any(tool is None for tool in written):
            return None
        return _present({"nextCursor": following, "tools": written})


def _message(line: bytes) -> dict[str, Any] | None:
    """A request or notification the front may look at, or None (the SDK's to judge)."""
    if b"\r" in line or not line.strip():
        return None
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_refuse)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if not set(message) <= {"jsonrpc", "id", "method", "params"}:
        return None
    if not isinstance(message.get("method"), str) or not _plain(message):
        return None
    identifier = message.get("id", 0)
    if isinstance(identifier, bool) or not isinstance(identifier, int | str):
        return None
    return message


def _refuse(constant: str) -> Any:
    raise ValueError(constant)


_TOOL_KEYS = ("_meta", "annotations", "description", "inputSchema", "name", "outputSchema", "title")
_ANNOTATION_KEYS = ("destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint", "title")
_SCHEMA_KEYS = ("$schema", "properties", "required", "type")


def _tool(tool: dict[str, Any]) -> dict[str, Any] | None:
    """A definition as the SDK's `Tool` writes it, or None when it has anything the front
    does not know how the SDK would write (or would refuse)."""
    if not set(tool) <= set(_TOOL_KEYS) or not isinstance(tool.get("name"), str):
        return None
    if not all(isinstance(tool.get(k, ""), str) for k in ("title", "description")):
        return None
    if not isinstance(tool.get("_meta", {}), dict) or not _plain(tool):
        return None
    annotations = tool.get("annotations")
    if annotations is not None:
        if not isinstance(annotations, dict) or not set(annotations) <= set(_ANNOTATION_KEYS):
            return None
        if not all(isinstance(annotations[k], bool) for k in annotations if k != "title"):
            return None
        if not isinstance(annotations.get("title", ""), str):
            return None
        annotations = _present({k: annotations.get(k) for k in _ANNOTATION_KEYS})
    schemas = {}
    for key in ("inputSchema", "outputSchema"):
        schemas[key] = _schema(tool.get(key), required=key == "inputSchema")
        if schemas[key] is False:
            return None
    written = {**tool, **schemas, "annotations": annotations}
    return _present({k: written.get(k) for k in _TOOL_KEYS})


def _schema(schema: Any, *, required: bool) -> Any:
    """A tool's input or output schema as the SDK writes it (its declared keys first,
    in order, then the others as given); None if absent and allowed, False if not."""
    if schema is None:
        return False if required else None
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    properties = schema.get("properties")
    if properties is not None and not (
        isinstance(properties, dict)
        and all(isinstance(value, dict | bool) for value in properties.values())
    ):
        return False
    needed = schema.get("required")
    if needed is not None and not (
        isinstance(needed, list) and all(isinstance(name, str) for name in needed)
    ):
        return False
    if not isinstance(schema.get("$schema", ""), str):
        return False
    if any(value is None for value in schema.values()):
        return False
    declared = {k: schema[k] for k in _SCHEMA_KEYS if k in schema}
    return {**declared, **{k: v for k, v in schema.items() if k not in declared}}


def _plain(value: Any) -> bool:
    """Whether pydantic and `json` write `value` alike: no float in exponent form or
    not finite, no string that is not UTF-8 (a lone surrogate)."""
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, float):
        return math.isfinite(value) and "e" not in repr(value)
    return value is None or isinstance(value, bool | int)


def _present(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _write(data: bytes) -> bool:
    """Write all of `data` to stdout's descriptor; False when the client is gone."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(1, view) :]
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


def _sdk_versions() -> tuple[str, ...]:
    """The handshake-era versions the installed SDK negotiates, read from its
    `mcp_types/version.py` without importing the package (whose `__init__` is the cost
    the front avoids); none if it cannot be read, and the front then answers nothing."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("mcp_types")
        if spec is None or not spec.submodule_search_locations:
            return ()
        path = os.path.join(next(iter(spec.submodule_search_locations)), "version.py")
        loaded = importlib.util.spec_from_file_location("_atipkit_mcp_versions", path)
        if loaded is None or loaded.loader is None:
            return ()
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
        return tuple(module.HANDSHAKE_PROTOCOL_VERSIONS)
    except Exception:
        return ()


class _Prefixed(io.RawIOBase):
    """A descriptor read after some bytes already taken from it."""

    def __init__(self, prefix: bytes, fd: int) -> None:
        self.prefix = prefix
        self.fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.prefix:
            size = min(len(buffer), len(self.prefix))
            buffer[:size] = self.prefix[:size]
            self.prefix = self.prefix[size:]
            return size
        data = os.read(self.fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)
