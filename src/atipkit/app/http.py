"""The app's commands as an HTTP API, described by OpenAPI 3.1 (PRD §3 item 4, §11.4).

    $ notes api serve --port 8000
    $ curl -s localhost:8000/v1/pr/create --json '{"title": "Fix it"}'
    {"ok":true,"result":{...},"meta":{"tool":"notes.pr.create",...}}

- `POST /v1/<command path joined by "/">` runs a command. The body is the JSON object of
  its arguments, checked against the same input schema as MCP (`--schema`); the answer is
  the envelope `--output json` prints, byte for byte the same keys, codes and `meta`,
  because the call goes through the one pipeline (`invoke.call`), in a worker thread.
- `GET /v1/` lists the commands; `GET /openapi.json` is the OpenAPI document
  (`api export-openapi` prints the same one).
- The global flags are query parameters (`dry_run`, `limit`, `cursor`, `max_items`,
  `max_bytes`, `response_format`) and the standard `Idempotency-Key` header. An unknown
  query parameter is refused rather than ignored: a misspelt `dry-run=true` must not run
  the real thing.
- A command that asks (`ctx.confirm`) takes `yes=true`, as `--yes` on the command line:
  without it, the question stops the call with E1006 (400) naming the question and the
  parameter (`atipkit.app.askers.QueryAsker`). A command that never asks refuses it.
- Every answer is JSON, failures included (404, 405, 413, 500 too), with the status the
  error's exit code maps to (`STATUS`).

Guards are there for browsers, since a server on loopback is reachable from any web page
the user opens: a POST must say `Content-Type: application/json` (what a page cannot
send cross-origin without a CORS preflight), and `serve` puts the app behind
`atipkit.serve.guard`, the one guard of every server atipkit runs: only requests whose
`Host` is a loopback name, the address listened on or an `--allow-host` name (DNS
rebinding), and from web pages only of an `--allow-origin` origin, which alone get CORS
headers and preflights.

A command that runs past its `timeout` is answered 504 at once; its thread cannot be
stopped from outside and runs on until the function returns, its result dropped.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from atipkit.app.askers import YES_PARAM, QueryAsker
from atipkit.app.errors import (
    AuthError,
    DataFormatError,
    DependencyError,
    ExitCode,
    InputError,
    NotFoundError,
    Suggestion,
    ToolError,
    from_exception,
)
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from atipkit.app.app import App
    from atipkit.app.command import CommandSpec
    from atipkit.app.flags import CallSettings
    from atipkit.app.invoke import CallOutcome
    from atipkit.serve.guard import Rules

__all__ = [
    "OPENAPI_VERSION",
    "PREFIX",
    "STATUS",
    "asgi_app",
    "listing",
    "openapi",
    "serve",
    "status_of",
    "url_path",
]

OPENAPI_VERSION = "3.1.0"
PREFIX = "/v1/"
OPENAPI_PATH = "/openapi.json"
_OWN_OPERATIONS = ("list_commands", "openapi")
"""operationIds of the server's own GET endpoints, which no command may take."""

STATUS: dict[int, int] = {
    ExitCode.USAGE: 400,
    ExitCode.NOT_FOUND: 404,
    ExitCode.CONFLICT: 409,
    ExitCode.PERMISSION: 403,
    ExitCode.DEPENDENCY: 502,
    ExitCode.TIMEOUT: 504,
    ExitCode.DATA_FORMAT: 422,
    ExitCode.INTERNAL: 500,
    ExitCode.TEMPORARY: 503,
    ExitCode.HUMAN_HANDOFF: 403,
}
"""HTTP status of a failed call, by the error's exit code. A human handoff (101) is 403,
not 428: 428 tells a client that a conditional request (If-Match) would go through, and
no request can carry a human's approval; the error's code (E2002) and `suggestion` say
what to do. A malformed body is 400 although unreadable JSON is exit 65: the HTTP message
itself is wrong, which is what 400 means; 422 stays for arguments that parse but cannot
be used."""


def status_of(exit_code: int) -> int:
    """The HTTP status for an error's exit code; 500 for one the table does not know."""
    return STATUS.get(exit_code, 500)


# OpenAPI --------------------------------------------------------------------------------


def _ref(kind: str, name: str) -> dict[str, str]:
    return {"$ref": f"#/components/{kind}/{name}"}


_ERROR_RESPONSES: dict[int, tuple[str, str]] = {
    400: (
        "BadRequest",
        "The call is wrong (exit 2, E1xxx): an argument or query parameter the schema "
        "refuses, or a body that is not JSON (E1003).",
    ),
    403: (
        "Forbidden",
        "Not allowed (exit 30, E2xxx), or a human must approve this first (exit 101, "
        "E2002), which no HTTP request can do.",
    ),
    404: ("NotFound", "What the call names does not exist (exit 10)."),
    409: (
        "Conflict",
        "The state conflicts with the call (exit 20), e.g. an Idempotency-Key already "
        "used with other arguments (E3003).",
    ),
    413: ("ContentTooLarge", "The body is larger than the app accepts (E1007)."),
    415: ("UnsupportedMediaType", "The body was not sent as application/json (E1001)."),
    422: (
        "UnprocessableContent",
        "Input data that cannot be read as what it should be (exit 65).",
    ),
    500: ("InternalError", "A bug in the tool, not in the call (exit 70)."),
    502: ("BadGateway", "Something the command relies on failed (exit 40)."),
    503: ("ServiceUnavailable", "A passing failure; retrying may succeed (exit 75)."),
    504: ("GatewayTimeout", "The command ran out of time (exit 50); retry with backoff."),
}


def _query() -> dict[str, dict[str, Any]]:
    """The global flags a query may set (the served flags but the key, which is a header),
    each with its schema."""
    from atipkit.app.served import call_flags

    return {n: schema for n, (schema, _t) in call_flags().items() if n != "idempotency_key"}


IDEMPOTENCY_HEADER = "Idempotency-Key"


def _parameters() -> dict[str, Any]:
    out: dict[str, Any] = {
        name: {
            "name": name,
            "in": "query",
            "required": False,
            "description": schema["description"],
            "schema": {k: v for k, v in schema.items() if k != "description"},
        }
        for name, schema in _query().items()
    }
    from atipkit.app.served import call_flags

    key = call_flags()["idempotency_key"][0]
    out[YES_PARAM] = {
        "name": YES_PARAM,
        "in": "query",
        "required": False,
        "description": "Answer yes to the questions the command asks (as --yes does): "
        "without it a question stops the call with E1006 (400). Send it only once the "
        "user agreed. It never gives a human-in-the-loop approval.",
        "schema": {"type": "boolean", "default": False},
    }
    out["idempotency_key"] = {
        "name": IDEMPOTENCY_HEADER,
        "in": "header",
        "required": False,
        "description": key["description"],
        "schema": {k: v for k, v in key.items() if k != "description"},
    }
    return out


def _components() -> dict[str, Any]:
    from atipkit.app.schema import envelope_parts, failure_schema

    parts = envelope_parts()
    listing = {
        "type": "object",
        "required": ["name", "version", "commands"],
        "properties": {
            "name": {"type": "string"},
            "version": {"type": "string"},
            "description": {"type": "string"},
            "openapi": {"type": "string"},
            "commands": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["command", "method", "path", "operationId", "summary"],
                    "properties": {
                        "command": {"type": "string"},
                        "method": {"const": "POST"},
                        "path": {"type": "string"},
                        "operationId": {"type": "string"},
                        "summary": {"type": "string"},
                        "annotations": {"type": "object"},
                    },
                },
            },
        },
    }
    responses = {
        name: {
            "description": text,
            "content": {"application/json": {"schema": _ref("schemas", "ErrorEnvelope")}},
        }
        for name, text in _ERROR_RESPONSES.values()
    }
    return {
        "schemas": {
            **parts,
            "ErrorEnvelope": failure_schema(_ref("schemas", "Error"), _ref("schemas", "Meta")),
            "CommandList": listing,
        },
        "responses": responses,
        "parameters": _parameters(),
    }


def _envelope(result: dict[str, Any]) -> dict[str, Any]:
    from atipkit.app.schema import success_schema

    return success_schema(result, _ref("schemas", "Meta"))


def _result_schema(spec: CommandSpec) -> dict[str, Any]:
    from atipkit.app.schema import result_schema

    return result_schema(spec, _ref("schemas", "DryRunPlan")) or {}


def url_path(spec: CommandSpec) -> str:
    """Where a command is served: `/v1/pr/create`."""
    return PREFIX + "/".join(spec.path)


def _operation_ids(app: App) -> dict[tuple[str, ...], str]:
    """`pr_create` for `pr create`; made unique (`_2`, ...) in the rare app where two paths
    join to one name (`a_b` next to `a b`), since OpenAPI requires them unique."""
    from atipkit.bridge.names import numbered

    taken: set[str] = set(_OWN_OPERATIONS)
    return {
        spec.path: numbered("_".join(spec.path), taken) for spec in app.walk() if not spec.hidden
    }


def _operation(spec: CommandSpec, operation_id: str) -> dict[str, Any]:
    from atipkit.app.schema import hints

    input_schema = spec.signature.input_schema()
    op: dict[str, Any] = {"operationId": operation_id, "summary": spec.summary or spec.name}
    if spec.description and spec.description != spec.summary:
        op["description"] = spec.description
    if len(spec.path) > 1:
        op["tags"] = [" ".join(spec.path[:-1])]
    if spec.deprecated:
        op["deprecated"] = True
    flags = ["max_items", "max_bytes", "response_format"]
    if spec.dry_run:
        flags.insert(0, "dry_run")
    if spec.paginated:
        flags[0:0] = ["limit", "cursor"]
    if spec.offered.prompts:
        flags.append(YES_PARAM)
    op["parameters"] = [_ref("parameters", name) for name in [*flags, "idempotency_key"]]
    op["requestBody"] = {
        "required": bool(input_schema.get("required")),
        "content": {"application/json": {"schema": input_schema}},
    }
    responses: dict[str, Any] = {
        "200": {
            "description": "The command ran: the envelope `--output json` prints.",
            "content": {"application/json": {"schema": _envelope(_result_schema(spec))}},
        }
    }
    for status, (name, _text) in _ERROR_RESPONSES.items():
        responses[str(status)] = _ref("responses", name)
    op["responses"] = responses
    extension: dict[str, Any] = {"annotations": hints(spec), **spec.extension()}
    if spec.timeout is not None:
        extension["timeoutSeconds"] = spec.timeout
    op["x-atipkit"] = extension
    return op


def openapi(app: App) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the HTTP API: one `POST` operation a command (hidden
    ones left out), its request body the command's input schema as it is (no `$ref`, as
    MCP clients need it), and its answers the envelope.

    The error envelope, `meta` and the query parameters are defined once under
    `components` and referenced: they are the same for every command, so an OpenAPI code
    generator makes one error type rather than one per operation and status, and the
    document stays small. The 200 answer is written out per operation, since its
    `result` is each command's own output schema."""
    info: dict[str, Any] = {"title": app.name, "version": app.version}
    if app.description:
        info["description"] = app.description
    if app.permissions:
        info["x-atipkit"] = {"permissions": app.permissions}
    paths: dict[str, Any] = {
        PREFIX: {
            "get": {
                "operationId": _OWN_OPERATIONS[0],
                "summary": "The commands served here.",
                "responses": {
                    "200": {
                        "description": "The commands, in the envelope.",
                        "content": {
                            "application/json": {
                                "schema": _envelope(_ref("schemas", "CommandList"))
                            }
                        },
                    }
                },
            }
        },
        OPENAPI_PATH: {
            "get": {
                "operationId": _OWN_OPERATIONS[1],
                "summary": "This document.",
                "responses": {
                    "200": {
                        "description": "The OpenAPI 3.1 document.",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
    }
    ids = _operation_ids(app)
    for spec in app.walk():
        if not spec.hidden:
            paths[url_path(spec)] = {"post": _operation(spec, ids[spec.path])}
    return {
        "openapi": OPENAPI_VERSION,
        "info": info,
        "paths": paths,
        "components": _components(),
    }


def listing(app: App) -> dict[str, Any]:
    """What `GET /v1/` answers (in the envelope): enough to pick a command and call it."""
    from atipkit.app.schema import hints

    ids = _operation_ids(app)
    commands = [
        {
            "command": " ".join(spec.path),
            "method": "POST",
            "path": url_path(spec),
            "operationId": ids[spec.path],
            "summary": spec.summary,
            "annotations": hints(spec),
        }
        for spec in app.walk()
        if not spec.hidden
    ]
    return {
        "name": app.name,
        "version": app.version,
        "description": app.description,
        "openapi": OPENAPI_PATH,
        "commands": commands,
    }


# Requests -------------------------------------------------------------------------------


class _Refused(Exception):
    """An answer decided before the command runs: a status and the error to send."""

    def __init__(self, status: int, error: ToolError, **headers: str) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error
        self.headers = headers


def _bad_request(error: ToolError) -> _Refused:
    return _Refused(status_of(error.exit_code), error)


def _settings(spec: CommandSpec, query: Sequence[tuple[str, str]], key: str | None) -> CallSettings:
    """The `CallSettings` of one request: the query's flags, `yes` and the
    Idempotency-Key header. Raises `_Refused` (400) for anything unknown, repeated or
    invalid."""
    from atipkit.app.served import settings_from

    answers = [value for name, value in query if name == YES_PARAM]
    pairs = [(n, v) for n, v in query if n != YES_PARAM]
    pairs += [("idempotency_key", key)] if key is not None else []
    try:
        return settings_from(pairs, where="query", timeout=spec.timeout)._replace(
            yes=_yes(spec, answers)
        )
    except ToolError as exc:
        if exc.details.get("param") == "idempotency_key":  # it came as a header
            exc.details["param"] = IDEMPOTENCY_HEADER
        raise _bad_request(exc) from None


def _yes(spec: CommandSpec, answers: list[str]) -> bool:
    """The `yes` parameter's value (False when absent), refused where the command never
    asks, given twice or not a boolean, as `--yes` is on the command line."""
    import click

    from atipkit.app.flags import not_offered

    if not answers:
        return False
    if not spec.offered.prompts:
        code, why, _fix = not_offered("--yes") or (ErrorCode.USAGE, "never asks", "")
        raise InputError(
            f"{spec.display_name} {why.replace('--yes', YES_PARAM)}",
            code=code,
            suggestion=f"Drop {YES_PARAM}.",
            details={"param": YES_PARAM},
        )
    if len(answers) > 1:
        raise InputError(
            f"query: flag {YES_PARAM!r} given twice",
            code=ErrorCode.BAD_VALUE,
            details={"param": YES_PARAM},
        )
    try:
        return bool(click.BOOL.convert(answers[0], None, None))
    except click.BadParameter as exc:
        raise InputError(
            f"query: {YES_PARAM}: {exc.message}",
            code=ErrorCode.BAD_VALUE,
            details={"param": YES_PARAM, "expected": {"type": "boolean"}},
        ) from None


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 once it passes `limit` bytes: by its Content-Length
    before a byte is read, else while it streams in (chunked uploads)."""
    too_large = _Refused(
        413,
        DataFormatError(
            f"request body larger than {limit} bytes",
            code=ErrorCode.INPUT_TOO_LARGE,
            suggestion="Send less: this app takes at most that much input.",
            details={"limit_bytes": limit},
        ),
    )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _arguments(body: bytes) -> Any:
    """The JSON value of the body; an empty body is `{}` (a command without required
    parameters needs no body). Whether it is an object is the pipeline's to say. Text
    that is not JSON (bad syntax or UTF-8, a lone surrogate) or nested deeper than
    `_jsontext.MAX_DEPTH` is a malformed request: 400."""
    from atipkit import _jsontext
    from atipkit.errors import DocumentError

    if not body.strip():
        return {}
    try:
        return _jsontext.decode(body)
    except DocumentError as exc:
        raise _Refused(
            400,
            DataFormatError(
                f"request body: {exc}",
                code=ErrorCode.DATA_FORMAT,
                suggestion="Send one JSON object of the command's arguments.",
            ),
        ) from None


def _json(body: bytes, status: int, **headers: str) -> Response:
    from starlette.responses import Response

    return Response(
        body,
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", **headers},
    )


def _answer(envelope: dict[str, Any], status: int, **headers: str) -> Response:
    from atipkit.app.output import encode

    return _json(encode(envelope) + b"\n", status, **headers)


def _failure(error: ToolError, meta: dict[str, Any], status: int, **headers: str) -> Response:
    from atipkit.app.output import error_envelope

    return _answer(error_envelope(error, meta), status, **headers)


def _reply(outcome: CallOutcome) -> Response:
    from atipkit.app.served import encoded

    body = encoded(outcome)
    return _json(body + b"\n", 200 if outcome.ok else status_of(outcome.exit_code))


class _Handler:
    """Routes a request to its answer. One catch-all route, so that every answer (the
    404 of an unknown path, the 405 of a wrong method) is an envelope, never one of
    Starlette's plain-text pages."""

    def __init__(self, app: App) -> None:
        self.app = app

    @functools.cached_property
    def document(self) -> bytes:
        from atipkit.app.output import encode

        return encode(openapi(self.app))

    async def handle(self, request: Request) -> Response:
        app = self.app
        meta = app.bare_meta(app.name)
        try:
            path = request.url.path
            if path == OPENAPI_PATH:
                self._allow(request, "GET", "HEAD")
                from starlette.responses import Response

                return Response(
                    self.document,
                    media_type="application/json",
                    headers={"Cache-Control": "no-cache"},
                )
            if path in (PREFIX, PREFIX.rstrip("/")):
                self._allow(request, "GET", "HEAD")
                from atipkit.app.output import envelope

                return _answer(envelope(listing(app), meta), 200)
            spec = self._command(path)
            meta = app.bare_meta(spec.tool_name)
            self._allow(request, "POST")
            return await self._call(spec, request)
        except _Refused as refused:
            return _failure(refused.error, meta, refused.status, **refused.headers)

    @staticmethod
    def _allow(request: Request, *methods: str) -> None:
        if request.method not in methods:
            raise _Refused(
                405,
                InputError(
                    f"{request.method} is not allowed here; use {' or '.join(methods)}",
                    code=ErrorCode.USAGE,
                    details={"method": request.method, "allowed": list(methods)},
                ),
                Allow=", ".join(methods),
            )

    def _command(self, path: str) -> CommandSpec:
        words = path[len(PREFIX) :].split("/") if path.startswith(PREFIX) else None
        if words:
            try:
                return self.app.command_at(words)
            except KeyError:
                pass
        known = [url_path(s) for s in self.app.walk() if not s.hidden]
        close = difflib.get_close_matches(path, known, n=3)
        details: dict[str, Any] = {"path": path}
        if close:
            details["did_you_mean"] = close
        raise _Refused(
            404,
            NotFoundError(
                f"nothing is served at {path}",
                suggestion=Suggestion(
                    f"GET {PREFIX} lists the commands; each is POST {PREFIX}COMMAND.",
                    example=f"POST {close[0]}" if close else None,
                ),
                details=details,
            ),
        )

    async def _call(self, spec: CommandSpec, request: Request) -> Response:
        from atipkit.app.served import run_call

        if not _is_json(request.headers.get("content-type")):
            raise _Refused(
                415,
                InputError(
                    "send the arguments as Content-Type: application/json",
                    code=ErrorCode.USAGE,
                    suggestion="Send a JSON object of the arguments, with that header "
                    "(curl --json '{...}').",
                    details={"content_type": request.headers.get("content-type")},
                ),
            )
        settings = _settings(
            spec, request.query_params.multi_items(), request.headers.get(IDEMPOTENCY_HEADER)
        )
        body = await _read_body(request, self.app.max_input_bytes)
        arguments = _arguments(body)

        return _reply(await run_call(spec, arguments, settings, QueryAsker(spec)))


def asgi_app(app: App, *, rules: Rules | None = None) -> Any:
    """An ASGI app serving `app`'s commands, behind `atipkit.serve.guard` with `rules`
    (None: unguarded, for a server that guards it itself; `serve` always passes them)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    handler = _Handler(app)

    def crashed(_request: Request, exc: Exception) -> Response:
        # A bug here, not in a command (those come back as envelopes): still an envelope.
        return _failure(from_exception(exc), app.bare_meta(app.name), 500)

    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    web = Starlette(
        routes=[Route("/{path:path}", handler.handle, methods=methods)],
        exception_handlers={Exception: crashed},
    )
    if rules is None:
        return web
    from atipkit.serve.guard import guard

    def refuse(status: int, _code: str, message: str, details: dict[str, Any]) -> Response:
        suggestion = Suggestion(
            "Call it by a loopback name or the address it listens on; serve it with "
            "--allow-host NAME or --allow-origin ORIGIN to admit more.",
            action="abort",
        )
        error = AuthError(message, suggestion=suggestion, details=details)
        return _failure(error, app.bare_meta(app.name), status)

    return guard(web, rules, refuse, ("GET", "HEAD", "POST", "OPTIONS"))


def serve(
    app: App,
    *,
    host: str,
    port: int,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
) -> None:
    """Serve `app` on `host:port` until SIGINT or SIGTERM, answering the `Host` names and
    web page origins `atipkit.serve.guard` lets through (`allow_hosts`, `allow_origins`:
    `--allow-host`, `--allow-origin`). Where it listens goes to stdout as one line;
    requests are logged on stderr. Errors a caller can act on (the extra not installed,
    the address taken, an origin that is none) are `ToolError`s, reported like any
    other."""
    from atipkit import serve as servers

    try:
        servers.require_extra()
    except servers.ServeError as exc:
        raise DependencyError(str(exc), details={"extra": "serve"}) from None
    from atipkit.app.served import guard_rules, listen

    rules = guard_rules(host, allow_hosts, allow_origins)
    sock = listen(host, port)
    url = servers.url(sock)
    import sys

    sys.stdout.write(
        f"serving {app.name} {app.version} at {url.rstrip('/')}{PREFIX} "
        f"(OpenAPI: {url.rstrip('/')}{OPENAPI_PATH}; Ctrl-C to stop)\n"
    )
    sys.stdout.flush()
    servers.run(asgi_app(app, rules=rules), sock)
