"""`atip search`: the few commands of this machine that fit a task."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Annotated, Any, Literal

from atipkit.app import Argument, Context, InputError, Option
from atipkit.cli import app, no_teardown
from atipkit.cli._effects import indexes
from atipkit.cli._errors import missing_extra, missing_module
from atipkit.cli._resolve import bad_registry
from atipkit.errors import AtipError, ErrorCode

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
    ranking: Annotated[
        Literal["auto", "fused", "bm25"],
        Option(
            help="auto: fused when the rerank extra is installed, else BM25 alone; "
            "fused: BM25 and a small sentence encoder (exit 40 without the extra); "
            "bm25: words alone."
        ),
    ] = "auto",
    rerank: Annotated[
        bool,
        Option(help="Deprecated alias of --ranking fused; goes in a later release."),
    ] = False,
) -> dict[str, Any]:
    """Find the commands of this machine's tools that fit a task.

    Every command of every tool in the registry (native metadata, shims, and the
    metadata `atip scan --infer` inferred) is ranked by BM25 over its name, description,
    parameters, examples and patterns and, when the `rerank` extra is installed, by a
    sentence encoder's nearness in meaning (all-MiniLM-L6-v2, shipped inside a PyPI
    package, run on the CPU); the two rankings are fused by reciprocal rank, so a command
    can be found that shares no word with the query. `--ranking bm25` ranks by words
    alone; `--ranking fused` insists on the encoder (exit 40 without the extra, as
    `--rerank`, its deprecated alias, did).

    The result has `hits` (best first: `tool`, `command` — the command path, "" for the
    tool itself —, `name` — its tool name in `atip compile` —, `score`, `description`),
    `ranking` (`fused` or `bm25`: which ranking answered), `index` (tools and commands
    indexed, whether it was brought up to date, entries left out and why), and, fused,
    `rerank` (the model, the texts embedded by this search, seconds, and `unsaved`:
    why the vectors could not be kept in the cache, which a warning says too), or, BM25
    by default, `unfused`: why the encoder could not run. The index and the command
    vectors live in the cache directory and follow the registry by themselves.
    """
    no_teardown()  # it leaves nothing open: its process ends without the teardown
    if not query.strip():
        raise InputError(
            "QUERY is empty",
            code=ErrorCode.BAD_VALUE,
            details={"param": "query"},
            suggestion="Say what you want to do: atip search 'list open pull requests'",
        )
    if rerank and ranking == "bm25":
        raise InputError(
            "--rerank (fused) contradicts --ranking bm25",
            code=ErrorCode.BAD_VALUE,
            details={"param": "rerank"},
            suggestion="Drop --rerank: it is --ranking fused",
        )
    if rerank:
        ctx.warn("--rerank is deprecated: it is --ranking fused (the default when installed)")
        ranking = "fused"
    if ranking != "bm25":
        # a query's products are too small to share: BLAS threads waiting on each other
        # cost more than the product on a busy machine (decision 302); numpy reads this
        # when it is imported, which a search does only from here on
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    def answer(index: Any) -> tuple[dict[str, Any] | None, str | None, list[Any]]:
        """(the vectors' report when fused, why not when auto fell back, the hits)"""
        found = None if ranking == "bm25" else _semantic(index, required=ranking == "fused")
        semantic = found if isinstance(found, dict) else None
        unfused = found if isinstance(found, str) else None
        return semantic, unfused, index.search(query, limit, rerank=semantic is not None)

    try:
        from atipkit.search.index import DamagedIndex
        from atipkit.search.machine import machine_index

        index, report = machine_index()
        try:
            semantic, unfused, hits = answer(index)
        except DamagedIndex:  # damage the load does not check (decision 174): rebuilt
            index, report = machine_index(rebuild=True)
            semantic, unfused, hits = answer(index)
    except ImportError as exc:
        raise missing_module(exc, "atip search", INSTALL) from None
    except AtipError as exc:  # the registry's module only when it is in question
        from atipkit.registry.local import RegistryError

        if not isinstance(exc, RegistryError):
            raise
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
    if unfused is not None:
        ctx.info(f"ranked by BM25 alone ({unfused}); {INSTALL_RERANK} ranks by meaning too")
    if semantic is not None and semantic["embedded"]:
        ctx.info(
            f"embedded {semantic['embedded']} texts (descriptions, passages) for the fused ranking "
            f"in {semantic['seconds']:.1f} s"
        )
    if semantic is not None and semantic["unsaved"]:
        ctx.warn(
            f"the command vectors could not be kept in the cache ({semantic['unsaved']}); "
            "this search embedded them in memory (set ATIP_CACHE_DIR to a writable directory)"
        )
    result = {
        "query": query,
        "hits": [asdict(hit) for hit in hits],
        "ranking": "fused" if semantic is not None else "bm25",
        "index": asdict(report),
    }
    if semantic is not None:
        result["rerank"] = semantic
    if unfused is not None:
        result["unfused"] = unfused
    return result


def _semantic(index: Any, *, required: bool) -> dict[str, Any] | str:
    """The command vectors brought up to date for the fused ranking. Without the
    `rerank` extra: exit 40 when the fused ranking was `required`, else why it cannot
    run (the search is then BM25's alone)."""
    from atipkit.search import embed

    try:
        from atipkit.search.rerank import semantic

        state = semantic(index)
    except embed.ModelMissing as exc:
        if required:
            raise missing_extra(f"atip search --ranking fused: {exc}", INSTALL_RERANK) from None
        return str(exc)
    return {
        "model": embed.MODEL,
        "embedded": state.embedded,
        "seconds": round(state.seconds, 3),
        "unsaved": state.unsaved,
    }
