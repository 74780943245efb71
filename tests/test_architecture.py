"""The layers hold: `lint-imports` keeps the contracts of pyproject.toml, no import cycle
crosses packages, and docs/architecture.md lists the layers the contract holds (so the
page and the contract cannot drift apart)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import grimp
import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = "atipkit"
CYCLES_ALLOWED_INSIDE = ("atipkit.app",)
"""Packages whose modules may import each other in a cycle (type-only or call-time
imports of one framework: decision 381)."""


@cache
def contract(contract_id: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [found] = [c for c in config["contracts"] if c["id"] == contract_id]
    return found


def ignored(expressions: list[str]) -> re.Pattern[str]:
    """The imports an import-linter `ignore_imports` list names, as one pattern over
    `importer -> imported` (`*` is one part of a name, `**` any number)."""
    parts = []
    for expression in expressions:
        pattern = re.escape(expression).replace(r"\*\*", ".+").replace(r"\*", "[^.]+")
        parts.append(pattern)
    return re.compile("|".join(parts))


def build() -> grimp.ImportGraph:
    """atipkit's import graph (every import: top level, call time, type-only), without
    the imports the layers contract ignores by name. Read afresh: grimp's cache once
    answered with an import already removed."""
    built = grimp.build_graph(PACKAGE, cache_dir=None)
    skip = ignored(contract("layers").get("ignore_imports", []))
    for importer in sorted(built.modules):
        for imported in sorted(built.find_modules_directly_imported_by(importer)):
            if skip.fullmatch(f"{importer} -> {imported}"):
                built.remove_import(importer=importer, imported=imported)
    return built


graph = cache(build)


def top(module: str) -> str:
    """The child of atipkit a module belongs to: its layer's unit."""
    return ".".join(module.split(".")[:2])


def package_of(built: grimp.ImportGraph, module: str) -> str:
    """The package a module is in: itself for a package, else its parent."""
    return module if built.find_children(module) else module.rpartition(".")[0]


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of a graph: its strongly connected parts of more than one node
    (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        part.append(member)
                        if member == node:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
    return found


def cross_package_cycles(built: grimp.ImportGraph) -> list[list[str]]:
    """Cycles between the children of atipkit (packages and top-level modules alike),
    and cycles of modules that span more than one package (outside the packages of
    `CYCLES_ALLOWED_INSIDE`)."""
    tops: dict[str, set[str]] = {}
    modules: dict[str, set[str]] = {}
    for importer in built.modules:
        for imported in built.find_modules_directly_imported_by(importer):
            if top(importer) != top(imported) and PACKAGE not in (importer, imported):
                tops.setdefault(top(importer), set()).add(top(imported))
            modules.setdefault(importer, set()).add(imported)
    found = strongly_connected(tops)
    for part in strongly_connected(modules):
        packages = {package_of(built, m) for m in part}
        allowed = any(
            all(m == p or m.startswith(p + ".") for m in part) for p in CYCLES_ALLOWED_INSIDE
        )
        if len(packages) > 1 and not allowed:
            found.append(part)
    return found


def test_no_import_cycle_crosses_packages() -> None:
    assert cross_package_cycles(graph()) == []


def test_the_cycle_check_finds_an_arrow_that_runs_up() -> None:
    """An import from the executor to the MCP client (the arrow issue 22 removed) is a
    cycle across packages, and so is one from the store to the crawler."""
    built = build()
    built.add_import(importer="atipkit.execute.executor", imported="atipkit.interop.mcp.call")
    built.add_import(importer="atipkit.registry.local", imported="atipkit.crawl.pipeline")
    found = cross_package_cycles(built)
    assert ["atipkit.execute", "atipkit.interop"] in found
    assert any({"atipkit.crawl", "atipkit.registry"} <= set(part) for part in found)


def test_lint_imports_keeps_every_contract() -> None:
    """The contracts of pyproject.toml, as .ci/run checks them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()"
    done = subprocess.run(
        [sys.executable, "-c", script, "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_every_child_of_atipkit_is_in_a_layer() -> None:
    """`exhaustive` in the contract says so too; here the layers name no module twice
    and none that is gone."""
    named = [
        name.strip() for layer in contract("layers")["layers"] for name in re.split(r"[|:]", layer)
    ]
    children = {m.rpartition(".")[2] for m in graph().find_children(PACKAGE)}
    assert len(named) == len(set(named))
    assert set(named) == children


def page_layers() -> list[str]:
    """The layers docs/architecture.md lists, top first: the numbered items of its
    "Layers" section, each opening with the contract's line in backticks."""
    text = (ROOT / "docs/architecture.md").read_text()
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\d+\. `([^`]+)`", section, re.M)


def test_the_architecture_page_lists_the_contracts_layers() -> None:
    assert page_layers() == contract("layers")["layers"]


@pytest.mark.parametrize("contract_id", ["pure", "fusion", "providers", "protocols"])
def test_the_architecture_page_names_every_other_contract(contract_id: str) -> None:
    assert contract(contract_id)["name"] in (ROOT / "docs/architecture.md").read_text()


def test_the_crawlers_old_name_is_the_same_package_and_warns() -> None:
    """`atipkit.registry.crawl` (the README's name before decision 379) still imports,
    with a DeprecationWarning, and gives atipkit.crawl's own modules, not copies."""
    script = (
        "import warnings; warnings.simplefilter('error')\n"
        "try:\n"
        "    import atipkit.registry.crawl\n"
        "except DeprecationWarning as exc:\n"
        "    print('warned:', exc)\n"
        "warnings.simplefilter('ignore')\n"
        "import sys; sys.modules.pop('atipkit.registry.crawl', None)\n"
        "from atipkit.registry.crawl import Settings, crawl\n"
        "from atipkit.registry.crawl.platforms import host\n"
        "from atipkit.registry.crawl.sources import Artifact\n"
        "import atipkit.crawl, atipkit.crawl.platforms, atipkit.crawl.artifacts as a\n"
        "print(crawl is atipkit.crawl.crawl, host is atipkit.crawl.platforms.host,"
        " Artifact is a.Artifact, Settings is atipkit.crawl.Settings)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "warned: atipkit.registry.crawl is deprecated: import atipkit.crawl",
        "True True True True",
    ]
