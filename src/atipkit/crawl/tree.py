"""Finding things in an unpacked package: the binary, the libraries it ships, its man page.

Release archives put the binary in many places (`tool`, `bin/tool`, `tool-1.2-linux/tool`,
a Debian package's `usr/bin/tool`); a manifest's `binary_path` glob says where when the
usual places do not. A glob must match exactly one file: two would make the shim's hash
a guess.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path

from atipkit.crawl.artifacts import Fetched
from atipkit.crawl.errors import SourceError

DEFAULT_PATHS = (
    "{name}",
    "bin/{name}",
    "usr/bin/{name}",
    "usr/local/bin/{name}",
    "*/{name}",
    "*/bin/{name}",
)
_LISTED = 12


def find_binary(
    root: Path, name: str, pattern: str | None, defaults: Sequence[str] = DEFAULT_PATHS
) -> Path:
    """The one file `pattern` (else the first default that matches) names under `root`."""
    escaped = glob.escape(name)
    patterns = [pattern] if pattern else [d.format(name=escaped) for d in defaults]
    real_root = root.resolve()
    for candidate in patterns:
        matches = sorted(
            p for p in root.glob(candidate) if p.is_file() and p.resolve().is_relative_to(real_root)
        )
        if len(matches) > 1:
            shown = ", ".join(str(m.relative_to(root)) for m in matches[:_LISTED])
            raise SourceError(f"binary_path {candidate!r} matches {len(matches)} files: {shown}")
        if matches:
            return matches[0]
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    shown = ", ".join(files[:_LISTED]) + (", ..." if len(files) > _LISTED else "")
    raise SourceError(
        f"no binary at {' or '.join(patterns)} in the package (it holds {shown or 'nothing'}); "
        "set binary_path"
    )


def library_dirs(root: Path) -> list[str]:
    """Directories of the tree that hold shared libraries, for `LD_LIBRARY_PATH`."""
    found = []
    for directory, _dirs, files in os.walk(root):
        if any(f.endswith(".so") or ".so." in f for f in files):
            found.append(directory)
    return sorted(found)


def man_page(root: Path, name: str) -> Path | None:
    """The package's own section-1 page for `name`: in a `man1` folder
    (`usr/share/man/man1/jq.1.gz`) if there is one, else anywhere (`doc/rg.1`)."""
    pages = [
        p
        for suffix in (".1", ".1.gz")
        for p in root.rglob(f"{glob.escape(name)}{suffix}")
        if p.is_file() and p.resolve().is_relative_to(root.resolve())
    ]
    pages.sort(key=lambda p: (p.parent.name != "man1", str(p)))
    return pages[0] if pages else None


def prepare(root: Path, binary: Path, name: str) -> Fetched:
    """A binary found in an unpacked tree, made runnable (its mode is not hashed), with
    the tree's libraries and man page."""
    real = binary.resolve()
    os.chmod(real, os.stat(real).st_mode | 0o111)
    libraries = library_dirs(root)
    env = {"LD_LIBRARY_PATH": os.pathsep.join(libraries)} if libraries else {}
    return Fetched(binary=real, run=real, env=env, man_page=man_page(root, name))


def located(root: Path, single: Path | None, name: str, pattern: str | None) -> Fetched:
    """The binary of a download: the file itself when it was not an archive, else the
    one `pattern` (or a usual place) names in the tree."""
    if single is not None:
        return Fetched(binary=single, run=single)
    return prepare(root, find_binary(root, name, pattern), name)
