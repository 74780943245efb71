"""The tool calls an ATIP command's example lines stand for, as a manifest's examples.

ATIP examples are command lines (`gh pr create --title x`); TDP examples are inputs
(`{"title": "x"}`). A line is read by the executor's own command-line reader
(`atipkit.execute.argv.parse_argv`, the inverse of the argv `atip run` builds from a
call), as ATDF's examples are, and kept only if it is one call of this command whose
input satisfies the parameter schema: every example a manifest shows is true.
"""

from __future__ import annotations

import os
import shlex
from typing import TYPE_CHECKING, Any

from atipkit.model import Tool

if TYPE_CHECKING:
    from atipkit.bridge.flatten import Target


def example_input(
    line: str, tool: Tool, target: Target, schema: dict[str, Any]
) -> dict[str, Any] | None:
    """The tool call an ATIP example command line stands for, or None when the line is
    not a call of this command as the executor reads command lines (another command, an
    unknown flag, a value of the wrong type, not shell words) or the call does not satisfy
    the parameter schema (a required parameter missing, a value outside its enum, a
    number that JSON cannot carry): an example is given only where it is true."""
    from atipkit.execute.argv import UnknownCommandLine, parse_argv

    try:
        words = shlex.split(line)
        if not words or os.path.basename(words[0]) != tool.name:
            return None
        path, values = parse_argv(tool, words[1:])
    except (ValueError, UnknownCommandLine):
        return None
    keys = {ref: key for key, ref in target.params.items()}
    if path != target.path or not set(values) <= set(keys):
        return None
    given = {keys[ref]: value for ref, value in values.items()}
    try:
        import jsonschema_rs

        return given if jsonschema_rs.is_valid(schema, given) else None
    except (ValueError, jsonschema_rs.ValidationError):  # a schema it cannot compile
        return None
