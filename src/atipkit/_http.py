"""The one way atipkit reads from the network: bounded HTTP GETs.

Remote registries and the crawler fetch from hosts that may be slow, broken or hostile, so
every request here has the same guards:

- a size cap, checked against `Content-Length` before reading and counted while reading
  (decoded bytes, so a compressed bomb stops at the cap too);
- timeouts per operation and a deadline for the whole response, headers included (a
  server that drips one byte a second does not hold a lookup for ever);
- redirects followed by hand, only to the same origin (scheme, host and port) unless the
  caller allows other origins, never from https to http, at most five;
- credentials (an `Authorization` header) sent only to the origin they belong to, never
  after a redirect elsewhere, and never written into an error message.

`httpx` is imported when a `Fetcher` is made, so `import atipkit` does not pay for it.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from atipkit._version import __version__
from atipkit.errors import AtipError

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 5
USER_AGENT = f"atipkit/{__version__}"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


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


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


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
        with self._open(url, headers, credentials) as (response, final_url, deadline):
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
        with self._open(url, headers, credentials) as (response, final_url, deadline):
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

        home = origin(url)
        current = url
        started = time.monotonic()
        for _hop in range(MAX_REDIRECTS + 1):
            sent: dict[str, str] = dict(headers or {})
            if credentials and origin(current) == home:
                sent.update(credentials)
            request = self._client.build_request("GET", current, headers=sent)
            try:
                response = self._send(request, current, started + self.deadline)
            except httpx.TimeoutException:
                raise NetworkError(current, "timed out") from None
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
        import httpx

        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ResponseTooLarge(url, f"{int(declared)} bytes, more than the limit {max_bytes}")
        seen = 0
        try:
            for chunk in response.iter_bytes():  # as it arrives: a chunk size would buffer
                seen += len(chunk)
                if seen > max_bytes:
                    raise ResponseTooLarge(url, f"more than the limit of {max_bytes} bytes")
                if time.monotonic() > deadline:
                    raise NetworkError(url, f"the response took longer than {self.deadline:g} s")
                yield chunk
        except httpx.TimeoutException:
            raise NetworkError(url, "timed out while reading") from None
        except httpx.HTTPError as exc:
            raise NetworkError(url, _reason(exc)) from None


def _reason(exc: Any) -> str:
    """A one-line reason without the request (whose headers may carry a token)."""
    text = str(exc).strip().splitlines()
    return text[-1] if text and text[-1] else type(exc).__name__
