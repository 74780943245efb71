"""Definition problems are reported when a command is defined, naming the function and
the fix, never as a traceback at its first run (issue 24)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from atipkit.app import DefinitionError


def load(tmp_path: Path, source: str, name: str = "shadow_app") -> ModuleType:
    """`source` as a module of its own (module-level functions, postponed annotations)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


HEADER = """\
    from __future__ import annotations
    from atipkit.app import App
    app = App("todo", version="1")
"""


def test_a_function_named_list_is_refused_where_it_is_defined(tmp_path):
    with pytest.raises(DefinitionError) as caught:
        load(
            tmp_path,
            HEADER
            + """
    @app.command()
    def list(tag: str = "") -> list[str]:
        return []
    """,
        )
    message = str(caught.value)
    assert message.startswith("todo list: the function 'list' hides the built-in type 'list'")
    assert "annotation 'list[str]' of 'list'" in message
    assert '@app.command("list") def list_(...)' in message


def test_commands_defined_before_it_are_named_too(tmp_path):
    with pytest.raises(DefinitionError, match="annotation 'list\\[str\\]' of 'show'"):
        load(
            tmp_path,
            HEADER
            + """
    @app.command()
    def show() -> list[str]:
        return []

    @app.command()
    def list() -> dict:
        return {}
    """,
        )


def test_a_plain_function_that_hides_a_type_is_named_at_the_first_run(tmp_path):
    module = load(
        tmp_path,
        HEADER
        + """
    @app.command()
    def show() -> dict[str, int]:
        return {}

    def dict():  # not a command: seen only when the annotations are read
        return {}
    """,
    )
    with pytest.raises(DefinitionError, match="the function 'dict' hides the built-in type"):
        _ = module.app.command_at(["show"]).signature


def test_list_underscore_is_the_list_command_and_quoted_words_are_not_names(tmp_path):
    module = load(
        tmp_path,
        HEADER
        + """
    from typing import Literal

    @app.command()
    def list_(kind: Literal["list", "dict"] = "list") -> list[str]:
        return [kind]

    @app.command()
    def filter() -> dict:  # hides a type no annotation uses
        return {}
    """,
    )
    assert module.app.names() == ["list", "filter"]
    assert module.app.main(["list", "--json"]) == 0
