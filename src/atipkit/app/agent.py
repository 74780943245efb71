"""An app's ATIP 0.6 document: what `tool --agent` prints.

Built from the same `Param`s the parser uses, so it cannot drift from the real flags.
The global flags every command has are the document's `globalOptions`; effects come
from each command's annotations (and `effects=`); what ATIP has no field for (human in
the loop, auth scopes, error codes, token budgets, pagination, dry-run; the app's
`permissions`) is kept under `x-atipkit`, which agents that do not know it ignore (RFC 0.6 §12.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from atipkit.app.flags import PREFIX, global_flags

if TYPE_CHECKING:
    import click

    from atipkit.app.app import App, Group
    from atipkit.app.command import CommandSpec
    from atipkit.model import Command, Option, Tool

__all__ = ["tool_of"]


def tool_of(app: App, *, commands: Sequence[str] | None = None, depth: int | None = None) -> Tool:
    from atipkit.model import UNSET, AtipVersion, Tool, Trust
    from atipkit.partial import select
    from atipkit.protocol import PROTOCOL_VERSION

    tree = _commands(app)
    features = ["partial-discovery", "trust-v1"]
    if any(c.effects and c.effects.interactive for c in _all(tree)):
        features.append("interactive-effects")
    tool = Tool(
        atip=AtipVersion(version=PROTOCOL_VERSION, features=sorted(features)),
        name=app.name,
        version=app.version,
        description=app.description or app.name,
        homepage=app.homepage or UNSET,
        trust=Trust(source="native", verified=False),
        global_options=_global_options(app),
        commands=tree,
        extensions={"x-atipkit": {"permissions": app.permissions}} if app.permissions else {},
    )
    if commands or depth is not None:
        return select(tool, commands=commands, depth=depth)
    return tool


def _commands(group: Group) -> dict[str, Command]:
    from atipkit.app.app import Group
    from atipkit.model import Command

    out: dict[str, Command] = {}
    for name, child in group.children.items():
        if isinstance(child, Group):
            out[name] = Command(description=child.help or name, commands=_commands(child))
        else:
            out[name] = child.atip_command()
    return out


def _all(tree: dict[str, Command]) -> list[Command]:
    out: list[Command] = []
    stack = list(tree.values())
    while stack:
        command = stack.pop()
        out.append(command)
        stack.extend(command.commands.values())
    return out


def _global_options(app: App) -> list[Option]:
    """The flags every command has, as ATIP options. `--json` and the other aliases of
    `--output` are left out: they are its values, and its description names them."""
    flags = global_flags(timeout=None, envvar=app.env_prefix)
    return [atip_option(f) for f in flags if not (f.name == PREFIX + "output" and f.is_flag)]


def offered_options(spec: CommandSpec) -> list[Option]:
    """The framework's flags this command takes beyond every command's (`--dry-run`,
    `--yes`, `--limit`, ...), as ATIP options of the command: `globalOptions` holds only
    what every command takes, so `--agent` offers what `--help` does, no more."""
    common = {flag.name for flag in global_flags(timeout=None, envvar=spec.app.env_prefix)}
    flags = global_flags(spec.offered, timeout=spec.timeout, envvar=spec.app.env_prefix)
    return [atip_option(flag) for flag in flags if flag.name not in common]


def atip_option(flag: click.Option) -> Option:
    """One framework flag as an ATIP option, named by its Python name (as command options
    and served flags are)."""
    from atipkit.model import UNSET, Option

    dest = (flag.name or "")[len(PREFIX) :]
    is_bool = flag.is_flag and not flag.count
    choices = getattr(flag.type, "choices", None)
    atip_type = "boolean" if is_bool else "integer" if flag.count else "string"
    if choices:
        atip_type = "enum"
    elif type(flag.type).__name__ in ("FloatRange", "FloatParamType"):
        atip_type = "number"
    elif type(flag.type).__name__ in ("IntRange", "IntParamType"):
        atip_type = "integer"
    default = flag.default if isinstance(flag.default, str) else UNSET
    return Option(
        name=dest,
        flags=list(flag.opts),
        type=atip_type,  # type: ignore[arg-type]  # from the type table
        description=flag.help or UNSET,
        enum=[str(c) for c in choices] if choices else UNSET,
        default=default,
        env_var=flag.envvar if isinstance(flag.envvar, str) else UNSET,
    )
