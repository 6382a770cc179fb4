"""The marker every placeholder starts with, and how a cleared result is recognised.

Every placeholder starts with ``[cleared <digest>] `` where ``<digest>`` is a salted checksum
of the rest of the text. Real content cannot pass for a placeholder by accident (a test of
``startswith("[")`` also matches every JSON array), and a placeholder edited afterwards no
longer verifies, so it is never mistaken for one of ours either.
"""

from __future__ import annotations

import zlib

MARKER_PREFIX = "[cleared "
_DIGEST_CHARS = 8
_BODY_START = len(MARKER_PREFIX) + _DIGEST_CHARS + 2  # "<digest>] "
_SALT = zlib.crc32(b"slimtools.clearing.v1")


def seal(body: str, max_chars: int) -> str:
    """The placeholder around ``body``: the checksummed marker, at most ``max_chars``."""
    if len(body) > max_chars - _BODY_START:
        room = max(1, max_chars - _BODY_START)
        body = body[: room - 1] + "…"
    raw = body.encode() if body.isascii() else body.encode("utf-8", "surrogatepass")
    return f"{MARKER_PREFIX}{zlib.crc32(raw, _SALT):08x}] {body}"


def is_placeholder(text: str) -> bool:
    """True when ``text`` is a placeholder this module produced (its digest verifies)."""
    if not text.startswith(MARKER_PREFIX) or len(text) < _BODY_START:
        return False
    digest = text[len(MARKER_PREFIX) : len(MARKER_PREFIX) + _DIGEST_CHARS]
    if text[_BODY_START - 2 : _BODY_START] != "] ":
        return False
    return digest == _digest(text[_BODY_START:])


def _digest(body: str) -> str:
    # CRC-32 of the salted body: not a defence against forgery (nothing secret here), only
    # against accidents, for which 32 bits next to a fixed prefix are plenty; 5x cheaper
    # than a cryptographic hash.
    raw = body.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(raw, _SALT):08x}"
