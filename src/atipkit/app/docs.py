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

import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from click.formatting import join_options

from atipkit.app.errors import ExitCode
from atipkit.app.flags import PREFIX, global_flags

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.command import CommandSpec
    from atipkit.app.params import Param

__all__ = ["llms_full_txt", "llms_txt", "man_page", "skill_md"]

# What each exit status means and what an agent should do about it (PRD §8.4).
_EXIT_MEANINGS: dict[str, tuple[str, str]] = {
    "OK": ("Success.", "Read `result`."),
    "USAGE": ("Invalid usage or a value that fails validation.", "Fix the arguments."),
    "NOT_FOUND": ("A resource named in the call does not exist.", "Check the name or path."),
    "CONFLICT": ("The resource is in a conflicting state.", "Resolve the conflict first."),
    "PERMISSION": ("Permission denied.", "Ask for the access it needs."),
    "DEPENDENCY": ("Something the command relies on failed.", "Check that dependency."),
    "TIMEOUT": ("The command ran out of time.", "Retry with backoff or a larger --timeout."),
    "DATA_FORMAT": ("Input data could not be read as what it should be.", "Fix the data."),
    "INTERNAL": ("A bug in the tool.", "Do not retry; report it."),
    "TEMPORARY": ("A passing failure.", "Retry."),
    "HUMAN_HANDOFF": ("A human must act first.", "Stop and ask the user."),
}


# The facts, read once ------------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    """One parameter as every output states it."""

    name: str
    kind: str
    flags: tuple[str, ...]
    """Options: the flags that set it, in `--help`'s order; arguments: empty."""
    negations: tuple[str, ...]
    metavar: str
    """What `--help` shows after the flags (`INTEGER RANGE`), or an argument's name."""
    type: str
    required: bool
    has_default: bool
    default: Any
    """The default as `--schema` states it (JSON)."""
    choices: tuple[Any, ...]
    constraints: tuple[tuple[str, str], ...]
    """`(words, literal)`: `("at least", "1")`; the literal is set as code, or empty."""
    help: str
    env: str | None
    schema: dict[str, Any] | None
    """For parameters taken as one JSON text: the schema of that text."""

    @property
    def label(self) -> str:
        """How the parameter is written on a command line: its flags, or its metavar."""
        if self.kind == "argument":
            return self.metavar
        text = ", ".join(self.flags)
        if self.negations:
            text += " / " + ", ".join(self.negations)
        return f"{text} {self.metavar}".rstrip()


@dataclass(frozen=True)
class _Flag:
    """A flag the framework gives (global, per command or the app's own), as `--help`
    shows it: the left column and the help text."""

    label: str
    flags: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class _Command:
    spec: CommandSpec
    usage: str
    """`[OPTIONS] PATTERN`: what follows the command's name in `--help`'s usage line."""
    params: tuple[_Param, ...]
    extra_flags: tuple[_Flag, ...]
    """Framework flags this command has beyond every command's (`--limit`, `--null`)."""
    behaviour: tuple[tuple[str, str], ...]
    governance: tuple[tuple[str, str], ...]
    hints: tuple[str, ...]
    output_schema: dict[str, Any] | None

    @property
    def name(self) -> str:
        return self.spec.display_name

    @property
    def path(self) -> str:
        return " ".join(self.spec.path)


def _visible(app: App) -> list[CommandSpec]:
    return [spec for spec in app.walk() if not spec.hidden]


def _commands(app: App) -> list[_Command]:
    return [_command(spec) for spec in _visible(app)]


def _command(spec: CommandSpec) -> _Command:
    from atipkit.app.schema import env_vars, output_schema

    cmd = spec.click_command
    ctx = _context(cmd, spec.name)
    env = {name: var for var, name in env_vars(spec).items()}
    by_name = {p.name: p for p in cmd.params}
    params = tuple(
        _param(p, by_name[p.name], ctx, env.get(p.name) if p.kind == "option" else None)
        for p in spec.signature.params
        if not p.marker.hidden
    )
    common = {flag for option in _common_flags(spec.app) for flag in option.opts}
    extra = tuple(
        _flag_of(p, ctx)
        for p in cmd.params
        if isinstance(p, click.Option)
        and (p.name or "").startswith(PREFIX)
        and not set(p.opts) & common
    )
    return _Command(
        spec=spec,
        usage=" ".join(cmd.collect_usage_pieces(ctx)),
        params=params,
        extra_flags=extra,
        behaviour=tuple(_behaviour(spec)),
        governance=tuple(_governance(spec)),
        hints=tuple(_hint_words(spec)),
        output_schema=output_schema(spec.signature.returns),
    )


def _param(p: Param, click_param: click.Parameter, ctx: click.Context, env: str | None) -> _Param:
    schema = p.json_schema()
    flags: tuple[str, ...] = ()
    negations: tuple[str, ...] = ()
    if isinstance(click_param, click.Option):
        flags = tuple(join_options(click_param.opts)[0].split(", "))
        if click_param.secondary_opts:
            negations = tuple(join_options(click_param.secondary_opts)[0].split(", "))
        metavar = "" if click_param.is_flag else click_param.make_metavar(ctx)
    else:
        metavar = click_param.make_metavar(ctx)
    target = _item_schema(schema)
    choices = tuple(target.get("enum", ()))
    return _Param(
        name=p.name,
        kind=p.kind,
        flags=flags,
        negations=negations,
        metavar=metavar,
        type=_type_word(p, schema),
        required=p.required,
        has_default="default" in schema,
        default=schema.get("default"),
        choices=choices,
        constraints=tuple(_constraints(p, target)),
        help=p.help or "",
        env=env,
        schema=schema if p.is_json or (p.stdin is not None and p.stdin.want == "json") else None,
    )


def _item_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema constraints and choices live in: a list's items, Optional's first."""
    target = schema
    if "anyOf" in target:
        target = target["anyOf"][0]
    if target.get("type") == "array" and isinstance(target.get("items"), dict):
        target = target["items"]
        if "anyOf" in target:
            target = target["anyOf"][0]
    return target


def _type_word(p: Param, schema: dict[str, Any]) -> str:
    """The type as `--schema` states it, in words: `integer`, `list of string`, `path`."""

    def word(node: dict[str, Any]) -> str:
        if "anyOf" in node:
            kinds = [word(n) for n in node["anyOf"] if n.get("type") != "null"]
            return " or ".join(kinds) + " or null"
        kind = node.get("type")
        if kind == "array":
            return f"list of {word(node.get('items', {}))}"
        if kind == "string" and node.get("format") == "path":
            return "path"
        if kind == "object" or "properties" in node:
            return "object"
        if isinstance(kind, str):
            return kind
        return "any"

    text = word(schema)
    if p.shape.kind == "path" or (p.shape.item is not None and p.shape.item.kind == "path"):
        if not p.marker.file_okay:
            text = text.replace("path", "directory")
        elif not p.marker.dir_okay:
            text = text.replace("path", "file")
    return text


def _constraints(p: Param, target: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """What a value must be beyond its type, as `(words, literal)` pairs."""
    low, high = target.get("minimum"), target.get("maximum")
    if low is not None and high is not None:
        yield f"{_num(low)} to {_num(high)}", ""
    elif low is not None:
        yield f"at least {_num(low)}", ""
    elif high is not None:
        yield f"at most {_num(high)}", ""
    low, high = target.get("minLength"), target.get("maxLength")
    if low is not None and high is not None:
        yield f"{low} to {high} characters", ""
    elif low is not None:
        yield f"at least {low} characters", ""
    elif high is not None:
        yield f"at most {high} characters", ""
    if target.get("pattern") is not None:
        yield "matches the regular expression", str(target["pattern"])
    is_path = p.shape.kind == "path" or (p.shape.item is not None and p.shape.item.kind == "path")
    if is_path and p.marker.exists:
        yield "must exist", ""
    if p.stdin is not None:
        yield "a file, a URL, or standard input (read from a pipe when left out, or named", "-"
    elif p.is_json:
        yield "one JSON text on the command line", ""
    if p.variadic:
        if p.kind == "option":
            yield "repeat the flag for more values", ""
        else:
            yield ("one or more values" if p.required else "any number of values"), ""


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _context(
    command: click.Command, name: str, parent: click.Context | None = None
) -> click.Context:
    """A context as Click makes one to run `command` (its settings: `-h` is a help flag),
    without the configuration files' defaults, which are this machine's, not the app's."""
    return click.Context(command, info_name=name, parent=parent, **command.context_settings)


def _common_flags(app: App) -> list[click.Option]:
    """The flags every command has (whatever its timeout, pagination or input)."""
    return global_flags(timeout=None, paginated=False, null=False, envvar=app.env_prefix)


def _flag_of(option: click.Parameter, ctx: click.Context) -> _Flag:
    record = option.get_help_record(ctx)
    label, text = record if record else (", ".join(option.opts), "")
    return _Flag(label=label, flags=tuple(option.opts) + tuple(option.secondary_opts), help=text)


def _global_flags(app: App) -> list[_Flag]:
    """Every command's framework flags, as a command's `--help` lists them (read from the
    first command's Click command: they are the same for all)."""
    specs = list(app.walk())
    if not specs:
        ctx = click.Context(click.Command(app.name))
        return [_flag_of(option, ctx) for option in _common_flags(app)]
    cmd = specs[0].click_command
    ctx = _context(cmd, specs[0].name)
    common = {flag for option in _common_flags(app) for flag in option.opts}
    own = {p.name for p in specs[0].signature.params}
    flags = []
    for param in cmd.get_params(ctx):
        if not isinstance(param, click.Option):
            continue
        is_global = bool(set(param.opts) & common)
        is_action = not (param.name or "").startswith(PREFIX) and param.name not in own
        if is_global or is_action:
            flags.append(_flag_of(param, ctx))
    return flags


def _root_flags(app: App) -> list[_Flag]:
    """The app's own flags (`--agent`, `--version`, ...), as `app --help` lists them."""
    group = app.click_group
    ctx = _context(group, app.name)
    return [_flag_of(p, ctx) for p in group.get_params(ctx) if isinstance(p, click.Option)]


# Behaviour and governance ---------------------------------------------------------------


def _behaviour(spec: CommandSpec) -> Iterator[tuple[str, str]]:
    """Effects in words; what the command leaves unknown is said, with the assumption an
    agent should make (the worst), as the MCP hints make it."""
    from atipkit.app.schema import hints
    from atipkit.model import UNSET

    h = hints(spec)
    e = spec.atip_effects()
    yield "read-only", "yes" if h["readOnlyHint"] else "no"
    if e.destructive is True:
        yield "destructive", "yes"
    elif not h["destructiveHint"]:
        yield "destructive", "no"
    else:
        yield "destructive", "not declared (assume it may be)"
    if h["idempotentHint"]:
        yield "idempotent", "yes"
    elif e.idempotent is False:
        yield "idempotent", "no"
    else:
        yield "idempotent", "not declared (assume not)"
    if e.network is True:
        yield "network", "yes"
    elif e.network is False:
        yield "network", "no"
    else:
        yield "network", "not declared (assume it may be used)"
    if e.reversible is not UNSET:
        yield "reversible", _yes(e.reversible)
    if e.subprocess is not UNSET:
        yield "runs other programs", _yes(e.subprocess)
    fs = e.filesystem
    if fs is not UNSET:
        parts = [
            f"{what} {_yes(value)}"
            for what, value in (("reads", fs.read), ("writes", fs.write), ("deletes", fs.delete))
            if value is not UNSET
        ]
        if fs.paths is not UNSET and fs.paths:
            parts.append("paths " + ", ".join(fs.paths))
        if parts:
            yield "filesystem", "; ".join(parts)
    for what in ("creates", "modifies", "deletes"):
        value = getattr(e, what)
        if value is not UNSET and value:
            yield what, ", ".join(value)
    interactive = e.interactive
    if interactive is not UNSET:
        if interactive.prompts is True:
            yield "prompts", "may ask on the terminal (never on standard input)"
        if interactive.stdin is not UNSET and interactive.stdin != "none":
            yield "reads standard input", str(interactive.stdin)
    cost = e.cost
    if cost is not UNSET and cost.billable is True:
        yield "billable", "yes"
    duration = e.duration
    if duration is not UNSET and duration.typical is not UNSET:
        yield "typical duration", str(duration.typical)


def _yes(value: Any) -> str:
    return "yes" if value is True else "no" if value is False else str(value)


def _governance(spec: CommandSpec) -> Iterator[tuple[str, str]]:
    yield "cost", spec.cost_hint or "not declared"
    if spec.human_in_the_loop:
        yield (
            "human in the loop",
            "yes: a person must approve at a terminal; --yes does not count, and without "
            f"one it exits {ExitCode.HUMAN_HANDOFF}",
        )
    else:
        yield "human in the loop", "no"
    yield "auth scopes", ", ".join(spec.auth) if spec.auth else "none"
    timeout = f"{spec.timeout:g} s (the default of --timeout)" if spec.timeout else "none"
    yield "timeout", timeout
    yield "max tokens", str(spec.max_tokens) if spec.max_tokens is not None else "no limit"
    if spec.paginated:
        size = spec.page_size
        pages = f"page size {size}" if size else "every item unless --limit is given"
        yield "paginated", f"yes ({pages}): --limit N, --cursor from meta.pagination.next_cursor"
    else:
        yield "paginated", "no"
    if spec.dry_run:
        yield "dry run", "supported: --dry-run returns the plan and changes nothing"
    else:
        yield "dry run", f"not supported (--dry-run is refused, exit {ExitCode.USAGE})"
    if spec.deprecated:
        yield "deprecated", "yes"


def _hint_words(spec: CommandSpec) -> Iterator[str]:
    """The short form of behaviour and governance, for one line of an index."""
    from atipkit.app.schema import hints

    h = hints(spec)
    e = spec.atip_effects()
    if h["readOnlyHint"]:
        yield "read-only"
    if e.destructive is True:
        yield "destructive"
    if h["idempotentHint"]:
        yield "idempotent"
    if e.network is True:
        yield "network"
    elif e.network is False:
        yield "no network"
    if spec.human_in_the_loop:
        yield "needs a human"
    if spec.dry_run:
        yield "dry-run"
    if spec.paginated:
        yield "paginated"
    if spec.deprecated:
        yield "deprecated"


def _exit_codes() -> list[tuple[int, str, str, str]]:
    """`(status, NAME, meaning, action)` for every status `ExitCode` names, in order."""
    rows = []
    for name, value in vars(ExitCode).items():
        if name.isupper() and isinstance(value, int):
            meaning, action = _EXIT_MEANINGS.get(name, (name.replace("_", " ").lower(), ""))
            rows.append((value, name, meaning, action))
    return sorted(rows)


def _examples(spec: CommandSpec) -> Iterator[tuple[str, str]]:
    """`(command line, description)`: a dict's args become a line, a string is one."""
    for example in spec.examples:
        if isinstance(example, str):
            yield example, ""
        else:
            args = [str(a) for a in example.get("args", [])]
            line = shlex.join([*spec.app.name.split(), *spec.path, *args])
            yield line, str(example.get("description") or "")


# Markdown -------------------------------------------------------------------------------


def _json(value: Any) -> str:
    from atipkit.app.output import encode

    return encode(value).decode()


def _code(text: str) -> str:
    """Inline code that survives backticks in the text (CommonMark's rule: a longer
    fence, padded when the text starts or ends with a backtick)."""
    text = " ".join(text.split("\n"))
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fenced(text: str, info: str = "") -> list[str]:
    runs = [len(m) for m in re.findall(r"`{3,}", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [f"{fence}{info}", *text.splitlines(), fence]


_HEADING = re.compile(r"^( {0,3})(#|=+\s*$|-+\s*$|\+\+\+|<)")


def _prose(text: str) -> list[str]:
    """Author text as Markdown lines, kept as written except for what would break the
    document's structure: a line that would become a heading or a rule is escaped."""
    lines = []
    for line in text.strip("\n").splitlines():
        line = line.rstrip()
        match = _HEADING.match(line)
        if match:
            line = f"{match.group(1)}\\{line[len(match.group(1)) :]}"
        lines.append(line)
    return lines


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _sentence(text: str) -> str:
    """One line that ends like a sentence, so the facts after it do not run on."""
    text = _one_line(text)
    return text + "." if text and text[-1].isalnum() else text


def _cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


class _Slugs:
    """Anchors as GitHub and most Markdown renderers make them, unique in a document."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, heading: str) -> str:
        base = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        slug, n = base, 0
        while slug in self.seen:
            n += 1
            slug = f"{base}-{n}"
        self.seen.add(slug)
        return slug


class _Markdown:
    """Lines of a Markdown document, with the anchor of each heading."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.slugs = _Slugs()

    def heading(self, level: int, text: str) -> str:
        self.block([f"{'#' * level} {text}"])
        return self.slugs(text)

    def block(self, lines: Iterable[str]) -> None:
        lines = list(lines)
        if not lines:
            return
        if self.lines:
            self.lines.append("")
        self.lines.extend(lines)

    def text(self) -> str:
        return "\n".join(self.lines).rstrip("\n") + "\n"


def _how_to_call(doc: _Markdown, app: App, level: int) -> None:
    n = app.name
    doc.heading(level, f"Calling {n}")
    doc.block(
        [
            f"- Run {_code(f'{n} COMMAND [ARGUMENTS] --json')}. Always pass `--json`: standard "
            "output then holds exactly one JSON envelope, for success and failure alike; "
            "diagnostics go to standard error. Never parse the text output.",
            "- Success: "
            + _code(
                '{"ok": true, "result": ..., "meta": {"tool": "'
                + n
                + '.COMMAND", "version": "'
                + app.version
                + '", "duration_ms": ..., "warnings": [...]}}'
            )
            + ". Read `result`; look at `meta.warnings`.",
            "- Failure: "
            + _code(
                '{"ok": false, "error": {"code": "E3001", "category": "state", "message": ..., '
                '"suggestion": {"action": ..., "fix": ...}, "is_retryable": false, '
                '"exit_code": 10}, "meta": {...}}'
            )
            + ". Follow `error.suggestion`; retry only when `error.is_retryable` is true.",
            "- The exit status says what kind of failure it was, even without reading the "
            "envelope: 0 is success, the others are in the table below.",
            "- `--dry-run`: a command that supports it returns its plan (`result.actions`) "
            f"and changes nothing; the others refuse it (exit {ExitCode.USAGE}).",
            "- `--yes` answers yes to confirmations; `--no-input` makes a command fail "
            "instead of waiting for an answer. A command marked human in the loop needs "
            "a person at a terminal: `--yes` does not count, and without one it exits "
            f"{ExitCode.HUMAN_HANDOFF}: stop and ask the user.",
            "- Large results: `--max-items N` and `--max-bytes N` cut them, and "
            "`meta.truncation` says what was left out. Paginated commands take `--limit N` "
            "and `--cursor` (from `meta.pagination.next_cursor`).",
            "- `--idempotency-key KEY` makes a retry safe: the same key with the same "
            "arguments answers the first outcome again instead of running twice.",
            "- A parameter of type object takes one JSON text, quoted for the shell.",
            f"- {_code(f'{n} --help-agent')} gives a compact overview, "
            f"{_code(f'{n} COMMAND --help-agent')} one command's parameters, "
            f"{_code(f'{n} COMMAND --schema')} its JSON Schema, and {_code(f'{n} --agent')} "
            "the ATIP metadata of the whole tool.",
        ]
    )
    doc.heading(level + 1, "Global options")
    doc.block(["Every command takes these:", ""])
    doc.lines.extend(f"- {_code(f.label)}: {_one_line(f.help)}" for f in _global_flags(app))
    doc.heading(level + 1, "Exit codes")
    rows = ["| Status | Name | Meaning | What to do |", "|---|---|---|---|"]
    rows += [
        f"| {value} | {name} | {_cell(meaning)} | {_cell(action)} |"
        for value, name, meaning, action in _exit_codes()
    ]
    doc.block(rows)


def _param_line(p: _Param) -> str:
    where = f"argument {_code(p.metavar)}" if p.kind == "argument" else _code(p.label)
    facts = [p.type]
    facts.append("required" if p.required else "optional")
    if p.has_default:
        facts.append(f"default {_code(_json(p.default))}")
    if p.choices:
        facts.append("one of " + ", ".join(_code(_json(c)) for c in p.choices))
    facts += [_md_constraint(words, literal) for words, literal in p.constraints]
    if p.env:
        facts.append(f"env {_code(p.env)}")
    line = f"- {_code(p.name)} ({where}): {'; '.join(facts)}."
    if p.help:
        line += " " + _sentence(p.help)
    if p.schema is not None:
        line += f" Schema: {_code(_json(p.schema))}"
    return line


def _md_constraint(words: str, literal: str) -> str:
    if not literal:
        return words
    text = f"{words} {_code(literal)}"
    return text + ")" if words.count("(") > words.count(")") else text


def _command_md(doc: _Markdown, c: _Command, level: int) -> str:
    spec = c.spec
    anchor = doc.heading(level, c.name)
    usage = f"{c.name} {c.usage}".rstrip()
    doc.block([f"Usage: {_code(usage)}"])
    if spec.deprecated:
        doc.block(["**Deprecated.**"])
    doc.block(_prose(spec.description or spec.summary))
    sub = level + 1
    doc.heading(sub, "Parameters")
    if c.params:
        doc.block(_param_line(p) for p in c.params)
    else:
        doc.block(["None."])
    if c.extra_flags:
        doc.block(
            ["Also, beside the global options:", ""]
            + [f"- {_code(f.label)}: {_one_line(f.help)}" for f in c.extra_flags]
        )
    if c.output_schema is not None:
        doc.heading(sub, "Result")
        doc.block([f"`result` matches {_code(_json(c.output_schema))}."])
    doc.heading(sub, "Behaviour")
    doc.block(f"- {key}: {value}" for key, value in c.behaviour)
    doc.heading(sub, "Governance")
    doc.block(f"- {key}: {value}" for key, value in c.governance)
    if spec.error_codes:
        doc.heading(sub, "Error codes")
        rows = ["| Code | Meaning |", "|---|---|"]
        rows += [f"| {_cell(code)} | {_cell(text)} |" for code, text in spec.error_codes.items()]
        doc.block(rows)
    examples = list(_examples(spec))
    if examples:
        doc.heading(sub, "Examples")
        for line, description in examples:
            if description:
                doc.block(_prose(description))
            doc.block(_fenced(line, "sh"))
    return anchor


def _index(c: _Command) -> str:
    hints = f" [{', '.join(c.hints)}]" if c.hints else ""
    return f"{_one_line(c.spec.summary) or c.path}{hints}"


def _reference(doc: _Markdown, app: App, commands: list[_Command], level: int) -> list[str]:
    """The commands section: an index, then one section a command; their anchors."""
    doc.heading(level, "Commands")
    if not commands:
        doc.block(["This tool has no commands."])
        return []
    doc.block(f"- {_code(c.name)}: {_index(c)}" for c in commands)
    groups = _groups(app)
    if groups:
        doc.block(["Command groups:", ""] + [f"- {_code(n)}: {_one_line(h)}" for n, h in groups])
    return [_command_md(doc, c, level + 1) for c in commands]


def _groups(app: App) -> list[tuple[str, str]]:
    from atipkit.app.app import Group

    out: list[tuple[str, str]] = []

    def visit(group: Group) -> None:
        for child in group.children.values():
            if isinstance(child, Group):
                out.append((" ".join((app.name, *child.path)), child.help or ""))
                visit(child)

    visit(app)
    return out


def _yaml_string(text: str) -> str:
    """A YAML double-quoted scalar; characters YAML does not allow raw are escaped."""
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o in (0x9, 0xA, 0xD) or not (
            0x20 <= o <= 0x7E or o == 0x85 or 0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD
        ):
            if o > 0xFFFF:
                out.append(ch if o <= 0x10FFFF else "")
            else:
                out.append(f"\\u{o:04x}" if o > 0xFF else f"\\x{o:02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _skill_name(name: str) -> str:
    """Agent Skills names: 1 to 64 of `a-z0-9-`, no leading, trailing or double hyphen."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    slug = slug[:64].rstrip("-")
    return slug or "tool"


def _skill_description(app: App, commands: list[_Command]) -> str:
    """What the tool does and when to reach for it, at most 1024 characters (the Agent
    Skills limit), without anything that looks like an XML tag."""
    what = _one_line(app.description).rstrip(".") or f"The {app.name} command-line tool"
    lead = f"{what}. Use the {app.name} command-line tool ({app.name} {app.version})"
    tail = ". Call it with --json for a JSON result."
    names = [c.path for c in commands]
    text = f"{lead}{tail}"
    for count in range(len(names), 0, -1):
        listed = ", ".join(names[:count]) + (", ..." if count < len(names) else "")
        candidate = f"{lead}; commands: {listed}{tail}"
        if len(candidate) <= 1024:
            text = candidate
            break
    text = text.replace("<", "\u2039").replace(">", "\u203a")
    return text if len(text) <= 1024 else text[:1021] + "..."


def skill_md(app: App) -> str:
    """SKILL.md (Agent Skills): front matter with `name` and `description`, how to call
    the tool as an agent, then every command in full."""
    commands = _commands(app)
    doc = _Markdown()
    doc.lines += [
        "---",
        f"name: {_skill_name(app.name)}",
        f"description: {_yaml_string(_skill_description(app, commands))}",
        "metadata:",
        f"  tool: {_yaml_string(app.name)}",
        f"  version: {_yaml_string(app.version)}",
        "---",
    ]
    _header(doc, app)
    _how_to_call(doc, app, 2)
    _reference(doc, app, commands, 2)
    return doc.text()


def _header(doc: _Markdown, app: App) -> None:
    doc.heading(1, app.name)
    if app.description:
        doc.block(_prose(app.description))
    facts = [f"Version {app.version}."]
    if app.homepage:
        facts.append(f"Homepage: <{app.homepage}>.")
    doc.block([" ".join(facts)])


def _llms_head(doc: _Markdown, app: App) -> None:
    doc.heading(1, app.name)
    summary = _one_line(app.description) or f"The {app.name} command-line tool."
    doc.block([f"> {summary}"])
    notes = [
        f"Version {app.version}. Run {_code(f'{app.name} COMMAND --json')}: standard output "
        "holds one JSON envelope, `ok` with `result` or `error`, and `meta`; exit status 0 "
        "means success.",
        f"{_code(f'{app.name} --agent')} prints ATIP metadata and "
        f"{_code(f'{app.name} COMMAND --schema')} a command's JSON Schema.",
    ]
    if app.homepage:
        notes.append(f"Homepage: <{app.homepage}>.")
    doc.block(notes)


def _full(app: App) -> tuple[str, list[_Command], list[str]]:
    commands = _commands(app)
    doc = _Markdown()
    _llms_head(doc, app)
    _how_to_call(doc, app, 2)
    anchors = _reference(doc, app, commands, 2)
    return doc.text(), commands, anchors


def llms_txt(app: App) -> str:
    """llms.txt (llmstxt.org): `# name`, a `>` summary, short notes, then `## Commands`,
    one link a command into llms-full.txt."""
    _text, commands, anchors = _full(app)
    doc = _Markdown()
    _llms_head(doc, app)
    doc.heading(2, "Commands")
    if commands:
        doc.block(
            f"- [{c.path}](llms-full.txt#{anchor}): {_index(c)}"
            for c, anchor in zip(commands, anchors, strict=True)
        )
    doc.heading(2, "Optional")
    doc.block(
        [
            "- [llms-full.txt](llms-full.txt): every command in full: parameters, behaviour, "
            "governance, error codes and examples",
        ]
    )
    return doc.text()


def llms_full_txt(app: App) -> str:
    """llms-full.txt: the llms.txt header, how to call the tool, and every command in
    full (the same sections as SKILL.md)."""
    return _full(app)[0]


# roff -----------------------------------------------------------------------------------

_OPTION_WORD = re.compile(r"(?<![\w.])-[\w-]*")
_ROFF_ASCII = {
    "\\": r"\e",
    "'": r"\(aq",
    "`": r"\(ga",
    "^": r"\(ha",
    "~": r"\(ti",
    "-": "-",
}


def _roff_chars(text: str, *, minus: bool) -> str:
    out = []
    for ch in text:
        o = ord(ch)
        if ch == "-" and minus:
            out.append(r"\-")
        elif ch in _ROFF_ASCII:
            out.append(_ROFF_ASCII[ch])
        elif ch == "\t":
            out.append(" ")
        elif o < 0x20 or 0x7F <= o < 0xA0 or 0xD800 <= o <= 0xDFFF:
            continue
        elif o > 0x7E:
            out.append(f"\\[u{o:04X}]")
        else:
            out.append(ch)
    return "".join(out)


def _roff(text: str, *, literal: bool = False) -> str:
    """Text for a roff line: backslashes, quotes and non-ASCII escaped, so the text is
    printed as written and never read as a request or an escape. `literal` text (flags,
    commands, values) has every hyphen as `\\-`, the character to type; in prose only
    option-like words (`--dry-run`, `-1`) do."""
    if literal:
        return _roff_chars(text, minus=True)
    out, pos = [], 0
    for match in _OPTION_WORD.finditer(text):
        out.append(_roff_chars(text[pos : match.start()], minus=False))
        out.append(_roff_chars(match.group(), minus=True))
        pos = match.end()
    out.append(_roff_chars(text[pos:], minus=False))
    return "".join(out)


def _line(text: str, *, indent: bool = False) -> str:
    """A text line: one that would start with a control character gets `\\&` first.
    Leading spaces break a filled line, so they go, unless `indent` (no-fill blocks)."""
    text = text if indent else text.lstrip(" ")
    return "\\&" + text if text.startswith((".", "'")) else text


def _arg(text: str) -> str:
    """A quoted macro argument."""
    return '"' + text.replace('"', r"\(dq") + '"'


def _paragraphs(text: str) -> list[str]:
    """Author text as roff: paragraphs kept (`.PP` between them), lines filled."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [_line(_roff(line.strip())) for line in block.splitlines() if line.strip()]
        if lines:
            if out:
                out.append(".PP")
            out.extend(lines)
    return out


def _bold(text: str) -> str:
    return rf"\fB{_roff(text, literal=True)}\fR"


def _italic(text: str) -> str:
    return rf"\fI{_roff(text, literal=True)}\fR"


def _usage_roff(words: str, usage: str) -> str:
    """A usage line: the command in bold, its placeholders in italics."""
    pieces = [_bold(words)]
    for token in usage.split():
        core = token.strip("[].")
        if core and core.upper() == core and not core.startswith("-"):
            start = token.index(core)
            pieces.append(
                _roff(token[:start], literal=True)
                + _italic(core)
                + _roff(token[start + len(core) :], literal=True)
            )
        else:
            pieces.append(_roff(token, literal=True))
    return _line(" ".join(pieces))


def _flag_tag(label: str) -> str:
    """`-d, --max-depth INTEGER RANGE` with the flags bold and the metavar italic, kept
    on one line (`\\ ` is a space roff never breaks at)."""
    out: list[str] = []
    metavar: list[str] = []
    for token in label.split(" "):
        bare = token.rstrip(",")
        if bare.startswith("-") or bare == "/":
            if metavar:
                out.append(_italic(" ".join(metavar)).replace(" ", "\\ "))
                metavar = []
            out.append("/" if bare == "/" else _bold(bare) + token[len(bare) :])
        elif token:
            metavar.append(token)
    if metavar:
        out.append(_italic(" ".join(metavar)).replace(" ", "\\ "))
    return _line(" ".join(out))


def _cli_value(value: Any) -> str:
    """A default as typed on a command line (as `--help` shows it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value and value.split() == [value] else _json(value)
    if isinstance(value, list):
        return " ".join(_cli_value(v) for v in value) if value else "(none)"
    if isinstance(value, int | float):
        return str(value)  # as Click shows it: 1.0 stays 1.0
    return _json(value)


def _param_roff(p: _Param) -> list[str]:
    tag = _italic(p.metavar) if p.kind == "argument" else _flag_tag(p.label)
    out = [".TP", _line(tag)]
    if p.help:
        out.append(_line(_roff(_sentence(p.help))))
    facts = [f"Type: {p.type}"]
    facts.append("required" if p.required else "optional")
    text = _roff("; ".join(facts))
    for words, literal in p.constraints:
        text += "; " + _roff(words)
        if literal:
            text += " " + _bold(literal) + (")" if words.count("(") > words.count(")") else "")
    text += "."
    if p.choices:
        text += " One of: " + ", ".join(_bold(_cli_value(c)) for c in p.choices) + "."
    if p.env:
        text += " Environment: " + _bold(p.env) + "."
    default = _man_default(p)
    if default is not None:
        text += rf" [default:\ {_bold(default)}]"
    out.append(_line(text))
    if p.schema is not None:
        import msgspec

        pretty = msgspec.json.format(_json(p.schema).encode(), indent=2).decode()
        out += [".IP", "JSON Schema:", ".RS", ".nf"]
        out += [_line(_roff(line, literal=True), indent=True) for line in pretty.splitlines()]
        out += [".fi", ".RE"]
    return out


def _man_default(p: _Param) -> str | None:
    """The default as `--help` would show it; a flag pair's default is the flag that
    gives it; an empty list has none to show."""
    if not p.has_default or p.default == []:
        return None
    if isinstance(p.default, bool) and p.negations:
        long_flags = [f for f in (p.flags if p.default else p.negations) if f.startswith("--")]
        return long_flags[0]
    return _cli_value(p.default)


def _flag_roff(flag: _Flag) -> list[str]:
    out = [".TP", _flag_tag(flag.label)]
    if flag.help:
        out.append(_line(_roff(_one_line(flag.help))))
    return out


def _facts_roff(title: str, facts: Sequence[tuple[str, str]]) -> list[str]:
    text = "; ".join(f"{key}: {value}" for key, value in facts)
    return [".PP", _line(rf"\fB{_roff(title)}:\fR {_roff(text)}.")]


def _command_roff(c: _Command) -> list[str]:
    spec = c.spec
    out = [f".SS {_arg(_roff(c.name, literal=True))}", _usage_roff(c.name, c.usage)]
    if spec.deprecated:
        out += [".PP", r"\fBDeprecated.\fR"]
    description = spec.description or spec.summary
    if description:
        out += [".PP", *_paragraphs(description)]
    for p in c.params:
        out += _param_roff(p)
    for flag in c.extra_flags:
        out += _flag_roff(flag)
    out += _facts_roff("Behaviour", c.behaviour)
    out += _facts_roff("Governance", c.governance)
    if spec.error_codes:
        out += [".PP", r"\fBError codes:\fR", ".RS"]
        for code, text in spec.error_codes.items():
            out += [".TP", _line(_bold(code)), _line(_roff(_one_line(text)))]
        out += [".RE"]
    examples = list(_examples(spec))
    if examples:
        out += [".PP", r"\fBExamples:\fR"]
        for line, description in examples:
            if description:
                out += [".PP", _line(_roff(_one_line(description)))]
            out += [".PP", ".RS", ".nf", _line(_roff(line, literal=True)), ".fi", ".RE"]
    return out


def _builtin_commands(app: App) -> Iterator[tuple[str, click.Command, click.Context]]:
    """The built-in groups' commands (`mcp serve`, `docs man`, ...) from their Click
    definitions, so the man page lists their flags as their `--help` does."""
    from atipkit.app import builtins

    root = _context(app.click_group, app.name)
    for name in app.builtins:
        group = builtins.group(app, name)
        group_ctx = _context(group, name, root)
        for sub in group.list_commands(group_ctx):
            command = group.get_command(group_ctx, sub)
            if command is not None and not command.hidden:
                yield name, command, _context(command, sub, group_ctx)


def _builtin_roff(app: App) -> list[str]:
    out = [
        ".SH BUILT-IN COMMANDS",
        _line(_roff(f"{app.name} also has the commands of the framework it is built with:")),
    ]
    for _group, command, ctx in _builtin_commands(app):
        words = ctx.command_path
        out += [f".SS {_arg(_roff(words, literal=True))}"]
        out.append(_usage_roff(words, " ".join(command.collect_usage_pieces(ctx))))
        if command.help:
            out += [".PP", *_paragraphs(command.help)]
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and not param.hidden:
                out += _flag_roff(_flag_of(param, ctx))
    return out


def _environment_roff(app: App, commands: list[_Command]) -> list[str]:
    from atipkit.app.schema import env_vars

    rows: dict[str, str] = {}
    global_by_dest: dict[str, str] = {}
    for option in _common_flags(app):  # the first flag of a destination is its own
        global_by_dest.setdefault((option.name or "")[len(PREFIX) :], option.opts[-1])
    for c in commands:
        own = {p.name: p for p in c.params}
        hidden = {p.name for p in c.spec.signature.params if p.marker.hidden}
        for var, name in env_vars(c.spec).items():
            if name in hidden or (var in rows and name not in own):
                continue
            if name in own:
                label = own[name].flags[-1] if own[name].flags else name
                rows[var] = f"Sets {label} of {c.name}."
            elif name in global_by_dest:
                rows.setdefault(var, f"Sets {global_by_dest[name]} for every command.")
    if app.config_enabled:
        rows[f"{app.env_prefix}_SYSTEM_CONFIG"] = (
            f"The directory of the system configuration file, instead of /etc/{app.name}."
        )
        rows["XDG_CONFIG_HOME"] = "Where the user configuration file is (default ~/.config)."
    rows["XDG_STATE_HOME"] = "Where --idempotency-key keeps its records (default ~/.local/state)."
    out = [".SH ENVIRONMENT"]
    out += _paragraphs(
        "A flag on the command line wins over its variable, which wins over the "
        "configuration files."
    )
    for var, text in rows.items():
        out += [".TP", _line(_bold(var)), _line(_roff(text))]
    return out


def _files_roff(app: App) -> list[str]:
    n = app.name
    rows: list[tuple[str, str]] = []
    if app.config_enabled:
        rows += [
            (f"/etc/{n}/config.toml, /etc/{n}/config.yaml", "System configuration."),
            (
                f"$XDG_CONFIG_HOME/{n}/config.toml, $XDG_CONFIG_HOME/{n}/config.yaml",
                "User configuration (default ~/.config).",
            ),
            (
                "pyproject.toml",
                f"Project configuration in the [tool.{n}] table, in the project root "
                "(the nearest directory up holding .git, pyproject.toml or the files below).",
            ),
            (f".{n}.toml, .{n}.yaml", "Project configuration, in the project root."),
            (".env", f"{app.env_prefix}_* variables, in the project root."),
        ]
    rows.append(
        (
            f"$XDG_STATE_HOME/{n}/idempotency/",
            "Outcomes kept for --idempotency-key, for 24 hours (default ~/.local/state).",
        )
    )
    out = [".SH FILES"]
    if app.config_enabled:
        out += _paragraphs(
            "Configuration files, lowest precedence first; a later file overrides an "
            "earlier one. Each holds global settings at the top level and a command's "
            'parameters under commands."COMMAND".'
        )
    for where, text in rows:
        out += [".TP", _line(_bold(where)), _line(_roff(text))]
    return out


def man_page(app: App) -> str:
    """A man page (roff, man(7) macros) for section 1."""
    commands = _commands(app)
    n = app.name
    summary = _one_line(app.description).split(". ")[0].rstrip(".") or f"the {n} tool"
    out = [
        rf".\" Generated by atipkit.app from the commands of {_roff(n)} {_roff(app.version)};"
        " do not edit.",
        f".TH {_arg(_roff(n.upper(), literal=True))} 1 "
        f'"" {_arg(_roff(f"{n} {app.version}", literal=True))} "User Commands"',
        ".nh",
        ".ad l",
        ".SH NAME",
        _line(f"{_roff(n, literal=True)} \\- {_roff(summary)}"),
        ".SH SYNOPSIS",
        _usage_roff(n, "[OPTIONS] COMMAND [ARGS]..."),
    ]
    for c in commands:
        out += [".br", _usage_roff(c.name, c.usage)]
    out += [".SH DESCRIPTION"]
    if app.description:
        out += _paragraphs(app.description)
        out.append(".PP")
    out += _paragraphs(
        f"With --json, every command prints one JSON envelope on standard output, for "
        f'success and failure alike: {{"ok": true, "result": ..., "meta": ...}} or '
        f'{{"ok": false, "error": {{"code", "category", "message", "suggestion", '
        f'"is_retryable"}}, "meta": ...}}. Diagnostics go to standard error. '
        f"{n} --agent prints ATIP metadata for agents; {n} COMMAND --schema prints a "
        f"command's JSON Schema and {n} COMMAND --help-agent a compact description."
    )
    if app.homepage:
        out += [".PP", _line(_roff(f"Homepage: {app.homepage}", literal=True))]
    out += [".SH OPTIONS"]
    for flag in _root_flags(app):
        out += _flag_roff(flag)
    out += [".SH COMMANDS"]
    if not commands:
        out += _paragraphs("This tool has no commands.")
    for c in commands:
        out += _command_roff(c)
    if app.builtins:
        out += _builtin_roff(app)
    out += [".SH GLOBAL OPTIONS"]
    out += _paragraphs("Every command takes these:")
    for flag in _global_flags(app):
        out += _flag_roff(flag)
    out += [".SH EXIT STATUS"]
    for value, name, meaning, action in _exit_codes():
        text = f"{meaning} {action.replace('`', '')}".strip()
        out += [".TP", _line(_bold(str(value))), _line(_roff(f"{name}: {text}"))]
    if commands:
        out += _environment_roff(app, commands)
    out += _files_roff(app)
    return "\n".join(out) + "\n"
