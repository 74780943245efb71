"""The man page (roff, man(7) macros) from the facts (`facts.py`): the same flags, types
and defaults as `--help`, values shown as typed on a command line; roff-hostile text
(a leading `.` or `'`, backslashes) escaped so it renders literally."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import click

from atipkit.app.docs import facts
from atipkit.app.flags import PREFIX

if TYPE_CHECKING:
    from atipkit.app.app import App

__all__ = ["man_page"]

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
        return value if value and value.split() == [value] else facts.json_text(value)
    if isinstance(value, list):
        return " ".join(_cli_value(v) for v in value) if value else "(none)"
    if isinstance(value, int | float):
        return str(value)  # as Click shows it: 1.0 stays 1.0
    return facts.json_text(value)


def _param_roff(p: facts.ParamFacts) -> list[str]:
    tag = _italic(p.metavar) if p.kind == "argument" else _flag_tag(p.label)
    out = [".TP", _line(tag)]
    if p.help:
        out.append(_line(_roff(facts.sentence(p.help))))
    stated = [f"Type: {p.type}", "required" if p.required else "optional"]
    text = _roff("; ".join(stated))
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

        pretty = msgspec.json.format(facts.json_text(p.schema).encode(), indent=2).decode()
        out += [".IP", "JSON Schema:", ".RS", ".nf"]
        out += [_line(_roff(line, literal=True), indent=True) for line in pretty.splitlines()]
        out += [".fi", ".RE"]
    return out


def _man_default(p: facts.ParamFacts) -> str | None:
    """The default as `--help` would show it; a flag pair's default is the flag that
    gives it; an empty list has none to show."""
    if not p.has_default or p.default == []:
        return None
    if isinstance(p.default, bool) and p.negations:
        long_flags = [f for f in (p.flags if p.default else p.negations) if f.startswith("--")]
        return long_flags[0]
    return _cli_value(p.default)


def _flag_roff(flag: facts.FlagFacts) -> list[str]:
    out = [".TP", _flag_tag(flag.label)]
    if flag.help:
        out.append(_line(_roff(facts.one_line(flag.help))))
    return out


def _facts_roff(title: str, rows: Sequence[tuple[str, str]]) -> list[str]:
    text = "; ".join(f"{key}: {value}" for key, value in rows)
    return [".PP", _line(rf"\fB{_roff(title)}:\fR {_roff(text)}.")]


def _command_roff(c: facts.CommandFacts) -> list[str]:
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
            out += [".TP", _line(_bold(code)), _line(_roff(facts.one_line(text)))]
        out += [".RE"]
    examples = list(facts.examples(spec))
    if examples:
        out += [".PP", r"\fBExamples:\fR"]
        for line, description in examples:
            if description:
                out += [".PP", _line(_roff(facts.one_line(description)))]
            out += [".PP", ".RS", ".nf", _line(_roff(line, literal=True)), ".fi", ".RE"]
    return out


def _builtin_commands(app: App) -> Iterator[tuple[str, click.Command, click.Context]]:
    """The built-in groups' commands (`mcp serve`, `docs man`, ...) from their Click
    definitions, so the man page lists their flags as their `--help` does."""
    from atipkit.app import builtins

    root = facts.context(app.click_group, app.name)
    for name in app.builtins:
        group = builtins.group(app, name)
        group_ctx = facts.context(group, name, root)
        for sub in group.list_commands(group_ctx):
            command = group.get_command(group_ctx, sub)
            if command is not None and not command.hidden:
                yield name, command, facts.context(command, sub, group_ctx)


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
                out += _flag_roff(facts.flag_of(param, ctx))
    return out


def _environment_roff(app: App, commands: list[facts.CommandFacts]) -> list[str]:
    from atipkit.app.schema import env_vars

    rows: dict[str, str] = {}
    global_by_dest: dict[str, str] = {}
    for option in facts.common_flags(app):  # the first flag of a destination is its own
        global_by_dest.setdefault(
            (option.name or "")[len(PREFIX) :], f"Sets {option.opts[-1]} for every command."
        )
    for option in facts.framework_flags(app):  # --no-input: only where a command may ask
        global_by_dest.setdefault(
            (option.name or "")[len(PREFIX) :], f"Sets {option.opts[-1]} where a command takes it."
        )
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
                rows.setdefault(var, global_by_dest[name])
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
    commands = facts.commands(app)
    n = app.name
    summary = facts.one_line(app.description).split(". ")[0].rstrip(".") or f"the {n} tool"
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
    for flag in facts.root_flags(app):
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
    for flag in facts.global_flag_facts(app):
        out += _flag_roff(flag)
    out += [".SH EXIT STATUS"]
    for value, name, meaning, action in facts.exit_codes():
        text = f"{meaning} {action.replace('`', '')}".strip()
        out += [".TP", _line(_bold(str(value))), _line(_roff(f"{name}: {text}"))]
    if commands:
        out += _environment_roff(app, commands)
    out += _files_roff(app)
    return "\n".join(out) + "\n"
