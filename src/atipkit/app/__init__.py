"""atipkit.app: typed Python functions become an agent-native command-line tool.

    from typing import Annotated
    from atipkit.app import App, Argument, ClosedWorld, ReadOnly

    app = App("notes", version="1.0", description="Keep short notes")

    @app.command(annotations=ReadOnly | ClosedWorld)
    def show(name: Annotated[str, Argument(help="The note's name")]) -> dict:
        '''Show one note.'''
        return {"name": name, "text": "..."}

    if __name__ == "__main__":
        app()

One definition gives a CLI with the global flags of PRD §8.1, the JSON envelope,
structured errors and exit codes, `--agent` (ATIP 0.6), `--schema`, an MCP server, an
HTTP API with OpenAPI, and SKILL.md, llms.txt and a man page.

Names are loaded on first use, so importing this package costs almost nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atipkit._exports import lazy_exports

if TYPE_CHECKING:
    from atipkit.app.annotations import (
        Annotation,
        ClosedWorld,
        Destructive,
        Idempotent,
        OpenWorld,
        ReadOnly,
    )
    from atipkit.app.app import App, Group
    from atipkit.app.context import Context
    from atipkit.app.errors import (
        AuthError,
        ConflictError,
        DataFormatError,
        DefinitionError,
        DependencyError,
        ErrorCategory,
        ExitCode,
        HumanHandoff,
        InputError,
        InternalError,
        NotFoundError,
        PermissionDeniedError,
        StateError,
        Suggestion,
        TemporaryError,
        TimeoutExpired,
        ToolError,
    )
    from atipkit.app.inputs import StdinOr, StdoutOr
    from atipkit.app.markers import Argument, Option
    from atipkit.app.output import Document

_EXPORTS = {
    "atipkit.app.annotations": [
        "Annotation",
        "ClosedWorld",
        "Destructive",
        "Idempotent",
        "OpenWorld",
        "ReadOnly",
    ],
    "atipkit.app.app": ["App", "Group"],
    "atipkit.app.context": ["Context"],
    "atipkit.app.errors": [
        "AuthError",
        "DefinitionError",
        "ConflictError",
        "DataFormatError",
        "DependencyError",
        "ErrorCategory",
        "ExitCode",
        "HumanHandoff",
        "InputError",
        "InternalError",
        "NotFoundError",
        "PermissionDeniedError",
        "StateError",
        "Suggestion",
        "TemporaryError",
        "TimeoutExpired",
        "ToolError",
    ],
    "atipkit.app.inputs": ["StdinOr", "StdoutOr"],
    "atipkit.app.markers": ["Argument", "Option"],
    "atipkit.app.output": ["Document"],
}
__all__ = [
    "Annotation",
    "App",
    "Argument",
    "AuthError",
    "ClosedWorld",
    "ConflictError",
    "Context",
    "DataFormatError",
    "DefinitionError",
    "DependencyError",
    "Destructive",
    "Document",
    "ErrorCategory",
    "ExitCode",
    "Group",
    "HumanHandoff",
    "Idempotent",
    "InputError",
    "InternalError",
    "NotFoundError",
    "OpenWorld",
    "Option",
    "PermissionDeniedError",
    "ReadOnly",
    "StateError",
    "StdinOr",
    "StdoutOr",
    "Suggestion",
    "TemporaryError",
    "TimeoutExpired",
    "ToolError",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
