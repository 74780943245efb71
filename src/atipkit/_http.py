"""The one way atipkit reads from the network: bounded HTTP GETs.

Remote registries and the crawler fetch from hosts that may be slow, broken or hostile, so
every request here has the same guards:

- a size cap, checked against `Content-Length` before reading and counted while reading,
  both the bytes received and the bytes they decode to: atipkit decodes `gzip` and
  `deflate` itself, one layer at most, in steps of 64 KiB, so a compression bomb stops at
  the cap after 64 KiB more (httpx would decode a whole received chunk at once, and
  `Content-Encoding: gzip, gzip` made 2.5 KB cost 2 GiB: bench/http_bombs.py). Stacked
  or other encodings (`br`, `zstd`, which atipkit never asks for) are refused;
- timeouts per operation and a deadline for the whole response, headers included (a
  server that drips one byte a second does not hold a lookup for ever);
- redirects followed by hand, only to the same origin (scheme, host and port) unless the
  caller allows other origins, never from https to http, at most five;
- credentials (an `Authorization` header) sent only to the origin they belong to, never
  after a redirect elsewhere, and never written into an error message;
- header values that HTTP does not allow (bytes outside visible ASCII, such as a hostile
  server's `ETag` sent back in `If-None-Match`) are refused before anything is sent.
  `entity_tag` and `http_date` tell a caller which validators it may keep.

`httpx` is imported when a `Fetcher` is made, so `import atipkit` does not pay for it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
import time
import zlib
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from atipkit._version import __version__
from atipkit.errors import AtipError

if TYPE_CHECKING:
    import ssl

    import httpx

MAX_REDIRECTS = 5
USER_AGENT = f"atipkit/{__version__}"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
ACCEPT_ENCODING = "gzip, deflate"
"""What `get` asks for: the encodings decoded here, each within the cap. `download` asks
for `identity` (archives are compressed already, and their digest is of the file)."""
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}
_STEP = 64 * 1024
"""The most one decompression step may produce: the memory a bomb costs beyond the cap."""
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*\Z")
_ENTITY_TAG = re.compile(r'(W/)?"[\x21\x23-\x7e]*"\Z')
MAX_VALIDATOR = 1024


class HttpError(AtipError):
    """A request that did not give a usable response. `url` is the address asked for
    (credentials are never part of it or of the message)."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{url}: {message}")
        self.url = url


class NetworkError(HttpError):
    """The host could not be reached, or did not answer in time."""


class ResponseTooLarge(HttpError):
    """The response is larger than the limit; it was not read past the limit."""


class RedirectRefused(HttpError):
    """A redirect to another origin (or from https to http) that was not allowed."""


class EncodingRefused(HttpError):
    """A body in a `Content-Encoding` that is not decoded here (stacked, unknown), or one
    that does not decode."""


class StatusError(HttpError):
    """An HTTP status the caller did not expect."""

    def __init__(self, url: str, status: int) -> None:
        super().__init__(url, f"HTTP {status}")
        self.status = status


class Response:
    """A response read whole (or, for `download`, written to a file)."""

    def __init__(self, url: str, status: int, headers: Mapping[str, str], content: bytes) -> None:
        self.url = url
        self.status = status
        self.headers = headers
        self.content = content


def origin(url: str) -> str:
    """`scheme://host:port`, with the default port made explicit, lower case."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def entity_tag(value: object) -> str | None:
    """`value` when it is an entity tag RFC 9110 §8.8.3 allows — `"..."` or `W/"..."`
    of visible ASCII but `"` — and at most `MAX_VALIDATOR` long; else None. (The RFC also
    allows obs-text, bytes 0x80-0xFF; they cannot be sent back as a header here.)"""
    if isinstance(value, str) and len(value) <= MAX_VALIDATOR and _ENTITY_TAG.match(value):
        return value
    return None


def http_date(value: object) -> str | None:
    """`value` when it is an HTTP-date (RFC 9110 §5.6.7) of printable ASCII; else None."""
    import email.utils

    if not isinstance(value, str) or len(value) > 64 or not _HEADER_VALUE.match(value):
        return None
    try:
        email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return value


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine by a loopback address (`is_loopback_host`), where
    plain HTTP cannot be overheard: a bearer token may go there unencrypted."""
    try:
        host = urlsplit(url).hostname
    except ValueError:  # a malformed IPv6 literal
        return False
    return is_loopback_host(host or "")


def is_loopback_host(host: str) -> bool:
    """Whether `host` (a URL's host or a `Host` header's name, IPv6 brackets allowed) is
    a loopback address: an IP literal in 127.0.0.0/8 or ::1 (also IPv4-mapped), or the
    name `localhost`. Exactly: `127.evil.com` is a name anyone may point anywhere."""
    import ipaddress

    name = host.strip().lower().removeprefix("[").removesuffix("]")
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


class Fetcher:
    """A pooled HTTP client with the guards above. Use it as a context manager, or call
    `close()`.

    `allowed_origins` are origins (`https://cdn.example.com`) a redirect may lead to besides
    the origin of the URL asked for. `deadline` bounds one whole response in seconds.
    """

    def __init__(
        self,
        *,
        connect_timeout: float = 5.0,
        read_timeout: float = 10.0,
        deadline: float = 60.0,
        allowed_origins: Collection[str] = (),
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        self.deadline = deadline
        self.allowed_origins = frozenset(origin(o) for o in allowed_origins)
        self._client = httpx.Client(
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT},
            transport=transport,
            verify=_tls_context(),
            trust_env=False,  # no proxy or .netrc surprises: registries are configured
        )

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def get(
        self,
        url: str,
        *,
        max_bytes: int,
        headers: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> Response:
        """GET `url` and read the body whole. Any final status is returned (the caller
        decides what 404 or 304 means); redirects are followed within the rules.

        `credentials` are headers (such as `Authorization`) sent only to the origin of `url`.
        """
        sent = {"Accept-Encoding": ACCEPT_ENCODING, **(headers or {})}
        with self._open(url, sent, credentials) as (response, final_url, deadline):
            body = b"".join(self._chunks(response, final_url, max_bytes, deadline))
            return Response(final_url, response.status_code, response.headers, body)

    def download(
        self,
        url: str,
        destination: str | os.PathLike[str],
        *,
        max_bytes: int,
        headers: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
    ) -> str:
        """Stream `url` into `destination` (written under a temporary name and renamed
        when complete); returns the sha256 hex digest of what was written. Any status
        other than 200 is a `StatusError`."""
        target = Path(destination)
        partial = target.with_name(f".{target.name}.part")
        digest = hashlib.sha256()
        sent = {"Accept-Encoding": "identity", **(headers or {})}
        with self._open(url, sent, credentials) as (response, final_url, deadline):
            if response.status_code != 200:
                raise StatusError(final_url, response.status_code)
            try:
                with open(partial, "wb") as out:
                    for chunk in self._chunks(response, final_url, max_bytes, deadline):
                        digest.update(chunk)
                        out.write(chunk)
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
        return digest.hexdigest()

    # -- the guarded exchange ----------------------------------------------------------

    @contextmanager
    def _open(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        credentials: Mapping[str, str] | None,
    ) -> Iterator[tuple[httpx.Response, str, float]]:
        import httpx

        for name, value in {**(headers or {}), **(credentials or {})}.items():
            if not _HEADER_VALUE.match(value):
                raise HttpError(url, f"the {name} header holds bytes HTTP does not allow; not sent")
        try:
            home = origin(url)
        except ValueError:  # a port out of range, an unclosed [
            raise HttpError(url[:200], "not a valid address") from None
        current = url
        started = time.monotonic()
        for _hop in range(MAX_REDIRECTS + 1):
            sent: dict[str, str] = dict(headers or {})
            if credentials and origin(current) == home:
                sent.update(credentials)
            try:
                request = self._client.build_request("GET", current, headers=sent)
            except (httpx.InvalidURL, ValueError):
                raise HttpError(current[:200], "not a URL that can be asked") from None
            try:
                response = self._send(request, current, started + self.deadline)
            except httpx.TimeoutException:
                # the client's own timeout, which may be the deadline too and race it
                late = time.monotonic() >= started + self.deadline
                reason = f"no response within {self.deadline:g} s" if late else "timed out"
                raise NetworkError(current, reason) from None
            except httpx.HTTPError as exc:
                raise NetworkError(current, _reason(exc)) from None
            if response.status_code not in _REDIRECTS or "location" not in response.headers:
                try:
                    yield response, current, started + self.deadline
                finally:
                    response.close()
                return
            target = urljoin(current, response.headers["location"])
            response.close()
            self._check_redirect(current, target, home)
            current = target
        raise RedirectRefused(url, f"more than {MAX_REDIRECTS} redirects")

    def _send(self, request: httpx.Request, url: str, deadline: float) -> httpx.Response:
        """Send and wait for the headers, within the deadline. Read timeouts alone do not
        bound this: a server may drip header bytes just under the timeout for hours. The
        exchange runs in a worker; past the deadline it is abandoned, and the worker
        closes its response whenever the server finally answers."""
        outcome: dict[str, Any] = {}
        lock = threading.Lock()

        def exchange() -> None:
            try:
                response = self._client.send(request, stream=True)
            except BaseException as exc:  # handed to the caller below
                with lock:
                    outcome["error"] = exc
                return
            with lock:
                if outcome.get("abandoned"):
                    response.close()
                else:
                    outcome["response"] = response

        worker = threading.Thread(target=exchange, name="atipkit-http", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        with lock:
            if not ("response" in outcome or "error" in outcome):
                outcome["abandoned"] = True
                raise NetworkError(url, f"no response within {self.deadline:g} s")
        if "error" in outcome:
            raise outcome["error"]
        return outcome["response"]

    def _check_redirect(self, current: str, target: str, home: str) -> None:
        try:
            origin(target)
        except ValueError:  # a port out of range, an unclosed [
            reason = f"redirect to an invalid address ({target[:200]})"
            raise RedirectRefused(current, reason) from None
        if urlsplit(target).scheme.lower() not in ("http", "https"):
            raise RedirectRefused(current, f"redirect to a non-HTTP address ({target[:200]})")
        if urlsplit(current).scheme == "https" and urlsplit(target).scheme == "http":
            raise RedirectRefused(current, "redirect from https to http")
        if origin(target) != home and origin(target) not in self.allowed_origins:
            raise RedirectRefused(
                current,
                f"redirect to another origin ({origin(target)}); allow it in the registry's "
                "configuration (allowRedirectsTo) if it is expected",
            )

    def _chunks(
        self, response: httpx.Response, url: str, max_bytes: int, deadline: float
    ) -> Iterator[bytes]:
        """The body as it arrives, decoded, within `max_bytes` (received and decoded) and
        the deadline."""
        import httpx

        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ResponseTooLarge(url, f"{int(declared)} bytes, more than the limit {max_bytes}")
        decoder = _Decoder.of(url, response.headers.get("content-encoding", ""))
        received = produced = 0

        def within(size: int) -> None:
            if size > max_bytes:
                raise ResponseTooLarge(url, f"more than the limit of {max_bytes} bytes")
            if time.monotonic() > deadline:
                raise NetworkError(url, f"the response took longer than {self.deadline:g} s")

        try:
            for chunk in response.iter_raw():  # as it arrives: a chunk size would buffer
                received += len(chunk)
                within(received)  # also when the chunk decodes to nothing (a gzip header)
                for piece in decoder.feed(chunk) if decoder else (chunk,):
                    produced += len(piece)
                    within(produced)
                    yield piece
            if decoder and received:  # an empty body (a 304, say) is empty in any encoding
                decoder.finish()
        except httpx.TimeoutException:
            raise NetworkError(url, "timed out while reading") from None
        except httpx.HTTPError as exc:
            raise NetworkError(url, _reason(exc)) from None


class _Decoder:
    """One layer of gzip or deflate, decoded in steps of at most `_STEP` bytes: however
    much a received chunk expands to, no step holds more than that, and the caller counts
    every step against the cap."""

    def __init__(self, url: str, encoding: str) -> None:
        self.url = url
        self.encoding = encoding
        self._inflate = zlib.decompressobj(_WBITS[encoding])
        self._head: bytes | None = b"" if encoding == "deflate" else None
        """deflate's first bytes, until two tell whether the zlib wrapper is there."""

    @classmethod
    def of(cls, url: str, header: str) -> _Decoder | None:
        """The decoder for a `Content-Encoding` value; None for none (or `identity`)."""
        layers = [e.strip().lower() for e in header.split(",") if e.strip()]
        layers = [e for e in layers if e != "identity"]
        if not layers:
            return None
        if len(layers) > 1:
            raise EncodingRefused(
                url, f"Content-Encoding {header[:80]!r}: more than one layer is not accepted"
            )
        if layers[0] not in _WBITS:
            raise EncodingRefused(
                url, f"Content-Encoding {layers[0][:40]!r} is not accepted (gzip or deflate)"
            )
        return cls(url, layers[0])

    def feed(self, data: bytes) -> Iterator[bytes]:
        """What `data` decodes to, in steps of at most `_STEP` bytes."""
        if self._head is not None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._head = None
            if data[0] & 0x0F != 8 or (data[0] << 8 | data[1]) % 31:
                # raw deflate, without the zlib wrapper, as some servers send it
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        full = False
        while data or full:
            if self._inflate.eof:
                raise EncodingRefused(self.url, f"data after the end of the {self.encoding} body")
            try:
                out = self._inflate.decompress(data, _STEP)
            except zlib.error:
                raise EncodingRefused(
                    self.url, f"the {self.encoding} body does not decode"
                ) from None
            data = self._inflate.unconsumed_tail
            if self._inflate.eof and self._inflate.unused_data:
                raise EncodingRefused(self.url, f"data after the end of the {self.encoding} body")
            # a full step may leave output inside though all input is taken (the rest of
            # a match): ask again, with no input, until a step comes out short
            full = len(out) == _STEP and not self._inflate.eof
            if out:
                yield out

    def finish(self) -> None:
        """Refuse a body cut short: every byte has come out of `feed` by now, and the
        stream must have reached its end."""
        if not self._inflate.eof:
            raise EncodingRefused(self.url, f"the {self.encoding} body is cut short")


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context (certifi's roots) for every client: each registry has its own
    `Fetcher`, and a context of its own (certifi loaded again) costs each about 0.7 MB."""
    import httpx

    return httpx.create_ssl_context()


def _reason(exc: Any) -> str:
    """A one-line reason without the request (whose headers may carry a token)."""
    text = str(exc).strip().splitlines()
    return text[-1] if text and text[-1] else type(exc).__name__
