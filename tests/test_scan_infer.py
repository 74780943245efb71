"""`atip scan --infer`: coverage of every executable, man pages first, the deny list.

Real executables (shell scripts that log how they were run, or leave a marker), real man
pages in a temporary MANPATH, and the real `atip` in a subprocess wherever the command
line is what is tested.
"""

from __future__ import annotations

import gzip
import json
import lzma
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import atipkit
from atipkit import scan
from atipkit.cli.discover import _scan_text
from atipkit.deny import DEFAULT_SKIP, DenyList, configured
from atipkit.infer.coverage import infer_shim
from atipkit.infer.generate import generate_shim
from atipkit.infer.manpage import ManPages, manpath, page_version, read_man_file
from atipkit.probe import probe
from atipkit.registry.local import LocalRegistry
from atipkit.resolve import resolve_tool
from atipkit.trust.digest import sha256_file

HELP = """Usage: {name} [OPTIONS] FILE

Frobnicate FILE the {name} way.

Options:
  -n, --count N   How many times
  -q, --quiet     Say less
"""

PAGE = """.TH {upper} 1 "May 2024" "frobtools 1.2.3" "User Commands"
.SH NAME
{name} \\- frobnicate files from the page
.SH SYNOPSIS
.B {name}
[\\fIOPTION\\fR]... \\fIFILE\\fR
.SH OPTIONS
.TP
\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR
say more
.TP
\\fB\\-o\\fR, \\fB\\-\\-output\\fR=\\fIFILE\\fR
write the result to FILE
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolate(tmp_path, monkeypatch)


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Registry, config and cache in the test's directories, and a MANPATH of the test's
    own pages only (the machine's pages would describe the real `reboot`)."""
    values = {
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "MANPATH": str(tmp_path / "man"),
    }
    (tmp_path / "man").mkdir()
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith("ATIP_")]:
        monkeypatch.delenv(name)
    # the scripts log their runs into the test's directory, which the sandbox's
    # namespaces keep read-only (tests/test_sandbox.py tests them)
    monkeypatch.setenv("ATIP_SANDBOX", "none")
    return {**os.environ}


def logging_script(directory: Path, name: str, help_text: str | None = None) -> Path:
    """An executable that appends each run's arguments to `<directory>/../runs/<name>`,
    answers `--agent` with nothing ATIP (exit 1) and anything else with `help_text`."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o755)
    runs = directory.parent / "runs"
    runs.mkdir(exist_ok=True)
    text = help_text if help_text is not None else HELP.format(name=name)
    path = directory / name
    path.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {runs / name}\n'
        '[ "$1" = --agent ] && exit 1\n'
        f"cat <<'EOF'\n{text}EOF\n"
    )
    path.chmod(0o755)
    return path


def marker_script(directory: Path, name: str, marker: Path) -> Path:
    """An executable that leaves `marker` whenever it is run at all."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o755)
    path = directory / name
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\necho \"$0 $*\" >> '{marker}'\n")
    path.chmod(0o755)
    return path


def runs_of(bin_dir: Path, name: str) -> list[str]:
    log = bin_dir.parent / "runs" / name
    return log.read_text().splitlines() if log.exists() else []


def man_page(tmp_path: Path, name: str, text: str | None = None, *, compress: str = "") -> Path:
    section = tmp_path / "man" / "man1"
    section.mkdir(parents=True, exist_ok=True)
    data = (text or PAGE.format(name=name, upper=name.upper())).encode()
    path = section / f"{name}.1{compress}"
    if compress == ".gz":
        data = gzip.compress(data)
    elif compress == ".xz":
        data = lzma.compress(data)
    path.write_bytes(data)
    return path


def atip_scan(
    env: dict[str, str], *args: str, timeout: float = 120
) -> tuple[int, dict[str, Any], str]:
    """`atip scan --infer ARGS --json` as a real process: exit status, envelope, stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "atipkit", "scan", *args, "--json"],
        env=env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, json.loads(done.stdout), done.stderr.decode()


def shim_of(path: Path) -> dict[str, Any]:
    registry = LocalRegistry()
    return json.loads(registry.shim_path(sha256_file(path)).read_text())


# -- man pages first ---------------------------------------------------------------------------


def test_a_tool_with_a_man_page_is_inferred_from_it_without_being_run(tmp_path, env):
    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob", compress=".gz")
    helpy = logging_script(bin_dir, "helpy")  # no page: asked, in the sandbox
    code, out, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    assert code == 0
    # the probe pass asks --agent, as every scan does; inference runs nothing more
    assert runs_of(bin_dir, "frob") == ["--agent"]
    shim = shim_of(frob)
    assert shim["trust"] == {"source": "inferred", "verified": False}
    assert shim["_generation"]["method"] == "man-page"
    assert shim["_generation"]["sources"] == ["man"]
    assert shim["description"] == "frobnicate files from the page"
    assert shim["version"] == "1.2.3"  # the package the page's header names
    root = shim["commands"][""]
    assert [o["flags"] for o in root["options"]] == [["-v", "--verbose"], ["-o", "--output"]]
    assert root["options"][1]["type"] == "file"
    assert [a["name"] for a in root["arguments"]] == ["file"]  # from the SYNOPSIS
    # without a page, the tool is asked with flags only, never with the word `help`
    assert runs_of(bin_dir, "helpy")[0] == "--agent"
    assert set(runs_of(bin_dir, "helpy")[1:]) <= {"--help", "-h", "--version"}
    assert shim_of(helpy)["_generation"]["method"] == "help-parsing"
    assert [o["name"] for o in shim_of(helpy)["commands"][""]["options"]] == ["count", "quiet"]
    inference = out["result"]["inference"]
    assert (inference["inferred"], inference["from_man_page"], inference["from_help"]) == (2, 1, 1)
    assert out["result"]["inferred"] == 2
    entries = LocalRegistry().read().tools
    assert {n: (e.source, e.path) for n, e in entries.items()} == {
        "frob": ("inferred", str(frob)),
        "helpy": ("inferred", str(helpy)),
    }


def test_a_page_without_options_is_not_enough_and_the_tool_is_asked(tmp_path, env):
    bin_dir = tmp_path / "bin"
    tool = logging_script(bin_dir, "thin")
    man_page(tmp_path, "thin", ".TH THIN 1\n.SH NAME\nthin \\- a page that is only a name\n")
    code, out, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    assert code == 0
    assert "--help" in runs_of(bin_dir, "thin")
    shim = shim_of(tool)
    assert shim["_generation"]["method"] == "help-parsing+man"
    assert shim["description"] == "a page that is only a name"  # the page's NAME line wins
    assert [o["name"] for o in shim["commands"][""]["options"]] == ["count", "quiet"]
    assert out["result"]["inference"]["from_help"] == 1


def test_a_page_whose_synopsis_has_a_subcommand_slot_it_does_not_fill_is_not_enough(tmp_path, env):
    bin_dir = tmp_path / "bin"
    help_text = (
        "Usage: multi [OPTIONS] <command>\n\nDo many things.\n\n"
        "Commands:\n  fetch    Fetch things\n  purge    Remove all things\n\n"
        "Options:\n  -q, --quiet   Say less\n"
    )
    tool = logging_script(bin_dir, "multi", help_text)
    page = PAGE.format(name="multi", upper="MULTI").replace(
        "[\\fIOPTION\\fR]... \\fIFILE\\fR", "[\\fIOPTION\\fR]... \\fI<command>\\fR"
    )
    assert "<command>" in page
    man_page(tmp_path, "multi", page)
    code, _, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    assert code == 0
    assert "--help" in runs_of(bin_dir, "multi")
    shim = shim_of(tool)
    assert shim["_generation"]["method"] == "help-parsing+man"
    assert sorted(shim["commands"]) == ["fetch", "purge"]
    assert shim["commands"]["purge"]["effects"]["destructive"] is True
    flags = [o["flags"] for o in shim["globalOptions"]]
    assert ["-q", "--quiet"] in flags  # from the help
    assert ["-v", "--verbose"] in flags  # from the page


def test_the_resolved_tool_is_the_inferred_shim(tmp_path, env):
    from atipkit.resolve import resolve_tool

    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    scan([str(bin_dir)], infer=True)
    resolved = resolve_tool(str(frob))
    assert (resolved.source, resolved.cached) == ("inferred", True)
    assert resolved.tool.description == "frobnicate files from the page"
    assert runs_of(bin_dir, "frob") == ["--agent"]


def test_one_tool_is_inferred_as_scan_infer_does_page_first(tmp_path, env):
    """`infer_shim`, the one inference of one tool (for `atip show --infer`): a page that
    is enough is all that is read, the tool is never run; without one, the tool is asked
    with flags only, never the word `help`."""
    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    helpy = logging_script(bin_dir, "helpy")
    man_page(tmp_path, "frob")
    from_page = infer_shim(str(frob), "frob", sha256_file(frob))
    assert runs_of(bin_dir, "frob") == []
    assert from_page.description == "frobnicate files from the page"
    assert from_page.extensions["_generation"]["method"] == "man-page"
    assert from_page.binary is not None
    assert from_page.binary.hash == sha256_file(frob)
    from_help = infer_shim(str(helpy), "helpy", sha256_file(helpy))
    asked = runs_of(bin_dir, "helpy")
    assert "--help" in asked
    assert set(asked) <= {"--help", "-h", "--version"}
    assert [o.name for o in from_help.commands[""].options] == ["count", "quiet"]


# -- the deny list -----------------------------------------------------------------------------

DENIED = (
    "reboot",
    "shutdown",
    "systemctl",
    "mkfs.ext4",
    "fsck.vfat",
    "mkswap",
    "ifdown",
    "ip",
    "hostname",
    "iptables-restore",
    "update-grub",
    "cryptsetup",
    "passwd",
)


def test_nothing_on_the_deny_list_is_ever_run_by_scan_infer(tmp_path, env):
    bin_dir = tmp_path / "bin"
    for name in DENIED:
        marker_script(bin_dir, name, tmp_path / f"ran-{name}")
    (bin_dir / "restart-machine").symlink_to(bin_dir / "reboot")  # denied by what it is
    man_page(tmp_path, "reboot")  # a page: a denied command may still be read
    ordinary = [logging_script(bin_dir, name) for name in ("frob", "helpy")]
    man_page(tmp_path, "frob")
    code, out, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    assert code == 0, out
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []
    inference = out["result"]["inference"]
    assert sorted(inference["denied"]) == sorted(DENIED)  # the link is `reboot` itself
    assert sorted(inference["skipped"]) == sorted(set(DENIED) - {"reboot"})  # no page
    assert out["result"]["executables"] == 2  # only these were probed
    for path in ordinary:  # ... and the others were inferred
        assert shim_of(path)["trust"]["source"] == "inferred"
    reboot = shim_of(bin_dir / "reboot")
    assert reboot["_generation"]["method"] == "man-page"
    assert "effects" not in reboot  # claimed per command, not for the whole tool
    assert reboot["commands"][""]["effects"]["destructive"] is True  # what the list means
    assert "deny list" in reboot["_generation"]["note"]
    assert LocalRegistry().read().tools["reboot"].source == "inferred"
    # a later look at the tool does not run it either (the probe refuses it)
    from atipkit.resolve import resolve_tool

    resolved = resolve_tool(str(bin_dir / "reboot"), refresh=True)
    assert atipkit.effective_effects(resolved.tool, "").destructive is True
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []


def test_denied_commands_are_refused_by_the_probe_and_by_atip_gen(tmp_path, env):
    marker = tmp_path / "ran"
    exe = marker_script(tmp_path / "bin", "mkfs.btrfs", marker)
    result = probe(str(exe))
    assert result.failure is not None
    assert result.failure.kind == "denied"
    tool = generate_shim(str(exe), man=False)
    assert atipkit.effective_effects(tool, "").destructive is True
    assert tool.commands[""].options == []
    assert not marker.exists()


def test_the_deny_list_takes_names_and_patterns_and_is_configurable(tmp_path, env):
    deny = DenyList(DEFAULT_SKIP)
    assert "reboot" in deny
    for name in ("mkfs", "mkfs.ext4", "fsck.vfat", "iptables-save", "update-initramfs"):
        assert name in deny
    for name in ("ls", "mkfsx", "ipcalc", "pv", "updatedb"):
        assert name not in deny
    config = tmp_path / "config" / "agent-tools"
    config.mkdir(parents=True)
    (config / "config.json").write_text(
        json.dumps({"scan": {"skip": ["frob*"], "allow": ["ip", "mkfs.*"]}})
    )
    configured_list = configured()
    assert "frobnicate" in configured_list
    assert "ip" not in configured_list  # allowed after all, one name at a time
    assert "mkfs.ext4" in configured_list  # `allow` takes names, not patterns
    assert "ip" in configured_list | ["ip"]  # the caller's own list wins


def test_skip_on_the_command_line_takes_patterns_too(tmp_path, env):
    bin_dir = tmp_path / "bin"
    for name in ("mine-a", "mine-b"):
        marker_script(bin_dir, name, tmp_path / f"ran-{name}")
    logging_script(bin_dir, "frob")
    code, out, _ = atip_scan(env, "--infer", "--path", str(bin_dir), "--skip", "mine-*")
    assert code == 0
    assert list(tmp_path.glob("ran-*")) == []
    assert sorted(out["result"]["inference"]["skipped"]) == ["mine-a", "mine-b"]


# -- resumable, bounded ------------------------------------------------------------------------


def test_a_rerun_infers_nothing_new_and_a_changed_binary_is_inferred_again(tmp_path, env):
    bin_dir = tmp_path / "bin"
    logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    helpy = logging_script(bin_dir, "helpy")
    code, first, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    assert (code, first["result"]["inference"]["inferred"]) == (0, 2)
    asked = len(runs_of(bin_dir, "helpy"))
    registry_before = LocalRegistry().index_path.read_bytes()
    start = time.monotonic()
    code, again, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    assert time.monotonic() - start < 10
    inference = again["result"]["inference"]
    assert (code, inference["inferred"], inference["reused"]) == (0, 0, 2)
    assert again["result"]["inferred"] == 2
    assert len(runs_of(bin_dir, "helpy")) == asked  # not even --agent: nothing changed
    assert LocalRegistry().index_path.read_bytes() == registry_before  # nothing rewritten
    old_hash = sha256_file(helpy)
    logging_script(bin_dir, "helpy", HELP.format(name="helpy") + "  -x, --extra   More\n")
    code, changed, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    inference = changed["result"]["inference"]
    assert (code, inference["inferred"], inference["from_help"], inference["reused"]) == (
        0,
        1,
        1,
        1,
    )
    entry = LocalRegistry().read().tools["helpy"]
    assert entry.hash == sha256_file(helpy) != old_hash
    assert "extra" in [o["name"] for o in shim_of(helpy)["commands"][""]["options"]]
    assert runs_of(bin_dir, "frob") == ["--agent"]  # unchanged: never asked again


def test_a_removed_shim_is_inferred_again(tmp_path, env):
    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    scan([str(bin_dir)], infer=True)
    LocalRegistry().shim_path(sha256_file(frob)).unlink()
    report = scan([str(bin_dir)], infer=True)
    assert report.inference is not None
    assert report.inference.from_man_page == 1
    assert LocalRegistry().shim_path(sha256_file(frob)).is_file()


def test_a_removed_shim_is_no_longer_recorded_by_a_scan_without_infer(tmp_path, env):
    """The scan itself (not the inference pass) notices an inferred shim that is gone:
    the binary is no longer recorded as inferred, and the cache looks at it again."""
    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    scan([str(bin_dir)], infer=True)
    assert LocalRegistry().read().tools["frob"].source == "inferred"
    LocalRegistry().shim_path(sha256_file(frob)).unlink()
    report = scan([str(bin_dir)])
    assert report.inferred == 0
    entry = LocalRegistry().read().tools.get("frob")
    assert entry is None or entry.source != "inferred", entry


def test_when_the_budget_runs_out_the_rest_is_left_for_the_next_run(tmp_path, env):
    bin_dir = tmp_path / "bin"
    for name in ("page-a", "page-b"):
        logging_script(bin_dir, name)
        man_page(tmp_path, name)
    asked = [logging_script(bin_dir, f"asked-{i}") for i in range(3)]
    # a tool is asked only while its whole per-tool budget (5 s) fits in what is left
    code, out, _ = atip_scan(env, "--infer", "--path", str(bin_dir), "--budget", "2")
    assert code == 0
    inference = out["result"]["inference"]
    assert inference["from_man_page"] == 2
    assert sorted(inference["left"]) == ["asked-0", "asked-1", "asked-2"]
    assert (inference["complete"], inference["budget"]) == (False, 2.0)
    assert "3 executable(s) left for the next run" in out["meta"]["warnings"][0]
    assert set(LocalRegistry().read().tools) == {"page-a", "page-b"}
    for path in asked:
        assert runs_of(bin_dir, path.name) == ["--agent"]
    code, out, _ = atip_scan(env, "--infer", "--path", str(bin_dir))
    inference = out["result"]["inference"]
    assert (code, inference["from_help"], inference["reused"], inference["left"]) == (0, 3, 2, [])
    assert inference["complete"] is True
    assert out["meta"]["warnings"] == []
    # --refresh infers again; what it cannot redo in time stays described by its old shim
    code, out, _ = atip_scan(env, "--infer", "--refresh", "--path", str(bin_dir), "--budget", "2")
    inference = out["result"]["inference"]
    assert (code, inference["from_man_page"], len(inference["left"])) == (0, 2, 3)
    assert out["result"]["inferred"] == 5
    assert len(LocalRegistry().read().tools) == 5


def on_a_terminal(env: dict[str, str], *args: str) -> tuple[bytes, str]:
    """`atip scan ARGS` as a real process whose stderr is a pseudo-terminal (stdout a
    pipe): everything drawn on the terminal, and stdout."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "atipkit", "scan", *args],
        env={**env, "TERM": "xterm-256color", "COLUMNS": "120"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    return seen, out.decode()


def test_progress_is_a_bar_on_a_terminal_and_nothing_on_a_pipe_or_with_json(tmp_path, env):
    bin_dir = tmp_path / "bin"
    for name in ("frob", "grob"):
        logging_script(bin_dir, name)
        man_page(tmp_path, name)
    slow = bin_dir / "slowpoke"  # the tool the bar waits on for a second
    slow.write_text("#!/bin/sh\n[ \"$1\" = --agent ] && exec sleep 30\necho 'Usage: slowpoke'\n")
    slow.chmod(0o755)
    args = ("--infer", "--path", str(bin_dir), "--probe-timeout", "1.5", "--jobs", "2")
    seen, out = on_a_terminal(env, *args, "--text")
    drawn = seen.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)  # as a person reads it
    assert re.search(r"probing +━+ [0-3]/3 ", text)  # a bar, how many of how many
    assert re.search(r"inferring +━+ [0-3]/3 ", text)
    assert re.search(r"\d+\.\d/s ETA \d+:\d\d:\d\d", text)  # the rate, the time left
    assert re.search(r"probing .* slowpoke", text)  # the tool it waits on
    assert drawn.endswith("\x1b[2K")  # and the bars are erased at the end
    assert "\x1b" not in out  # the summary is on stdout, plain
    assert out.splitlines()[1:] == [
        "  0  speak ATIP",
        "  0  have a shim",
        "  3  inferred     2 from man pages, 1 from --help, 0 by earlier runs",
        "  1  failed       1 timeout (reasons: atip scan --json)",
        'Next: atip search "what to do" finds commands; atip show NAME shows one tool; '
        "atip list lists them all",
    ]
    # --json on a terminal and --text on a pipe draw nothing at all
    seen, out = on_a_terminal(env, *args, "--refresh", "--json")
    assert seen == b""
    assert json.loads(out)["result"]["inference"]["from_man_page"] == 2
    done = subprocess.run(
        [sys.executable, "-m", "atipkit", "scan", *args, "--refresh", "--text"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "\x1b" not in done.stderr
    assert "probing" not in done.stderr
    assert done.stdout.startswith("3 executables in ")


def test_a_binary_under_several_names_is_inferred_once_and_recorded_under_each(tmp_path, env):
    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    os.link(frob, bin_dir / "frob2")  # a hard link: another real path, the same binary
    report = scan([str(bin_dir)], infer=True)
    assert report.inference is not None
    assert (report.inference.inferred, report.inference.aliases) == (1, ["frob2"])
    tools = LocalRegistry().read().tools
    assert set(tools) == {"frob", "frob2"}
    assert tools["frob"].hash == tools["frob2"].hash  # one shim describes both
    assert len(list((tmp_path / "data" / "agent-tools" / "shims" / "sha256").iterdir())) == 1
    assert resolve_tool("frob2").tool.description == "frobnicate files from the page"
    again = scan([str(bin_dir)], infer=True)
    assert again.inference is not None
    assert (again.inference.reused, again.inference.aliases) == (1, ["frob2"])
    assert set(LocalRegistry().read().tools) == {"frob", "frob2"}


def test_a_shim_someone_wrote_is_never_replaced(tmp_path, env):
    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    path = LocalRegistry().shim_path(sha256_file(frob))
    path.parent.mkdir(parents=True)
    path.write_text('{"atip": {"version": "0.6"}, "name": "frob"}')  # theirs, and broken
    report = scan([str(bin_dir)], infer=True)
    assert report.inference is not None
    assert [(f.name, "fix it or remove it" in f.error) for f in report.inference.failed] == [
        ("frob", True)
    ]
    assert path.read_text() == '{"atip": {"version": "0.6"}, "name": "frob"}'
    again = scan([str(bin_dir)], infer=True)  # remembered: not tried again
    assert again.inference is not None
    assert [f.name for f in again.inference.failed] == ["frob"]


def test_refreshing_an_inferred_shim_does_not_read_it_twice(tmp_path, env, monkeypatch):
    """--refresh replaces a valid inferred shim that `find_shim` has just read from the
    very file the new one goes to, without reading and parsing it again (`_not_ours`)."""
    from atipkit.infer import coverage

    bin_dir = tmp_path / "bin"
    frob = logging_script(bin_dir, "frob")
    man_page(tmp_path, "frob")
    scan([str(bin_dir)], infer=True)
    checked = []
    monkeypatch.setattr(coverage, "_not_ours", lambda path: checked.append(path))
    report = scan([str(bin_dir)], infer=True, refresh=True)
    assert report.inference is not None
    assert report.inference.from_man_page == 1
    assert checked == []
    assert LocalRegistry().shim_path(sha256_file(frob)).is_file()


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "param", "words"),
    [
        (["--infer", "--budget", "0"], "budget", "not in the range"),
        (["--infer", "--budget", "-5"], "budget", "not in the range"),
        (["--infer", "--budget", "soon"], "budget", "not a valid"),
        (["--infer", "--jobs", "0"], "jobs", "not in the range"),
        (["--infer", "--jobs", "65"], "jobs", "not in the range"),
        (["--budget", "30"], "budget", "--budget applies to --infer only"),
    ],
)
def test_bad_budget_and_jobs_are_usage_errors(tmp_path, env, args, param, words):
    code, out, _ = atip_scan(env, *args, "--path", str(tmp_path))
    assert code == 2
    error = out["error"]
    assert (error["code"], error["details"]["param"]) == ("E1002", param)
    assert words in error["message"]


def test_the_python_api_refuses_a_budget_or_jobs_out_of_range(tmp_path, env):
    for budget in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="infer_budget must be a positive number"):
            scan([str(tmp_path)], infer=True, infer_budget=budget)
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        scan([str(tmp_path)], jobs=0)


# -- page files -------------------------------------------------------------------------------


def test_page_files_are_found_by_section_and_read_through_redirects(tmp_path, env):
    root = tmp_path / "man"
    man_page(tmp_path, "frob", compress=".xz")
    man_page(tmp_path, "passwd", PAGE.format(name="passwd", upper="PASSWD"), compress=".gz")
    ssl = root / "man1" / "passwd.1ssl.gz"  # OpenSSL's command of that name
    ssl.write_bytes(gzip.compress(b".TH PASSWD 1SSL\n.SH NAME\npasswd \\- OpenSSL's\n"))
    (root / "man8").mkdir()
    (root / "man8" / "frobd.8").write_text(".so man1/frob.1\n")  # the whole page elsewhere
    (root / "man1" / "frob.1.html").write_text("<p>not a page</p>")
    pages = ManPages()
    assert manpath()[0] == root
    assert pages.find("passwd") == root / "man1" / "passwd.1.gz"
    assert pages.find("nothing", "frob") == root / "man1" / "frob.1.xz"
    page = read_man_file(pages.find("frobd"), "frobd")
    assert page is not None
    assert page.help.description == "frobnicate files from the page"
    assert [o.name for o in page.help.options] == ["verbose", "output"]
    assert page.version == "1.2.3"


def test_the_version_comes_from_the_package_a_page_names():
    assert page_version('.TH LS "1" "September 2022" "GNU coreutils 9.1" "User Commands"') == "9.1"
    assert page_version('.TH RBASH 1 "2021 November 22" "Bash-5.2"') == "5.2"
    assert page_version('.TH LDD 1 2022-10-30 "Linux man-pages 6.03"') is None  # not ldd's
    assert page_version(".Dd $Mdocdate: May 1 2024 $\n.Os") is None


def test_a_plain_scan_imports_no_reader_of_help_or_pages():
    """`atipkit._scan` imports `infer.coverage` for its types; the help and page readers
    (and gzip) load only when something is inferred."""
    code = (
        "import sys, atipkit._scan\n"
        "print(sorted(m for m in ('atipkit.infer.helptext', 'atipkit.infer.manpage', 'gzip')"
        " if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_budget_bounds_the_probe_pass_too_and_what_it_finished_is_kept(tmp_path, env):
    from atipkit._scan import BUDGET_MARGIN

    bin_dir = tmp_path / "bin"
    for name in ("a-page", "b-page"):  # probed first: PATH order is by name
        logging_script(bin_dir, name)
        man_page(tmp_path, name)
    runs = bin_dir.parent / "runs"
    slow = [f"slow-{i:02d}" for i in range(20)]
    for name in slow:  # a probe of each takes its whole timeout; --help is quick
        path = bin_dir / name
        path.write_text(
            f'#!/bin/sh\necho "$*" >> {runs / name}\n'
            '[ "$1" = --agent ] && exec sleep 30\n'
            f"cat <<'EOF'\n{HELP.format(name=name)}EOF\n"
        )
        path.chmod(0o755)
    marker = tmp_path / "rebooted"
    marker_script(bin_dir, "reboot", marker)  # denied, without a page: never described
    budget = 4
    # unbounded, the probe pass alone takes 20 probes x 1 s / 2 jobs = 10 s
    args = ("--infer", "--path", str(bin_dir), "--jobs", "2", "--probe-timeout", "1")
    started = time.monotonic()
    code, out, _ = atip_scan(env, *args, "--budget", str(budget))
    wall = time.monotonic() - started
    startup = 2.0  # the interpreter and atipkit's imports, before the budget's clock starts
    assert wall < budget + BUDGET_MARGIN + startup, wall
    report = out["result"]
    assert report["seconds"] < budget + BUDGET_MARGIN  # the margin the budget promises
    assert code == 0
    assert report["complete"] is False
    left = report["left"]
    assert 6 <= len(left) <= 16, left  # three or four pairs of probes fit in 4 s
    assert set(left) <= set(slow)
    assert report["probed"] + len(left) == report["executables"] == 22
    assert f"{len(left)} not probed" in out["meta"]["warnings"][0]
    for name in left:  # never started, or stopped by the deadline: neither recorded nor
        # taken for a tool that hangs (cached as a timeout, it would not be probed again)
        assert not [f for f in report["failures"] if f["name"] == name]
    done = [name for name in slow if name not in left]
    assert {f["name"] for f in report["failures"] if f["kind"] == "timeout"} == set(done)
    not_inferred = len(report["inference"]["left"])  # the deadline had passed
    assert f"  {len(left) + not_inferred}  left         the budget of 4 s ran out; " in (
        _scan_text(report)
    )

    code, out, _ = atip_scan(env, *args, "--budget", "120")
    report = out["result"]
    assert (code, report["complete"], report["left"]) == (0, True, [])
    assert (report["probed"], report["reused"]) == (len(left), 22 - len(left))
    for name in ["a-page", "b-page", *done]:  # kept from the first run: not probed again
        assert runs_of(bin_dir, name).count("--agent") == 1, name
    inference = report["inference"]
    assert (inference["from_man_page"], inference["from_help"]) == (2, 20)
    summary = _scan_text(report).splitlines()
    assert summary[0].startswith("22 executables and 1 denied in ")
    assert summary[1:] == [
        "   0  speak ATIP",
        "   0  have a shim",
        "  22  inferred     2 from man pages, 20 from --help, 0 by earlier runs",
        "   1  undescribed  denied commands without a man page (denied commands are never run)",
        f"  {len(left):>2}  failed       {len(left)} timeout (reasons: atip scan --json)",
        'Next: atip search "what to do" finds commands; atip show NAME shows one tool; '
        "atip list lists them all",
    ]
    assert not marker.exists()
