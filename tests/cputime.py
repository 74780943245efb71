"""Per-test CPU time: ``pytest --cpu-times=PATH`` writes one line per test as it ends and prints the
top consumers by file and by test.

Wall time on this shared two-core machine moves with the load; CPU time (the pytest
process plus the children it reaped, from ``getrusage``) moves far less, so it is the
figure to cut the suite by. A module- or session-scoped fixture's cost lands on the first
test that asks for it; a child still running when its test ends is counted when reaped.
Under pytest-xdist the workers append to PATH and nothing is printed: `-n 0` for the
summary.
"""

from __future__ import annotations

import resource
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

_TIMES = pytest.StashKey[dict[str, float]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-times",
        metavar="PATH",
        default=None,
        help="append each test's CPU seconds (own + reaped children) to PATH as it ends",
    )


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TIMES] = {}
    path = config.getoption("--cpu-times")
    if path and not hasattr(config, "workerinput"):  # once, not in each xdist worker
        Path(path).write_text("")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not item.config.getoption("--cpu-times"):
        yield
        return
    start = _cpu()
    yield
    cpu = item.config.stash[_TIMES][item.nodeid] = _cpu() - start
    with open(item.config.getoption("--cpu-times"), "a") as out:  # kept if the run is cut short
        out.write(f"{cpu:.3f}\t{item.nodeid}\n")


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:  # type: ignore[no-untyped-def]
    path = config.getoption("--cpu-times")
    times = config.stash[_TIMES]
    if not path or not times:
        return
    ranked = sorted(times.items(), key=lambda item: -item[1])
    by_file: dict[str, float] = defaultdict(float)
    for nodeid, cpu in times.items():
        by_file[nodeid.split("::")[0]] += cpu
    write = terminalreporter.write_line
    terminalreporter.section(f"CPU seconds: {sum(times.values()):.1f} in all")
    for name, cpu in sorted(by_file.items(), key=lambda item: -item[1])[:20]:
        write(f"{cpu:8.1f}  {name}")
    terminalreporter.section("CPU seconds, the 25 dearest tests")
    for nodeid, cpu in ranked[:25]:
        write(f"{cpu:8.1f}  {nodeid}")
