"""`atip scan`, `atip list`, `atip show`, `atip refresh`: discovery on the command line."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Argument,
    Context,
    DataFormatError,
    Document,
    NotFoundError,
    Option,
)
from atipkit.cli import app
from atipkit.cli._effects import discovering, read_only, resolving
from atipkit.cli._resolve import bad_registry, resolve
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from atipkit.infer.coverage import Step


def split(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (None when not given)."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


# scan ------------------------------------------------------------------------------------


_NOT_ATIP = frozenset({"exit-code", "not-json", "not-atip", "denied"})
"""Probe failures that only say a tool does not speak ATIP (most tools): not failures to
report to people, unlike a timeout, an invalid document or a sandbox that would not start."""
_NAMES_SHOWN = 6


def _names(names: list[str]) -> str:
    shown = ", ".join(sorted(names)[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return shown + (f", and {more} more (atip list)" if more > 0 else "")


def _scan_text(report: dict[str, Any]) -> str:
    """What the scan found, as counts people can act on, and where to look next: the
    tools that speak ATIP, those shims and inference describe, what was denied, failed
    or left for the next run. Every figure is in the JSON report too."""
    found = report["found"]
    native = [f["name"] for f in found if f["source"] == "native"]
    shims = [f["name"] for f in found if f["source"] == "shim"]
    inference = report["inference"]
    broken = Counter(f["kind"] for f in report["failures"] if f["kind"] not in _NOT_ATIP)
    rows: list[tuple[int, str, str]] = [
        (len(native), "speak ATIP", _names(native)),
        (len(shims), "have a shim", _names(shims)),
    ]
    if inference is None:
        rows.append((report["inferred"], "inferred", "by earlier runs"))
        bare = report["executables"] - len(found) - report["inferred"]
        rows.append((max(bare, 0), "no metadata", "atip scan --infer describes them"))
    else:
        rows.append(
            (
                inference["inferred"] + inference["reused"],
                "inferred",
                f"{inference['from_man_page']} from man pages, {inference['from_help']} "
                f"from --help, {inference['reused']} by earlier runs",
            )
        )
        if inference["skipped"]:
            note = "denied commands without a man page (denied commands are never run)"
            rows.append((len(inference["skipped"]), "undescribed", note))
        if inference["failed"]:
            broken["inference"] = len(inference["failed"])
        if inference["cut"]:
            note = "inferred with part of their commands unread: " + _names(inference["cut"])
            rows.append((len(inference["cut"]), "cut short", note))
    if broken:
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(broken.items()))
        rows.append((sum(broken.values()), "failed", f"{kinds} (reasons: atip scan --json)"))
    left = len(report["left"]) + len(inference["left"] if inference else [])
    if left:
        budget = inference["budget"] if inference else 0
        rows.append(
            (left, "left", f"the budget of {budget:g} s ran out; atip scan --infer goes on")
        )
    width = max(len(f"{count:,}") for count, _, _ in rows)
    denied = (
        f" and {len(inference['denied']):,} denied" if inference and inference["denied"] else ""
    )
    lines = [
        f"{report['executables']:,} executables{denied} in {report['seconds']:.1f} s: "
        f"{report['probed']:,} probed, {report['reused']:,} unchanged"
    ]
    lines += [f"  {count:>{width},}  {label:11}  {note}".rstrip() for count, label, note in rows]
    lines.append(
        'Next: atip search "what to do" finds commands; atip show NAME shows one tool; '
        "atip list lists them all"
    )
    return "".join(f"{line}\n" for line in lines)


@app.command(effects=discovering(), text=_scan_text)
def scan(
    ctx: Context,
    path: Annotated[
        str | None, Option(help="Directories to scan, separated by ':' (default: PATH).")
    ] = None,
    only: Annotated[
        str | None, Option(help="Scan only these executables (comma-separated names).")
    ] = None,
    skip: Annotated[
        str | None,
        Option(
            help="Never run these either (comma-separated names or patterns such as "
            "'mkfs.*'; added to the built-in deny list and config.json's scan.skip)."
        ),
    ] = None,
    allow_unsafe_dirs: Annotated[
        bool, Option(help="Also scan relative, world-writable or foreign-owned directories.")
    ] = False,
    refresh: Annotated[
        bool, Option(help="Probe again even what is cached (and, with --infer, infer again).")
    ] = False,
    jobs: Annotated[int, Option(help="Probes (and inferences) at once.", min=1, max=64)] = 8,
    probe_timeout: Annotated[
        float, Option(help="Seconds each probe may take.", min=0.1, max=60)
    ] = 2.0,
    infer: Annotated[
        bool,
        Option(
            help="Also infer metadata for every executable nothing describes: from its man "
            "page, else its --help (sandboxed); denied commands from their page only."
        ),
    ] = False,
    budget: Annotated[
        float | None,
        Option(
            help="With --infer: seconds for the whole scan, probing and inferring (default "
            "300; the scan ends at most 2 s later); what is not done by then is left for "
            "the next run.",
            min=1,
            max=86400,
        ),
    ] = None,
) -> dict[str, Any]:
    """Find ATIP tools on PATH and record them in the registry.

    Each executable is asked `--agent` in a sandbox; unchanged binaries are not asked
    again. Unsafe directories are skipped and reported (`skipped_dirs`, with the reason).
    A tool is recorded under its file name; metadata that calls it by another name is
    rewritten to it and reported (`renamed`: a warning when the name is another tool's, a
    note when it is one of this binary's own, `alias`). With `--infer`, every executable
    that is neither native nor has a shim gets an inferred shim too (`inference` in the
    result: how many, from man pages or help, and what was left for the next run); a
    binary already inferred is never inferred again; what the probe pass did not reach
    within the budget is `left`, for the next run to probe. People get a summary: how
    many tools speak ATIP, have a shim, are inferred, failed or were left, and where to
    look next; on a terminal, a progress bar. `failures` lists every probe that
    gave no metadata and why (name, path, kind, message); `isolation` says what the
    sandbox was (`bwrap`, `unshare`, or `none` where the kernel allows no namespaces).
    """
    import warnings
    from contextlib import nullcontext

    import msgspec

    from atipkit._scan import DEFAULT_INFER_BUDGET
    from atipkit._scan import scan as scan_dirs
    from atipkit.app import InputError
    from atipkit.deny import configured
    from atipkit.registry.local import RegistryError
    from atipkit.sandbox import SandboxWarning

    if budget is not None and not infer:
        raise InputError(
            "--budget applies to --infer only",
            code=ErrorCode.BAD_VALUE,
            details={"param": "budget"},
            suggestion="Add --infer, or leave out --budget.",
        )

    never = configured() | (split(skip) or [])
    stream = ctx.progress_stream
    display: AbstractContextManager[Callable[[Step], None] | None] = nullcontext()
    if stream is not None:  # rich is imported only where there is a terminal to draw on
        from atipkit.app.output import color_allowed
        from atipkit.cli._progress import sweep_progress

        display = sweep_progress(stream, color=color_allowed(stream, ctx.settings.no_color))
    with warnings.catch_warnings(record=True) as caught, display as on_step:
        warnings.simplefilter("always", SandboxWarning)
        try:
            report = scan_dirs(
                path.split(":") if path else None,
                only=split(only),
                skip=never,
                jobs=jobs,
                timeout=probe_timeout,
                allow_unsafe_dirs=allow_unsafe_dirs,
                refresh=refresh,
                infer=infer,
                infer_budget=DEFAULT_INFER_BUDGET if budget is None else budget,
                on_step=on_step,
            )
        except RegistryError as exc:
            raise bad_registry(exc) from None
    for warning in caught:
        if issubclass(warning.category, SandboxWarning):
            ctx.warn(str(warning.message))
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    for skipped in report.skipped_dirs:
        ctx.info(f"skipped {skipped.path}: {skipped.reason}")
    for rename in report.renamed:
        (ctx.info if rename.alias else ctx.warn)(rename.message)
    inference = report.inference
    if inference is not None:
        for failure in inference.failed:
            ctx.info(f"could not infer {failure.name}: {failure.error}")
        for name in inference.cut:
            ctx.info(f"{name}: part of its commands left unread (its shim says why)")
        if not report.complete:
            total = len(report.left) + len(inference.left)
            ctx.warn(
                f"the budget of {inference.budget:g} s ran out: {total} executable(s) left "
                f"for the next run ({len(report.left)} not probed, {len(inference.left)} "
                "not inferred; atip scan --infer again goes on from there)"
            )
    result: dict[str, Any] = msgspec.to_builtins(report)
    return result


# list ------------------------------------------------------------------------------------


def _list_text(tools: dict[str, dict[str, Any]]) -> str:
    width = max((len(n) for n in tools), default=4)
    return "".join(
        f"{name:{width}}  {entry['source']:6}  {entry.get('version') or '':10}  {entry['path']}\n"
        for name, entry in sorted(tools.items())
    )


@app.command("list", effects=read_only(reads_files=True, stdin="none"), text=_list_text)
def list_tools() -> dict[str, dict[str, Any]]:
    """List the tools in the registry.

    The result maps each tool's name to its entry: path, hash, source (native, shim,
    inferred, manual), version, when it was last checked.
    """
    import msgspec

    from atipkit.registry.local import LocalRegistry, RegistryError

    try:
        tools = LocalRegistry().read().tools
    except RegistryError as exc:
        raise bad_registry(exc) from None
    out: dict[str, dict[str, Any]] = {}
    for name, entry in sorted(tools.items()):
        record = msgspec.to_builtins(entry)
        record["source"] = entry.source  # left out of the file when it is the default
        out[name] = record
    return out


# show ------------------------------------------------------------------------------------


def _show_text(doc: dict[str, Any]) -> str:
    from atipkit.bridge.safety import flags
    from atipkit.model import effective_effects, from_dict, iter_commands

    tool = from_dict(doc)
    lines = [f"{tool.name} {tool.version} — {tool.description}"]
    if tool.partial:
        lines.append(f"partial: {tool.included_commands} of {tool.total_commands} commands")
    for path, command in iter_commands(tool):
        marks = " ".join(flags(effective_effects(tool, path)))
        indent = "  " * max(len(path) - 1, 0)
        label = " ".join(path) or "(root)"
        lines.append(f"  {indent}{label:30} {command.description[:60]}  {marks}".rstrip())
    return "".join(f"{line}\n" for line in lines)


@app.command(effects=resolving(), text=_show_text)
def show(
    ctx: Context,
    tool: Annotated[str, Argument(help="A tool name on PATH, or a path to one.")],
    commands: Annotated[
        str | None, Option(help="Only these command subtrees (comma-separated).")
    ] = None,
    depth: Annotated[int | None, Option(help="Only commands this deep (1 = top).", min=1)] = None,
    refresh: Annotated[bool, Option(help="Ask the tool again even if cached.")] = False,
    infer: Annotated[
        bool,
        Option(help="If nothing describes the tool, infer metadata from its help (atip gen)."),
    ] = False,
) -> Document:
    """Show a tool's ATIP metadata: its commands and what each may do.

    The result is the tool's ATIP document, with any override and patterns applied
    (`--plain > FILE` saves it as it is); for people, a summary with each command's
    safety flags. Where the metadata came from (probe, registry, shim, inferred) is noted
    on stderr.
    """
    from atipkit.model import dumps

    resolved = resolve(
        tool, ctx, commands=split(commands), depth=depth, refresh=refresh, allow_inferred=infer
    )
    ctx.info(
        f"source: {resolved.source}{' (cached)' if resolved.cached else ''}; "
        f"{resolved.path or 'no executable'}"
    )
    claim = resolved.renamed is not None and not resolved.renamed.alias
    for part, origin in resolved.origins.items():
        if not (part == "name" and claim):  # warned about already
            ctx.info(f"  {part}: {origin}")
    return Document(dumps(resolved.tool))


# refresh ---------------------------------------------------------------------------------


def _refresh_text(report: dict[str, Any]) -> str:
    return "".join(f"{r['name']}: {r['version']} ({r['source']})\n" for r in report["refreshed"])


@app.command(effects=resolving(), text=_refresh_text)
def refresh(
    ctx: Context,
    tool: Annotated[
        str | None,
        Argument(help="The tool to refresh (default: every tool in the registry)."),
    ] = None,
) -> dict[str, Any]:
    """Ask tools for their metadata again, ignoring what is cached.

    The result lists the tools refreshed (name, version, source) and those that failed
    (name, error); if any failed, the call fails (not found, exit 10) with that report.
    """
    from atipkit.app import ToolError
    from atipkit.registry.local import LocalRegistry, RegistryError

    try:
        names = [tool] if tool else sorted(LocalRegistry().read().tools)
    except RegistryError as exc:
        raise bad_registry(exc) from None
    report: dict[str, Any] = {"refreshed": [], "failed": []}
    for i, name in enumerate(names):
        ctx.progress(f"refreshing {i + 1}/{len(names)}: {name}")
        try:
            resolved = resolve(name, ctx, refresh=True)
        except ToolError as exc:
            report["failed"].append({"name": name, "error": exc.to_dict()})
            ctx.progress(None)
            ctx.info(f"{name}: {exc.message}")
            continue
        version = resolved.tool.version
        report["refreshed"].append(
            {"name": resolved.name, "version": version, "source": resolved.source}
        )
    ctx.progress(None)
    failed = report["failed"]
    if failed:
        codes = {f["error"]["code"] for f in failed}
        error = (
            NotFoundError
            if codes <= {ErrorCode.NOT_FOUND, ErrorCode.NO_METADATA}
            else DataFormatError
        )
        raise error(
            f"{len(failed)} of {len(names)} tool(s) could not be refreshed: "
            + ", ".join(f["name"] for f in failed),
            code=next(iter(codes)) if len(codes) == 1 else None,
            result=report,
        )
    return report
