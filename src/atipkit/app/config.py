"""Configuration, in the precedence of PRD §8.5 (highest first):

1. flags on the command line;
2. environment variables: `PREFIX_OUTPUT`, `PREFIX_TIMEOUT`, ... for the global flags
   and `PREFIX_COMMAND_OPTION` for a command's options (Click's automatic names);
3. a `.env` file in the project root (only its `PREFIX_*` lines, never overriding the
   environment);
4. the project's file: `.NAME.toml`, `.NAME.yaml` or `[tool.NAME]` in `pyproject.toml`;
5. the user's file: `$XDG_CONFIG_HOME/NAME/config.toml` (or `.yaml`);
6. the system's file: `/etc/NAME/config.toml` (or `.yaml`; `PREFIX_SYSTEM_CONFIG` names
   another directory);
7. the defaults in the code.

The project root is the nearest directory, from the working directory up, that holds a
`.git`, a `pyproject.toml` or the project file. A file holds global settings at its top
level and each command's parameters under `commands`:

    output = "json"
    timeout = 30
    [commands.find-files]
    max_depth = 5
    [commands."pr create"]
    draft = true

A key the app does not know is an error naming the file and the key (exit 2), checked
for the globals and for the command being run: a typo must not be silently ignored.
YAML files need `pyyaml`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from atipkit.app.errors import InputError
from atipkit.app.flags import PREFIX
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.app.app import App, Group
    from atipkit.app.command import CommandSpec

__all__ = ["GLOBAL_KEYS", "Config", "load"]

GLOBAL_KEYS = frozenset(
    {
        "output",
        "quiet",
        "verbose",
        "timeout",
        "response_format",
        "no_input",
        "no_color",
        "max_items",
        "max_bytes",
    }
)
"""Global flags a file may set. Not `yes`, `dry_run`, `idempotency_key` or a cursor:
those are decisions about one call, never standing settings."""


class Layer(NamedTuple):
    source: str
    globals: dict[str, Any]
    commands: dict[str, dict[str, Any]]


class Config:
    """The configuration files' settings, lowest precedence first, and the `.env` file's
    `PREFIX_*` values."""

    def __init__(
        self,
        layers: list[Layer] | None = None,
        dotenv: dict[str, str] | None = None,
        dotenv_source: str | None = None,
        group: Group | None = None,
    ) -> None:
        self.layers = layers or []
        self.dotenv = dotenv or {}
        self.dotenv_source = dotenv_source
        self._group = group

    def load_dotenv(self) -> None:
        """Put the `.env` file's `PREFIX_*` values into the environment, under what is
        already there (so the environment wins, as §8.5 orders)."""
        for key, value in self.dotenv.items():
            os.environ.setdefault(key, value)

    def _globals(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for layer in self.layers:
            out.update(layer.globals)
        return out

    def _command(self, path: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for layer in self.layers:
            out.update(layer.commands.get(path, {}))
        return out

    def default_map(self) -> dict[str, Any] | None:
        """Click's `default_map` for the whole app (None when no file says anything)."""
        if not self.layers:
            return None
        from atipkit.app.app import Group

        shared = {PREFIX + k: v for k, v in self._globals().items()}

        def build(group: Group) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name, child in group.children.items():
                if isinstance(child, Group):
                    out[name] = build(child)
                else:
                    out[name] = {**shared, **self._command(" ".join(child.path))}
            return out

        assert self._group is not None
        return build(self._group)

    def check(self, spec: CommandSpec) -> None:
        """Refuse keys the app does not know: globals, and the command's own."""
        names = {p.name for p in spec.signature.params}
        key = " ".join(spec.path)
        for layer in self.layers:
            for name in layer.globals:
                if name not in GLOBAL_KEYS:
                    raise _unknown(layer.source, name, sorted(GLOBAL_KEYS))
            for name in layer.commands.get(key, {}):
                if name not in names:
                    raise _unknown(layer.source, f"commands.{key}.{name}", sorted(names))

    def resolved(self, spec: CommandSpec) -> dict[str, Any]:
        """What the files set for this command: `{key: {"value", "source"}}`."""
        out: dict[str, Any] = {}
        key = " ".join(spec.path)
        for layer in self.layers:
            for name, value in layer.globals.items():
                out[name] = {"value": value, "source": layer.source}
            for name, value in layer.commands.get(key, {}).items():
                out[name] = {"value": value, "source": layer.source}
        return out


def _unknown(source: str, key: str, known: list[str]) -> InputError:
    return InputError(
        f"{source}: unknown configuration key {key!r}",
        code=ErrorCode.BAD_CONFIG,
        suggestion=f"Known keys: {', '.join(known)}" if known else None,
        details={"file": source, "key": key},
    )


def _bad(source: str, message: str) -> InputError:
    return InputError(f"{source}: {message}", code=ErrorCode.BAD_CONFIG, details={"file": source})


def project_root(app_name: str, start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    markers = (".git", "pyproject.toml", f".{app_name}.toml", f".{app_name}.yaml")
    for directory in (here, *here.parents):
        if any((directory / m).exists() for m in markers):
            return directory
    return here


def _read(path: Path, table: str | None = None) -> dict[str, Any] | None:
    """The mapping in a TOML or YAML file; None when there is no such file, or when a
    `table` is asked for (`[tool.NAME]` in pyproject.toml) and the text cannot hold it,
    which spares parsing every project's pyproject.toml on every call."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _bad(str(path), f"cannot read: {exc.strerror}") from None
    if table is not None and table.encode() not in raw:
        return None
    if path.suffix == ".toml":
        import tomllib

        try:
            data: Any = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise _bad(str(path), f"not valid TOML: {exc}") from None
    else:
        try:
            import yaml
        except ImportError:
            raise _bad(str(path), "YAML configuration needs pyyaml: pip install pyyaml") from None
        try:
            data = yaml.safe_load(raw) or {}
        except yaml.YAMLError as exc:
            raise _bad(str(path), f"not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise _bad(str(path), "expected a mapping of settings at the top")
    return data


def _layer(source: str, data: dict[str, Any]) -> Layer:
    data = dict(data)
    commands = data.pop("commands", {})
    if not isinstance(commands, dict) or not all(isinstance(v, dict) for v in commands.values()):
        raise _bad(source, "'commands' must map command names to tables of parameters")
    globals_ = {k.replace("-", "_"): v for k, v in data.items()}
    return Layer(source, globals_, {str(k): dict(v) for k, v in commands.items()})


def _files(app: App, root: Path) -> Iterator[tuple[Path, str | None]]:
    """Candidate files, lowest precedence first; the second item names a table inside."""
    system = os.environ.get(f"{app.env_prefix}_SYSTEM_CONFIG") or f"/etc/{app.name}"
    for suffix in (".toml", ".yaml"):
        yield Path(system) / f"config{suffix}", None
    xdg = os.environ.get("XDG_CONFIG_HOME")
    user = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    for suffix in (".toml", ".yaml"):
        yield user / app.name / f"config{suffix}", None
    yield root / "pyproject.toml", app.name
    for suffix in (".toml", ".yaml"):
        yield root / f".{app.name}{suffix}", None


def load(app: App) -> Config:
    root = project_root(app.name)
    layers: list[Layer] = []
    for path, table in _files(app, root):
        data = _read(path, table)
        if data is None:
            continue
        if table is not None:
            data = data.get("tool", {}).get(table)
            if data is None:
                continue
            if not isinstance(data, dict):
                raise _bad(str(path), f"[tool.{table}] must be a table")
        layers.append(_layer(str(path), data))
    dotenv = root / ".env"
    if not dotenv.is_file():
        return Config(layers, group=app)
    return Config(layers, _dotenv(dotenv, f"{app.env_prefix}_"), str(dotenv), group=app)


def _dotenv(path: Path, prefix: str) -> dict[str, str]:
    """`KEY=VALUE` lines (optionally `export KEY=...`, quoted values, `#` comments) whose
    key starts with `prefix`."""
    out: dict[str, str] = {}
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(str(path), f"cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key:
            raise _bad(str(path), f"line {number}: expected KEY=VALUE")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if key.startswith(prefix):
            out[key] = value
    return out
