"""What an author writes inside `Annotated[...]` to say more than a type hint can.

    def find(
        pattern: Annotated[str, Argument(help="Glob pattern to match")],
        depth: Annotated[int, Option("-d", help="How deep to go", min=1, max=100)] = 10,
    ) -> list[str]: ...

`Argument` makes a parameter positional, `Option` makes it a flag; without either, a
parameter with a default is an option and one without is an argument. Constraints
(`min`, `max`, `pattern`, `exists`, ...) are checked by the parser and stated in every
schema, so an agent learns them before it calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Argument", "Option"]


@dataclass(frozen=True)
class _Marker:
    help: str | None = None
    metavar: str | None = None
    min: float | None = None
    max: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    exists: bool = False
    file_okay: bool = True
    dir_okay: bool = True
    resolve_path: bool = False
    hidden: bool = False
    envvar: str | None = None


@dataclass(frozen=True, init=False)
class Argument(_Marker):
    """A positional parameter."""

    def __init__(self, **kwargs: Any) -> None:
        for name, value in kwargs.items():
            if name not in _FIELDS:
                raise TypeError(f"Argument() got an unexpected keyword argument {name!r}")
            object.__setattr__(self, name, value)


@dataclass(frozen=True, init=False)
class Option(_Marker):
    """A flag parameter. Positional strings are its flags (`Option("-n", "--name")`);
    without them the flag is `--` plus the parameter name with `_` spelled `-`."""

    flags: tuple[str, ...] = field(default=())

    def __init__(self, *flags: str, **kwargs: Any) -> None:
        for flag in flags:
            if not isinstance(flag, str) or not flag.startswith("-") or flag in ("-", "--"):
                raise TypeError(f"Option() flags start with '-': got {flag!r}")
        object.__setattr__(self, "flags", tuple(flags))
        for name, value in kwargs.items():
            if name not in _FIELDS:
                raise TypeError(f"Option() got an unexpected keyword argument {name!r}")
            object.__setattr__(self, name, value)


_FIELDS = frozenset(_Marker.__dataclass_fields__)
