"""Prompts: message templates an app offers a client's user (PRD §11.2, §19.3 item 2).

    @app.prompt()
    def review(title: str, days: int = 7) -> str:
        '''Ask for a review of one note.

        Args:
            title: The note to review.
            days: How far back to look.
        '''
        return f"Review the note {title!r} and what changed in the last {days} days."

`prompts/list` names each prompt with its arguments (the parameters: their help from
the docstring or `Argument(help=...)`, required when they have no default). MCP sends
every argument as a string, so each is read with the command line's own type for its
parameter (`Param.from_text`: an `int` refuses `"soon"`), and its type is said in its
description. The function returns the messages: a `str` is one user message; a list
holds `str`s (user messages) and `{"role": "user" | "assistant", "content": str}`.

A prompt nobody defined, an argument nobody declared, a required one missing or one
its type refuses is INVALID_PARAMS with the app's error as `data`; a function that
returns something else is the app's bug, INTERNAL_ERROR.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atipkit.app.errors import DefinitionError, InputError, InternalError
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.params import CommandSignature, Param

__all__ = ["Message", "PromptSpec"]

Message = tuple[str, str]
"""(role, text): `user` or `assistant`, and what they say."""
_ROLES = ("user", "assistant")
_TYPE_WORDS = {"int": "an integer", "float": "a number", "bool": "true or false"}


class PromptSpec:
    """A prompt as defined: its name, its function, and what the decorator said."""

    def __init__(
        self,
        app: App,
        name: str,
        func: Callable[..., Any],
        *,
        title: str | None,
        description: str | None,
    ) -> None:
        self.app = app
        self.name = name
        self.func = func
        self.title = title
        self._description = description
        self.where = f"{app.name} prompt {name}"

    @property
    def description(self) -> str:
        if self._description is not None:
            return self._description
        return self.doc.description or self.doc.summary

    @functools.cached_property
    def doc(self) -> Any:
        from atipkit.app.docstrings import parse

        return parse(self.func.__doc__)

    @functools.cached_property
    def signature(self) -> CommandSignature:
        """The parameters, read and checked: each one a value a string can spell."""
        from atipkit.app.params import analyze

        signature = analyze(self.func, where=self.where, doc=self.doc)
        if signature.context is not None:
            raise DefinitionError(f"{self.where}: a prompt takes no Context")
        for param in signature.params:
            param.text_type(self.where)
        return signature

    def arguments(self) -> list[dict[str, Any]]:
        """The prompt's arguments as `prompts/list` gives them (name, description,
        required), the type in words where it is not text."""
        return [
            {"name": p.name, "description": _describe(p), "required": p.required}
            for p in self.signature.params
        ]

    def render(self, arguments: dict[str, Any] | None) -> list[Message]:
        """The messages for `arguments` (MCP's strings). `InputError` for arguments the
        prompt does not take, lacks or cannot read; `InternalError` for a function that
        returns no messages."""
        given = dict(arguments or {})
        params = {p.name: p for p in self.signature.params}
        unknown = sorted(set(given) - set(params))
        if unknown:
            raise InputError(
                f"{self.where}: no argument {', '.join(map(repr, unknown))}",
                code=ErrorCode.USAGE,
                suggestion=f"It takes: {', '.join(params) or 'no arguments'}.",
                details={"param": unknown[0], "known": list(params)},
            )
        values: dict[str, Any] = {}
        for name, param in params.items():
            if name not in given:
                if param.required:
                    raise InputError(
                        f"{self.where}: argument {name!r} is required",
                        code=ErrorCode.USAGE,
                        details={"param": name},
                    )
                continue
            text = given[name]
            if not isinstance(text, str):  # MCP says strings; a careless client may not
                text = str(text).lower() if isinstance(text, bool) else str(text)
            values[name] = param.from_text(text, f"{self.where}: {name}")
        return self.messages(self.func(**values))

    def messages(self, value: Any) -> list[Message]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise self._bad(value)
        out: list[Message] = []
        for item in items:
            if isinstance(item, str):
                out.append(("user", item))
            elif (
                isinstance(item, dict)
                and set(item) == {"role", "content"}
                and item["role"] in _ROLES
                and isinstance(item["content"], str)
            ):
                out.append((item["role"], item["content"]))
            else:
                raise self._bad(item)
        return out

    def _bad(self, value: Any) -> InternalError:
        return InternalError(
            f"{self.where} returned {type(value).__name__}, not messages: a str, or a list "
            "of str and {'role': 'user' | 'assistant', 'content': str}",
            details={"returned": repr(value)[:200]},
        )


def _describe(param: Param) -> str:
    kind = param.shape.kind
    words = _TYPE_WORDS.get(kind)
    if kind == "choice":
        words = "one of " + ", ".join(param.shape.cli_choices)
    help_text = param.help or ""
    if words is None:
        return help_text
    return f"{help_text} ({words})" if help_text else words.capitalize()
