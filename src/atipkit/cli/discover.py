"""`atip scan`, `atip list`, `atip show`, `atip refresh`: discovery on the command line."""

from __future__ import annotations

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
from atipkit.cli._resolve import NO_EXECUTABLE, NO_METADATA, bad_registry, resolve

if TYPE_CHECKING:
    pass


def split(value: str | None) -> list[str] | None:
    """A comma-separated option as a list (None when not given)."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


# scan ------------------------------------------------------------------------------------


def _scan_text(report: dict[str, Any]) -> str:
    found = report["found"]
    width = max((len(f["name"]) for f in found), default=4)
    return "".join(
        f"{f['name']:{width}}  {f['source']:6}  {f['version']:10}  {f['path']}\n" for f in found
    )


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
            help="With --infer: seconds for the whole scan (default 300); what is not done "
            "by then is left for the next run.",
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
    binary already inferred is never inferred again. `failures` lists every probe that
    gave no metadata and why (name, path, kind, message); `isolation` says what the
    sandbox was (`bwrap`, `unshare`, or `none` where the kernel allows no namespaces).
    """
    import warnings
    from collections import Counter

    import msgspec

    from atipkit.app import InputError
    from atipkit.deny import configured
    from atipkit.registry.local import RegistryError
    from atipkit.sandbox import SandboxWarning
    from atipkit.scan import DEFAULT_INFER_BUDGET
    from atipkit.scan import scan as scan_dirs

    if budget is not None and not infer:
        raise InputError(
            "--budget applies to --infer only",
            code="E1002",
            details={"param": "budget"},
            suggestion="Add --infer, or leave out --budget.",
        )

    def progress(done: int, total: int) -> None:
        ctx.progress(f"probing {done}/{total}")

    def inferring(done: int, total: int) -> None:
        ctx.progress(f"inferring {done}/{total}")

    never = configured() | (split(skip) or [])
    with warnings.catch_warnings(record=True) as caught:
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
                progress=progress,
                infer=infer,
                infer_budget=DEFAULT_INFER_BUDGET if budget is None else budget,
                infer_progress=inferring,
            )
        except RegistryError as exc:
            raise bad_registry(exc) from None
        finally:
            ctx.progress(None)
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
    ctx.info(
        f"{len(report.found)} ATIP tool(s) among {report.executables} executables "
        f"({report.probed} probed, {report.reused} unchanged) in {report.seconds:.2f} s"
    )
    if report.failures:
        kinds = Counter(failure.kind for failure in report.failures)
        ctx.info(
            "probes without ATIP metadata: "
            + ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
            + " (each with its reason in --json's failures)"
        )
    inference = report.inference
    if inference is not None:
        ctx.info(
            f"{report.inferred} tool(s) with inferred metadata: {inference.inferred} new "
            f"({inference.from_man_page} from man pages, {inference.from_help} from --help), "
            f"{inference.reused} inferred before; {len(inference.denied)} denied (never run), "
            f"{len(inference.skipped)} of them without a man page; "
            f"{len(inference.failed)} failed"
        )
        for failure in inference.failed:
            ctx.info(f"  {failure.name}: {failure.error}")
        if inference.left:
            ctx.warn(
                f"the budget of {inference.budget:g} s ran out: {len(inference.left)} "
                "executable(s) left for the next run (atip scan --infer again goes on)"
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
        error = NotFoundError if codes <= {NO_EXECUTABLE, NO_METADATA} else DataFormatError
        raise error(
            f"{len(failed)} of {len(names)} tool(s) could not be refreshed: "
            + ", ".join(f["name"] for f in failed),
            code=next(iter(codes)) if len(codes) == 1 else None,
            result=report,
        )
    return report
