"""Policy files: read strictly, so that what a policy says is what is enforced.

A misspelt key that is silently ignored is a rule that silently does not hold
(`{"alowNetwork": false}` would allow the network). So every key, type and value is
checked, each problem reported with its JSON path and, where one is close, the key or
value that was probably meant: every unknown key and value at once (the first
`MAX_PROBLEMS`: a file of thousands is hostile, not mistyped), then, once there are
none, the first wrong type (msgspec's). `x-*` keys are extensions (RFC 0.6 §12.2) and
are ignored.

Two forms are read:
- atipkit's own: the fields of `Policy`, camelCase (`{"allowNetwork": false, ...}`);
- an organization's `policy.json` (RFC 0.6 §4.8, §3.2.2): `{"policy": {"version",
  "organization", "approval", "trust", "execution"}}`, optionally beside the `registry`
  it belongs to. Every field the RFC defines is mapped onto a `Policy`: an allowlist
  approval needs to know its registry, and is refused by name when it cannot.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Iterator
from typing import Any, Literal, TypeVar

import msgspec
import msgspec.inspect as mi

from atipkit import _jsontext
from atipkit.errors import DocumentError
from atipkit.policy.rules import EffectName, Policy, TrustPolicy
from atipkit.problems import Problem, error, json_path

S = TypeVar("S", bound=msgspec.Struct)

#: Keys of a policy that are not part of the file format.
_INTERNAL = frozenset({"parent"})
#: Keys of a policy file that a trust policy has not: a file with one is a policy.
_POLICY_KEYS = frozenset(
    f.encode_name for f in msgspec.structs.fields(Policy) if f.encode_name not in _INTERNAL
) - {f.encode_name for f in msgspec.structs.fields(TrustPolicy)}
#: Policy files are small; a larger one is not a policy.
MAX_POLICY_BYTES = 1024 * 1024
#: Problems listed at most: a file with thousands of unknown keys is not worth more.
MAX_PROBLEMS = 50
_AT = re.compile(r"^(?P<message>.*?) - at `(?P<where>[^`]*)`(?: in `(?P<inside>[^`]*)`)?$")


class PolicyFileError(DocumentError):
    """A policy file that cannot be used as written. `problems` lists everything wrong,
    each at its JSON path."""


# -- the organization's policy.json (RFC 0.6 §4.8) ------------------------------------------


class _Strict(
    msgspec.Struct, kw_only=True, frozen=True, rename="camel", forbid_unknown_fields=True
):
    pass


class _Approval(_Strict, frozen=True):
    mode: Literal["allowlist"]
    note: str = ""


class _OrgTrust(_Strict, frozen=True):
    require_signatures: bool | None = None
    require_signature: bool | None = None
    """§3.2.2 spells it in the singular, §4.8 in the plural: both are read."""
    allowed_signers: list[str] = []
    minimum_slsa_level: int = 0


class _Execution(_Strict, frozen=True):
    require_confirmation: dict[EffectName, bool] = {}
    audit_all_calls: bool = False


class _OrgPolicy(_OrgTrust, frozen=True):
    version: str = "1"
    organization: str = ""
    approval: _Approval | None = None
    trust: _OrgTrust | None = None
    execution: _Execution | None = None


class _OrgFile(_Strict, frozen=True):
    policy: _OrgPolicy
    registry: str | None = None
    """The registry the policy belongs to (the §3.2.2 example writes it beside `policy`);
    a policy.json served by a registry belongs to that one."""


# -- reading --------------------------------------------------------------------------------


def read_policy(
    data: bytes | str, source: str = "<policy>", *, registry: str | None = None
) -> Policy:
    """The policy in a file's bytes, either form. `registry` is the URL the file was
    served by, for an organization's policy.json. Raises `PolicyFileError` (every
    problem, located) or a `DocumentError` for text that is not JSON."""
    raw = _decode(data, source)
    if isinstance(raw, dict) and "policy" in raw:
        org = _convert(raw, _OrgFile, source)
        return _from_org(org, source, registry or org.registry)
    return _convert(raw, Policy, source)


def read_trust_policy(data: bytes | str, source: str = "<trust policy>") -> TrustPolicy:
    """A trust policy: `TrustPolicy`'s fields, or an organization's policy.json (its
    trust part), or atipkit's policy file (its `trust`)."""
    raw = _decode(data, source)
    if isinstance(raw, dict) and "policy" in raw:
        org = _convert(raw, _OrgFile, source)
        return _trust_of(org.policy) or TrustPolicy()
    if isinstance(raw, dict) and not _POLICY_KEYS.isdisjoint(raw):  # `atip run`'s file
        return _convert(raw, Policy, source).trust or TrustPolicy()
    return _convert(raw, TrustPolicy, source)


def trust_policy_of(raw: Any, source: str) -> TrustPolicy:
    """A trust policy given as a JSON value already decoded (config.json's `trust`)."""
    return _convert(raw, TrustPolicy, source)


def _decode(data: bytes | str, source: str) -> Any:
    payload = data.encode() if isinstance(data, str) else data
    if len(payload) > MAX_POLICY_BYTES:
        raise PolicyFileError(
            [error("policy.too-large", f"larger than {MAX_POLICY_BYTES:,} bytes", "")], source
        )
    return _jsontext.decode(payload, source)


def _convert(raw: Any, cls: type[S], source: str) -> S:
    problems = list(itertools.islice(_check(raw, mi.type_info(cls), []), MAX_PROBLEMS + 1))
    if len(problems) > MAX_PROBLEMS:  # a hostile file: bounded time and output
        problems[MAX_PROBLEMS:] = [
            error(
                "policy.too-many-problems",
                f"more than {MAX_PROBLEMS} problems: the rest are not listed",
                "$",
            )
        ]
    if not problems:
        try:
            return msgspec.convert(_without_extensions(raw), cls)
        except msgspec.ValidationError as exc:
            problems.append(_problem_of(exc))
        except ValueError as exc:  # a struct's own check
            problems.append(error("policy.value", str(exc)))
    raise PolicyFileError(problems, source)


def _without_extensions(raw: Any) -> Any:
    if isinstance(raw, dict):
        return {k: _without_extensions(v) for k, v in raw.items() if not _extension(k)}
    if isinstance(raw, list):
        return [_without_extensions(v) for v in raw]
    return raw


def _extension(key: Any) -> bool:
    return isinstance(key, str) and key.startswith("x-")


def _check(raw: Any, info: mi.Type, where: list[str | int]) -> Iterator[Problem]:
    """Unknown keys and values, each with a suggestion; types are msgspec's to check.
    Lazy: the caller takes as many as it reports."""
    if isinstance(info, mi.UnionType):
        member = next((m for m in info.types if _fits(raw, m)), None)
        if member is not None:
            yield from _check(raw, member, where)
    elif isinstance(info, mi.StructType) and isinstance(raw, dict):
        fields = {f.encode_name: f for f in info.fields if f.encode_name not in _INTERNAL}
        for key, value in raw.items():
            if _extension(key):
                continue
            field = fields.get(key)
            if field is None:
                yield _unknown("key", key, list(fields), [*where, key])
            else:
                yield from _check(value, field.type, [*where, key])
    elif isinstance(info, mi.DictType) and isinstance(raw, dict):
        for key, value in raw.items():
            if isinstance(info.key_type, mi.LiteralType) and key not in info.key_type.values:
                yield _unknown("key", key, [str(v) for v in info.key_type.values], [*where, key])
            else:
                yield from _check(value, info.value_type, [*where, key])
    elif isinstance(info, mi.ListType) and isinstance(raw, list):
        for index, item in enumerate(raw):
            yield from _check(item, info.item_type, [*where, index])
    elif isinstance(info, mi.LiteralType) and isinstance(raw, str) and raw not in info.values:
        yield _unknown("value", raw, [str(v) for v in info.values], where)


def _fits(raw: Any, info: mi.Type) -> bool:
    """Whether a JSON value is of the kind a union member reads."""
    if isinstance(info, mi.NoneType):
        return raw is None
    if isinstance(info, (mi.StructType, mi.DictType)):
        return isinstance(raw, dict)
    if isinstance(info, mi.ListType):
        return isinstance(raw, list)
    if isinstance(info, mi.LiteralType):
        return isinstance(raw, str)
    return not isinstance(raw, (dict, list)) and raw is not None


def _unknown(kind: str, name: Any, known: list[str], where: list[str | int]) -> Problem:
    near = _near(str(name), known)
    if near:
        hint = f"; did you mean {' or '.join(repr(n) for n in near)}?"
    else:
        hint = f"; expected one of: {', '.join(known)}"
    shown = str(name) if len(str(name)) <= 60 else str(name)[:57] + "..."
    return error(f"policy.unknown-{kind}", f"unknown {kind} {shown!r}{hint}", json_path(where))


def _near(name: str, known: list[str]) -> list[str]:
    """The known names `name` is a near miss of: the closest, and any about as close. A
    near miss of two is shown both (`allowFilesystem`: `allowFilesystemWrite` or
    `allowFilesystemDelete`), never steered to one of them."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)

    def ratio(candidate: str) -> float:
        return difflib.SequenceMatcher(None, name, candidate).ratio()

    best = ratio(close[0]) if close else 0.0
    return [c for c in close if ratio(c) >= best - 0.1]


def _problem_of(exc: msgspec.ValidationError) -> Problem:
    """msgspec's `Expected `bool`, got `str` - at `$.allowNetwork`` as a located problem."""
    match = _AT.match(str(exc))
    if match is None:
        return error("policy.type", str(exc))
    location = match["inside"] or match["where"]
    return error("policy.type", match["message"], location if location.startswith("$") else "$")


# -- the organization's form, mapped ---------------------------------------------------------


def _trust_of(org: _OrgPolicy) -> TrustPolicy | None:
    sections = [org, *([org.trust] if org.trust else [])]
    require = any(s.require_signatures is True or s.require_signature is True for s in sections)
    signers = [signer for s in sections for signer in s.allowed_signers]
    slsa = max(s.minimum_slsa_level for s in sections)
    if not (require or signers or slsa):
        return None
    return TrustPolicy(require_signature=require, allowed_signers=signers, minimum_slsa_level=slsa)


def _from_org(org: _OrgFile, source: str, registry: str | None) -> Policy:
    policy = org.policy
    problems = []
    major = policy.version.split(".", 1)[0]
    if major != "1":
        problems.append(
            error(
                "policy.version",
                f"policy version {policy.version!r} is not one atipkit reads (1)",
                "$.policy.version",
            )
        )
    approved = None
    if policy.approval is not None:  # mode is "allowlist", the one the RFC defines
        if registry is None:
            problems.append(
                error(
                    "policy.approval",
                    "approval.mode 'allowlist' approves only the shims of the policy's own "
                    'registry, and this file names none: add "registry": URL beside '
                    '"policy" (RFC 0.6 §3.2.2)',
                    "$.policy.approval.mode",
                )
            )
        else:
            approved = [registry]
    if problems:
        raise PolicyFileError(problems, source)
    execution = policy.execution or _Execution()
    confirm = execution.require_confirmation
    trust = _trust_of(policy)
    return Policy(
        allow_destructive=confirm.get("destructive") is False,
        allow_billable=confirm.get("billable") is False,
        confirm_effects=[
            e for e, on in confirm.items() if on and e not in ("destructive", "billable")
        ],
        minimum_verification="VERIFIED" if trust and trust.minimum_slsa_level else None,
        trust=trust,
        approved_registries=approved,
        audit_all_calls=execution.audit_all_calls,
    )
