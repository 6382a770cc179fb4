"""Compact JSON with orjson and a documented fallback for values orjson cannot encode.

Fallbacks (applied recursively, never raising):
- ``Decimal`` -> its exact string, ``"12.50"``;
- ``set``/``frozenset`` -> a list, sorted when the items are sortable;
- ``bytes``/``bytearray``/``memoryview`` -> UTF-8 text when valid, else ``"base64:<data>"``;
- Pydantic models -> ``model_dump(mode="json")``; objects with ``__dict__`` -> their public
  attributes; anything else -> ``str(value)``, or ``"<unprintable TYPE>"`` when that raises;
- integers beyond 64 bits -> their exact JSON number (orjson refuses them: they are
  written through a marker the output is patched at); lone surrogates -> U+FFFD (surrogate
  pairs -> their character); non-string keys -> ``str(key)``; a reference cycle ->
  ``"<cycle>"``; nesting deeper than 200 levels -> ``"<too deep>"``.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson
from pydantic import BaseModel

_OPTIONS = orjson.OPT_NON_STR_KEYS
_MAX_DEPTH = 200
_BIG = "\x00int:"
"""Prefix of the string that stands for an integer beyond 64 bits until the output is patched."""
_BIG_MARK = re.compile(rb'"\\u0000int:(-?[0-9]+)"')
_LONG_DIGITS = re.compile(r"[0-9]{20}")


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(raw).decode("ascii")
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (tuple, list)):
        return list(value)
    public = _public_attributes(value)
    if public is not None:
        return public
    return _safe_str(value)


def _safe_str(value: Any) -> str:
    """``str(value)``, or a marker naming its type when the object's ``__str__`` raises."""
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def _public_attributes(value: Any) -> dict[str, Any] | None:
    attrs = getattr(value, "__dict__", None)
    if not isinstance(attrs, dict) or not attrs:
        return None
    return {k: v for k, v in attrs.items() if not k.startswith("_")}


def dumps(value: Any) -> bytes:
    """Encode ``value`` as compact UTF-8 JSON (non-ASCII as is); never raises."""
    try:
        # Without OPT_NON_STR_KEYS first: the option sends every dict key down orjson's slow
        # path, and string-keyed data (nearly all of it) encodes to the same bytes without.
        return orjson.dumps(value, default=_default)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        pass
    try:
        return orjson.dumps(value, default=_default, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        out = orjson.dumps(_sanitize(value, 0, set()), option=_OPTIONS)
    return _BIG_MARK.sub(rb"\1", out) if b"\\u0000int:" in out else out


def dumps_str(value: Any) -> str:
    """:func:`dumps` as ``str``."""
    return dumps(value).decode("utf-8")


def to_jsonable(value: Any) -> Any:
    """Turn ``value`` into plain JSON data (dicts, lists, str, numbers, bool, None)."""
    return loads(dumps(value))


def loads(text: str | bytes) -> Any:
    """Parse JSON exactly: orjson, or the standard library where orjson would be wrong.

    orjson reads an integer beyond 64 bits as a float (an id loses its last digits) and
    refuses ``NaN``/``Infinity`` and lone surrogates, which Python's ``json.dumps`` writes;
    text with a run of 20 digits, or that orjson refuses, is read by ``json.loads``.
    ``ValueError`` (``orjson.JSONDecodeError`` is one) when it is not JSON, also when it
    nests deeper than the interpreter's stack (``"nested too deep"``).
    """
    probe = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if _LONG_DIGITS.search(probe) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    try:
        return json.loads(probe)
    except RecursionError:  # nested past the interpreter's stack (orjson stops at 1,024)
        raise ValueError("nested too deep") from None


def _sanitize(value: Any, depth: int, seen: set[int]) -> Any:
    """Slow path: rebuild ``value`` so that orjson encodes it without the fallback hook."""
    if depth > _MAX_DEPTH:
        return "<too deep>"
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else f"{_BIG}{int(value)}"
    if isinstance(value, str):
        if is_utf8(value):
            return value
        # Through UTF-16 a surrogate pair becomes its character and a lone surrogate one
        # U+FFFD (via UTF-8 it would become three).
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, enum.Enum):
        return _sanitize(value.value, depth + 1, seen)
    marker = id(value)
    if marker in seen:
        return "<cycle>"
    seen.add(marker)
    try:
        if isinstance(value, Mapping):
            return {
                (k if isinstance(k, str) else _safe_str(k)): _sanitize(v, depth + 1, seen)
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [_sanitize(v, depth + 1, seen) for v in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            return _sanitize(fields, depth + 1, seen)
        try:
            orjson.dumps(value, option=_OPTIONS)  # datetimes, UUIDs, enums, numpy ...
        except (orjson.JSONEncodeError, TypeError):
            return _sanitize(_default(value), depth + 1, seen)
        return value
    finally:
        seen.discard(marker)


def is_utf8(text: str) -> bool:
    """True when ``text`` encodes as UTF-8 (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
