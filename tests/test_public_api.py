"""The public surface: small, lazily loaded, and free of name clashes with submodules."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import atipkit
from atipkit._exports import declared_exports

LAZY = [
    "atipkit",
    "atipkit.app",
    "atipkit.infer",
    "atipkit.introspect",
    "atipkit.registry",
    "atipkit.trust",
]
"""The packages whose exports load on first use."""


def exports(package: str) -> dict[str, str]:
    return declared_exports(Path(importlib.import_module(package).__file__).read_text())


@pytest.mark.parametrize("package", LAZY)
def test_every_export_resolves_and_all_is_complete(package):
    module = importlib.import_module(package)
    declared = exports(package)
    for name, source in declared.items():
        assert hasattr(importlib.import_module(source), name), (source, name)
    eager = ["__version__"] if package == "atipkit" else []
    assert module.__all__ == sorted([*declared, *eager])
    assert dir(module) == module.__all__
    for name in module.__all__:
        assert getattr(module, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        module.nope  # noqa: B018


def test_an_agent_builder_starts_from_atipkit_alone():
    """The names examples/agent_loop.py uses, each the object its home module defines,
    with its real signature: `discover` is `scan`, not a `**kwargs` wrapper."""
    from atipkit import (
        Executor,
        Policy,
        compile_tools,
        discover,
        get_tool,
        parse_tool_calls,
        scan,
    )
    from atipkit._scan import scan as scan_itself
    from atipkit.bridge import compile_tools as compile_itself
    from atipkit.execute import Executor as executor_itself
    from atipkit.policy import Policy as policy_itself

    assert (scan, compile_tools, Executor, Policy) == (
        scan_itself,
        compile_itself,
        executor_itself,
        policy_itself,
    )
    assert discover is scan
    parameters = inspect.signature(atipkit.discover).parameters
    assert list(parameters)[:3] == ["dirs", "only", "skip"]
    assert parameters["infer"].default is False
    assert "provider" in inspect.signature(compile_tools).parameters
    assert list(inspect.signature(parse_tool_calls).parameters) == [
        "provider",
        "response",
        "compiled",
    ]
    assert "name" in str(inspect.signature(get_tool))


@pytest.mark.parametrize(
    ("block", "refused"),
    [
        ("    from atipkit.model import Tool\n", "Tool"),
        ("    from atipkit.model import Tool as Other\n", "Tool as Other"),
        ("    import atipkit.model\n", "import atipkit.model"),
        (
            "    from atipkit.model import Tool as Tool\n"
            "    from atipkit.resolve import Tool as Tool\n",
            "exported twice",
        ),
    ],
)
def test_an_export_is_declared_whole_or_refused(block, refused):
    """The TYPE_CHECKING block is the one list: what a type checker would not re-export
    (a plain import, a renaming alias) or what names one thing twice is an ImportError,
    at the first import of the package, not a name that silently fails to load."""
    with pytest.raises(ImportError, match=refused):
        declared_exports(f"if TYPE_CHECKING:\n{block}\n__all__ = []\n")
    with pytest.raises(ImportError, match="no `if TYPE_CHECKING:` block"):
        declared_exports("__all__ = []\n")


def test_the_declared_exports_read_parenthesised_lists_and_comments():
    source = (
        "if TYPE_CHECKING:  # the exports\n"
        "    from a.b import (  # one\n"
        "        X as X,\n"
        "        y as y,\n"
        "    )\n"
        "\n"
        "    from c import Z as Z\n"
        "rest = 1\n"
        "from d import W as W\n"
    )
    assert declared_exports(source) == {
        "X": "a.b",
        "y": "a.b",
        "Z": "c",
    }


def test_exports_survive_importing_every_submodule():
    """A submodule named like an exported function (atipkit.validate, .scan, .resolve)
    replaces the function on the package when it is imported; no export may clash."""
    with warnings.catch_warnings():  # the crawler's old name warns: it is imported on purpose
        warnings.filterwarnings("ignore", "atipkit.registry.crawl is deprecated")
        for info in pkgutil.walk_packages(atipkit.__path__, "atipkit."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    for package in LAZY:
        for name, module in exports(package).items():
            exported = getattr(importlib.import_module(package), name)
            assert exported is getattr(importlib.import_module(module), name), name


def test_import_is_cheap():
    code = (
        "import atipkit, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'atipkit', 'msgspec', 'click', 'jsonschema_rs', 'json'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert eval(out) == ["atipkit", "atipkit._exports", "atipkit._version"]


def test_no_two_classes_share_a_name():
    """A class name means one concept (decision 391): no public class name is defined
    in two modules (`Catalog` of app/mcp.py and of the gateway are `AppCatalog` and
    `GatewayCatalog`, the old name kept as an alias of each for a release)."""
    import ast
    from pathlib import Path

    where: dict[str, list[str]] = {}
    src = Path(atipkit.__file__).parent
    for path in sorted(src.rglob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(str(path.relative_to(src)))
    shared = {name: files for name, files in where.items() if len(files) > 1}
    assert shared == {}, shared
