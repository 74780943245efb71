"""What an `atip` process imports: the modules of the command it runs, not every command's
(decision 310). Behaviour, not time: a module list does not depend on the machine's load.

Each process runs `atip ARGS` through the app and then prints every module it imported.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from atipkit.app import Group
from atipkit.cli import COMMANDS, app
from tests.helpers import atip_answer, machine_env, minimal
from tests.test_discovery import tool_script

_IMPORTS = """
import sys
from atipkit.cli import app
app.main(sys.argv[1:])
print("\\n".join(sorted(sys.modules)))
"""

COMMAND_MODULES = {
    *(f"atipkit.cli.{module}" for module in COMMANDS),
    *(f"atipkit.cli.{module}" for module in ("publish", "mcp", "atdf", "tdp")),
}
"""Every module that defines a command of atip (the last four: of `registry`, `import`)."""
SERVING = {
    "atipkit.bridge",
    "atipkit.infer",
    "atipkit.interop",
    "atipkit.sandbox",
    "atipkit.serve",
    "atipkit.app.http",
    "atipkit.app.mcp",
    "httpx",
}
"""What the compiler, the inference, the gateway, the servers and the network bring in."""


def python(env: dict[str, str], script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def imported(env: dict[str, str], *args: str) -> set[str]:
    done = python(env, _IMPORTS, *args)
    assert done.returncode == 0, done.stderr
    return {line for line in done.stdout.splitlines() if not line.startswith(("{", "atip "))}


def test_version_imports_no_command_and_no_model(tmp_path):
    modules = imported(machine_env(tmp_path), "--version")
    assert "atipkit.cli" in modules
    assert not modules & COMMAND_MODULES
    assert not modules & {"atipkit.model", "msgspec", "atipkit.registry", *SERVING}


def test_search_imports_its_own_module_alone(tmp_path):
    env = machine_env(tmp_path)
    bin_dir = tmp_path / "bin"
    tool_script(bin_dir, "zebra", minimal(name="zebra", description="Feed the zebra"))
    assert atip_answer(env, "scan", "--path", str(bin_dir), "--json")[0] == 0
    code, first, _ = atip_answer(env, "search", "zebra", "--json")  # builds the index
    assert (code, first["result"]["index"]["updated"]) == (0, True)

    modules = imported(env, "search", "zebra", "--json")

    assert modules & COMMAND_MODULES == {"atipkit.cli.search"}
    assert not modules & SERVING
    # a saved index is read: not the remote registries' client, nor the schema
    assert not modules & {"atipkit.registry.remote", "atipkit.validation", "atipkit.schema"}
    # nor resolution, its policy and probe, nor the bridge that names a new index's hits
    assert not modules & {"atipkit.resolve", "atipkit.policy", "atipkit.probe", "atipkit.bridge"}
    # ranked by words: nor msgspec, the registry's model and its reader, nor what
    # updates the index (decision 582); the check and the query use the standard library
    words = imported(env, "search", "zebra", "--ranking", "bm25", "--json")
    assert "atipkit.search.index" in words
    assert not words & {"msgspec", "atipkit.model", "atipkit.registry.local"}
    assert not words & {"atipkit.search.refresh", "atipkit.search.documents", "filelock"}


def run(env: dict[str, str], script: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_table_of_modules_is_whole_and_right(tmp_path):
    """Each module, imported alone, defines the names it is declared for (else
    `DefinitionError`), and no module defines a name the table does not declare."""
    env = machine_env(tmp_path)
    for names in COMMANDS.values():
        run(env, f"import atipkit.cli as c\nfor n in {list(names)!r}: assert c.app.child(n)")
    assert list(app.children) == [name for names in COMMANDS.values() for name in names]
    registry, imports = app.child("registry"), app.child("import")
    assert isinstance(registry, Group)
    assert isinstance(imports, Group)
    assert list(registry.children) == ["fetch", "list", "build", "publish"]
    assert list(imports.children) == ["mcp", "atdf", "tdp"]


def test_a_command_imports_its_own_modules_only(tmp_path):
    """`atip import tdp` needs interop.py and tdp.py, not the MCP importer; `atip
    registry build` needs publish.py and registry.py, which defines its group."""
    script = (
        "import sys, atipkit.cli as c\n"
        "c.app.command_at({path!r})\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('atipkit.cli.'))))"
    )
    env = machine_env(tmp_path)
    tdp = run(env, script.format(path=["import", "tdp"]))[0].split()
    assert set(tdp) & COMMAND_MODULES == {"atipkit.cli.interop", "atipkit.cli.tdp"}
    build = run(env, script.format(path=["registry", "build"]))[0].split()
    assert set(build) & COMMAND_MODULES == {"atipkit.cli.registry", "atipkit.cli.publish"}


def test_the_order_is_the_tables_whichever_module_came_first(tmp_path):
    """A group keeps its order, and so does the app, when one command was asked for
    before the rest (tdp.py and publish.py imported first, as a library user may, then
    `search`, then `--help`)."""
    script = (
        "import atipkit.cli.tdp, atipkit.cli.publish, atipkit.cli as c\n"
        "c.app.child('search')\n"
        "print(' '.join(c.app.child('import').children))\n"
        "print(' '.join(c.app.child('registry').children))\n"
        "print(' '.join(c.app.children))"
    )
    lines = run(machine_env(tmp_path), script)
    declared = " ".join(n for names in COMMANDS.values() for n in names)
    assert lines == ["mcp atdf tdp", "fetch list build publish", declared]


def test_a_commands_help_imports_no_model(tmp_path):
    """`atip X --help` starts as a plain Click program of its shape does (issue 22: within
    1.3x): the effects atip's commands declare are JSON until asked for, and the input
    limits shown as defaults live apart from the decoder, so the model and msgspec stay
    unimported; also for the root's `--help`."""
    env = machine_env(tmp_path)
    for words in ([], ["scan"], ["validate"], ["run"], ["registry", "publish"], ["mcp", "serve"]):
        modules = imported(env, *words, "--help")
        assert not modules & {"atipkit.model", "msgspec"}, words


def test_the_roots_help_lists_every_command_importing_none(tmp_path):
    """`atip --help` lists the commands by the summaries `COMMANDS` declares (decision
    521): no command's module is imported, and the list is the one the commands' own
    docstrings give (`app.check()`'s help check: an edited docstring fails it)."""
    from atipkit.app.contract import check

    env = machine_env(tmp_path)
    modules = imported(env, "--help")
    assert not modules & COMMAND_MODULES
    text = subprocess.run(
        [sys.executable, "-m", "atipkit", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    listed = dict(re.findall(r"^  ([a-z-]+) +(\S.*)$", text.split("Commands:")[1], re.MULTILINE))
    for names in COMMANDS.values():
        for name, summary in names.items():  # cut to the width, as Click does
            assert summary.startswith(listed[name].removesuffix("...")), name
    report = check(app, only=("help",))
    assert report.ok, report.text()


def test_a_built_in_groups_help_imports_no_command(tmp_path):
    """`atip docs --help` (and `docs llms --help`, ...): a built-in's name is never a
    command's (`Group._add` refuses it), so it is looked up before the children, which
    for a name no `lazy` call declared would import every command's module."""
    env = machine_env(tmp_path)
    for words in (["docs"], ["docs", "llms"], ["docs", "man"]):
        modules = imported(env, *words, "--help")
        assert not modules & COMMAND_MODULES, words


_ENDING = """
import atexit, sys
class Teardown:
    def __del__(self):
        sys.stderr.write("TORN DOWN\\n")
kept = Teardown()  # freed only when the interpreter tears its modules down
atexit.register(lambda: sys.stderr.write("ATEXIT\\n"))
from atipkit.cli import main
main(sys.argv[1:])
"""


def test_a_search_process_ends_without_the_teardown_its_atexit_handlers_run(tmp_path):
    """`atip search` ends its process without tearing the interpreter down (decision
    720); its output is whole, its status kept and atexit handlers still run. Other
    commands end as the interpreter ends."""
    env = machine_env(tmp_path)

    def ending(*args: str) -> tuple[int, str, str]:
        done = python(env, _ENDING, *args)
        return done.returncode, done.stdout, done.stderr

    code, out, err = ending("search", "zebra", "--ranking", "bm25", "--json")
    assert (code, json.loads(out)["result"]["ranking"]) == (0, "bm25")
    assert ("ATEXIT" in err, "TORN DOWN" in err) == (True, False)
    code, out, err = ending("search", " ", "--json")  # a usage error: its own status
    assert (code, "QUERY is empty" in out) == (2, True)
    assert ("ATEXIT" in err, "TORN DOWN" in err) == (True, False)
    code, out, err = ending("--version")
    assert (code, out.startswith("atip ")) == (0, True)
    assert ("ATEXIT" in err, "TORN DOWN" in err) == (True, True)
