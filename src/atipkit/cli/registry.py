"""`atip registry fetch|list`: remote registries — look shims up, list the configured
registries. (`atip registry build|publish` live in `cli/publish.py`.)"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Argument,
    AuthError,
    Context,
    DataFormatError,
    DependencyError,
    InputError,
    NotFoundError,
    Option,
    Suggestion,
    ToolError,
)
from atipkit.cli import app
from atipkit.cli._effects import fetches
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.registry.config import RegistrySettings, RemoteRegistry
    from atipkit.registry.remote import Lookup, RemoteRegistries

_HASH = re.compile(r"(sha256:)?[0-9a-f]{64}\Z")
_CACHE_STAMPS = frozenset({"_cached_at", "_cached_from", "_etag", "_last_modified", "_verified"})
_HASHLIKE = re.compile(r"(sha256:.*|[0-9a-fA-F]+)\Z")
_CONFIGURE = Suggestion(
    "Name registries in ATIP_REGISTRIES (comma-separated URLs) or in "
    "~/.config/agent-tools/registries.json.",
    example="ATIP_REGISTRIES=https://registry.example atip registry fetch sha256:<hex>",
    applicability="has_placeholders",
)


def _config_error(exc: Exception) -> InputError:
    return InputError(
        str(exc),
        code=ErrorCode.BAD_CONFIG,
        suggestion="Fix registries.json (or ATIP_REGISTRIES) as the message says.",
    )


# -- atip registry fetch -----------------------------------------------------------------


registry_group = app.group(
    "registry", help="Remote shim registries: look up, list, build, publish."
)


def _fetch_text(result: dict[str, Any]) -> str:
    """The shim itself, for people and for `--text > shim.json`; where it came from is
    a note on stderr."""
    shim = result.get("shim")
    return "" if shim is None else json.dumps(shim, indent=2, ensure_ascii=False) + "\n"


@registry_group.command(effects=fetches(), text=_fetch_text)
def fetch(
    target: Annotated[
        str,
        Argument(help="A binary's sha256 (sha256:<hex> or <hex>), or a tool name or path to hash."),
    ],
    ctx: Context,
    refresh: Annotated[bool, Option(help="Revalidate with the registries even if cached.")] = False,
) -> dict[str, Any]:
    """Look a shim up by binary hash in the configured registries.

    The result is the lookup report (which registry, cached or fetched, signature,
    every registry's answer) with the shim under `shim`; text output prints the shim and
    says where it came from on stderr. Failures, each with the report as result: no
    registry has a shim (exit 10); a registry served a shim for another binary (30,
    E2010) or without a valid required signature (30, E2011), or an invalid shim (65),
    and none served a good one; registries unreachable (40); no registries configured or
    a broken registries.json (2, E1009).
    """
    import msgspec

    from atipkit.model import to_dict
    from atipkit.registry.config import RegistryConfigError
    from atipkit.registry.remote import RemoteRegistries

    hash_ = _hash_of(target)
    try:
        remote = RemoteRegistries.from_environment(refresh=refresh)
    except RegistryConfigError as exc:
        raise _config_error(exc) from None
    if not remote.registries:
        raise InputError(
            "no registries configured (registries.json or ATIP_REGISTRIES)",
            code=ErrorCode.BAD_CONFIG,
            suggestion=_CONFIGURE,
        )
    with remote:
        lookup = remote.lookup(hash_)
        served = [] if remote.settings.offline else remote.refresh_patterns()
    report = {**lookup.to_dict(), "shim": _as_served(to_dict(lookup.tool)) if lookup.tool else None}
    report["patterns"] = [msgspec.to_builtins(a) for a in served]
    for attempt in served:
        if attempt.outcome not in ("found", "skipped"):
            ctx.warn(f"patterns of {attempt.registry}: {attempt.outcome}: {attempt.reason}")
    for line in _report_lines(lookup):
        ctx.info(line)
    if lookup.tool is not None:
        if lookup.stale:
            ctx.warn("no registry could be reached: this is a stale cached copy")
        return report
    raise _not_found(lookup, report, offline=remote.settings.offline, registries=remote.registries)


def _as_served(shim: dict[str, Any]) -> dict[str, Any]:
    """The shim as its registry served it: without the cache's stamps (RFC 0.6 §4.7),
    which a copy read from the cache carries, so that a fetched and a cached answer are
    the same document."""
    return {key: value for key, value in shim.items() if key not in _CACHE_STAMPS}


def _hash_of(target: str) -> str:
    """A hash as given, or the sha256 of the binary a name or path points to."""
    from atipkit.trust.digest import file_digest

    if _HASH.match(target):
        return target
    binary = target if os.sep in target else shutil.which(target)
    if binary and os.path.isfile(binary):
        return file_digest(binary)
    if _HASHLIKE.match(target):
        raise InputError(
            f"{target[:80]!r} is not a sha256 hash (64 lowercase hex digits)",
            code=ErrorCode.BAD_VALUE,
            details={"param": "target"},
            suggestion="Give sha256:<64 lowercase hex digits>, or a tool name or path.",
        )
    raise NotFoundError(
        f"{target[:80]!r} is not a sha256 hash (64 lowercase hex digits) nor an executable",
        details={"param": "target"},
        suggestion="Give a tool on PATH, a path to a binary, or the binary's sha256.",
    )


def _not_found(
    lookup: Lookup,
    report: dict[str, Any],
    *,
    offline: bool,
    registries: list[RemoteRegistry],
) -> ToolError:
    """Why no shim came back, as the error that means it. A refusal outranks a registry
    that denied access, which outranks an unreachable one, which outranks a plain 'not
    found': the strongest reason an agent should not simply conclude that no shim
    exists."""
    rejected = lookup.rejected
    if rejected:
        refusals = {a.refusal for a in rejected}
        where = "; ".join(f"{a.registry}: {a.reason}" for a in rejected)
        if "other-binary" in refusals:
            return AuthError(
                f"refused a shim that describes another binary ({where})",
                code=ErrorCode.COMPROMISED,
                suggestion=Suggestion(
                    "A registry serves a shim for a different binary under this hash; "
                    "report it to the registry's maintainers.",
                    action="abort",
                ),
                result=report,
            )
        if "unsigned" in refusals:
            return AuthError(
                f"refused a shim whose signature is not verified ({where})",
                code=ErrorCode.NOT_VERIFIED,
                suggestion="Configure the registry's signers (signers, minisignKeys or "
                "sshAllowedSigners in registries.json), or ask its maintainers to sign it.",
                result=report,
            )
        return DataFormatError(f"refused an invalid shim ({where})", result=report)
    denied = [a for a in lookup.attempts if a.outcome == "denied"]
    if denied:
        where = "; ".join(f"{a.registry}: {a.reason}" for a in denied)
        return AuthError(
            f"{len(denied)} registr{'y' if len(denied) == 1 else 'ies'} denied access ({where})",
            code=ErrorCode.ACCESS_DENIED,
            suggestion=_credentials_hint(denied[0].registry, registries),
            result=report,
        )
    unreachable = [a for a in lookup.attempts if a.outcome == "unreachable"]
    if unreachable:
        where = "; ".join(f"{a.registry}: {a.reason}" for a in unreachable)
        return DependencyError(
            f"{len(unreachable)} registr{'y' if len(unreachable) == 1 else 'ies'} could not "
            f"be reached ({where})",
            is_retryable=True,
            suggestion=Suggestion("Retry later, or check the network.", action="retry"),
            result=report,
        )
    skipped = [a for a in lookup.attempts if a.outcome == "skipped"]
    return NotFoundError(
        f"{lookup.hash}: no registry has a shim for this binary"
        + (" (offline: only the cache was read)" if offline else "")
        + (f"; {len(skipped)} skipped: " + "; ".join(a.reason for a in skipped) if skipped else ""),
        suggestion="Describe the tool yourself (atip gen), or ask a registry to add a shim.",
        result=report,
    )


def _credentials_hint(label: str, registries: list[RemoteRegistry]) -> Suggestion:
    """How to give the registry that denied access its credentials: a bearer token read
    from an environment variable its registries.json entry names (never the token itself
    in a file), or, when it names one, that the token was refused."""
    from atipkit import paths

    config = paths.config_dir() / "registries.json"
    registry = next((r for r in registries if r.label == label), None)
    if registry is not None and registry.auth is not None:
        variable = registry.auth.token_env_var
        return Suggestion(
            f"The bearer token in ${variable} was refused: check that it is current and "
            f"may read this registry, then set {variable} again.",
            action="ask_human",
        )
    url = registry.url if registry is not None else label
    return Suggestion(
        f"This registry needs credentials. Give it a bearer token: in {config}, its entry "
        '{"url": "' + url + '", "auth": {"type": "bearer", "tokenEnvVar": "REGISTRY_TOKEN"}}, '
        "and the token in that environment variable (ATIP_REGISTRIES names URLs only: "
        "an entry of the file with the same URL lends it its auth).",
        example="REGISTRY_TOKEN=<token> atip registry fetch sha256:<hex>",
        applicability="has_placeholders",
        action="ask_human",
    )


def _report_lines(lookup: Lookup) -> list[str]:
    lines = []
    if lookup.tool is not None:
        how = (
            "stale copy: no registry could be reached"
            if lookup.stale
            else "revalidated (304)"
            if lookup.revalidated
            else "cached"
            if lookup.cached
            else "fetched"
        )
        signed = f"; signature: {lookup.verified}" if lookup.verified else ""
        lines.append(
            f"{lookup.hash}: {lookup.tool.name} {lookup.tool.version} from "
            f"{lookup.registry} ({how}{signed})"
        )
    else:
        lines.append(f"{lookup.hash}: no registry has a shim for this binary")
    for attempt in lookup.attempts:
        if attempt.outcome in ("found", "not-modified") and lookup.tool is not None:
            continue
        reason = f": {attempt.reason}" if attempt.reason else ""
        lines.append(f"  {attempt.registry}: {attempt.outcome}{reason}")
    return lines


# -- atip registry list ------------------------------------------------------------------


def _list_text(result: dict[str, Any]) -> str:
    rows = result["registries"]
    if not rows:
        return "no registries configured (registries.json or ATIP_REGISTRIES)\n"
    lines = []
    for row in rows:
        extras = [f"priority {row['priority']}", f"trust {row['trust']}"]
        if row["requireSignatures"]:
            extras.append("signatures required")
        if row["auth"]:
            extras.append(f"token from ${row['auth']}")
        line = f"{row['name'] or row['url']}  {row['url']}  ({', '.join(extras)})"
        if "check" in row:
            line += "  " + row["check"]["detail"]
        lines.append(line)
    return "".join(f"{line}\n" for line in lines)


@registry_group.command("list", effects=fetches(), text=_list_text)
def list_registries(
    ctx: Context,
    check: Annotated[
        bool,
        Option(help="Also fetch each registry's manifest and patterns; say if it answers."),
    ] = False,
) -> dict[str, Any]:
    """The registries shims are looked up in, in the order they are asked.

    Tokens are never shown, only the variable that holds them. With --check, a registry
    that does not answer is exit 40 (the result is the full list); a broken
    registries.json is exit 2 (E1009).
    """
    import msgspec

    from atipkit.registry.config import RegistryConfigError, load_settings
    from atipkit.registry.remote import RemoteRegistries

    try:
        settings = load_settings()
    except RegistryConfigError as exc:
        raise _config_error(exc) from None
    rows = []
    served = []
    with RemoteRegistries(settings, refresh=check) as remote:  # a check asks now
        for entry in settings.ordered:
            row = _row(settings, entry)
            if check and not settings.offline:
                row["check"] = _check(remote, entry)
            rows.append(row)
        if check and not settings.offline:
            served = [msgspec.to_builtins(a) for a in remote.refresh_patterns()]
    result = {"source": settings.source, "offline": settings.offline, "registries": rows}
    if served:
        result["patterns"] = served
    if settings.offline:
        ctx.info("offline (ATIP_OFFLINE): only cached shims are used")
    down = [r for r in rows if "check" in r and not r["check"]["ok"]]
    if down:
        raise DependencyError(
            "; ".join(f"{r['name'] or r['url']} {r['check']['detail']}" for r in down),
            is_retryable=True,
            suggestion=Suggestion("Retry later, or fix the registry's URL.", action="retry"),
            result=result,
        )
    return result


def _row(settings: RegistrySettings, entry: RemoteRegistry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "url": entry.url,
        "priority": entry.priority,
        "trust": entry.trust,
        "requireSignatures": settings.requires_signatures(entry),
        "auth": entry.auth.token_env_var if entry.auth else None,
        "signers": [s.identity for s in entry.signers],
        "minisignKeys": len(entry.minisign_keys),
        "sshAllowedSigners": entry.ssh_allowed_signers,
    }


def _check(remote: RemoteRegistries, entry: RemoteRegistry) -> dict[str, Any]:
    from atipkit._http import StatusError
    from atipkit.errors import AtipError
    from atipkit.registry.remote import DENIED_STATUSES

    try:
        manifest = remote.manifest(entry)
    except StatusError as exc:
        if exc.status in DENIED_STATUSES:  # up, and not for these credentials
            return {"ok": False, "detail": f"denied access: {exc} (check its auth token)"}
        return {"ok": False, "detail": f"does not answer: {exc}"}
    except AtipError as exc:  # HttpError and Rejected are AtipErrors
        return {"ok": False, "detail": f"does not answer: {exc}"}
    if manifest is None:
        return {"ok": True, "detail": "answers (no manifest: default endpoints)"}
    info = manifest.registry
    return {
        "ok": True,
        "detail": f"answers: {info.name} {info.version}".rstrip(),
        "manifest": {"name": info.name, "version": info.version},
    }


# `atip registry build` and `publish` come after these, from publish.py (decision 310).
registry_group.lazy("atipkit.cli.publish", ("build", "publish"))
