"""The ATIP document as types.

Every part of atipkit meets in these types: probes and shims produce a `Tool`, the bridge
compiles one, the executor runs its commands. A `Tool` is loaded from any protocol version
0.1–0.6, held in the 0.6 object form, and dumped deterministically.

Conventions:
- A field that a document may leave out is `UNSET` when absent (falsy, never `None`), so
  "not stated" stays distinct from `false`: `effects.idempotent is False` means the tool
  said so; `UNSET` means nobody knows. JSON `null` is not a value of any field (the schema
  agrees), except where the RFC shows it (`filter.commands`, `filter.depth`).
- Python names are snake_case; JSON names are the RFC's camelCase.
- `x-*` vendor extensions, `_*` internal keys and `$*` keys are kept at every level in the
  `extensions` field of the object that carried them, and written back in sorted order.
- A command is addressed by its path: the tuple of argv words after the tool's name.
  `("pr", "create")` is `gh pr create`; `()` is the root invocation, the command keyed
  `""` (SPEC-NOTES 7).
"""

from __future__ import annotations

import functools
import os
import re
import threading
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import UNSET, Meta, UnsetType

from atipkit import _jsontext
from atipkit.errors import InvalidDocument, UnsupportedVersion
from atipkit.problems import error
from atipkit.protocol import ProtocolVersion, declared_version, parse_version, unsupported
from atipkit.typetable import AtipType

__all__ = [
    "UNSET",
    "Argument",
    "AtipType",
    "AtipVersion",
    "AuthMethod",
    "Authentication",
    "Binary",
    "Command",
    "CommandPath",
    "Cost",
    "Duration",
    "Effects",
    "FilesystemEffects",
    "Integrity",
    "Interactive",
    "Omitted",
    "Option",
    "PartialFilter",
    "Pattern",
    "PatternStep",
    "PatternVariable",
    "Provenance",
    "ShimIntegrity",
    "Signature",
    "Tool",
    "Trust",
    "UnsetType",
    "count_commands",
    "dumps",
    "effective_effects",
    "from_dict",
    "get_command",
    "is_tool_name",
    "iter_commands",
    "load",
    "loads",
    "merge_effects",
    "to_dict",
    "to_tool_name",
    "walk_commands",
]

CommandPath = tuple[str, ...]
S = TypeVar("S")
TrustSource = Literal["native", "vendor", "org", "community", "user", "inferred"]
StdinMode = Literal["none", "optional", "required", "password"]
OmittedReason = Literal["filtered", "depth-limited", "size-limited", "deprecated"]
SafetyAssumption = Literal["unknown", "known-safe", "known-unsafe", "same-as-included"]
SignatureType = Literal["cosign", "gpg", "minisign", "ssh"]

# Patterns end in \Z, not $: Python's $ also matches before a final newline, ECMAScript's
# (the schema's) does not. The schema file spells the same rules with $.
Flag = Annotated[str, Meta(pattern=r"^-")]
ToolName = Annotated[str, Meta(pattern=r"^[^\x00-\x20/\\\x7f]+\Z")]
_NOT_IN_TOOL_NAMES = re.compile(r"[\x00-\x20/\\\x7f]+")
NonEmpty = Annotated[str, Meta(min_length=1)]
Sha256 = Annotated[str, Meta(pattern=r"^sha256:[0-9a-f]{64}\Z")]
Checksum = Annotated[str, Meta(pattern=r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})\Z")]
Timeout = Annotated[str, Meta(pattern=r"^[0-9]+(\.[0-9]+)?(ms|s|m|h)\Z")]
VersionText = Annotated[str, Meta(pattern=r"^0\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?\Z")]
FeatureId = Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9-]*\Z")]

_EXTENSIONS = "x-"  # the encoded name of `extensions`; the loader owns that key


def _json_name(name: str) -> str:
    if name == "extensions":
        return _EXTENSIONS
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class _Node(
    msgspec.Struct,
    kw_only=True,
    omit_defaults=True,
    forbid_unknown_fields=True,
    rename=_json_name,
    repr_omit_defaults=True,
):
    extensions: dict[str, Any] = {}
    """`x-*`, `_*` and `$*` keys of this object, as they were."""


def _check_enum(type_: str, values: list[Any] | UnsetType) -> None:
    if type_ == "enum" and not values:
        raise ValueError("type 'enum' needs a non-empty 'enum' list of allowed values")


class Argument(_Node):
    """A positional parameter (RFC 0.6 §3.4). Required unless it says otherwise."""

    name: NonEmpty
    type: AtipType
    description: str | UnsetType = UNSET
    required: bool = True
    default: Any = UNSET
    variadic: bool = False
    enum: list[Any] | UnsetType = UNSET
    pattern: str | UnsetType = UNSET
    schema: dict[str, Any] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _check_enum(self.type, self.enum)


class Option(_Node):
    """A flag parameter (RFC 0.6 §3.5). Optional unless it says otherwise."""

    name: NonEmpty
    flags: Annotated[list[Flag], Meta(min_length=1)]
    type: AtipType
    description: str | UnsetType = UNSET
    required: bool = False
    default: Any = UNSET
    variadic: bool = False
    enum: list[Any] | UnsetType = UNSET
    env_var: str | UnsetType = UNSET
    exclusive: list[str] | UnsetType = UNSET
    schema: dict[str, Any] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _check_enum(self.type, self.enum)


class FilesystemEffects(_Node):
    read: bool | UnsetType = UNSET
    write: bool | UnsetType = UNSET
    delete: bool | UnsetType = UNSET
    paths: list[str] | UnsetType = UNSET


class Interactive(_Node):
    stdin: StdinMode | UnsetType = UNSET
    prompts: bool | UnsetType = UNSET
    tty: bool | UnsetType = UNSET


class Cost(_Node):
    estimate: str | UnsetType = UNSET
    billable: bool | UnsetType = UNSET


class Duration(_Node):
    typical: str | UnsetType = UNSET
    timeout: Timeout | UnsetType = UNSET


class Effects(_Node):
    """What running a command may do (RFC 0.6 §3.6). Every field may be unknown."""

    filesystem: FilesystemEffects | UnsetType = UNSET
    network: bool | UnsetType = UNSET
    subprocess: bool | UnsetType = UNSET
    idempotent: bool | UnsetType = UNSET
    reversible: bool | UnsetType = UNSET
    destructive: bool | UnsetType = UNSET
    creates: list[str] | UnsetType = UNSET
    modifies: list[str] | UnsetType = UNSET
    deletes: list[str] | UnsetType = UNSET
    interactive: Interactive | UnsetType = UNSET
    cost: Cost | UnsetType = UNSET
    duration: Duration | UnsetType = UNSET


class AuthMethod(_Node):
    type: NonEmpty
    description: str | UnsetType = UNSET
    env_var: str | UnsetType = UNSET
    config_path: str | UnsetType = UNSET
    setup_command: str | UnsetType = UNSET
    scopes: list[str] | UnsetType = UNSET


class Authentication(_Node):
    required: bool | UnsetType = UNSET
    methods: list[AuthMethod] = []
    check_command: str | UnsetType = UNSET


class Command(_Node):
    """One command of the tree (RFC 0.6 §3.3); `commands` nests further."""

    description: str
    arguments: list[Argument] = []
    options: list[Option] = []
    effects: Effects | UnsetType = UNSET
    authentication: Authentication | UnsetType = UNSET
    examples: list[str] = []
    deprecated: bool = False
    hidden: bool = False
    commands: dict[str, Command] = {}


class PatternStep(_Node):
    command: NonEmpty
    description: str | UnsetType = UNSET


class PatternVariable(_Node):
    type: AtipType = "string"
    description: str | UnsetType = UNSET
    default: Any = UNSET
    enum: list[Any] | UnsetType = UNSET

    def __post_init__(self) -> None:
        _check_enum(self.type, self.enum)


class Pattern(_Node):
    """A known workflow (RFC 0.6 §3.9); advisory unless `executable`."""

    name: NonEmpty
    description: str
    steps: Annotated[list[PatternStep], Meta(min_length=1)]
    variables: dict[str, PatternVariable] = {}
    tags: list[str] = []
    executable: bool = False


class Signature(_Node):
    type: SignatureType
    identity: str | UnsetType = UNSET
    issuer: str | UnsetType = UNSET
    bundle: str | UnsetType = UNSET


class Integrity(_Node):
    checksum: Checksum | UnsetType = UNSET
    signature: Signature | UnsetType = UNSET


class Provenance(_Node):
    url: str | UnsetType = UNSET
    format: str | UnsetType = UNSET
    slsa_level: Annotated[int, Meta(ge=0, le=4)] | UnsetType = UNSET
    builder: str | UnsetType = UNSET


class ShimIntegrity(_Node):
    signature: Signature | UnsetType = UNSET
    last_verified: str | UnsetType = UNSET


class Trust(_Node):
    """Where the metadata came from and how it can be verified (RFC 0.6 §3.2.2)."""

    source: TrustSource | UnsetType = UNSET
    verified: bool | UnsetType = UNSET
    integrity: Integrity | UnsetType = UNSET
    provenance: Provenance | UnsetType = UNSET
    shim_integrity: ShimIntegrity | UnsetType = UNSET
    signature: Signature | UnsetType = UNSET
    """The shim signature in the form of RFC 0.6 §4.5; `shim_signature` reads either form."""

    @property
    def shim_signature(self) -> Signature | None:
        """The signature over the shim file, wherever the document put it."""
        if self.shim_integrity and self.shim_integrity.signature:
            return self.shim_integrity.signature
        return self.signature or None


class Binary(_Node):
    """The one binary a shim describes (RFC 0.6 §4.5); `hash` is its lookup key."""

    hash: Sha256
    name: ToolName
    version: NonEmpty | UnsetType = UNSET
    platform: str | UnsetType = UNSET

    @property
    def hex(self) -> str:
        return self.hash.removeprefix("sha256:")


class AtipVersion(_Node):
    version: VersionText
    features: list[FeatureId] = []
    min_agent_version: str | UnsetType = UNSET

    @property
    def protocol(self) -> ProtocolVersion:
        parsed = parse_version(self.version)
        assert parsed is not None  # guaranteed by VersionText
        return parsed


class PartialFilter(_Node):
    commands: list[str] | UnsetType | None = UNSET
    depth: Annotated[int, Meta(ge=1)] | UnsetType | None = UNSET


class Omitted(_Node, omit_defaults=False):
    """Written whole, default included: the RFC's reader takes a missing
    `safetyAssumption` as "unknown" too, but says it in every example (§3.1.1)."""

    reason: OmittedReason
    safety_assumption: SafetyAssumption = "unknown"


class Tool(_Node):
    """An ATIP document: native metadata (`tool --agent`) or a shim (it has `binary`)."""

    atip: AtipVersion
    name: ToolName
    version: NonEmpty
    description: str
    title: str | UnsetType = UNSET
    homepage: str | UnsetType = UNSET
    license: str | UnsetType = UNSET
    binary: Binary | UnsetType = UNSET
    trust: Trust | UnsetType = UNSET
    partial: bool = False
    filter: PartialFilter | UnsetType = UNSET
    total_commands: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    included_commands: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
    omitted: Omitted | UnsetType = UNSET
    authentication: Authentication | UnsetType = UNSET
    effects: Effects | UnsetType = UNSET
    global_options: list[Option] = []
    commands: dict[str, Command] = {}
    patterns: list[Pattern] = []

    @property
    def kind(self) -> Literal["metadata", "shim"]:
        return "shim" if self.binary else "metadata"


# -- walking the command tree -------------------------------------------------------------


def is_tool_name(text: str) -> bool:
    """Whether `text` may name a tool: it becomes a file and a process name, so no
    whitespace, control characters, `/` or `\\`."""
    return bool(text) and _NOT_IN_TOOL_NAMES.search(text) is None


def to_tool_name(text: str) -> str:
    """`text` made a tool name: each run of characters no tool name may hold becomes `-`,
    none at either end ("" when nothing is left)."""
    return _NOT_IN_TOOL_NAMES.sub("-", text).strip("-")


def walk_commands(
    tool: Tool, initial: S, step: Callable[[S, str, Command], S]
) -> Iterator[tuple[CommandPath, Command, S]]:
    """Every command with its path and a state folded down from the root: each command's
    state is `step(parent_state, key, command)`, the root's parent state `initial`.

    Depth first, in document order, groups included; iterative, so a deep tree cannot
    exhaust the interpreter's stack. `iter_commands`, the semantic checks and the bridge
    all walk with it."""
    stack: list[tuple[CommandPath, S, Iterator[tuple[str, Command]]]] = [
        ((), initial, iter(tool.commands.items()))
    ]
    while stack:
        path, state, children = stack[-1]
        try:
            key, command = next(children)
        except StopIteration:
            stack.pop()
            continue
        sub_path = path if key == "" else (*path, key)
        sub_state = step(state, key, command)
        yield sub_path, command, sub_state
        if command.commands:
            stack.append((sub_path, sub_state, iter(command.commands.items())))


def iter_commands(tool: Tool) -> Iterator[tuple[CommandPath, Command]]:
    """Every command of the tree with its path, depth first, in document order."""
    for path, command, _ in walk_commands(tool, None, _no_state):
        yield path, command


def _no_state(_state: None, _key: str, _command: Command) -> None:
    return None


def count_commands(tool: Tool) -> int:
    """Number of commands in the tree, groups included: the `totalCommands` of §3.1.1."""
    return sum(1 for _ in iter_commands(tool))


def get_command(tool: Tool, path: CommandPath | str) -> Command:
    """The command at `path` (a tuple, or the words joined by spaces); `KeyError` if none."""
    words: CommandPath = tuple(path.split()) if isinstance(path, str) else path
    if not words:
        if "" in tool.commands:
            return tool.commands[""]
        raise KeyError("the tool has no root command ('')")
    node: Mapping[str, Command] = tool.commands
    command: Command | None = None
    for depth, word in enumerate(words):
        command = _child(node, word)
        if command is None:
            raise KeyError(f"no command {' '.join(words[: depth + 1])!r}")
        node = command.commands
    assert command is not None
    return command


def _child(node: Mapping[str, Command], word: str) -> Command | None:
    """The command `word` of `node`, looked for as `walk_commands` paths it: the children
    of a root command (`""`), which a valid document never has (`command.root-has-
    subcommands`), are at its parent's level, so every path walked is found."""
    while (command := node.get(word)) is None:
        root = node.get("")
        if root is None or not root.commands:
            return None
        node = root.commands
    return command


# -- effects ------------------------------------------------------------------------------

_ANY_TRUE = ("destructive", "network", "subprocess")
_ANY_FALSE = ("idempotent", "reversible")


def _override(outer: _Node | UnsetType, inner: _Node | UnsetType) -> Any:
    """Field-by-field merge of two objects of one type; the inner (more specific) wins."""
    if not inner:
        return outer
    if not outer:
        return inner
    changes = {
        f: getattr(inner, f) for f in inner.__struct_fields__ if getattr(inner, f) is not UNSET
    }
    changes["extensions"] = {**outer.extensions, **inner.extensions}
    return msgspec.structs.replace(outer, **changes)


def merge_effects(outer: Effects | UnsetType, inner: Effects | UnsetType) -> Effects:
    """Effects of a command inside a scope that declares effects (SPEC-NOTES 4).

    `destructive`, `network` and `subprocess` are true if either side says true;
    `idempotent` and `reversible` are false if either side says false; every other field
    (filesystem, interactive, cost and duration field by field) is taken from the inner
    side where it says something.
    """
    if not outer or not inner:
        return (inner or outer) or Effects()
    merged: Effects = _override(outer, inner)
    changes: dict[str, Any] = {}
    for name in _ANY_TRUE:
        a, b = getattr(outer, name), getattr(inner, name)
        changes[name] = True if True in (a, b) else (False if False in (a, b) else UNSET)
    for name in _ANY_FALSE:
        a, b = getattr(outer, name), getattr(inner, name)
        changes[name] = False if False in (a, b) else (True if True in (a, b) else UNSET)
    for name in ("filesystem", "interactive", "cost", "duration"):
        changes[name] = _override(getattr(outer, name), getattr(inner, name))
    return msgspec.structs.replace(merged, **changes)


def effective_effects(tool: Tool, path: CommandPath | str) -> Effects:
    """The effects that hold for one command: the tool's, then each enclosing group's,
    then the command's own, merged by `merge_effects`."""
    words: CommandPath = tuple(path.split()) if isinstance(path, str) else path
    effects = merge_effects(tool.effects, UNSET)
    if not words:
        return merge_effects(effects, get_command(tool, ()).effects)
    node = tool.commands
    for depth, word in enumerate(words):
        command = node.get(word)
        if command is None:
            raise KeyError(f"no command {' '.join(words[: depth + 1])!r}")
        effects = merge_effects(effects, command.effects)
        node = command.commands
    return effects


# -- loading and dumping ------------------------------------------------------------------


class _Shape(msgspec.Struct, frozen=True):
    """How the loader walks one struct type: its JSON field names and nested structs."""

    fields: frozenset[str]
    children: dict[str, tuple[Literal["one", "list", "dict"], type[_Node]]]
    child_keys: frozenset[str]


def _unwrap(tp: Any) -> Any:
    """`Annotated[T, Meta(...)]` → `T`."""
    return typing.get_args(tp)[0] if typing.get_origin(tp) is Annotated else tp


def _struct_in(tp: Any) -> type[_Node] | None:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, _Node):
        return tp
    return None


@functools.cache
def _shape(cls: type[_Node]) -> _Shape:
    fields: set[str] = set()
    children: dict[str, tuple[Literal["one", "list", "dict"], type[_Node]]] = {}
    for info in msgspec.structs.fields(cls):
        if info.encode_name == _EXTENSIONS:
            continue
        fields.add(info.encode_name)
        tp = _unwrap(info.type)
        if typing.get_origin(tp) in (typing.Union, _UnionType):
            tp = _unwrap(next(a for a in typing.get_args(tp) if a not in (UnsetType, type(None))))
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if (sub := _struct_in(tp)) is not None:
            children[info.encode_name] = ("one", sub)
        elif origin is list and (sub := _struct_in(args[0])) is not None:
            children[info.encode_name] = ("list", sub)
        elif origin is dict and (sub := _struct_in(args[1])) is not None:
            children[info.encode_name] = ("dict", sub)
    return _Shape(frozenset(fields), children, frozenset(children))


_UnionType = type(int | str)
_RESERVED = ("x-", "_", "$")


def _lift(obj: Any, cls: type[_Node], lenient: bool) -> Any:
    """Copy a decoded JSON object into the loader's form: reserved keys gathered under
    `x-`, nested objects walked by their types. Values of the wrong type are passed on
    untouched so that msgspec reports them with their path. With `lenient` (a newer minor
    protocol version) unknown keys are dropped instead of passed on to be refused.

    Copy-on-write: an object without extensions whose children are unchanged is returned
    as it is, so a plain document is walked with two set operations per object."""
    if type(obj) is not dict:
        return obj
    shape = _shape(cls)
    out = obj
    for key in shape.child_keys & obj.keys():
        kind, sub = shape.children[key]
        value = obj[key]
        if kind == "one":
            new = _lift(value, sub, lenient)
        elif kind == "list" and type(value) is list:
            items = [_lift(v, sub, lenient) for v in value]
            new = value if all(a is b for a, b in zip(items, value, strict=True)) else items
        elif kind == "dict" and type(value) is dict:
            lifted = {k: _lift(v, sub, lenient) for k, v in value.items()}
            new = value if all(lifted[k] is v for k, v in value.items()) else lifted
        else:
            new = value
        if new is not value:
            if out is obj:
                out = dict(obj)
            out[key] = new
    extra = obj.keys() - shape.fields
    if extra:
        out = {k: v for k, v in out.items() if k not in extra}
        reserved = sorted(k for k in extra if k.startswith(_RESERVED))
        if reserved:
            out[_EXTENSIONS] = {k: obj[k] for k in reserved}
        if not lenient:  # pass unknown keys on, for msgspec to refuse with their path
            out.update((k, obj[k]) for k in extra if not k.startswith(_RESERVED))
    return out


def _normalize(data: dict[str, Any]) -> dict[str, Any]:
    """Legacy forms → the 0.6 object form: a string `atip` becomes `{"version": ...}`, and
    a shim's `name`/`version` come from `binary` when the root leaves them out
    (SPEC-NOTES 1 and 6)."""
    data = dict(data)
    if isinstance(data.get("atip"), str):
        data["atip"] = {"version": data["atip"]}
    binary = data.get("binary")
    if isinstance(binary, dict):
        for key in ("name", "version"):
            if key not in data and key in binary:
                data[key] = binary[key]
    return data


def from_dict(data: Any, *, source: str | None = None) -> Tool:
    """Build a `Tool` from decoded JSON (any 0.x version), normalizing legacy forms.

    Raises `UnsupportedVersion` for a major version other than 0, `InvalidDocument`
    with every schema problem (exact JSON paths) when the document is not valid ATIP, and
    `DocumentTooLarge` for nesting deeper than `_jsontext.MAX_DEPTH`.
    """
    _jsontext.check_depth(data, source)
    return _convert(data, source, lift=True)


def may_have_reserved_keys(raw: bytes) -> bool:
    """False only if JSON text certainly has no `x-`, `_` or `$` key anywhere: none of
    those sequences follows a quote, and no `\\u` escape could spell one. A false `True`
    costs only speed."""
    return any(marker in raw for marker in (b'"x-', b'"_', b'"$', b"\\u"))


_types_ready = False
_types_lock = threading.Lock()


def _prepare_types() -> None:
    """Build msgspec's type information for the whole model once, under a lock.

    msgspec analyses a Struct's annotations lazily, on first use; when several threads
    (a parallel scan, say) do that at once, the interpreter can crash. Constructing a
    decoder for `Tool` analyses every type of the tree in one thread, before any other
    can need it."""
    global _types_ready
    with _types_lock:
        if not _types_ready:
            msgspec.json.Decoder(Tool)
            _types_ready = True


def _convert(data: Any, source: str | None, *, lift: bool) -> Tool:
    if not _types_ready:
        _prepare_types()
    if not isinstance(data, dict):
        raise InvalidDocument([_jsontext.not_an_object(data)], source)
    version = declared_version(data)
    if version is not None and not version.is_supported:
        raise UnsupportedVersion([unsupported(version)], source)
    lenient = version is not None and version.is_newer
    normal = _normalize(data)
    try:  # nesting was bounded where the data was decoded (`_jsontext.check_depth`)
        prepared = _lift(normal, Tool, lenient) if lift or lenient else normal
        return msgspec.convert(prepared, Tool)
    except msgspec.ValidationError as exc:
        raise _invalid(data, exc, source) from None


def _invalid(data: dict[str, Any], exc: msgspec.ValidationError, source: str | None) -> Exception:
    """The schema names every problem with its exact path; msgspec only the first, with
    dictionary keys elided. Ask the schema, and keep msgspec's word as a fallback."""
    from atipkit import schema

    problems = [p for p in schema.check(data) if p.is_error]
    if not problems:  # pragma: no cover - the schema and the model agree (tested)
        message, _, where = str(exc).rpartition(" - at `")
        problems = [error("model.invalid", message or str(exc), where.rstrip("`") or "$")]
    return InvalidDocument(problems, source)


def loads(data: bytes | str, *, source: str | None = None) -> Tool:
    """Parse an ATIP document from JSON text. See `from_dict` for what is raised."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return _convert(_jsontext.decode(raw, source), source, lift=may_have_reserved_keys(raw))


def load(path: str | os.PathLike[str], *, max_bytes: int = _jsontext.MAX_DOCUMENT_BYTES) -> Tool:
    """Read an ATIP document from a file (`-` for stdin), at most `max_bytes` long."""
    source = "<stdin>" if str(path) == "-" else str(path)
    return loads(_jsontext.read_bytes(path, max_bytes=max_bytes), source=source)


def _splice(obj: dict[str, Any], cls: type[_Node]) -> dict[str, Any]:
    """Inverse of `_lift` on `msgspec.to_builtins` output: extensions back in place."""
    shape = _shape(cls)
    for key, (kind, sub) in shape.children.items():
        value = obj.get(key)
        if value is None:
            continue
        if kind == "one":
            _splice(value, sub)
        elif kind == "list":
            for item in value:
                _splice(item, sub)
        else:
            for item in value.values():
                _splice(item, sub)
    extensions = obj.pop(_EXTENSIONS, None)
    if extensions:
        for key in sorted(extensions):
            obj[key] = extensions[key]
    return obj


def to_dict(tool: Tool) -> dict[str, Any]:
    """The document as JSON-ready builtins, in the 0.6 object form; unset fields and
    defaults are left out, extensions come last in each object, sorted."""
    return _splice(msgspec.to_builtins(tool), Tool)


def dumps(tool: Tool, *, indent: int | None = 2) -> bytes:
    """Serialize deterministically: the same `Tool` always gives the same bytes."""
    text = msgspec.json.encode(to_dict(tool))
    return msgspec.json.format(text, indent=indent) if indent else text
