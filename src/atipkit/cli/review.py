"""`atip review`: the human review of shims `atip crawl --review` queued (RFC 0.6 §4.10.1,
step 5): list, show (with a diff against what is published), approve, reject."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import Argument, DataFormatError, InputError, NotFoundError, Option
from atipkit.cli import app
from atipkit.cli._effects import read_only, reviews
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.crawl.errors import ReviewError

review_group = app.group(
    "review", help="Shims atip crawl --review queued: list, show, approve, reject."
)

OUT_HELP = "The crawl's output folder (--out of atip crawl); the queue is its .review/."
Out = Annotated[Path, Option(help=OUT_HELP, file_okay=False)]
Hashes = Annotated[
    list[str],
    Argument(help="Queued shims, by their binary's sha256 (sha256:<hex>, <hex>, or 6+ digits)."),
]


def _failure(exc: ReviewError) -> Exception:
    """The CLI error of a review error: 10 missing, 2 ambiguous or not a hash, 65 a
    damaged entry or an invalid shim."""
    if exc.kind == "missing":
        return NotFoundError(str(exc), suggestion="See the queue with atip review list.")
    if exc.kind in ("ambiguous", "not-a-hash"):
        return InputError(
            str(exc),
            code=ErrorCode.BAD_VALUE,
            suggestion="Give the hash atip review list shows.",
            details={"param": "hashes"},
        )
    return DataFormatError(str(exc), suggestion="Reject it, or crawl again to queue it anew.")


def _list_text(result: dict[str, Any]) -> str:
    lines = [
        "\t".join((e["hash"], e["tool"], e["platform"], e["version"], e.get("reason") or ""))
        for e in result["entries"]
    ]
    return "".join(f"{line.rstrip()}\n" for line in lines)


@review_group.command("list", effects=read_only(reads_files=True, stdin="none"), text=_list_text)
def list_(
    out: Out = Path("registry-src"),
    tool: Annotated[str | None, Option(help="Only this tool's shims.")] = None,
    rejected: Annotated[bool, Option(help="List the rejected shims instead.")] = False,
) -> dict[str, Any]:
    """List the shims awaiting review (or rejected), oldest first: hash, tool, platform,
    version. Exit status: 0; 65 a damaged queue entry."""
    from atipkit.crawl import review

    kind = review.REJECTED if rejected else review.QUEUED
    try:
        found = review.entries(out, kind, tool)
    except review.ReviewError as exc:
        raise _failure(exc) from None
    return {"out": str(out), "rejected": rejected, "entries": [e.summary() for e in found]}


def _show_text(result: dict[str, Any]) -> str:
    entry = result["entry"]
    head = f"{entry['tool']} {entry['version']} {entry['platform']} ({entry['origin']})\n"
    return head + (result["diff"] or "(the same as what is published)\n")


@review_group.command(effects=read_only(reads_files=True, stdin="none"), text=_show_text)
def show(
    hash: Annotated[str, Argument(help="The queued shim's binary sha256 (or 6+ digits).")],
    out: Out = Path("registry-src"),
) -> dict[str, Any]:
    """Show a queued shim and a unified diff from the published shim of the same tool and
    platform (or from nothing, for a new one). Exit status: 0; 10 no such queued shim;
    2 not a hash, or a prefix naming two; 65 a damaged entry."""
    from atipkit.crawl import review

    try:
        entry = review.find(out, hash)
    except review.ReviewError as exc:
        raise _failure(exc) from None
    return {
        "entry": entry.summary(),
        "shim": entry.document,
        "diff": review.diff(out, entry),
    }


def _decided_text(result: dict[str, Any]) -> str:
    return "".join(
        f"{e['hash']}\t{e['tool']}\t{e['platform']}\t{e['status']}\t{e.get('shim', '')}\n"
        for e in result["entries"]
    )


def _every_queued(out: Path, hashes: list[str]) -> None:
    """Each hash names one queued shim, or nothing is done."""
    from atipkit.crawl import review

    for key in hashes:
        try:
            review.find(out, key)
        except review.ReviewError as exc:
            raise _failure(exc) from None


@review_group.command(effects=reviews(), text=_decided_text)
def approve(hashes: Hashes, out: Out = Path("registry-src")) -> dict[str, Any]:
    """Publish queued shims to --out (shims/sha256/<hex>.json), where atip registry build
    reads them. An inferred shim becomes community (a person checked it). Each is one
    atomic write: a kill leaves it queued or published, never half. Exit status: 0; 10
    no such queued shim (nothing is approved); 2 not a hash, or a prefix
    naming two; 65 a damaged entry or an invalid shim."""
    from atipkit._clock import timestamp
    from atipkit.crawl import review

    done = []
    _every_queued(out, hashes)
    for key in hashes:
        try:
            entry, written = review.approve(out, key, timestamp())
        except review.ReviewError as exc:
            raise _failure(exc) from None
        status = "approved" if written else "already-published"
        done.append({**entry.summary(), "status": status})
    return {"out": str(out), "entries": done}


@review_group.command(effects=reviews(), text=_decided_text)
def reject(
    hashes: Hashes,
    reason: Annotated[str, Option(help="Why, kept with the rejected shim.")] = "",
    out: Out = Path("registry-src"),
) -> dict[str, Any]:
    """Reject queued shims: they move to .review/rejected with the reason, and a crawl
    with --review does not queue the same binary again. Exit status: 0; 10 no such
    queued shim (nothing is rejected); 2 not a hash, or a prefix naming two; 65 a
    damaged entry."""
    from atipkit._clock import timestamp
    from atipkit.crawl import review

    done = []
    _every_queued(out, hashes)
    for key in hashes:
        try:
            entry = review.reject(out, key, reason or "no reason given", timestamp())
        except review.ReviewError as exc:
            raise _failure(exc) from None
        done.append({**entry.summary(), "status": "rejected"})
    return {"out": str(out), "entries": done}
