"""Conservative effect heuristics for inferred metadata (issue 6, item 4).

Only risks are inferred, from the words of a command's name and description: a command
that may delete, reach the network or write files is flagged so. Nothing is ever declared
safe from words alone — what the text does not reveal stays unknown.
"""

from __future__ import annotations

import re

from atipkit.model import UNSET, Effects, FilesystemEffects

_DESTRUCTIVE = {
    "delete",
    "remove",
    "rm",
    "destroy",
    "purge",
    "drop",
    "prune",
    "wipe",
    "erase",
    "uninstall",
    "truncate",
    "shred",
    "kill",
    "terminate",
    "reset",
    "overwrite",
    "clean",
    "clear",
    "revoke",
}
_NETWORK = {
    "download",
    "upload",
    "fetch",
    "pull",
    "push",
    "clone",
    "http",
    "https",
    "url",
    "remote",
    "server",
    "connect",
    "network",
    "request",
    "sync",
    "publish",
    "deploy",
    "ssh",
    "web",
    "api",
    "internet",
    "host",
    "mirror",
}
_WRITES = {
    "write",
    "create",
    "install",
    "copy",
    "move",
    "rename",
    "mkdir",
    "touch",
    "save",
    "edit",
    "update",
    "modify",
    "set",
    "add",
    "commit",
    "init",
    "generate",
    "apply",
    "extract",
    "compress",
    "link",
    "chmod",
    "chown",
    "output",
}
_WORD = re.compile(r"[a-z]+")


def guess_effects(name: str, description: str) -> Effects:
    """Risk flags read from a command's name (weighted) and description."""
    name_words = set(_WORD.findall(name.lower().replace("-", " ")))
    text_words = set(_WORD.findall(description.lower()))
    words = name_words | text_words
    destructive = True if name_words & _DESTRUCTIVE else UNSET
    network = True if words & _NETWORK else UNSET
    writes = True if (name_words & _WRITES or name_words & _DESTRUCTIVE) else UNSET
    deletes = True if name_words & _DESTRUCTIVE else UNSET
    filesystem = FilesystemEffects(write=writes, delete=deletes) if writes or deletes else UNSET
    return Effects(filesystem=filesystem, network=network, destructive=destructive)
