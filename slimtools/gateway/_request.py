"""What the gateway makes of a client's request line and headers, free of I/O.

Every rule that turns client input into a refusal lives here, so that the app answers a
bad request with a 4xx and one log line instead of failing inside the HTTP client: a path
with a control character or one too long, a path whose dot segments (``..``, ``%2e%2e``,
``..%2f``) would climb out of the upstream's base path. Header values pass as the bytes
that came: nothing here decodes them, so a value outside ASCII is relayed, not refused.
"""

from __future__ import annotations

import asyncio
import hmac
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote_to_bytes

import orjson

MAX_PATH_BYTES = 8192
"""The longest request path, and the longest query, forwarded; longer ones get 414, as
most servers answer (the upstream would refuse them too)."""

# Hop-by-hop headers (RFC 9110 7.6.1), those the HTTP client sets again itself, and
# ``expect``: the gateway reads the whole body before it forwards, so a ``100-continue``
# upstream would only add a round trip (or a 417 from a server that refuses it).
REQUEST_DROP = frozenset(
    {
        b"host",
        b"content-length",
        b"connection",
        b"keep-alive",
        b"transfer-encoding",
        b"upgrade",
        b"te",
        b"trailer",
        b"proxy-connection",
        b"expect",
    }
)


@dataclass(frozen=True, slots=True)
class Limits:
    """What bounds one gateway in bytes and time (each a ``slimtools gateway`` option).

    Attributes:
        max_body: the largest request body accepted, in bytes (larger: 413). Anthropic and
            OpenAI refuse bodies past 32 MB themselves.
        connect_timeout: seconds to open an upstream connection, and to wait for a free one
            when all ``max_connections`` are busy.
        read_timeout: seconds the upstream may stay silent (before its answer's first byte
            or between two chunks) before the request is given up with a 504. A model may
            think for minutes before it answers a request that is not streamed; the SDKs
            wait 600 s for it.
        max_connections: upstream connections open at once; a request past it waits
            ``connect_timeout`` for one, then gets 503 "pool exhausted".
    """

    max_body: int = 32 * 1024 * 1024
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    max_connections: int = 100


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""The ``Host`` names ``/slimtools/stats`` always answers to."""


@dataclass(frozen=True, slots=True)
class RefusedError(Exception):
    """A request the gateway answers itself with ``status`` and ``message`` (never a 500)."""

    status: int
    message: str

    def __str__(self) -> str:
        return f"{self.status} {self.message}"


def target_path(raw_path: bytes, base: str, query: bytes = b"") -> tuple[str, bool]:
    """The path (and query) to append to the upstream's base URL, and whether a doubled
    ``/v1`` was dropped (a client given ``…/v1`` as its base URL whose upstream already
    ends in it).

    ``raw_path`` is the request's path as it came (percent-encoded). A path without dot
    segments goes as it came; one with them is resolved (RFC 3986 5.2.4) and sent
    re-encoded.

    Raises:
        RefusedError: 414 for a path or query longer than :data:`MAX_PATH_BYTES`; 400 for
            a control character (``%00`` included) or a path whose ``..`` would leave the
            base.
    """
    if len(raw_path) > MAX_PATH_BYTES or len(query) > MAX_PATH_BYTES:
        raise RefusedError(414, f"the path or query is longer than {MAX_PATH_BYTES} bytes")
    try:
        tail = "?" + query.decode("ascii") if query else ""
    except UnicodeDecodeError:
        raise RefusedError(400, "the query is not percent-encoded") from None
    decoded = unquote_to_bytes(raw_path)
    if any(b < 0x20 or b == 0x7F for b in decoded):
        raise RefusedError(400, "the path holds a control character")
    try:
        text = raw_path.decode("ascii")
        plain = decoded.decode("utf-8")
    except UnicodeDecodeError:
        raise RefusedError(400, "the path is not percent-encoded UTF-8") from None
    if not text.startswith("/"):
        raise RefusedError(400, "the path does not start with '/'")
    segments = plain.split("/")
    if any(s in (".", "..") for s in segments):
        resolved: list[str] = []
        for segment in segments[1:]:
            if segment == "..":
                if not resolved:
                    raise RefusedError(400, "the path leaves the upstream's base path")
                resolved.pop()
            elif segment != ".":
                resolved.append(segment)
        if segments[-1] in (".", ".."):
            resolved.append("")  # "/a/b/.." is "/a/", a directory
        text = "/" + "/".join(quote(s, safe="!$&'()*+,;=:@~-._") for s in resolved)
    doubled = base.endswith("/v1") and (text == "/v1" or text.startswith("/v1/"))
    return ((text[3:] or "/") + tail, True) if doubled else (text + tail, False)


# Hop-by-hop response headers, and those the server sets again for the relayed body.
RESPONSE_DROP = frozenset(
    {b"content-length", b"connection", b"keep-alive", b"transfer-encoding", b"content-encoding"}
)


def relayed_headers(
    headers: Iterable[tuple[bytes, bytes]], *, decoded: bool, head: bool
) -> list[tuple[bytes, bytes]]:
    """The upstream's answer headers to relay, as the bytes that came: a ``decoded`` body
    drops its ``content-encoding``; an answer to ``HEAD`` keeps its ``content-length``."""
    drop = RESPONSE_DROP if decoded else RESPONSE_DROP - {b"content-encoding"}
    if head:  # no body follows: the length the upstream gave is the answer
        drop = drop - {b"content-length"}
    return [(k.lower(), v) for k, v in headers if k.lower() not in drop]


def check_declared_length(headers: Iterable[tuple[bytes, bytes]], limit: int) -> None:
    """Refuse a body whose ``content-length`` passes ``limit`` before any of it is read.

    Raises:
        RefusedError: 413 past the limit, 400 for a length that is not a number.
    """
    for key, value in headers:
        if key.lower() == b"content-length":
            if not value.isdigit():
                raise RefusedError(400, "content-length is not a number")
            if int(value) > limit:
                raise RefusedError(413, f"the body is larger than {limit} bytes")


def forwarded_headers(
    headers: Iterable[tuple[bytes, bytes]], *, identity: bool
) -> list[tuple[bytes, bytes]]:
    """The client's headers to send upstream, as the bytes that came, hop-by-hop ones
    dropped; ``identity`` asks for an uncompressed answer (to read its usage)."""
    out = [(k, v) for k, v in headers if k.lower() not in REQUEST_DROP]
    if identity:
        out = [(k, v) for k, v in out if k.lower() != b"accept-encoding"]
        out.append((b"accept-encoding", b"identity"))
    return out


_KIND = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error"}


def error_body(status: int, message: str) -> bytes:
    """The gateway's own error as JSON, in Anthropic's shape (which the OpenAI SDKs read)."""
    kind = _KIND.get(status, "invalid_request_error" if status < 500 else "api_error")
    return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})


def stats_refusal(
    host: str, authorization: str, token: str, hosts: frozenset[str]
) -> RefusedError | None:
    """Why ``/slimtools/stats`` is refused to a request with these ``Host`` and
    ``Authorization`` headers (None: it is not): 403 for a host not in ``hosts`` (DNS
    rebinding), 401 without the bearer ``token``."""
    name = host.rpartition("]")[0].lstrip("[") if host.startswith("[") else host.partition(":")[0]
    if name.lower() not in hosts:
        return RefusedError(403, f"Host {host[:100]!r} is not one the stats answer to")
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        return RefusedError(401, "the stats need the gateway's token: Authorization: Bearer …")
    return None


def root_cause(exc: BaseException) -> BaseException:
    """The innermost exception of a chain (the HTTP client wraps the OS error that names
    the cause)."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def connect_cause(root: BaseException) -> str:
    """Why a connection could not be opened, in words."""
    if isinstance(root, ConnectionRefusedError):
        return "connection refused"
    if isinstance(root, socket.gaierror):
        return "DNS lookup failed"
    if isinstance(root, ssl.SSLError):
        return "TLS handshake failed"
    if isinstance(root, ConnectionResetError):
        return "connection reset"
    if isinstance(root, (TimeoutError, asyncio.TimeoutError)):
        return "timed out"
    return "connection failed"
