"""Store keys and handles: the naming rules shared by the pipeline and ``get_record``.

A key is ``<kind>:<tool>:<rest>``: ``r`` for a full record (rest: its handle), ``t`` for a
full text (its handle), ``s`` for a page-1 snapshot (a digest of the query's arguments).
Keys are built and read back only here.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

from slimtools._core.jsonenc import dumps


def record_key(tool: str, handle: str) -> str:
    """Store key of a full record."""
    return f"r:{tool}:{handle}"


def text_key(tool: str, handle: str) -> str:
    """Store key of a full text."""
    return f"t:{tool}:{handle}"


def snapshot_key(tool: str, digest: str) -> str:
    """Store key of the page-1 snapshot of one query."""
    return f"s:{tool}:{digest}"


def handle_of(key: str, tool: str) -> str:
    """The handle (or digest) in ``key``, one of ``tool``'s keys.

    Read by the tool's own prefix rather than split at ``:``, which tool names and handles
    may both contain.
    """
    return key[len(tool) + 3 :]


def is_snapshot_key(key: str) -> bool:
    """True for the key of a page-1 snapshot (not a record or a text)."""
    return key.startswith("s:")


def args_digest(args: Mapping[str, Any]) -> str:
    """Stable digest of call arguments (key order does not matter)."""
    canonical = dumps(dict(sorted(args.items())))
    return hashlib.blake2b(canonical, digest_size=10).hexdigest()


def make_handle(value: Any) -> str:
    """A short handle from content: 8 base32 characters (40 bits) of its hash."""
    digest = hashlib.blake2b(dumps(value), digest_size=5).digest()
    return base64.b32encode(digest).decode("ascii").lower()


def normalize_handle(value: Any) -> str | None:
    """The canonical string of a handle as a model may send it (``3`` == ``"3"``)."""
    if type(value) is int:  # the usual id, checked first (a bool is not exactly an int)
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        text = value.strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
            text = text[1:-1].strip()
        return text or None
    if isinstance(value, float):
        return repr(value)
    return None
