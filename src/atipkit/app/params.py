"""A command's parameters, read from its function's signature.

`analyze(func)` is the one place that looks at type hints, defaults, `Annotated` markers
and the docstring. Every surface reads the resulting `Param`s: Click's parser
(`click_param`), JSON Schema (`json_schema`), ATIP (`atip`), and the conversion of a
JSON value (`from_json`), so the CLI, `--schema`, `--agent`, MCP and HTTP cannot
disagree about a parameter.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any, Literal, NamedTuple

import click

from atipkit.app.docstrings import Docstring
from atipkit.app.errors import DefinitionError, InputError
from atipkit.app.markers import (
    ArgumentMarker,
    OptionMarker,
    StdinSpec,
    _Marker,
    is_stdin_marker,
    is_stdout_marker,
)
from atipkit.app.shapes import Shape, shape_of
from atipkit.errors import ErrorCode

__all__ = ["MISSING", "CommandSignature", "Param", "analyze"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Param(NamedTuple):
    name: str
    kind: Literal["argument", "option"]
    shape: Shape
    required: bool
    default: Any
    help: str | None
    flags: tuple[str, ...]
    """Options: the flags that set it (`--name`, `-n`); empty for arguments."""
    secondary: tuple[str, ...]
    """Boolean options: the flags that unset it (`--no-name`)."""
    marker: _Marker
    stdin: StdinSpec | None = None
    sink: bool = False
    """`StdoutOr[Path]`: `-` sends what the function writes there to the result."""

    @property
    def variadic(self) -> bool:
        return self.shape.kind == "list" and self.stdin is None

    @property
    def is_json(self) -> bool:
        """Taken on the command line as one JSON text (a model, a dict, a list of them)."""
        kind = self.shape.item.kind if self.shape.kind == "list" and self.shape.item else None
        return self.shape.kind in ("model", "object") or kind in ("model", "object")

    # JSON Schema ------------------------------------------------------------------------

    def json_schema(self) -> dict[str, Any]:
        """The schema of this parameter's JSON value (MCP, HTTP, `--schema`)."""
        if self.stdin is not None:
            schema = _stdin_schema(self.stdin, self.shape)
        else:
            schema = self.shape.json_schema()
        _constrain(schema, self.shape, self.marker)
        if self.sink:
            note = "'-' returns what is written there as the result"
            schema["description"] = f"{self.help} ({note})" if self.help else note
        elif self.help:
            schema["description"] = self.help
        if self.default is not MISSING and self.default is not None:
            schema["default"] = _jsonable(self.default)
        if self.marker.secret:  # given, never shown back (the CLI reads it from a file)
            schema["writeOnly"] = True
        return schema

    # Click ------------------------------------------------------------------------------

    def click_param(self) -> click.Parameter:
        ctype = self._click_type()
        # Click 8.3+ takes an explicit default=None as a default: pass none when there is none.
        default = {} if self.default is MISSING else {"default": _cli_default(self.default)}
        if self.kind == "argument":
            return click.Argument(
                [self.name],
                type=ctype,
                required=self.required,
                nargs=-1 if self.variadic else 1,
                metavar=self.marker.metavar or _metavar(self),
                **default,
            )
        if self.shape.kind == "bool":
            decls = [*self.flags, self.name]
            if self.secondary:
                decls = [f"{'/'.join(self.flags)}/{'/'.join(self.secondary)}", self.name]
            return click.Option(
                decls,
                is_flag=True,
                default=False if self.default is MISSING else bool(self.default),
                required=self.required,
                help=self.help,
                hidden=self.marker.hidden,
                envvar=self.marker.envvar,
                show_default=False,
            )
        return click.Option(
            [*self.flags, self.name],
            type=ctype,
            required=self.required,
            multiple=self.variadic,
            help=self.help,
            hidden=self.marker.hidden,
            envvar=self.marker.envvar,
            metavar=self.marker.metavar,
            show_default=self.default not in (MISSING, None, (), []),
            **default,
        )

    def _click_type(self) -> click.ParamType:
        shape = self.shape.item if self.shape.kind == "list" and self.shape.item else self.shape
        if self.marker.secret:
            from atipkit.app.secrets import SecretFile

            return SecretFile()
        if self.stdin is not None or self.is_json:
            return click.STRING
        return scalar_type(shape, self.marker)

    def from_cli(self, value: Any) -> Any:
        """Click's value (strings for choices and JSON) as the function expects it."""
        if value is None:
            return None
        if self.shape.kind == "list":
            if self.is_json and not self.variadic:
                return self.shape.from_text(value) if isinstance(value, str) else value
            assert self.shape.item is not None
            item = self.shape.item
            return [item.from_text(v) if isinstance(v, str) else v for v in value]
        if isinstance(value, str):
            return self.shape.from_text(value)
        return value

    def text_type(self, where: str) -> click.ParamType:
        """The Click type that reads this parameter from one text (a resource URI's
        variable, a prompt's argument); `DefinitionError` for one that is no single
        value (a list, JSON, stdin)."""
        if self.shape.kind == "list" or self.stdin is not None or self.is_json or self.sink:
            raise DefinitionError(
                f"{where}: parameter {self.name!r}: given as text, so one str, int, float, "
                f"bool, choice or path, not {self.shape.kind}"
            )
        return scalar_type(self.shape, self.marker)

    def from_text(self, text: str, where: str) -> Any:
        """`text` as the function expects it, read as the command line reads it; an
        `InputError` (exit 2) naming the parameter when it cannot be."""
        try:
            value = self.text_type(where).convert(text, None, None)
        except click.BadParameter as exc:
            raise InputError(
                f"{where}: {exc.message}",
                code=ErrorCode.BAD_VALUE,
                details={"param": self.name, "expected": self.json_schema()},
            ) from None
        return self.from_cli(value)

    def check(self, value: Any) -> Any:
        """A value that arrived as JSON, checked against the same constraints the CLI
        applies (ranges, patterns, paths that must exist), through the same Click types."""
        if value is None or self.stdin is not None or self.is_json:
            return value
        shape = self.shape.item if self.shape.kind == "list" and self.shape.item else self.shape
        ctype = scalar_type(shape, self.marker)
        values = value if self.shape.kind == "list" else [value]
        try:
            for item in values:
                ctype.convert(
                    item.value if hasattr(item, "value") and shape.kind == "choice" else item,
                    None,
                    None,
                )
        except click.BadParameter as exc:
            raise InputError(
                f"{self.name}: {exc.message}",
                code=ErrorCode.BAD_VALUE,
                details={"param": self.name},
            ) from None
        return value

    # ATIP -------------------------------------------------------------------------------

    def atip(self) -> Any:
        from atipkit import model

        shape = self.shape
        values = [_jsonable(c) for c in shape.choices] if shape.kind == "choice" else None
        if shape.kind == "list" and shape.item and shape.item.kind == "choice":
            values = [_jsonable(c) for c in shape.item.choices]
        atip_type = shape.atip_type()
        if shape.kind == "list":
            atip_type = shape.item.atip_type() if shape.item else "string"
        if shape.kind == "path" and not self.marker.file_okay:
            atip_type = "directory"
        if self.marker.secret:  # the flag takes the file that holds it
            atip_type = "file"
        common: dict[str, Any] = {
            "name": self.name,
            "type": atip_type,
            "description": self.help or model.UNSET,
            "required": self.required,
            "default": model.UNSET
            if self.default is MISSING or self.default in (None, [], ())
            else _jsonable(self.default),
            "variadic": self.variadic,
            "enum": values if values else model.UNSET,
        }
        if shape.kind in ("model", "object") or self.stdin is not None or self.is_json:
            common["schema"] = self.json_schema()
        if self.kind == "argument":
            return model.Argument(**common)
        if shape.kind == "bool" and self.default is MISSING:
            common["required"] = self.required
        return model.Option(
            flags=list(self.flags),
            env_var=self.marker.envvar or model.UNSET,
            **common,
        )


class CommandSignature(NamedTuple):
    params: tuple[Param, ...]
    context: str | None
    """The name of the parameter that receives the `Context`, if any."""
    returns: Any
    """The return annotation (`MISSING` when there is none)."""

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of a call's arguments: an object with one property a parameter."""
        required = [p.name for p in self.params if p.required]
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {p.name: p.json_schema() for p in self.params},
        }
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema


def _text_type(marker: _Marker) -> click.ParamType:
    return _Text(marker.pattern, marker.min_length, marker.max_length)


def scalar_type(shape: Shape, marker: _Marker) -> click.ParamType:
    kind = shape.kind
    if kind == "int":
        if marker.min is None and marker.max is None:
            return click.INT
        return click.IntRange(_int(marker.min), _int(marker.max))
    if kind == "float":
        if marker.min is None and marker.max is None:
            return click.FLOAT
        return click.FloatRange(marker.min, marker.max)
    if kind == "bool":
        return click.BOOL
    if kind == "choice":
        return click.Choice(shape.cli_choices)
    if kind == "path":
        return click.Path(
            exists=marker.exists,
            file_okay=marker.file_okay,
            dir_okay=marker.dir_okay,
            resolve_path=marker.resolve_path,
            path_type=str,
        )
    if marker.pattern or marker.min_length is not None or marker.max_length is not None:
        return _text_type(marker)
    return click.STRING


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


class _Text(click.ParamType):
    """A string with a pattern or a length range, checked like JSON Schema checks it."""

    name = "text"

    def __init__(self, pattern: str | None, min_length: int | None, max_length: int | None):
        self.pattern = re.compile(pattern) if pattern else None
        self.min_length = min_length
        self.max_length = max_length

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if not isinstance(value, str):
            self.fail(f"expected a string, got {value!r}", param, ctx)
        if self.pattern and not self.pattern.search(value):
            self.fail(f"{value!r} does not match the pattern {self.pattern.pattern!r}", param, ctx)
        if self.min_length is not None and len(value) < self.min_length:
            self.fail(f"{value!r} is shorter than {self.min_length} characters", param, ctx)
        if self.max_length is not None and len(value) > self.max_length:
            self.fail(f"{value!r} is longer than {self.max_length} characters", param, ctx)
        return value


def _metavar(param: Param) -> str:
    name = param.name.upper()
    if param.stdin is not None:
        return f"[{name}|-]"
    if param.variadic:
        return f"{name}..." if param.required else f"[{name}]..."
    return name if param.required else f"[{name}]"


def _cli_default(value: Any) -> Any:
    import enum

    if value is None:
        return None
    if isinstance(value, enum.Enum):
        return _choice_text(value.value)
    if isinstance(value, bool):
        return value
    if isinstance(value, list | tuple):
        return tuple(_cli_default(v) for v in value)
    if isinstance(value, str | int | float):
        return value
    return str(value)


def _choice_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _jsonable(value: Any) -> Any:
    import enum
    import pathlib

    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _constrain(schema: dict[str, Any], shape: Shape, marker: _Marker) -> None:
    target = schema
    if shape.kind == "list" and "items" in schema:
        target = schema["items"]
    if "anyOf" in target:
        target = target["anyOf"][0]
    if marker.min is not None:
        target["minimum"] = marker.min
    if marker.max is not None:
        target["maximum"] = marker.max
    if marker.pattern is not None:
        target["pattern"] = marker.pattern
    if marker.min_length is not None:
        target["minLength"] = marker.min_length
    if marker.max_length is not None:
        target["maxLength"] = marker.max_length


def _stdin_schema(spec: StdinSpec, shape: Shape) -> dict[str, Any]:
    if spec.want == "lines":
        return {"type": "array", "items": {"type": "string"}}
    if spec.want == "json":
        return shape.json_schema()
    return {"type": "string"}


# Analysis -------------------------------------------------------------------------------


def _hints(func: Any) -> dict[str, Any]:
    """`typing.get_type_hints(func, include_extras=True)`, faster for the common case of
    postponed annotations (`from __future__ import annotations`): one `eval` of all of a
    function's annotation strings instead of one compile and `eval` each. Anything
    unusual, or an annotation that does not evaluate, goes through `typing` after all."""
    annotations = getattr(func, "__annotations__", None) or {}
    if (
        isinstance(func, types.FunctionType)
        and not hasattr(func, "__wrapped__")
        and annotations
        and all(isinstance(v, str) for v in annotations.values())
    ):
        names = list(annotations)
        source = "(" + ", ".join(f"({annotations[n]})" for n in names) + ",)"
        try:
            values = eval(source, func.__globals__)  # what typing does with each string
        except Exception:
            pass  # typing says what is wrong
        else:
            return {n: type(None) if v is None else v for n, v in zip(names, values, strict=True)}
    return typing.get_type_hints(func, include_extras=True)


def analyze(func: Any, *, where: str, doc: Docstring) -> CommandSignature:
    """Read `func`'s parameters. Raises `DefinitionError` for anything the framework
    cannot turn into a parameter, naming it."""
    from atipkit.app.context import Context

    try:
        hints = _hints(func)
    except Exception as exc:
        from atipkit.app.command import check_shadowing

        check_shadowing(func, where)  # the usual cause, named with its fix
        raise DefinitionError(f"{where}: cannot read the type hints: {exc}") from None
    params: list[Param] = []
    context: str | None = None
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise DefinitionError(f"{where}: *args and **kwargs cannot become parameters")
        hint = hints.get(p.name, MISSING)
        if hint is Context:
            context = p.name
            continue
        if p.name.startswith("_"):
            raise DefinitionError(
                f"{where}: parameter {p.name!r}: names starting with '_' are reserved"
            )
        if hint is MISSING:
            raise DefinitionError(f"{where}: parameter {p.name!r} has no type hint")
        params.append(_param(p, hint, f"{where}: parameter {p.name!r}", doc))
    variadic = [p.name for p in params if p.kind == "argument" and p.variadic]
    if len(variadic) > 1:
        raise DefinitionError(f"{where}: more than one variadic argument: {', '.join(variadic)}")
    stdin = [p.name for p in params if p.stdin is not None]
    if len(stdin) > 1:
        raise DefinitionError(f"{where}: more than one StdinOr parameter: {', '.join(stdin)}")
    sinks = [p.name for p in params if p.sink]
    if len(sinks) > 1:
        raise DefinitionError(f"{where}: more than one StdoutOr parameter: {', '.join(sinks)}")
    return CommandSignature(tuple(params), context, hints.get("return", MISSING))


def _param(p: inspect.Parameter, hint: Any, where: str, doc: Docstring) -> Param:
    marker: _Marker | None = None
    stdin = sink = False
    if typing.get_origin(hint) is typing.Annotated:
        base, *extras = typing.get_args(hint)
        for extra in extras:
            if isinstance(extra, _Marker):
                marker = extra
            elif is_stdin_marker(extra):
                stdin = True
            elif is_stdout_marker(extra):
                sink = True
        # `StdinOr[T]` nested inside another Annotated arrives flattened by typing.
        hint = base
    shape = Shape("str", bytes) if stdin and hint is bytes else shape_of(hint, where)
    default = MISSING if p.default is p.empty else p.default
    spec = _stdin_spec(shape, where) if stdin else None
    if sink and (shape.kind != "path" or shape.optional):
        raise DefinitionError(f"{where}: StdoutOr takes a Path (a destination to write to)")
    if isinstance(marker, ArgumentMarker):
        kind: Literal["argument", "option"] = "argument"
    elif isinstance(marker, OptionMarker):
        kind = "option"
    elif spec is not None:
        kind = "argument"
    else:
        kind = "option" if default is not MISSING or shape.kind == "bool" else "argument"
    if kind == "argument" and shape.kind == "bool":
        raise DefinitionError(f"{where}: a bool is a flag; it cannot be a positional argument")
    if spec is not None and kind != "argument":
        raise DefinitionError(f"{where}: StdinOr parameters are positional arguments")
    marker = marker or (OptionMarker() if kind == "option" else ArgumentMarker())
    required = default is MISSING and spec is None
    if shape.optional and default is MISSING:
        raise DefinitionError(f"{where}: an Optional parameter needs a default (usually None)")
    flags: tuple[str, ...] = ()
    secondary: tuple[str, ...] = ()
    if marker.secret and (kind != "option" or shape.kind != "str" or shape.optional):
        raise DefinitionError(f"{where}: a secret is an option of type str (Option(secret=True))")
    if kind == "option" and marker.secret and not getattr(marker, "flags", ()):
        flags = ("--" + p.name.replace("_", "-") + "-file",)
    elif kind == "option":
        flags = getattr(marker, "flags", ()) or ("--" + p.name.replace("_", "-"),)
        if not any(f.startswith("--") for f in flags):
            flags = ("--" + p.name.replace("_", "-"), *flags)
        if shape.kind == "bool":
            longs = [f for f in flags if f.startswith("--")]
            secondary = ("--no-" + longs[0][2:],)
    return Param(
        name=p.name,
        kind=kind,
        shape=shape,
        required=required,
        default=default,
        help=marker.help or doc.params.get(p.name) or None,
        flags=tuple(flags),
        secondary=secondary,
        marker=marker,
        stdin=spec,
        sink=sink,
    )


def _stdin_spec(shape: Shape, where: str) -> StdinSpec:
    if shape.kind == "str":
        return StdinSpec("text")
    if shape.kind == "path":
        return StdinSpec("path")
    if shape.kind == "list" and shape.item and shape.item.kind == "str":
        return StdinSpec("lines")
    if shape.kind in ("model", "object") or (
        shape.kind == "list" and shape.item and shape.item.kind in ("model", "object")
    ):
        return StdinSpec("json")
    if shape.py is bytes:
        return StdinSpec("bytes")
    raise DefinitionError(
        f"{where}: StdinOr takes str, bytes, Path, list[str], dict or a model, not {shape.py!r}"
    )
