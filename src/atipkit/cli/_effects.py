"""The effects atip's own commands declare in `atip --agent`."""

from __future__ import annotations

from atipkit.model import Duration, Effects, FilesystemEffects, Interactive, StdinMode


def read_only(*, reads_files: bool, stdin: StdinMode) -> Effects:
    """A command that changes nothing: no writes, no network, no children, safe to retry."""
    return Effects(
        filesystem=FilesystemEffects(read=reads_files, write=False, delete=False),
        network=False,
        subprocess=False,
        idempotent=True,
        destructive=False,
        interactive=Interactive(stdin=stdin, prompts=False, tty=False),
    )


def discovering() -> Effects:
    """A command that may probe tools (sandboxed `--agent`) and update the registry."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=False),
        network=False,
        subprocess=True,
        idempotent=True,
        reversible=True,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
    )


def runs_anything() -> Effects:
    """A command that runs whatever a call names: it declares the worst case."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=True),
        network=True,
        subprocess=True,
        idempotent=False,
        reversible=False,
        destructive=True,
        interactive=Interactive(stdin="optional", prompts=True, tty=False),
    )


def signs_files() -> Effects:
    """A command that writes a signature file next to the file it signs."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=False),
        network=False,
        subprocess=True,
        idempotent=False,
        reversible=True,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
    )


def fetches() -> Effects:
    """A command that reads from remote registries and keeps what it read in the cache."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=False),
        network=True,
        subprocess=False,
        idempotent=True,
        reversible=True,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
    )


def builds_files() -> Effects:
    """A command that writes files into a directory the user names, from local input."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=False),
        network=False,
        subprocess=False,
        idempotent=True,
        reversible=True,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
    )


def uploads() -> Effects:
    """A command that writes to a remote store (object storage or a directory); it
    replaces objects that changed and deletes nothing."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=False),
        network=True,
        subprocess=False,
        idempotent=True,
        reversible=False,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
    )


def serves() -> Effects:
    """A command that serves files over HTTP until it is stopped."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=False, delete=False),
        network=True,
        subprocess=False,
        idempotent=True,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
        duration=Duration(typical="until stopped"),
    )


def crawls() -> Effects:
    """A command that downloads packages, runs their binaries' help in the sandbox and
    writes shims."""
    return Effects(
        filesystem=FilesystemEffects(read=True, write=True, delete=False),
        network=True,
        subprocess=True,
        idempotent=True,
        reversible=True,
        destructive=False,
        interactive=Interactive(stdin="none", prompts=False, tty=False),
    )
