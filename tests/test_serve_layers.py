"""`atipkit.serve` sits below `atipkit.app`: the servers, the gateway and the one MCP
serving path import nothing of the app framework, at import time or while they work
(issue 22). Checked in a fresh interpreter, since this one has imported everything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import EXAMPLES, machine_env

PROBE = """
import importlib, json, pkgutil, sys
import atipkit.serve
for found in pkgutil.walk_packages(atipkit.serve.__path__, "atipkit.serve."):
    importlib.import_module(found.name)
imported = [m for m in sys.modules if m.startswith("atipkit.")]

from atipkit.serve import deferred
from atipkit.serve.gateway import Gateway, Selection
gateway = Gateway(Selection(files=tuple(map(__import__("pathlib").Path, sys.argv[1:]))),
                  deferred=True, log=lambda line: None)
catalog = gateway.catalog
listed = [tool["name"] for tool in catalog.deferred]
hits = deferred.handle("search_tools", {"query": "pods"}, catalog, deferred.run_schema())
schema = deferred.handle("get_tool_schema", {"name": hits.value["tools"][0]["name"]},
                         catalog, deferred.run_schema())
gateway.server()
gateway.http_app(interval=0)
print(json.dumps({
    "listed": listed,
    "schema": schema.value["name"],
    "app": sorted(m for m in sys.modules if m == "atipkit.app" or m.startswith("atipkit.app.")),
    "cli": sorted(m for m in sys.modules if m.startswith("atipkit.cli")),
    "imported": len(imported),
}))
"""


def test_serve_imports_nothing_of_the_app_framework(tmp_path: Path) -> None:
    tools = [str(EXAMPLES / "tools" / f"{name}.json") for name in ("gh", "kubectl")]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *tools],
        env=machine_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["imported"] > 10  # the walk did import serve's modules
    assert found["listed"] == ["search_tools", "get_tool_schema", "run_tool"]
    assert found["schema"].startswith("kubectl_")
    assert found["app"] == []
    assert found["cli"] == []
