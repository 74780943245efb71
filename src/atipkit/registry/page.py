"""`index.html`: one self-contained page to search a registry's catalog and read its shims.

The page is the package file `index.html` with the catalog embedded as JSON, so it works
from any static host, under any path, with no request but the shims it opens (relative
URLs). Everything in the catalog is community input: the JSON is escaped so that no text
can close its `<script>` element, the page builds its DOM from text nodes only, and a
Content-Security-Policy admits exactly the page's own script and style (by hash, computed
here from the template) and requests to its own origin. An injected `onerror=` would not
run even if a bug let one through.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

_MARKER = re.compile(r"@@(CSP|TITLE|DATA)@@")
_INLINE = re.compile(r"<(script|style)>(.*?)</\1>", re.S)
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def template() -> str:
    return resources.files(__package__).joinpath("index.html").read_text("utf-8")


def content_security_policy(page: str) -> str:
    """Allow the page's own inline code by hash and nothing else but same-origin fetches
    (the shims it opens) and `data:` images (its empty favicon)."""
    sources: dict[str, list[str]] = {"script": [], "style": []}
    for kind, body in _INLINE.findall(page):
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
        sources[kind].append(f"'sha256-{digest}'")
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src {' '.join(sources['script'])}",
            f"style-src {' '.join(sources['style'])}",
            "connect-src 'self'",
            "img-src data:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def embed_json(data: Any) -> str:
    """JSON that is inert inside `<script type="application/json">`: `</script>`, `<!--`
    and friends cannot occur in it, whatever the strings say."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group()], text)


def render_index(
    catalog: Mapping[str, Any], *, name: str, signatures: Mapping[str, Sequence[str]]
) -> bytes:
    """The page for a registry called `name`; `signatures` maps a shim's hex digest to the
    suffixes of the signature files published beside it (`.bundle`, `.minisig`, `.sig`)."""
    page = template()
    values = {
        "CSP": content_security_policy(page),
        "TITLE": html.escape(name),
        "DATA": embed_json(
            {
                "catalog": catalog,
                "signatures": {hex_: list(suffixes) for hex_, suffixes in signatures.items()},
            }
        ),
    }
    # One pass: a value that happens to contain a marker is not expanded again.
    return _MARKER.sub(lambda m: values[m.group(1)], page).encode("utf-8")
