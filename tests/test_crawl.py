"""`atip crawl` end to end: jq from a real local apt repository (the issue's acceptance
test), idempotence and the state file, `--check`, progress notes and the lines for people,
the report as the envelope's result, and bad manifests refused with their file and field,
each failure with its exit status. Other sources: test_crawl_sources.py; archives:
test_crawl_archive.py; template merging: test_crawl_shim.py."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import atipkit
from atipkit.cli import cli
from atipkit.crawl import ManifestError, find_manifests, load_manifest
from atipkit.crawl.platforms import host
from atipkit.crawl.state import STATE_FILE
from atipkit.validation import validate_file
from tests.servers import require

EXAMPLES = Path(__file__).parent.parent / "examples" / "crawl"

HELP_SCRIPT = """#!/bin/sh
case "$1" in
  --help|-h) cat <<'EOF'
Usage: {name} [OPTIONS] FILE

Frobnicate files, {flavour}.

Options:
  -v, --verbose      Say more
  --level N          Compression level
EOF
  ;;
  --version) echo "{name} {version}";;
esac
"""


pytestmark = pytest.mark.usefixtures("isolated_home")


def help_script(name: str = "tool", flavour: str = "quickly", version: str = "2.3.0") -> bytes:
    """A program whose --help lists two options: inference has something to read."""
    return HELP_SCRIPT.format(name=name, flavour=flavour, version=version).encode()


def manifest(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def run(tmp_path: Path, *args: str) -> Result:
    """`atip crawl ARGS` with the test's manifests, output and work directories, as people
    see it (progress notes on stderr, a line an artifact on stdout) unless ARGS say --json
    (the envelope on stdout, nothing on stderr)."""
    common = ["--manifests", str(tmp_path / "tools"), "--out", str(tmp_path / "out")]
    common += ["--work", str(tmp_path / "work")]
    mode = [] if "--json" in args else ["--text"]
    return CliRunner().invoke(cli, ["crawl", *args, *common, *mode], catch_exceptions=False)


def report(result: Result) -> dict[str, Any]:
    """The crawl report of a `--json` run, whether it succeeded or failed partway."""
    return json.loads(result.stdout)["result"]


def shim_name(shim: Path) -> str:
    return f"shims/sha256/{shim.name}"


def shims(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "out" / "shims" / "sha256").glob("*.json"))


def options_of(shim: Path, command: str = "") -> dict[str, list[str]]:
    doc = json.loads(shim.read_text())
    return {o["name"]: o["flags"] for o in doc["commands"][command].get("options", [])}


# -- apt: the acceptance test ---------------------------------------------------------


@pytest.fixture
def jq_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A flat apt repository holding the real jq package from apt's cache: (repo, deb)."""
    debs = sorted(glob.glob("/var/cache/apt/archives/jq_*.deb"))
    if not debs:
        message = "jq's .deb is not in /var/cache/apt/archives (apt-get download jq)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    scan = require("dpkg-scanpackages", "apt-get install dpkg-dev; .ci/run does")
    require("apt-get", "a Debian or Ubuntu machine")
    require("dpkg-deb", "apt-get install dpkg")
    repo = tmp_path / "repo"
    repo.mkdir()
    deb = Path(shutil.copy(debs[-1], repo))
    packages = subprocess.run([scan, "."], cwd=repo, capture_output=True, check=True).stdout
    (repo / "Packages").write_bytes(packages)
    return repo, deb


def jq_manifest(tmp_path: Path, repo: Path) -> None:
    """The example manifest, with the local repository as its apt source."""
    text = (EXAMPLES / "jq.yaml").read_text()
    text = text.replace(
        "    package: jq\n",
        f'    package: jq\n    sources: ["deb [trusted=yes] file:{repo} ./"]\n',
    )
    text = text.replace("platforms: [linux-amd64, linux-arm64]", f"platforms: [{host()}]")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "jq.yaml").write_text(text)


def test_jq_from_a_local_apt_repository(tmp_path, jq_repository):
    repo, deb = jq_repository
    jq_manifest(tmp_path, repo)
    unpacked = tmp_path / "independent"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(unpacked)], check=True)
    expected = hashlib.sha256((unpacked / "usr" / "bin" / "jq").read_bytes()).hexdigest()

    result = run(tmp_path, "jq")

    assert result.exit_code == 0, result.stderr
    [shim] = shims(tmp_path)
    assert shim.name == f"{expected}.json"
    assert sorted((tmp_path / "out").rglob("*.json")) == [shim]  # `atip validate out` works
    report = validate_file(shim)
    assert report.ok, [p.format() for p in report.problems]
    assert report.kind == "shim"
    doc = json.loads(shim.read_text())
    version = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert doc["binary"] == {
        "hash": f"sha256:{expected}",
        "name": "jq",
        "version": version,
        "platform": host(),
    }
    assert doc["version"] == version
    assert doc["trust"] == {"source": "community", "verified": False}
    assert doc["_generation"]["source"] == f"apt:jq={version}"
    assert doc["_generation"]["inputs"] == ["--help", "man"]
    flags = {f for fs in options_of(shim).values() for f in fs}
    assert {"--slurp", "-s", "--arg", "--tab", "--raw-output"} <= flags  # help and man page
    root = doc["commands"][""]
    assert [a["name"] for a in root["arguments"]] == ["filter", "files"]  # the template's
    assert root["effects"]["network"] is False
    assert f"[jq]   Hash: sha256:{expected}" in result.stderr
    assert f"[jq]   Generated: shims/sha256/{expected}.json" in result.stderr
    # for people: one tab-separated line an artifact
    assert result.stdout == f"jq\tapt\t{host()}\t{version}\tgenerated\t{shim_name(shim)}\n"


def test_a_second_crawl_downloads_and_writes_nothing(tmp_path, jq_repository):
    jq_manifest(tmp_path, jq_repository[0])
    assert run(tmp_path, "jq").exit_code == 0
    [shim] = shims(tmp_path)
    before = (shim.read_bytes(), shim.stat().st_mtime_ns)

    again = run(tmp_path, "jq")

    assert again.exit_code == 0, again.stderr
    assert "Downloading" not in again.stderr
    assert "[jq] No new version:" in again.stderr
    assert f"[jq] Unchanged {host()}:" in again.stderr
    assert shims(tmp_path) == [shim]
    assert (shim.read_bytes(), shim.stat().st_mtime_ns) == before
    assert not list((tmp_path / "work" / "tmp").iterdir())  # downloads are not kept

    (tmp_path / "out" / STATE_FILE).unlink()  # without the state: downloaded, found known
    third = run(tmp_path, "jq")
    assert third.exit_code == 0, third.stderr
    assert "Downloading" in third.stderr
    assert f"[jq]   Known: shims/sha256/{shim.name}" in third.stderr
    assert (shim.read_bytes(), shim.stat().st_mtime_ns) == before


def test_check_says_what_is_new_without_downloading(tmp_path, jq_repository):
    jq_manifest(tmp_path, jq_repository[0])

    checked = run(tmp_path, "jq", "--check", "--json")

    assert checked.exit_code == 0, checked.stderr
    answer = json.loads(checked.stdout)
    assert answer["ok"] is True
    assert answer["meta"]["tool"] == "atip.crawl"
    assert checked.stderr == ""  # progress is for people
    found = answer["result"]
    assert (found["ok"], found["check"], found["out"]) == (True, True, str(tmp_path / "out"))
    [tool] = found["tools"]
    [artifact] = tool["artifacts"]
    assert artifact["status"] == "new"
    assert artifact["origin"].startswith("apt:jq=")
    assert artifact["digest"].startswith("sha256:")
    assert shims(tmp_path) == []
    assert not (tmp_path / "work" / "tmp").exists()  # nothing was fetched to unpack

    for_people = run(tmp_path, "jq", "--check")
    assert f"[jq] New {host()}:" in for_people.stderr
    version = artifact["version"]
    assert for_people.stdout == f"jq\tapt\t{host()}\t{version}\tnew\t\n"
    assert shims(tmp_path) == []

    assert run(tmp_path, "jq").exit_code == 0
    after = report(run(tmp_path, "jq", "--check", "--json"))
    assert after["tools"][0]["artifacts"][0]["status"] == "unchanged"


def test_an_apt_package_that_does_not_exist_is_skipped(tmp_path, jq_repository):
    repo, _ = jq_repository
    manifest(
        tmp_path / "tools",
        "nosuch",
        f"""
        name: nosuch
        sources:
          apt:
            sources: ["deb [trusted=yes] file:{repo} ./"]
        """,
    )
    result = run(tmp_path, "nosuch")
    assert result.exit_code == 0, result.stderr
    assert f"[nosuch] Skipped {host()}: no package 'nosuch'" in result.stderr
    assert shims(tmp_path) == []


def test_apt_runs_none_of_the_configured_hooks(tmp_path, jq_repository, monkeypatch):
    """The system's configuration may run commands after every `apt-get update` (a
    desktop refreshes AppStream and signals PackageKit): not the crawler's update."""
    marker = tmp_path / "hook-ran"
    config = tmp_path / "apt.conf"
    config.write_text(
        f'APT::Update::Pre-Invoke {{ "touch {marker}"; }};\n'
        f'APT::Update::Post-Invoke {{ "touch {marker}"; }};\n'
    )
    monkeypatch.setenv("APT_CONFIG", str(config))
    jq_manifest(tmp_path, jq_repository[0])
    assert run(tmp_path, "jq", "--check").exit_code == 0
    assert not marker.exists()
    plain = tmp_path / "plain"  # the same configuration does run it in a plain update
    (plain / "lists" / "partial").mkdir(parents=True)
    (plain / "sources.d").mkdir()
    (plain / "sources.list").touch()
    options = [
        f"Dir::State={plain}",
        f"Dir::Cache={plain}",
        f"Dir::Etc::SourceList={plain / 'sources.list'}",
        f"Dir::Etc::SourceParts={plain / 'sources.d'}",
        "Debug::NoLocking=1",
    ]
    argv = ["apt-get", *(f"-o{o}" for o in options), "update", "-q"]
    subprocess.run(argv, capture_output=True, check=True)
    assert marker.exists()


# -- the package's man page ----------------------------------------------------------

BULLETED_PAGE = r""".TH JQ 1 "2026" "jq 1.7" "User Commands"
.SH NAME
jq \- Command\-line JSON processor
.SH INVOKING JQ
.IP \(bu 4
\fB\-\-slurp\fR/\fB\-s\fR:
.RS 4
.PP
Read the entire input stream into a large array.
.RE
.IP \(bu 4
\fB\-\-compact\-output\fR / \fB\-c\fR:
.RS 4
.PP
Compact output.
.RE
.IP \(bu 4
\fB\-\-indent n\fR:
.RS 4
.PP
Use the given number of spaces for indentation.
.RE
"""

JUSTIFIED_PAGE = r""".TH SYSTEMCTL 1 "2026" "systemd 257" "systemctl"
.SH NAME
systemctl \- control the service manager
.SH SYNOPSIS
.B systemctl
[\fB\-q\fR] \fIcommand\fR [\fIunit\fR...]
.SH COMMANDS
Systemctl may be used to introspect and control the state of the "systemd" system and
service manager. Please refer to systemd(1) for an introduction into the basic concepts
and functionality this tool manages.
.PP
.TP
.B start
Start (activate) one or more units, which are remembered for every later
reconfiguration of the manager and every extraordinarily long subsequent line.
.TP
.B stop
Stop (deactivate) one or more units.
.SH OPTIONS
.TP
.B \-q
Quiet.
"""


def silent_program(folder: Path, name: str) -> Path:
    """A program that prints nothing, whatever it is asked: all there is is its page."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_a_bulleted_man_page_file_adds_options_and_spellings(tmp_path: Path):
    """Pages converted from Markdown list options as bullets; the crawler's page file
    (`man_file`, compressed as packages ship it) is read as `atip scan --infer` reads one."""
    import gzip

    from atipkit.infer.generate import generate_shim
    from atipkit.infer.helptext import ParsedHelp, ParsedOption
    from atipkit.infer.manpage import merge, read_man_file

    require("groff", "apt-get install groff-base")
    page_file = tmp_path / "pages" / "jq.1.gz"
    page_file.parent.mkdir()
    page_file.write_bytes(gzip.compress(BULLETED_PAGE.encode()))
    read = read_man_file(page_file, "jq")
    assert read is not None
    page = read.help
    assert [(o.flags, o.metavar) for o in page.options] == [
        (["--slurp", "-s"], None),
        (["--compact-output", "-c"], None),
        (["--indent"], "n"),
    ]
    assert page.options[0].description == "Read the entire input stream into a large array."
    helped = ParsedHelp(options=[ParsedOption(flags=["-s"], description="slurp")])
    merge(helped, page)
    assert [(o.name, o.flags) for o in helped.options] == [
        ("slurp", ["-s", "--slurp"]),  # the help's option, with the page's spelling
        ("compact-output", ["--compact-output", "-c"]),
        ("indent", ["--indent"]),
    ]
    assert helped.options[0].description == "slurp"  # the help's words stay
    exe = silent_program(tmp_path / "bin", "jq")
    shim = generate_shim(str(exe), man_file=str(page_file))
    assert shim.description == "Command-line JSON processor"
    assert [o.flags for o in shim.commands[""].options] == [
        ["--slurp", "-s"],
        ["--compact-output", "-c"],
        ["--indent"],
    ]


@pytest.mark.parametrize("where", ["man_file", "installed"])
def test_a_page_is_rendered_unjustified(tmp_path: Path, monkeypatch, where: str):
    """The crawler's page file (`man_file`) and the page installed for the name (`atip
    gen`) go through groff left-adjusted and unhyphenated, as `atip scan --infer`'s pages
    do: justified prose in a listing is not read as a command. (A denied command is
    described from its page alone, its listing included.)"""
    from atipkit.infer.generate import generate_shim

    require("groff", "apt-get install groff-base")
    pages = tmp_path / "man"
    (pages / "man1").mkdir(parents=True)
    page_file = pages / "man1" / "systemctl.1"
    page_file.write_text(JUSTIFIED_PAGE)
    exe = silent_program(tmp_path / "bin", "systemctl")
    if where == "installed":
        monkeypatch.setenv("MANPATH", str(pages))
        shim = generate_shim(str(exe))
    else:
        shim = generate_shim(str(exe), man_file=str(page_file))
    assert shim.description == "control the service manager"
    assert set(shim.commands) == {"start", "stop"}
    for command in ("start", "stop"):  # denied: the page is all there is, claimed per command
        assert atipkit.effective_effects(shim, command).destructive is True


def test_a_tool_asked_for_help_is_never_labelled_man_page(tmp_path: Path):
    """A tool that was run for its help and said nothing, with a thin page merged in, was
    asked: its shim is not labelled as made from the page alone (`man-page` means nothing
    of the tool was run)."""
    from atipkit.infer.generate import generate_shim, shim_from_page
    from atipkit.infer.helptext import ParsedHelp

    require("groff", "apt-get install groff-base")
    page_file = tmp_path / "quiet.1"
    page_file.write_text('.TH QUIET 1 "2026" "quiet 1.0"\n.SH NAME\nquiet \\- say nothing\n')
    exe = silent_program(tmp_path / "bin", "quiet")
    from_file = generate_shim(str(exe), man_file=str(page_file))
    given = generate_shim(str(exe), man=False, page=ParsedHelp(description="say nothing"))
    for shim in (from_file, given):
        assert shim.description == "say nothing"  # the page was merged
        assert shim.extensions["_generation"]["method"] == "help-parsing+man"
    alone = shim_from_page("quiet", "sha256:" + "0" * 64, ParsedHelp(description="say nothing"))
    assert alone.extensions["_generation"]["method"] == "man-page"


# -- the command line -----------------------------------------------------------------


def error_of(result: Result) -> dict[str, Any]:
    """The error of a `--json` run; its exit status is the one the error states."""
    error = json.loads(result.stdout)["error"]
    assert result.exit_code == error["exit_code"]
    return error


def test_a_tool_or_all_but_not_both(tmp_path):
    manifest(tmp_path / "tools", "t", "name: t\nsources: {url: {version: '1', platforms: {}}}")
    assert run(tmp_path).exit_code == 2
    both = run(tmp_path, "t", "--all")
    assert both.exit_code == 2
    assert both.stderr.startswith("error: name one TOOL, or --all [E1001]\n")
    assert both.stdout == ""
    assert error_of(run(tmp_path, "--json"))["message"] == "name one TOOL, or --all"


def test_a_missing_manifest_is_not_found(tmp_path):
    (tmp_path / "tools").mkdir()
    error = error_of(run(tmp_path, "nothere", "--json"))
    assert (error["exit_code"], error["code"]) == (10, "E3001")
    assert error["message"] == (
        f"{tmp_path / 'tools'}: no manifest for 'nothere' (looked for nothere.yaml and nothere.yml)"
    )
    assert error["details"] == {"tool": "nothere"}
    (tmp_path / "tools").rmdir()
    gone = error_of(run(tmp_path, "--all", "--json"))
    assert (gone["exit_code"], gone["message"]) == (
        10,
        f"{tmp_path / 'tools'}: no such directory (tool manifests)",
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "param", "message"),
    [
        (["t", "--platform", "linux-x86_64"], "platform", "unknown platform 'linux-x86_64'"),
        (["t", "--github-api", "ftp://api.test"], "github_api", "'ftp://api.test'"),
        (["t", "--max-download", "0"], "max_download", "0"),
        (["a b"], "tool", "'a b' is not a tool name"),
    ],
)
def test_bad_values_are_usage_errors_naming_the_parameter(tmp_path, args, param, message):
    manifest(tmp_path / "tools", "t", "name: t\nsources: {url: {version: '1', platforms: {}}}")
    result = CliRunner().invoke(
        cli, ["crawl", "--manifests", str(tmp_path / "tools"), "--json", *args]
    )
    error = error_of(result)
    assert (error["exit_code"], error["code"]) == (2, "E1002")
    assert error["details"]["param"] == param
    assert message in error["message"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: t\nsources: [oops\n", "t.yaml: line 3, column 1: not valid YAML"),
        ("- just\n- a list\n", "t.yaml: expected a mapping with name, sources and template"),
        (
            "name: t\nsources: {github: {repo: 5, asset_patterns: {}}}\n",
            "t.yaml: sources.github.repo: expected `str`, got `int`",
        ),
        (
            "name: t\nsources: {github: {asset_patterns: {}}}\n",
            "t.yaml: sources.github.repo: required",
        ),
        (
            "name: t\nsources: {dnf: {package: t}}\n",
            "t.yaml: sources.dnf: unknown source (named by the RFC, not crawled yet); the "
            "crawler reads apt, chocolatey, github, homebrew, npm, pypi, scoop, url",
        ),
        (
            "name: t\nsources: {homebrew: {formula: t, tap: x}}\n",
            "t.yaml: sources.homebrew.tap: unknown field",
        ),
        ("name: t\nsources: {apt: {pakage: t}}\n", "t.yaml: sources.apt.pakage: unknown field"),
        ("name: t\nsources: {}\n", "t.yaml: sources: at least one source is needed"),
        (
            "name: other\nsources: {apt: {}}\n",
            "t.yaml: name: 'other' differs from the file's name 't'",
        ),
        (
            "name: t\nsources: {apt: {platforms: [linux-x86_64]}}\n",
            "t.yaml: sources.apt.platforms: unknown platform 'linux-x86_64'",
        ),
        (
            "name: t\nsources: {apt: {platforms: [darwin-arm64]}}\n",
            "t.yaml: sources.apt.platforms: apt packages are Linux binaries, not darwin-arm64",
        ),
        (
            "name: t\nsources: {url: {version: 1.10, platforms: {}}}\n",
            "t.yaml: sources.url.version: expected `str`, got `float` (quote it",
        ),
        (
            "name: t\nsources: {npm: {registry: 'ftp://x'}}\n",
            "t.yaml: sources.npm.registry: expected an http(s) URL",
        ),
        (
            "name: t\nsources: {url: {version: '1', binary_path: ../x, platforms: {}}}\n",
            "t.yaml: sources.url.binary_path: a relative glob inside the package",
        ),
        (
            "name: t\nsources: {apt: {package: '-oDebug::x=1'}}\n",
            "t.yaml: sources.apt.package: '-oDebug::x=1' is not a valid package name for apt",
        ),
        (
            "name: t\nsources: {pypi: {script: '../x'}}\n",
            "t.yaml: sources.pypi.script: '../x' is not a valid script name for pypi",
        ),
        (
            "name: t\nsources: {apt: {}}\ntemplate: '{\"commands\": '\n",
            "t.yaml: template: not JSON: line 1, column 14",
        ),
        (
            "name: t\nsources: {apt: {}}\ntemplate: '[1]'\n",
            "t.yaml: template: expected a JSON object",
        ),
        (
            "name: t\nsources: {apt: {}}\ntemplate: {binary: {name: t}}\n",
            "t.yaml: template: 'binary' is written by the crawler",
        ),
        (
            "name: t\nsources: {apt: {}}\ntemplate: {commands: {'': {description: d, options: "
            "[{name: x, flags: [x], type: boolean}]}}}\n",
            "t.yaml: template: "
            "$.commands[\"\"].options[0].flags: expected a list of strings starting with '-'",
        ),
    ],
)
def test_a_bad_manifest_is_one_line_naming_file_and_field(tmp_path, text, expected):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "t.yaml").write_text(text)
    result = run(tmp_path, "t", "--json")
    error = error_of(result)
    assert (error["exit_code"], error["code"]) == (65, "E1003")
    assert "\n" not in error["message"]
    assert expected in error["message"]
    assert error["message"].startswith(str(tmp_path / "tools" / "t.yaml"))
    assert error["details"]["file"] == str(tmp_path / "tools" / "t.yaml")


def test_a_template_nested_5000_deep_is_one_line_not_a_crash(tmp_path):
    """json.loads raised RecursionError, which the manifest reader did not catch."""
    (tmp_path / "tools").mkdir()
    deep = "[" * 5000 + "]" * 5000
    (tmp_path / "tools" / "t.yaml").write_text(
        f"name: t\nsources: {{apt: {{}}}}\ntemplate: '{deep}'\n"
    )
    error = error_of(run(tmp_path, "t", "--json"))
    assert (error["exit_code"], error["code"]) == (65, "E1003")
    assert "template: not JSON: line 1, column 65: JSON is nested too deeply" in error["message"]


def test_one_bad_manifest_stops_all_before_anything_is_crawled(tmp_path):
    manifest(
        tmp_path / "tools", "good", "name: good\nsources: {url: {version: '1', platforms: {}}}"
    )
    manifest(tmp_path / "tools", "bad", "name: bad\nsources: {url: {}}")
    result = run(tmp_path, "--all")
    assert result.exit_code == 65
    assert "bad.yaml: sources.url.version: required [E1003]" in result.stderr
    assert "[good]" not in result.stderr
    assert result.stdout == ""


def test_the_example_manifests_load():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        loaded = load_manifest(path)
        assert loaded.name == path.stem
        assert loaded.template is not None


def test_yml_and_yaml_for_one_tool_is_ambiguous(tmp_path):
    manifest(tmp_path / "tools", "t", "name: t\nsources: {apt: {}}")
    (tmp_path / "tools" / "t.yml").write_text("name: t\nsources: {apt: {}}")
    with pytest.raises(ManifestError, match=r"two manifests for 't' \(\.yaml and \.yml\)"):
        find_manifests(tmp_path / "tools")


def test_without_pyyaml_it_names_the_extra(tmp_path):
    """PyYAML hidden from the import system of a real `atip crawl` process."""
    manifest(tmp_path / "tools", "t", "name: t\nsources: {url: {version: '1', platforms: {}}}")
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class _Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'yaml':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _Hide())\n"
    )
    path = os.pathsep.join(filter(None, [str(hide), os.environ.get("PYTHONPATH")]))
    process = subprocess.run(
        [sys.executable, "-m", "atipkit", "crawl", "t", "--manifests", str(tmp_path / "tools")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        cwd=tmp_path,
        timeout=30,
    )
    assert process.returncode == 40, process.stderr
    error = json.loads(process.stdout)["error"]
    assert error["code"] == "E4010"
    assert "PyYAML" in error["message"]
    assert error["suggestion"]["fix"] == "Install it: pip install 'atipkit[crawl]'"
    assert not (tmp_path / "registry-src").exists()
