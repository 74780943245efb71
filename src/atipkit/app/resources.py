"""Resources: what an app lets a client read, by URI (PRD §11.2, §19.3 item 2).

    @app.resource("notes://index", mime_type="application/json")
    def index() -> list[str]:
        '''The titles of every note.'''
        return sorted(NOTES)

    @app.resource("notes://note/{title}")
    def note(title: str) -> str:
        '''One note's body.'''
        return NOTES[title]

A resource is a read-only function with a URI: a fixed URI is listed by
`resources/list`, one with `{variables}` (RFC 6570) is a template, listed by
`resources/templates/list`, whose variables are the function's parameters, each read
from the URI's text with the command line's own types (`Param.from_text`). What the
function returns is the content: `str` is text (`text/plain` unless the decorator says
otherwise), `bytes` a blob, anything else JSON, encoded as the envelope's `result` is.

Resources are not commands: no CLI command, no tool, no envelope. A failure is the
protocol's error: a URI nothing serves, a variable its parameter refuses or a
`NotFoundError` of the function is INVALID_PARAMS (-32602, the SDK's answer for a
missing resource, SEP-2164), with the app's error as `data`; a bug is INTERNAL_ERROR.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atipkit.app.errors import DefinitionError

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.params import CommandSignature

__all__ = ["Content", "ResourceSpec", "variables_of"]

_VARIABLE = re.compile(r"\{[+#./;?&]?([^}]*)\}")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def variables_of(uri: str) -> list[str]:
    """The variable names of a URI template (`{title}`, `{+path}`, `{?q,n}`)."""
    return [
        name.rstrip("*").split(":")[0]
        for group in _VARIABLE.findall(uri)
        for name in group.split(",")
    ]


class Content:
    """What a read returns: the URI read, its media type, and text or bytes."""

    __slots__ = ("data", "mime_type", "uri")

    def __init__(self, uri: str, mime_type: str, data: str | bytes) -> None:
        self.uri = uri
        self.mime_type = mime_type
        self.data = data


class ResourceSpec:
    """A resource as defined: its URI (or template), names, and the function."""

    def __init__(
        self,
        app: App,
        uri: str,
        func: Callable[..., Any],
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        mime_type: str | None,
    ) -> None:
        import inspect

        where = f"{app.name} resource {uri}"
        if not _SCHEME.match(uri):
            raise DefinitionError(f"{where}: a URI starts with a scheme (notes://...)")
        variables = variables_of(uri)
        params = list(inspect.signature(func).parameters)
        if sorted(variables) != sorted(params):
            raise DefinitionError(
                f"{where}: the URI's variables ({', '.join(variables) or 'none'}) must be the "
                f"parameters of {func.__name__} ({', '.join(params) or 'none'})"
            )
        self.app = app
        self.uri = uri
        self.func = func
        self.name = name or func.__name__
        self.title = title
        self._description = description
        self.mime_type = mime_type
        self.where = where

    @property
    def is_template(self) -> bool:
        return bool(_VARIABLE.search(self.uri))

    @property
    def description(self) -> str:
        from atipkit.app.docstrings import parse

        if self._description is not None:
            return self._description
        doc = parse(self.func.__doc__)
        return doc.description or doc.summary

    @functools.cached_property
    def signature(self) -> CommandSignature:
        """The parameters, read and checked: each one a value a URI's text can spell."""
        from atipkit.app.docstrings import parse
        from atipkit.app.params import analyze

        signature = analyze(self.func, where=self.where, doc=parse(self.func.__doc__))
        if signature.context is not None:
            raise DefinitionError(f"{self.where}: a resource takes no Context")
        for param in signature.params:
            param.text_type(self.where)  # refuses what text cannot spell
        return signature

    @functools.cached_property
    def template(self) -> Any:
        """The SDK's RFC 6570 template, which matches a URI to its variables."""
        from mcp.shared.uri_template import UriTemplate

        return UriTemplate.parse(self.uri)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of `uri` if it is one of this resource's, else None."""
        if not self.is_template:
            return {} if uri == self.uri else None
        found = self.template.match(uri)
        if found is None or any(not isinstance(v, str) for v in found.values()):
            return None
        return found

    def read(self, uri: str, variables: dict[str, str]) -> Content:
        """Call the function for `uri` (whose `variables` `match` found). Raises the
        app's `ToolError`s: `InputError` for a variable its parameter refuses."""
        values = {
            p.name: p.from_text(variables[p.name], f"{uri}: {p.name}")
            for p in self.signature.params
        }
        return self.content(uri, self.func(**values))

    def content(self, uri: str, value: Any) -> Content:
        from atipkit.app.output import Document, encode

        if isinstance(value, Document):
            return Content(uri, self.mime_type or value.media_type, value.content)
        if isinstance(value, str):
            return Content(uri, self.mime_type or "text/plain", value)
        if isinstance(value, bytes | bytearray):
            return Content(uri, self.mime_type or "application/octet-stream", bytes(value))
        return Content(uri, self.mime_type or "application/json", encode(value).decode())
