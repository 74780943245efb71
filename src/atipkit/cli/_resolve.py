"""Resolving a tool named on atip's command line, its failures as the errors that mean
them: one place, so a tool that cannot be found or described fails with the same error
(and code) in `show`, `refresh`, `compile`, `run` and `verify`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from atipkit.app import (
    AuthError,
    DataFormatError,
    InputError,
    NotFoundError,
    Suggestion,
    ToolError,
)
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app import Context
    from atipkit.errors import DocumentError
    from atipkit.model import Tool
    from atipkit.resolve import Resolved


def bad_registry(exc: Exception) -> DataFormatError:
    return DataFormatError(
        str(exc),  # names the file
        code=ErrorCode.BAD_REGISTRY,
        suggestion="Fix or move the registry file aside; `atip scan` writes a new one.",
    )


def resolve(
    tool: str,
    ctx: Context | None = None,
    *,
    no_metadata: Suggestion | None = None,
    **kwargs: Any,
) -> Resolved:
    """`resolve_tool`, its failures as the `atipkit.app` errors that mean them
    (`resolution_error`). A registries.json that cannot be used does not stop local
    discovery (the library's choice); it is a warning, and so is metadata that claims
    another tool's name (the tool keeps its own: `atipkit.naming`)."""
    from atipkit.resolve import resolve_tool

    try:
        resolved = resolve_tool(tool, **kwargs)
    except Exception as exc:
        error = resolution_error(exc, tool, no_metadata=no_metadata)
        if error is None:
            raise
        raise error from None
    problem = resolved.origins.get("registries")
    if problem and ctx is not None:
        ctx.warn(f"remote registries were not asked: {problem}")
    if resolved.renamed is not None and not resolved.renamed.alias and ctx is not None:
        ctx.warn(resolved.renamed.message)
    return resolved


def resolution_error(
    exc: Exception, tool: str, *, no_metadata: Suggestion | None = None
) -> ToolError | None:
    """The error that resolving `tool` failing with `exc` means, or None for an exception
    that is not a resolution failure. `no_metadata` is the command's own advice for a tool
    that nothing describes (by default: infer it, as `atip show --infer` does)."""
    import json

    from atipkit.errors import DocumentError
    from atipkit.registry.local import RegistryError
    from atipkit.resolve import NoMetadata, ToolNotFound

    if isinstance(exc, KeyError):  # a command named in --commands that the tool does not have
        return InputError(
            f"--commands: {exc.args[0]}",
            code=ErrorCode.BAD_VALUE,
            details={"param": "commands"},
            suggestion=f"Run `atip show {tool} --depth 1` to see its commands.",
        )
    if isinstance(exc, ToolNotFound):
        return NotFoundError(
            str(exc),
            code=ErrorCode.NOT_FOUND,
            details={"tool": tool},
            suggestion="Check the name, give the path to the executable, or run "
            "`atip scan --path DIR` to record tools in a directory that is not on PATH.",
        )
    if isinstance(exc, NoMetadata):
        details: dict[str, Any] = {"tool": tool}
        if exc.failure is not None:
            details["probe"] = exc.failure.kind
        return NotFoundError(
            str(exc),
            code=ErrorCode.NO_METADATA,
            details=details,
            suggestion=no_metadata
            or Suggestion(
                "Infer metadata from the tool's help text (low trust).",
                example=f"atip show {tool} --infer",
            ),
        )
    if isinstance(exc, RegistryError):
        return bad_registry(exc)
    if isinstance(exc, (DocumentError, json.JSONDecodeError)):
        # the tool's own metadata was checked when read: what breaks it is a user layer
        from atipkit.registry.local import LocalRegistry

        overrides = LocalRegistry().override_path("sha256:" + "0" * 64).parent
        return DataFormatError(
            f"{tool}: an override or pattern file makes its metadata invalid: {exc}",
            code=ErrorCode.BAD_REGISTRY,
            details={"tool": tool, "overrides": str(overrides)},
            suggestion=f"Fix the tool's override in {overrides} (a JSON merge patch) or "
            "its pattern files.",
        )
    return None


def document(name: str, ctx: Context) -> Tool:
    """The ATIP document a command names: a file, `-` for stdin, or else a tool name to
    resolve (`read_document`, `resolve`)."""
    import os

    if name != "-" and not os.path.exists(name):
        return resolve(name, ctx).tool
    return read_document(name)


def read_document(path: str | os.PathLike[str], option: str | None = None) -> Tool:
    """The ATIP document in file `path` (`-`: stdin), or the error that means it: those of
    `file_error` (10, 30, 2), and 65 for a document that is not valid (every problem in
    the details). `option` is the flag that named the file, for the messages."""
    from atipkit._jsontext import MAX_DOCUMENT_BYTES
    from atipkit.errors import DocumentError
    from atipkit.model import load

    shown = "<stdin>" if str(path) == "-" else str(path)
    named = f"{option} {shown}" if option else shown
    try:
        return load(path, max_bytes=MAX_DOCUMENT_BYTES)
    except OSError as exc:
        raise file_error(exc, str(path), "Name an ATIP document (a JSON file).", option) from None
    except DocumentError as exc:
        raise document_error(
            exc,
            named,
            path,
            Suggestion(
                "Fix the document; `atip validate` lists every problem.",
                example=f"atip validate {path} --text",
            ),
        ) from None


def document_error(
    exc: DocumentError, named: str, path: str | os.PathLike[str], suggestion: Suggestion
) -> DataFormatError:
    """A file named on atip's command line (`named`: the flag and the file) that is not
    what it should be: the first problem in the message, with how many more, every
    problem in the details (exit 65)."""
    problems = [p.to_dict() for p in exc.problems]
    more = len(problems) - 1
    message = str(exc).removeprefix(f"{exc.source}: ")
    return DataFormatError(
        f"{named}: {message}"
        + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""),
        details={"file": str(path), "problems": problems},
        suggestion=suggestion,
    )


def file_error(exc: OSError, path: str, suggestion: str, option: str | None = None) -> ToolError:
    """The error that reading an input file named on atip's command line (`-`: stdin)
    failing with `exc` means: no such file 10 (with `suggestion`), no permission 30, any
    other reason (a directory, an I/O error) 2. One mapping, so every command that reads a
    file fails alike; `option` is the flag that named it, for the message."""
    shown = "<stdin>" if path == "-" else path
    shown = f"{option} {shown}" if option else shown
    where = {"file": path}
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(f"{shown}: no such file", details=where, suggestion=suggestion)
    reason = f"{shown}: cannot read: {exc.strerror or exc}"
    if isinstance(exc, PermissionError):
        return AuthError(reason, details=where)
    return InputError(reason, details=where)
