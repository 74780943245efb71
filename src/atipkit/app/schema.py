"""Schemas of an app's commands (PRD §9): `--schema`, `--help-agent`, MCP and OpenAPI
all read them from here.

A command's schema document holds its input schema (JSON Schema 2020-12, every `$ref`
inlined), its output schema when the return annotation says something, its MCP-style
hints and ATIP effects, the environment variables that set its options, and the values
the configuration files give it now.
"""

from __future__ import annotations

import collections.abc
import inspect
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
    "hints",
    "output_schema",
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
    from atipkit.app.shapes import _is_pydantic, _path_schema_hook, inline_refs

    if returns is inspect.Signature.empty or returns is None or returns is type(None):
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
        f"{app.env_prefix}_NO_INPUT": "no_input",
        "NO_COLOR": "no_color",
    }
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


def _hint_words(spec: CommandSpec) -> list[str]:
    """What the command declares, in words; what it leaves unknown is said once."""
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
        "hints": _hint_words(spec),
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
            {"command": " ".join(s.path), "description": s.summary, "hints": _hint_words(s)}
            for s in app.walk()
            if not s.hidden
        ],
        "next": f"{app.name} COMMAND --help-agent gives a command's parameters",
        "output": "--json gives {ok, result | error, meta} on stdout; exit 0 means ok",
    }
