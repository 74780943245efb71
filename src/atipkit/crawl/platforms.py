"""Platform names as the registry writes them (`linux-amd64`, `darwin-arm64`: Go's
`GOOS-GOARCH`, the RFC's examples) and what each source calls the same thing.

`any` is the platform of a file that is the same everywhere: a pure-Python wheel's
script, an npm package's JavaScript.
"""

from __future__ import annotations

import platform as _platform
import re
import sys

ANY = "any"
SYSTEMS = ("linux", "darwin", "windows", "freebsd")
ARCHES = ("amd64", "arm64", "386", "arm", "ppc64le", "s390x", "riscv64")

_DEBIAN = {
    "amd64": "amd64",
    "arm64": "arm64",
    "386": "i386",
    "arm": "armhf",
    "ppc64le": "ppc64el",
    "s390x": "s390x",
    "riscv64": "riscv64",
}
_MACHINES = {  # platform.machine() spellings
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "i386": "386",
    "i686": "386",
    "x86": "386",
    "armv7l": "arm",
    "armv6l": "arm",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}
_WHEEL_MACHINES = {
    "amd64": ("x86_64",),
    "arm64": ("aarch64", "arm64"),
    "386": ("i686", "i386"),
    "arm": ("armv7l",),
    "ppc64le": ("ppc64le",),
    "s390x": ("s390x",),
    "riscv64": ("riscv64",),
}
_WINDOWS_WHEEL = {"amd64": "win_amd64", "arm64": "win_arm64", "386": "win32"}
_NAME = re.compile(r"(?P<system>[a-z]+)-(?P<arch>[a-z0-9]+)\Z")


def check(name: str) -> str:
    """`name` if it is a platform this crawler knows; `ValueError` naming the known ones."""
    match = _NAME.match(name)
    if name == ANY or (match and match["system"] in SYSTEMS and match["arch"] in ARCHES):
        return name
    raise ValueError(
        f"unknown platform {name!r} (SYSTEM-ARCH with SYSTEM one of {', '.join(SYSTEMS)} "
        f"and ARCH one of {', '.join(ARCHES)}, e.g. linux-amd64)"
    )


def host() -> str:
    """This machine's platform."""
    system = "windows" if sys.platform == "win32" else sys.platform.rstrip("0123456789")
    machine = _platform.machine().lower()
    return f"{system}-{_MACHINES.get(machine, machine)}"


def runs_here(name: str) -> bool:
    """Whether a binary of platform `name` can be run on this machine for its help."""
    return name in (ANY, host())


def debian_arch(name: str) -> str:
    """The Debian architecture of a Linux platform (`linux-arm64` → `arm64`)."""
    system, _, arch = name.partition("-")
    if system != "linux" or arch not in _DEBIAN:
        raise ValueError(f"apt has no architecture for platform {name!r}")
    return _DEBIAN[arch]


def wheel_rank(name: str, tag_platform: str) -> int | None:
    """How well a wheel's platform tag fits platform `name`: lower is better, None is
    no fit. `any` fits every platform, after the platform's own tags; glibc wheels
    come before musl ones (the crawler describes the common build)."""
    if tag_platform == "any":
        return 9
    system, _, arch = name.partition("-")
    if system == "linux":
        machines = _WHEEL_MACHINES.get(arch, ())
        if not tag_platform.endswith(tuple(f"_{m}" for m in machines)):
            return None
        for rank, prefix in enumerate(("manylinux", "linux_", "musllinux")):
            if tag_platform.startswith(prefix):
                return rank
        return None
    if system == "darwin" and tag_platform.startswith("macosx_"):
        wanted = {"amd64": ("x86_64", "intel"), "arm64": ("arm64",)}.get(arch, ())
        if tag_platform.endswith(wanted):
            return 0
        return 1 if tag_platform.endswith("universal2") else None
    if system == "windows" and tag_platform == _WINDOWS_WHEEL.get(arch):
        return 0
    return None
