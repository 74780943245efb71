"""`App`: the commands of one tool, and the Click group that runs them.

    app = App("notes", version="1.0", description="Keep short notes")

    @app.command(annotations=ReadOnly | ClosedWorld)
    def show(name: str) -> dict:
        '''Show one note.'''
        ...

    if __name__ == "__main__":
        app()

Every command gets the global flags, the JSON envelope, structured errors and exit codes;
the app gets `--agent` (ATIP 0.6, with `--commands`/`--depth`), `--schema`,
`--help-agent`, `--version`, and the built-in groups `mcp`, `api` and `docs`.
Decorated functions stay plain functions: callable from Python as they were written.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from atipkit.app.annotations import Annotation, check
from atipkit.app.command import CommandSpec, CostHint, check_shadowing
from atipkit.app.errors import DefinitionError
from atipkit.errors import AtipError

if TYPE_CHECKING:
    from pathlib import Path

    from atipkit.app.config import Config
    from atipkit.app.contract import ContractReport
    from atipkit.app.errors import ToolError
    from atipkit.app.idempotency import IdempotencyStore
    from atipkit.app.prompts import PromptSpec
    from atipkit.app.resources import ResourceSpec
    from atipkit.model import Effects, Tool

__all__ = ["App", "Group"]

F = TypeVar("F", bound=Callable[..., Any])
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _valid_name(name: str) -> bool:
    """Letters, digits, `_`, `.`, `-`, starting with a letter or digit (ASCII)."""
    return name[:1] not in ("", "_", ".", "-") and set(name) <= _NAME_CHARS


BUILTINS = ("mcp", "api", "docs")
MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Input read from stdin, a file or a URL beyond this is refused: `App(max_input_bytes=...)`."""
_BUILTIN_HELP = {
    "mcp": "Serve or export the commands as MCP tools.",
    "api": "Serve the commands over HTTP, or export their OpenAPI.",
    "docs": "SKILL.md, llms.txt and a man page, from the commands themselves.",
}


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= max(limit, 20) else text[: max(limit, 20) - 3].rstrip() + "..."


class Group:
    """A namespace of commands (`tool pr create`): `app.group("pr")`."""

    def __init__(self, app: App, path: tuple[str, ...], help: str | None = None) -> None:
        self.app = app
        self.path = path
        self.help = help
        self._children: dict[str, CommandSpec | Group | _Lazy] = {}
        self._lazy: dict[str, _Lazy] = {}

    def command(
        self,
        name: str | None = None,
        *,
        annotations: Annotation = Annotation.NONE,
        cost_hint: CostHint | None = None,
        human_in_the_loop: bool = False,
        auth: Sequence[str] = (),
        examples: Sequence[dict[str, Any] | str] = (),
        error_codes: dict[str, str] | None = None,
        timeout: float | None = None,
        max_tokens: int | None = None,
        paginated: bool | int = False,
        dry_run: bool = False,
        hidden: bool = False,
        deprecated: bool = False,
        help: str | None = None,
        effects: Effects | Mapping[str, Any] | None = None,
        text: Callable[[Any], str] | None = None,
    ) -> Callable[[F], F]:
        """Make a function a command. The name defaults to the function's, with `_`
        spelled `-` and a trailing `_` dropped (`def list_` is `list`: a function named
        after a built-in type hides it from annotations). The function is returned
        unchanged.

        `effects` is an ATIP `Effects` or its JSON form (a mapping, read only when the
        effects are asked for: the model is not imported to start a command).
        `text` renders the result for people (`--text`, or `auto` on a terminal) when the
        built-in tables and `key: value` lines do not fit it; it returns the text."""

        def decorate(func: F) -> F:
            command_name = name or func.__name__.rstrip("_").replace("_", "-")
            path = (*self.path, command_name)
            where = " ".join((self.app.name, *path))
            check(annotations, where)
            check_shadowing(func, where, self.app.functions)
            if paginated is not False and not (
                paginated is True or (isinstance(paginated, int) and paginated > 0)
            ):
                raise DefinitionError(f"{where}: paginated is True or a page size above 0")
            if max_tokens is not None and max_tokens < 1:
                raise DefinitionError(f"{where}: max_tokens must be at least 1")
            spec = CommandSpec(
                app=self.app,
                path=path,
                func=func,
                annotations=annotations,
                cost_hint=cost_hint,
                human_in_the_loop=human_in_the_loop,
                auth=auth,
                examples=examples,
                error_codes=error_codes,
                timeout=timeout,
                max_tokens=max_tokens,
                paginated=paginated,
                dry_run=dry_run,
                hidden=hidden,
                deprecated=deprecated,
                help=help,
                effects=effects,
                text=text,
            )
            self._add(command_name, spec)
            self.app.functions.append(func)
            return func

        return decorate

    def group(self, name: str, *, help: str | None = None) -> Group:
        """A nested namespace: `app.group("pr").command()` defines `tool pr NAME`."""
        group = Group(self.app, (*self.path, name), help)
        self._add(name, group)
        return group

    def lazy(
        self, module: str, names: Sequence[str], *, summaries: Mapping[str, str] | None = None
    ) -> None:
        """Children `names`, defined by importing `module` when one of them is first
        asked for: a process runs one command, and need not import the modules of all the
        others. Their place among the children is this call's, whatever is imported first.

        `summaries` (name → the line `--help` lists it with) let the group's `--help`
        list these children without importing `module`; `app.check()` fails where one is
        not the child's own summary (the `help` check)."""
        unit = _Lazy(self, module, tuple(names), dict(summaries or {}))
        stray = sorted(set(unit.summaries) - set(unit.names))
        if stray:
            where = " ".join((self.app.name, *self.path, stray[0]))
            raise DefinitionError(f"{where}: a summary for a name {module} does not define")
        for name in names:
            self._add(name, unit)
            self._lazy[name] = unit

    @property
    def children(self) -> dict[str, CommandSpec | Group]:
        """Every child, in definition order; the modules of lazy ones are imported."""
        for unit in list(self._lazy.values()):
            unit.load()
        return self._children  # type: ignore[return-value]  # no _Lazy is left

    def listing(self) -> list[tuple[str, str]]:
        """`(name, summary)` of every child `--help` lists, in definition order: a
        hidden command is left out, a group gives its help. A lazy child whose summary
        its `lazy` call declared is listed without importing its module."""
        rows = []
        for name, entry in list(self._children.items()):
            if isinstance(entry, _Lazy) and name in entry.summaries:
                rows.append((name, entry.summaries[name]))
                continue
            child = self.child(name)
            if child is not None and (isinstance(child, Group) or not child.hidden):
                rows.append((name, _listed(child)))
        return rows

    def declared_summaries(self) -> Iterator[tuple[tuple[str, ...], str, str]]:
        """`(path, declared, own)` for each summary a `lazy` call declared below this
        group, with the child's own (its module imported): what `app.check()` compares.
        A hidden command's own is `""`: `--help` does not list it."""
        units = {id(u): u for u in self._lazy.values()}.values()
        for unit in units:
            for name, declared in unit.summaries.items():
                child = self.child(name)
                hidden = isinstance(child, CommandSpec) and child.hidden
                own = "" if child is None or hidden else _listed(child)
                yield (*self.path, name), declared, own
        for child in self.children.values():
            if isinstance(child, Group):
                yield from child.declared_summaries()

    def names(self) -> list[str]:
        """Every child's name, in definition order, importing nothing (a lazy module's
        names are those its `lazy` call declared)."""
        return list(self._children)

    def child(self, name: str) -> CommandSpec | Group | None:
        """One child, importing only the module that defines it (every lazy module for a
        name no `lazy` call declared: an undeclared command is found, though not quickly)."""
        unit = self._lazy.get(name)
        if unit is not None:
            unit.load()
        elif name not in self._children:
            return self.children.get(name)
        return self._children[name]  # type: ignore[return-value]  # load() checked it

    def _add(self, name: str, child: CommandSpec | Group | _Lazy) -> None:
        where = " ".join((self.app.name, *self.path, name))
        if not _valid_name(name):
            raise DefinitionError(f"{where}: a command name is letters, digits, '-', '_', '.'")
        if name in self._children and (
            isinstance(child, _Lazy) or not isinstance(self._children[name], _Lazy)
        ):
            raise DefinitionError(f"{where}: defined twice")
        if not self.path and name in self.app.builtins:
            raise DefinitionError(
                f"{where}: {name!r} is a built-in group of every app; pick another name or "
                "pass App(builtins=False)"
            )
        self._children[name] = child

    def walk(self) -> Iterator[CommandSpec]:
        """Every command below, depth first, in definition order."""
        for child in self.children.values():
            if isinstance(child, Group):
                yield from child.walk()
            else:
                yield child

    @functools.cached_property
    def click_group(self) -> click.Group:
        return _ClickGroup(
            self,
            name=self.path[-1] if self.path else self.app.name,
            help=self.help,
            context_settings={"help_option_names": ["-h", "--help"]},
        )


def _listed(child: CommandSpec | Group) -> str:
    """The line a group's `--help` lists a child with: a command's summary, a group's help."""
    if isinstance(child, Group):
        return child.help or ""
    return child.summary


class _Lazy:
    """Children whose module is not imported yet (`Group.lazy`), holding their places."""

    def __init__(
        self, group: Group, module: str, names: tuple[str, ...], summaries: dict[str, str]
    ) -> None:
        self.group = group
        self.module = module
        self.names = names
        self.summaries = summaries
        self.loaded = False

    def load(self) -> None:
        """Import the module (once); its definitions take this placeholder's places."""
        if self.loaded:
            return
        self.loaded = True  # before importing: a module that walks the app finds it loaded
        try:
            importlib.import_module(self.module)
        except BaseException:
            self.loaded = False  # a failed import is tried again, as Python's own is
            raise
        missing = [n for n in self.names if self.group._children.get(n) is self]
        if missing:
            where = " ".join((self.group.app.name, *self.group.path, missing[0]))
            raise DefinitionError(f"{where}: not defined by {self.module}")


class App(Group):
    """An agent-native command-line tool."""

    def __init__(
        self,
        name: str,
        version: str,
        description: str = "",
        *,
        homepage: str | None = None,
        env_prefix: str | None = None,
        max_input_bytes: int = MAX_INPUT_BYTES,
        builtins: bool | Sequence[str] = True,
        config: bool = True,
        policy: str = "standard",
        default_output: str = "auto",
        permissions: Mapping[str, str | Sequence[str]] | None = None,
        mcp_transport: str = "stdio",
    ) -> None:
        """`default_output` is the output mode of a call that names none (`--output`
        still wins); `permissions` the scopes the app needs, as the app states them
        (`{"fs": "read"}`: shown to agents in `--agent`, SKILL.md and OpenAPI, never
        enforced); `mcp_transport` what `mcp serve` and `atip app serve` use unless told
        (stdio or http)."""
        from atipkit.app.flags import OUTPUT_MODES

        if not _valid_name(name):
            raise DefinitionError(f"App name {name!r}: letters, digits, '-', '_', '.'")
        if default_output not in OUTPUT_MODES:
            raise DefinitionError(
                f"App {name!r}: default_output is one of {', '.join(OUTPUT_MODES)}, "
                f"not {default_output!r}"
            )
        if mcp_transport not in MCP_TRANSPORTS:
            raise DefinitionError(
                f"App {name!r}: mcp_transport is 'stdio' or 'http' (streamable HTTP, which "
                f"replaced MCP's SSE transport), not {mcp_transport!r}"
            )
        self.default_output = default_output
        self.permissions = _permissions(name, permissions or {})
        self.mcp_transport = mcp_transport
        self.name = name
        self.version = version
        self.description = description
        self.homepage = homepage
        self.env_prefix = env_prefix or re.sub(r"[^A-Za-z0-9]", "_", name).upper()
        self.max_input_bytes = max_input_bytes
        chosen = BUILTINS if builtins is True else () if builtins is False else tuple(builtins)
        unknown = sorted(set(chosen) - set(BUILTINS))
        if unknown:
            raise DefinitionError(f"App {name!r}: no built-in group {', '.join(unknown)}")
        self.builtins: tuple[str, ...] = chosen
        """The built-in groups this app has (`mcp`, `api`, `docs`; all by default)."""
        self.config_enabled = config
        from atipkit.app.safety import check_mode

        self.policy = check_mode(policy, f"App {name!r}")
        """The safety policy (`off`, `standard`, `strict`; `atipkit.app.safety`)."""
        self.functions: list[Callable[..., Any]] = []
        """The functions of the commands defined so far (`check_shadowing` reads them)."""
        self.resources: dict[str, ResourceSpec] = {}
        """`@app.resource`s by URI (or URI template), in definition order."""
        self.prompts: dict[str, PromptSpec] = {}
        """`@app.prompt`s by name, in definition order."""
        super().__init__(self, (), description)

    # Resources and prompts (MCP) ---------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
    ) -> Callable[[F], F]:
        """Make a read-only function an MCP resource at `uri`; `{variables}` in it make
        it a template whose variables are the function's parameters
        (`atipkit.app.resources`). The function is returned unchanged."""

        def decorate(func: F) -> F:
            from atipkit.app.resources import ResourceSpec

            spec = ResourceSpec(
                self,
                uri,
                func,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
            )
            check_shadowing(func, spec.where, self.functions)
            if uri in self.resources:
                raise DefinitionError(f"{spec.where}: defined twice")
            self.resources[uri] = spec
            self.functions.append(func)
            return func

        return decorate

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
    ) -> Callable[[F], F]:
        """Make a function an MCP prompt: its parameters are the arguments, what it
        returns the messages (`atipkit.app.prompts`). The name defaults to the
        function's. The function is returned unchanged."""

        def decorate(func: F) -> F:
            from atipkit.app.prompts import PromptSpec

            prompt_name = name or func.__name__.rstrip("_")
            spec = PromptSpec(self, prompt_name, func, title=title, description=description)
            if not _valid_name(prompt_name):
                raise DefinitionError(f"{spec.where}: a name is letters, digits, '-', '_', '.'")
            check_shadowing(func, spec.where, self.functions)
            if prompt_name in self.prompts:
                raise DefinitionError(f"{spec.where}: defined twice")
            self.prompts[prompt_name] = spec
            self.functions.append(func)
            return func

        return decorate

    # Running ----------------------------------------------------------------------------

    def __call__(self, args: Sequence[str] | None = None) -> NoReturn:
        sys.exit(self.main(args))

    def main(self, args: Sequence[str] | None = None, *, prog_name: str | None = None) -> int:
        """Run the command line `args` (default: `sys.argv[1:]`); the exit status."""
        return self.click_group.main(
            args=list(sys.argv[1:] if args is None else args),
            prog_name=prog_name or self.name,
            standalone_mode=False,
        )

    def command_at(self, path: Sequence[str]) -> CommandSpec:
        node: CommandSpec | Group | None = self
        for word in path:
            node = node.child(word) if isinstance(node, Group) else None
            if node is None:
                raise KeyError(" ".join(path))
        if not isinstance(node, CommandSpec):
            raise KeyError(" ".join(path))
        return node

    def bare_meta(self, tool: str) -> dict[str, Any]:
        """`meta` for a failure before any command ran."""
        return {"tool": tool, "version": self.version, "duration_ms": 0, "warnings": []}

    # Describing -------------------------------------------------------------------------

    def tool(self, *, commands: Sequence[str] | None = None, depth: int | None = None) -> Tool:
        """The ATIP 0.6 document of this app (what `--agent` prints)."""
        from atipkit.app.agent import tool_of

        return tool_of(self, commands=commands, depth=depth)

    # State and configuration ------------------------------------------------------------

    def idempotency_store(self) -> IdempotencyStore:
        from atipkit.app.idempotency import IdempotencyStore, state_dir

        return IdempotencyStore(state_dir(self.name) / "idempotency")

    @functools.cached_property
    def config(self) -> Config:
        from atipkit.app.config import Config, load

        return load(self) if self.config_enabled else Config()

    def check(
        self,
        *,
        snapshot: str | Path | None = None,
        update: bool = False,
    ) -> ContractReport:
        """The built-in contract tests (`atipkit.app.contract`): docstrings, `--agent`,
        schemas, examples, help, the envelope, and with `snapshot` the version."""
        from atipkit.app.contract import check

        return check(self, snapshot=snapshot, update=update)

    def check_config(self, spec: CommandSpec) -> None:
        if self.config_enabled:
            self.config.check(spec)


MCP_TRANSPORTS = ("stdio", "http")


def _permissions(app: str, given: Mapping[str, str | Sequence[str]]) -> dict[str, str | list[str]]:
    """`App(permissions=...)` checked: scope names to a level or a list of them."""
    out: dict[str, str | list[str]] = {}
    for scope, level in given.items():
        if isinstance(scope, str) and scope and isinstance(level, str):
            out[scope] = level
        elif isinstance(scope, str) and scope and _strings(level):
            out[scope] = list(level)
        else:
            raise DefinitionError(
                f"App {app!r}: permissions map a scope name to a string or a list of "
                f'strings ({{"fs": "read"}}), not {scope!r}: {level!r}'
            )
    return out


def _strings(value: object) -> bool:
    return isinstance(value, Sequence) and all(isinstance(x, str) for x in value)


class UnknownCommand(AtipError, click.UsageError):
    """A command name its group does not have, and the names close to it (as Click's
    `NoSuchCommand` of 8.4 and later, which this replaces for atipkit's groups)."""

    def __init__(self, name: str, known: Sequence[str], ctx: click.Context) -> None:
        import difflib

        super().__init__(f"No such command {name!r}.", ctx)
        self.command_name = name
        self.possibilities = difflib.get_close_matches(name, known, n=3)

    def format_message(self) -> str:
        if not self.possibilities:
            return self.message
        return f"{self.message} Did you mean {' or '.join(map(repr, self.possibilities))}?"


class _ClickGroup(click.Group):
    """Click's view of a `Group`: children built when first asked for."""

    def __init__(self, node: Group, **kwargs: Any) -> None:
        from atipkit.app import root

        is_root = not node.path
        params = root.root_options(node.app) if is_root else []
        super().__init__(
            params=params,
            invoke_without_command=is_root,
            callback=functools.partial(root.root_callback, node.app) if is_root else None,
            **kwargs,
        )
        self.node = node

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The names, without importing every command's module (completing `atip sc`
        builds only the commands whose names start with `sc`)."""
        names = self.node.names()
        if not self.node.path:
            names += list(self.node.app.builtins)
        return names

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if not self.node.path and cmd_name in self.node.app.builtins:
            # first: no command may take a built-in's name (`Group._add`), and asking the
            # children for one no `lazy` call declared would import every command module
            from atipkit.app import builtins

            return builtins.group(self.node.app, cmd_name)
        child = self.node.child(cmd_name)
        if isinstance(child, CommandSpec):
            return child.click_command
        if isinstance(child, Group):
            return child.click_group
        return None

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Click's, but a name that is no command says which ones come near it (Click's
        own suggestions read `self.commands`, which a group built lazily leaves empty)."""
        name = args[0]
        if (
            not ctx.resilient_parsing
            and name[:1].isalnum()  # not an option: Click parses those again itself
            and self.get_command(ctx, name) is None
        ):
            known = [n for n, c in self.node.children.items() if not getattr(c, "hidden", False)]
            if not self.node.path:
                known += list(self.node.app.builtins)
            raise UnknownCommand(name, known, ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the definitions, without building each command (Click
        would, to ask it for its short help), nor importing a module whose commands'
        summaries were declared (`Group.lazy`)."""
        rows = self.node.listing()
        if not self.node.path:
            rows += [(name, _BUILTIN_HELP[name]) for name in self.node.app.builtins]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(n, _shorten(t, limit)) for n, t in rows])

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        app = self.node.app
        if parent is None:
            extra.setdefault("auto_envvar_prefix", app.env_prefix)
            if app.config_enabled:
                extra.setdefault("default_map", app.config.default_map())
        return super().make_context(info_name, args, parent=parent, **extra)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's main, with every usage error reported as the output mode asks."""
        from atipkit.app.errors import ToolError

        app = self.node.app
        argv = list(sys.argv[1:] if args is None else args)
        started = time.perf_counter()
        try:
            if app.config_enabled:
                app.config.load_dotenv()
            code = super().main(
                argv, prog_name or app.name, complete_var, standalone_mode=False, **extra
            )
        except click.ClickException as exc:
            code = _report(app, argv, usage=exc)
        except ToolError as exc:  # a configuration file that cannot be used
            code = _report(app, argv, error=exc)
        except click.Abort:
            sys.stderr.write("aborted\n")
            code = 130
        except BrokenPipeError:  # `tool ... | head`: the reader left; so do we, quietly
            _silence_stdout()
            code = 1
        code = 0 if code is None else int(code)
        if os.environ.get(f"{app.env_prefix}_RECORD"):  # the evaluation harness
            from atipkit.app.evaluation import record_call

            record_call(app, argv, code, started)
        if standalone_mode:
            sys.exit(code)
        return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush does not complain."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _report(
    app: App,
    argv: list[str],
    *,
    usage: click.ClickException | None = None,
    error: ToolError | None = None,
) -> int:
    """A failure before any command ran, in the output mode the arguments asked for."""
    from atipkit.app.dispatch import usage_error
    from atipkit.app.output import render_error, resolve

    if usage is not None:
        error = usage_error(usage)
    assert error is not None
    ctx = getattr(usage, "ctx", None)
    words = ctx.command_path.split()[1:] if ctx is not None else []
    tool = ".".join((app.name, *words))
    if os.environ.get(f"{app.env_prefix}_RECORD"):
        from atipkit.app.evaluation import note

        note(tool, error)
    isatty = bool(sys.stdout is not None and sys.stdout.isatty())
    from atipkit.app.flags import output_from_argv

    mode = resolve(output_from_argv(argv, app.default_output), isatty=isatty, print0=False)
    render_error(mode, error, app.bare_meta(tool), sys.stdout, sys.stderr)
    if mode not in ("json", "jsonl") and ctx is not None:
        sys.stderr.write(f"{ctx.get_usage()}\nTry '{ctx.command_path} --help' for help.\n")
    return error.exit_code
