"""Unpacking what the crawler downloads, safely: tar (gzip, xz, bzip2), zip and wheels,
Debian packages, single compressed files and raw binaries.

Archives come from release pages and package registries, none of which the crawler
trusts, so every member is checked before anything is written (`member_path`), with the
same rules for every format: no absolute paths, no `..`, no link that points outside
the tree or to an absolute path, no device files or FIFOs, nothing written through a
link, at most `max_members` members and `max_bytes` unpacked bytes (counted as written,
not as declared). Each refusal is an `ArchiveError` that names the member and the
reason; what was unpacked before it stays inside the destination, which the caller
deletes. Files are written by this module, not by `tarfile`/`zipfile`'s extractors, so
modes are only ever 0644 or 0755 (no setuid) and owners are never set.

A `.deb` is read through `dpkg-deb --fsys-tarfile`, streamed into the same tar reader:
a package from a repository gets the same checks as any download.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import posixpath
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import IO, Any, Literal

from atipkit.crawl.errors import ArchiveError

DEFAULT_MAX_MEMBERS = 50_000
DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB unpacked
Kind = Literal["tar", "zip", "deb", "gzip", "xz", "bzip2", "raw"]
MemberKind = Literal["file", "dir", "symlink", "hardlink", "special"]
_CHUNK = 1 << 20
_COMPRESSIONS: dict[str, Any] = {"gzip": gzip, "xz": lzma, "bzip2": bz2}


def detect(path: str | os.PathLike[str]) -> Kind:
    """The kind of a file, by its first bytes (names lie, and URLs may have none)."""
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(b"!<arch>\ndebian-binary"):
        return "deb"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head[257:262] == b"ustar":
        return "tar"
    for kind, magic in (("gzip", b"\x1f\x8b"), ("xz", b"\xfd7zXZ\x00"), ("bzip2", b"BZh")):
        if head.startswith(magic):
            try:
                with _COMPRESSIONS[kind].open(path, "rb") as inner:
                    inner_head = inner.read(512)
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise ArchiveError(f"damaged {kind} data: {exc}") from None
            return "tar" if inner_head[257:262] == b"ustar" else kind  # type: ignore[return-value]  # kind: a compression
    if head.startswith(b"(\xb5/\xfd"):
        raise ArchiveError("zstd-compressed archives are not supported")
    return "raw"


def member_path(name: str, kind: MemberKind, link: str = "") -> str | None:
    """The normalized relative path of an archive member, or `ArchiveError` with the
    reason it is refused; None for the archive's root (`./`). Pure: no filesystem."""
    path = name.replace("\\", "/")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise ArchiveError("absolute path", name)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError("path with '..'", name)
    if kind == "special":
        raise ArchiveError("device, FIFO or other special file", name)
    if not parts:
        return None
    relative = "/".join(parts)
    if kind == "symlink":
        if link.startswith("/") or not link:
            raise ArchiveError(f"link to an absolute path ({link or 'empty'})", name)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(relative), link))
        if target == ".." or target.startswith("../"):
            raise ArchiveError(f"link pointing outside the archive ({link})", name)
    if kind == "hardlink":
        target = posixpath.normpath(link.replace("\\", "/"))
        if target.startswith(("/", "../")) or target == "..":
            raise ArchiveError(f"hard link to outside the archive ({link})", name)
    return relative


class _Writer:
    """Writes checked members under `root`, counting members and bytes."""

    def __init__(self, root: Path, max_members: int, max_bytes: int) -> None:
        self.root = root
        self.max_members = max_members
        self.max_bytes = max_bytes
        self.members = 0
        self.written = 0
        self.files: set[str] = set()

    def count(self, name: str) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise ArchiveError(f"more than {self.max_members} members", name)

    def _target(self, relative: str, name: str) -> Path:
        """The path to write, after refusing any existing link along the way."""
        target = self.root
        for part in relative.split("/"):
            target = target / part
            if target.is_symlink():
                raise ArchiveError("written through a link", name)
        return target

    def directory(self, relative: str, name: str) -> None:
        target = self._target(relative, name)
        if target.exists() and not target.is_dir():
            raise ArchiveError("a directory where a file was", name)
        target.mkdir(parents=True, exist_ok=True)

    def file(self, relative: str, name: str, source: IO[bytes], executable: bool) -> None:
        target = self._target(relative, name)
        self._target(str(Path(relative).parent), name).mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise ArchiveError("a file where a directory was", name)
        target.unlink(missing_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o755 if executable else 0o644)
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_CHUNK):
                self.written += len(chunk)
                if self.written > self.max_bytes:
                    raise ArchiveError(f"unpacks to more than {self.max_bytes} bytes", name)
                out.write(chunk)
        self.files.add(relative)

    def symlink(self, relative: str, name: str, link: str) -> None:
        target = self._target(relative, name)
        self._target(str(Path(relative).parent), name).mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            raise ArchiveError("a link where a directory was", name)
        target.unlink(missing_ok=True)
        os.symlink(link, target)

    def hardlink(self, relative: str, name: str, link: str) -> None:
        source = member_path(link, "file")
        if source is None or source not in self.files:
            raise ArchiveError(f"hard link to a file not in the archive before it ({link})", name)
        with open(self._target(source, name), "rb") as original:
            executable = os.access(self.root / source, os.X_OK)
            self.file(relative, name, original, executable)


def unpack(
    archive: str | os.PathLike[str],
    into: str | os.PathLike[str],
    *,
    raw_name: str,
    max_members: int = DEFAULT_MAX_MEMBERS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Path | None:
    """Unpack `archive` into the directory `into` (created). Returns the one file when
    the download was not an archive (a raw binary, or a single compressed file), stored
    as `raw_name`; None for an archive, whose tree is `into`."""
    root = Path(into)
    root.mkdir(parents=True, exist_ok=True)
    writer = _Writer(root, max_members, max_bytes)
    kind = detect(archive)
    if kind == "tar":
        with open(archive, "rb") as f:
            _untar(f, writer)
    elif kind == "zip":
        _unzip(Path(archive), writer)
    elif kind == "deb":
        _undeb(Path(archive), writer)
    else:
        compression = _COMPRESSIONS.get(kind)
        single = member_path(raw_name, "file")
        assert single is not None
        try:
            with compression.open(archive, "rb") if compression else open(archive, "rb") as source:
                writer.file(single, raw_name, source, executable=True)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise ArchiveError(f"damaged {kind} data: {exc}") from None
        return root / single
    return None


def _untar(stream: IO[bytes], writer: _Writer) -> None:
    try:
        with tarfile.open(fileobj=stream, mode="r|*") as tar:
            for member in tar:
                writer.count(member.name)
                kind: MemberKind = (
                    "file"
                    if member.isreg()
                    else "dir"
                    if member.isdir()
                    else "symlink"
                    if member.issym()
                    else "hardlink"
                    if member.islnk()
                    else "special"
                )
                relative = member_path(member.name, kind, member.linkname)
                if relative is None:
                    continue
                if kind == "dir":
                    writer.directory(relative, member.name)
                elif kind == "symlink":
                    writer.symlink(relative, member.name, member.linkname)
                elif kind == "hardlink":
                    writer.hardlink(relative, member.name, member.linkname)
                else:
                    if writer.written + member.size > writer.max_bytes:
                        raise ArchiveError(
                            f"unpacks to more than {writer.max_bytes} bytes", member.name
                        )
                    source = tar.extractfile(member)
                    assert source is not None
                    writer.file(relative, member.name, source, bool(member.mode & 0o111))
    except (tarfile.TarError, EOFError, OSError, lzma.LZMAError) as exc:
        raise ArchiveError(f"damaged or not a tar archive: {exc}") from None


def _unzip(path: Path, writer: _Writer) -> None:
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                writer.count(info.filename)
                mode = info.external_attr >> 16
                kind: MemberKind = (
                    "dir"
                    if info.is_dir()
                    else "symlink"
                    if stat.S_ISLNK(mode)
                    else "file"
                    if stat.S_ISREG(mode) or not stat.S_IFMT(mode)
                    else "special"
                )
                link = archive.read(info).decode("utf-8", "replace") if kind == "symlink" else ""
                relative = member_path(info.filename, kind, link)
                if relative is None:
                    continue
                if kind == "dir":
                    writer.directory(relative, info.filename)
                elif kind == "symlink":
                    writer.symlink(relative, info.filename, link)
                else:
                    if writer.written + info.file_size > writer.max_bytes:
                        raise ArchiveError(
                            f"unpacks to more than {writer.max_bytes} bytes", info.filename
                        )
                    with archive.open(info) as source:
                        writer.file(relative, info.filename, source, bool(mode & 0o111))
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ArchiveError(f"damaged zip archive: {exc}") from None


def _undeb(path: Path, writer: _Writer) -> None:
    dpkg_deb = shutil.which("dpkg-deb")
    if dpkg_deb is None:
        raise ArchiveError("unpacking a .deb needs dpkg-deb (apt-get install dpkg)")
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [dpkg_deb, "--fsys-tarfile", os.fspath(path)], stdout=subprocess.PIPE, stderr=errors
        )
        assert process.stdout is not None
        refused: ArchiveError | None = None
        try:
            _untar(process.stdout, writer)
        except ArchiveError as exc:
            refused = exc
        finally:
            process.stdout.close()  # a refusal mid-stream ends dpkg-deb with SIGPIPE
            process.wait()
        if process.returncode > 0:
            errors.seek(0)
            message = errors.read(4096).decode("utf-8", "replace").strip()
            raise ArchiveError(f"not a Debian package: {message}") from None
    if refused is not None:
        raise refused
