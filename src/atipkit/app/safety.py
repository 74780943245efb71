"""The framework's safety policy (PRD §14): one mode per app, `off`, `standard` or
`strict`, deciding how output is cleaned and how destructive commands are guarded.

- `off`: output as returned; destructive commands run unasked.
- `standard` (the default): in text and plain output, terminal escapes and control
  characters are removed and text that reads like instructions to a model is marked; in
  JSON output that text stays data, its places listed in `meta.flagged` and warned of. A
  destructive command asks on the terminal before it runs (`--yes` answers; without a
  terminal or `--yes`, E1006); over MCP and HTTP it runs, as the client confirms it
  (MCP's `destructiveHint`).
- `strict`: such text is withheld in every output, JSON too, escapes removed from JSON
  strings as well; a destructive command needs a human's approval at the terminal on
  every surface, `--yes` not counting (PRD §14.4; without one, E2002, exit 101).

The app's author sets the mode (`App(policy=...)`); whoever runs the tool may raise it
with `PREFIX_POLICY` (`strict` over `standard`), never lower it: the command line an
agent writes can set a variable as easily as a flag. The rules are those
of the bridge's `ResultFilter` (`atipkit._untrusted`), which cleans every tool's output
before a model reads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from atipkit.app.errors import AuthError, DefinitionError
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.command import CommandSpec
    from atipkit.app.context import Context

__all__ = ["MODES", "Mode", "confirm_destructive", "is_destructive", "mode_of", "screen"]

Mode = Literal["off", "standard", "strict"]
MODES: tuple[Mode, ...] = ("off", "standard", "strict")
MAX_FLAGGED = 20
"""`meta.flagged` names at most this many places (and says how many there were)."""


_WARNED: set[str] = set()


def check_mode(mode: str, where: str) -> Mode:
    if mode not in MODES:
        raise DefinitionError(f"{where}: policy is one of {', '.join(MODES)}, not {mode!r}")
    return mode


def mode_of(app: App) -> Mode:
    """The app's mode, raised (never lowered) by `PREFIX_POLICY`; a value that is no mode
    is read as `strict`, with a warning on stderr: a misspelt request for more safety
    must not run with less."""
    mode = app.policy
    asked = os.environ.get(f"{app.env_prefix}_POLICY", "").strip().lower()
    if asked and asked not in MODES:
        if asked not in _WARNED:  # once a process, however often the mode is read
            import sys

            _WARNED.add(asked)
            sys.stderr.write(
                f"warning: {app.env_prefix}_POLICY={asked!r} is no policy; using strict\n"
            )
        asked = "strict"
    for stricter in MODES[MODES.index(mode) + 1 :]:
        if asked == stricter:
            return stricter
    return mode


def is_destructive(spec: CommandSpec) -> bool:
    """Guarded as destructive: declared so, by annotation or by full ATIP effects, and
    not declared to ask its own questions (`effects.interactive.prompts: true`, as
    `atip run` does, which runs whatever it is given and confirms by its own policy)."""
    from collections.abc import Mapping

    from atipkit.app.annotations import Destructive

    effects = spec.effects
    if isinstance(effects, Mapping):
        declared = effects.get("destructive") is True
        asks = (effects.get("interactive") or {}).get("prompts") is True
    else:
        declared = getattr(effects, "destructive", None) is True
        asks = getattr(getattr(effects, "interactive", None), "prompts", None) is True
    return (declared or bool(spec.annotations & Destructive)) and not asks


def confirm_destructive(spec: CommandSpec, ctx: Context, mode: Mode) -> str | None:
    """On the command line, before a destructive command runs: ask, as the mode says.
    Returns how it was confirmed (`"terminal"`, `"--yes"`), or None when nobody was
    asked (off; a dry run; strict and human-in-the-loop commands, which ask for
    approval instead)."""
    if mode != "standard" or ctx.dry_run or spec.human_in_the_loop or not is_destructive(spec):
        return None
    answered_by = "--yes" if ctx.settings.yes else "terminal"
    if not ctx.confirm(f"{spec.display_name} is destructive. Run it?"):
        raise AuthError(
            "declined at the prompt",
            code=ErrorCode.DECLINED,
            details={"reason": f"{spec.display_name} is destructive"},
        )
    return answered_by


def needs_approval(spec: CommandSpec, mode: Mode) -> bool:
    """Strict mode: a destructive command needs a human's approval on every surface."""
    return mode == "strict" and is_destructive(spec)


# Output ----------------------------------------------------------------------------------


def text_cleaner(mode: Mode, *, instructions: bool = True) -> Callable[[str], str] | None:
    """What every string of a result goes through on its way to text or plain output.
    `instructions=False` when the result is known to hold nothing that reads like
    instructions (`screen` flagged nothing): only terminal escapes are then looked for."""
    if mode == "off":
        return None
    from atipkit._untrusted import clean_terminal, screen_instructions

    if not instructions:
        return clean_terminal
    how: Literal["mark", "withhold"] = "withhold" if mode == "strict" else "mark"
    return lambda text: screen_instructions(clean_terminal(text), how)[0]


def screen(result: Any, mode: Mode) -> tuple[Any, list[str], int]:
    """A result on its way to JSON: in standard mode the places (JSON paths) of text that
    reads like instructions to a model, the result unchanged; in strict mode that text
    withheld and terminal escapes removed. Returns the result, up to `MAX_FLAGGED` paths
    and how many there were."""
    if mode == "off" or result is None:
        return result, [], 0
    from atipkit._untrusted import looks_like_instructions, may_hold_instructions
    from atipkit.app.output import encode

    flagged: list[str] = []
    # The JSON text first, encoded and scanned at C speed: most results hold no word an
    # instruction starts with, and are not walked string by string at all. (JSON escapes
    # none of those words' characters, so a word in a string is a word in the text.)
    if may_hold_instructions(encode(result).decode("utf-8", "surrogatepass")):
        flagged = [path for path, text in _strings(result, "$") if looks_like_instructions(text)]
    from atipkit.app.output import Document

    if mode == "strict" and not isinstance(result, Document):  # a document stays verbatim
        result = _strict(result)
    return result, flagged[:MAX_FLAGGED], len(flagged)


def _strict(value: Any) -> Any:
    """`value` as JSON holds it, each string cleaned of terminal escapes and withheld if
    it reads like instructions to a model (keys too)."""
    import json

    from atipkit._untrusted import clean_terminal, screen_instructions
    from atipkit.app.output import encode

    def wash(item: Any) -> Any:
        if isinstance(item, str):
            return screen_instructions(clean_terminal(item), "withhold")[0]
        if isinstance(item, dict):
            return {wash(k): wash(v) for k, v in item.items()}
        if isinstance(item, list):
            return [wash(v) for v in item]
        return item

    return wash(json.loads(encode(value)))


def screen_stream(items: Iterator[Any], mode: Mode) -> Iterator[Any]:
    """A streamed result, item by item (strict mode only changes anything)."""
    for item in items:
        yield _strict(item) if mode == "strict" else item


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """The strings of a result (as JSON would hold them) and their JSON paths."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield path, key
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")
    elif value is not None and not isinstance(value, int | float | bytes):
        from atipkit.app.output import _default

        try:
            yield from _strings(_default(value), path)
        except TypeError:
            return
