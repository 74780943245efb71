"""Cleaning tool output before it reaches a model (RFC 0.6 §11.3).

Secrets are replaced by a marker that names their kind, terminal escapes and control
characters are removed (a carriage-return progress line keeps its last state), and long
output keeps its head and its tail — where errors usually are — with a marker saying how
much was cut. Text that reads like instructions to a model (prompt injection: "ignore
the previous instructions", chat-template role tokens) can be marked as such, or
withheld (`instructions=`); by default it passes, as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

import msgspec

from atipkit._untrusted import clean_terminal, screen_instructions
from atipkit.bridge.secret_kinds import redact, redact_lines


class Filtered(msgspec.Struct, frozen=True):
    text: str
    redactions: int
    truncated: int  # characters cut
    flagged: bool = False  # read like instructions to a model (marked or withheld)


class ResultFilter:
    """Redact, strip and truncate tool output. `max_chars=None` never truncates.
    `instructions`: text that reads like instructions to a model passes (`"pass"`), is
    marked (`"mark"`) or withheld (`"withhold"`): `atipkit._untrusted` has the rules."""

    def __init__(
        self,
        *,
        max_chars: int | None = 50_000,
        redact: bool = True,
        instructions: Literal["pass", "mark", "withhold"] = "pass",
    ) -> None:
        self.max_chars = max_chars
        self.redact = redact
        self.instructions = instructions

    def __call__(self, text: str) -> str:
        return self.apply(text).text

    def apply(self, text: str) -> Filtered:
        text = clean_terminal(text)
        count = 0
        if self.redact:
            text, count = redact(text)
        text, flagged = screen_instructions(text, self.instructions)
        text, cut = _truncate(text, self.max_chars)
        return Filtered(text, count, cut, flagged)

    def structure(self, value: Any) -> Any:
        """A tool's structured result (an MCP tool's `structuredContent`) as `apply`
        treats text: each string in it cleaned of terminal escapes and filtered as the
        text it is, the strings read as the lines of one output (in the JSON text, a
        command's output in `{"stdout": …}` is escaped, and JSON or a key file in it
        reads as neither); then the whole filtered as the JSON text a model reads, so
        that a rule that needs a key (`"token": "…"`) sees it (should that leave the
        text unparseable, the filtered text is returned). A structure whose JSON text is
        longer than `max_chars` is left out (None): it cannot be cut and stay a value,
        and the text beside it, cut, says what it said."""
        if value is None:
            return value
        strings: list[str] = []
        _strings(value, strings)
        cleaned = [clean_terminal(text) for text in strings]
        if self.redact:
            cleaned = redact_lines(cleaned)
        if self.instructions != "pass":
            cleaned = [screen_instructions(text, self.instructions)[0] for text in cleaned]
        if cleaned != strings:
            value = _with_strings(value, iter(cleaned))
        text = json.dumps(value, ensure_ascii=False)
        if self.max_chars is not None and len(text) > self.max_chars:
            return None
        if not self.redact:
            return value
        redacted, count = redact(text)
        if not count:
            return value
        try:
            return json.loads(redacted)
        except ValueError:
            return redacted


def _strings(value: Any, into: list[str]) -> None:
    """The strings of a JSON value, keys too, in order, appended to `into`."""
    if isinstance(value, str):
        into.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                into.append(key)
            _strings(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _strings(item, into)


def _with_strings(value: Any, strings: Iterator[str]) -> Any:
    """`value` with its strings, in `_strings`' order, taken from `strings`."""
    if isinstance(value, str):
        return next(strings)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str):
                key = next(strings)
            out[key] = _with_strings(item, strings)
        return out
    if isinstance(value, list | tuple):
        return [_with_strings(item, strings) for item in value]
    return value


def _truncate(text: str, limit: int | None) -> tuple[str, int]:
    if limit is None or len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    marker = f"\n[… truncated: {cut:,} of {len(text):,} characters omitted …]\n"
    tail = limit // 5
    return text[: limit - tail] + marker + text[len(text) - tail :], cut
