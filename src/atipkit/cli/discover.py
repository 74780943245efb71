"""`atip scan`, `atip list`, `atip show`, `atip refresh`: discovery on the command line."""

from __future__ import annotations

import json
import sys

import click

from atipkit.cli import EXIT_INVALID, EXIT_OK
from atipkit.cli._effects import discovering, read_only
from atipkit.introspect.click import AtipArgument, AtipCommand


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@click.command(cls=AtipCommand, effects=discovering())
@click.option("--path", "dirs", help="Directories to scan, separated by ':' (default: PATH).")
@click.option("--only", help="Scan only these executables (comma-separated names).")
@click.option(
    "--skip",
    help="Never run these either (comma-separated names; added to the "
    "built-in list and config.json's scan.skip).",
)
@click.option(
    "--allow-unsafe-dirs",
    is_flag=True,
    help="Also scan relative, world-writable or foreign-owned directories.",
)
@click.option("--refresh", is_flag=True, help="Probe again even what is cached.")
@click.option(
    "--jobs", type=click.IntRange(1, 64), default=8, show_default=True, help="Probes at once."
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 60),
    default=2.0,
    show_default=True,
    help="Seconds each probe may take.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def scan_command(
    dirs: str | None,
    only: str | None,
    skip: str | None,
    allow_unsafe_dirs: bool,
    refresh: bool,
    jobs: int,
    timeout: float,
    as_json: bool,
) -> None:
    """Find ATIP tools on PATH and record them in the registry.

    Each executable is asked `--agent` in a sandbox; unchanged binaries are not asked
    again. Unsafe directories are skipped and reported.
    """
    import msgspec

    from atipkit.scan import configured_skip, scan

    progress = _progress if sys.stderr.isatty() and not as_json else None
    never = configured_skip() | frozenset(_split(skip) or [])
    report = scan(
        dirs.split(":") if dirs else None,
        only=_split(only),
        skip=never,
        jobs=jobs,
        timeout=timeout,
        allow_unsafe_dirs=allow_unsafe_dirs,
        refresh=refresh,
        progress=progress,
    )
    if progress:
        click.echo("\r\x1b[K", nl=False, err=True)
    if as_json:
        click.echo(json.dumps(msgspec.to_builtins(report), indent=2))
        return
    for skipped in report.skipped_dirs:
        click.echo(f"skipped {skipped.path}: {skipped.reason}", err=True)
    width = max((len(f.name) for f in report.found), default=4)
    for found in report.found:
        click.echo(f"{found.name:{width}}  {found.source:6}  {found.version:10}  {found.path}")
    click.echo(
        f"{len(report.found)} ATIP tool(s) among {report.executables} executables "
        f"({report.probed} probed, {report.reused} unchanged) in {report.seconds:.2f} s",
        err=True,
    )


def _progress(done: int, total: int) -> None:
    click.echo(f"\rprobing {done}/{total}", nl=False, err=True)


@click.command("list", cls=AtipCommand, effects=read_only(reads_files=True, stdin="none"))
@click.option("--json", "as_json", is_flag=True, help="Print the registry's entries as JSON.")
def list_command(as_json: bool) -> None:
    """List the tools in the registry."""
    import msgspec

    from atipkit.registry.local import LocalRegistry

    tools = LocalRegistry().read().tools
    if as_json:
        click.echo(json.dumps(msgspec.to_builtins(tools), indent=2))
        return
    width = max((len(n) for n in tools), default=4)
    for name, entry in sorted(tools.items()):
        click.echo(f"{name:{width}}  {entry.source:6}  {entry.version or '':10}  {entry.path}")


@click.command(cls=AtipCommand, effects=discovering())
@click.argument("tool", cls=AtipArgument, help="A tool name on PATH, or a path to one.")
@click.option("--commands", help="Only these command subtrees (comma-separated).")
@click.option("--depth", type=click.IntRange(min=1), help="Only commands this deep (1 = top).")
@click.option("--refresh", is_flag=True, help="Ask the tool again even if cached.")
@click.option(
    "--infer",
    "allow_inferred",
    is_flag=True,
    help="If nothing describes the tool, infer metadata from its help (atip gen).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the ATIP document.")
@click.pass_context
def show_command(
    ctx: click.Context,
    tool: str,
    commands: str | None,
    depth: int | None,
    refresh: bool,
    allow_inferred: bool,
    as_json: bool,
) -> None:
    """Show a tool's ATIP metadata: its commands and what each may do."""
    from atipkit.bridge.safety import flags
    from atipkit.model import dumps, effective_effects, iter_commands

    resolved = _resolve(
        ctx,
        tool,
        commands=_split(commands),
        depth=depth,
        refresh=refresh,
        allow_inferred=allow_inferred,
    )
    doc = resolved.tool
    if as_json:
        click.echo(dumps(doc).decode())
        return
    click.echo(f"{doc.name} {doc.version} — {doc.description}")
    click.echo(
        f"source: {resolved.source}{' (cached)' if resolved.cached else ''}; "
        f"{resolved.path or 'no executable'}"
    )
    for part, origin in resolved.origins.items():
        click.echo(f"  {part}: {origin}")
    if doc.partial:
        click.echo(f"partial: {doc.included_commands} of {doc.total_commands} commands")
    for path, command in iter_commands(doc):
        marks = " ".join(flags(effective_effects(doc, path)))
        indent = "  " * max(len(path) - 1, 0)
        label = " ".join(path) or "(root)"
        click.echo(f"  {indent}{label:30} {command.description[:60]}  {marks}".rstrip())
    ctx.exit(EXIT_OK)


@click.command(cls=AtipCommand, effects=discovering())
@click.argument(
    "tool",
    cls=AtipArgument,
    required=False,
    help="The tool to refresh (default: every tool in the registry).",
)
@click.pass_context
def refresh_command(ctx: click.Context, tool: str | None) -> None:
    """Ask tools for their metadata again, ignoring what is cached."""
    from atipkit.registry.local import LocalRegistry

    names = [tool] if tool else sorted(LocalRegistry().read().tools)
    failed = 0
    for name in names:
        try:
            resolved = _resolve(ctx, name, refresh=True, exit_on_error=False)
        except LookupError as exc:
            failed += 1
            click.echo(f"{name}: {exc}", err=True)
            continue
        click.echo(f"{resolved.name}: {resolved.tool.version} ({resolved.source})")
    ctx.exit(EXIT_INVALID if failed else EXIT_OK)


def _resolve(ctx: click.Context, tool: str, *, exit_on_error: bool = True, **kwargs):  # type: ignore[no-untyped-def]
    from atipkit.resolve import resolve_tool

    try:
        return resolve_tool(tool, **kwargs)
    except KeyError as exc:  # an unknown command in --commands
        raise click.BadParameter(str(exc.args[0]), param_hint="--commands") from None
    except LookupError as exc:
        if not exit_on_error:
            raise
        click.echo(f"atip: {exc}", err=True)
        ctx.exit(EXIT_INVALID)
