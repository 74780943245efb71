"""The effects atip's own commands declare in `atip --agent`.

Every command states every field (what it reads, writes and deletes, network, children,
retries, undo, stdin), so that no agent has to assume the worst of `atip` itself. They are
written in ATIP's JSON form, which `atipkit.app` takes as `effects=`: importing a command's
module then costs no model (msgspec and `atipkit.model` load only when something asks for
the effects, as `--agent` does), so `atip X --help` starts as a plain Click program does.
"""

from __future__ import annotations

from typing import Any, Literal

StdinMode = Literal["none", "optional", "required", "password"]
Effects = dict[str, Any]
"""ATIP `effects` as JSON (RFC 0.6 §3.5)."""


def _effects(
    *,
    write: bool,
    network: bool,
    subprocess: bool,
    idempotent: bool,
    reversible: bool | None = None,
    read: bool = True,
    delete: bool = False,
    destructive: bool = False,
    stdin: StdinMode = "none",
    prompts: bool = False,
    duration: dict[str, str] | None = None,
) -> Effects:
    out: Effects = {
        "filesystem": {"read": read, "write": write, "delete": delete},
        "network": network,
        "subprocess": subprocess,
        "idempotent": idempotent,
        "destructive": destructive,
        "interactive": {"stdin": stdin, "prompts": prompts, "tty": False},
    }
    if reversible is not None:
        out["reversible"] = reversible
    if duration is not None:
        out["duration"] = duration
    return out


def read_only(*, reads_files: bool, stdin: StdinMode) -> Effects:
    """A command that changes nothing: no writes, no network, no children, safe to retry."""
    return _effects(
        read=reads_files, write=False, network=False, subprocess=False, idempotent=True, stdin=stdin
    )


def discovering() -> Effects:
    """A command that may probe tools (sandboxed `--agent`) and update the registry."""
    return _effects(write=True, network=False, subprocess=True, idempotent=True, reversible=True)


def runs_anything() -> Effects:
    """A command that runs whatever a call names: it declares the worst case."""
    return _effects(
        write=True,
        delete=True,
        network=True,
        subprocess=True,
        idempotent=False,
        reversible=False,
        destructive=True,
        stdin="optional",
        prompts=True,
    )


def indexes() -> Effects:
    """A command that reads the registry and keeps an index of it in the cache."""
    return _effects(write=True, network=False, subprocess=False, idempotent=True, reversible=True)


def signs_files() -> Effects:
    """A command that writes a signature file next to the file it signs."""
    return _effects(write=True, network=False, subprocess=True, idempotent=False, reversible=True)


def fetches() -> Effects:
    """A command that reads from remote registries and keeps what it read in the cache."""
    return _effects(write=True, network=True, subprocess=False, idempotent=True, reversible=True)


def builds_files() -> Effects:
    """A command that writes files into a directory the user names, from local input."""
    return _effects(write=True, network=False, subprocess=False, idempotent=True, reversible=True)


def uploads() -> Effects:
    """A command that writes to a remote store (object storage or a directory); it
    replaces objects that changed and deletes nothing."""
    return _effects(write=True, network=True, subprocess=False, idempotent=True, reversible=False)


def serves() -> Effects:
    """A command that serves files over HTTP until it is stopped."""
    return _effects(
        write=False,
        network=True,
        subprocess=False,
        idempotent=True,
        duration={"typical": "until stopped"},
    )


def serves_tools() -> Effects:
    """`serves()`, for a server that also resolves the registry's tools while it runs (a
    probe in the sandbox, which may record what it found)."""
    return _effects(
        write=True,
        network=True,
        subprocess=True,
        idempotent=True,
        reversible=True,
        duration={"typical": "until stopped"},
    )


def imports(*, network: bool, subprocess: bool, stdin: StdinMode = "optional") -> Effects:
    """A command that reads another format (a file, stdin, a URL, a server it starts) and
    may write the ATIP document it makes to --out; it calls nothing it describes."""
    return _effects(
        write=True,
        network=network,
        subprocess=subprocess,
        idempotent=True,
        reversible=True,
        stdin=stdin,
    )


def crawls() -> Effects:
    """A command that downloads packages, runs their binaries' help in the sandbox and
    writes shims."""
    return _effects(write=True, network=True, subprocess=True, idempotent=True, reversible=True)


def reviews() -> Effects:
    """A command that decides on queued shims: it publishes or sets them aside, and
    deletes their queue entries; a second run finds them gone."""
    return _effects(
        write=True, delete=True, network=False, subprocess=False, idempotent=False, reversible=False
    )


def resolving(*, stdin: StdinMode = "none") -> Effects:
    """What resolving a tool may do: probe it in the sandbox, record it in the registry,
    and ask the remote registries of registries.json for a shim (the network)."""
    return {
        **discovering(),
        "network": True,
        "interactive": {"stdin": stdin, "prompts": False, "tty": False},
    }
