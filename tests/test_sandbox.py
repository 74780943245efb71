"""The sandbox (`atipkit.sandbox`) against hostile programs, in each isolation mode this
machine allows (`bwrap`, `unshare`, and the fallback `none`): nothing a program starts
outlives its run, and, with namespaces, nothing it does reaches the host's files,
sockets or network."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from atipkit import sandbox
from atipkit.probe import probe, run_sandboxed
from atipkit.sandbox import session
from tests.helpers import ATIP, BUSY, atip_run, machine_env, minimal
from tests.sandboxing import (
    ISOLATED,
    MODES,
    Listener,
    marker,
    mode_fixture,
    running,
    script,
    use_mode,
)

GOOD = json.dumps(minimal())
mode = mode_fixture(MODES)
isolated = mode_fixture(ISOLATED)
LOOP = "while :; do sleep 1; done"


def escaper(directory: Path, mark: str, then: str = "") -> Path:
    """A tool that leaves processes in sessions of their own (setsid), double-forked
    (their parent gone), and ignoring SIGHUP and SIGTERM, then does `then` (default:
    answers with valid metadata)."""
    return script(
        directory,
        "escaper",
        "#!/bin/sh\n"
        f"setsid sh -c '{LOOP}' {mark}-setsid &\n"
        f"( sh -c '{LOOP}' {mark}-double & ) &\n"
        f"( setsid sh -c 'trap \"\" HUP TERM; {LOOP}' {mark}-both & ) &\n"
        f"sh -c '( sh -c \"{LOOP}\" {mark}-deep & ) &' &\n"
        "sleep 0.2\n" + (then or f"echo '{GOOD}'\n"),
    )


def test_setsid_and_double_fork_children_are_gone_when_the_probe_returns(tmp_path, mode):
    mark = marker()
    result = probe(escaper(tmp_path / "bin", mark), timeout=5)
    assert result.ok, result.failure
    assert running(mark) == []  # at once: the probe returned only once they were dead


def test_and_when_the_probe_times_out(tmp_path, mode):
    mark = marker()
    tool = escaper(tmp_path / "bin", mark, then="trap '' TERM\nsleep 60\n")
    start = time.monotonic()
    result = probe(tool, timeout=1)
    assert time.monotonic() - start < 1 + BUSY  # not the program's 60 s
    assert result.failure.kind == "timeout"
    assert running(mark) == []


@pytest.mark.parametrize("attack", ["kill -9 $PPID", "kill -STOP $PPID"])
def test_a_program_that_kills_or_stops_its_warden_leaves_nothing(tmp_path, mode, attack):
    """The warden is the program's parent, same user: the program can kill or stop it.
    The helper is a subreaper too, and kills a warden that does not finish in time."""
    mark = marker()
    tool = escaper(tmp_path / "bin", mark, then=f"{attack}\necho '{GOOD}'\n")
    probe(tool, timeout=1)
    deadline = time.monotonic() + 1  # the helper kills them as the warden dies
    while running(mark) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert running(mark) == []
    again = script(tmp_path / "bin", "good", f"#!/bin/sh\necho '{GOOD}'\n")
    assert probe(again).ok  # the sandbox still serves


def test_a_program_cannot_take_its_wardens_sockets(tmp_path, mode):
    """Same user as its warden and the server, a program could copy their sockets
    (`pidfd_getfd`, ptrace) and speak for them: a forged `done` made the host return
    while the program ran on. They are not dumpable: it gets none (but as root without
    namespaces, where it may trace anything: docs/agent-builders/sandbox.md, *Not guaranteed*)."""
    if mode == "none" and os.geteuid() == 0:
        pytest.skip("root on the host may trace any process")
    mark = marker()
    tool = script(
        tmp_path / "bin",
        "thief",
        "#!" + sys.executable + "\n"
        "import ctypes, json, os, socket, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "forged = json.dumps({'done': True, 'exit': 0, 'left': []}).encode()\n"
        "stolen = 0\n"
        "warden = os.getppid()\n"
        "server = int(open(f'/proc/{warden}/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "for pid in (warden, server):\n"
        "    try:\n"
        "        pidfd = os.pidfd_open(pid)\n"
        "    except OSError:\n"
        "        continue\n"
        "    for number in range(64):\n"
        "        fd = libc.syscall(438, pidfd, number, 0)  # pidfd_getfd\n"
        "        if fd < 0:\n"
        "            continue\n"
        "        try:\n"
        "            socket.socket(fileno=fd).send(forged)\n"
        "            stolen += 1\n"
        "        except OSError:\n"
        "            pass\n"
        "sys.stderr.write(f'stolen {stolen}\\n')\n"
        "sys.stderr.flush()\n"
        f"os.execvp('sh', ['sh', '-c', 'sleep 30', '{mark}'])\n",
    )
    result = probe(tool, timeout=1)
    assert (result.failure.kind, result.stderr) == ("timeout", "stolen 0\n")
    assert running(mark) == []
    again = script(tmp_path / "bin", "good", f"#!/bin/sh\necho '{GOOD}'\n")
    assert probe(again).ok


NOT_A_WORD = [
    b"not json",
    b"\xff",
    b"[]",
    b'"done"',
    b"[" * 60_000,
    b'{"left": []}',
    b'{"done": true, "exit": "0"}',
    b'{"done": true, "exit": 4991}',  # a stopped process's status: no exit code
    b'{"done": true, "exit": 99999999999}',
    b'{"done": true, "exit": null, "error": "2"}',
]


@pytest.mark.parametrize("word", NOT_A_WORD, ids=lambda word: repr(word[:40]))
def test_what_a_warden_says_is_input(word):
    """The host reads its wardens' sockets as input: anything but a well-formed `done`
    means a broken warden, which the server is told to kill (with what it ran); the
    program counts as killed. It raised out of `sandbox.run` (JSONDecodeError,
    AttributeError, TypeError, OverflowError)."""

    class Server:
        def __init__(self) -> None:
            self.told: list[int] = []

        def stuck(self, warden: int) -> None:
            self.told.append(warden)

    host, warden = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server = Server()
    warded = session._Warded(session._Link(host, 41), server)  # type: ignore[arg-type]
    with host, warden:
        warden.send(word)
        assert warded.poll() == -9
        assert (warded.finished, warded.reusable, warded.error) == (True, False, None)
        assert server.told == [41]
        assert warded.kill() == -9


def test_a_warden_gone_is_not_watched_while_the_pipes_drain(monkeypatch):
    """Its warden gone (its socket at end of file, readable for good), a program's
    pipes may stay open a moment (`EXIT_GRACE`: an orphan not yet killed). The loop
    stopped watching the socket through `fd`, which is None by then: it never did, and
    spun on it for the whole grace."""
    from atipkit import _process

    monkeypatch.setattr(_process, "EXIT_GRACE", 0.4)
    host, warden = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    warden.close()
    warded = session._Warded(session._Link(host, 41), None)  # type: ignore[arg-type]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    cpu = time.process_time()
    with host:
        captured = _process.collect(
            warded, out_r, err_r, None, None, start=time.monotonic(), timeout=5, max_bytes=99
        )
    os.close(out_w)
    os.close(err_w)
    assert (captured.exit_code, captured.stopped) == (-9, None)
    assert time.process_time() - cpu < 0.05


@pytest.mark.parametrize("word", [b"not json", b"[]", b'{"warden": "7"}', b"{}"])
def test_what_the_server_says_is_input(word):
    """An answer for a new warden that is not `{"warden": pid}` with one socket: the
    session is taken for broken (`_Gone`, a new one is started) and the descriptor
    closed."""
    host, server = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    passed, kept = socket.socketpair()
    broken = object.__new__(session._Session)
    broken.lock, broken.idle, broken.control = threading.Lock(), [], host
    with host, server, passed, kept:
        socket.send_fds(server, [word], [passed.fileno()])
        with pytest.raises(session._Gone):
            broken._warden()
        passed.close()
        kept.settimeout(1)
        assert kept.recv(1) == b""  # the copy the host got was closed too


SWEEP = """
import os, sys, time
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import _helper
warden = os.fork()
if warden == 0:
    os._exit(0)
orphan = os.fork()
if orphan == 0:
    time.sleep(30)
    os._exit(0)
time.sleep(0.2)  # the warden has exited: a zombie, for the server's `_reap` to reap
_helper._sweep({warden})
print(os.waitpid(warden, os.WNOHANG)[0] == warden, os.waitpid(orphan, 0)[1])
"""


def test_the_sweep_kills_orphans_and_leaves_the_wardens_to_the_server():
    """A warden that exited while the server killed a dead warden's orphans was reaped
    by the sweep, so the server never forgot it: its close() spun on the pidfd of a
    process long gone for 2 s. The sweep kills the orphans; the server's `_reap`, which
    knows its wardens, reaps all."""
    helper = session.layout.HELPER
    done = subprocess.run(
        [sys.executable, "-c", SWEEP, helper], capture_output=True, text=True, timeout=20
    )
    assert done.stdout.split() == ["True", "9"], done.stderr


def test_a_racer_against_cleanup_breaks_nothing_and_leaves_nothing(tmp_path, mode):
    """A tool that keeps creating files and locked directories from a setsid loop while
    its directory is removed: `atip scan` records it as a failure, finds the tool after
    it, exits 0, and leaves no directory in TMPDIR and no process."""
    mark = marker()
    bin_dir = tmp_path / "bin"
    racer = (
        'i=0; while :; do i=$((i+1)); mkdir -p d$i/e; touch d$i/f x$i "$HOME/h$i" '
        '"$TMPDIR/t$i"; chmod 000 d$i; done'
    )
    script(bin_dir, "a-racer", f"#!/bin/sh\nsetsid sh -c '{racer}' {mark} &\nsleep 0.3\nexit 3\n")
    script(bin_dir, "b-good", f"#!/bin/sh\necho '{json.dumps(minimal(name='b-good'))}'\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = machine_env(tmp_path, TMPDIR=str(temp), ATIP_SANDBOX=mode)
    done = atip_run(env, "scan", "--path", str(bin_dir), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["result"]
    assert [f["name"] for f in report["found"]] == ["b-good"]
    assert [(f["name"], f["kind"]) for f in report["failures"]] == [("a-racer", "exit-code")]
    assert report["isolation"] == mode
    assert list(temp.iterdir()) == []
    assert running(mark) == []


def test_the_terminal_is_out_of_reach_by_its_path_too(tmp_path, mode):
    """No controlling terminal keeps /dev/tty closed; the terminal's own device
    (/dev/pts/N, the user's, open to the same user) is not there with namespaces: the
    helper's own namespaces showed the host's /dev, and a probe wrote to the terminal
    `atip scan` ran in. Without namespaces it can (the sandbox page, *Not guaranteed*)."""
    from tests.test_hostile_corpus import under_terminal

    bin_dir = tmp_path / "bin"
    writer = "for t in /dev/pts/*; do printf 'owned\\n' > $t; done 2>/dev/null\nexit 1\n"
    script(bin_dir, "pts-writer", "#!/bin/sh\n" + writer)
    env = machine_env(tmp_path, ATIP_SANDBOX=mode)
    ran = under_terminal([*ATIP, "scan", "--path", str(bin_dir), "--json"], env, tmp_path)
    assert json.loads(ran.stdout)["result"]["isolation"] == mode
    assert (b"owned" in ran.tty) == (mode == "none"), ran.tty


def test_writes_outside_the_sandbox_fail_or_stay_in_it(tmp_path, monkeypatch, isolated):
    """Absolute paths on the host (the test's directory, $HOME, /tmp, /var/tmp, the
    tool's own directory) are read-only or throwaways."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    mark = marker()
    bin_dir = tmp_path / "bin"
    targets = [
        tmp_path / "outside",
        home / ".bashrc",
        Path("/tmp") / mark,
        Path("/var/tmp") / mark,
        bin_dir / "planted",
    ]
    writes = "".join(f"echo owned > {t} 2>/dev/null\n" for t in targets)
    tool = script(bin_dir, "writer", f"#!/bin/sh\n{writes}echo '{GOOD}'\n")
    result = probe(tool)
    assert result.ok, result.failure
    assert [t for t in targets if t.exists()] == []


def test_tools_in_hidden_places_still_run(tmp_path, monkeypatch, mode):
    """A tool under /tmp, /dev/shm or $HOME (hidden places) comes back, read-only."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    shm = Path("/dev/shm") / marker()
    try:
        for directory in (tmp_path / "bin", shm, home / ".local" / "bin"):
            assert probe(script(directory, "t", f"#!/bin/sh\necho '{GOOD}'\n")).ok, directory
    finally:
        for leftover in shm.iterdir():
            leftover.unlink()
        shm.rmdir()


def test_without_namespaces_writes_do_reach_the_host(tmp_path, monkeypatch):
    """What the fallback does not guarantee (the sandbox page): a probe writes where you can."""
    use_mode("none", monkeypatch)
    target = tmp_path / "outside"
    result = probe(script(tmp_path / "bin", "w", f"#!/bin/sh\ntouch {target}\necho '{GOOD}'\n"))
    session._sessions.close_all()
    assert result.ok
    assert target.exists()


def _connector(directory: Path, targets: list[str]) -> Path:
    """A tool that tries each `host:port` (or Unix socket path) and says, in its
    metadata, which connected."""
    return script(
        directory,
        "connector",
        "#!" + sys.executable + "\n"
        "import json, socket\n"
        f"doc = {minimal()!r}\n"
        "reached = []\n"
        f"for target in {targets!r}:\n"
        "    try:\n"
        "        if target.startswith('/'):\n"
        "            s = socket.socket(socket.AF_UNIX)\n"
        "            s.connect(target)\n"
        "        else:\n"
        "            host, port = target.rsplit(':', 1)\n"
        "            s = socket.create_connection((host.strip('[]'), int(port)), timeout=1)\n"
        "        reached.append(target)\n"
        "    except OSError:\n"
        "        pass\n"
        "doc['x-reached'] = reached\n"
        "print(json.dumps(doc))\n",
    )


def _loopbacks() -> list[Listener]:
    listeners = [Listener.tcp("127.0.0.1")]
    if socket.has_ipv6:
        with contextlib.suppress(OSError):  # no IPv6 loopback here
            listeners.append(Listener.tcp("::1"))
    return listeners


def test_loopback_services_are_unreachable(tmp_path, mode):
    """A real listener on the host's loopback counts what reaches it: nothing with
    namespaces; without them, everything (not guaranteed, as the sandbox page says)."""
    listeners = _loopbacks()
    try:
        targets = [f"[{each.sock.getsockname()[0]}]:{each.port}" for each in listeners]
        result = probe(_connector(tmp_path / "bin", targets), timeout=10)
        assert result.ok, result.failure
        accepted = sum(listener.accepted for listener in listeners)
    finally:
        for listener in listeners:
            listener.close()
    if mode == "none":
        assert (accepted, result.tool.extensions["x-reached"]) == (len(targets), targets)
    else:
        assert (accepted, result.tool.extensions["x-reached"]) == (0, [])


def test_sockets_and_secrets_in_home_and_tmp_are_hidden(tmp_path, monkeypatch, isolated):
    """$HOME and /tmp are throwaways: an agent's socket and a private key there are not
    seen, though the tool's own directory (under /tmp here) is."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_test").write_text("PRIVATE")
    monkeypatch.setenv("HOME", str(home))
    agent = Listener.unix(home / "agent.sock")
    loose = Path(f"/tmp/{marker()}.sock")
    tmp_agent = Listener.unix(loose)
    try:
        bin_dir = tmp_path / "bin"
        tool = _connector(bin_dir, [str(home / "agent.sock"), str(loose)])
        text = tool.read_text().replace(
            "print(json.dumps(doc))",
            "import os\n"
            f"doc['x-key'] = os.path.exists({str(home / '.ssh' / 'id_test')!r})\n"
            "doc['x-run'] = os.listdir('/run')\n"
            "doc['x-self'] = os.path.exists(__file__)\n"
            "print(json.dumps(doc))",
        )
        tool.write_text(text)
        result = probe(tool)
        accepted = agent.accepted + tmp_agent.accepted
    finally:
        agent.close()
        tmp_agent.close()
        loose.unlink()
    assert result.ok, result.failure
    ext = result.tool.extensions
    assert (accepted, ext["x-reached"], ext["x-key"], ext["x-run"]) == (0, [], False, [])
    assert ext["x-self"] is True


def test_a_helper_that_does_not_answer_is_given_up(tmp_path, monkeypatch, mode):
    """A helper silent past `START_TIMEOUT` (a loaded machine, a hung start) is killed
    with all it started, and the mode given up: the host read its stderr to the end,
    which never came while a child of it (under bwrap, the helper itself) held it."""
    mark = marker()
    silent = script(
        tmp_path / "bin",
        "python",
        f"#!/bin/sh\nexport ATIPMARK={mark}\nsleep 60 &\nexec sleep 60\n",
    )
    monkeypatch.setattr(session.layout, "interpreter", lambda: str(silent))
    monkeypatch.setattr(session, "START_TIMEOUT", 0.3)
    raised: list[BaseException] = []

    def start() -> None:
        try:
            session._Session(mode, session.layout.mounts([str(silent)]))
        except BaseException as exc:
            raised.append(exc)

    starting = threading.Thread(target=start, daemon=True)
    starting.start()
    try:
        starting.join(timeout=10)
        assert not starting.is_alive(), "the host waits for a helper that never answers"
        assert [type(exc) for exc in raised] == [sandbox.SandboxError]
        assert running(mark) == []
    finally:
        for pid in running(mark):  # the old code's: let the thread go
            os.kill(pid, 9)
        starting.join(timeout=5)


def test_programs_of_one_process_share_the_throwaways(tmp_path, isolated):
    """Not guaranteed (the sandbox page): what a program leaves in a hidden place outside its own
    directory is there for the next program of the process, not for the host."""
    mark = marker()
    planted = [f"/tmp/{mark}", f"/var/tmp/{mark}", f"/dev/shm/{mark}"]
    plant = script(
        tmp_path / "bin", "plant", "#!/bin/sh\n" + "".join(f"echo x > {p}\n" for p in planted)
    )
    look = script(tmp_path / "bin", "look", "#!/bin/sh\n" + "".join(f"cat {p}\n" for p in planted))
    assert run_sandboxed(plant, []).exit_code == 0
    assert run_sandboxed(look, []).stdout == b"x\n" * 3
    assert [p for p in planted if os.path.exists(p)] == []


def test_isolation_is_claimed_only_after_the_helper_saw_it(monkeypatch):
    """A helper checks from inside what its mode promises (loopback only, a read-only
    root) before the mode is used: what one on the host sees does not pass."""
    from atipkit.sandbox.plan import mounts

    seen = {}
    for mode in MODES:
        monkeypatch.setattr(session, "_sessions", session._Sessions())
        monkeypatch.setenv(sandbox.ENV, mode)
        one = session._sessions.acquire(mounts([]))
        seen[one.mode] = one.checks
        session._sessions.release(one)
        session._sessions.close_all()
    host = seen["none"]
    assert host["rootWritable"] is True
    for mode in ISOLATED:
        with pytest.raises(sandbox.SandboxError, match=r"writable|network"):
            session.verify(mode, host)
    for mode in set(seen) - {"none"}:
        assert set(seen[mode]["interfaces"]) <= {"lo"}
        assert seen[mode]["rootWritable"] is False
        session.verify(mode, seen[mode])


def test_no_capability_no_new_privileges_own_processes_only(tmp_path, mode):
    tool = script(
        tmp_path / "bin",
        "status",
        "#!" + sys.executable + "\n"
        "import json, os\n"
        f"doc = {minimal()!r}\n"
        "status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines())\n"
        "doc['x-caps'] = status['CapEff'].strip()\n"
        "doc['x-nnp'] = status['NoNewPrivs'].strip()\n"
        "doc['x-pids'] = len([p for p in os.listdir('/proc') if p.isdigit()])\n"
        "print(json.dumps(doc))\n",
    )
    ext = probe(tool).tool.extensions
    assert ext["x-nnp"] == "1"  # everywhere: no set-user-ID program gains anything
    if mode != "none":
        assert int(ext["x-caps"], 16) == 0
        assert ext["x-pids"] < 30  # the sandbox's own, not the machine's


def test_a_program_cannot_signal_the_hosts_processes(tmp_path, mode):
    """In its own PID namespace, a program cannot name a process of the host: a
    bystander it tries to kill lives (without namespaces, it does not)."""
    mark = marker()
    bystander = subprocess.Popen(["sh", "-c", "sleep 30", mark])
    try:
        tool = script(
            tmp_path / "bin",
            "killer",
            f"#!/bin/sh\nkill -9 {bystander.pid} 2>/dev/null\nsleep 0.1\necho '{GOOD}'\n",
        )
        assert probe(tool).ok
        time.sleep(0.1)
        assert (bystander.poll() is None) == (mode != "none")
    finally:
        bystander.kill()
        bystander.wait()


def test_the_fallback_is_said_once_and_reported(tmp_path, monkeypatch):
    """bwrap asked for and not installed: programs run without namespaces, said once with
    a SandboxWarning; `isolation()` says `none`; an isolated run is refused."""
    monkeypatch.setattr(session, "_sessions", session._Sessions())
    monkeypatch.setenv(sandbox.ENV, "bwrap")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bwrap-here"))
    tool = script(tmp_path / "bin", "t", f"#!/bin/sh\necho '{GOOD}'\n")
    try:
        with pytest.warns(sandbox.SandboxWarning, match="bwrap is not installed"):
            assert probe(tool).ok
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert probe(tool).ok  # once
        assert sandbox.isolation() == sandbox.used() == "none"
        with pytest.raises(sandbox.SandboxError, match="no namespaces"):
            sandbox.wrap([str(tool)], cwd=str(tmp_path))
    finally:
        session._sessions.close_all()


def test_atip_scan_says_what_isolated_it_and_warns_when_nothing_did(tmp_path):
    bin_dir = tmp_path / "bin"
    script(bin_dir, "t", f"#!/bin/sh\necho '{json.dumps(minimal(name='t'))}'\n")
    fallback = machine_env(tmp_path, ATIP_SANDBOX="bwrap", PATH=str(tmp_path / "no-bwrap"))
    done = atip_run(fallback, "scan", "--path", str(bin_dir), "--json")
    out = json.loads(done.stdout)
    assert (done.returncode, out["result"]["isolation"]) == (0, "none")
    assert [w for w in out["meta"]["warnings"] if "without namespaces" in w]
    text = atip_run(fallback, "scan", "--path", str(bin_dir), "--refresh", "--text")
    assert text.stderr.count("warning: programs run without namespaces") == 1
    usual = machine_env(tmp_path / "usual", ATIP_SANDBOX="auto")
    out = json.loads(atip_run(usual, "scan", "--path", str(bin_dir), "--json").stdout)
    if out["result"]["isolation"] != "none":  # namespaces here: nothing to warn about
        assert not [w for w in out["meta"]["warnings"] if "without namespaces" in w]


def test_run_sandboxed_feeds_stdin_and_keeps_the_minimal_environment(tmp_path, mode, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    tool = script(tmp_path / "bin", "env", "#!/bin/sh\ncat\nenv | sort\n")
    captured = run_sandboxed(tool, [], stdin=b"fed\n", env={"EXTRA": "1"})
    lines = captured.stdout.decode().splitlines()
    assert lines[0] == "fed"
    names = {line.split("=", 1)[0] for line in lines[1:]}
    assert "SECRET_TOKEN" not in names
    assert {"EXTRA", "HOME", "TMPDIR", "PATH"} <= names
    home = Path(next(line for line in lines if line.startswith("HOME=")).split("=", 1)[1])
    assert str(home) != os.environ["HOME"]
    deadline = time.monotonic() + 2  # removed right after `done`, by its warden
    while home.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not home.exists()


def test_a_program_that_cannot_start_is_an_oserror(tmp_path, mode):
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\n")
    for path in (plain, tmp_path / "missing"):
        with pytest.raises(OSError, match=r"Permission denied|No such file"):
            run_sandboxed(path, [])
        assert probe(path).failure.kind == "not-executable"


def test_a_tool_whose_examination_raises_is_its_failure_and_is_probed_again(
    tmp_path, isolated_home, monkeypatch
):
    """An exception while examining one tool (a `name` nested 500 deep made the
    validator raise RecursionError, before documents were bounded): that tool's
    failure, kind `error`, and the scan goes on; not cached, so the next scan looks
    again, where a tool's own failure is kept."""
    from atipkit import _scan as scanning

    bin_dir = tmp_path / "bin"
    for name in ("a-good", "c-good"):
        script(bin_dir, name, f"#!/bin/sh\necho '{json.dumps(minimal(name=name))}'\n")
    script(bin_dir, "b-raises", "#!/bin/sh\nexit 1\n")
    script(bin_dir, "d-fails", "#!/bin/sh\nexit 1\n")
    probe_as_usual = scanning.probe

    def probe_or_raise(path: str, **options: object) -> object:
        if path.endswith("b-raises"):
            raise RecursionError("maximum recursion depth exceeded")
        return probe_as_usual(path, **options)

    monkeypatch.setattr(scanning, "probe", probe_or_raise)
    first = scanning.scan([str(bin_dir)])
    assert [f.name for f in first.found] == ["a-good", "c-good"]
    assert [(f.name, f.kind) for f in first.failures] == [
        ("b-raises", "error"),
        ("d-fails", "exit-code"),
    ]
    assert first.failures[0].message == "RecursionError: maximum recursion depth exceeded"
    again = scanning.scan([str(bin_dir)])
    assert (again.probed, [(f.name, f.kind) for f in again.failures]) == (
        1,
        [("b-raises", "error")],
    )
