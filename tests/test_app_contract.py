"""atipkit.app's built-in contract tests and tool versioning (PRD §16): `app.check()`
on apps good and broken, the snapshot's semver rules, and `contract_tests` run by a real
pytest process over a project of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from atipkit.app import App
from atipkit.app.contract import check, compare, surface
from tests.apps.safe_app import app as safe

ROOT = Path(__file__).parent.parent


def test_a_well_defined_app_passes_every_check_with_warnings_at_most():
    report = safe.check()
    assert report.ok, report.text()
    assert {f.check for f in report.findings} <= {"agent"}  # parameters without help
    assert all(f.severity == "warning" for f in report.findings)


def broken() -> App:
    app = App("broken", version="1.0.0")

    @app.command(examples=[{"args": ["--colour", "red"]}, "broken paint --size big"])
    def paint(size: int = 1) -> dict:
        return {"size": size}

    return app


def test_a_command_without_a_docstring_and_examples_that_do_not_parse_are_found():
    report = broken().check()
    assert not report.ok
    assert [f.where for f in report.of("docstring")] == ["broken paint"]
    examples = report.of("examples")
    assert [f.where for f in examples] == ["broken paint --colour red", "broken paint --size big"]
    assert "No such option" in examples[0].message
    assert "'big' is not a valid integer" in examples[1].message
    assert report.of("envelope") == []  # usage errors are envelopes, whatever the command


def versioned(version: str, *, extra: bool = False, required: bool = False) -> App:
    app = App("ver", version=version)

    if extra:

        @app.command()
        def add(name: str, force: bool = False) -> dict:
            """Add."""
            return {}

    elif required:

        @app.command()
        def add(name: str, owner: str) -> dict:  # type: ignore[misc]  # one of three shapes
            """Add."""
            return {}

    else:

        @app.command()
        def add(name: str) -> dict:  # type: ignore[misc]  # one of three shapes
            """Add."""
            return {}

    return app


def test_versioning_follows_semver_against_the_recorded_snapshot(tmp_path):
    snap = tmp_path / "contract.json"
    first = check(versioned("1.0.0"), snapshot=snap, only=("version",))
    assert [f.message for f in first.findings] == ["no snapshot yet: written"]
    assert json.loads(snap.read_text())["version"] == "1.0.0"
    assert check(versioned("1.0.0"), snapshot=snap, only=("version",)).findings == []
    same = check(versioned("1.0.0", extra=True), snapshot=snap, only=("version",))
    assert not same.ok
    assert "additions need a new minor version" in same.findings[0].message
    assert "parameter 'force' added" in same.findings[0].message
    assert check(versioned("1.1.0", extra=True), snapshot=snap, only=("version",)).ok
    minor = check(versioned("1.1.0", required=True), snapshot=snap, only=("version",))
    assert not minor.ok
    assert "needs a new major version" in minor.findings[0].message
    assert "parameter 'owner' added as required" in minor.findings[0].message
    major = check(versioned("2.0.0", required=True), snapshot=snap, only=("version",), update=True)
    assert major.ok
    assert json.loads(snap.read_text())["version"] == "2.0.0"  # written once accepted


def test_compare_names_each_breaking_change():
    old = surface(versioned("1.0.0", extra=True))
    new = surface(versioned("1.0.0", required=True))
    breaking, added = compare(old, new)
    assert breaking == [
        "add: parameter 'force' removed",
        "add: parameter 'owner' added as required",
    ]
    assert added == []
    gone = {**new, "commands": {}}
    assert compare(new, gone)[0] == ["command 'add' removed"]


def test_an_unknown_check_is_refused():
    with pytest.raises(ValueError, match="no contract check 'typo'"):
        check(safe, only=("typo",))


def test_contract_tests_run_as_pytest_tests_in_a_project_of_their_own(tmp_path):
    (tmp_path / "good.py").write_text(
        textwrap.dedent(
            '''
            from atipkit.app import App
            app = App("good", version="1.0.0")

            @app.command()
            def hello(name: str) -> dict:
                """Say hello.

                Args:
                    name: Who to greet.
                """
                return {"hello": name}
            '''
        )
    )
    (tmp_path / "bad.py").write_text(broken_source())
    (tmp_path / "test_contract.py").write_text(
        "from atipkit.app.contract import contract_tests\n"
        "test_good = contract_tests('good:app', snapshot='contract.json')\n"
        "test_bad = contract_tests('bad:app')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
        timeout=300,
    )
    summary = done.stdout.strip().splitlines()[-1]
    assert "2 failed, 11 passed, 1 skipped" in summary, done.stdout
    assert "FAILED test_contract.py::test_bad[docstring]" in done.stdout
    assert "FAILED test_contract.py::test_bad[examples]" in done.stdout
    assert (tmp_path / "contract.json").exists()


def broken_source() -> str:
    return textwrap.dedent(
        """
        from atipkit.app import App
        app = App("bad", version="1.0.0")

        @app.command(examples=[{"args": ["--colour", "red"]}])
        def paint(size: int = 1) -> dict:
            return {"size": size}
        """
    )


def test_summaries_a_lazy_call_declares_list_without_importing_and_are_checked(
    tmp_path, monkeypatch, capsys
):
    """`Group.lazy(..., summaries=)` (decision 521): `--help` lists the declared lines
    without importing the module; the help check finds a line that is not the command's
    own, and one declared for a hidden command; a line for a name the call does not
    declare is refused at once."""
    (tmp_path / "lazyroot.py").write_text(
        textwrap.dedent(
            """
            from atipkit.app import App

            app = App("lazy", version="1", builtins=False)
            app.lazy(
                "lazycmds",
                ["greet", "secret", "team"],
                summaries={"greet": "Say hello.", "secret": "Hidden.", "team": "Teams."},
            )
            """
        )
    )
    (tmp_path / "lazycmds.py").write_text(
        textwrap.dedent(
            '''
            from lazyroot import app

            @app.command()
            def greet(name: str) -> str:
                """Greet someone by name."""
                return name

            @app.command(hidden=True)
            def secret() -> None:
                """Hidden."""

            team = app.group("team", help="Teams.")
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazyroot", raising=False)
    monkeypatch.delitem(sys.modules, "lazycmds", raising=False)
    import lazyroot

    assert lazyroot.app.main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert "greet   Say hello." in listed
    assert "team    Teams." in listed
    assert "lazycmds" not in sys.modules

    report = check(lazyroot.app, only=("help",))
    assert {f.where: f.message for f in report.findings} == {
        "lazy greet": "the summary its lazy() call declares, 'Say hello.', is not its own, "
        "'Greet someone by name.'",
        "lazy secret": "its lazy() call declares the summary 'Hidden.', and it is hidden",
    }
    from atipkit.app import DefinitionError

    with pytest.raises(DefinitionError, match="lazy other: a summary for a name"):
        lazyroot.app.lazy("lazycmds", ["more"], summaries={"other": "Other."})
