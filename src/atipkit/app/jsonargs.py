"""Arguments that arrive as JSON (an MCP `tools/call`, an HTTP request body), checked
against the command's input schema and turned into the Python values the function takes.

The same schema `--schema` prints is the one enforced here (jsonschema-rs), and the
same Click types then check ranges, patterns and paths, so a call refused on the command
line is refused over MCP and HTTP too, with the same code (PRD §19.5).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from atipkit import _jsontext
from atipkit._schema_errors import schema_errors, where
from atipkit.app.errors import DataFormatError, InputError
from atipkit.app.inputs import sink, spool
from atipkit.app.params import MISSING
from atipkit.errors import DocumentError, ErrorCode

if TYPE_CHECKING:
    from atipkit.app.command import CommandSpec
    from atipkit.app.context import Context

__all__ = ["prepare_json"]


@functools.lru_cache(maxsize=1024)
def _validator(spec: CommandSpec) -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(spec.signature.input_schema())


def check_arguments(spec: CommandSpec, arguments: Any) -> None:
    """Raise `InputError` (exit 2) for arguments the input schema refuses, naming the
    first failing place and what the schema expects there."""
    if not isinstance(arguments, dict):
        raise InputError(
            f"arguments must be a JSON object, got {type(arguments).__name__}", code=ErrorCode.USAGE
        )
    try:  # before jsonschema-rs, which recurses (an MCP SDK's arguments are not bounded)
        _jsontext.check_depth(arguments, "arguments")
    except DocumentError as exc:
        raise DataFormatError(str(exc), code=ErrorCode.DATA_FORMAT) from None
    validator = _validator(spec)
    if validator.is_valid(arguments):
        return
    errors = schema_errors(validator, arguments)
    first = errors[0]
    path = list(first.instance_path)
    details: dict[str, Any] = {"errors": [f"{where(e.instance_path)}: {e.message}" for e in errors]}
    if path and isinstance(path[0], str):
        details["param"] = path[0]
        for declared in spec.signature.params:
            if declared.name == path[0]:
                details["expected"] = declared.json_schema()
    param = next((p for p in spec.signature.params if path and p.name == path[0]), None)
    if param is not None and param.is_json and len(path) > 1:
        # Inside a JSON-typed parameter: the data is malformed, as on the command line.
        raise DataFormatError(f"{where(path)}: {first.message}", details=details)
    raise InputError(
        f"{where(path)}: {first.message}",
        code=ErrorCode.BAD_VALUE if path else ErrorCode.USAGE,
        suggestion=f"See the input schema: {spec.display_name} --schema",
        details=details,
    )


def prepare_json(spec: CommandSpec, arguments: Any) -> Any:
    """A `prepare` for `invoke.run`: the function's keyword arguments from JSON."""

    def prepare(ctx: Context) -> dict[str, Any]:
        spec.app.check_config(spec)
        check_arguments(spec, arguments)
        values: dict[str, Any] = {}
        for param in spec.signature.params:
            if param.name not in arguments:
                if param.default is MISSING:  # only StdinOr gets here: the schema checked the rest
                    raise InputError(
                        f"missing input: {param.name} (over JSON it takes the data itself)",
                        code=ErrorCode.MISSING_INPUT,
                    )
                values[param.name] = param.default
                continue
            raw = arguments[param.name]
            if param.sink and raw == "-":
                values[param.name] = sink(ctx)
                continue
            if param.stdin is not None:
                values[param.name] = _inline_input(param, raw, ctx)
                continue
            values[param.name] = param.check(param.shape.from_json(raw))
        return values

    return prepare


def _inline_input(param: Any, raw: Any, ctx: Context) -> Any:
    """A `StdinOr` parameter over JSON takes the data itself (there is no stdin, and a
    remote caller must not name the server's files)."""
    want = param.stdin.want
    if want == "text":
        return raw
    if want == "bytes":
        return raw.encode("utf-8")
    if want == "lines":
        return list(raw)
    if want == "path":
        return spool(raw.encode("utf-8"), ctx)
    return param.shape.from_json(raw)
