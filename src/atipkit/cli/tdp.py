"""`atip import tdp`: a Tool Discovery Protocol manifest (a scenario's URL, a file or
stdin) as an ATIP document. Thin: the work is `atipkit.interop.tdp`'s."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from atipkit.app import (
    Argument,
    Context,
    DataFormatError,
    DependencyError,
    Document,
    InputError,
    InternalError,
    NotFoundError,
    Option,
    Suggestion,
)
from atipkit.cli import _errors as errors
from atipkit.cli._effects import imports
from atipkit.cli.interop import import_group
from atipkit.errors import ErrorCode

if TYPE_CHECKING:
    from atipkit.errors import DocumentError
    from atipkit.interop.tdp import Preferences, ToolManifest
    from atipkit.model import Tool

FETCH_TIMEOUT = 10.0
"""Seconds a URL may take, all in all, unless the global --timeout says otherwise."""


def _text(result: Any) -> str:
    """The document itself, or where it was written."""
    if isinstance(result, dict) and "written" in result:
        return f"wrote {result['written']} ({result['commands']} commands)\n"
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


@import_group.command("tdp", effects=imports(network=True, subprocess=False), text=_text)
def import_tdp(
    ctx: Context,
    source: Annotated[
        str,
        Argument(
            help="The manifest: a scenario's URL (a base URL gets /api/v1/tools), a JSON "
            "file, or - for stdin; snake_case or proto3 camelCase JSON."
        ),
    ],
    out: Annotated[
        Path | None,
        Option(
            help="Write the ATIP document atomically: into a directory as <scenario>.json, "
            "or to a path ending in .json."
        ),
    ] = None,
) -> Any:
    """Describe the tools of a Tool Discovery Protocol manifest as one ATIP tool.

    The scenario becomes the tool, each TDP tool a command of that name whose parameters
    are `--<name>` options (types, required, enum, defaults). Its metadata becomes
    effects where the meaning is the same (idempotent; timeout_seconds → duration;
    cost_estimate → cost) or, where atip served the manifest, the exact effects under
    x-atip; approval, enabled, rate limits, tags, examples and categories are kept under
    x-tdp. requires_approval is not taken to mean destructive. The user's preferences
    (config.json's tdp.preferences, by scenario and tool) are merged in: a tool the user
    disabled is left out, and an approval the user asks for is added. The result is the ATIP
    document, valid under the ATIP schema; with --out it is written atomically and the
    result says where. A URL is fetched within --timeout seconds (default 10).

    Exit status: 0; 2 usage (not an http(s) URL, an unreadable file, a scenario name
    that cannot name a file in --out, --out not writable); 10 no such file, or the
    server has no manifest there (HTTP 404); 30 no permission to read the file or to
    write --out; 40 the server cannot be reached, answers too slowly, or with another
    error status (5xx may be retried); 65 not JSON, not a manifest, too large (decoded
    too), in a Content-Encoding other than one layer of gzip or deflate, too deeply
    nested, or of a major protocol version other than 1 (the message names the JSON path
    and what was expected).
    """
    from atipkit.errors import DocumentError
    from atipkit.interop import tdp
    from atipkit.model import count_commands, dumps
    from atipkit.validation import validate

    timeout = ctx.settings.timeout or FETCH_TIMEOUT
    preferences = _preferences()
    manifest = _fetch(source, timeout) if _is_url(source) else _read(source)
    manifest = tdp.merge_preferences(manifest, preferences, drop_disabled=True)
    if manifest.protocol_version.split(".")[1:2] not in ([], ["0"]):
        ctx.warn(
            f"protocol version {manifest.protocol_version} is newer than 1.0: read as 1.0, "
            "fields this reader does not know are kept under x-tdp"
        )
    try:
        tool = tdp.to_atip(manifest)
    except DocumentError as exc:
        raise _invalid(exc, source) from None
    text = dumps(tool) + b"\n"
    report = validate(text)
    if not report.ok:  # a bug if it happens: say it plainly rather than write it
        raise InternalError(
            f"the ATIP document made of the manifest is invalid: {report.errors[0].format()}",
            details={"problems": [p.to_dict() for p in report.errors]},
            suggestion=Suggestion("This is a bug in atip import tdp; report it.", action="abort"),
        )
    if out is None:
        return Document(text)
    path = _target(out, tool)
    errors.write_out(path, text, advice="Name a directory or file you may write to with --out.")
    ctx.info(f"wrote {path} ({count_commands(tool)} commands)")
    return {"written": str(path), "tool": tool.name, "commands": count_commands(tool)}


def _preferences() -> Preferences:
    """config.json's TDP preferences; ones that cannot be used are a configuration error
    (E1009): a preference misspelt must not silently not apply."""
    from atipkit.errors import DocumentError
    from atipkit.interop import tdp

    try:
        return tdp.load_preferences()
    except DocumentError as exc:
        raise InputError(
            str(exc),
            code=ErrorCode.BAD_CONFIG,
            details={"problems": [p.to_dict() for p in exc.problems]},
            suggestion="Fix tdp.preferences in config.json: by scenario, then tool, "
            '{"enabled": BOOL, "requires_approval": BOOL}.',
        ) from None


def _is_url(source: str) -> bool:
    return "://" in source and not os.path.exists(source)


def _fetch(url: str, timeout: float) -> ToolManifest:
    from atipkit._http import EncodingRefused, HttpError, ResponseTooLarge
    from atipkit.errors import DocumentError
    from atipkit.interop import tdp

    try:
        return tdp.fetch(url, timeout=timeout, refresh=True)
    except DocumentError as exc:
        raise _invalid(exc, url) from None
    except tdp.ManifestStatusError as exc:
        if exc.status == 404:
            raise NotFoundError(
                str(exc),
                details={"url": exc.url, "status": 404},
                suggestion="Give the scenario's base URL or the manifest's own URL "
                "(…/api/v1/tools).",
            ) from None
        raise DependencyError(
            str(exc), is_retryable=exc.status >= 500, details={"url": exc.url, "status": exc.status}
        ) from None
    except (ResponseTooLarge, EncodingRefused) as exc:  # a bad answer, not a server down
        raise DataFormatError(str(exc), details={"url": exc.url}) from None
    except HttpError as exc:
        raise DependencyError(
            str(exc),
            is_retryable=isinstance(exc, tdp.NetworkError),
            details={"url": exc.url},
            suggestion="Check that the scenario runs and the URL is right; --timeout N waits "
            "longer.",
        ) from None
    except ValueError as exc:
        raise InputError(str(exc), code=ErrorCode.BAD_VALUE, details={"param": "source"}) from None


def _read(source: str) -> ToolManifest:
    from atipkit import _jsontext
    from atipkit.cli._resolve import file_error
    from atipkit.errors import DocumentError
    from atipkit.interop import tdp

    name = "<stdin>" if source == "-" else source
    try:
        data = _jsontext.read_bytes(source)
        return tdp.parse(data, source=name)
    except OSError as exc:
        raise file_error(exc, source, "Name a manifest file, a URL, or - for stdin.") from None
    except DocumentError as exc:
        raise _invalid(exc, name) from None


def _invalid(exc: DocumentError, name: str) -> DataFormatError:
    return DataFormatError(
        str(exc),
        details={"source": exc.source or name, "problems": [p.to_dict() for p in exc.problems]},
        suggestion="Give a Tool Discovery Protocol 1.x manifest (GET /api/v1/tools).",
    )


def _target(out: Path, tool: Tool) -> Path:
    """`--out` as a file (a path ending in .json that is not a directory) or a directory
    that gets `<scenario>.json`, whose name may not lead out of it or hide the file."""
    if out.suffix == ".json" and not out.is_dir():
        return out
    name = f"{tool.name}.json"
    path = out / name
    inside = os.path.dirname(os.path.abspath(path)) == os.path.abspath(out)
    if tool.name.startswith(".") or not inside:
        raise InputError(
            f"scenario name {tool.name!r} cannot name a file in {out}",
            code=ErrorCode.BAD_VALUE,
            details={"param": "out", "name": tool.name},
            suggestion="Give --out a file name ending in .json.",
        )
    return path
