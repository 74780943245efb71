"""A command: one decorated function and what its decorator said about it.

Defining a command costs almost nothing: the signature is read, checked and turned into
a Click command the first time something needs it (the command is run, or `--help`,
`--agent` or a schema asks), so an app with many commands starts as fast as one with a
few (PRD §15.1).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import click

from atipkit.app.annotations import Annotation
from atipkit.app.docstrings import Docstring, parse

if TYPE_CHECKING:
    from atipkit.app.app import App
    from atipkit.app.flags import Offered
    from atipkit.app.params import CommandSignature
    from atipkit.model import Command, Effects

__all__ = ["CommandSpec", "check_shadowing"]

CostHint = Literal["low", "medium", "high"]


class CommandSpec:
    """A command as defined: its function and its decorator's options. (A plain class: a
    dataclass costs a millisecond to create, on every process's path.)"""

    def __init__(
        self,
        app: App,
        path: tuple[str, ...],
        func: Callable[..., Any],
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
    ) -> None:
        self.app = app
        self.path = path
        self.func = func
        self.annotations = annotations
        self.cost_hint = cost_hint
        self.human_in_the_loop = human_in_the_loop
        self.auth = tuple(auth)
        self.examples = tuple(examples)
        self.error_codes = dict(error_codes or {})
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.paginated = paginated
        self.dry_run = dry_run
        self.hidden = hidden
        self.deprecated = deprecated
        self.help = help
        self.effects = effects
        """Full ATIP effects, merged over what the annotations say (they win): an
        `Effects`, or its JSON form, which costs no import until the effects are read
        (`atip_effects`)."""
        self.text = text
        """The command's own rendering of its result for people (text mode)."""

    def __repr__(self) -> str:
        return f"<CommandSpec {self.display_name}>"

    @property
    def name(self) -> str:
        return self.path[-1]

    @property
    def tool_name(self) -> str:
        """`app.group.command`, the envelope's `meta.tool`."""
        return ".".join((self.app.name, *self.path))

    @property
    def display_name(self) -> str:
        return " ".join((self.app.name, *self.path))

    @property
    def page_size(self) -> int | None:
        """The default page size (`paginated=50`), or None for 'all'."""
        if isinstance(self.paginated, bool):
            return None
        return self.paginated

    @functools.cached_property
    def doc(self) -> Docstring:
        return parse(self.func.__doc__)

    @property
    def summary(self) -> str:
        if self.help:
            return " ".join(self.help.split("\n\n", 1)[0].split())
        return self.doc.summary

    @property
    def description(self) -> str:
        return self.help or self.doc.description

    @functools.cached_property
    def signature(self) -> CommandSignature:
        """The parameters, read and checked (raises `DefinitionError`)."""
        from atipkit.app.errors import DefinitionError
        from atipkit.app.flags import reserved_flags
        from atipkit.app.params import analyze

        signature = analyze(self.func, where=self.display_name, doc=self.doc)
        reserved = reserved_flags(paginated=bool(self.paginated), null=self.reads_lists(signature))
        for param in signature.params:
            clash = sorted(set(param.flags + param.secondary) & reserved)
            if clash:
                raise DefinitionError(
                    f"{self.display_name}: parameter {param.name!r} uses {', '.join(clash)}, "
                    "which every command has already (a global flag); pick another flag "
                    f"with Option(...)"
                )
        seen: dict[str, str] = {}
        for param in signature.params:
            for flag in param.flags + param.secondary:
                if flag in seen:
                    raise DefinitionError(
                        f"{self.display_name}: {flag} is used by both {seen[flag]!r} and "
                        f"{param.name!r}"
                    )
                seen[flag] = param.name
        return signature

    @staticmethod
    def reads_lists(signature: CommandSignature) -> bool:
        return any(p.stdin is not None and p.stdin.want == "lines" for p in signature.params)

    @functools.cached_property
    def offered(self) -> Offered:
        """The framework's flags that mean something for this command, from what it
        declares: `--dry-run` if it plans; `--idempotency-key` unless it is declared
        idempotent (or read-only); `--yes`/`--no-input` unless it is declared never to
        ask (`interactive.prompts: false`), and always for human in the loop; paging
        and `--null` as before; `--fields`/`--filter` where the result may be a list of
        records and the command has no such flag of its own. What is left unknown gets
        the flag: an undeclared command may do anything."""
        from atipkit.app.annotations import Idempotent, ReadOnly
        from atipkit.app.flags import Offered

        # Read without building the effects (that imports the model, which a call that
        # only parses its flags does not need); annotations win where they speak.
        effects = self.effects
        if isinstance(effects, Mapping):  # the JSON form
            idempotent = effects.get("idempotent") is True
            never_asks = (effects.get("interactive") or {}).get("prompts") is False
        else:
            idempotent = getattr(effects, "idempotent", None) is True
            never_asks = getattr(getattr(effects, "interactive", None), "prompts", None) is False
        idempotent = idempotent or bool(self.annotations & (ReadOnly | Idempotent))
        from atipkit.app.flags import SELECT_FLAGS

        own = {f for p in self.signature.params for f in (*p.flags, *p.secondary)}
        return Offered(
            dry_run=self.dry_run,
            idempotency_key=not idempotent,
            prompts=self.human_in_the_loop or not never_asks,
            paginated=bool(self.paginated),
            null=self.reads_lists(self.signature),
            select=_returns_records(self.signature.returns) and not own & SELECT_FLAGS,
        )

    # ATIP -------------------------------------------------------------------------------

    def atip_effects(self) -> Effects:
        from atipkit.app.annotations import effects_of
        from atipkit.model import (
            UNSET,
            Cost,
            Duration,
            Interactive,
        )

        effects = effects_of(self.annotations)
        declared = self.effects
        if isinstance(declared, Mapping):
            import msgspec

            from atipkit.model import Effects

            declared = msgspec.convert(declared, Effects)
        if declared is not None:
            effects = _overlay(declared, effects)
        interactive = Interactive(
            stdin="optional" if any(p.stdin for p in self.signature.params) else "none",
            prompts=bool(self.human_in_the_loop) or UNSET,
            tty=False,
        )
        if effects.interactive:
            interactive = effects.interactive
        cost = Cost(estimate=self.cost_hint) if self.cost_hint else effects.cost
        duration = effects.duration
        if self.timeout is not None and not duration:
            duration = Duration(timeout=_seconds(self.timeout))
        import msgspec

        return msgspec.structs.replace(
            effects, interactive=interactive, cost=cost or UNSET, duration=duration
        )

    def atip_command(self) -> Command:
        import shlex

        from atipkit.app.agent import offered_options
        from atipkit.model import Command

        sig = self.signature
        examples = []
        for example in self.examples:
            if isinstance(example, str):
                examples.append(example)
            else:
                words = [*self.app.name.split(), *self.path, *example.get("args", [])]
                examples.append(shlex.join(words))
        extension = self.extension()
        return Command(
            description=self.summary or self.name,
            arguments=[p.atip() for p in sig.params if p.kind == "argument"],
            options=[
                *(p.atip() for p in sig.params if p.kind == "option"),
                *offered_options(self),
            ],
            effects=self.atip_effects(),
            examples=examples,
            deprecated=self.deprecated,
            hidden=self.hidden,
            extensions={"x-atipkit": extension} if extension else {},
        )

    def extension(self) -> dict[str, Any]:
        """What the framework knows that ATIP has no field for (`x-atipkit`)."""
        out: dict[str, Any] = {}
        if self.human_in_the_loop:
            out["humanInTheLoop"] = True
        if self.auth:
            out["auth"] = list(self.auth)
        if self.error_codes:
            out["errorCodes"] = dict(self.error_codes)
        if self.max_tokens is not None:
            out["maxTokens"] = self.max_tokens
        if self.paginated:
            out["paginated"] = True
        if self.dry_run:
            out["dryRun"] = True
        return out

    # Click ------------------------------------------------------------------------------

    @functools.cached_property
    def click_command(self) -> click.Command:
        from atipkit.app import cli
        from atipkit.app.flags import global_flags

        sig = self.signature
        params: list[click.Parameter] = [p.click_param() for p in sig.params]
        params += global_flags(
            self.offered,
            timeout=self.timeout,
            envvar=self.app.env_prefix,
            output=self.app.default_output,
        )
        params += cli.action_options(self)
        return cli.AppCommand(
            self,
            name=self.name,
            params=params,
            callback=cli.callback(self),
            help=self.description or None,
            short_help=self.summary or None,
            hidden=self.hidden,
            deprecated=self.deprecated,
            context_settings={"help_option_names": ["-h", "--help"]},
        )


def _returns_records(returns: Any) -> bool:
    """Whether a command whose function is annotated to return `returns` may return a
    list of records, so `--fields` and `--filter` mean something: a list, tuple or
    iterator of anything but scalars, or no annotation at all (what is left unknown
    gets the flags). Reads the annotation alone: importing msgspec to build a schema
    would cost every call of every command."""
    import collections.abc
    import typing

    from atipkit.app.params import MISSING

    if returns is MISSING or returns is typing.Any:
        return True
    origin = typing.get_origin(returns)
    if origin not in (
        list,
        tuple,
        collections.abc.Iterator,
        collections.abc.Iterable,
        collections.abc.Generator,
        collections.abc.Sequence,
    ):
        return False
    args = [a for a in typing.get_args(returns) if a is not Ellipsis]
    return not args or not (
        isinstance(args[0], type) and issubclass(args[0], (str, int, float, bool, bytes))
    )


_NAME_IN_HINT = r"(?<![.\w])[A-Za-z_]\w*"
_QUOTED = r"'[^']*'|\"[^\"]*\""


def check_shadowing(func: Any, where: str, others: Iterable[Any] = ()) -> None:
    """Refuse, when it is defined, a function whose postponed annotations (`from
    __future__ import annotations`) name a built-in type that a function of its module
    hides: `def list(...) -> list[str]`, or `list[str]` anywhere in a module that
    defines a function `list`. Python reads those annotations only when asked, finds
    the function, and every command using them would fail at its first run. `others`
    are functions already defined beside `func` (a module-level `func` hides the type
    for them too). Cheap: words of the annotation strings, nothing evaluated."""
    import builtins
    import types

    from atipkit.app.errors import DefinitionError

    name = getattr(func, "__name__", "")
    scope = getattr(func, "__globals__", None)
    hides = getattr(func, "__qualname__", None) == name and isinstance(
        getattr(builtins, name, None), type
    )
    if not hides and not any(
        isinstance(value, types.FunctionType) and isinstance(getattr(builtins, key, None), type)
        for key, value in (scope or {}).items()
    ):
        return  # nothing in the module hides a type: no annotation can name the wrong thing
    victims = [func, *(o for o in others if hides and getattr(o, "__globals__", 0) is scope)]
    for victim in victims:
        for text in (getattr(victim, "__annotations__", None) or {}).values():
            if not isinstance(text, str):
                continue
            for word in sorted(set(re.findall(_NAME_IN_HINT, re.sub(_QUOTED, "", text)))):
                if not isinstance(getattr(builtins, word, None), type):
                    continue
                found = getattr(victim, "__globals__", {}).get(word)
                if hides and word == name:
                    culprit = name
                elif isinstance(found, types.FunctionType):
                    culprit = found.__name__
                else:
                    continue
                raise DefinitionError(
                    f"{where}: the function {culprit!r} hides the built-in type {word!r} "
                    f"in its module, so the annotation {text!r} of {victim.__name__!r} "
                    "names the function, not the type (with from __future__ import "
                    "annotations, Python reads annotations only when asked). Rename "
                    f'the function and keep the command\'s name: @app.command("{word}") '
                    f"def {word}_(...)"
                )


def _seconds(value: float) -> str:
    text = f"{value:g}"
    return f"{text}s" if "e" not in text else f"{int(value)}s"


def _overlay(explicit: Effects, derived: Effects) -> Effects:
    """`derived` (from annotations) over `explicit`: a field the annotations state wins,
    the rest comes from `explicit`."""
    import msgspec

    from atipkit.model import UNSET

    changes = {
        f: getattr(derived, f)
        for f in derived.__struct_fields__
        if f != "extensions" and getattr(derived, f) is not UNSET
    }
    return msgspec.structs.replace(explicit, **changes)
