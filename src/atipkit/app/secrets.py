"""Secrets read from files, never from the command line, and never echoed (PRD §14.2).

    def login(token: Annotated[str, Option(secret=True)]) -> dict: ...

    $ tool login --token-file ~/.config/tool/token      # or: ... --token-file - < token

A parameter marked `secret` is an option whose flag is `--NAME-file` (unless the
`Option` names its own): its value is a path, or `-` for stdin, and the function gets
the file's text, less one trailing newline. A value on the command line would be seen by
`ps`, shell history and every log of the agent's commands; an environment variable is
inherited by every child process. Over MCP and HTTP the value itself is given (a JSON
string, `writeOnly` in the schema): no command line is involved.

Whatever the call answers — result, error message and details, warnings, diagnostics
on stderr, the audit log — has each secret value replaced by `[secret]`.
"""

from __future__ import annotations

import os
from typing import Any

import click

__all__ = ["MAX_SECRET_BYTES", "SecretFile", "withhold"]

MAX_SECRET_BYTES = 64 * 1024
"""A secret file larger than this is refused: it is not a secret, it is a mistake."""
SECRET = "[secret]"


class SecretFile(click.ParamType):
    """A path (or `-`) whose text is the value. Errors name the file, never its content."""

    name = "file"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if not isinstance(value, str):
            return value
        where = "stdin" if value == "-" else value
        try:
            if value == "-":
                import sys

                stream = sys.stdin.buffer if sys.stdin is not None else None
                if stream is None or os.isatty(stream.fileno()):
                    self.fail(
                        "'-' reads the secret from stdin, and stdin is a terminal", param, ctx
                    )
                data = stream.read(MAX_SECRET_BYTES + 1)
            else:
                with open(value, "rb") as handle:
                    data = handle.read(MAX_SECRET_BYTES + 1)
        except FileNotFoundError:
            self.fail(f"no such file: {where}", param, ctx)
        except IsADirectoryError:
            self.fail(f"{where} is a directory, not a file holding the secret", param, ctx)
        except PermissionError:
            self.fail(f"{where} cannot be read: permission denied", param, ctx)
        except OSError as exc:
            self.fail(f"{where} cannot be read: {exc.strerror or type(exc).__name__}", param, ctx)
        if len(data) > MAX_SECRET_BYTES:
            self.fail(f"{where} holds over {MAX_SECRET_BYTES} bytes: not a secret", param, ctx)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"{where} is not UTF-8 text", param, ctx)
        text = text[:-1] if text.endswith("\n") else text
        text = text[:-1] if text.endswith("\r") else text
        if not text:
            self.fail(f"{where} is empty", param, ctx)
        return text


def withhold(value: Any, secrets: list[str]) -> Any:
    """`value` (a JSON-able result, message or details) with every secret replaced by
    `[secret]`, longest first (a secret that holds another is replaced whole)."""
    if not secrets:
        return value
    ordered = sorted(set(secrets), key=len, reverse=True)
    if isinstance(value, str):
        for secret in ordered:
            value = value.replace(secret, SECRET)
        return value
    if isinstance(value, dict):
        return {withhold(k, ordered): withhold(v, ordered) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [withhold(v, ordered) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    import json

    from atipkit.app.output import encode

    try:
        plain = json.loads(encode(value))
    except TypeError:
        return value
    return withhold(plain, ordered)
