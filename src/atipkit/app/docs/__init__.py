"""SKILL.md, llms.txt, llms-full.txt and a man page, written from the commands themselves
(PRD §12).

Every fact about a command is read from what the parser, `--schema`, `--help-agent` and
`--agent` read: the `Param`s, the Click commands, `schema.hints` and
`CommandSpec.atip_effects()`. Nothing is written beside the code that could go stale; the
only fixed prose is the framework's own contract (the envelope, what each exit status
means), which is the same for every app.

The four outputs are deterministic: the same app gives the same bytes on any machine, so
they are fit to commit and to diff. That is why no date, no path of this machine and no
configuration file enters them: defaults are the code's, as `--help` shows them before
any configuration applies.

Decisions:
- Hidden commands and hidden parameters are left out, as `--help` leaves them out.
- Values in the Markdown outputs are JSON, as `--schema` states them; the man page shows
  them as typed on a command line, as `--help` does.
- llms.txt links each command to its section of llms-full.txt (`llms-full.txt#anchor`),
  so the index works when both files are published side by side.
"""

from __future__ import annotations

from atipkit.app.docs.man import man_page
from atipkit.app.docs.markdown import llms_full_txt, llms_txt, skill_md

__all__ = ["llms_full_txt", "llms_txt", "man_page", "skill_md"]
