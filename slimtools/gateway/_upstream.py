"""The gateway's upstream client: one aiohttp session with a bounded pool, and the naming of
every way an exchange with the upstream fails.

aiohttp rather than httpx: on loopback an httpx hop cost about 1 ms more per request
(``bench_gateway`` measured a bare relay of each: 2.0 ms against 1.1 ms added over a direct
connection), which alone was the gateway's whole latency budget. The session keeps no
cookies (one client's cookie must never ride on another's request), adds no header the
client did not send, and drops idle connections after :data:`KEEPALIVE` seconds, before
the upstreams that close them at 5 s do (a request sent on a connection being closed is
lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import urllib.request
from collections.abc import AsyncIterator, Iterable
from urllib.parse import urlsplit

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from slimtools.gateway._request import Limits, RefusedError, connect_cause, root_cause
from slimtools.redaction import redact

TIMEOUTS = (TimeoutError, asyncio.TimeoutError)
"""What a timeout raises: two classes on Python 3.10 (one from 3.11), aiohttp's read
timeout being an ``asyncio.TimeoutError``."""

KEEPALIVE = 4.0
"""Seconds an idle upstream connection is kept for reuse."""

# Headers aiohttp would add of its own: the upstream sees only what the client sent.
_NOT_ADDED = ("User-Agent", "Accept", "Accept-Encoding")


class UpstreamError(Exception):
    """An exchange that failed before the answer started: its status and one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Upstream:
    """The model API the gateway forwards to, and the pool of connections to it.

    Args:
        base: the upstream's base URL (``https://api.anthropic.com``); paths are appended.
        limits: the connect and read timeouts and the pool's size.
    """

    def __init__(self, base: str, limits: Limits) -> None:
        self.base = base.rstrip("/")
        self.name = redact(self.base)  # as messages name it: without a password it holds
        parts = urlsplit(self.base)
        self.base_path = parts.path.rstrip("/")
        self.limits = limits
        self.proxy = _env_proxy(parts.scheme, parts.hostname or "")
        self._session: aiohttp.ClientSession | None = None
        self._slots: asyncio.Semaphore | None = None

    def session(self) -> aiohttp.ClientSession:
        """The session (made on first use, inside the event loop)."""
        if self._session is None or self._session.closed:
            limits = self.limits
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=limits.max_connections,
                    keepalive_timeout=KEEPALIVE,
                    ssl=trust_store(),
                ),
                timeout=aiohttp.ClientTimeout(
                    total=None,
                    connect=limits.connect_timeout,
                    sock_connect=limits.connect_timeout,
                    sock_read=limits.read_timeout,
                ),
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=_NOT_ADDED,
                auto_decompress=False,
            )
            self._slots = asyncio.Semaphore(limits.max_connections)
        return self._session

    async def close(self) -> None:
        """Close the session and every connection it holds."""
        if self._session is not None:
            await self._session.close()

    @contextlib.asynccontextmanager
    async def exchange(
        self,
        method: str,
        path: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        *,
        decoded: bool,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """Send one request and yield its answer, its body still to read; the connection
        goes back to the pool once the body was read whole, and is closed otherwise.

        Raises:
            UpstreamError: no free connection within the connect timeout (503 "pool
                exhausted"), or the exchange failed before the answer's status came.
            RefusedError: a path the upstream's URL cannot take (400).
        """
        session = self.session()
        assert self._slots is not None
        if not self._slots.locked():
            await self._slots.acquire()
        else:  # every connection busy: wait for one, at most the connect timeout
            try:
                await asyncio.wait_for(self._slots.acquire(), self.limits.connect_timeout)
            except asyncio.TimeoutError:
                raise UpstreamError(*self.pool_exhausted()) from None
        try:
            try:
                answer = await session.request(
                    method,
                    URL(self.base + path, encoded=True),
                    headers=CIMultiDict(headers),
                    data=body if body or method in ("POST", "PUT", "PATCH") else None,
                    allow_redirects=False,
                    auto_decompress=decoded,
                    proxy=self.proxy,
                )
            except aiohttp.InvalidURL as exc:  # it quotes the URL: the base's password too
                raise RefusedError(
                    400, f"the path cannot be forwarded: {redact(str(exc))}"
                ) from None
            except (aiohttp.ClientError, *TIMEOUTS) as exc:  # before ValueError: a
                raise UpstreamError(*self.failure(exc)) from None  # bad certificate is one
            except ValueError as exc:
                raise RefusedError(
                    400, f"the path cannot be forwarded: {redact(str(exc))}"
                ) from None
            try:
                yield answer
            finally:
                if answer.content.is_eof():
                    answer.release()
                else:
                    answer.close()
        finally:
            self._slots.release()

    def pool_exhausted(self) -> tuple[int, str]:
        """The answer when every connection stayed busy for the connect timeout."""
        limits = self.limits
        return 503, (
            f"pool exhausted: all {limits.max_connections} upstream connections stayed busy "
            f"for {limits.connect_timeout:g} s (raise --max-upstream-connections)"
        )

    def failure(self, exc: BaseException) -> tuple[int, str]:
        """The status and one-line message for a failed exchange, naming the cause (and
        redacted: a proxy's URL in the cause may hold a password too)."""
        status, message = self._failure(exc)
        return status, redact(message)

    def _failure(self, exc: BaseException) -> tuple[int, str]:
        upstream, limits = self.name, self.limits
        if isinstance(exc, aiohttp.ConnectionTimeoutError):
            return 504, (
                f"upstream unreachable: {upstream}: no connection within "
                f"{limits.connect_timeout:g} s"
            )
        if isinstance(exc, TIMEOUTS):  # aiohttp's read timeout is one too
            return 504, f"upstream timed out: {upstream}: silent for {limits.read_timeout:g} s"
        if isinstance(exc, aiohttp.ClientConnectorError):
            root = (
                getattr(exc, "certificate_error", None)
                or getattr(exc, "os_error", None)
                or root_cause(exc)
            )
            detail = str(root) or type(root).__name__
            return 502, f"upstream unreachable: {upstream}: {connect_cause(root)} ({detail})"
        root = root_cause(exc)
        detail = str(root) or type(root).__name__
        if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError,
                            aiohttp.ClientOSError, ConnectionError)):  # fmt: skip
            return 502, f"upstream connection reset: {upstream} ({detail})"
        return 502, f"upstream failed: {upstream}: {type(exc).__name__} ({detail})"


def trust_store() -> ssl.SSLContext:
    """The certificates an HTTPS upstream is verified against, as httpx chose them: the
    file or folder ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name (a company's own CA), else
    certifi's bundle (a Python without a system store, as on macOS, still verifies), else
    the system's."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    try:
        import certifi
    except ImportError:  # pragma: no cover - the gateway extra installs it
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def _env_proxy(scheme: str, host: str) -> str | None:
    """The proxy the environment names for the upstream (``HTTPS_PROXY``, ``NO_PROXY``...),
    read once: aiohttp's own ``trust_env`` reads it again on every request."""
    if not host or urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(scheme)
