"""One exception root and one set of codes (decisions 388-390): every public exception of
atipkit is an `AtipError` (and still the builtin its callers catch), every code an error
carries is an `ErrorCode`, and the exit statuses documented in SPEC-NOTES 23 hold."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

import atipkit
from atipkit.app.errors import ExitCode, ToolError
from atipkit.errors import AtipError, ErrorCode

SRC = Path(atipkit.__file__).parent


def _exception_classes() -> list[type[BaseException]]:
    """Every exception class defined in an atipkit module, private ones included."""
    found = []
    with warnings.catch_warnings():  # the deprecated alias's modules are atipkit.crawl's
        warnings.filterwarnings("ignore", "atipkit.registry.crawl is deprecated")
        infos = list(pkgutil.walk_packages(atipkit.__path__, "atipkit."))
    for info in infos:
        if info.name.endswith("__main__") or info.name.startswith("atipkit.registry.crawl"):
            continue
        module = importlib.import_module(info.name)
        found += [
            obj
            for obj in vars(module).values()
            if inspect.isclass(obj)
            and issubclass(obj, BaseException)
            and obj.__module__ == module.__name__
        ]
    return list(dict.fromkeys(found))


def test_every_public_exception_is_an_atip_error() -> None:
    """Warnings and the private control-flow exceptions that never leave their module
    (`_Gone`, `_Refused`) are the only ones outside the tree."""
    classes = _exception_classes()
    assert len(classes) > 60
    outside = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in classes
        if not issubclass(cls, AtipError | Warning) and not cls.__name__.startswith("_")
    )
    assert outside == []


@pytest.mark.parametrize(
    ("dotted", "builtin"),
    [
        ("atipkit.search.index.DamagedIndex", ValueError),
        ("atipkit.search.budget.BudgetTooSmall", ValueError),
        ("atipkit.search.embed.ModelMissing", ImportError),
        ("atipkit.trust.digest.BadHash", ValueError),
        ("atipkit.trust.signatures.NotABundle", ValueError),
        ("atipkit.naming.BadToolName", ValueError),
        ("atipkit.serve.guard.GuardError", ValueError),
        ("atipkit.interop.atdf.export.SameNameError", ValueError),
        ("atipkit.app.errors.DefinitionError", TypeError),
        ("atipkit._mcp_sdk.SdkUnavailable", Exception),
    ],
)
def test_joined_classes_are_still_what_callers_catch(dotted: str, builtin: type) -> None:
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, AtipError)
    assert issubclass(cls, builtin)


def test_tool_errors_are_atip_errors_with_their_codes_and_statuses_unchanged() -> None:
    """The documented table (README, SPEC-NOTES 23): class → (default code, exit)."""
    from atipkit.app import errors

    table = {
        "ToolError": ("E5001", 70),
        "InputError": ("E1001", 2),
        "DataFormatError": ("E1003", 65),
        "AuthError": ("E2001", 30),
        "HumanHandoff": ("E2002", 101),
        "StateError": ("E3000", 20),
        "NotFoundError": ("E3001", 10),
        "ConflictError": ("E3002", 20),
        "DependencyError": ("E4001", 40),
        "TimeoutExpired": ("E4002", 50),
        "TemporaryError": ("E4003", 75),
        "InternalError": ("E5001", 70),
    }
    for name, (code, status) in table.items():
        cls = getattr(errors, name)
        assert issubclass(cls, AtipError)
        assert (cls.default_code, cls.exit_code) == (code, status)
        assert isinstance(cls.default_code, ErrorCode)
    statuses = {k: v for k, v in vars(ExitCode).items() if k.isupper()}
    assert statuses == {
        "OK": 0,
        "USAGE": 2,
        "NOT_FOUND": 10,
        "CONFLICT": 20,
        "PERMISSION": 30,
        "DEPENDENCY": 40,
        "TIMEOUT": 50,
        "DATA_FORMAT": 65,
        "INTERNAL": 70,
        "TEMPORARY": 75,
        "HUMAN_HANDOFF": 101,
    }


def test_every_default_code_is_a_member() -> None:
    def walk(cls: type[ToolError]) -> list[type[ToolError]]:
        return [cls, *(c for sub in cls.__subclasses__() for c in walk(sub))]

    for cls in walk(ToolError):
        assert cls.default_code in set(ErrorCode), cls


def test_codes_are_their_strings_in_json() -> None:
    error = ToolError("x", code=ErrorCode.DENIED).to_dict()
    assert type(error["code"]) is str
    assert json.loads(json.dumps(error))["code"] == "E2012"
    assert ErrorCode("E1002") is ErrorCode.BAD_VALUE
    assert all(re.fullmatch(r"E[1-5]\d{3}", c) and c.meaning for c in ErrorCode)


_LITERAL = re.compile(r"E\d{4}")


def test_every_code_in_the_source_is_a_member_and_spelled_as_one() -> None:
    """Any `"E...."` in the code is a member's value, and no module but errors.py
    writes a code as a string literal (prose that quotes one is not a literal code)."""
    members = {c.value for c in ErrorCode}
    unknown, spelled = [], []
    for path in SRC.rglob("*.py"):
        rel = str(path.relative_to(SRC))
        text = path.read_text("utf-8")
        found = re.findall(r"\"(E\d{4})\"", text)
        unknown += [f"{rel}: {code}" for code in found if code not in members]
        if rel == "errors.py":
            continue
        spelled += [
            f"{rel}:{node.lineno}"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _LITERAL.fullmatch(node.value)
        ]
    assert unknown == []
    assert spelled == []
