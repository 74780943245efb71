"""The inside of the sandbox: a small program run as `python -I -S _helper.py ...`.

Standard library only (it runs without site-packages, inside the namespaces), and no
import of atipkit. Two commands:

- `serve FD PLAN`: the session's server, on the socket FD (`SOCK_SEQPACKET`). It forks a
  *warden* when the host asks and hands the host a socket to it. A warden runs the
  programs the host sends it (one message each, its stdio as SCM_RIGHTS), one at a time;
  it is a child subreaper (`PR_SET_CHILD_SUBREAPER`): every process a program leaves
  behind — `setsid()`, double forks — is re-parented to it, so when the program exits
  (or the host says `kill`, or goes away) the warden kills and reaps all of them, answers
  `done`, and removes the program's directory, which nothing can write into any more.
- `exec PLAN -- ARGV`: run one command in the namespaces with the caller's stdio (the
  runner's `isolate`, where bubblewrap is not installed); everything it started dies
  with it.

PLAN is JSON: `{"unshare": bool, "mounts": [[kind, path], ...], "tmp_size": int}`. With
`unshare`, the helper enters the namespaces itself (user, mount, network, IPC, UTS, PID:
`enter_namespaces`); without, it runs where it was started (inside bubblewrap, or on the
host when no namespaces are available).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import struct
import sys
import time
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 1
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (kernel 5.12)
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203}
MNT_DETACH = 2
# SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS_LOCKED... and their locks: uid 0
# gains nothing at exec
SECUREBITS = 0x2F

MAX_REQUEST = 1 << 20
MAX_CPU = 86400  # seconds: a limit past this is no limit worth setting
KILL_PATIENCE = 2.0  # seconds to kill and reap everything a program left
SUBDIRS = ("work", "home", "config", "data", "cache", "state", "tmp")
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
"""The host's devices a program gets (the helper's own namespaces; bubblewrap's list)."""
DEFAULT_SIGNALS = signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}
"""Set to their default action in the program: Python ignores SIGPIPE, and an ignored
signal stays ignored across exec."""

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _prctl(option: int, value: int) -> int:
    return int(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0))


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            kind.encode() if kind else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _read_only(path: str, *, writable: bool = False) -> None:
    """Make the mount tree at `path` read-only (or writable) recursively."""
    attr = struct.pack(
        "QQQQ", 0 if writable else MOUNT_ATTR_RDONLY, MOUNT_ATTR_RDONLY if writable else 0, 0, 0
    )
    buf = ctypes.create_string_buffer(attr)
    _check(
        _libc.syscall(
            ctypes.c_long(SYS_MOUNT_SETATTR),
            ctypes.c_int(AT_FDCWD),
            path.encode(),
            ctypes.c_uint(AT_RECURSIVE),
            buf,
            ctypes.c_size_t(len(attr)),
        ),
        f"read-only {path}",
    )


# -- namespaces (the unshare path) --------------------------------------------------------


def enter_namespaces(plan: dict) -> None:
    """Enter new user, mount, network, IPC, UTS and PID namespaces and lay out the
    filesystem as `plan["mounts"]` says; return in the namespace's PID 1. The calling
    process stays outside, waits for PID 1 and exits with its status (it never returns).

    As bubblewrap does: a tmpfs becomes the root with the old tree under `/old` (where
    what the new tree hides is still reachable), the new tree is built at `/new` from
    binds of `/old` with a /dev of its own (`_dev`), and becomes the root; `/old` is
    detached."""
    uid, gid = os.getuid(), os.getgid()
    _check(
        _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
        "unshare",
    )
    maps = (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1"))
    for name, text in maps:
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m")
    os.mkdir("/tmp/old")
    os.mkdir("/tmp/new")
    _pivot_root("/tmp", "/tmp/old")
    os.chdir("/")
    _mount("/old", "/new", None, MS_BIND | MS_REC)
    _read_only("/new")
    _dev("/new/dev")
    size = int(plan.get("tmp_size") or 0)
    for kind, path in plan["mounts"]:
        target = "/new" + path
        if kind == "tmpfs":
            os.makedirs(target, exist_ok=True)  # inside a hidden place, it is not there
            _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={size}")
            continue
        if os.path.isdir("/old" + path):
            os.makedirs(target, exist_ok=True)
        elif not os.path.exists(target):  # a file: the mount point is an empty file
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        _mount("/old" + path, target, None, MS_BIND | MS_REC)
        _read_only(target, writable=kind == "rw")
    os.chdir("/new")
    _pivot_root(".", ".")
    _check(_libc.umount2(b".", MNT_DETACH), "umount the old root")
    os.chdir("/")
    _check(_libc.unshare(CLONE_NEWPID), "unshare pid")
    child = os.fork()
    if child:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _, status = os.waitpid(child, 0)
        os._exit(_exit_code(status))
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the outside killed: all of this dies
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _drop_privileges()


def _dev(target: str) -> None:
    """A /dev of its own at `target`, as bubblewrap's `--dev` makes: the harmless
    devices bound from the host's, its own instance of devpts, the usual links. The
    host's terminals (/dev/pts/N: the user's, open to the same user by path) and its
    other devices (GPUs, sound, FUSE, KVM) are not there."""
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
    for name in DEVICES:
        node = f"{target}/{name}"
        os.close(os.open(node, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o444))
        _mount(f"/old/dev/{name}", node, None, MS_BIND)
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{number}", f"{target}/{name}")
    os.symlink("/proc/self/fd", f"{target}/fd")
    os.mkdir(f"{target}/shm", 0o755)
    os.mkdir(f"{target}/pts", 0o755)
    pts = "newinstance,ptmxmode=0666,mode=620"
    _mount("devpts", f"{target}/pts", "devpts", MS_NOSUID | MS_NOEXEC, pts)
    os.symlink("pts/ptmx", f"{target}/ptmx")


def _pivot_root(new: str, old: str) -> None:
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(errno.ENOSYS, f"pivot_root: unknown on {os.uname().machine}")
    _check(_libc.syscall(ctypes.c_long(number), new.encode(), old.encode()), "pivot_root")


def _drop_privileges() -> None:
    """No capability survives an exec, even as uid 0 in the namespace, and no set-user-ID
    program gains any (inherited by every descendant)."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0:
            break  # past the last capability this kernel knows
    _prctl(PR_SET_SECUREBITS, SECUREBITS)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


# -- checks ----------------------------------------------------------------------------------


def checks() -> dict:
    """What the host verifies before it claims isolation: the network interfaces, and
    whether / and a scratch directory are writable."""
    try:
        interfaces = [name for _, name in socket.if_nameindex()]
    except OSError:
        interfaces = []
    return {
        "interfaces": interfaces,
        "rootWritable": not os.statvfs("/").f_flag & os.ST_RDONLY,
        "pid": os.getpid(),
    }


# -- serve: the session's server -----------------------------------------------------------


def serve(control_fd: int, plan: dict) -> None:
    """The session's server: it forks wardens when the host asks (`{"warden": true}`,
    answered with the warden's pid and the host's end of a socket to it), kills a warden
    the host reports as stuck (`{"stuck": pid}`), and ends when the host closes the
    socket. A warden serves one program at a time, so whatever is re-parented to it is
    that program's; the host reuses it, so a program costs no fork here.

    The server is a subreaper too: should a program kill its warden (or the host have
    it killed), what the program left is re-parented here and killed (`_sweep`); a
    warden a program stopped (SIGSTOP) is resumed at once.

    Neither the server nor its wardens is dumpable: a program, the same user, can
    neither trace them nor copy their sockets (`pidfd_getfd`) to speak for them — a
    forged `done` would end its run on the host's side while it ran on."""
    if plan.get("unshare"):
        enter_namespaces(plan)
    _prctl(PR_SET_DUMPABLE, 0)  # inherited by the wardens it forks; a program's exec resets it
    control = socket.socket(fileno=control_fd)
    try:
        root = _make_root(plan)
    except OSError as exc:
        control.send(json.dumps({"error": str(exc)}).encode())
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host decides; EOF ends the session
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    server = _Server(control, root)
    gc.freeze()  # a forked warden shares these pages instead of copying them
    control.send(json.dumps({"ready": True, "root": root, "checks": checks()}).encode())
    try:
        server.loop()
    finally:
        server.close()
        remove(root)


class _Server:
    """The server's state: the control socket and its wardens (pid: pidfd); SIGCHLD
    wakes its loop."""

    def __init__(self, control: socket.socket, root: str) -> None:
        self.control = control
        self.root = root
        self.wardens: dict[int, int | None] = {}
        self.wakeup, write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(write)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def loop(self) -> None:
        while True:
            watched: list[socket.socket | int] = [self.control, self.wakeup]
            ready, _, _ = select.select(watched, [], [])
            if self.wakeup in ready:
                _drain(self.wakeup)
                self._reap()
            if self.control not in ready:
                continue
            try:
                data, fds = _receive(self.control)
            except OSError:
                return
            for fd in fds:
                os.close(fd)
            if not data:
                return  # the host closed the session (or is gone)
            request = json.loads(data)
            if "stuck" in request:
                self._kill(request["stuck"])
            elif request.get("warden"):
                self._fork()

    def _fork(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                self.control.close()
                mine.close()
                signal.set_wakeup_fd(-1)
                os.close(self.wakeup)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                code = _warden(theirs, self.root)
            finally:
                os._exit(code)
        theirs.close()
        try:
            self.wardens[pid] = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.wardens[pid] = None
        with contextlib.suppress(OSError):
            self.control.sendmsg(
                [json.dumps({"warden": pid}).encode()],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", mine.fileno()))],
            )
        mine.close()

    def _kill(self, pid: int) -> None:
        """Kill a warden (the host's word: it did not finish), then what it left."""
        if pid not in self.wardens:
            return
        pidfd = self.wardens[pid]
        with contextlib.suppress(OSError):
            if pidfd is not None:  # never another process that got the number
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                select.select([pidfd], [], [], KILL_PATIENCE)  # readable once it exited
            else:
                os.kill(pid, signal.SIGKILL)
        self._reap()

    def _reap(self) -> None:
        """Reap the children that exited (wardens, orphans killed), resume a warden a
        program stopped, and kill what a dead warden left."""
        dead = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG | os.WUNTRACED)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if os.WIFSTOPPED(status):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGCONT)
            elif pid in self.wardens:
                pidfd = self.wardens.pop(pid)
                if pidfd is not None:
                    os.close(pidfd)
                dead = True
        if dead:
            _sweep(set(self.wardens))

    def close(self) -> None:
        """Let the wardens finish (an idle one exits when the host's end of its socket
        closes; a busy one when its program is done), for up to `KILL_PATIENCE`."""
        deadline = time.monotonic() + KILL_PATIENCE
        while self.wardens and time.monotonic() < deadline:
            pidfds = [fd for fd in self.wardens.values() if fd is not None]
            if not pidfds:
                break
            select.select(pidfds, [], [], deadline - time.monotonic())
            self._reap()


def _drain(fd: int) -> None:
    with contextlib.suppress(BlockingIOError):
        while os.read(fd, 512):
            pass


def _sweep(wardens: set[int]) -> None:
    """Kill every child of this server but its wardens (orphans of a warden that died)
    until none is left alive, or `KILL_PATIENCE` has passed. Reaping is `_reap`'s (their
    SIGCHLD wakes the loop): a wait for any child here would reap a warden that exited
    meanwhile, which the server would then never forget."""
    deadline = time.monotonic() + KILL_PATIENCE
    while time.monotonic() < deadline:
        orphans = [child for child in _children(os.getpid()) if child not in wardens]
        if not orphans:
            return
        for child in orphans:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        time.sleep(0.002)


def _make_root(plan: dict) -> str:
    """The session's scratch directory: in /tmp, the sandbox's own tmpfs with namespaces,
    else the host's temporary directory."""
    base = "/tmp" if plan.get("isolated") else (os.environ.get("TMPDIR") or "/tmp")
    for _ in range(100):
        path = os.path.join(base, f"atip-probe-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free name for the sandbox directory")


def _receive(link: socket.socket) -> tuple[bytes, list[int]]:
    fds: list[int] = []
    data, ancillary, _, _ = link.recvmsg(
        MAX_REQUEST, socket.CMSG_SPACE(8 * 4), socket.MSG_CMSG_CLOEXEC
    )
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds.extend(struct.unpack(f"{usable // 4}i", payload[:usable]))
    return data, fds


def _warden(link: socket.socket, root: str) -> int:
    """Serve the host's requests on `link`, one program at a time, until the host closes
    it, or a program leaves a process that will not die (then this warden retires: what
    is left is not the next program's)."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)  # no set-user-ID program: nothing it starts escapes kill()
    count = 0
    while True:
        try:
            data, fds = _receive(link)
        except OSError:
            return 0
        if not data:
            return 0
        if data == b"kill":  # for a program that had exited meanwhile: done already
            for fd in fds:
                os.close(fd)
            continue
        count += 1
        home = os.path.join(root, f"p{os.getpid()}-{count}")
        try:
            clean = _run(link, json.loads(data), fds, home)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        os.chdir("/")
        remove(home)
        if not clean:
            return 0


def _run(link: socket.socket, request: dict, fds: list[int], home: str) -> bool:
    """One program, start to finish: start it in `home` with the host's pipes (`fds`:
    stdout, stderr, and stdin if it has data); when it exits, or the host says `kill`,
    kill and reap everything it left and say `done` (with its exit status if it exited;
    `error` if it could not start). Whether everything died."""
    if not request.get("stdin"):
        fds.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))  # closed with the rest
    cpu = _cpu_seconds(request.get("cpu"))
    try:
        with _inherited_cpu_limit(cpu):
            pid = _start(request, home, fds[2], fds[0], fds[1])
    except OSError as exc:
        error = {"error": exc.errno or 0, "message": exc.strerror or str(exc)}
        _send(link, {"done": True, "exit": None, "left": [], **error})
        return True
    for fd in fds:
        os.close(fd)  # the program has them: EOF reaches the host when it is done
    fds.clear()
    if cpu is not None:
        _limit_program(pid, cpu)
    status, used = _watch(link, pid)
    left = kill_all(pid if status is None else None)
    message = {"done": True, "exit": status, "left": left, "cpu": _spun(status, used, cpu)}
    _send(link, message)  # nothing of it runs any more
    return not left


def _spun(status: int | None, used: float, limit: int | None) -> bool:
    """Whether the program was ended by its CPU limit: killed by SIGXCPU, or by SIGKILL
    with its limit used up (the hard limit's)."""
    if limit is None or status is None or not os.WIFSIGNALED(status):
        return False
    return os.WTERMSIG(status) == signal.SIGXCPU or used >= limit


def _cpu_seconds(asked: object) -> int | None:
    """The CPU seconds the host asked each process of the program be limited to, in
    whole seconds (RLIMIT_CPU's unit), at least one; None for none, or for anything
    that is not a sensible number of seconds (the host's word is input)."""
    if isinstance(asked, bool) or not isinstance(asked, int | float):
        return None
    if not 0 < asked < MAX_CPU:  # NaN too
        return None
    return math.ceil(asked)


@contextlib.contextmanager
def _inherited_cpu_limit(seconds: int | None) -> Iterator[None]:
    """While the program starts, this warden's soft CPU limit is what it has used plus
    `seconds`: the program inherits it at its start, before it can run or fork anything
    (a process's CPU count starts at zero), so that nothing it starts escapes the limit
    (decision 619). Restored after: the warden serves more programs."""
    if seconds is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.ceil(usage.ru_utime + usage.ru_stime) + seconds
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _limit_program(pid: int, seconds: int) -> None:
    """The program's own limit, now that it runs: `seconds` exactly (the kernel sends
    SIGXCPU), and SIGKILL a second later for one that catches SIGXCPU; what it starts
    from now on inherits both. What it started before has the limit it inherited."""
    with contextlib.suppress(OSError, ValueError):  # gone already
        resource.prlimit(pid, resource.RLIMIT_CPU, (seconds, seconds + 1))


def _start(request: dict, home: str, stdin: int, stdout: int, stderr: int) -> int:
    os.mkdir(home, 0o700)
    for name in SUBDIRS:
        os.mkdir(f"{home}/{name}", 0o700)
    env = {
        **request.get("env", {}),
        "HOME": f"{home}/home",
        "XDG_CONFIG_HOME": f"{home}/config",
        "XDG_DATA_HOME": f"{home}/data",
        "XDG_CACHE_HOME": f"{home}/cache",
        "XDG_STATE_HOME": f"{home}/state",
        "TMPDIR": f"{home}/tmp",
        **request.get("extra", {}),
    }
    os.chdir(f"{home}/work")
    argv = request["argv"]
    return os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, stdin, 0),
            (os.POSIX_SPAWN_DUP2, stdout, 1),
            (os.POSIX_SPAWN_DUP2, stderr, 2),
        ],
        setsid=True,
        setsigdef=DEFAULT_SIGNALS,
        setsigmask=(),
    )


def _send(link: socket.socket, message: dict) -> None:
    with contextlib.suppress(OSError):  # the host is gone: nothing to tell
        link.send(json.dumps(message).encode())


def _watch(link: socket.socket, pid: int) -> tuple[int | None, float]:
    """Until the program exits (its wait status, and the CPU seconds it used) or the host
    says `kill` or goes away (None, 0: it still runs)."""
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            watched: list[socket.socket | int] = [link] if pidfd is None else [link, pidfd]
            ready, _, _ = select.select(watched, [], [], 0.02 if pidfd is None else None)
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return status, usage.ru_utime + usage.ru_stime
            if link in ready:
                try:
                    message = link.recv(64)
                except OSError:
                    message = b""
                if message in (b"", b"kill"):
                    return None, 0.0
    finally:
        if pidfd is not None:
            os.close(pidfd)


def kill_all(pid: int | None) -> list[int]:
    """SIGKILL the program (`pid`, its group) and every process re-parented to this
    subreaper, and reap them all; the processes that could not be killed in
    `KILL_PATIENCE` seconds (none, unless one is stuck in the kernel)."""
    if pid is not None:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(OSError):
                kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + KILL_PATIENCE
    children: list[int] = []
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass  # reap what is dead
        except ChildProcessError:
            return []  # no child left at all: every descendant is gone
        if time.monotonic() > deadline:
            return children
        children = _children(os.getpid())
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        time.sleep(0.001)


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (/proc: the kernel may lack the `children`
    file)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent and fields[0] != b"Z":  # a zombie needs no killing
            found.append(int(name))
    return found


def remove(path: str) -> bool:
    """Remove a directory tree whatever its permissions (a program may have made a
    directory unreadable); retried, since in the fallback another program could still be
    writing into it. Never raises: whether it is gone."""
    try:  # the common case: the directories the warden made, left empty
        for name in SUBDIRS:
            os.rmdir(f"{path}/{name}")
        os.rmdir(path)
        return True
    except OSError:
        pass
    for attempt in range(5):
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            pass  # removed meanwhile, in part or whole
        except OSError:
            _unlock(path)
            time.sleep(0.005 * attempt)
        if not os.path.lexists(path):
            return True
    return False


def _unlock(path: str) -> None:
    """Make every directory under `path` ours to list and empty (never following a link)."""
    stack = [path]
    while stack:
        directory = stack.pop()
        try:
            fd = os.open(directory, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:  # through the descriptor: never a link put in the directory's place
            os.chmod(f"/proc/self/fd/{fd}", 0o700)
            with os.scandir(directory) as entries:
                names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
            stack.extend(os.path.join(directory, name) for name in names)
        except OSError:
            continue
        finally:
            os.close(fd)


# -- exec: one command, the caller's stdio ------------------------------------------------


def run_one(plan: dict, argv: list[str]) -> int:
    """Run `argv` inside the namespaces with inherited stdio (and terminal); when it ends,
    everything it left in the PID namespace is killed. Its exit status."""
    enter_namespaces(plan)
    cwd = plan.get("cwd")
    if cwd:
        os.chdir(cwd)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        pid = os.posix_spawnp(  # found on PATH, as without isolation
            argv[0],
            argv,
            dict(os.environ),
            setsigdef=DEFAULT_SIGNALS,
            setsigmask=(),
        )
    except OSError as exc:
        sys.stderr.write(f"cannot run {argv[0]}: {exc.strerror or exc}\n")
        return 127
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        done, status = os.waitpid(-1, 0)
        if done == pid:
            break
    with contextlib.suppress(ProcessLookupError):  # nothing else was left
        os.kill(-1, signal.SIGKILL)  # PID 1 of the namespace: everything else in it
    return _exit_code(status)


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if command == "serve" and len(argv) == 4:
        serve(int(argv[2]), json.loads(argv[3]))
        return 0
    if command == "exec" and len(argv) > 4 and argv[3] == "--":
        return run_one(json.loads(argv[2]), argv[4:])
    sys.stderr.write("usage: _helper.py serve FD PLAN | exec PLAN -- ARGV...\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
