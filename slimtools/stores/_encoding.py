"""Plumbing shared by the serialising stores: record encoding, size caps, name escaping.

Every durable store keeps a record as the compact JSON bytes of ``slimtools._json.dumps``
(so values orjson cannot encode natively get the same documented fallbacks everywhere) and
hands back ``slimtools._json.loads`` of them (exact: an integer beyond 64 bits stays an
integer): the JSON form the core accepts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from slimtools._json import dumps, is_utf8, loads

logger = logging.getLogger("slimtools.stores")

_MISSING: Any = object()


def encode_items(
    items: Mapping[str, Any], max_record_bytes: int | None
) -> tuple[list[tuple[str, bytes]], list[str]]:
    """Serialise ``items``; split them into ``(key, json_bytes)`` kept and keys refused.

    A record is refused when its JSON encoding is longer than ``max_record_bytes``. Refusing
    (rather than keeping a truncated copy) is deliberate: a truncated record served by
    ``get_record`` would look complete to the model, which is "silently wrong"; a refused
    key lets the core say in the hint that this record cannot be fetched again.
    """
    kept: list[tuple[str, bytes]] = []
    refused: list[str] = []
    for key, value in items.items():
        blob = dumps(value)
        if max_record_bytes is not None and len(blob) > max_record_bytes:
            refused.append(key)
        else:
            kept.append((key, blob))
    return kept, refused


def decode(blob: bytes | str | None, where: str) -> Any:
    """Decode a stored record, or return ``_MISSING`` (and log) when it is not valid JSON.

    A damaged value is reported as absent rather than raised: the core then tells the model
    to call the source tool again, which is the honest answer.
    """
    if blob is None:
        return _MISSING
    try:
        return loads(blob)
    except ValueError:  # orjson.JSONDecodeError is one
        logger.warning("slimtools: ignoring an undecodable record in %s", where)
        return _MISSING


def decode_found(pairs: Iterable[tuple[str, bytes | str | None]], where: str) -> dict[str, Any]:
    """Decode ``(key, blob)`` pairs into a dict of the keys whose blob decodes."""
    found: dict[str, Any] = {}
    for key, blob in pairs:
        value = decode(blob, where)
        if value is not _MISSING:
            found[key] = value
    return found


def escape(text: str, reserved: str) -> str:
    """Percent-escape ``%``, the ``reserved`` characters and lone surrogates in ``text``.

    Each escaped character becomes ``%XX`` per byte of its UTF-8 form (surrogates encoded
    with ``surrogatepass``). Because ``%`` itself is always escaped the mapping is
    injective, so two different names can never meet under one escaped name; and the result
    is valid UTF-8 free of ``reserved``, so it can be joined with a reserved separator.
    """
    if "%" not in text and not any(c in reserved for c in text) and is_utf8(text):
        return text
    out: list[str] = []
    for char in text:
        if char == "%" or char in reserved or "\ud800" <= char <= "\udfff":
            raw = char.encode("utf-8", "surrogatepass")
            out.append("".join(f"%{byte:02X}" for byte in raw))
        else:
            out.append(char)
    return "".join(out)


def exact_bytes(text: str) -> bytes:
    """UTF-8 bytes of ``text`` that keep lone surrogates distinct (``surrogatepass``).

    Handles arrive from model-sent JSON, where ``"\\ud800"`` is legal; a store must treat such
    a key as just another unknown key, not crash on encoding it.
    """
    return text.encode("utf-8", "surrogatepass")


def validate_limit(name: str, value: float | None) -> None:
    """Raise ``ValueError`` unless ``value`` is ``None`` or positive."""
    if value is not None and value <= 0:
        raise ValueError(f"{name} must be positive or None, got {value!r}")
