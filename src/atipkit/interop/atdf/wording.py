"""The prose of an exported descriptor, derived from the ATIP metadata and nothing else.

ATDF describes a tool in sentences (`description`, `when_to_use`, `outputs.success`,
`outputs.failure`, `prerequisites`); a basic descriptor has no other place for safety,
so what the effects say travels in these sentences and in the safety suffix of
SPEC-NOTES 17 (`atipkit.bridge.safety`). Every sentence states something the metadata
states; where the metadata is silent, the sentence says so rather than guess.
"""

from __future__ import annotations

import json

from atipkit.bridge.params import describe
from atipkit.bridge.safety import is_read_only
from atipkit.checks import declares
from atipkit.execute.runner import DEFAULT_TIMEOUT, MAX_OUTPUT
from atipkit.interop.atdf import codes
from atipkit.model import UNSET, Argument, Authentication, Command, Effects, Option, Tool


def summary(command: Command) -> str:
    text = command.description.strip() or "(no description)"
    return f"{text} (deprecated)" if command.deprecated else text


def description(command: Command, safety: str) -> str:
    """The command's description, then its safety flags, never cut."""
    text = summary(command)
    if not safety:
        return text
    return f"{text}{chr(10) if chr(10) in text else ' '}{safety}"


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


def cautions(effects: Effects) -> list[str]:
    """What the effects say, as sentences, in the order of the safety flags."""
    if not declares(effects):
        return ["Its effects are not stated: assume it may change or delete things."]
    out = []
    if effects.destructive is True:
        out.append("It permanently destroys data: confirm with the user first.")
    if effects.reversible is False:
        out.append("What it does cannot be undone.")
    if effects.idempotent is False:
        out.append("Calling it twice is not the same as once: do not retry it blindly.")
    elif effects.idempotent is True:
        out.append("It is safe to retry.")
    if effects.cost and effects.cost.billable is True:
        out.append("It may cost money.")
    if is_read_only(effects):
        out.append("It changes nothing: no network access, no file writes.")
    elif effects.network is True:
        out.append("It uses the network.")
    fs = effects.filesystem
    if fs and fs.write is True:
        where = f" under {', '.join(fs.paths)}" if fs.paths else ""
        out.append(f"It writes files{where}.")
    if fs and fs.delete is True:
        out.append("It deletes files.")
    interactive = effects.interactive
    if interactive:
        if interactive.stdin == "required":
            out.append("It needs input on stdin.")
        elif interactive.stdin == "password":
            out.append("It asks for a password, which is never taken from the model.")
        if interactive.tty is True:
            out.append("It needs a terminal.")
    if effects.duration and effects.duration.typical:
        out.append(f"It typically takes {effects.duration.typical}.")
    return out


def authentication(tool: Tool, command: Command) -> Authentication | None:
    """The authentication that applies: the command's own, else the tool's."""
    return command.authentication or tool.authentication or None


def when_to_use(
    tool: Tool, title: str, command: Command, effects: Effects, auth: Authentication | None
) -> str:
    sentences = [f"When a task calls for `{title}`: {_sentence(summary(command))}"]
    sentences += cautions(effects)
    if auth and auth.required is True:
        check = f" (check with `{auth.check_command}`)" if auth.check_command else ""
        sentences.append(f"It needs {tool.name} to be authenticated{check}.")
    return " ".join(sentences)


def success(effects: Effects) -> str:
    out = ["It exits with status 0; its standard output is the result."]
    for verb, things in (
        ("Creates", effects.creates),
        ("Modifies", effects.modifies),
        ("Deletes", effects.deletes),
    ):
        if things:
            out.append(f"{verb}: {', '.join(things)}.")
    return " ".join(out)


def failures(tool: Tool, effects: Effects, has_inputs: bool) -> list[dict[str, str]]:
    """The failures a call of the command through atipkit can end in, each only where
    the metadata makes it possible (the codes of its enriched error responses)."""
    out = []
    if has_inputs:
        out.append(
            (
                codes.INVALID_ARGUMENTS,
                "A value does not fit its input (type, allowed values, pattern, or a "
                "required input missing); nothing ran.",
            )
        )
    risky = [
        word
        for word, hit in (
            ("destructive", effects.destructive is True),
            ("billable", bool(effects.cost and effects.cost.billable is True)),
        )
        if hit
    ]
    if risky:
        out.append(
            (
                codes.CONFIRMATION_REQUIRED,
                f"It is {' and '.join(risky)}: atipkit's default policy runs it only after "
                "a person confirms; unconfirmed, nothing ran.",
            )
        )
    stdin = effects.interactive.stdin if effects.interactive else UNSET
    if stdin == "required":
        out.append((codes.INPUT_REFUSED, "It needs input on stdin and none was given."))
    elif stdin == "password":
        out.append((codes.INPUT_REFUSED, "It asks for a password and no credential was available."))
    out.append(
        (
            codes.NOT_STARTED,
            f"The {tool.name} executable could not be started (not installed, or not executable).",
        )
    )
    timeout = effects.duration.timeout if effects.duration and effects.duration.timeout else None
    limit = timeout or f"{DEFAULT_TIMEOUT:g}s (atipkit's default)"
    out.append((codes.TIMED_OUT, f"It did not finish within {limit} and was stopped."))
    out.append(
        (
            codes.OUTPUT_TOO_LARGE,
            f"It wrote more than {MAX_OUTPUT // (1024 * 1024)} MiB of output, atipkit's "
            "cap, and was stopped.",
        )
    )
    out.append((codes.NON_ZERO_EXIT, "It exited with a non-zero status; its stderr says why."))
    return [{"code": code, "description": text} for code, text in out]


def prerequisites(tool: Tool, auth: Authentication | None) -> dict[str, list[str]]:
    conditions = [f"The {tool.name} command-line tool is installed."]
    permissions: list[str] = []
    if auth and (auth.required is True or auth.methods):
        ways = []
        for method in auth.methods:
            how = [
                f"set up with `{method.setup_command}`" if method.setup_command else "",
                f"${method.env_var}" if method.env_var else "",
                method.config_path or "",
            ]
            detail = ", ".join(h for h in how if h)
            ways.append(f"{method.type} ({detail})" if detail else method.type)
            permissions += [s for s in method.scopes or [] if s not in permissions]
        needs = "Authenticated" if auth.required is True else "Possibly authenticated"
        check = f"; check with `{auth.check_command}`" if auth.check_command else ""
        with_ = f" with one of: {'; '.join(ways)}" if ways else ""
        conditions.append(f"{needs}{with_}{check}.")
    out: dict[str, list[str]] = {"conditions": conditions}
    if permissions:
        out["permissions"] = permissions
    return out


def input_description(param: Argument | Option, required: bool, *, basic: bool) -> str | None:
    """An input's description. Enhanced: the parameter's own (the schema says the rest).
    Basic, which has no other field: its kind, default, allowed values, whether required."""
    if not basic:
        return param.description or None
    text = describe(param)
    if param.enum:
        text += f". One of: {', '.join(json.dumps(v, ensure_ascii=False) for v in param.enum)}"
    return f"{text}. Required" if required else text


def tags(tool: Tool, path: tuple[str, ...], flags: list[str]) -> list[str]:
    words = [tool.name, *path]
    words += [flag.split(" ", 1)[1].lower().replace(" ", "-") for flag in flags]
    return list(dict.fromkeys(w for w in words if w))


def example_goal(command: Command, line: str) -> str:
    return f"{_sentence(summary(command))[:-1]}: `{line}`"
