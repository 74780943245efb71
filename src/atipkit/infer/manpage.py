"""Man pages as a source of options (issue 6, item 2).

Many tools print only a synopsis for `--help` (ssh, ps, ip) and document their options in
the man page. `man -P cat NAME` renders it as text (run through the probe's sandbox like
any tool); the OPTIONS section reads like help text, and the NAME line gives a one-line
description when the help had none. A page that is a file (the crawler reads the one in
the package it crawled) is rendered with `man -l`.

Pages written in Markdown and converted (ronn, pandoc) list options as bullets, the
description a paragraph below (`•   --slurp/-s:`); they are rewritten into the help-text
layout first. An option the help already has gains the page's other spellings of it
(`-s` becomes `-s, --slurp`).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Sequence

from atipkit.infer.helptext import ParsedHelp, parse_help

Runner = Callable[[str, Sequence[str]], str]
_NAME_LINE = re.compile(r"NAME\s*\n\s*\S+(?:,\s*\S+)*\s+[-—–]+\s*(.+)")
_BULLET_OPTION = re.compile(r"^(?P<indent>\s+)[•○◦·*]\s+(?P<spec>-\S.*?):?\s*$")
_ALTERNATIVES = re.compile(r"\s*/\s*(?=-)|\s+and\s+(?=-)")


def read_man_page(name: str, run: Runner, *, file: str | None = None) -> ParsedHelp | None:
    """The parsed man page of `name` (or the page in `file`), or None when `man` or the
    page is missing. `run(executable, args)` runs a program and returns its output."""
    man = shutil.which("man")
    if man is None:
        return None
    args = ["-l", "-P", "cat", os.path.abspath(file)] if file else ["-P", "cat", name]
    text = run(man, args)  # the run's directory is the sandbox's, hence the absolute path
    if not text.strip() or "No manual entry" in text:
        return None
    parsed = parse_help(_unbullet(text), name)
    if not parsed.description:
        line = _NAME_LINE.search(text)
        parsed.description = line.group(1).strip() if line else ""
    return parsed


def _unbullet(text: str) -> str:
    """`•   --slurp/-s:` + blank + indented paragraph → `--slurp, -s  paragraph`."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        match = _BULLET_OPTION.match(lines[index])
        index += 1
        if match is None:
            out.append(lines[index - 1])
            continue
        spec = ", ".join(_ALTERNATIVES.split(match.group("spec")))
        start = index
        while start < len(lines) and not lines[start].strip():
            start += 1
        end = start
        deeper = len(match.group("indent")) + 2
        while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) >= deeper:
            end += 1
        paragraph = " ".join(line.strip() for line in lines[start:end] if line.strip())
        out.append(f"{match.group('indent')}{spec}  {paragraph}".rstrip())
        index = end
    return "\n".join(out)


def merge(base: ParsedHelp, extra: ParsedHelp) -> None:
    """Options the man page adds to a short `--help`, and spellings it adds to options
    the help has (`-s` gains `--slurp`); a description where there was none."""
    known = {f for o in base.options for f in o.flags}
    for option in extra.options:
        owners = [o for o in base.options if set(o.flags) & set(option.flags)]
        if not owners:
            base.options.append(option)
            known.update(option.flags)
        elif len(owners) == 1:  # the same option; several owners: the page is ambiguous
            owner = owners[0]
            owner.flags += [f for f in option.flags if f not in known]
            known.update(option.flags)
            owner.description = owner.description or option.description
    if not base.description:
        base.description = extra.description
