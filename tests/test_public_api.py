"""The public surface: small, lazily loaded, and free of name clashes with submodules."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import warnings

import atipkit


def test_every_export_resolves_and_all_is_complete():
    listed = [name for names in atipkit._EXPORTS.values() for name in names]
    assert len(listed) == len(set(listed)), "a name is listed for two modules"
    for module, names in atipkit._EXPORTS.items():
        for name in names:
            assert hasattr(importlib.import_module(module), name), (module, name)
    assert sorted(atipkit.__all__) == sorted(["__version__", *listed])
    for name in atipkit.__all__:
        assert getattr(atipkit, name) is not None


def test_exports_survive_importing_every_submodule():
    """A submodule named like an exported function (atipkit.validate, .scan, .resolve)
    replaces the function on the package when it is imported; no export may clash."""
    with warnings.catch_warnings():  # the crawler's old name warns: it is imported on purpose
        warnings.filterwarnings("ignore", "atipkit.registry.crawl is deprecated")
        for info in pkgutil.walk_packages(atipkit.__path__, "atipkit."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)
    for module, names in atipkit._EXPORTS.items():
        for name in names:
            assert getattr(atipkit, name) is getattr(importlib.import_module(module), name), name


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
    in two modules. `Catalog` waits for the merge of app/mcp.py with the gateway."""
    import ast
    from pathlib import Path

    where: dict[str, list[str]] = {}
    src = Path(atipkit.__file__).parent
    for path in sorted(src.rglob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(str(path.relative_to(src)))
    shared = {name: files for name, files in where.items() if len(files) > 1}
    assert shared.keys() <= {"Catalog"}, shared
