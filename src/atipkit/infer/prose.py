"""What a page says a command is *for*: the opening prose of its DESCRIPTION.

The NAME line is a few words ("change file mode bits"); the paragraphs that open the
DESCRIPTION say the same in the words people search with ("changes the file mode bits
of each given file … recursively"). Inference records them (`x-atipkit.prose`, decision
290) so the search index, which reads the registry only, has them; no model is ever
sent them (`bridge` compiles no extension).

Prose is the text at the section's base indent, paragraph by paragraph, up to
`MAX_PROSE` characters: a tagged paragraph (an option's `-R, --recursive`) or a deeper
block (an example, a listing) is not prose, and the first tag ends the opening (GNU
pages list their options inside DESCRIPTION). Reading stops at the cap, so a page of a
million paragraphs costs what its first ones do.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_PROSE = 1500
"""Characters of prose kept per command (decision 290): two or three paragraphs."""

_SECTIONS = ("DESCRIPTION", "OVERVIEW")


def is_prose_section(title: str) -> bool:
    """Whether a page section's heading is the one that says what the command is for."""
    return title.strip().upper() in _SECTIONS


def opening(lines: Iterable[tuple[int, str]], limit: int = MAX_PROSE) -> str:
    """The opening paragraphs of a section given as (indent, text) lines ("" for a blank
    line), joined into one line each, at most `limit` characters (cut at a word)."""
    base: int | None = None
    words: list[str] = []
    size = -1  # the space before the first word is not there
    for indent, text in lines:
        if not text:
            continue
        if base is None:
            base = indent
        if indent > base:
            continue  # an example, a listing, a tag's description
        if indent < base or text.startswith(("-", "+")) or _is_tag(text):
            break
        room = limit - size - 1
        if len(text) <= room:
            words += text.split()
            size += len(text) + 1
            continue
        head = text[: room + 1]  # a line past the cap is split no further than that
        kept = head.split()
        if kept and not head[-1].isspace():
            kept.pop()  # the last word may go on past the cap: never a cut word
        return " ".join([*words, *kept])
    return " ".join(words)


def _is_tag(text: str) -> bool:
    """A line at the base indent that is a tag with its description beside it after a
    gap (`list    show the units`), not running prose (rendered left-adjusted: prose
    has no runs of spaces)."""
    return "   " in text and not text.endswith((".", ","))
