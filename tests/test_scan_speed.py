"""The whole-PATH sweep's own time (issue 20, decisions 690-694 and 770-779): what is
asked of a multi-call binary's names runs at once, the tools whose commands have pages
start first, and what is read stays the same. Real programs, the real sandbox, the real
`scan`.
"""

from __future__ import annotations

import itertools
import json
import shutil
import time
from pathlib import Path

import pytest

from atipkit import scan
from atipkit.infer.coverage import infer_shim
from atipkit.infer.manpage import package_roots
from atipkit.model import to_dict
from atipkit.trust.digest import sha256_file
from tests.test_scan_infer import isolate, shim_of

NAMES = ("one", "two", "three", "four")

# run as `hub`, a program with two commands; as any other name, another that takes a
# second to answer `--help` and logs when it starts and ends (nanoseconds)
HUB = """#!/bin/sh
[ "$1" = --agent ] && exit 1
name=$(basename "$0")
if [ "$name" != hub ] && [ "$1" = --help ]; then
  echo "start $(date +%s%N)" >> {runs}/"$name"
  sleep 1
  echo "end $(date +%s%N)" >> {runs}/"$name"
fi
case "$name" in
  hub) printf 'Usage: hub [OPTIONS] COMMAND\\n\\nCommands:\\n'
       printf '  toolchain  Manage toolchains\\n  default    Set the default\\n' ;;
  *) printf 'Usage: %s [OPTIONS] COMMAND\\n\\nCommands:\\n' "$name"
     printf '  build  Compile it\\n  test   Run the tests\\n' ;;
esac
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolate(tmp_path, monkeypatch)


def _sweep(tmp_path: Path, name: str, text: str, names: tuple[str, ...], jobs: int = 8) -> Path:
    """`scan --infer` of a directory holding the script `text` (its `{runs}` the
    directory each run may log to) as `name`, and links to it under `names`; the
    directory of logs."""
    bin_dir, runs = tmp_path / "bin", tmp_path / "runs"
    bin_dir.mkdir()
    runs.mkdir()
    binary = bin_dir / name
    binary.write_text(text.format(runs=runs))
    binary.chmod(0o755)
    for other in names:
        (bin_dir / other).symlink_to(name)
    scan([str(bin_dir)], infer=True, jobs=jobs)
    return runs


def _names(tmp_path: Path) -> dict[str, dict]:
    """The documents of their own the one shim of the sweep gives the binary's names."""
    (shim,) = (tmp_path / "data" / "agent-tools" / "shims" / "sha256").iterdir()
    return json.loads(shim.read_text())["_names"]


def _spans(runs: Path, name: str) -> tuple[int, int]:
    marks = dict(line.split() for line in (runs / name).read_text().splitlines())
    return int(marks["start"]), int(marks["end"])


def test_the_names_of_a_binary_without_a_page_are_asked_at_once(tmp_path, env):
    """A binary without a page under five names: each other name is asked by its own
    name (decision 609), and they are asked at once, not one after another (a pyenv
    shim under 67 names took a sweep's last five minutes): their `--help` runs overlap.
    What each answers is recorded as before."""
    runs = _sweep(tmp_path, "hub", HUB, NAMES, jobs=4)
    spans = sorted(_spans(runs, name) for name in NAMES)
    overlapping = sum(later[0] < earlier[1] for earlier, later in itertools.pairwise(spans))
    assert overlapping >= 1, spans
    named = _names(tmp_path)
    assert sorted(named) == sorted(NAMES)
    assert all(sorted(c for c in named[n]["commands"] if c) == ["build", "test"] for n in NAMES)


# run as `odd`, another program; as any other name, the same one under that name
PLAIN = """#!/bin/sh
name=$(basename "$0")
echo "$*" >> {runs}/"$name"
[ "$1" = --agent ] && exit 1
[ "$1" = --version ] && echo "frob 1.2.3" && exit 0
case "$name" in
  odd) printf 'Usage: odd [-q] FILE\\n\\nCount the odd bytes of a file.\\n\\n  -q  quiet\\n' ;;
  *) printf 'Usage: %s [-v] FILE\\n\\nFrobnicate a file.\\n\\n  -v  verbose\\n' "$name" ;;
esac
"""


def test_a_name_that_answers_as_the_first_is_not_asked_its_version(tmp_path, env):
    """A binary without a page or commands: a name whose help says what the first's
    says, its own name aside, gets no document of its own, so it is asked its help
    only, not also its version (pyenv's 67 shims answer alike: a third of their runs).
    A name that answers otherwise is asked as before, and keeps its own document."""
    runs = _sweep(tmp_path, "frob", PLAIN, ("same", "odd"))
    asked = {n: (runs / n).read_text().split("\n") for n in ("frob", "same", "odd")}
    assert "--version" in asked["frob"]
    assert "--version" in asked["odd"]
    assert "--help" in asked["same"]
    assert "--version" not in asked["same"]
    named = _names(tmp_path)
    assert set(named) == {"odd"}
    assert named["odd"]["description"] == "Count the odd bytes of a file."
    assert named["odd"]["version"] == "1.2.3"


# a program without a page that takes a second to answer each run but `--agent`
SLOW = """#!/bin/sh
# {number}
[ "$1" = --agent ] && exit 1
sleep 1
echo "Usage: $(basename "$0") [-q] FILE"
"""


def test_git_gets_every_command_in_a_sweep_its_deadline_cuts(tmp_path, env):
    """git, whose 150 subcommand pages make its shim without running it, and slow tools
    without a page, one at a time: the sweep's deadline comes before the slow tools are
    all asked, and git, started first, is read as whole as alone (`infer_shim`). Before,
    the tools without a page started first and git was left for the next run."""
    git = shutil.which("git")
    found = [p for r in package_roots(git) for p in r.glob("man1/git*.1*")] if git else []
    if not any(p.name.startswith("git-") for p in found):
        pytest.skip("needs git and the pages of its commands")
    (tmp_path / "man" / "man1").mkdir()
    for page in found:  # the test's MANPATH: git's pages alone
        (tmp_path / "man" / "man1" / page.name).symlink_to(page)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(git)
    hash_ = sha256_file(git)
    started = time.monotonic()
    alone = to_dict(infer_shim(git, "git", hash_).commands)
    budget = 2 * (time.monotonic() - started) + 5  # git's time twice, at this load
    for number in range(int(budget / 3) + 3):  # 3 s each (--help, -h, --version)
        slow = bin_dir / f"slow{number}"
        slow.write_text(SLOW.format(number=number))
        slow.chmod(0o755)
    report = scan([str(bin_dir)], infer=True, jobs=1, infer_budget=budget)
    assert report.inference is not None
    assert report.inference.left  # the deadline cut the sweep
    assert "git" not in report.inference.left
    assert "git" not in report.inference.cut
    swept = shim_of(bin_dir / "git")
    assert swept["_generation"]["method"] == "man-page"
    assert "incomplete" not in swept["_generation"]
    options = {n: c.get("options") for n, c in swept["commands"].items()}
    assert options == {n: c.get("options") for n, c in alone.items()}
    assert sum(1 for o in options.values() if o) > 100


# a wrapper whose program is missing under every name, as pyenv's shims are in the sandbox
MISSING = """#!/bin/sh
name=$(basename "$0")
echo "$*" >> {runs}/"$name"
[ "$1" = --agent ] && exit 1
echo "wrap: $name: command not found" >&2
exit 127
"""


def test_a_name_whose_program_is_missing_is_asked_once(tmp_path, env):
    """A run that exits 127 (or 126) says that what the program runs is not there (a
    shell's, `env`'s and pyenv's status), whatever it was asked: neither `-h` nor
    `--version` is asked after it, of the binary or of its other names (pyenv's 68
    shims were asked 136 times in a sweep for nothing kept)."""
    runs = _sweep(tmp_path, "wrap", MISSING, ("one", "two"))
    asked = {n: (runs / n).read_text().split() for n in ("wrap", "one", "two")}
    assert asked == {"wrap": ["--agent", "--help"], "one": ["--help"], "two": ["--help"]}
    (shim,) = (tmp_path / "data" / "agent-tools" / "shims" / "sha256").iterdir()
    document = json.loads(shim.read_text())
    assert document["name"] == "wrap"
    assert "_names" not in document  # each says what the first says


# logs each run of its help to one file, the slow one waits on `--agent` past its timeout
LOGGED = """#!/bin/sh
[ "$1" = --agent ] && {{ [ "$(basename "$0")" = zslow ] && sleep 3; exit 1; }}
echo "$(basename "$0") $*" >> {runs}/all
echo "Usage: $(basename "$0") [-q] FILE {number}"
"""


def test_the_tools_whose_probe_ran_out_of_time_are_inferred_first(tmp_path, env):
    """A probe that runs out of time says that the program is slow to start or hangs: each
    help it is asked costs as much, so it is the longest work of the sweep and starts
    first (in the profile of decision 773 such tools took half of the workers' time).
    Before, they started in the order of the PATH, and ended the sweep."""
    bin_dir, runs = tmp_path / "bin", tmp_path / "runs"
    bin_dir.mkdir()
    runs.mkdir()
    for number, name in enumerate(("afast", "bfast", "cfast", "zslow")):
        (bin_dir / name).write_text(LOGGED.format(runs=runs, number=number))
        (bin_dir / name).chmod(0o755)
    report = scan([str(bin_dir)], infer=True, jobs=1, timeout=0.5)
    assert [f.name for f in report.failures if f.kind == "timeout"] == ["zslow"]
    assert report.inference is not None
    assert report.inference.from_help == 4
    asked = [line.split()[0] for line in (runs / "all").read_text().splitlines()]
    assert asked[0] == "zslow", asked
