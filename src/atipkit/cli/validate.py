"""`atip validate`: check ATIP documents against the schema and the semantic rules."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from atipkit._limits import MAX_DOCUMENT_BYTES
from atipkit.app import Argument, DataFormatError, InputError, Option
from atipkit.cli import app
from atipkit.cli._effects import read_only


def _text(report: dict[str, Any]) -> str:
    """One line a problem, `FILE: LOCATION: message`, and the summary when all is well
    (a failure's summary is its error message, on stderr)."""
    lines = []
    for entry in report["files"]:
        for problem in (*entry["errors"], *entry["warnings"]):
            lines.append(_line(entry["source"], problem))
    if report["ok"]:
        lines.append(report["summary"])
    return "".join(f"{line}\n" for line in lines)


def _line(source: str, problem: dict[str, Any]) -> str:
    from atipkit.problems import Problem, Severity

    return Problem(
        severity=Severity(problem["severity"]),
        code=problem["code"],
        message=problem["message"],
        location=problem["location"],
    ).format(source)


@app.command(effects=read_only(reads_files=True, stdin="optional"), text=_text)
def validate(
    files: Annotated[
        list[str],
        Argument(
            help="ATIP documents: files, directories (every *.json below them), or - for stdin."
        ),
    ],
    strict: Annotated[bool, Option(help="Fail on warnings too.")] = False,
    max_document_bytes: Annotated[
        int, Option(help="Refuse documents larger than this many bytes.", min=1)
    ] = MAX_DOCUMENT_BYTES,
) -> dict[str, Any]:
    """Validate ATIP tool metadata and shims.

    Reports every problem with its file and JSON path (`FILE: $.commands.x.options[2].flags:
    message`); warnings (such as commands without effects) fail only with --strict. An
    invalid document is a data-format error (exit 65) whose result is the full report; a
    file that cannot be read is exit 2.
    """
    from atipkit.problems import error
    from atipkit.validation import ValidationReport, validate_file

    reports: list[ValidationReport] = []
    unreadable = 0
    for path in _expand(files):
        try:
            reports.append(validate_file(path, max_bytes=max_document_bytes))
        except OSError as exc:
            unreadable += 1
            reason = exc.strerror or str(exc)
            problem = error("io.unreadable", f"cannot read: {reason}", location="")
            reports.append(ValidationReport(str(path), problems=[problem]))
    if not reports:
        raise InputError(
            "no .json files found in the given directories",
            suggestion="Name files, or directories that hold *.json documents.",
        )
    failed = [r for r in reports if not r.passed(strict=strict)]
    report: dict[str, Any] = {
        "ok": not failed and not unreadable,
        "strict": strict,
        "files": [r.to_dict() for r in reports],
        "summary": _summary(reports, failed),
    }
    if unreadable:
        raise InputError(f"{_count(unreadable, 'file')} cannot be read", result=report)
    if failed:
        raise DataFormatError(report["summary"], result=report)
    return report


def _expand(files: list[str]) -> Iterator[str]:
    """Files as given; directories replaced by their *.json files, sorted, recursively."""
    for name in files:
        if name != "-" and os.path.isdir(name):
            yield from sorted(str(p) for p in Path(name).rglob("*.json") if p.is_file())
        else:
            yield name


def _summary(reports: list[Any], failed: list[Any]) -> str:
    errors = _count(sum(len(r.errors) for r in reports), "error")
    warnings = _count(sum(len(r.warnings) for r in reports), "warning")
    files = _count(len(reports), "file")
    if not failed:
        return f"{files} valid" + (f" ({warnings})" if not warnings.startswith("0") else "")
    return f"{files}: {len(failed)} failed; {errors}, {warnings}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
