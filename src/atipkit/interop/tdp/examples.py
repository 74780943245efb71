"""The tool calls an ATIP command's example lines stand for, as a manifest's examples.

ATIP examples are command lines (`gh pr create --title x`); TDP examples are inputs
(`{"title": "x"}`). A line is read by the executor's own command-line reader
(`atipkit.execute.argv.parse_argv`, the inverse of the argv `atip run` builds from a
call), as ATDF's examples are, and kept only if it is one call of this command whose
input satisfies the parameter schema: every example a manifest shows is true.
"""

from __future__ import annotations

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
    from atipkit.execute.argv import example_call

    given = example_call(tool, target, line)
    if given is None:
        return None
    try:
        import jsonschema_rs

        return given if jsonschema_rs.is_valid(schema, given) else None
    except (ValueError, jsonschema_rs.ValidationError):  # a schema it cannot compile
        return None
