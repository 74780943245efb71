"""Cleaning tool output before it reaches a model (RFC 0.6 §11.3).

Secrets are replaced by a marker that names their kind, terminal escapes and control
characters are removed (a carriage-return progress line keeps its last state), and long
output keeps its head and its tail — where errors usually are — with a marker saying how
much was cut.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from atipkit.bridge.secret_kinds import redact

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class Filtered(msgspec.Struct, frozen=True):
    text: str
    redactions: int
    truncated: int  # characters cut


class ResultFilter:
    """Redact, strip and truncate tool output. `max_chars=None` never truncates."""

    def __init__(self, *, max_chars: int | None = 50_000, redact: bool = True) -> None:
        self.max_chars = max_chars
        self.redact = redact

    def __call__(self, text: str) -> str:
        return self.apply(text).text

    def apply(self, text: str) -> Filtered:
        text = _clean_terminal(text)
        count = 0
        if self.redact:
            text, count = redact(text)
        text, cut = _truncate(text, self.max_chars)
        return Filtered(text, count, cut)

    def structure(self, value: Any) -> Any:
        """A tool's structured result (an MCP tool's `structuredContent`) with its secrets
        redacted. It is filtered as the JSON text a model reads, so a rule that needs
        its key (`"token": "..."`) sees it; should a redaction ever leave that text
        unparseable, the filtered text itself is returned."""
        if value is None or not self.redact:
            return value
        text = json.dumps(value, ensure_ascii=False)
        cleaned, count = redact(text)
        if not count:
            return value
        try:
            return json.loads(cleaned)
        except ValueError:
            return cleaned


def _clean_terminal(text: str) -> str:
    text = _ANSI.sub("", text).replace("\r\n", "\n")
    if "\r" in text:  # progress bars: each line keeps what was drawn last
        text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CONTROL.sub("", text)


def _truncate(text: str, limit: int | None) -> tuple[str, int]:
    if limit is None or len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    marker = f"\n[… truncated: {cut:,} of {len(text):,} characters omitted …]\n"
    tail = limit // 5
    return text[: limit - tail] + marker + text[len(text) - tail :], cut
