"""Store keys, handles and call text: the small naming rules shared by tools and get_record."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

from slimtools._core.jsonenc import dumps, dumps_str


def record_key(tool: str, handle: str) -> str:
    """Store key of a full record."""
    return f"r:{tool}:{handle}"


def text_key(tool: str, handle: str) -> str:
    """Store key of a full text."""
    return f"t:{tool}:{handle}"


def snapshot_key(tool: str, digest: str) -> str:
    """Store key of the page-1 snapshot of one query."""
    return f"s:{tool}:{digest}"


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


def format_call(name: str, args: Mapping[str, Any]) -> str:
    """``name(k=v, ...)`` with JSON values: the exact call the model can make next."""
    inner = ", ".join(f"{k}={dumps_str(v)}" for k, v in args.items())
    return f"{name}({inner})"


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as a file reader sees them.

    Only ``\n`` (and ``\r\n``) end a line, and a final newline ends the last line rather
    than starting an empty one. ``str.splitlines`` was rejected: it also splits on form
    feeds, U+2028 and other separators, which pages would then rejoin as ``\n``, changing
    the text.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def chunks(text: str, size: int) -> list[str]:
    """Split ``text`` into pieces of at most ``size`` characters (for oversized records)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
