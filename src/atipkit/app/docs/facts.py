"""The facts every output states, read once from what the parser, `--schema`,
`--help-agent` and `--agent` read: the `Param`s, the Click commands, `schema.hints` and
`CommandSpec.atip_effects()`. The outputs format these; none of them looks at a command
itself."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click
from click.formatting import join_options

from atipkit.app.errors import ExitCode
from atipkit.app.flags import EVERY, PREFIX, global_flags

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.command import CommandSpec
    from atipkit.app.params import Param

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
class ParamFacts:
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
class FlagFacts:
    """A flag the framework gives (global, per command or the app's own), as `--help`
    shows it: the left column and the help text."""

    label: str
    flags: tuple[str, ...]
    help: str


@dataclass(frozen=True)
class CommandFacts:
    spec: CommandSpec
    usage: str
    """`[OPTIONS] PATTERN`: what follows the command's name in `--help`'s usage line."""
    params: tuple[ParamFacts, ...]
    extra_flags: tuple[FlagFacts, ...]
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


def commands(app: App) -> list[CommandFacts]:
    return [_command(spec) for spec in _visible(app)]


def _command(spec: CommandSpec) -> CommandFacts:
    from atipkit.app.schema import env_vars, hint_words, output_schema

    cmd = spec.click_command
    ctx = context(cmd, spec.name)
    env = {name: var for var, name in env_vars(spec).items()}
    by_name = {p.name: p for p in cmd.params}
    params = tuple(
        _param(p, by_name[p.name], ctx, env.get(p.name) if p.kind == "option" else None)
        for p in spec.signature.params
        if not p.marker.hidden
    )
    common = {flag for option in common_flags(spec.app) for flag in option.opts}
    extra = tuple(
        flag_of(p, ctx)
        for p in cmd.params
        if isinstance(p, click.Option)
        and (p.name or "").startswith(PREFIX)
        and not set(p.opts) & common
    )
    return CommandFacts(
        spec=spec,
        usage=" ".join(cmd.collect_usage_pieces(ctx)),
        params=params,
        extra_flags=extra,
        behaviour=tuple(_behaviour(spec)),
        governance=tuple(_governance(spec)),
        hints=tuple(hint_words(spec)),
        output_schema=output_schema(spec.signature.returns),
    )


def _param(
    p: Param, click_param: click.Parameter, ctx: click.Context, env: str | None
) -> ParamFacts:
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
    return ParamFacts(
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


def context(
    command: click.Command, name: str, parent: click.Context | None = None
) -> click.Context:
    """A context as Click makes one to run `command` (its settings: `-h` is a help flag),
    without the configuration files' defaults, which are this machine's, not the app's."""
    return click.Context(command, info_name=name, parent=parent, **command.context_settings)


def common_flags(app: App) -> list[click.Option]:
    """The flags every command has (whatever its timeout, pagination or input)."""
    return global_flags(timeout=None, envvar=app.env_prefix)


def framework_flags(app: App) -> list[click.Option]:
    """Every flag the framework gives some command (`--dry-run`, `--yes`, ...)."""
    return global_flags(EVERY, timeout=None, envvar=app.env_prefix)


def flag_of(option: click.Parameter, ctx: click.Context) -> FlagFacts:
    record = option.get_help_record(ctx)
    label, text = record if record else (", ".join(option.opts), "")
    return FlagFacts(
        label=label, flags=tuple(option.opts) + tuple(option.secondary_opts), help=text
    )


def global_flag_facts(app: App) -> list[FlagFacts]:
    """Every command's framework flags, as a command's `--help` lists them (read from the
    first command's Click command: they are the same for all)."""
    specs = list(app.walk())
    if not specs:
        ctx = click.Context(click.Command(app.name))
        return [flag_of(option, ctx) for option in common_flags(app)]
    cmd = specs[0].click_command
    ctx = context(cmd, specs[0].name)
    common = {flag for option in common_flags(app) for flag in option.opts}
    own = {p.name for p in specs[0].signature.params}
    flags = []
    for param in cmd.get_params(ctx):
        if not isinstance(param, click.Option):
            continue
        is_global = bool(set(param.opts) & common)
        is_action = not (param.name or "").startswith(PREFIX) and param.name not in own
        if is_global or is_action:
            flags.append(flag_of(param, ctx))
    return flags


def root_flags(app: App) -> list[FlagFacts]:
    """The app's own flags (`--agent`, `--version`, ...), as `app --help` lists them."""
    group = app.click_group
    ctx = context(group, app.name)
    return [flag_of(p, ctx) for p in group.get_params(ctx) if isinstance(p, click.Option)]


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


def exit_codes() -> list[tuple[int, str, str, str]]:
    """`(status, NAME, meaning, action)` for every status `ExitCode` names, in order."""
    rows = []
    for name, value in vars(ExitCode).items():
        if name.isupper() and isinstance(value, int):
            meaning, action = _EXIT_MEANINGS.get(name, (name.replace("_", " ").lower(), ""))
            rows.append((value, name, meaning, action))
    return sorted(rows)


def examples(spec: CommandSpec) -> Iterator[tuple[str, str]]:
    """`(command line, description)`: a dict's args become a line, a string is one."""
    for example in spec.examples:
        if isinstance(example, str):
            yield example, ""
        else:
            args = [str(a) for a in example.get("args", [])]
            line = shlex.join([*spec.app.name.split(), *spec.path, *args])
            yield line, str(example.get("description") or "")


# Text ----------------------------------------------------------------------------------


def json_text(value: Any) -> str:
    from atipkit.app.output import encode

    return encode(value).decode()


def one_line(text: str) -> str:
    return " ".join(text.split())


def sentence(text: str) -> str:
    """One line that ends like a sentence, so the facts after it do not run on."""
    text = one_line(text)
    return text + "." if text and text[-1].isalnum() else text
