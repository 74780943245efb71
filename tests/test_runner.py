"""The runner: stdin rules, terminals, timeouts that kill the whole group, output caps."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from atipkit.execute.argv import Invocation
from atipkit.execute.runner import RunRefused, parse_duration, run
from atipkit.model import Duration, Effects, Interactive
from atipkit.sandbox import session
from tests.helpers import BUSY
from tests.sandboxing import ISOLATED, Listener, marker, mode_fixture, running, use_mode

PY = sys.executable


def inv(*argv: str) -> Invocation:
    return Invocation(tool=Path(argv[0]).name, path=(), argv=list(argv))


def stdin_mode(mode: str) -> Effects:
    return Effects(interactive=Interactive(stdin=mode))


def test_pipes_and_optional_stdin():
    result = run(
        inv("sh", "-c", "read x; echo got $x; echo err >&2; exit 3"), Effects(), stdin="hello\n"
    )
    assert (result.exit_code, result.stdout, result.stderr) == (3, "got hello\n", "err\n")
    assert run(inv("cat"), stdin_mode("optional")).stdout == ""  # /dev/null when no data


def test_text_input_that_is_not_utf8_reaches_the_command_or_is_refused(tmp_path):
    """`atip run --stdin` gets its text from a command line that may hold bytes that are
    not UTF-8 (Python reads them as surrogates): they go to the command as they were. A
    lone surrogate from JSON is no text at all: refused before anything starts."""
    given = run(
        inv(PY, "-c", "import sys; print(sys.stdin.buffer.read().hex())"),
        Effects(),
        stdin="a\udcffb",
    )
    assert given.stdout == "61ff62\n"
    marker = tmp_path / "started"
    with pytest.raises(RunRefused, match="lone UTF-16 surrogate at character 1"):
        run(inv("sh", "-c", f"touch {marker}; cat"), Effects(), stdin="a\ud800")
    assert not marker.exists()


def test_stdin_rules_refuse_before_starting(tmp_path):
    marker = tmp_path / "started"
    argv = ("sh", "-c", f"touch {marker}; cat")
    with pytest.raises(RunRefused, match="needs input"):
        run(inv(*argv), stdin_mode("required"))
    with pytest.raises(RunRefused, match="reads no input"):
        run(inv(*argv), stdin_mode("none"), stdin="x")
    with pytest.raises(RunRefused, match="never taken from the model"):
        run(inv(*argv), stdin_mode("password"), stdin="hunter2")
    with pytest.raises(RunRefused, match="no credential"):
        run(inv(*argv), stdin_mode("password"))
    assert not marker.exists()
    given = run(inv("cat"), stdin_mode("password"), credential=lambda: b"from-the-keyring")
    assert given.stdout == "from-the-keyring"


def test_a_real_program_prompting_on_dev_tty_runs_under_a_pty():
    program = (
        "import getpass; secret = getpass.getpass('Password: '); "
        "answer = input('Sure? '); print('got', len(secret), answer)"
    )
    result = run(
        inv(PY, "-c", program),
        Effects(interactive=Interactive(tty=True)),
        stdin="s3cret\nyes\n",
        timeout=20,
    )
    assert result.tty
    assert result.exit_code == 0
    assert "got 6 yes" in result.stdout
    assert "s3cret" not in result.stdout  # getpass does not echo


def test_a_program_slow_to_prompt_is_typed_to_once_it_waits():
    """A busy machine, played by a program that computes for a CPU second before its
    prompt: quiet longer than `TYPING_PAUSE` but running, it was typed to early, and
    `getpass`'s flush of the terminal threw the line away (EOFError, exit 1)."""
    program = (
        "import time\nstart = time.process_time()\nwhile time.process_time() - start < 1: pass\n"
        "import getpass; secret = getpass.getpass('Password: '); print('got', len(secret))"
    )
    result = run(inv(PY, "-c", program), TTY, stdin="s3cret\n", timeout=60)
    assert (result.exit_code, result.timed_out) == (0, False), result.stdout
    assert "got 6" in result.stdout


def test_without_a_pty_a_dev_tty_prompt_fails_instead_of_hanging():
    program = "import getpass; getpass.getpass('Password: ')"
    start = time.monotonic()
    result = run(inv(PY, "-c", program), Effects(), timeout=60)
    assert time.monotonic() - start < 2 * BUSY
    assert not result.timed_out
    assert result.exit_code != 0  # no terminal, no input: the prompt fails, it does not wait


def test_timeout_from_duration_kills_the_whole_group(tmp_path):
    pidfile = tmp_path / "pids"
    script = f"sleep 300 & echo $! > {pidfile}; trap '' TERM; sleep 300"
    start = time.monotonic()
    result = run(inv("sh", "-c", script), Effects(duration=Duration(timeout="500ms")))
    assert time.monotonic() - start < 0.5 + BUSY  # not the sleep's 300 s
    assert result.timed_out
    assert result.exit_code is None
    child = int(pidfile.read_text())
    time.sleep(0.1)
    state = Path(f"/proc/{child}/stat")
    assert not state.exists() or state.read_text().split(")")[-1].split()[0] == "Z"


def test_output_is_capped():
    result = run(inv("yes"), Effects(), max_output=10_000, timeout=10)
    assert result.truncated
    assert len(result.stdout) <= 10_000


def test_environment_values_from_the_invocation():
    invocation = Invocation(
        tool="sh", path=(), argv=["sh", "-c", "echo $GH_TOKEN"], env={"GH_TOKEN": "t0k"}
    )
    assert run(invocation, Effects()).stdout == "t0k\n"


@pytest.mark.parametrize(
    ("text", "seconds"), [("500ms", 0.5), ("30s", 30), ("5m", 300), ("1.5h", 5400)]
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def _running(marker: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(cmdline.parent.name)
        except OSError:
            continue
    return found


@pytest.mark.parametrize("tty", [False, True])
def test_a_deadline_that_interrupts_the_run_leaves_no_child(tty):
    """A caller's deadline (SIGALRM, as `atip run --timeout` has) cuts in while the child
    runs: the whole group is killed, not orphaned."""
    import signal

    marker = f"sleep 7.{1 if tty else 2}23"
    effects = Effects(interactive=Interactive(tty=tty))

    def expire(_signum, _frame):
        raise TimeoutError("deadline")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(TimeoutError):
            run(inv("sh", "-c", marker), effects)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    deadline = time.monotonic() + 2
    while _running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running(marker) == []


# -- end of input under a terminal (issue 19, item 13) ----------------------------------------

TTY = Effects(interactive=Interactive(tty=True))


@pytest.mark.parametrize(
    ("given", "got"), [("Bob", "'Bob'"), ("Bob\n", "'Bob\\n'"), ("", "''"), ("a\nb", "'a\\nb'")]
)
def test_a_terminal_program_reading_to_the_end_gets_the_input_then_its_end(given, got):
    """Typed, then ended as a terminal ends it: the EOF character twice after a partial
    line (the first sends the line, the second ends input), once after a whole one."""
    program = "import sys; print('got', repr(sys.stdin.read()))"
    start = time.monotonic()
    result = run(inv(PY, "-c", program), TTY, stdin=given, timeout=60)
    assert time.monotonic() - start < 2 * BUSY
    assert not result.timed_out
    assert result.exit_code == 0
    assert f"got {got}" in result.stdout


def test_a_line_without_a_newline_ends_a_prompt_instead_of_the_timeout():
    """`--stdin "Bob"` to a program reading a line: it ends (as on a terminal where
    Ctrl-D is pressed until it does), where it waited for the timeout."""
    program = "name = input('Name? '); print('hello', name)"
    shell = 'read name; echo "hello $name"'
    for argv in ([PY, "-c", program], ["sh", "-c", shell]):
        start = time.monotonic()
        result = run(inv(*argv), TTY, stdin="Bob", timeout=60)
        assert time.monotonic() - start < 2 * BUSY, argv
        assert not result.timed_out
        assert "hello Bo" in result.stdout  # input() drops a last character it takes for \n
    assert run(inv("sh", "-c", shell), TTY, stdin="Bob", timeout=20).stdout.endswith("hello Bob\n")


def test_the_eof_character_is_the_terminals():
    from atipkit.execute.runner import typed

    assert typed(b"Bob", b"\x04") == [b"Bob\x04", b"\x04"]
    assert typed(b"a\nb\n", b"\x1a") == [b"a\n", b"b\n", b"\x1a"]
    assert typed(b"", b"\x04") == [b"\x04"]
    assert typed(None, b"\x04") == []


# -- isolate (RFC §11.1: sandboxing for untrusted tools) -----------------------------------

isolated = mode_fixture(ISOLATED)


@pytest.mark.parametrize("tty", [False, True])
def test_isolate_writes_only_the_working_directory(tmp_path, isolated, tty):
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    script = f"echo made > here; echo owned > {outside}; cat here"
    effects = Effects(interactive=Interactive(tty=tty))
    result = run(inv("sh", "-c", script), effects, cwd=str(work), isolate=True, timeout=20)
    assert result.isolation == isolated
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (work / "here").read_text() == "made\n"
    assert "made" in result.stdout
    assert not outside.exists()


def test_isolate_works_in_a_directory_named_through_a_link(tmp_path, isolated):
    """The working directory is mounted at its real path: named through a link (a
    `/home` that links to `/var/home`), bwrap could not enter it and the helper's own
    namespaces printed a traceback; a directory that is not there is an OSError, as
    without isolation."""
    work = tmp_path / "work"
    work.mkdir()
    link = tmp_path / "link"
    link.symlink_to(work)
    result = run(inv("sh", "-c", "echo made > here"), Effects(), cwd=str(link), isolate=True)
    assert result.exit_code == 0, result.stderr
    assert (work / "here").read_text() == "made\n"
    for cwd in (tmp_path / "missing", tmp_path / "missing-too"):
        with pytest.raises(FileNotFoundError):
            run(inv("true"), Effects(), cwd=str(cwd), isolate=(cwd.name == "missing"))


@pytest.mark.parametrize("tty", [False, True])
def test_isolate_keeps_the_environment(tmp_path, isolated, tty):
    """The run page: "its environment is what it would have without" `isolate`."""
    invocation = Invocation(
        tool="sh",
        path=(),
        argv=["sh", "-c", "echo $GH_TOKEN $FROM_CALLER"],
        env={"GH_TOKEN": "t0k"},
    )
    effects = Effects(interactive=Interactive(tty=tty))
    env = {"PATH": os.environ["PATH"], "FROM_CALLER": "kept"}
    result = run(invocation, effects, cwd=str(tmp_path), env=env, isolate=True, timeout=20)
    assert result.stdout.strip() == "t0k kept", result.stdout + result.stderr


@pytest.mark.parametrize("tty", [False, True])
def test_isolate_has_no_network_and_leaves_nothing_running(tmp_path, isolated, tty):
    """A child in a session of its own is gone when the run returns, through pipes and
    through a terminal (where, without isolation, only the process group is killed)."""
    listener = Listener.tcp()
    mark = marker()
    program = (
        "import socket, subprocess\n"
        f"subprocess.Popen(['sh', '-c', 'sleep 300', '{mark}'], start_new_session=True)\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {listener.port}), timeout=2)\n"
        "    print('reached')\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    try:
        effects = Effects(interactive=Interactive(tty=tty))
        result = run(inv(PY, "-c", program), effects, cwd=str(tmp_path), isolate=True)
    finally:
        listener.close()
    assert result.stdout.startswith("refused"), result.stdout + result.stderr
    assert listener.accepted == 0
    assert running(mark) == []


def test_isolate_refuses_the_root_as_working_directory(isolated):
    """`/` writable would be no isolation at all."""
    with pytest.raises(RunRefused, match="every file would be writable"):
        run(inv("true"), Effects(), cwd="/", isolate=True)


def test_isolate_is_refused_without_namespaces(tmp_path, monkeypatch):
    use_mode("none", monkeypatch)
    marker_file = tmp_path / "ran"
    try:
        with pytest.raises(RunRefused, match="isolation was asked for and cannot be given"):
            run(inv("sh", "-c", f"touch {marker_file}"), Effects(), isolate=True)
    finally:
        session._sessions.close_all()
    assert not marker_file.exists()
