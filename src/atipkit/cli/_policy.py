"""Policy files named on atip's command line (`--policy`), and config.json's `trust`: read
strictly (`atipkit.policy.file`), their failures as the errors that mean them, the same
in `atip run`, `atip mcp serve` and `atip verify`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from atipkit.app import DataFormatError, InputError, Suggestion
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.errors import DocumentError
    from atipkit.policy import Policy, TrustPolicy


def load_policy(path: Path | None) -> Policy:
    """The policy in file `path` (the default policy for None), with config.json's
    `trust` where the file has none: the keys and signers binaries are verified with;
    narrowed under the organization policy each configured registry serves (§4.8)."""
    import msgspec

    from atipkit.errors import DocumentError
    from atipkit.policy import Policy, read_policy

    policy = Policy()
    if path is not None:
        data = _read(path)
        try:
            policy = read_policy(data, str(path))
        except DocumentError as exc:
            raise _bad(exc, path, "a policy") from None
    if policy.trust is None:
        configured = configured_trust()
        if configured is not None:
            policy = msgspec.structs.replace(policy, trust=configured)
    for organization in registry_policies():
        policy = organization.narrow(policy)
    return policy


def registry_policies() -> list[Policy]:
    """The organization policies the configured registries serve; none without
    registries (nothing is asked). One that cannot be read stops the command (E1009):
    an organization's rules never vanish unnoticed."""
    from atipkit.registry.config import RegistryConfigError, load_settings

    try:
        settings = load_settings()
    except RegistryConfigError as exc:
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_CONFIG,
            suggestion="Fix registries.json: its registries' policies apply to every call.",
        ) from None
    if not settings.registries:
        return []
    from atipkit.registry.remote import RegistryPolicyError, RemoteRegistries

    try:
        with RemoteRegistries(settings) as remote:
            return remote.policies()
    except RegistryPolicyError as exc:
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_CONFIG,
            suggestion="Ask the registry's keepers to fix its policy.json, or remove the "
            "registry from registries.json.",
        ) from None


def load_trust_policy(path: Path | None) -> TrustPolicy:
    """The trust policy in file `path` (either form, or a policy file's `trust`), else
    config.json's `trust`, else the default."""
    from atipkit.errors import DocumentError
    from atipkit.policy import TrustPolicy, read_trust_policy

    if path is not None:
        data = _read(path)
        try:
            return read_trust_policy(data, str(path))
        except DocumentError as exc:
            raise _bad(exc, path, "a trust policy") from None
    return configured_trust() or TrustPolicy()


def configured_trust() -> TrustPolicy | None:
    """config.json's `trust`, or None when it has none; a section that cannot be used is
    a configuration error (E1009), never ignored."""
    from atipkit import paths
    from atipkit.errors import DocumentError
    from atipkit.policy.file import trust_policy_of

    configured = paths.user_config().get("trust")
    if configured is None:
        return None
    source = paths.config_dir() / "config.json"
    try:
        return trust_policy_of(configured, f"{source}: trust")
    except DocumentError as exc:
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_CONFIG,
            details={"file": str(source), "problems": [p.to_dict() for p in exc.problems]},
            suggestion="Fix the trust section of config.json, or give --policy.",
        ) from None


def audit_path(policy: Policy, given: Path | None) -> Path | None:
    """Where calls are audited: the file given, else — when a policy of the chain asks
    for every call to be audited (`auditAllCalls`) — `$XDG_STATE_HOME/agent-tools/
    audit.jsonl`, else nowhere."""
    from atipkit import paths

    if given is not None or not any(p.audit_all_calls for p in policy.chain()):
        return given
    return paths.state_dir() / "audit.jsonl"


def _read(path: Path) -> bytes:
    from atipkit.cli._resolve import file_error

    try:
        return path.read_bytes()
    except OSError as exc:
        raise file_error(exc, str(path), "Name a policy file (JSON).", "--policy") from None


def _bad(exc: DocumentError, path: Path, what: str) -> DataFormatError:
    from atipkit.cli._resolve import document_error

    return document_error(
        exc,
        f"--policy {path}: not {what}",
        path,
        Suggestion(
            "Fix the policy file: every key, type and value must be one atipkit knows "
            "(the keys are listed under 'Running tool calls' in the documentation)."
        ),
    )
