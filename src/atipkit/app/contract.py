"""An app's built-in contract tests and tool versioning (PRD §16: Phase 1 item 9, Phase
3 item 2, the contract gate).

    report = app.check()                       # or check(app, snapshot="contract.json")
    assert report.ok, report.text()

    # tests/test_contract.py: one pytest test per check
    from atipkit.app.contract import contract_tests
    test_contract = contract_tests("mytool.cli:app", snapshot="tests/contract.json")

What is checked, each a `CheckFinding` named by its check:

- `docstring`: every command says what it does (a summary).
- `agent`: `--agent` is a valid ATIP document (the project's own validator, which also
  warns of every parameter that says nothing about itself).
- `schema`: every input and output schema is a valid JSON Schema (2020-12) and
  round-trips through JSON unchanged (no value JSON cannot carry).
- `examples`: every example's arguments parse (flags, values, arity), without running
  the command: an example may be destructive.
- `help`: `--help` of every command renders, and the summaries `Group.lazy` declared
  (to list commands without importing them) are the commands' own.
- `envelope`: a usage error of every command comes back as a failure envelope on stdout
  (exit 2), as every call must.
- `version` (with a `snapshot`): the app's commands against the snapshot recorded for
  the last version. A breaking change (a command or parameter gone, a parameter newly
  required, a type or its choices narrowed) needs a new major version; an addition a
  new minor one; any change a new version. A missing snapshot is written; an
  `update=True` run writes the new one once the version says what changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from atipkit.app.app import App

__all__ = ["CHECKS", "CheckFinding", "ContractReport", "check", "compare", "contract_tests"]

CHECKS = ("docstring", "agent", "schema", "examples", "help", "envelope", "version")


class CheckFinding(NamedTuple):
    check: str
    where: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.severity}: [{self.check}] {self.where}: {self.message}"


class ContractReport(NamedTuple):
    app: str
    version: str
    findings: list[CheckFinding]

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def of(self, name: str) -> list[CheckFinding]:
        return [f for f in self.findings if f.check == name]

    def text(self) -> str:
        if not self.findings:
            return f"{self.app} {self.version}: every contract check passed"
        return "\n".join(str(f) for f in self.findings)


def check(
    app: App,
    *,
    snapshot: str | Path | None = None,
    update: bool = False,
    only: tuple[str, ...] = CHECKS,
) -> ContractReport:
    """Run the contract checks named in `only` on `app`."""
    findings: list[CheckFinding] = []
    for name in only:
        if name not in CHECKS:
            raise ValueError(f"no contract check {name!r}; the checks: {', '.join(CHECKS)}")
        if name == "version":
            if snapshot is not None:
                findings += _version(app, Path(snapshot), update=update)
            continue
        findings += _CHECKS[name](app)
    return ContractReport(app.name, app.version, findings)


def _docstring(app: App) -> list[CheckFinding]:
    """A command without a summary. (A parameter without a description is the `agent`
    check's warning: the ATIP validator says so of every document.)"""
    return [
        CheckFinding("docstring", spec.display_name, "no docstring or help=: what does it do?")
        for spec in app.walk()
        if not spec.summary
    ]


def _agent(app: App) -> list[CheckFinding]:
    from atipkit.model import dumps
    from atipkit.validation import validate

    report = validate(dumps(app.tool()), source=f"{app.name} --agent")
    return [CheckFinding("agent", app.name, str(p.message)) for p in report.errors] + [
        CheckFinding("agent", app.name, str(p.message), "warning") for p in report.warnings
    ]


def _schema(app: App) -> list[CheckFinding]:
    import jsonschema_rs

    from atipkit.app.schema import command_schema

    meta = getattr(jsonschema_rs, "meta", None)
    out = []
    for spec in app.walk():
        described = command_schema(spec)
        for key in ("input_schema", "output_schema"):
            schema = described.get(key)
            if schema is None:
                continue
            where = f"{spec.display_name} ({key})"
            text = json.dumps(schema, sort_keys=True)
            if json.loads(text) != schema:
                out.append(CheckFinding("schema", where, "does not round-trip through JSON"))
            if meta is not None and not meta.is_valid(schema):
                out.append(CheckFinding("schema", where, "is not a valid JSON Schema"))
    return out


def _examples(app: App) -> list[CheckFinding]:
    import click

    out = []
    for spec in app.walk():
        for example in spec.examples:
            if isinstance(example, str):
                import shlex

                words = shlex.split(example)[len(app.name.split()) + len(spec.path) :]
            else:
                words = [str(w) for w in example.get("args", [])]
            try:
                spec.click_command.make_context(spec.name, list(words))
            except click.exceptions.Exit:
                continue  # --help and friends: an answer, not a failure
            except click.ClickException as exc:
                out.append(
                    CheckFinding(
                        "examples", f"{spec.display_name} {' '.join(words)}", exc.format_message()
                    )
                )
    return out


def _help(app: App) -> list[CheckFinding]:
    import click

    out = []
    for spec in app.walk():
        try:
            with click.Context(spec.click_command, info_name=spec.name) as ctx:
                spec.click_command.get_help(ctx)
        except Exception as exc:  # a help text that cannot render is the finding
            out.append(CheckFinding("help", spec.display_name, f"{type(exc).__name__}: {exc}"))
    for path, declared, own in app.declared_summaries():
        if declared != own:
            where = " ".join((app.name, *path))
            message = (
                f"the summary its lazy() call declares, {declared!r}, is not its own, {own!r}"
                if own
                else f"its lazy() call declares the summary {declared!r}, and it is hidden"
            )
            out.append(CheckFinding("help", where, message))
    return out


def _envelope(app: App) -> list[CheckFinding]:
    import contextlib
    import io

    out = []
    bogus = "--no-such-flag-for-the-contract"
    for spec in app.walk():
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = app.main([*spec.path, bogus, "--json"])
        lines = stdout.getvalue().splitlines()
        try:
            envelope = json.loads(lines[0]) if len(lines) == 1 else None
        except ValueError:
            envelope = None
        if code != 2 or not isinstance(envelope, dict) or envelope.get("ok") is not False:
            out.append(
                CheckFinding(
                    "envelope",
                    spec.display_name,
                    f"a usage error gave exit {code} and {stdout.getvalue()[:200]!r}, not "
                    "one failure envelope and exit 2",
                )
            )
    return out


_CHECKS: dict[str, Callable[[App], list[CheckFinding]]] = {
    "docstring": _docstring,
    "agent": _agent,
    "schema": _schema,
    "examples": _examples,
    "help": _help,
    "envelope": _envelope,
}


# Versioning ------------------------------------------------------------------------------


def surface(app: App) -> dict[str, Any]:
    """What callers depend on: each command's input schema, and the app's version."""
    from atipkit.app.schema import input_schema

    return {
        "app": app.name,
        "version": app.version,
        "commands": {" ".join(s.path): input_schema(s) for s in app.walk()},
    }


def compare(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The breaking changes and the additions from surface `old` to `new`."""
    breaking: list[str] = []
    added: list[str] = []
    before, after = old.get("commands", {}), new.get("commands", {})
    for name in before:
        if name not in after:
            breaking.append(f"command {name!r} removed")
    for name, schema in after.items():
        if name not in before:
            added.append(f"command {name!r} added")
            continue
        was = before[name]
        props, old_props = schema.get("properties", {}), was.get("properties", {})
        required, old_required = set(schema.get("required", [])), set(was.get("required", []))
        for param in old_props:
            if param not in props:
                breaking.append(f"{name}: parameter {param!r} removed")
        for param, prop in props.items():
            if param not in old_props:
                (breaking if param in required else added).append(
                    f"{name}: parameter {param!r} added"
                    + (" as required" if param in required else "")
                )
                continue
            if param in required and param not in old_required:
                breaking.append(f"{name}: parameter {param!r} is now required")
            before_prop = old_props[param]
            if prop.get("type") != before_prop.get("type"):
                breaking.append(f"{name}: parameter {param!r} changed type")
            gone = set(map(json.dumps, before_prop.get("enum", []))) - set(
                map(json.dumps, prop.get("enum", before_prop.get("enum", [])))
            )
            if gone:
                breaking.append(f"{name}: parameter {param!r} lost choices {sorted(gone)}")
    return breaking, added


def _semver(version: str) -> tuple[int, int, int] | None:
    import re

    found = re.match(r"^v?(\d+)\.(\d+)(?:\.(\d+))?", version)
    if found is None:
        return None
    return int(found[1]), int(found[2]), int(found[3] or 0)


def _version(app: App, path: Path, *, update: bool) -> list[CheckFinding]:
    current = surface(app)
    if not path.exists():
        _write(path, current)
        return [CheckFinding("version", str(path), "no snapshot yet: written", "warning")]
    try:
        recorded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [CheckFinding("version", str(path), f"the snapshot cannot be read: {exc}")]
    breaking, added = compare(recorded, current)
    changed = breaking or added or recorded.get("commands") != current["commands"]
    if not changed:
        return []
    old, new = _semver(str(recorded.get("version", ""))), _semver(app.version)
    where = f"{app.name} {recorded.get('version')} -> {app.version}"
    if old is None or new is None:
        return [CheckFinding("version", where, "not MAJOR.MINOR.PATCH: cannot judge the change")]
    findings = []
    if breaking and new[0] <= old[0]:
        findings.append(
            CheckFinding(
                "version", where, "breaking, needs a new major version: " + "; ".join(breaking)
            )
        )
    elif added and new[:2] <= old[:2] and not breaking:
        findings.append(
            CheckFinding(
                "version", where, "additions need a new minor version: " + "; ".join(added)
            )
        )
    elif new <= old:
        findings.append(CheckFinding("version", where, "the commands changed; the version did not"))
    if not findings and update:
        _write(path, current)
    return findings


def _write(path: Path, surface: dict[str, Any]) -> None:
    from atipkit._atomic import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(surface, indent=2, sort_keys=True) + "\n").encode())


# pytest ----------------------------------------------------------------------------------


def contract_tests(
    target: str | App, *, snapshot: str | Path | None = None
) -> Callable[[str], None]:
    """A pytest test function, parametrized with one case per check, for the app
    `target` (an `App`, or `"module:attribute"`, imported when the test runs)."""
    import pytest

    def resolve() -> App:
        if not isinstance(target, str):
            return target
        import importlib

        from atipkit.app.app import App

        module, _, attribute = target.partition(":")
        found = getattr(importlib.import_module(module), attribute or "app")
        if not isinstance(found, App):
            raise TypeError(f"{target} is a {type(found).__name__}, not an atipkit.app.App")
        return found

    @pytest.mark.parametrize("name", CHECKS)
    def test_contract(name: str) -> None:
        if name == "version" and snapshot is None:
            pytest.skip("no snapshot= given: the version is not checked")
        report = check(resolve(), snapshot=snapshot, only=(name,))
        assert report.ok, report.text()

    return test_contract
