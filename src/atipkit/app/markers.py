"""What an author writes inside `Annotated[...]` to say more than a type hint can.

    def find(
        pattern: Annotated[str, Argument(help="Glob pattern to match")],
        depth: Annotated[int, Option("-d", help="How deep to go", min=1, max=100)] = 10,
    ) -> list[str]: ...

`Argument` makes a parameter positional, `Option` makes it a flag; without either, a
parameter with a default is an option and one without is an argument. `StdinOr[T]` and
`StdoutOr[Path]` mark a parameter that takes a file, a URL or `-` (read by `inputs` when
the command runs). Constraints
(`min`, `max`, `pattern`, `exists`, ...) are checked by the parser and stated in every
schema, so an agent learns them before it calls.

Plain classes, not dataclasses: they are created when every app's module is imported,
where a dataclass costs a millisecond each (bench/app_startup.py). The classes are
`ArgumentMarker` and `OptionMarker`, so that code which also handles an ATIP document's
`atipkit.Argument`/`Option` (and Click's) says which it means; authors write `Argument`
and `Option`, the names every example uses, and messages and reprs say those.
"""

from __future__ import annotations

from typing import Annotated, Any, NamedTuple, TypeVar

__all__ = [
    "Argument",
    "ArgumentMarker",
    "Option",
    "OptionMarker",
    "StdinOr",
    "StdinSpec",
    "StdoutOr",
]

_DEFAULTS: dict[str, Any] = {
    "help": None,
    "metavar": None,
    "min": None,
    "max": None,
    "min_length": None,
    "max_length": None,
    "pattern": None,
    "exists": False,
    "file_okay": True,
    "dir_okay": True,
    "resolve_path": False,
    "hidden": False,
    "envvar": None,
    "secret": False,
}


class _Marker:
    __slots__ = (*_DEFAULTS, "flags")

    _written = "_Marker"
    """The name authors write, for messages and reprs."""

    help: str | None
    metavar: str | None
    min: float | None
    max: float | None
    min_length: int | None
    max_length: int | None
    pattern: str | None
    exists: bool
    file_okay: bool
    dir_okay: bool
    resolve_path: bool
    hidden: bool
    envvar: str | None
    secret: bool
    """Read from a file (`--NAME-file PATH`, `-` for stdin), never from the command line,
    and never echoed (`atipkit.app.secrets`)."""
    flags: tuple[str, ...]

    def __init__(self, flags: tuple[str, ...] = (), **settings: Any) -> None:
        for name in settings:
            if name not in _DEFAULTS:
                raise TypeError(f"{self._written}() got an unexpected keyword argument {name!r}")
        for name, default in _DEFAULTS.items():
            object.__setattr__(self, name, settings.get(name, default))
        object.__setattr__(self, "flags", flags)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self._written} is immutable")

    def _settings(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in _DEFAULTS if getattr(self, n) != _DEFAULTS[n]}

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and self.flags == other.flags
            and self._settings() == other._settings()
        )

    def __hash__(self) -> int:
        return hash((type(self), self.flags, tuple(sorted(self._settings().items()))))

    def __repr__(self) -> str:
        args = [repr(f) for f in self.flags]
        args += [f"{k}={v!r}" for k, v in self._settings().items()]
        return f"{self._written}({', '.join(args)})"


class ArgumentMarker(_Marker):
    """A positional parameter."""

    __slots__ = ()
    _written = "Argument"

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)


class OptionMarker(_Marker):
    """A flag parameter. Positional strings are its flags (`Option("-n", "--name")`);
    without them the flag is `--` plus the parameter name with `_` spelled `-`."""

    __slots__ = ()
    _written = "Option"

    def __init__(self, *flags: str, **settings: Any) -> None:
        for flag in flags:
            if not isinstance(flag, str) or not flag.startswith("-") or flag in ("-", "--"):
                raise TypeError(f"Option() flags start with '-': got {flag!r}")
        super().__init__(tuple(flags), **settings)


Argument = ArgumentMarker
"""`Annotated[T, Argument(...)]`: the parameter is positional."""
Option = OptionMarker
"""`Annotated[T, Option("-n", ...)]`: the parameter is a flag."""


T = TypeVar("T")


class _Stdin:
    """The marker `StdinOr[T]` puts in `Annotated`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "StdinOr"


StdinOr = Annotated[T, _Stdin()]


class _Stdout:
    """The marker `StdoutOr[Path]` puts in `Annotated`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "StdoutOr"


StdoutOr = Annotated[T, _Stdout()]
"""An output destination that takes `-` for the result (PRD §8.3): the function gets a
`Path` either way, and writes to it; for `-` it is a temporary file whose content, once
the function returns, is the call's result (verbatim on stdout for people and pipes with
`--plain`, as text in the envelope), the function's return value being then unused."""


class StdinSpec(NamedTuple):
    """How to turn the bytes read into the value the function receives."""

    want: str  # "text" | "bytes" | "lines" | "json" | "path"


def is_stdin_marker(extra: Any) -> bool:
    return isinstance(extra, _Stdin)


def is_stdout_marker(extra: Any) -> bool:
    return isinstance(extra, _Stdout)
