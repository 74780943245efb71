"""Parameters from type hints: shapes, schemas, docstrings, definition errors, and JSON
arguments (the MCP/HTTP path) held to the same rules as the command line."""

from __future__ import annotations

import dataclasses
import enum
import json
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

import pydantic
import pytest
from click.testing import CliRunner

from atipkit.app import App, Argument, DefinitionError, Option, StdinOr
from atipkit.app.docstrings import parse
from atipkit.app.invoke import call


def one(func: Any, **options: Any) -> Any:
    """A one-command app around `func`; its spec."""
    app = App("t", version="1")
    app.command(**options)(func)
    return app.command_at([func.__name__.replace("_", "-")])


# Docstrings -----------------------------------------------------------------------------


def test_google_numpy_and_sphinx_parameter_sections():
    google = parse(
        """Do a thing.

        More words.

        Args:
            path (str): Where to
                look, on two lines.
            depth: How deep.

        Returns:
            Nothing.
        """
    )
    assert google.summary == "Do a thing."
    assert google.description == "Do a thing.\n\nMore words."
    assert google.params == {"path": "Where to look, on two lines.", "depth": "How deep."}
    numpy = parse(
        """Do a thing.

        Parameters
        ----------
        path : str
            Where to look.
        depth : int, optional
            How deep.

        Returns
        -------
        int
        """
    )
    assert numpy.params == {"path": "Where to look.", "depth": "How deep."}
    assert numpy.description == "Do a thing."
    sphinx = parse(
        """Do a thing.

        :param path: Where to look.
        :param int depth: How deep,
            really.
        :returns: nothing
        """
    )
    assert sphinx.params == {"path": "Where to look.", "depth": "How deep, really."}
    assert sphinx.summary == "Do a thing."


def test_marker_help_wins_over_the_docstring():
    def f(x: Annotated[int, Option(help="From the marker")] = 1, y: int = 2) -> None:
        """F.

        Args:
            x: From the docstring.
            y: Y from the docstring.
        """

    params = {p.name: p for p in one(f).signature.params}
    assert params["x"].help == "From the marker"
    assert params["y"].help == "Y from the docstring."


# Shapes and schemas -----------------------------------------------------------------------


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Tree:
    name: str
    children: list[Tree] = dataclasses.field(default_factory=list)


def test_each_supported_type_has_its_schema():
    def f(
        s: str,
        i: Annotated[int, Option(min=0, max=9)] = 0,
        x: float = 1.5,
        b: bool = False,
        p: Path = Path("."),
        level: Level = Level.LOW,
        lit: Literal["a", "b"] = "a",
        many: list[int] = [],  # noqa: B006
        maybe: str | None = None,
        point: Point | None = None,
        raw: dict = {},  # noqa: B006
        name: Annotated[str, Option(pattern=r"^[a-z]+$", min_length=2)] = "ab",
    ) -> None:
        """F."""

    schema = one(f).signature.input_schema()
    props = schema["properties"]
    assert schema["required"] == ["s"]
    assert schema["additionalProperties"] is False
    assert props["s"] == {"type": "string"}
    assert props["i"] == {"type": "integer", "minimum": 0, "maximum": 9, "default": 0}
    assert props["x"] == {"type": "number", "default": 1.5}
    assert props["b"] == {"type": "boolean", "default": False}
    assert props["p"] == {"type": "string", "format": "path", "default": "."}
    assert props["level"] == {"type": "integer", "enum": [1, 2], "default": 1}
    assert props["lit"] == {"type": "string", "enum": ["a", "b"], "default": "a"}
    assert props["many"] == {"type": "array", "items": {"type": "integer"}, "default": []}
    assert props["maybe"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert props["point"]["anyOf"][0]["properties"] == {
        "x": {"type": "integer"},
        "y": {"type": "integer"},
    }
    assert props["raw"] == {"type": "object", "default": {}}
    assert props["name"]["pattern"] == "^[a-z]+$"
    assert props["name"]["minLength"] == 2


def test_a_recursive_model_is_inlined_and_finite():
    def plant(tree: Tree) -> None:
        """Plant."""

    schema = one(plant).signature.input_schema()
    text = json.dumps(schema)
    assert "$ref" not in text
    children = schema["properties"]["tree"]["properties"]["children"]
    assert children["items"]["type"] == "object"
    assert "recursive" in children["items"]["description"]


class Inner(pydantic.BaseModel):
    n: int = pydantic.Field(ge=0)


class Outer(pydantic.BaseModel):
    inner: Inner
    label: str = "x"


def test_pydantic_models_validate_and_inline():
    def put(item: Outer) -> dict:
        """Put."""
        return item.model_dump()

    spec = one(put)
    assert "$ref" not in json.dumps(spec.signature.input_schema())
    outcome = call(spec, {"item": {"inner": {"n": 3}}})
    assert outcome.ok
    assert outcome.result == {"inner": {"n": 3}, "label": "x"}
    bad = call(spec, {"item": {"inner": {"n": -1}}})
    assert bad.exit_code == 65
    assert bad.error.message.startswith("arguments.item.inner.n:")
    result = CliRunner().invoke(spec.app.click_group, ["put", '{"inner": {"n": -1}}'])
    assert result.exit_code == 65
    assert json.loads(result.stdout)["error"]["details"]["model"] == "Outer"


def test_json_nested_past_the_limit_is_exit_65_over_json_and_on_the_command_line():
    def put(item: Outer) -> dict:
        """Put."""
        return item.model_dump()

    spec = one(put)
    nested: Any = []
    for _ in range(500):  # what an MCP SDK hands over decoded
        nested = [nested]
    outcome = call(spec, {"item": {"inner": nested}})
    assert outcome.exit_code == 65
    assert "nested too deeply: more than 64 levels" in outcome.error.message
    deep = '{"inner": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = CliRunner().invoke(spec.app.click_group, ["put", deep])
    assert result.exit_code == 65, result.output
    assert "nested too deeply" in json.loads(result.stdout)["error"]["message"]

    def take(data: StdinOr[dict]) -> int:
        """Take."""
        return len(data)

    piped = CliRunner().invoke(one(take).app.click_group, ["take", "-"], input=deep)
    assert piped.exit_code == 65, piped.output
    assert "stdin: line 1, column 74: JSON is nested too deeply" in piped.output


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (complex, "unsupported type"),
        (int | str, "unions other than Optional"),
        (list[list[int]], "lists of lists"),
        (tuple[int, str], "tuple"),
        (Any, "more precise than Any"),
    ],
)
def test_unsupported_types_are_refused_naming_the_parameter(annotation, message):
    def f(x):  # type: ignore[no-untyped-def]
        """F."""

    f.__annotations__ = {"x": annotation}
    with pytest.raises(DefinitionError, match=rf"t f: parameter 'x'.*{message}"):
        _ = one(f).signature


def test_other_definition_errors():
    def no_hint(x) -> None:  # type: ignore[no-untyped-def]
        """F."""

    with pytest.raises(DefinitionError, match="has no type hint"):
        _ = one(no_hint).signature

    def star(*xs: int) -> None:
        """F."""

    with pytest.raises(DefinitionError, match=r"\*args"):
        _ = one(star).signature

    def optional_without_default(x: int | None) -> None:
        """F."""

    with pytest.raises(DefinitionError, match="needs a default"):
        _ = one(optional_without_default).signature

    def two_variadic(a: list[str], b: list[str]) -> None:
        """F."""

    with pytest.raises(DefinitionError, match="more than one variadic"):
        _ = one(two_variadic).signature

    def bool_argument(flag: Annotated[bool, Argument()]) -> None:
        """F."""

    with pytest.raises(DefinitionError, match="a bool is a flag"):
        _ = one(bool_argument).signature

    def two_stdin(a: StdinOr[str], b: StdinOr[str]) -> None:
        """F."""

    with pytest.raises(DefinitionError, match="more than one StdinOr"):
        _ = one(two_stdin).signature

    def reserved(_x: int) -> None:
        """F."""

    with pytest.raises(DefinitionError, match="reserved"):
        _ = one(reserved).signature

    def same_flag(a: Annotated[int, Option("-x")] = 1, b: Annotated[int, Option("-x")] = 2) -> None:
        """F."""

    with pytest.raises(DefinitionError, match="-x is used by both"):
        _ = one(same_flag).signature

    with pytest.raises(TypeError, match="start with '-'"):
        Option("x")
    with pytest.raises(TypeError, match="unexpected keyword"):
        Option(helpp="typo")


# JSON arguments: the same rules as the command line ----------------------------------


def _app() -> App:
    app = App("j", version="1")

    @app.command()
    def go(
        where: Annotated[Path, Option(exists=True)] = Path("."),
        depth: Annotated[int, Option(min=1, max=3)] = 1,
        level: Level = Level.LOW,
        name: Annotated[str, Option(pattern=r"^[a-z]+$")] = "ab",
        tags: list[str] = [],  # noqa: B006
    ) -> dict:
        """Go."""
        return {
            "where": str(where),
            "depth": depth,
            "level": level.name,
            "name": name,
            "tags": tags,
        }

    return app


def test_json_arguments_are_converted_like_the_cli_converts_them(tmp_path):
    spec = _app().command_at(["go"])
    outcome = call(spec, {"where": str(tmp_path), "depth": 2, "level": 2, "tags": ["a"]})
    assert outcome.ok
    assert outcome.result == {
        "where": str(tmp_path),
        "depth": 2,
        "level": "HIGH",
        "name": "ab",
        "tags": ["a"],
    }


@pytest.mark.parametrize(
    ("arguments", "argv", "param"),
    [
        ({"depth": 9}, ["--depth", "9"], "depth"),
        ({"name": "A1"}, ["--name", "A1"], "name"),
        ({"where": "/no/such/place"}, ["--where", "/no/such/place"], "where"),
        ({"level": 7}, ["--level", "7"], "level"),
    ],
)
def test_a_value_refused_on_the_cli_is_refused_as_json_with_the_same_code(arguments, argv, param):
    app = _app()
    outcome = call(app.command_at(["go"]), arguments)
    result = CliRunner().invoke(app.click_group, ["go", *argv, "--json"])
    cli_error = json.loads(result.stdout)["error"]
    assert outcome.exit_code == result.exit_code == 2
    assert outcome.error.code == cli_error["code"] == "E1002"
    assert outcome.error.details["param"] == cli_error["details"]["param"] == param


def test_json_arguments_of_the_wrong_shape():
    spec = _app().command_at(["go"])
    unknown = call(spec, {"depth": 1, "bogus": True})
    assert unknown.exit_code == 2
    assert "bogus" in unknown.error.message
    wrong_type = call(spec, {"depth": "2"})
    assert wrong_type.exit_code == 2
    assert wrong_type.error.message.startswith("arguments.depth:")
    not_an_object = call(spec, ["depth", 2])
    assert not_an_object.exit_code == 2


def test_stdin_parameters_take_the_data_itself_over_json():
    app = App("s", version="1")

    @app.command()
    def wc(data: StdinOr[str]) -> int:
        """Count."""
        return len(data.split())

    @app.command()
    def size(source: StdinOr[Path]) -> int:
        """Size."""
        return source.stat().st_size

    assert call(app.command_at(["wc"]), {"data": "a b c"}).result == 3
    assert call(app.command_at(["size"]), {"source": "12345"}).result == 5
    missing = call(app.command_at(["wc"]), {})
    assert missing.exit_code == 2
    assert missing.error.code == "E1004"


class Aliased(pydantic.BaseModel):
    user_name: str = pydantic.Field(alias="userName")

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def shout(self) -> str:
        return self.user_name.upper()


def test_the_output_schema_describes_what_is_written_not_what_is_read():
    import jsonschema

    from atipkit.app.output import encode
    from atipkit.app.schema import output_schema

    written = json.loads(encode(Aliased(userName="ada")))
    assert written == {"user_name": "ada", "shout": "ADA"}
    jsonschema.validate(written, output_schema(Aliased))


def test_hints_are_read_as_typing_reads_them():
    import functools

    from atipkit.app.params import _hints

    def plain(a: int, b: str = "x", *, c: bool = False, d: list[str] | None = None) -> dict:
        """F."""
        return {}

    @functools.wraps(plain)
    def wrapped(*args: Any, **kwargs: Any) -> dict:
        return plain(*args, **kwargs)

    def none(a: Annotated[int, Option(help="h")]) -> None:
        """F."""

    for func in (plain, wrapped, none):
        assert _hints(func) == typing.get_type_hints(func, include_extras=True)

    def unresolvable(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        """F."""

    with pytest.raises(NameError):
        _hints(unresolvable)
