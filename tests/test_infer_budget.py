"""What inference reads does not depend on how busy the machine is (issue 20, decisions
576-581): a tool's work is counted in runs and pages, which grow with its tree; the wall
clock is only a ceiling against a tool that hangs, spins or floods, and a shim it cut
short says so.

A busy machine is played by tools that sleep in each subcommand's help: to a wall-clock
budget, a run that waits for the CPU and a run that sleeps look alike (npm's `npm SUB
--help` takes 0.8-1 s each at load 15). Real scripts, run in the real sandbox.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from atipkit import scan
from atipkit.infer import coverage, generate
from atipkit.infer.generate import Budget, generate_shim
from atipkit.model import to_dict
from tests.helpers import BUSY
from tests.test_scan_infer import isolate, shim_of


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return isolate(tmp_path, monkeypatch)


def tree_tool(path: Path, count: int, sub: str) -> list[str]:
    """A tool listing `count` subcommands; `TOOL SUB --help` runs the shell code `sub`,
    then prints SUB's help: three options, rich enough that no other form is asked."""
    names = [f"cmd{n:02}" for n in range(count)]
    listing = "".join(f"  {n}    Do {n}\\n" for n in names)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        '[ "$1" = help ] && shift\n'
        'case "$1" in\n'
        f"  cmd*) {sub}\n"
        f"    printf 'Usage: {path.name} %s [options]\\n\\nOptions:\\n  --deep  go deep\\n"
        '  --wide  go wide\\n  --tall  go tall\\n\' "$1" ;;\n'
        f"  --version) echo '{path.name} 1.0' ;;\n"
        f"  *) printf 'Usage: {path.name} <command>\\n\\nMany things.\\n\\n"
        f"Commands:\\n{listing}' ;;\n"
        "esac\n"
    )
    path.chmod(0o755)
    return names


def with_options(commands: dict) -> list[str]:
    """The commands that were read (they have their options), by name."""
    return sorted(n for n, c in to_dict(commands).items() if c.get("options"))


# -- a busy machine reads as much, only slower -----------------------------------------------


def test_gen_reads_a_slow_tree_whole(tmp_path):
    """16 subcommands whose help takes 0.7 s each: 11 s, past the 10 s that `atip gen`
    had before, which listed the last of them without their options."""
    names = tree_tool(tmp_path / "bin" / "tree", 16, "sleep 0.7")
    tool = generate_shim(str(tmp_path / "bin" / "tree"), man=False)
    assert with_options(tool.commands) == names
    assert "incomplete" not in tool.extensions["_generation"]


def test_the_sweep_reads_a_slow_tree_whole(tmp_path, env, monkeypatch):
    """The sweep gave a tool `TOOL_BUDGET` seconds and 0.5 s more a subcommand: ten whose
    help takes 0.8 s each were cut short (here with 1 s to start with, so that the test
    is short), whatever the tree's size."""
    monkeypatch.setattr(coverage, "TOOL_BUDGET", 1.0)
    names = tree_tool(tmp_path / "bin" / "tree", 10, "sleep 0.8")
    report = scan([str(tmp_path / "bin")], infer=True)
    assert report.inference is not None
    assert report.inference.from_help == 1
    shim = shim_of(tmp_path / "bin" / "tree")
    assert with_options(shim["commands"]) == names
    assert "incomplete" not in shim["_generation"]
    assert report.inference.cut == []


def test_a_tree_bigger_than_its_steps_is_cut_at_the_same_place_at_any_speed(tmp_path):
    """Steps, not seconds, bound a tree: a fast run and a slow one of the same tool read
    the same commands, and say that the rest were left (`cut: steps`)."""
    names = tree_tool(tmp_path / "bin" / "fast", 12, ":")
    tree_tool(tmp_path / "bin" / "slow", 12, "sleep 0.3")
    read = []
    for name in ("fast", "slow"):
        tool = generate_shim(str(tmp_path / "bin" / name), budget=Budget(most=10), man=False)
        assert tool.extensions["_generation"]["cut"] == "steps"
        assert tool.extensions["_generation"]["incomplete"] is True
        read.append(with_options(tool.commands))
        assert set(tool.commands) == set(names)  # the rest listed, not dropped
    assert read[0] == read[1]
    assert 0 < len(read[0]) < len(names)


def test_steps_grow_once_per_command_within_their_bounds():
    clock = Budget(steps=2, per_command=3, most=20)
    clock.allow([("a",), ("b",)])
    assert clock.steps == 8
    clock.allow([("a",), ("b",)])  # the same commands: nothing more
    assert clock.steps == 8
    clock.allow([(str(n),) for n in range(100)])
    assert clock.steps == 20  # `most`
    assert all(clock.run() for _ in range(20))
    assert not clock.run()
    assert clock.cut == "steps"


def test_runs_have_a_bound_of_their_own_and_pages_go_on_past_it():
    clock = Budget(runs=2)
    assert clock.run()
    assert clock.run()
    assert not clock.run()
    assert clock.cut == "runs"
    assert clock.more()  # pages may still be read


def test_the_sweep_asks_a_big_tree_a_bounded_number_of_times_the_same_at_any_speed(tmp_path, env):
    """A tool whose 40 subcommands must each be asked is asked `TOOL_RUNS` times in a
    sweep, fast or slow: the same commands read, the rest listed, and the sweep says so."""
    names = tree_tool(tmp_path / "fast" / "fast", 40, ":")
    tree_tool(tmp_path / "slow" / "slow", 40, "sleep 0.05")
    read = []
    for name in ("fast", "slow"):
        report = scan([str(tmp_path / name)], infer=True)
        assert report.inference is not None
        assert report.inference.cut == [name]
        shim = shim_of(tmp_path / name / name)
        assert shim["_generation"]["cut"] == "runs"
        assert set(shim["commands"]) == set(names)
        read.append(with_options(shim["commands"]))
    assert read[0] == read[1]
    assert len(read[0]) == coverage.TOOL_RUNS - 2  # its `--help` and `--version` first


def test_the_wall_clock_and_the_sweeps_deadline_are_ceilings_and_say_which_cut():
    ceiling = Budget(Budget.RESERVE + 0.05)
    deadline = Budget(60.0, limit=time.monotonic() + Budget.RESERVE + 0.05)
    time.sleep(0.1)
    for clock, why in ((ceiling, "time"), (deadline, "deadline")):
        assert not clock.run()
        assert clock.cut == why


# -- a hostile tool is still stopped -----------------------------------------------------------

HOSTILE = {
    "hangs": "sleep 6001.25",
    "forks": "i=0; while [ $i -lt 20 ]; do sleep 6001.25 & i=$((i+1)); done; wait",
    "floods": "yes 'flood flood flood'",
}
"""What each of a hostile tool's many subcommands does when asked for its help (`sleep
6001.25`: a duration nothing else here sleeps, to find what is left behind)."""


def _left_behind() -> list[int]:
    """Processes still sleeping the hostile tools' sleep."""
    found = []
    for name in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if b"6001.25" in cmdline and name.isdigit():
            found.append(int(name))
    return found


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_tree_is_stopped_by_the_ceiling_and_the_shim_says_so(tmp_path, kind):
    names = tree_tool(tmp_path / "bin" / "tree", 200, HOSTILE[kind])
    start = time.monotonic()
    tool = generate_shim(str(tmp_path / "bin" / "tree"), budget=3, man=False)
    # a flood's 4 MiB are parsed after its run stops (3.4 s at load 8); without the
    # ceiling, the 200 commands would take many minutes
    assert time.monotonic() - start < (20 if kind == "floods" else 3) + BUSY
    assert tool.extensions["_generation"]["incomplete"] is True
    assert tool.extensions["_generation"]["cut"] == "time"
    assert set(tool.commands) == set(names)  # listed, not read
    deadline = time.monotonic() + 2
    while _left_behind() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _left_behind() == []


def test_the_sweep_stops_a_hostile_tree_at_its_ceiling_and_reports_it(tmp_path, env, monkeypatch):
    monkeypatch.setattr(coverage, "TOOL_CEILING", 3.0)
    tree_tool(tmp_path / "bin" / "tree", 200, HOSTILE["hangs"])
    start = time.monotonic()
    report = scan([str(tmp_path / "bin")], infer=True)
    assert time.monotonic() - start < 3 + BUSY
    assert report.inference is not None
    assert report.inference.cut == ["tree"]
    shim = shim_of(tmp_path / "bin" / "tree")
    assert shim["_generation"]["cut"] == "time"


def test_a_tool_that_hangs_on_its_help_is_not_asked_its_version(tmp_path, monkeypatch):
    """Its `--help` and `-h` hung: `--version` would too, and cost a sweep another
    `HELP_TIMEOUT` for each tool that sleeps or blocks on its help."""
    monkeypatch.setattr(generate, "HELP_TIMEOUT", 1.5)  # its wall-clock ceiling
    tool = tmp_path / "bin" / "stuck"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nsleep 6001.25\n")
    tool.chmod(0o755)
    clock = Budget()
    start = time.monotonic()
    generate_shim(str(tool), man=False, help_word=False, budget=clock)
    assert time.monotonic() - start < 2 * 1.5 + BUSY
    assert (clock.ran, clock.hung) == (2, 2)  # `--help`, `-h`: not `--version` (the proof)
