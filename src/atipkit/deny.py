"""The deny list: commands atipkit never runs to learn about them (SPEC-NOTES 14-15).

Discovery runs tools it knows nothing about: `--agent` for the probe, `--help`, `-h`,
`help` and `--version` for inference. A tool that does not know the flag may ignore it
and do its job, and `help` may be read as an operand (`hostname help` renames the
machine). So commands whose purpose is to change the state of the system — not a file
the caller names, but the machine itself — are never run by discovery, whatever the
arguments: power and boot, sessions and terminals, services and scheduling, devices and
the kernel, network configuration, processes, accounts and privileges, disks and file
systems, system-wide configuration. Their man pages may still be read (that runs
nothing of theirs): see `atipkit.infer.coverage`.

An entry is a name, or a shell-style pattern for a family (`mkfs.*`, `fsck.*`,
`update-*`). config.json's `{"scan": {"skip": [...]}}` adds entries; `{"scan": {"allow":
[...]}}` takes names off the list (a name, not a pattern: allowing is done one command
at a time, deliberately).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import PurePath

#: The built-in list, by purpose. Names and patterns (`*`, `?`, `[...]`).
DEFAULT_SKIP: frozenset[str] = frozenset(
    {
        # power, boot and init
        "shutdown",
        "reboot",
        "halt",
        "poweroff",
        "init",
        "telinit",
        "runlevel",
        "systemctl",
        "systemd",
        "suspend",
        "hibernate",
        "pm-*",
        "rtcwake",
        "kexec",
        "ctrlaltdel",
        "switch_root",
        "pivot_root",
        "installkernel",
        "efibootmgr",
        "grub-*",
        "grub2-*",
        # sessions, terminals and displays
        "loginctl",
        "logout",
        "login",
        "agetty",
        "getty",
        "sulogin",
        "chvt",
        "openvt",
        "deallocvt",
        "setterm",
        "setleds",
        "setfont",
        "loadkeys",
        "setupcon",
        "kbd_mode",
        "kbdrate",
        "xset",
        "xrandr",
        # services and scheduling
        "service",
        "invoke-rc.d",
        "update-rc.d",
        "chkconfig",
        "start-stop-daemon",
        "systemd-run",
        "systemd-tmpfiles",
        "systemd-sysusers",
        "systemd-firstboot",
        "systemd-machine-id-setup",
        "systemd-sysext",
        "systemd-repart",
        "systemd-mount",
        "systemd-umount",
        "deb-systemd-invoke",
        "deb-systemd-helper",
        "policy-rc.d",
        "pg_*cluster",
        "crontab",
        "at",
        "atrm",
        "batch",
        # devices, kernel and clock
        "udevadm",
        "modprobe",
        "insmod",
        "rmmod",
        "depmod",
        "sysctl",
        "hwclock",
        "eject",
        "mount",
        "umount",
        "swapon",
        "swapoff",
        "losetup",
        "cryptsetup",
        "dmsetup",
        "mdadm",
        "blockdev",
        "hdparm",
        "blkdiscard",
        "fstrim",
        "fsfreeze",
        "zramctl",
        "chcpu",
        "chmem",
        "blkdeactivate",
        "blkzone",
        # network configuration
        "ifup",
        "ifdown",
        "ifconfig",
        "route",
        "ip",
        "tc",
        "arp",
        "nmcli",
        "iw",
        "iwconfig",
        "dhclient",
        "slattach",
        "plipconfig",
        "ipmaddr",
        "iptunnel",
        "nameif",
        "mii-tool",
        "rarp",
        "iptables*",
        "ip6tables*",
        "ebtables*",
        "arptables*",
        "nft",
        "hostname",
        "domainname",
        "nisdomainname",
        "ypdomainname",
        # processes
        "kill",
        "killall",
        "killall5",
        "pkill",
        "skill",
        "xkill",
        # privileges and accounts
        "sudo",
        "su",
        "doas",
        "pkexec",
        "runuser",
        "passwd",
        "chpasswd",
        "chgpasswd",
        "chage",
        "chsh",
        "chfn",
        "gpasswd",
        "newgrp",
        "sg",
        "newusers",
        "useradd",
        "userdel",
        "usermod",
        "adduser",
        "deluser",
        "addgroup",
        "delgroup",
        "groupadd",
        "groupdel",
        "groupmod",
        "groupmems",
        "vipw",
        "vigr",
        "visudo",
        "pwconv",
        "pwunconv",
        "grpconv",
        "grpunconv",
        "pwck",
        "grpck",
        "shadowconfig",
        "unix_update",
        "pwhistory_helper",
        # disks and file systems
        "mkfs",
        "mkfs.*",
        "mke2fs",
        "mkswap",
        "mkdosfs",
        "fsck",
        "fsck.*",
        "e2fsck",
        "tune2fs",
        "resize2fs",
        "e2label",
        "e2scrub*",
        "e2undo",
        "e4defrag",
        "swaplabel",
        "fdisk",
        "sfdisk",
        "cfdisk",
        "gdisk",
        "sgdisk",
        "parted",
        "partprobe",
        "partx",
        "addpart",
        "delpart",
        "resizepart",
        "wipefs",
        "dd",
        "shred",
        "badblocks",
        "lvm",
        "pvcreate",
        "pvremove",
        "vgcreate",
        "vgremove",
        "lvcreate",
        "lvremove",
        "lvresize",
        # system-wide configuration
        "update-*",
        "dpkg-reconfigure",
        "locale-gen",
        "ldconfig",
        "pam-auth-update",
        "add-shell",
        "remove-shell",
        "setcap",
    }
)

_GLOB = frozenset("*?[")


class DenyList:
    """Names and patterns never run, minus the names allowed after all."""

    __slots__ = ("allowed", "names", "patterns")

    def __init__(self, entries: Iterable[str], allowed: Iterable[str] = ()) -> None:
        entries = [e for e in entries if e]
        self.names = frozenset(e for e in entries if not _GLOB & set(e))
        self.patterns = tuple(sorted({e for e in entries if _GLOB & set(e)}))
        self.allowed = frozenset(allowed)

    def __contains__(self, name: object) -> bool:
        """Whether `name` (a command's name, not a path) is denied."""
        if not isinstance(name, str) or name in self.allowed:
            return False
        return name in self.names or any(fnmatch.fnmatchcase(name, p) for p in self.patterns)

    def __or__(self, more: Iterable[str]) -> DenyList:
        """This list with `more` entries added (an added name is denied even if it was
        allowed: the caller's own list wins over the configuration)."""
        more = list(more)
        return DenyList([*self.names, *self.patterns, *more], self.allowed - set(more))

    def denies(self, executable: str) -> bool:
        """Whether the command at `executable` (a name or a path) is denied: by its own
        name, or — for a path — by the name of the file it resolves to, so that a link
        named innocently (`restart-machine -> reboot`) is denied too."""
        path = PurePath(executable)
        if path.name in self:
            return True
        if len(path.parts) > 1:
            return PurePath(os.path.realpath(executable)).name in self
        return False

    def __repr__(self) -> str:
        return f"DenyList({len(self.names)} names, {len(self.patterns)} patterns)"


def configured() -> DenyList:
    """The built-in list with config.json's `scan.skip` added and `scan.allow` taken off."""
    from atipkit import paths

    scan_config = paths.user_config().get("scan")
    settings = scan_config if isinstance(scan_config, dict) else {}
    return DenyList(
        [*DEFAULT_SKIP, *_strings(settings.get("skip"))], _strings(settings.get("allow"))
    )


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
