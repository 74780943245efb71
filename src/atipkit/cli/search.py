"""`atip search`: the few commands of this machine that fit a task."""

from __future__ import annotations

from typing import Annotated, Any

from atipkit.app import Argument, Context, InputError, Option
from atipkit.cli import app
from atipkit.cli._effects import indexes
from atipkit.cli._errors import missing_extra
from atipkit.cli._resolve import bad_registry

INSTALL = "pip install 'atipkit[search]'"


def _search_text(result: dict[str, Any]) -> str:
    hits = result["hits"]
    width = max((len(h["name"]) for h in hits), default=4)
    return "".join(
        f"{h['score']:7.2f}  {h['name']:{width}}  {h['description'][:80]}\n" for h in hits
    )


@app.command(effects=indexes(), text=_search_text)
def search(
    ctx: Context,
    query: Annotated[str, Argument(help="What you want to do, in your own words.")],
    limit: Annotated[int, Option(help="At most this many hits.", min=1, max=1000)] = 10,
) -> dict[str, Any]:
    """Find the commands of this machine's tools that fit a task.

    Every command of every tool in the registry (native metadata, shims, and the
    metadata `atip scan --infer` inferred) is ranked by BM25 over its name, description,
    parameters, examples and patterns. The result has `hits` (best first: `tool`,
    `command` — the command path, "" for the tool itself —, `name` — its tool name in
    `atip compile` —, `score`, `description`) and `index` (tools and commands indexed,
    whether it was brought up to date, entries left out and why). The index lives in the
    cache directory and follows the registry by itself.
    """
    import msgspec

    from atipkit.registry.local import RegistryError

    if not query.strip():
        raise InputError(
            "QUERY is empty",
            code="E1002",
            details={"param": "query"},
            suggestion="Say what you want to do: atip search 'list open pull requests'",
        )
    try:
        from atipkit.search.machine import machine_index

        index, report = machine_index()
        hits = index.search(query, limit)  # a loaded index imports PyStemmer only here
    except ImportError as exc:
        package = {"Stemmer": "PyStemmer"}.get(exc.name or "", exc.name or "bm25s")
        raise missing_extra(f"atip search needs {package}", INSTALL) from None
    except RegistryError as exc:
        raise bad_registry(exc) from None
    if report.updated:
        ctx.info(
            f"index updated: {report.tools} tools, {report.commands} commands "
            f"({report.read} read, {report.reused} unchanged) in {report.seconds:.2f} s"
        )
    for line in report.skipped:
        ctx.info(f"left out: {line}")
    if not report.commands:
        ctx.warn("the index is empty: record tools first (atip scan, or atip scan --infer)")
    return {
        "query": query,
        "hits": msgspec.to_builtins(hits),
        "index": msgspec.to_builtins(report),
    }
