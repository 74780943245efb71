"""SKILL.md, llms.txt, llms-full.txt and the man page of `atipkit.app.docs`, checked
against the surfaces they must agree with: `--help`, `--schema`, a YAML parser, a Markdown
parser, and groff rendering the page as `man` would."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest
import yaml
from click.testing import CliRunner

from atipkit.app import App, Argument, ExitCode
from atipkit.app import docs as app_docs
from atipkit.app.flags import PREFIX, global_flags
from atipkit.app.schema import env_vars
from tests.apps.docs_app import app

ROOT = Path(__file__).parent.parent
RENDER = {
    "skill": app_docs.skill_md,
    "llms": app_docs.llms_txt,
    "llms-full": app_docs.llms_full_txt,
    "man": app_docs.man_page,
}
SPECS = [spec for spec in app.walk() if not spec.hidden]
GROFF = shutil.which("groff")
needs_groff = pytest.mark.skipif(
    GROFF is None,
    reason="groff is not installed (Debian: apt-get install groff-base); the man page "
    "cannot be rendered here",
)


@pytest.fixture(scope="module")
def out() -> dict[str, str]:
    return {name: render(app) for name, render in RENDER.items()}


def unroff(text: str) -> str:
    """The raw page with the hyphen escapes undone: enough to find a flag in it."""
    return text.replace("\\-", "-")


def groff(page: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert GROFF is not None
    return subprocess.run(
        [GROFF, "-man", "-Tutf8", "-ww", *extra],
        input=page,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def man_text(out: dict[str, str]) -> str:
    """The page as `man` shows it: plain text, one wide line a paragraph."""
    if GROFF is None:
        pytest.skip("groff is not installed (Debian: apt-get install groff-base)")
    done = groff(out["man"], "-rLL=250n", "-P-cbou")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def squash(text: str) -> str:
    return " ".join(text.split())


def md_section(text: str, spec_name: str) -> str:
    """A command's section of SKILL.md or llms-full.txt."""
    start = text.index(f"\n### {spec_name}\n")
    end = text.find("\n### ", start + 1)
    return text[start : end if end != -1 else len(text)]


def man_sections(rendered: str) -> dict[str, str]:
    """The `.SS` subsections of the rendered page (headings indented by three spaces)."""
    parts: dict[str, str] = {}
    current = None
    for line in rendered.splitlines():
        if re.match(r"^   \S", line):
            current = line.strip()
            parts[current] = ""
        elif re.match(r"^\S", line):
            current = None
        elif current is not None:
            parts[current] += line + "\n"
    return parts


def help_rows(path: tuple[str, ...]) -> dict[str, list[tuple[str, str]]]:
    """`--help`'s option rows, `(left column, help)`, by section."""
    result = CliRunner().invoke(app.click_group, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    rows: dict[str, list[tuple[str, str]]] = {}
    section = None
    for line in result.output.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            section = line[:-1]
            rows[section] = []
        elif section and re.match(r"^  -", line):
            left, _, text = line.strip().partition("  ")
            rows[section].append((left, text.strip()))
        elif section and rows.get(section) and line.startswith("    "):
            left, text = rows[section][-1]
            rows[section][-1] = (left, f"{text} {line.strip()}".strip())
    return rows


def schema_of(path: tuple[str, ...]) -> dict:
    result = CliRunner().invoke(app.click_group, [*path, "--schema"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def own_options(spec) -> list:
    return [
        p
        for p in spec.click_command.params
        if p.param_type_name == "option"
        and not (p.name or "").startswith(PREFIX)
        and not (p.name or "").startswith("_a_")
        and p.name != "help"
        and not p.hidden
    ]


# Coverage -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", RENDER)
def test_every_visible_command_is_in_every_output_and_hidden_ones_are_not(out, name):
    text = unroff(out[name])
    for spec in SPECS:
        assert " ".join(spec.path) in text, (name, spec.path)
    assert "debug-dump" not in text
    assert "debug_dump" not in text
    assert "--secret" not in text
    assert "INTERNAL-ONLY" not in text


@pytest.mark.parametrize("name", ["skill", "llms-full", "man"])
def test_every_flag_of_every_command_is_in_its_section(out, name, man_text):
    for spec in SPECS:
        if name == "man":
            section = man_sections(man_text)[spec.display_name]
        else:
            section = md_section(out[name], spec.display_name)
        for option in own_options(spec):
            for flag in (*option.opts, *option.secondary_opts):
                assert flag in section, (name, spec.display_name, flag)
        for param in spec.click_command.params:
            if param.param_type_name == "argument":
                ctx = spec.click_command.make_context(spec.name, [], resilient_parsing=True)
                assert param.make_metavar(ctx) in section, (name, spec.display_name, param.name)
        common = {f for o in global_flags(timeout=None, envvar="X") for f in o.opts}
        for option in spec.click_command.params:
            extra = (option.name or "").startswith(PREFIX) and not set(option.opts) & common
            for flag in option.opts if extra else ():
                assert flag in section, (name, spec.display_name, flag)  # --limit, --cursor
    everywhere = man_text if name == "man" else out[name]
    for option in global_flags(timeout=None, envvar="X"):
        for flag in option.opts:
            assert flag in everywhere, (name, flag)
    for flag in ("--schema", "--help-agent", "--agent", "--dry-run", "--yes", "--no-input"):
        assert flag in everywhere, (name, flag)


def test_governance_behaviour_errors_and_examples_are_stated(out, man_text):
    purge = md_section(out["skill"], "docs-demo purge")
    for fact in (
        "- destructive: yes",
        "- network: yes",
        "- cost: high",
        "- human in the loop: yes",
        "- auth scopes: tasks:write, tasks:admin",
        "- timeout: 30 s",
        "- dry run: supported",
        "| E3201 | Nothing matched |",
        "| E2201 | The store is locked by another user |",
        "Purge month-old tasks",
        "docs-demo purge --older-than 30",
    ):
        assert fact in purge, fact
    search = md_section(out["skill"], "docs-demo search")
    assert "- max tokens: 2000" in search
    assert "- paginated: yes (page size 25)" in search
    assert "- destructive: not declared (assume it may be)" in search
    listing = md_section(out["llms-full"], "docs-demo list")
    for fact in ("- read-only: yes", "- network: no", "- dry run: not supported"):
        assert fact in listing, fact
    assert "docs-demo list --json --max-items 5" in listing  # a string example, verbatim
    assert "**Deprecated.**" in md_section(out["skill"], "docs-demo count")

    man = man_sections(man_text)
    purge_man = squash(man["docs-demo purge"])
    for fact in (
        "destructive: yes",
        "cost: high",
        "auth scopes: tasks:write, tasks:admin",
        "E3201 Nothing matched",
        "docs-demo purge --older-than 30",
    ):
        assert fact in purge_man, fact
    assert "Deprecated." in man["docs-demo count"]


def test_skill_md_lists_every_exit_status_with_its_meaning(out):
    statuses = {v for k, v in vars(ExitCode).items() if k.isupper()}
    rows = re.findall(r"^\| (\d+) \| (\w+) \| (.+?) \| (.+?) \|$", out["skill"], re.M)
    assert {int(r[0]) for r in rows} == statuses
    assert all(r[2].strip() and r[3].strip() for r in rows)
    assert ("101", "HUMAN_HANDOFF") in {(r[0], r[1]) for r in rows}


# Agreement with --help and --schema ------------------------------------------------------


@pytest.mark.parametrize("name", ["skill", "llms-full"])
def test_markdown_types_defaults_and_choices_are_the_schemas(out, name):
    for spec in SPECS:
        schema = schema_of(spec.path)["input_schema"]
        section = md_section(out[name], spec.display_name)
        for prop, body in schema["properties"].items():
            if prop == "secret":
                continue  # hidden: --schema states it, the docs leave it out as --help does
            line = next(x for x in section.splitlines() if x.startswith(f"- `{prop}` ("))
            facts = line.split("): ", 1)[1]
            required = prop in schema.get("required", [])
            assert ("; required" in facts) is required, line
            if "default" in body:
                assert f"default `{json.dumps(body['default'], separators=(',', ':'))}`" in facts
            else:
                assert "default" not in facts.split(".")[0], line
            target = body.get("anyOf", [body])[0]
            target = target.get("items", target) if target.get("type") == "array" else target
            for value in target.get("enum", []):
                assert f"`{json.dumps(value)}`" in facts, (line, value)
            for bound in ("minimum", "maximum"):
                if bound in target:
                    assert str(target[bound]).removesuffix(".0") in facts, (line, bound)
            if "pattern" in target:
                assert f"`{target['pattern']}`" in facts


@needs_groff
def test_man_page_shows_the_flags_and_defaults_help_shows(man_text):
    sections = man_sections(man_text)
    global_block = squash(man_text.split("\nGLOBAL OPTIONS\n", 1)[1].split("\nEXIT STATUS\n")[0])
    for spec in SPECS:
        rows = help_rows(spec.path)
        section = squash(sections[spec.display_name])
        for left, text in rows.get("Options", []):
            assert left in section, (spec.display_name, left)
            shown = re.search(r"\[default: ([^;\]]+)", text)
            if shown:
                assert f"[default: {shown.group(1)}]" in section, (spec.display_name, left)
        for left, _text in rows["Global options"]:
            assert left in global_block or left in section, (spec.display_name, left)
    root = squash(man_text.split("\nOPTIONS\n", 1)[1].split("\nCOMMANDS\n")[0])
    for left, _text in help_rows(())["Options"]:
        assert left in root, left


@needs_groff
def test_man_page_environment_and_files(out, man_text):
    environment = man_text.split("\nENVIRONMENT\n", 1)[1].split("\nFILES\n")[0]
    for spec in SPECS:
        hidden = {p.name for p in spec.signature.params if p.marker.hidden}
        for var, param in env_vars(spec).items():
            if param not in hidden:
                assert f"\n       {var}\n" in environment, var
    assert "DOCS_DEMO_LIST_SECRET" not in out["man"]
    files = squash(man_text.split("\nFILES\n", 1)[1])
    for where in (
        "/etc/docs-demo/config.toml",
        "$XDG_CONFIG_HOME/docs-demo/config.yaml",
        "[tool.docs-demo]",
        ".docs-demo.toml, .docs-demo.yaml",
        ".env",
    ):
        assert where in files, where
    heads = [line for line in man_text.splitlines() if re.match(r"^[A-Z][A-Z -]+$", line)]
    assert heads == [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "COMMANDS",
        "BUILT-IN COMMANDS",
        "GLOBAL OPTIONS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
    ]
    status = squash(man_text.split("\nEXIT STATUS\n", 1)[1].split("\nENVIRONMENT\n")[0])
    for name, value in vars(ExitCode).items():
        if name.isupper():
            assert f"{value} {name}:" in status, name
    builtins = man_sections(man_text)
    for words in ("docs-demo mcp serve", "docs-demo api export-openapi", "docs-demo docs man"):
        assert words in builtins, words
    assert "--transport [stdio|http]" in builtins["docs-demo mcp serve"]


# Formats --------------------------------------------------------------------------------


def front_matter(text: str) -> tuple[dict, str]:
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def test_skill_md_front_matter_is_yaml_with_name_and_description(out):
    meta, body = front_matter(out["skill"])
    assert meta["name"] == "docs-demo"
    description = meta["description"]
    assert isinstance(description, str)
    assert 0 < len(description) <= 1024
    assert description.startswith("Track tasks in a local store.")
    for spec in SPECS:
        assert " ".join(spec.path) in description
    assert meta["metadata"] == {"tool": "docs-demo", "version": "2.1.0"}
    assert body.lstrip("\n").startswith("# docs-demo\n")


def test_skill_md_front_matter_survives_any_name_and_description():
    nasty = (
        'Say "hi": #not-a-comment\n\ttabbed <b>bold</b> \\ back\x7f\x85 caf\u00e9 \U0001f600 '
        + "long " * 400
    )
    odd = App("My_Tool.v2--beta", version="1:2", description=nasty, config=False)

    @odd.command()
    def go(x: int) -> int:
        """Go."""
        return x

    meta, _ = front_matter(app_docs.skill_md(odd))
    assert meta["name"] == "my-tool-v2-beta"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"])
    assert len(meta["name"]) <= 64
    description = meta["description"]
    assert len(description) <= 1024
    assert "<" not in description
    assert ">" not in description
    assert description.startswith('Say "hi": #not-a-comment tabbed \u2039b\u203abold')
    assert "\\ back\x7f caf\u00e9 \U0001f600 long" in description  # NEL is a space
    assert meta["metadata"]["version"] == "1:2"


def slugs(text: str) -> list[str]:
    """The anchors of a Markdown document's headings, as GitHub makes them."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    seen: dict[str, int] = {}
    out = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            base = re.sub(r"[^\w\- ]", "", tokens[i + 1].content.lower()).replace(" ", "-")
            slug = base if base not in seen else f"{base}-{seen[base]}"
            seen[base] = seen.get(base, 0) + 1
            out.append(slug)
    return out


def headings(text: str) -> list[tuple[str, str]]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    return [
        (token.tag, tokens[i + 1].content)
        for i, token in enumerate(tokens)
        if token.type == "heading_open"
    ]


def test_llms_txt_follows_the_llmstxt_structure(out):
    pytest.importorskip("markdown_it")
    text = out["llms"]
    lines = text.splitlines()
    assert lines[0] == "# docs-demo"
    first = next(line for line in lines[1:] if line.strip())
    assert first == "> Track tasks in a local store. Every command answers in JSON with --json."
    found = headings(text)
    assert found[0] == ("h1", "docs-demo")
    assert [h for h in found[1:] if h[0] != "h2"] == []
    assert [h[1] for h in found[1:]] == ["Commands", "Optional"]
    link = re.compile(r"^- \[([^\]]+)\]\(([^)\s]+)\)(: .+)?$")
    body = text.split("\n## Commands\n", 1)[1]
    listed = []
    for line in body.splitlines():
        if line.strip() and not line.startswith("## "):
            match = link.match(line)
            assert match, line
            listed.append((match.group(1), match.group(2)))
    commands = [(name, url) for name, url in listed if url.startswith("llms-full.txt#")]
    assert [name for name, _ in commands] == [" ".join(s.path) for s in SPECS]
    anchors = set(slugs(out["llms-full"]))
    for name, url in commands:
        assert url.split("#", 1)[1] in anchors, (name, url)
    assert ("llms-full.txt", "llms-full.txt") in listed


def test_markdown_keeps_its_structure_against_hostile_descriptions(out):
    pytest.importorskip("markdown_it")
    from markdown_it import MarkdownIt

    for name in ("skill", "llms-full"):
        text = front_matter(out[name])[1] if name == "skill" else out[name]
        found = headings(text)
        assert [h for h in found if h[0] == "h1"] == [("h1", "docs-demo")]
        assert [h[1] for h in found if h[0] == "h3"][-len(SPECS) :] == [
            s.display_name for s in SPECS
        ]
        assert not any("not a heading" in h[1] for h in found)
        tokens = MarkdownIt("commonmark").parse(md_section(text, "docs-demo purge"))
        assert not [t for t in tokens if t.type == "hr"]
        inline = "\n".join(t.content for t in tokens if t.type == "inline")
        for literal in (".TH INJECTED 7", "'quoted line at the start", "# not a heading"):
            assert literal in inline, (name, literal)


# The man page through groff -------------------------------------------------------------


@needs_groff
@pytest.mark.parametrize("width", ["60n", "78n", "200n"])
def test_man_page_renders_without_warnings(out, width):
    for extra in (["-z"], []):
        done = groff(out["man"], *extra, f"-rLL={width}")
        assert done.stderr == ""
        assert done.returncode == 0


@pytest.mark.skipif(shutil.which("man") is None, reason="man (Debian: man-db) is not installed")
def test_man_reads_the_page_without_warnings(out, tmp_path):
    page = tmp_path / "docs-demo.1"
    page.write_text(out["man"], "utf-8")
    for width in ("60", "120"):
        env = {**os.environ, "MANWIDTH": width, "MANPAGER": "cat", "PAGER": "cat"}
        env["LANG"] = env["LC_ALL"] = "C.UTF-8"
        done = subprocess.run(
            ["man", "--warnings", "-l", str(page)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert done.stderr == ""
        assert done.returncode == 0
        assert "docs-demo - Track tasks in a local store" in done.stdout


@needs_groff
def test_roff_hostile_text_renders_literally(out, man_text):
    raw = out["man"]
    assert [line for line in raw.splitlines() if line.startswith(".TH")] == [
        r'.TH "DOCS\-DEMO" 1 "" "docs\-demo 2.1.0" "User Commands"'
    ]
    purge = squash(man_sections(man_text)["docs-demo purge"])
    for literal in (
        ".TH INJECTED 7",
        "'quoted line at the start",
        "A backslash \\fB here\\fR and C:\\temp\\new stay as typed.",
        "# not a heading --- Dashes: --force and -x are flags; read-only is a word.",
        "~user ^caret `tick`",
        "Unicode: caf\u00e9 \u2713 \U0001f600.",
    ):
        assert literal in purge, literal
    assert "INJECTED(7)" not in man_text
    assert man_text.splitlines()[0].startswith("DOCS-DEMO(1)")
    assert "docs-demo - Track tasks in a local store" in man_text
    # Flags come out as the ASCII hyphen-minus one types, not as hyphens or dashes.
    assert "--older-than INTEGER RANGE" in purge
    assert "\u2010" not in man_text
    assert "\u2212" not in man_text
    assert "docs-demo list --priority high --tag work" in squash(man_text)


# Determinism and the CLI ----------------------------------------------------------------

_HASH_ALL = """
import hashlib, sys
from atipkit.app import docs
from tests.apps.docs_app import app
for render in (docs.skill_md, docs.llms_txt, docs.llms_full_txt, docs.man_page):
    print(hashlib.sha256(render(app).encode()).hexdigest())
"""


def test_outputs_are_deterministic(out, tmp_path):
    for name, render in RENDER.items():
        assert render(app) == out[name], name
    expected = [hashlib.sha256(out[n].encode()).hexdigest() for n in RENDER]
    config = tmp_path / "config" / "docs-demo"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('output = "json"\n[commands.list]\nlimit = 7\n')
    for seed in ("1", "2"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "HOME": str(tmp_path),
            "DOCS_DEMO_LIST_LIMIT": "3",
            # this interpreter's atipkit, not whichever one is installed
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        done = subprocess.run(
            [sys.executable, "-c", _HASH_ALL],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == expected, seed


@pytest.mark.parametrize("name", RENDER)
def test_docs_command_prints_exactly_the_document(out, name):
    result = CliRunner().invoke(app.click_group, ["docs", name])
    assert result.exit_code == 0, result.output
    assert result.output == out[name]


def test_docs_man_as_a_program_prints_the_page(out):
    done = subprocess.run(
        [sys.executable, "-m", "tests.apps.docs_app", "docs", "man"],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == out["man"].encode()


# Small apps -----------------------------------------------------------------------------


def test_an_app_without_commands():
    bare = App("bare", version="0.1", config=False)
    for render in RENDER.values():
        text = render(bare)
        assert text.endswith("\n")
        assert "bare" in text
    assert "has no commands" in app_docs.skill_md(bare)
    assert app_docs.llms_txt(bare).splitlines()[0] == "# bare"
    if GROFF is not None:
        assert groff(app_docs.man_page(bare), "-z").stderr == ""


def test_an_app_without_builtins_or_configuration():
    small = App("small", version="0.1", builtins=False, config=False)

    @small.command()
    def greet(name: Annotated[str, Argument(help="Who")]) -> str:
        """Greet someone."""
        return name

    page = app_docs.man_page(small)
    assert "BUILT-IN COMMANDS" not in page
    assert "config.toml" not in page
    assert "SMALL_SYSTEM_CONFIG" not in page
    assert "$XDG_STATE_HOME/small/idempotency/" in page
    assert r"\fBsmall greet\fR [\fIOPTIONS\fR] \fINAME\fR" in page
    if GROFF is not None:
        assert groff(page, "-z").stderr == ""


def test_only_the_chosen_builtin_groups_are_documented():
    some = App("some", version="1", builtins=("docs",), config=False)

    @some.command()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    page = unroff(app_docs.man_page(some))
    assert '.SS "some docs man"' in page
    assert "some mcp" not in page
    assert "some api" not in page
