"""`atip validate`: check ATIP documents against the schema and the semantic rules."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import click

from atipkit._jsontext import MAX_DOCUMENT_BYTES
from atipkit.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE
from atipkit.cli._effects import read_only
from atipkit.introspect.click import AtipArgument, AtipCommand
from atipkit.problems import error
from atipkit.validation import ValidationReport, validate_file


@click.command(cls=AtipCommand, effects=read_only(reads_files=True, stdin="optional"))
@click.argument(
    "files",
    cls=AtipArgument,
    nargs=-1,
    required=True,
    type=click.Path(dir_okay=True, allow_dash=True),
    help="ATIP documents: files, directories (every *.json below them), or - for stdin.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON report on stdout.")
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=MAX_DOCUMENT_BYTES,
    show_default=True,
    help="Refuse documents larger than this many bytes.",
)
@click.pass_context
def validate_command(
    ctx: click.Context, files: tuple[str, ...], as_json: bool, strict: bool, max_bytes: int
) -> None:
    """Validate ATIP tool metadata and shims.

    Prints one line per problem, `FILE: JSONPATH: message`; warnings (such as commands
    without effects) fail only with --strict. Exit status: 0 valid, 1 invalid, 2 usage
    error (a file that cannot be read).
    """
    reports: list[ValidationReport] = []
    unreadable = 0
    for path in _expand(files):
        try:
            reports.append(validate_file(path, max_bytes=max_bytes))
        except OSError as exc:
            unreadable += 1
            reason = exc.strerror or str(exc)
            problem = error("io.unreadable", f"cannot read: {reason}", location="")
            reports.append(ValidationReport(str(path), problems=[problem]))
    if not reports:
        raise click.UsageError("no .json files found in the given directories")

    failed = [r for r in reports if not r.passed(strict=strict)]
    if as_json:
        payload = {
            "ok": not failed and not unreadable,
            "strict": strict,
            "files": [r.to_dict() for r in reports],
        }
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        for report in reports:
            for problem in report.problems:
                click.echo(problem.format(report.source))
        click.echo(_summary(reports, failed), err=True)
    if unreadable:
        ctx.exit(EXIT_USAGE)
    ctx.exit(EXIT_INVALID if failed else EXIT_OK)


def _expand(files: tuple[str, ...]) -> Iterator[str]:
    """Files as given; directories replaced by their *.json files, sorted, recursively."""
    for name in files:
        if name != "-" and os.path.isdir(name):
            yield from sorted(str(p) for p in Path(name).rglob("*.json") if p.is_file())
        else:
            yield name


def _summary(reports: list[ValidationReport], failed: list[ValidationReport]) -> str:
    errors = _count(sum(len(r.errors) for r in reports), "error")
    warnings = _count(sum(len(r.warnings) for r in reports), "warning")
    files = _count(len(reports), "file")
    if not failed:
        return f"{files} valid" + (f" ({warnings})" if not warnings.startswith("0") else "")
    return f"{files}: {len(failed)} failed; {errors}, {warnings}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
