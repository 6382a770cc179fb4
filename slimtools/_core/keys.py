"""Store keys and handles: the naming rules shared by the pipeline and ``get_record``.

A key is ``<kind>:<tool>:<rest>``: ``r`` for a full record (rest: its handle), ``t`` for a
full text (its handle), ``s`` for a page-1 snapshot (a digest of the query's arguments).
Keys are built and read back only here.

The tool's name is written with ``%`` and ``:`` percent-escaped (``%25``, ``%3A``), so the
first ``:`` after it ends it: tool ``a:b`` with handle ``c`` (``r:a%3Ab:c``) never meets tool
``a`` with handle ``b:c`` (``r:a:b:c``). The handle comes last and is never escaped. A name
with neither character (every plain name) is written as is, so its keys are byte for byte
those of earlier versions and records persisted by them still resolve; only records of
names holding ``:`` or ``%`` that an earlier version wrote are no longer found (they read as
expired). (Rejected: escaping every key, or a length prefix, which would strand every
record already persisted in a durable store.)
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

from slimtools._json import dumps


def tool_part(tool: str) -> str:
    """``tool`` as keys write it: ``%`` and ``:`` percent-escaped, a plain name unchanged."""
    if ":" not in tool and "%" not in tool:
        return tool
    return tool.replace("%", "%25").replace(":", "%3A")


def record_key(tool: str, handle: str) -> str:
    """Store key of a full record."""
    return f"r:{tool_part(tool)}:{handle}"


def text_key(tool: str, handle: str) -> str:
    """Store key of a full text."""
    return f"t:{tool_part(tool)}:{handle}"


def snapshot_key(tool: str, digest: str) -> str:
    """Store key of the page-1 snapshot of one query."""
    return f"s:{tool_part(tool)}:{digest}"


def handle_of(key: str, tool: str) -> str:
    """The handle (or digest) in ``key``, one of ``tool``'s keys.

    Read by the tool's own (escaped) prefix rather than split at ``:``, which handles may
    contain.
    """
    return key[len(tool_part(tool)) + 3 :]


def is_snapshot_key(key: str) -> bool:
    """True for the key of a page-1 snapshot (not a record or a text)."""
    return key.startswith("s:")


def args_digest(args: Mapping[str, Any]) -> str:
    """Stable digest of call arguments (key order does not matter)."""
    key = frozen_args(args)
    if key is None:
        return _digest(args)
    found: str | None = _DIGESTS.get(key)
    if found is None:
        found = _DIGESTS.remember(key, _digest(args))
    return str(found)


def _digest(args: Mapping[str, Any]) -> str:
    canonical = dumps(dict(sorted(args.items())))
    return hashlib.blake2b(canonical, digest_size=10).hexdigest()


# -- results cached per argument tuple -----------------------------------------------------

_EXACT = frozenset({str, int, bool, type(None)})


def frozen_args(args: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """A hashable key for ``args`` under which text made from them may be cached.

    Two argument dicts share a key only when JSON writes them identically: each value is
    keyed with its exact type (``True == 1 == 1.0`` as keys, but JSON writes them apart)
    and a float by its ``repr`` (``0.0 == -0.0``). ``None`` when a value is not a plain
    scalar (a list, a model): such calls are not cached.
    """
    items = []
    for name, value in args.items():
        kind = type(value)
        if kind in _EXACT:
            items.append((name, kind, value))
        elif kind is float:
            items.append((name, kind, repr(value)))
        else:
            return None
    return tuple(items)


class Memo(dict[Any, Any]):
    """A dict that forgets everything once it holds ``size`` entries (a cheap bound).

    Shared by threads: a lost entry is recomputed, never wrong.
    """

    def __init__(self, size: int = 4096) -> None:
        super().__init__()
        self.size = size

    def remember(self, key: Any, value: Any) -> Any:
        """Store ``value`` under ``key`` and return it."""
        if len(self) >= self.size:
            self.clear()
        self[key] = value
        return value


_DIGESTS = Memo()


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
