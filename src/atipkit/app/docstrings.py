"""Descriptions from docstrings in the Google, NumPy and Sphinx styles (PRD §12.1).

A parameter's help can come from `Argument(help=...)`/`Option(help=...)` or from the
docstring; the marker wins. Only what the three styles mark as parameter documentation
is read; everything before it is the command's description.
"""

from __future__ import annotations

import inspect
import re
from typing import NamedTuple

__all__ = ["Docstring", "parse"]

_GOOGLE_ARGS = frozenset(
    ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments")
)
_GOOGLE_ENDS = frozenset(
    (
        *("Return", "Returns", "Yield", "Yields", "Raise", "Raises", "Example", "Examples"),
        *("Note", "Notes", "Warning", "Warnings", "See Also", "Todo", "Attributes"),
    )
)
_GOOGLE_ITEM = r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$"
_SPHINX = r"^:param\s+(?:[^:]*\s)?(\w+):\s*(.*)$"


def _heading(stripped: str, names: frozenset[str]) -> bool:
    """`Args:` and the like: a Google section heading, alone on its line. String tests,
    not patterns: every command's `--help` parses a docstring, and compiling a pattern
    costs more than the parse (decision 520)."""
    return stripped.endswith(":") and stripped[:-1] in names


def _rule(stripped: str) -> bool:
    """A NumPy section's underline: three dashes or more."""
    return len(stripped) >= 3 and not stripped.strip("-")


def _sphinx_field(stripped: str) -> bool:
    """`:param x:`, `:returns:`: a Sphinx field."""
    return stripped[:1] == ":" and (stripped[1:2].isalnum() or stripped[1:2] == "_")


class Docstring(NamedTuple):
    summary: str
    """The first paragraph, on one line."""
    description: str
    """Everything before the parameter section, paragraphs kept."""
    params: dict[str, str]


def parse(doc: str | None) -> Docstring:
    if not doc:
        return Docstring("", "", {})
    lines = inspect.cleandoc(doc).splitlines()
    body: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if _heading(stripped, _GOOGLE_ARGS):
            i = _google(lines, i + 1, params)
            continue
        if (
            stripped in ("Parameters", "Params", "Arguments", "Other Parameters")
            and i + 1 < len(lines)
            and _rule(lines[i + 1].strip())
        ):
            i = _numpy(lines, i + 2, params)
            continue
        if i + 1 < len(lines) and _rule(lines[i + 1].strip()) and stripped:
            break  # another NumPy section (Returns, Examples, ...): the description ended
        if _heading(stripped, _GOOGLE_ENDS):
            break
        if _sphinx_field(stripped):
            i = _sphinx(lines, i, params)
            continue
        body.append(line)
        i += 1
    description = "\n".join(body).strip()
    summary = " ".join(description.split("\n\n", 1)[0].split())
    return Docstring(summary=summary, description=description, params=params)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str], i: int, params: dict[str, str]) -> int:
    name: str | None = None
    base: int | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        indent = _indent(line)
        if indent == 0:
            break
        if base is None:
            base = indent
        if indent == base:
            match = re.match(_GOOGLE_ITEM, line)
            if match:
                name = match.group(1)
                params[name] = match.group(2).strip()
        elif name is not None:
            params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i


def _numpy(lines: list[str], i: int, params: dict[str, str]) -> int:
    name: str | None = None
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if i + 1 < len(lines) and stripped and _rule(lines[i + 1].strip()):
            break
        if not stripped:
            i += 1
            continue
        if _indent(line) == 0:
            name = re.split(r"\s*:\s*", stripped, maxsplit=1)[0].split(",")[0].strip()
            params.setdefault(name, "")
        elif name is not None:
            params[name] = f"{params[name]} {stripped}".strip()
        i += 1
    return i


def _sphinx(lines: list[str], i: int, params: dict[str, str]) -> int:
    match = re.match(_SPHINX, lines[i].strip())
    name = match.group(1) if match else None
    if name:
        params[name] = match.group(2).strip() if match else ""
    i += 1
    while i < len(lines) and lines[i].strip() and not _sphinx_field(lines[i].strip()):
        if name:
            params[name] = f"{params[name]} {lines[i].strip()}".strip()
        i += 1
    return i
