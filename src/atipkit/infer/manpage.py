"""Man pages as a source of options (issue 6, item 2).

Many tools print only a synopsis for `--help` (ssh, ps, ip) and document their options in
the man page. `man -P cat NAME` renders it as text (run through the probe's sandbox like
any tool); the OPTIONS section reads like help text, and the NAME line gives a one-line
description when the help had none.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence

from atipkit.infer.helptext import ParsedHelp, parse_help

Runner = Callable[[str, Sequence[str]], str]
_NAME_LINE = re.compile(r"NAME\s*\n\s*\S+(?:,\s*\S+)*\s+[-—–]+\s*(.+)")


def read_man_page(name: str, run: Runner) -> ParsedHelp | None:
    """The parsed man page of `name`, or None when `man` or the page is missing.
    `run(executable, args)` runs a program and returns its output."""
    man = shutil.which("man")
    if man is None:
        return None
    text = run(man, ["-P", "cat", name])
    if not text.strip() or "No manual entry" in text:
        return None
    parsed = parse_help(text, name)
    if not parsed.description:
        line = _NAME_LINE.search(text)
        parsed.description = line.group(1).strip() if line else ""
    return parsed


def merge(base: ParsedHelp, extra: ParsedHelp) -> None:
    """Options the man page adds to a short `--help`; a description if there was none."""
    known = {f for o in base.options for f in o.flags}
    for option in extra.options:
        if not known.intersection(option.flags):
            base.options.append(option)
            known.update(option.flags)
    if not base.description:
        base.description = extra.description
