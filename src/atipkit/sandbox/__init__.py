"""The sandbox: where atipkit runs programs it does not trust (probes, `--help`, groff,
and the runner's `isolate`).

Two guarantees hold everywhere:
- **Nothing outlives its run.** Each program is started by a *warden*, a child subreaper
  in a helper process, never atipkit's own process (setting the subreaper flag on a host
  that embeds atipkit would change what becomes of all its other children). Whatever the
  program starts — in its own session, double-forked — is re-parented to the warden,
  which kills and reaps all of it before the run returns, then removes the program's
  directory, which nothing writes into any more.
- **No set-user-ID program gains privileges** (`no_new_privs`), so nothing it starts is
  out of the warden's reach.

Where the kernel allows it (`isolation()` says which), the helper runs in new user,
mount, PID, network, IPC and UTS namespaces — bubblewrap when installed, else entered by
the helper itself (`unshare`): the filesystem is read-only but for the program's own
directory in a private `/tmp`; `/tmp`, `/var/tmp`, `/run`, `/dev/shm` and `$HOME` are
empty throwaways except for what the program needs to run (`plan`); there is no network,
loopback included; no capability. Where it does not, programs run on the host with the
user's rights — said once with a `SandboxWarning`, and reported as `none`.
"""

from atipkit.sandbox.session import (
    ENV,
    Isolation,
    SandboxError,
    SandboxWarning,
    base_env,
    isolation,
    prepare,
    run,
    used,
    wrap,
)

__all__ = [
    "ENV",
    "Isolation",
    "SandboxError",
    "SandboxWarning",
    "base_env",
    "isolation",
    "prepare",
    "run",
    "used",
    "wrap",
]
