"""The README and the site's pages are part of the product: their examples run, every
link resolves, the problem-code table is complete, and the code they describe is
lint-clean."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SOURCES = list((ROOT / "src" / "atipkit").rglob("*.py"))
# The pages of the documentation site (mkdocs.yml): their examples run as the README's do.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

# A fenced block, with the marker that may stand on the line before it:
#   <!-- docs-test: skip REASON -->  a Python block that is shown, not run (say why);
#   <!-- docs-test: run -->          a shell block that runs (shell blocks are shown by
#                                    default: most install, scan a machine or serve).
_BLOCK = re.compile(
    r"^(?:[ \t]*<!-- docs-test: (?P<marker>[a-z]+)(?P<reason>[^>]*?)\s*-->\n)?"
    r"[ \t]*```(?P<lang>[a-z]*)\n(?P<body>.*?)^[ \t]*```$",
    re.M | re.S,
)
MARKERS = {"python": {"skip"}, "sh": {"run"}}


def code_blocks() -> list[tuple[str, str, str, str, str]]:
    """`(file, language, marker, reason, block)` for every fenced block of the pages."""
    return [
        (
            str(page.relative_to(ROOT)),
            m["lang"],
            m["marker"] or "",
            (m["reason"] or "").strip(),
            m["body"],
        )
        for page in PAGES
        for m in _BLOCK.finditer(page.read_text("utf-8"))
    ]


def python_blocks() -> list[tuple[str, str]]:
    """`(file, block)` for every Python block the pages run (all but those marked skip)."""
    return [
        (page, body)
        for page, lang, marker, _, body in code_blocks()
        if lang == "python" and marker != "skip"
    ]


def shell_blocks() -> list[tuple[str, str]]:
    """`(file, block)` for every shell block marked to run."""
    return [(page, body) for page, lang, marker, _, body in code_blocks() if marker == "run"]


def _block_id(value: str) -> str:
    return value if value.endswith(".md") else value.strip().split("\n")[0]


def _isolate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The user's registry, configuration and cache stay untouched."""
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "ATIP_CACHE_DIR"):
        monkeypatch.setenv(variable, str(tmp_path / variable))


@pytest.mark.parametrize(("page", "block"), python_blocks(), ids=_block_id)
def test_python_examples_run(page: str, block: str, tmp_path, monkeypatch):
    _isolate(monkeypatch, tmp_path)
    monkeypatch.chdir(ROOT)
    exec(compile(block, page, "exec"), {})


@pytest.mark.parametrize(("page", "block"), shell_blocks(), ids=_block_id)
def test_shell_examples_marked_to_run_run(page: str, block: str, tmp_path, monkeypatch):
    """In an empty directory, `atip` the code of this checkout, as `bash -e` runs them."""
    _isolate(monkeypatch, tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "atip").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m atipkit "$@"\n')
    (bin_dir / "atip").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "REPO": str(ROOT),
    }
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{page}:\n{block}\n{done.stdout}\n{done.stderr}"


def test_code_block_markers_are_few_and_say_why():
    """A skipped example is one nobody runs: each says why, and they stay rare."""
    blocks = code_blocks()
    fences = sum(len(re.findall(r"^[ \t]*```", p.read_text("utf-8"), re.M)) for p in PAGES)
    assert 2 * len(blocks) == fences  # the pattern finds every block
    marked = [(page, lang, marker, reason) for page, lang, marker, reason, _ in blocks if marker]
    for page, lang, marker, reason in marked:
        assert marker in MARKERS.get(lang, set()), (page, lang, marker)
        assert marker != "skip" or reason, f"{page}: a skipped block must say why"
    assert sum(marker == "skip" for _, _, marker, _ in marked) <= 3
    assert shell_blocks()  # the README's registry keeper example, at least


def test_every_guide_has_examples():
    guides = sorted((ROOT / "docs" / "guides").glob("*.md"))
    assert len(guides) == 3
    assert {page for page, _ in python_blocks()} >= {str(g.relative_to(ROOT)) for g in guides}


# Links ---------------------------------------------------------------------------------

_LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+).*?\1", re.S)
# The pages the hook generates at build time (docs/hooks/reference.py): no file holds them.
GENERATED = {"reference/cli.md", "reference/errors.md"}


def _prose(text: str) -> str:
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor MkDocs gives a heading (Python-Markdown's `toc` slugify)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated one gets `_1`, `_2` as MkDocs does."""
    seen: set[str] = set()
    for match in re.finditer(r"^#{1,6} +(.+?) *#*$", _FENCE.sub("", page.read_text("utf-8")), re.M):
        anchor = base = slug(match.group(1))
        n = 0
        while anchor in seen:
            n += 1
            anchor = f"{base}_{n}"
        seen.add(anchor)
    return seen


def site_pages(root: Path = ROOT) -> set[str]:
    """The pages the site's nav reaches (mkdocs.yml), as paths below docs/."""
    nav = (root / "mkdocs.yml").read_text("utf-8").partition("\nnav:\n")[2]
    return set(re.findall(r"^\s*- (?:[^:\n]+: )?(\S+\.md)\s*$", nav, re.M))


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Every link of `page` that does not resolve: a file that is not there, a page of the
    site that the build does not produce, or a heading that is not on its page."""
    docs, pages = root / "docs", site_pages(root)
    broken = []
    for target in _LINK.findall(_prose(page.read_text("utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http(s), mailto: the tests never reach the internet
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        inside_docs = file.is_relative_to(docs.resolve())
        name = file.relative_to(docs.resolve()).as_posix() if inside_docs else ""
        if not file.is_relative_to(root.resolve()):
            broken.append(f"{target}: outside the repository")
        elif name in GENERATED:
            continue  # its headings are the code's; the strict build checks them
        elif not file.exists():
            broken.append(f"{target}: no such file")
        elif inside_docs and file.suffix == ".md" and name not in pages:
            broken.append(f"{target}: not a page of the site (mkdocs.yml's nav)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} on {file.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page: Path):
    assert broken_links(page) == []


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "docs" / "a").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nnav:\n  - Home: index.md\n  - A: a/b.md\n")
    (tmp_path / "docs" / "index.md").write_text("# Home\n")
    (tmp_path / "docs" / "a" / "b.md").write_text("# B page\n\n## `atip run`: calls\n")
    (tmp_path / "docs" / "orphan.md").write_text("# Orphan\n")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/a/b.md#atip-run-calls) [ok](https://example.org/x) `[no](code.md)`\n"
        "[ok](docs/index.md) [ok](#top)\n\n# Top\n\n"
        "[missing](docs/gone.md) [anchor](docs/a/b.md#atip-run) [orphan](docs/orphan.md)\n"
        "[out](../elsewhere.md) [self](#nowhere)\n"
        "```\n[not a link](nothing.md)\n```\n"
    )
    assert broken_links(readme, tmp_path) == [
        "docs/gone.md: no such file",
        "docs/a/b.md#atip-run: no heading #atip-run on b.md",
        "docs/orphan.md: not a page of the site (mkdocs.yml's nav)",
        "../elsewhere.md: outside the repository",
        "#nowhere: no heading #nowhere on README.md",
    ]


FAMILIES = (
    "json",
    "io",
    "schema",
    "version",
    "features",
    "binary",
    "trust",
    "flags",
    "options",
    "arguments",
    "enum",
    "default",
    "description",
    "effects",
    "auth",
    "command",
    "partial",
    "pattern",
    "openai",
    "anthropic",
    "policy",
)
CODE = re.compile(r'"((?:' + "|".join(FAMILIES) + r')\.[a-z-]+)"')


def emitted_codes() -> set[str]:
    codes: set[str] = set()
    for path in SOURCES:
        codes |= set(CODE.findall(path.read_text("utf-8")))
    # not codes: file names, and where an MCP tool's own arguments go wrong
    files = {c for c in codes if c.endswith((".json", ".py"))}
    return codes - files - {"model.invalid", "arguments.options"}


def test_every_problem_code_is_documented():
    page = (ROOT / "docs/reference/problem-codes.md").read_text("utf-8")
    codes = emitted_codes()
    assert len(codes) > 40
    missing = sorted(c for c in codes if f"`{c}`" not in page)
    assert not missing


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    result = subprocess.run(
        [ruff, "check", "src", "tests", "bench", "examples", "docs"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


# The performance page -------------------------------------------------------------------

PERFORMANCE = ROOT / "docs" / "performance.md"
_BENCH = re.compile(r"`(?:[A-Z_]+=\S+ )*python3 bench/([a-z_]+)\.py([^`]*)`")
_COMMIT = re.compile(r"`([0-9a-f]{7,40})`")


def bench_paragraphs() -> list[str]:
    """The paragraphs of the performance page that quote a figure's command."""
    return [p for p in PERFORMANCE.read_text("utf-8").split("\n\n") if _BENCH.search(p)]


def test_every_figure_names_its_script_machine_and_code():
    """Each paragraph that introduces figures gives the command, the machine and the
    commit whose code they measured, so that they can be reproduced."""
    paragraphs = bench_paragraphs()
    assert len(paragraphs) >= 15
    for paragraph in paragraphs:
        assert re.search(r"[Mm]achine|\d cores", paragraph), paragraph[:80]
        assert _COMMIT.search(paragraph), paragraph[:80]
    if (ROOT / ".git").exists():
        commits = {c for p in paragraphs for c in _COMMIT.findall(p)}
        done = subprocess.run(
            ["git", "cat-file", "--batch-check"],
            cwd=ROOT,
            input="".join(f"{c}^{{commit}}\n" for c in sorted(commits)),
            capture_output=True,
            text=True,
            check=True,
        )
        assert "missing" not in done.stdout, done.stdout


@pytest.mark.parametrize(
    ("script", "options"),
    sorted({m.groups() for m in _BENCH.finditer(PERFORMANCE.read_text("utf-8"))}),
)
def test_every_quoted_bench_command_exists(script: str, options: str):
    """The script is in bench/ and takes every option the page quotes it with."""
    path = ROOT / "bench" / f"{script}.py"
    assert path.is_file()
    flags = set(re.findall(r"(?<!\S)(--[a-z][a-z-]*)", options))
    if flags:
        source = path.read_text("utf-8")
        assert not [f for f in flags if f'"{f}"' not in source]


# Specification notes and design decisions ------------------------------------------------

_ENTRY = re.compile(r"^(\d+)(?:\.|\\\.) (\*\*.*|Moved .*)$", re.M)
_POINTER = "Moved to the [specification notes](spec-notes.md)."


def test_every_moved_decision_is_in_the_specification_notes_once():
    """A decision moved to the specification notes leaves a pointer under its number, so
    numbers stay unique across both pages and a "decision N" cited anywhere is found."""
    decisions: dict[int, str] = {}
    for number, text in _ENTRY.findall((ROOT / "docs/decisions.md").read_text("utf-8")):
        assert int(number) not in decisions, f"decision {number} twice"
        decisions[int(number)] = text
    notes = [int(n) for n, _ in _ENTRY.findall((ROOT / "docs/spec-notes.md").read_text("utf-8"))]
    assert len(notes) == len(set(notes)) >= 40
    pointers = {n for n, text in decisions.items() if text == _POINTER}
    assert pointers == set(notes)
