"""`atip search`: the few commands of this machine that fit a task."""

from __future__ import annotations

from typing import Annotated, Any

from atipkit.app import Argument, Context, InputError, Option
from atipkit.cli import app
from atipkit.cli._effects import indexes
from atipkit.cli._errors import missing_extra, missing_module
from atipkit.cli._resolve import bad_registry

INSTALL = "pip install 'atipkit[search]'"
INSTALL_RERANK = "pip install 'atipkit[rerank]'"


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
    rerank: Annotated[
        bool,
        Option(help="Also rank by meaning, with a small sentence encoder (extra: rerank)."),
    ] = False,
) -> dict[str, Any]:
    """Find the commands of this machine's tools that fit a task.

    Every command of every tool in the registry (native metadata, shims, and the
    metadata `atip scan --infer` inferred) is ranked by BM25 over its name, description,
    parameters, examples and patterns. The result has `hits` (best first: `tool`,
    `command` — the command path, "" for the tool itself —, `name` — its tool name in
    `atip compile` —, `score`, `description`) and `index` (tools and commands indexed,
    whether it was brought up to date, entries left out and why). The index lives in the
    cache directory and follows the registry by itself.

    `--rerank` also ranks by meaning: BM25's best candidates and the commands nearest the
    query in a sentence encoder's space (all-MiniLM-L6-v2, shipped inside a PyPI package,
    run on the CPU), scored together, so a command can be found that shares no word with
    the query. It needs the `rerank` extra (exit 40 without it). Each command is embedded
    once and kept beside the index; the result then has `rerank` (the model, the commands
    embedded by this search, seconds, and `unsaved`: why the vectors could not be kept
    in the cache, when they could not, which a warning says too).
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

    def answer(index: Any) -> tuple[dict[str, Any] | None, list[Any]]:
        semantic = _semantic(index) if rerank else None
        return semantic, index.search(query, limit, rerank=rerank)  # imports PyStemmer

    try:
        from atipkit.search.index import DamagedIndex
        from atipkit.search.machine import machine_index

        index, report = machine_index()
        try:
            semantic, hits = answer(index)
        except DamagedIndex:  # damage the load does not check (decision 174): rebuilt
            index, report = machine_index(rebuild=True)
            semantic, hits = answer(index)
    except ImportError as exc:
        raise missing_module(exc, "atip search", INSTALL) from None
    except RegistryError as exc:
        raise bad_registry(exc) from None
    if report.updated:
        ctx.info(
            f"index updated: {report.tools} tools, {report.commands} commands "
            f"({report.read} read, {report.reused} unchanged) in {report.seconds:.2f} s"
        )
    for line in report.skipped:
        ctx.info(f"left out: {line}")
    if report.unsaved:
        ctx.warn(
            f"the index could not be kept in the cache ({report.unsaved}); this search "
            "built it in memory (set ATIP_CACHE_DIR to a writable directory)"
        )
    if not report.commands:
        ctx.warn("the index is empty: record tools first (atip scan, or atip scan --infer)")
    if semantic is not None and semantic["embedded"]:
        ctx.info(
            f"embedded {semantic['embedded']} commands for re-ranking "
            f"in {semantic['seconds']:.1f} s"
        )
    if semantic is not None and semantic["unsaved"]:
        ctx.warn(
            f"the command vectors could not be kept in the cache ({semantic['unsaved']}); "
            "this search embedded them in memory (set ATIP_CACHE_DIR to a writable directory)"
        )
    result = {
        "query": query,
        "hits": msgspec.to_builtins(hits),
        "index": msgspec.to_builtins(report),
    }
    if semantic is not None:
        result["rerank"] = semantic
    return result


def _semantic(index: Any) -> dict[str, Any]:
    """The command vectors brought up to date (the rerank extra, or exit 40)."""
    from atipkit.search import embed

    try:
        from atipkit.search.rerank import semantic

        state = semantic(index)
    except embed.ModelMissing as exc:
        raise missing_extra(f"atip search --rerank: {exc}", INSTALL_RERANK) from None
    return {
        "model": embed.MODEL,
        "embedded": state.embedded,
        "seconds": round(state.seconds, 3),
        "unsaved": state.unsaved,
    }
