"""Schemas of an app's commands (PRD §9): `--schema`, `--help-agent`, MCP and OpenAPI
all read them from here.

A command's schema document holds its input schema (JSON Schema 2020-12, every `$ref`
inlined), its output schema when the return annotation says something, its MCP-style
hints and ATIP effects, the environment variables that set its options, and the values
the configuration files give it now.
"""

from __future__ import annotations

import collections.abc
import typing
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.command import CommandSpec

__all__ = [
    "app_compact_help",
    "app_schema",
    "command_schema",
    "compact_help",
    "dumps",
    "envelope_parts",
    "failure_schema",
    "hint_words",
    "hints",
    "output_schema",
    "result_schema",
    "success_schema",
]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
_ITERATORS = (
    collections.abc.Iterator,
    collections.abc.Iterable,
    collections.abc.Generator,
)


def dumps(value: Any, *, indent: bool = False) -> str:
    import msgspec

    from atipkit.app.output import encode

    raw = encode(value)
    return msgspec.json.format(raw, indent=2).decode() if indent else raw.decode()


def input_schema(spec: CommandSpec) -> dict[str, Any]:
    return {"$schema": DRAFT, **spec.signature.input_schema()}


def output_schema(returns: Any) -> dict[str, Any] | None:
    """The JSON Schema of what a function returns, from its annotation; None when there
    is no annotation or it says nothing (`Any`, `None`). A generator's items are a list."""
    from atipkit.app.params import MISSING
    from atipkit.app.shapes import _is_pydantic, _path_schema_hook, inline_refs

    if returns is MISSING or returns is None or returns is type(None):
        return None
    if returns is typing.Any:
        return None
    origin = typing.get_origin(returns)
    if origin in _ITERATORS:
        args = typing.get_args(returns)
        item = output_schema(args[0]) if args else None
        return {"type": "array", "items": item or {}}
    try:
        if _is_pydantic(returns):
            from pydantic import TypeAdapter

            # what `encode` writes: model_dump(mode="json"), field names, computed fields
            raw = TypeAdapter(returns).json_schema(mode="serialization", by_alias=False)
        else:
            import msgspec

            raw = msgspec.json.schema(returns, schema_hook=_path_schema_hook)
    except Exception:  # a type msgspec cannot describe: say nothing rather than lie
        return None
    return inline_refs(raw)


def hints(spec: CommandSpec) -> dict[str, bool]:
    """MCP tool annotations (readOnlyHint, ...), from the same effects as `--agent`."""
    from atipkit.bridge.mcp import annotations

    return annotations(spec.atip_effects())


def env_vars(spec: CommandSpec) -> dict[str, str]:
    """Environment variable → the option it sets (Click's automatic names, plus the
    global flags that read one)."""
    app = spec.app
    out = {
        f"{app.env_prefix}_OUTPUT": "output",
        f"{app.env_prefix}_TIMEOUT": "timeout",
        f"{app.env_prefix}_RESPONSE_FORMAT": "response_format",
        "NO_COLOR": "no_color",
    }
    if spec.offered.prompts:
        out[f"{app.env_prefix}_NO_INPUT"] = "no_input"
    for param in spec.signature.params:
        if param.kind == "option":
            out[param.marker.envvar or auto_envvar(spec, param.name)] = param.name
    return out


def auto_envvar(spec: CommandSpec, name: str) -> str:
    words = [spec.app.env_prefix, *(w.upper().replace("-", "_") for w in spec.path)]
    return "_".join((*words, name.upper()))


def command_schema(spec: CommandSpec, *, pretty: bool = False) -> dict[str, Any]:
    import msgspec

    out: dict[str, Any] = {
        "name": " ".join(spec.path),
        "tool": spec.tool_name,
        "description": spec.description or spec.summary,
        "input_schema": input_schema(spec),
    }
    returns = output_schema(spec.signature.returns)
    if returns is not None:
        out["output_schema"] = returns
    out["annotations"] = hints(spec)
    out["effects"] = msgspec.to_builtins(spec.atip_effects())
    out["env"] = env_vars(spec)
    if spec.app.config_enabled:
        out["config"] = spec.app.config.resolved(spec)
    if spec.error_codes:
        out["error_codes"] = dict(spec.error_codes)
    return out


def app_schema(app: App) -> dict[str, Any]:
    return {
        "name": app.name,
        "version": app.version,
        "description": app.description,
        "commands": {" ".join(spec.path): command_schema(spec) for spec in app.walk()},
    }


def hint_words(spec: CommandSpec) -> list[str]:
    """What the command declares, in words (`--help-agent`, llms.txt, SKILL.md's index);
    what it leaves unknown is said once."""
    h = hints(spec)
    effects = spec.atip_effects()
    words = []
    if h["readOnlyHint"]:
        words.append("read-only")
    if effects.destructive is True:
        words.append("destructive")
    if h["idempotentHint"]:
        words.append("idempotent")
    if effects.network is True:
        words.append("network")
    elif effects.network is False:
        words.append("no-network")
    if not h["readOnlyHint"] and not isinstance(effects.destructive, bool):
        words.append("effects-unknown")
    if spec.human_in_the_loop:
        words.append("needs-human")
    if spec.dry_run:
        words.append("dry-run")
    if spec.paginated:
        words.append("paginated")
    if spec.deprecated:
        words.append("deprecated")
    return words


def compact_help(spec: CommandSpec) -> dict[str, Any]:
    """`--help-agent`: the command in as few tokens as it takes, nothing lost that a
    call needs (names, flags, types, required, defaults, choices)."""
    params = []
    for p in spec.signature.params:
        entry: dict[str, Any] = {"name": p.name}
        if p.kind == "option":
            entry["flag"] = p.flags[0] if len(p.flags) == 1 else list(p.flags)
        schema = p.json_schema()
        entry["type"] = _type_word(schema)
        if p.required:
            entry["required"] = True
        for key in ("default", "enum", "minimum", "maximum", "pattern"):
            if key in schema:
                entry[key] = schema[key]
        if p.stdin is not None:
            entry["stdin"] = True
        if p.help:
            entry["help"] = p.help
        params.append(entry)
    return {
        "command": spec.display_name,
        "description": spec.summary,
        "params": params,
        "hints": hint_words(spec),
    }


def _type_word(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return _type_word(schema["anyOf"][0]) + "?"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"{_type_word(schema.get('items', {}))}[]"
    return str(kind)


def app_compact_help(app: App) -> dict[str, Any]:
    return {
        "tool": app.name,
        "version": app.version,
        "description": app.description,
        "commands": [
            {"command": " ".join(s.path), "description": s.summary, "hints": hint_words(s)}
            for s in app.walk()
            if not s.hidden
        ],
        "next": f"{app.name} COMMAND --help-agent gives a command's parameters",
        "output": "--json gives {ok, result | error, meta} on stdout; exit 0 means ok",
    }


# The envelope -----------------------------------------------------------------------------


def envelope_parts() -> dict[str, dict[str, Any]]:
    """The schemas of the envelope's parts (PRD §8.6, §10.3), the one description of them
    that OpenAPI (as components) and MCP (inlined, as outputSchema) both use."""
    from atipkit.app.errors import Action, Applicability, ErrorCategory

    suggestion = {
        "type": "object",
        "required": ["action", "fix", "applicability"],
        "properties": {
            "action": {"type": "string", "enum": list(typing.get_args(Action))},
            "fix": {"type": "string"},
            "example": {"type": "string"},
            "applicability": {"type": "string", "enum": list(typing.get_args(Applicability))},
        },
        "additionalProperties": False,
    }
    return {
        "Meta": {
            "type": "object",
            "description": "About the call; more keys may come.",
            "required": ["tool", "version", "duration_ms", "warnings"],
            "properties": {
                "tool": {"type": "string", "description": "app.group.command"},
                "version": {"type": "string"},
                "duration_ms": {"type": "number", "minimum": 0},
                "warnings": {"type": "array", "items": {"type": "string"}},
                "replayed": {"type": "boolean", "description": "Answered from an idempotency key"},
                "dry_run": {"type": "boolean"},
                "pagination": {"type": "object"},
                "truncation": {"type": "object"},
            },
        },
        "Suggestion": suggestion,
        "Error": {
            "type": "object",
            "description": "A structured error: the same object `--json` prints.",
            "required": ["code", "category", "message", "is_retryable", "exit_code"],
            "properties": {
                "code": {"type": "string"},
                "category": {"type": "string", "enum": [c.value for c in ErrorCategory]},
                "message": {"type": "string"},
                "suggestion": suggestion,
                "is_retryable": {"type": "boolean"},
                "details": {"type": "object"},
                "exit_code": {"type": "integer", "minimum": 1},
            },
            "additionalProperties": False,
        },
        "DryRunPlan": {
            "type": "object",
            "description": "The result of a dry run: what the command would do.",
            "required": ["dry_run", "actions"],
            "properties": {
                "dry_run": {"const": True},
                "actions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["action"],
                        "properties": {
                            "action": {"type": "string"},
                            "target": {"type": "string"},
                            "details": {"type": "object"},
                        },
                    },
                },
                "result": {"description": "What the command returned while planning."},
            },
        },
    }


def success_schema(result: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["ok", "result", "meta"],
        "properties": {"ok": {"const": True}, "result": result, "meta": meta},
        "additionalProperties": False,
    }


def failure_schema(error: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """A failure's envelope; its `result`, when there is one, is what the command did
    before it failed, whatever its shape."""
    return {
        "type": "object",
        "required": ["ok", "error", "meta"],
        "properties": {
            "ok": {"const": False},
            "error": error,
            "result": {"description": "What was done before the failure."},
            "meta": meta,
        },
        "additionalProperties": False,
    }


def result_schema(spec: CommandSpec, plan: dict[str, Any]) -> dict[str, Any] | None:
    """What a successful call's `result` holds: the declared return type, or also a
    dry-run `plan` for commands that take `--dry-run`; None when nothing is declared."""
    declared = output_schema(spec.signature.returns)
    if declared is None or not spec.dry_run:
        return declared
    return {"anyOf": [declared, plan]}
