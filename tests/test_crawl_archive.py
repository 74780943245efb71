"""Unpacking downloads safely: hostile tar and zip members are refused, each with its
reason, and nothing lands outside the destination; caps on members and bytes hold
against lying headers and compression bombs; a real .deb unpacks as dpkg-deb does."""

from __future__ import annotations

import glob
import gzip
import io
import os
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from atipkit.crawl.archive import detect, member_path, unpack
from atipkit.crawl.errors import ArchiveError
from tests.servers import require


def tar_with(path: Path, *members: tarfile.TarInfo | tuple[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o755
                tar.addfile(info, io.BytesIO(data))
    return path


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def refused(tmp_path: Path, archive: Path, **limits: int) -> str:
    """Unpack into tmp_path/x; the refusal's message. Nothing may appear outside x."""
    before = set(tmp_path.rglob("*"))
    with pytest.raises(ArchiveError) as caught:
        unpack(archive, tmp_path / "x", raw_name="tool", **limits)
    outside = {p for p in tmp_path.rglob("*") if not p.is_relative_to(tmp_path / "x")}
    assert outside <= before
    return str(caught.value)


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        (("../evil", b"x"), "../evil: path with '..'"),
        (("a/../../evil", b"x"), "a/../../evil: path with '..'"),
        (("/tmp/evil", b"x"), "/tmp/evil: absolute path"),
        (link("up", "../../etc"), "up: link pointing outside the archive (../../etc)"),
        (link("abs", "/etc/passwd"), "abs: link to an absolute path (/etc/passwd)"),
        (link("hard", "../outside", tarfile.LNKTYPE), "hard: hard link to outside the archive"),
        (link("hard", "missing", tarfile.LNKTYPE), "hard: hard link to a file not in the"),
    ],
)
def test_hostile_tar_members_are_refused(tmp_path, member, reason):
    archive = tar_with(tmp_path / "a.tar.gz", ("ok/file", b"fine"), member)
    assert reason in refused(tmp_path, archive)
    assert not (tmp_path / "evil").exists()


def test_device_files_and_fifos_are_refused(tmp_path):
    for kind in (tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE):
        device = tarfile.TarInfo("dev/thing")
        device.type = kind
        archive = tar_with(tmp_path / f"{kind!r}.tar", device, mode="w")
        message = refused(tmp_path, archive)
        assert message == "dev/thing: device, FIFO or other special file"


def test_nothing_is_written_through_a_link(tmp_path):
    """A link inside the tree is fine; a member written through it is not (it could be
    swapped for one that leads out between two members)."""
    archive = tar_with(tmp_path / "a.tar", link("d", "sub"), ("d/x", b"x"), mode="w")
    assert refused(tmp_path, archive) == "d/x: written through a link"
    inside = tar_with(tmp_path / "b.tar", ("sub/x", b"x"), link("d", "sub"), mode="w")
    assert unpack(inside, tmp_path / "y", raw_name="t") is None
    assert os.readlink(tmp_path / "y" / "d") == "sub"


def test_member_count_and_size_caps(tmp_path):
    many = tar_with(tmp_path / "many.tar.gz", *((f"f{i}", b"x") for i in range(5)))
    assert refused(tmp_path, many, max_members=3) == "f3: more than 3 members"
    big = tar_with(tmp_path / "big.tar.gz", ("blob", b"\0" * 5000))
    assert refused(tmp_path, big, max_bytes=1000) == "blob: unpacks to more than 1000 bytes"


def test_a_compression_bomb_stops_at_the_cap(tmp_path):
    bomb = tmp_path / "tool.gz"  # 20 MiB of zeros in about 20 KiB: a single compressed file
    bomb.write_bytes(gzip.compress(b"\0" * (20 << 20)))
    assert bomb.stat().st_size < 100_000
    assert refused(tmp_path, bomb, max_bytes=1 << 20) == "tool: unpacks to more than 1048576 bytes"
    assert (tmp_path / "x" / "tool").stat().st_size <= 1 << 20


def test_a_zip_with_lying_sizes_is_counted_as_written(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data", b"\0" * 5000)
    assert refused(tmp_path, archive, max_bytes=1000) == "data: unpacks to more than 1000 bytes"


def zip_with(path: Path, name: str, data: bytes, mode: int) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        info = zipfile.ZipInfo(name)
        info.external_attr = mode << 16
        z.writestr(info, data)
    return path


@pytest.mark.parametrize(
    ("name", "data", "mode", "reason"),
    [
        ("../evil", b"x", stat.S_IFREG | 0o644, "../evil: path with '..'"),
        ("/evil", b"x", stat.S_IFREG | 0o644, "/evil: absolute path"),
        ("C:/evil", b"x", stat.S_IFREG | 0o644, "C:/evil: absolute path"),
        ("..\\evil", b"x", stat.S_IFREG | 0o644, "..\\evil: path with '..'"),
        ("up", b"../../etc", stat.S_IFLNK | 0o777, "up: link pointing outside the archive"),
        ("fifo", b"", stat.S_IFIFO | 0o644, "fifo: device, FIFO or other special file"),
    ],
)
def test_hostile_zip_members_are_refused(tmp_path, name, data, mode, reason):
    archive = zip_with(tmp_path / "a.zip", name, data, mode)
    assert reason in refused(tmp_path, archive)


def test_modes_are_plain_and_executables_stay_executable(tmp_path):
    setuid = tarfile.TarInfo("bin/tool")
    setuid.size = 2
    setuid.mode = 0o4755
    plain = tarfile.TarInfo("README")
    plain.size = 2
    plain.mode = 0o666
    archive = tmp_path / "a.tar"
    with tarfile.open(archive, "w") as tar:
        tar.addfile(setuid, io.BytesIO(b"#!"))
        tar.addfile(plain, io.BytesIO(b"hi"))
    unpack(archive, tmp_path / "x", raw_name="t")
    assert stat.S_IMODE((tmp_path / "x" / "bin" / "tool").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "x" / "README").stat().st_mode) == 0o644


@pytest.mark.parametrize("compression", ["gz", "xz", "bz2"])
def test_tarballs_of_every_compression_and_raw_files(tmp_path, compression):
    archive = tar_with(
        tmp_path / f"a.tar.{compression}", ("t-1/bin/t", b"#!/bin/sh\n"), mode=f"w:{compression}"
    )
    assert detect(archive) == "tar"
    assert unpack(archive, tmp_path / compression, raw_name="t") is None
    assert (tmp_path / compression / "t-1" / "bin" / "t").read_bytes() == b"#!/bin/sh\n"
    raw = tmp_path / "raw"
    raw.write_bytes(b"\x7fELF binary")
    single = unpack(raw, tmp_path / "r", raw_name="tool")
    assert single == tmp_path / "r" / "tool"
    assert single.read_bytes() == b"\x7fELF binary"
    assert os.access(single, os.X_OK)


def test_a_debian_package_unpacks_as_dpkg_deb_does(tmp_path):
    require("dpkg-deb", "apt-get install dpkg")
    debs = sorted(glob.glob("/var/cache/apt/archives/jq_*.deb"))
    if not debs:
        pytest.skip("jq's .deb is not in apt's cache")
    assert detect(debs[-1]) == "deb"
    unpack(debs[-1], tmp_path / "ours", raw_name="jq")
    subprocess.run(["dpkg-deb", "-x", debs[-1], str(tmp_path / "theirs")], check=True)
    ours = sorted(str(p.relative_to(tmp_path / "ours")) for p in (tmp_path / "ours").rglob("*"))
    theirs = sorted(
        str(p.relative_to(tmp_path / "theirs")) for p in (tmp_path / "theirs").rglob("*")
    )
    assert ours == theirs
    jq = Path("usr/bin/jq")
    assert (tmp_path / "ours" / jq).read_bytes() == (tmp_path / "theirs" / jq).read_bytes()


def test_a_file_that_is_not_a_debian_package_says_so(tmp_path):
    require("dpkg-deb", "apt-get install dpkg")
    fake = tmp_path / "fake.deb"
    fake.write_bytes(b"!<arch>\ndebian-binary   0           0     0     100644  4         `\n")
    assert refused(tmp_path, fake).startswith("not a Debian package: ")


@pytest.mark.parametrize(
    ("name", "kind", "target", "expected"),
    [
        ("./a/b", "file", "", "a/b"),
        ("a//b/./c", "file", "", "a/b/c"),
        ("./", "dir", "", None),
        ("a/link", "symlink", "../b", "a/link"),
        ("a/b/link", "symlink", "../../c", "a/b/link"),
    ],
)
def test_member_paths_inside_the_tree(name, kind, target, expected):
    assert member_path(name, kind, target) == expected
