"""The one way atipkit writes a file that others may be reading: atomically.

Write a temporary file in the same directory, flush and fsync it, rename it over the
target, fsync the directory. Readers see the old file or the new one, never half of one,
even if the writer is killed with SIGKILL in the middle (SPEC-NOTES 12). A cache, which
costs one fetch to rebuild, may skip the fsyncs (`durable=False`): the rename still keeps
readers from seeing half a file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644, durable: bool = True
) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    if not durable:
        return
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
