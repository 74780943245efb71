"""The `App` of a Python file, for serving it without glue (`atip app serve FILE.py`,
PRD §19.3 item 1).

The file is imported as a module of its own (named `__atip_app__`, so its `if
__name__ == "__main__":` block does not run, and registered in `sys.modules`, so
dataclasses and postponed annotations resolve), with its directory first on
`sys.path` while it loads, so its sibling modules import, and stdout pointed at
stderr, which keeps whatever it prints at import out of a stdio server's protocol.
The app is the one `App` among its globals, or the one `attribute` names.

A file that cannot be loaded is a `ToolError` naming it: missing (exit 10), failing
to import (65, with the exception and its line), holding no app or several (2).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from atipkit.app.errors import DataFormatError, InputError, NotFoundError, Suggestion
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.app import App

__all__ = ["MODULE_NAME", "load_app"]

MODULE_NAME = "__atip_app__"


def load_app(path: str | Path, attribute: str | None = None) -> App:
    """The `App` defined in the Python file at `path` (the one named `attribute`)."""
    from atipkit.app.app import App

    file = Path(path)
    if not file.is_file():
        raise NotFoundError(
            f"{file}: no such file",
            suggestion="Give the Python file that defines the app (App(...)).",
            details={"file": str(file)},
        )
    spec = importlib.util.spec_from_file_location(MODULE_NAME, file)
    if spec is None or spec.loader is None:
        raise InputError(
            f"{file}: not a Python file Python can import",
            code=ErrorCode.BAD_VALUE,
            details={"file": str(file)},
        )
    module = importlib.util.module_from_spec(spec)
    folder = str(file.resolve().parent)
    sys.path.insert(0, folder)
    sys.modules[MODULE_NAME] = module
    argv, sys.argv = sys.argv, [str(file)]  # an unguarded app() must not read ours
    try:
        with contextlib.redirect_stdout(sys.stderr):  # stdout may carry the protocol
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(MODULE_NAME, None)
        raise _failed(file, exc) from None
    finally:
        sys.argv = argv
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
    found = {name: value for name, value in vars(module).items() if isinstance(value, App)}
    if attribute is not None:
        if attribute not in found:
            raise InputError(
                f"{file}: no App named {attribute!r}",
                code=ErrorCode.BAD_VALUE,
                suggestion=f"Its apps: {', '.join(found) or 'none'}.",
                details={"file": str(file), "param": "app", "apps": list(found)},
            )
        return found[attribute]
    apps = {id(app): app for app in found.values()}
    if len(apps) == 1:
        return next(iter(apps.values()))
    if not apps:
        raise InputError(
            f"{file}: defines no App",
            code=ErrorCode.USAGE,
            suggestion="Define one at the top level: app = App('name', version='1.0').",
            details={"file": str(file)},
        )
    raise InputError(
        f"{file}: defines several apps ({', '.join(found)}): name one",
        code=ErrorCode.USAGE,
        suggestion=Suggestion("Say which with --app NAME.", example=f"--app {next(iter(found))}"),
        details={"file": str(file), "apps": list(found)},
    )


def _failed(file: Path, exc: BaseException) -> DataFormatError:
    """Why the file did not load: the exception, where in the file it was raised."""
    if isinstance(exc, SystemExit):
        return DataFormatError(
            f"{file}: exits when imported (status {exc.code!r})",
            suggestion="Run the app only under if __name__ == '__main__': app()",
            details={"file": str(file)},
        )
    line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if Path(frame.filename) == file or frame.filename == str(file):
            line = frame.lineno
    where = f"{file}:{line}" if line else str(file)
    return DataFormatError(
        f"{where}: the app cannot be loaded: {type(exc).__name__}: {exc}",
        suggestion="Fix the file; running it with python shows the whole traceback.",
        details={"file": str(file), "line": line, "exception": type(exc).__name__},
    )
