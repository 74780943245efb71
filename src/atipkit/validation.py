"""Validating ATIP documents: JSON text → version policy → schema → model → semantic checks.

`validate` never raises for a bad document: every fault, from undecodable bytes to a
duplicate flag, becomes a `Problem` in the report. Only the caller's own mistakes (a file
that cannot be opened) raise, as `OSError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import msgspec

from atipkit import _jsontext, schema
from atipkit.checks import check_tool
from atipkit.errors import DocumentError
from atipkit.model import Tool, _convert, count_commands, may_have_reserved_keys
from atipkit.problems import Problem, Severity, error
from atipkit.protocol import PROTOCOL_VERSION, declared_version, unsupported


class ValidationReport(msgspec.Struct):
    """What `validate` found in one document."""

    source: str | None
    kind: schema.Kind | None = None
    version: str | None = None
    problems: list[Problem] = msgspec.field(default_factory=list)
    tool: Tool | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    def passed(self, *, strict: bool = False) -> bool:
        return not self.problems if strict else self.ok

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "valid": self.ok,
            "kind": self.kind,
            "atip": self.version,
            "commands": None if self.tool is None else count_commands(self.tool),
            "errors": [p.to_dict() for p in self.errors],
            "warnings": [p.to_dict() for p in self.warnings],
        }


def validate(
    document: bytes | str | Mapping[str, Any],
    *,
    source: str | None = None,
) -> ValidationReport:
    """Validate one document given as JSON text or as already-decoded JSON.

    `source` names it in messages; when it is a file name of the form `<sha256>.json`,
    `binary.hash` must match it.
    """
    if isinstance(document, bytes | str):
        raw = document.encode("utf-8", "surrogatepass") if isinstance(document, str) else document
        try:
            decoded = _jsontext.decode(raw, source)
        except DocumentError as exc:
            return ValidationReport(source, problems=list(exc.problems))
        return validate_decoded(decoded, source=source, raw=raw)
    report = ValidationReport(source)
    # decoded elsewhere: held to what decoding JSON text guarantees; a Mapping that is no
    # dict as a dict, which `check_depth` walks (it would see a leaf, and pass it deep)
    if isinstance(document, Mapping) and not isinstance(document, dict):
        document = dict(document)
    try:
        _jsontext.check_depth(document, source)
    except DocumentError as exc:
        report.problems += exc.problems
        return report
    lone = _jsontext.lone_surrogate(document)
    if lone is not None:
        message = "a string holds a lone UTF-16 surrogate, which no JSON text can carry"
        report.problems.append(error("json.lone-surrogate", message, lone))
        return report
    _validate_data(document, report, lift=True)
    return report


def validate_decoded(
    data: Any, *, source: str | None = None, raw: bytes | None = None
) -> ValidationReport:
    """`validate` of what `_jsontext.decode` returned, for a caller that decoded the text
    itself to look at it first (the probe, a registry's answer): decoding bounded its
    nesting and refused lone surrogates, so it is not walked again for them. `raw`, the
    text it came from, spares the walk for reserved keys when it holds none
    (`model.may_have_reserved_keys`), as `validate` of the text does."""
    report = ValidationReport(source)
    _validate_data(data, report, lift=raw is None or may_have_reserved_keys(raw))
    return report


def validate_file(
    path: str | os.PathLike[str], *, max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES
) -> ValidationReport:
    """Validate a file (`-` for stdin). Raises `OSError` when it cannot be read at all."""
    source = "<stdin>" if str(path) == "-" else os.fspath(path)
    try:
        data = _jsontext.read_bytes(path, max_bytes=max_bytes)
    except DocumentError as exc:
        return ValidationReport(source, problems=list(exc.problems))
    return validate(data, source=source)


_IN_DOC = "$.patterns"
"""Where a list of patterns stands in the document it is validated as."""


def pattern_problems(tool: str, patterns: list[Any], *, source: str | None = None) -> list[Problem]:
    """The errors of a list of §3.9 patterns for tool `tool`, located in the list
    (`$[2].steps`), as the validator finds them in a document made of them: the patterns
    of a pattern file, or of a registry's `patterns/index.json`, are held to exactly
    what they are held to inside a tool's own metadata."""
    document = {
        "atip": {"version": PROTOCOL_VERSION},
        "name": tool,
        "version": "0",
        "description": f"patterns of {tool}",
        "patterns": patterns,
    }
    return [
        msgspec.structs.replace(p, location="$" + p.location[len(_IN_DOC) :])
        if p.location.startswith(_IN_DOC)
        else p
        for p in validate(document, source=source).errors
    ]


def _validate_data(data: Any, report: ValidationReport, *, lift: bool) -> None:
    if not isinstance(data, Mapping):
        report.problems.append(_jsontext.not_an_object(data))
        return
    data = dict(data)
    report.kind = schema.document_kind(data)
    declared = declared_version(data)
    if declared is not None:
        report.version = str(declared)
        if not declared.is_supported:
            report.problems.append(unsupported(declared))
            return
    problems = schema.check(data, report.kind)
    if declared is not None and declared.is_newer:
        problems = [_as_warning(p) if p.code == "schema.unknown-field" else p for p in problems]
    report.problems += problems
    if any(p.is_error for p in problems):
        return
    try:
        report.tool = _convert(data, report.source, lift=lift)
    except DocumentError as exc:  # the schema and the model agree, so this is a limit hit
        report.problems += exc.problems
        return
    report.problems += check_tool(report.tool, filename=report.source)


def _as_warning(problem: Problem) -> Problem:
    return Problem(
        problem.code,
        f"{problem.message} (ignored: newer protocol version)",
        problem.location,
        Severity.WARNING,
    )
