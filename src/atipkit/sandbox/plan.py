"""What a program in the sandbox sees of the filesystem: the mounts, in order.

The whole filesystem is mounted read-only; on top of it, empty throwaway tmpfs mounts
hide the places where a program could reach other programs or the user's secrets:
`/tmp` and `/var/tmp` (other programs' sockets: ssh-agent, X11), `/run` (D-Bus, the
container engine, `$XDG_RUNTIME_DIR`), `/dev/shm` and the user's `$HOME` (`~/.ssh`, its
control sockets, `~/.gnupg`, cloud credentials). What a program needs from a hidden place
comes back read-only: the directory under the hidden root that holds the executable, each
PATH directory, the interpreter that runs the helper, paths named in the environment
added for the program (a crawled package's `LD_LIBRARY_PATH`) — `~/.local` for
`~/.local/bin/x`, `/tmp/pytest-of-me` for a test's executable. Writable: the program's own
directory in the sandbox's `/tmp`, and whatever the caller names (`writable`, the runner's
working directory).

Mounts are applied shallowest first, so a hidden place inside a visible one (a `$HOME`
under `/tmp`) is hidden again, and a visible place inside a hidden one comes back.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

MountKind = Literal["tmpfs", "ro", "rw"]
Mount = tuple[MountKind, str]

HIDDEN = ("/tmp", "/var/tmp", "/run", "/dev/shm")
"""Hidden behind an empty tmpfs, with the user's `$HOME`."""
TMP_SIZE = 256 * 1024 * 1024
"""Bytes each tmpfs may hold: programs write there, in memory."""
HELPER = str(Path(__file__).with_name("_helper.py"))


def mounts(
    executables: Iterable[str],
    env: Mapping[str, str] | None = None,
    writable: Iterable[str] = (),
) -> tuple[Mount, ...]:
    """The mounts over the read-only root for running `executables` with `env` added to
    its environment: tmpfs over each hidden place, `ro` binds of what must stay visible
    from them (the interpreter, the helper, PATH — worked out once per PATH and HOME —,
    the executables, absolute paths in `env`'s values), `rw` binds of `writable`;
    shallowest first."""
    home = os.environ.get("HOME", "")
    hidden, base = _base(os.environ.get("PATH", ""), home, os.path.isdir(home))
    paths = list(executables)
    for value in (env or {}).values():
        paths += value.split(os.pathsep)
    found = _shown(paths, hidden) | base
    for path in writable:
        real = os.path.realpath(path)
        if os.path.isdir(real):
            found.add(("rw", real))
    order = {"tmpfs": 0, "ro": 1, "rw": 2}
    return tuple(sorted(found, key=lambda m: (m[1].count("/"), order[m[0]], m[1])))


@functools.lru_cache(maxsize=8)
def _base(path: str, home: str, home_exists: bool) -> tuple[list[str], frozenset[Mount]]:
    """The hidden places that exist here, and the mounts every program needs: tmpfs over
    each, and the interpreter, the helper and PATH back (realpath costs: once)."""
    hidden: list[str] = []
    for root in [*HIDDEN, home]:
        if not root or not os.path.isabs(root):
            continue
        real = os.path.realpath(root)
        if real != "/" and os.path.isdir(real) and real not in hidden:
            hidden.append(real)
    needed = [interpreter(), sys.base_prefix, HELPER, *path.split(os.pathsep)]
    return hidden, frozenset({("tmpfs", root) for root in hidden} | _shown(needed, hidden))


def _shown(paths: Iterable[str], hidden: list[str]) -> set[Mount]:
    """`ro` binds that show each absolute path in `paths` that a hidden place hides."""
    found: set[Mount] = set()
    for path in paths:
        if os.path.isabs(path):
            root = _visible_root(os.path.realpath(path), hidden)
            if root is not None and os.path.exists(root):
                found.add(("ro", root))
    return found


def interpreter() -> str:
    """The Python that runs the helper (its real path: a venv's link resolved)."""
    return os.path.realpath(sys.executable)


def _visible_root(path: str, hidden: list[str]) -> str | None:
    """What to bind so that `path` is visible: the entry of the deepest hidden place that
    holds it (the place itself, if `path` is it); None if nothing hides it."""
    holders = [h for h in hidden if path == h or path.startswith(h + "/")]
    if not holders:
        return None
    root = max(holders, key=len)
    if path == root:
        return root
    first = path[len(root) + 1 :].split("/", 1)[0]
    return f"{root}/{first}"


def bwrap_argv(
    mounts: Iterable[Mount],
    *,
    features: frozenset[str],
    cwd: str | None = None,
    as_pid_1: bool = False,
) -> list[str]:
    """bubblewrap's arguments for `mounts`: new user (with no further user namespaces
    where bwrap can forbid them), mount, PID, network, IPC and UTS namespaces, no
    capability, a fresh /dev and /proc; `cwd` the directory to start in. `as_pid_1`: the
    command is the namespace's init, which nothing inside can kill or stop (the
    session's server), rather than bwrap's."""
    argv = ["bwrap", "--unshare-all", "--unshare-user", "--cap-drop", "ALL"]
    if as_pid_1:
        argv.append("--as-pid-1")
    if "--disable-userns" in features:
        argv.append("--disable-userns")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for kind, path in mounts:
        if kind == "tmpfs":
            if "--size" in features:
                argv += ["--size", str(TMP_SIZE)]
            argv += ["--tmpfs", path]
        else:
            argv += ["--ro-bind" if kind == "ro" else "--bind", path, path]
    if cwd is not None:
        argv += ["--chdir", cwd]
    return argv
