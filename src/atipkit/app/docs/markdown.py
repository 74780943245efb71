"""SKILL.md, llms.txt and llms-full.txt: Markdown from the facts (`facts.py`).

Values are JSON, as `--schema` states them; llms.txt links each command to its section of
llms-full.txt (`llms-full.txt#anchor`), so the index works when both files are published
side by side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from atipkit.app.docs import facts
from atipkit.app.errors import ExitCode

if TYPE_CHECKING:
    from atipkit.app.app import App

__all__ = ["llms_full_txt", "llms_txt", "skill_md"]


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


def _cell(text: str) -> str:
    return facts.one_line(text).replace("|", "\\|")


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
    doc.lines.extend(
        f"- {_code(f.label)}: {facts.one_line(f.help)}" for f in facts.global_flag_facts(app)
    )
    doc.heading(level + 1, "Exit codes")
    rows = ["| Status | Name | Meaning | What to do |", "|---|---|---|---|"]
    rows += [
        f"| {value} | {name} | {_cell(meaning)} | {_cell(action)} |"
        for value, name, meaning, action in facts.exit_codes()
    ]
    doc.block(rows)


def _param_line(p: facts.ParamFacts) -> str:
    where = f"argument {_code(p.metavar)}" if p.kind == "argument" else _code(p.label)
    stated = [p.type]
    stated.append("required" if p.required else "optional")
    if p.has_default:
        stated.append(f"default {_code(facts.json_text(p.default))}")
    if p.choices:
        stated.append("one of " + ", ".join(_code(facts.json_text(c)) for c in p.choices))
    stated += [_md_constraint(words, literal) for words, literal in p.constraints]
    if p.env:
        stated.append(f"env {_code(p.env)}")
    line = f"- {_code(p.name)} ({where}): {'; '.join(stated)}."
    if p.help:
        line += " " + facts.sentence(p.help)
    if p.schema is not None:
        line += f" Schema: {_code(facts.json_text(p.schema))}"
    return line


def _md_constraint(words: str, literal: str) -> str:
    if not literal:
        return words
    text = f"{words} {_code(literal)}"
    return text + ")" if words.count("(") > words.count(")") else text


def _command_md(doc: _Markdown, c: facts.CommandFacts, level: int) -> str:
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
            + [f"- {_code(f.label)}: {facts.one_line(f.help)}" for f in c.extra_flags]
        )
    if c.output_schema is not None:
        doc.heading(sub, "Result")
        doc.block([f"`result` matches {_code(facts.json_text(c.output_schema))}."])
    doc.heading(sub, "Behaviour")
    doc.block(f"- {key}: {value}" for key, value in c.behaviour)
    doc.heading(sub, "Governance")
    doc.block(f"- {key}: {value}" for key, value in c.governance)
    if spec.error_codes:
        doc.heading(sub, "Error codes")
        rows = ["| Code | Meaning |", "|---|---|"]
        rows += [f"| {_cell(code)} | {_cell(text)} |" for code, text in spec.error_codes.items()]
        doc.block(rows)
    examples = list(facts.examples(spec))
    if examples:
        doc.heading(sub, "Examples")
        for line, description in examples:
            if description:
                doc.block(_prose(description))
            doc.block(_fenced(line, "sh"))
    return anchor


def _index(c: facts.CommandFacts) -> str:
    hints = f" [{', '.join(c.hints)}]" if c.hints else ""
    return f"{facts.one_line(c.spec.summary) or c.path}{hints}"


def _reference(
    doc: _Markdown, app: App, commands: list[facts.CommandFacts], level: int
) -> list[str]:
    """The commands section: an index, then one section a command; their anchors."""
    doc.heading(level, "Commands")
    if not commands:
        doc.block(["This tool has no commands."])
        return []
    doc.block(f"- {_code(c.name)}: {_index(c)}" for c in commands)
    groups = _groups(app)
    if groups:
        doc.block(
            ["Command groups:", ""] + [f"- {_code(n)}: {facts.one_line(h)}" for n, h in groups]
        )
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


def _skill_description(app: App, commands: list[facts.CommandFacts]) -> str:
    """What the tool does and when to reach for it, at most 1024 characters (the Agent
    Skills limit), without anything that looks like an XML tag."""
    what = facts.one_line(app.description).rstrip(".") or f"The {app.name} command-line tool"
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
    commands = facts.commands(app)
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
    stated = [f"Version {app.version}."]
    if app.homepage:
        stated.append(f"Homepage: <{app.homepage}>.")
    if app.permissions:
        scopes = "; ".join(
            f"{_code(scope)}: {level if isinstance(level, str) else ', '.join(level)}"
            for scope, level in app.permissions.items()
        )
        stated.append(f"Permissions it needs: {scopes}.")
    doc.block([" ".join(stated)])


def _llms_head(doc: _Markdown, app: App) -> None:
    doc.heading(1, app.name)
    summary = facts.one_line(app.description) or f"The {app.name} command-line tool."
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


def _full(app: App) -> tuple[str, list[facts.CommandFacts], list[str]]:
    commands = facts.commands(app)
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
