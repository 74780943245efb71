"""How to reach an MCP server: a command to start (stdio) or a URL (streamable HTTP).

An imported document records it under the tool's `x-mcp` (`to_extension`), and a call
reads it back from there (`from_extension`), so the document alone is enough to run its
commands. Environment values and HTTP header values may name environment variables as
`${NAME}`: they are written to the document as given and read from the environment only
when connecting, so a token need not be stored in the file.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

from atipkit.interop.mcp.errors import BadExtension, MissingVariable

Transport = Literal["stdio", "http"]
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_ENV_NAME = re.compile(r"^[^=\x00]+\Z")


class Endpoint(msgspec.Struct, frozen=True, kw_only=True):
    """One MCP server. Build it with `Endpoint.stdio(...)` or `Endpoint.http(...)`,
    which check what they are given (`ValueError`)."""

    transport: Transport
    command: tuple[str, ...] = ()
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = {}

    @classmethod
    def stdio(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> Endpoint:
        """A server started as `command` (never through a shell), talking on its stdin
        and stdout. It gets the MCP SDK's safe default environment (PATH, HOME, ...)
        plus `env`."""
        words = list(command)
        if not words or not all(isinstance(w, str) for w in words) or not words[0]:
            raise ValueError("the server's command must be a non-empty list of words")
        if any("\x00" in w for w in words):
            raise ValueError("the server's command contains a NUL byte")
        pairs = dict(env or {})
        for key, value in pairs.items():
            if not isinstance(key, str) or not _ENV_NAME.match(key) or not isinstance(value, str):
                raise ValueError(f"environment entry {key!r}: expected NAME=VALUE strings")
            if "\x00" in value:
                raise ValueError(f"environment entry {key!r} contains a NUL byte")
        where = None if cwd is None else os.fspath(cwd)
        return cls(transport="stdio", command=tuple(words), env=pairs, cwd=where)

    @classmethod
    def http(cls, url: str, *, headers: Mapping[str, str] | None = None) -> Endpoint:
        """A server reached over streamable HTTP at `url` (http or https), with
        `headers` on every request."""
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {url!r}")
        fields = dict(headers or {})
        for name, value in fields.items():
            if not isinstance(name, str) or not _HEADER_NAME.match(name):
                raise ValueError(f"not an HTTP header name: {name!r}")
            if not isinstance(value, str) or any(c in value for c in "\r\n\x00"):
                raise ValueError(f"header {name}: the value must be one line of text")
        return cls(transport="http", url=url, headers=fields)

    @property
    def where(self) -> str:
        """The server as people name it: its command line, or its URL."""
        return shlex.join(self.command) if self.transport == "stdio" else self.url

    # -- the x-mcp extension ------------------------------------------------------------

    def to_extension(self) -> dict[str, Any]:
        """The reach part of a tool's `x-mcp`."""
        if self.transport == "http":
            out: dict[str, Any] = {"transport": "http", "url": self.url}
            if self.headers:
                out["headers"] = dict(self.headers)
            return out
        out = {"transport": "stdio", "command": list(self.command)}
        if self.env:
            out["env"] = dict(self.env)
        if self.cwd is not None:
            out["cwd"] = self.cwd
        return out

    @classmethod
    def from_extension(cls, data: Any, path: str = "$.x-mcp") -> Endpoint:
        """The endpoint a tool's `x-mcp` names; `BadExtension` says what is wrong where."""
        if not isinstance(data, dict):
            raise BadExtension(path, "expected an object saying how to reach the server")
        transport = data.get("transport")
        try:
            if transport == "stdio":
                command = data.get("command")
                if not isinstance(command, list):
                    raise BadExtension(f"{path}.command", "expected a list of words")
                env = data.get("env", {})
                if not isinstance(env, dict):
                    raise BadExtension(f"{path}.env", "expected an object of strings")
                cwd = data.get("cwd")
                if cwd is not None and not isinstance(cwd, str):
                    raise BadExtension(f"{path}.cwd", "expected a directory path")
                return cls.stdio(command, env=env, cwd=cwd)
            if transport == "http":
                headers = data.get("headers", {})
                if not isinstance(headers, dict):
                    raise BadExtension(f"{path}.headers", "expected an object of strings")
                return cls.http(data.get("url"), headers=headers)  # type: ignore[arg-type]  # a bad url: http() refuses it
        except BadExtension:
            raise
        except ValueError as exc:  # what `stdio` and `http` refuse
            raise BadExtension(path, str(exc)) from None
        raise BadExtension(f"{path}.transport", "expected 'stdio' or 'http'")

    # -- what is sent -------------------------------------------------------------------

    def resolved_env(self) -> dict[str, str]:
        """`env` with `${NAME}` read from this process's environment."""
        return {k: self._expand(v, f"environment entry {k}") for k, v in self.env.items()}

    def resolved_headers(self) -> dict[str, str]:
        """`headers` with `${NAME}` read from this process's environment."""
        return {k: self._expand(v, f"header {k}") for k, v in self.headers.items()}

    def _expand(self, value: str, what: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in os.environ:
                raise MissingVariable(self.where, name, what)
            return os.environ[name]

        return _VARIABLE.sub(one, value)
