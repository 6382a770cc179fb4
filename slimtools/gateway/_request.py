"""What the gateway makes of a client's request line and headers, free of I/O.

Every rule that turns client input into a refusal lives here, so that the app answers a
bad request with a 4xx and one log line instead of failing inside the HTTP client: a path
with a control character or one too long, a path whose dot segments (``..``, ``%2e%2e``,
``..%2f``) would climb out of the upstream's base path. Header values pass as the bytes
that came: nothing here decodes them, so a value outside ASCII is relayed, not refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, unquote_to_bytes

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
class RefusedError(Exception):
    """A request the gateway answers itself with ``status`` and ``message`` (never a 500)."""

    status: int
    message: str

    def __str__(self) -> str:
        return f"{self.status} {self.message}"


def target_path(raw_path: bytes, base: str) -> tuple[str, bool]:
    """The path to append to the upstream's base URL, and whether a doubled ``/v1`` was
    dropped (a client given ``…/v1`` as its base URL whose upstream already ends in it).

    ``raw_path`` is the request's path as it came (percent-encoded). A path without dot
    segments goes as it came; one with them is resolved (RFC 3986 5.2.4) and sent
    re-encoded.

    Raises:
        RefusedError: 414 for a path longer than :data:`MAX_PATH_BYTES`; 400 for a control
            character (``%00`` included) or a path whose ``..`` would leave the base.
    """
    if len(raw_path) > MAX_PATH_BYTES:
        raise RefusedError(414, f"the path is longer than {MAX_PATH_BYTES} bytes")
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
    return (text[3:] or "/", True) if doubled else (text, False)


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
