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
    from atipkit.app.annotations import Annotation as Annotation
    from atipkit.app.annotations import ClosedWorld as ClosedWorld
    from atipkit.app.annotations import Destructive as Destructive
    from atipkit.app.annotations import Idempotent as Idempotent
    from atipkit.app.annotations import OpenWorld as OpenWorld
    from atipkit.app.annotations import ReadOnly as ReadOnly
    from atipkit.app.app import App as App
    from atipkit.app.app import Group as Group
    from atipkit.app.context import Context as Context
    from atipkit.app.errors import AuthError as AuthError
    from atipkit.app.errors import ConflictError as ConflictError
    from atipkit.app.errors import DataFormatError as DataFormatError
    from atipkit.app.errors import DefinitionError as DefinitionError
    from atipkit.app.errors import DependencyError as DependencyError
    from atipkit.app.errors import ErrorCategory as ErrorCategory
    from atipkit.app.errors import ExitCode as ExitCode
    from atipkit.app.errors import HumanHandoff as HumanHandoff
    from atipkit.app.errors import InputError as InputError
    from atipkit.app.errors import InternalError as InternalError
    from atipkit.app.errors import NotFoundError as NotFoundError
    from atipkit.app.errors import PermissionDeniedError as PermissionDeniedError
    from atipkit.app.errors import StateError as StateError
    from atipkit.app.errors import Suggestion as Suggestion
    from atipkit.app.errors import TemporaryError as TemporaryError
    from atipkit.app.errors import TimeoutExpired as TimeoutExpired
    from atipkit.app.errors import ToolError as ToolError
    from atipkit.app.markers import Argument as Argument
    from atipkit.app.markers import Option as Option
    from atipkit.app.markers import StdinOr as StdinOr
    from atipkit.app.markers import StdoutOr as StdoutOr
    from atipkit.app.output import Document as Document


__getattr__, __dir__ = lazy_exports(__name__, __file__)
