"""What a parameter's type hint means to the parser, to JSON Schema and to ATIP.

A `Shape` is read once from an annotation and then answers three questions without
looking at the annotation again: which JSON Schema describes the value, which ATIP type
names it, and how a value that arrived as JSON (over MCP or HTTP) or as a string (from
the command line, after Click) becomes the Python value the function expects.

Supported: `str`, `int`, `float`, `bool`, `pathlib.Path`, an `Enum`, a `Literal`,
`list[T]` / `tuple[T, ...]` of those, `Optional[T]` / `T | None`, `dict`, and models
taken as JSON: dataclasses, `TypedDict`s, msgspec `Struct`s and pydantic models.
Anything else is refused when the command is defined, naming the parameter.
"""

from __future__ import annotations

import enum
import pathlib
import types
import typing
from typing import Any, Literal, NamedTuple

from atipkit.app.errors import DataFormatError, DefinitionError
from atipkit.typetable import from_python, json_schema

__all__ = ["DefinitionError", "Shape", "shape_of"]

Kind = Literal["str", "int", "float", "bool", "path", "choice", "list", "model", "object"]


class Shape(NamedTuple):
    kind: Kind
    py: Any
    """The Python type the function receives (the enum class, the model class, ...)."""
    optional: bool = False
    item: Shape | None = None
    """For `list`: the shape of each item."""
    choices: tuple[Any, ...] = ()
    """For `choice`: the allowed values as the function receives them."""

    @property
    def cli_choices(self) -> list[str]:
        return [_choice_text(c) for c in self.choices]

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of one value, `$ref`-free."""
        schema = _schema(self)
        return {"anyOf": [schema, {"type": "null"}]} if self.optional else schema

    def atip_type(self) -> str:
        if self.kind in _SCALAR:
            return from_python(self.py)
        return _ATIP.get(self.kind, "string") if self.kind != "list" else "array"

    def from_text(self, text: str) -> Any:
        """A value the CLI parser gave as text, as the function expects it."""
        if self.kind == "choice":
            for choice in self.choices:
                if _choice_text(choice) == text:
                    return choice
            raise ValueError(text)  # unreachable after click.Choice
        if self.kind in ("model", "object"):
            return self.from_json(_decode_json(text))
        if self.kind == "path":
            return self.py(text)
        return text

    def from_json(self, value: Any) -> Any:
        """A value that arrived as JSON (MCP, HTTP, a JSON argument), as the function
        expects it. Raises `DataFormatError` naming what was expected."""
        if value is None:
            if self.optional:
                return None
            raise DataFormatError(f"expected {self.describe()}, got null")
        kind = self.kind
        if kind == "list":
            if not isinstance(value, list):
                raise DataFormatError(f"expected a list, got {_json_type(value)}")
            assert self.item is not None
            return [self.item.from_json(v) for v in value]
        if kind == "choice":
            for choice in self.choices:
                if value == (choice.value if isinstance(choice, enum.Enum) else choice):
                    return choice
            allowed = ", ".join(repr(_choice_text(c)) for c in self.choices)
            raise DataFormatError(f"expected one of {allowed}, got {value!r}")
        if kind == "path":
            if not isinstance(value, str):
                raise DataFormatError(f"expected a path (string), got {_json_type(value)}")
            return self.py(value)
        if kind == "bool":
            if isinstance(value, bool):
                return value
        elif kind == "int":
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
        elif kind == "float":
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
        elif kind == "str":
            if isinstance(value, str):
                return value
        elif kind == "object":
            if isinstance(value, dict):
                return value
        elif kind == "model":
            return _convert_model(self.py, value)
        raise DataFormatError(f"expected {self.describe()}, got {_json_type(value)}")

    def describe(self) -> str:
        if self.kind == "list":
            assert self.item is not None
            return f"a list of {self.item.describe()}"
        if self.kind == "model":
            return f"a JSON object ({self.py.__name__})"
        return _DESCRIBE[self.kind]


_SCALAR = frozenset({"str", "int", "float", "bool"})
"""The kinds whose `py` is a plain Python type: their ATIP type and schema are the table's."""
_ATIP = {
    "path": "file",
    "choice": "enum",
    "model": "string",
    "object": "string",
}
_DESCRIBE = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "path": "a path",
    "choice": "one of the allowed values",
    "object": "a JSON object",
}


def _json_type(value: Any) -> str:
    # Imported here: atipkit._jsontext brings msgspec, which no call should pay for until
    # a value is refused.
    from atipkit._jsontext import json_type

    return json_type(value)


def _choice_text(choice: Any) -> str:
    value = choice.value if isinstance(choice, enum.Enum) else choice
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _decode_json(text: str) -> Any:
    from atipkit import _jsontext
    from atipkit.errors import DocumentError

    try:  # bounded in depth like all JSON atipkit reads
        return _jsontext.decode(text)
    except DocumentError as exc:
        raise DataFormatError(
            str(exc),
            suggestion="Pass the value as one JSON text, quoted for the shell.",
        ) from None


def _schema(shape: Shape) -> dict[str, Any]:
    kind = shape.kind
    if kind in _SCALAR:
        return json_schema(from_python(shape.py))
    if kind == "path":
        return {"type": "string", "format": "path"}
    if kind == "choice":
        values = [c.value if isinstance(c, enum.Enum) else c for c in shape.choices]
        kinds = {type(v) for v in values}
        # a JSON type where the values share a plain one (a Literal mixing types has none)
        plain = kinds.pop() if len(kinds) == 1 else None
        out = json_schema(from_python(plain)) if plain in (str, int, bool) else {}
        out["enum"] = values
        return out
    if kind == "list":
        assert shape.item is not None
        return {"type": "array", "items": shape.item.json_schema()}
    if kind == "object":
        return {"type": "object"}
    return model_schema(shape.py)


# Models ---------------------------------------------------------------------------------


def _is_pydantic(tp: Any) -> bool:
    return isinstance(tp, type) and any(
        c.__module__.startswith("pydantic") and c.__name__ == "BaseModel" for c in tp.__mro__
    )


def _is_msgspec_model(tp: Any) -> bool:
    import dataclasses  # not at import: a millisecond every app would pay

    if dataclasses.is_dataclass(tp) or typing.is_typeddict(tp):
        return True
    return isinstance(tp, type) and any(
        c.__module__ == "msgspec" and c.__name__ == "Struct" for c in tp.__mro__
    )


def _path_schema_hook(tp: Any) -> dict[str, Any]:
    if isinstance(tp, type) and issubclass(tp, pathlib.PurePath):
        return {"type": "string", "format": "path"}
    raise NotImplementedError


def _path_dec_hook(tp: Any, obj: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, pathlib.PurePath) and isinstance(obj, str):
        return tp(obj)
    raise NotImplementedError


def model_schema(tp: Any) -> dict[str, Any]:
    """A model's JSON Schema with every `$ref` inlined (PRD §9.2: clients such as VS Code
    Copilot and Claude Desktop do not follow references)."""
    if _is_pydantic(tp):
        from pydantic import TypeAdapter

        raw = TypeAdapter(tp).json_schema()
    else:
        import msgspec

        raw = msgspec.json.schema(tp, schema_hook=_path_schema_hook)
    return inline_refs(raw)


def _convert_model(tp: Any, value: Any) -> Any:
    if _is_pydantic(tp):
        from pydantic import ValidationError

        try:
            return tp.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "$"
            raise DataFormatError(
                f"{tp.__name__}: {where}: {first['msg']}",
                details={"model": tp.__name__, "errors": exc.errors(include_url=False)},
            ) from None
    import msgspec

    try:
        return _settle(msgspec.convert(value, tp, dec_hook=_path_dec_hook))
    except msgspec.ValidationError as exc:
        raise DataFormatError(f"{tp.__name__}: {exc}", details={"model": tp.__name__}) from None


def _settle(value: Any) -> Any:
    """msgspec builds dataclasses without `__init__` and leaves a field it filled from
    its default on the class, not the instance; `vars()`, `asdict` callers and msgspec's
    own encoder then miss it. Put every field on its instance, all the way down."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.name not in vars(value):
                object.__setattr__(value, f.name, item)
            _settle(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _settle(item)
    elif isinstance(value, dict):
        for item in value.values():
            _settle(item)
    return value


_NOT_INLINED = ("$ref", "$defs", "definitions")


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with `$ref`s to its own `$defs` replaced by what they name. A reference
    back into a definition being expanded (a recursive model) becomes `{"type":
    "object"}` with the model's name in its description: an honest, finite schema."""
    defs: dict[str, Any] = dict(schema.get("$defs") or schema.get("definitions") or {})

    def expand(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(v, seen) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            name = ref.rsplit("/", 1)[1]
            rest = {k: expand(v, seen) for k, v in node.items() if k not in _NOT_INLINED}
            if name in seen or name not in defs:
                return {"type": "object", "description": f"a {name} (recursive)", **rest}
            return {**expand(defs[name], (*seen, name)), **rest}
        return {k: expand(v, seen) for k, v in node.items() if k not in _NOT_INLINED[1:]}

    return expand(schema, ())


# Reading annotations --------------------------------------------------------------------


def shape_of(annotation: Any, where: str) -> Shape:
    """The shape of a (de-Annotated) type hint; `where` names the parameter in errors."""
    optional = False
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != len(typing.get_args(annotation)) - 1 or len(members) != 1:
            raise DefinitionError(
                f"{where}: unions other than Optional[T] are not supported: {annotation!r}"
            )
        optional = True
        annotation = members[0]
        origin = typing.get_origin(annotation)
    shape = _plain(annotation, origin, where)
    return shape._replace(optional=True) if optional else shape


def _plain(tp: Any, origin: Any, where: str) -> Shape:
    if origin is Literal:
        values = typing.get_args(tp)
        if not all(isinstance(v, str | int | bool) for v in values):
            raise DefinitionError(f"{where}: Literal values must be str, int or bool")
        return Shape("choice", tp, choices=tuple(values))
    if origin in (list, tuple, set, frozenset, typing.Sequence, _abc_sequence()):
        args = typing.get_args(tp)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise DefinitionError(f"{where}: use tuple[T, ...] or list[T], not {tp!r}")
        item_type = args[0] if args else str
        item = shape_of(item_type, where)
        if item.kind == "list":
            raise DefinitionError(f"{where}: lists of lists are not supported")
        return Shape("list", list, item=item)
    if origin is dict:
        return Shape("object", dict)
    if tp is Any:
        raise DefinitionError(f"{where}: give a type hint more precise than Any")
    if isinstance(tp, type):
        if issubclass(tp, bool):
            return Shape("bool", bool)
        if issubclass(tp, enum.Enum):
            return Shape("choice", tp, choices=tuple(tp))
        if issubclass(tp, int):
            return Shape("int", int)
        if issubclass(tp, float):
            return Shape("float", float)
        if issubclass(tp, str):
            return Shape("str", str)
        if issubclass(tp, pathlib.PurePath):
            return Shape("path", tp)
        if tp is dict:
            return Shape("object", dict)
        if tp is list:
            return Shape("list", list, item=Shape("str", str))
        if _is_pydantic(tp) or _is_msgspec_model(tp):
            return Shape("model", tp)
    raise DefinitionError(
        f"{where}: unsupported type {tp!r}; use str, int, float, bool, Path, an Enum, a "
        "Literal, list[T], Optional[T], dict, a dataclass, a TypedDict or a pydantic model"
    )


def _abc_sequence() -> Any:
    import collections.abc

    return collections.abc.Sequence
