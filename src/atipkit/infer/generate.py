"""Generating an inferred shim for a tool that does not speak ATIP (RFC 0.6 §4.10.4).

Every run goes through the sandbox of the probe. The help forms `--help`, `-h`, `help`
and — when the text points to it — `--help all` are tried and the richest kept;
subcommands are read from `TOOL SUB --help` (or `TOOL help SUB`) down to a depth and within
a time budget; the man page, when one is installed, adds the options a short `--help`
leaves out. The result is a schema-valid shim marked `trust.source: "inferred"` with a
`_generation` record of how it was made. `shim_from_page` makes one from a man page
alone, running nothing (`atip scan --infer`).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from atipkit.deny import configured
from atipkit.infer.effects import infer_effects
from atipkit.infer.helptext import (
    ParsedHelp,
    argument_type,
    arguments_from,
    command_listing,
    default_of,
    option_type,
    parse_help,
)
from atipkit.infer.manpage import RENDER_TIMEOUT, ManPages, merge, read_man_file
from atipkit.model import (
    UNSET,
    Argument,
    AtipVersion,
    Binary,
    Command,
    Effects,
    FilesystemEffects,
    Option,
    Tool,
    Trust,
    UnsetType,
    iter_commands,
)
from atipkit.probe import run_sandboxed
from atipkit.protocol import PROTOCOL_VERSION
from atipkit.registry.local import timestamp
from atipkit.trust.digest import sha256_file

HELP_TIMEOUT = 2.0
_VERSION = re.compile(r"\b[vV]?(\d+(?:\.\d+)+[\w.+~-]*)")


class Budget:
    """Wall-clock seconds for the whole generation; subcommands past it are listed, not
    read."""

    RESERVE = 0.4  # for what follows the last run: hashing, building, validating

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds - self.RESERVE

    @property
    def left(self) -> float:
        return self.deadline - time.monotonic()


def generate_shim(
    executable: str,
    *,
    depth: int = 2,
    budget: float = 10.0,
    man: bool = True,
    name: str | None = None,
    man_file: str | None = None,
    env: Mapping[str, str] | None = None,
    page: ParsedHelp | None = None,
    help_word: bool = True,
    binary_hash: str | None = None,
) -> Tool:
    """An inferred shim for `executable` (a path or a name on PATH).

    `man_file` is a man page to read instead of the one installed for `name` (the
    crawler reads the page shipped in the package it crawled, not the machine's, which
    may describe another version). `page` is a man page already read (`atip scan
    --infer` renders the page files itself): it is merged as a page read here would be,
    and no page is read. A page is read as `atip scan --infer` reads one (`_man_page`).
    `env` is added to the environment of the tool's own runs only, never to groff's: a
    crawled package's `LD_LIBRARY_PATH` must not reach programs that merely read its
    files. Without `help_word`, the tool is asked with flags only
    (`--help`, `-h`, `--version`), never with the word `help`, which many programs take
    for an operand (`hostname help` renames the machine, `npx help` fetches a package
    and runs it): what an unattended sweep over a whole PATH does. `binary_hash` is the
    binary's digest when the caller has it already (else the binary is hashed here)."""
    clock = Budget(budget)
    real = os.path.realpath(executable) if os.sep in executable else _which(executable)
    name = name or os.path.basename(executable)
    hash_ = binary_hash or sha256_file(real)
    if name in (deny := configured()) or deny.denies(real):
        return _denied_shim(name, hash_, clock, man, man_file, page)
    sources: list[str] = []
    root, form = _best_help(real, [], clock, env, help_word)
    if form:
        sources.append(form)
    if page is None and man and clock.left > 0:
        page = _man_page(name, man_file, clock)
    method = "help-parsing"
    if page is not None:
        merge(root, page)
        sources.append("man")
        method += "+man"
    version = _version(real, clock, env)
    commands: dict[str, Command] = {}
    if root.commands:
        commands = _subcommands(real, (), root, depth, clock, sources, env)
    return _shim(name, hash_, root, commands, version, sources, method)


def shim_from_page(
    name: str, hash_: str, page: ParsedHelp, *, version: str | None = None, denied: bool = False
) -> Tool:
    """An inferred shim from a man page alone: nothing is run. Subcommands the page
    lists are listed, not read (reading them would mean running the tool). `denied`: the
    command is on the deny list, so the shim claims destruction (`claim_destruction`)."""
    commands = _subcommands("", (), page, 1, Budget(0), [], None) if page.commands else {}
    tool = _shim(name, hash_, page, commands, version, ["man"], "man-page")
    if denied:
        claim_destruction(tool)
    return tool


def _denied_shim(
    name: str,
    hash_: str,
    clock: Budget,
    man: bool,
    man_file: str | None,
    page: ParsedHelp | None,
) -> Tool:
    """A command on the deny list is never run, not even for `--help`: its man page
    (which groff renders, running nothing of the tool) is all there is."""
    if page is None and man:
        page = _man_page(name, man_file, clock)
    if page is not None:
        return shim_from_page(name, hash_, page, denied=True)
    tool = _shim(name, hash_, ParsedHelp(), {}, None, [], "help-parsing")
    claim_destruction(tool)
    return tool


def _man_page(name: str, man_file: str | None, clock: Budget) -> ParsedHelp | None:
    """The page in `man_file`, else the one installed for `name`, read as `atip scan
    --infer` reads pages (`read_man_file`: rendered by groff left-adjusted and without
    hyphenation, so that justified prose is never read as a listing); None when there
    is none or it cannot be read. Nothing of the tool is run."""
    found = man_file or ManPages().find(name)
    if found is None or clock.left <= 0:
        return None
    page = read_man_file(found, name, timeout=min(RENDER_TIMEOUT, clock.left))
    return page.help if page is not None else None


def claim_destruction(tool: Tool) -> None:
    """Claim destruction for every command of a denied tool that its documentation does
    not show read-only, and say why: the deny list names commands whose purpose is to
    change the state of the system, and an agent must not take one for harmless because
    inference, which never ran it, knew nothing of its effects (decision 158). A command
    that only looks (`loginctl list-users`) keeps its read-only effects (decision 283)."""
    for _, command in iter_commands(tool):
        shown = command.effects.filesystem if command.effects else UNSET
        if command.commands or (shown and shown.write is False):
            continue
        command.effects = Effects(
            filesystem=FilesystemEffects(write=True, delete=True),
            network=command.effects.network if command.effects else UNSET,
            destructive=True,
        )
    generation = tool.extensions.get("_generation")
    if isinstance(generation, dict):
        generation["note"] = (
            "on the deny list of commands that change the state of the system: never run; "
            "destructive assumed where its documentation does not show it read-only"
        )


def _shim(
    name: str,
    hash_: str,
    root: ParsedHelp,
    commands: dict[str, Command],
    version: str | None,
    sources: list[str],
    method: str,
) -> Tool:
    """The shim; `method` is how it was made: `man-page` (from a page alone, nothing of
    the tool run), `help-parsing` (the tool was asked for help, whatever it said), with
    `+man` when a page was merged in."""
    global_options = [_option(o) for o in root.options] if commands else []
    commands = commands or {"": _command(name, root, ())}
    description = _short(root.description) or f"{name} (inferred from its help text)"
    confidence = "medium" if (root.options or root.commands) and root.description else "low"
    return Tool(
        atip=AtipVersion(version=PROTOCOL_VERSION),
        name=name,
        version=version or "unknown",
        description=description,
        binary=Binary(hash=hash_, name=name, version=version or UNSET),
        trust=Trust(source="inferred", verified=False),
        global_options=_unique(global_options),
        commands=commands,
        extensions={
            "_generation": {
                "method": method,
                "timestamp": timestamp(),
                "confidence": confidence,
                "sources": sorted(set(sources)),
            }
        },
    )


def _which(name: str) -> str:
    import shutil

    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"no executable {name!r} on PATH")
    return os.path.realpath(found)


def _run(
    real: str, args: Sequence[str], clock: Budget, env: Mapping[str, str] | None = None
) -> str:
    if clock.left <= 0:
        return ""
    try:
        captured = run_sandboxed(
            real,
            list(args),
            timeout=min(HELP_TIMEOUT, clock.left),
            max_bytes=4 * 1024 * 1024,
            env=env,
        )
    except OSError:
        return ""
    out = captured.stdout.decode("utf-8", "replace")
    err = captured.stderr.decode("utf-8", "replace")
    return out if len(out) >= len(err) else err


def _best_help(
    real: str,
    path: Sequence[str],
    clock: Budget,
    env: Mapping[str, str] | None,
    help_word: bool = True,
) -> tuple[ParsedHelp, str]:
    """The richest of the help forms for `path` (the tool itself when empty); the word
    `help` (`TOOL help`) only with `help_word`."""
    prog = os.path.basename(real)
    best, best_form = ParsedHelp(), ""
    forms = [[*path, "--help"], [*path, "-h"]]
    if path or help_word:
        forms.append(["help", *path] if path else ["help"])
    for args in forms:
        text = _run(real, args, clock, env)
        parsed = parse_help(text, prog) if text.strip() else ParsedHelp()
        if parsed.richness > best.richness:
            best, best_form = parsed, " ".join(args[len(path) :] if path else args)
        if not path and "help -a" in text:  # it names a complete command listing
            known = {c.name for c in parsed.commands}
            listed = command_listing(_run(real, ["help", "-a"], clock, env))
            parsed.commands += [c for c in listed if c.name not in known]
            if parsed.richness > best.richness:
                best, best_form = parsed, " ".join(args)
        if "--help all" in text:  # a stripped help that names its complete form
            full = parse_help(_run(real, [*path, "--help", "all"], clock, env), prog)
            if full.richness > best.richness:
                best, best_form = full, "--help all"
        if best.richness >= 6:
            break
    return best, best_form


def _subcommands(
    real: str,
    path: tuple[str, ...],
    parsed: ParsedHelp,
    depth: int,
    clock: Budget,
    sources: list[str],
    env: Mapping[str, str] | None,
) -> dict[str, Command]:
    out: dict[str, Command] = {}
    for entry in parsed.commands:
        sub_path = (*path, entry.name)
        sub = ParsedHelp(description=entry.description)
        if depth > 1 and clock.left > 0:
            found, _ = _best_help(real, sub_path, clock, env)
            if found.richness and not _echoes(found, parsed):
                sub = found
                sub.description = entry.description or found.description
        if not sub.arguments and entry.args:
            sub.arguments = arguments_from(entry.args)
        children: dict[str, Command] = {}
        if sub.commands and depth > 2:
            children = _subcommands(real, sub_path, sub, depth - 1, clock, sources, env)
        command = _command(entry.name, sub, sub_path)
        if children:
            command.commands = children
        elif sub.commands:  # below the depth: listed, not read
            command.commands = {
                c.name: Command(
                    description=_short(c.description) or c.name,
                    effects=_effects(c.name, ParsedHelp(description=c.description)),
                )
                for c in sub.commands
                if c.name != entry.name
            }
        if command.commands:  # a group's effects are those of its commands, each its own
            command.effects = UNSET
        out[entry.name] = command
    return out


def _echoes(child: ParsedHelp, parent: ParsedHelp) -> bool:
    """Whether a subcommand's help is its parent's printed again (many tools answer
    `TOOL SUB --help` with the top-level help): then it says nothing about SUB."""
    names = {c.name for c in child.commands}
    return (bool(names) and names == {c.name for c in parent.commands}) or (
        child.usage == parent.usage
        and len(child.options) == len(parent.options)
        and bool(parent.options)
    )


def _command(name: str, parsed: ParsedHelp, path: tuple[str, ...]) -> Command:
    description = _short(parsed.description) or " ".join(path) or name
    return Command(
        description=description,
        arguments=_unique_args([_argument(a) for a in parsed.arguments]),
        options=_unique([_option(o) for o in parsed.options]),
        effects=_effects(path[-1] if path else name, parsed),
        examples=parsed.examples,
    )


def _effects(name: str, parsed: ParsedHelp) -> Effects | UnsetType:
    """What the command's name, purpose and options say it does (`infer_effects`)."""
    effects = infer_effects(name, parsed.description, [o.description for o in parsed.options])
    return effects if effects != Effects() else UNSET


def _option(parsed: Any) -> Option:
    atip_type, values = option_type(parsed)
    default = _default(atip_type, values, default_of(parsed.description))
    return Option(
        name=parsed.name,
        flags=parsed.flags,
        type=atip_type,  # type: ignore[arg-type]
        description=_short(parsed.description) or UNSET,
        enum=values or UNSET,
        default=default,
    )


def _argument(parsed: Any) -> Argument:
    atip_type, values = argument_type(parsed)
    return Argument(
        name=parsed.name,
        type=atip_type,  # type: ignore[arg-type]
        enum=values or UNSET,
        description=_short(parsed.description) or parsed.name,
        required=parsed.required,
        variadic=parsed.variadic,
    )


def _default(atip_type: str, values: list[str] | None, text: str | None) -> Any:
    """A stated default, only where it fits the type (never for flags)."""
    if text is None or atip_type == "boolean":
        return UNSET
    if atip_type == "integer":
        return int(text) if re.fullmatch(r"-?\d+", text) else UNSET
    if atip_type == "number":
        try:
            return float(text)
        except ValueError:
            return UNSET
    if values is not None and text not in values:
        return UNSET
    return text


def _unique(options: list[Option]) -> list[Option]:
    seen: dict[str, int] = {}
    out = []
    for option in options:
        count = seen.get(option.name, 0)
        seen[option.name] = count + 1
        if count:
            option.name = f"{option.name}-{count + 1}"
        out.append(option)
    return out


def _unique_args(arguments: list[Argument]) -> list[Argument]:
    seen: dict[str, int] = {}
    out = []
    variadic_seen = False
    for argument in arguments:
        count = seen.get(argument.name, 0)
        seen[argument.name] = count + 1
        if count:
            argument.name = f"{argument.name}-{count + 1}"
        if argument.variadic and variadic_seen:
            argument.variadic = False  # one variadic argument at most
        variadic_seen = variadic_seen or argument.variadic
        out.append(argument)
    return out


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _version(real: str, clock: Budget, env: Mapping[str, str] | None) -> str | None:
    text = _run(real, ["--version"], clock, env)
    first = next((line for line in text.splitlines() if line.strip()), "")
    match = _VERSION.search(first)
    return match.group(1) if match else None
