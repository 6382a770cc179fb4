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


def _number_marks(minus: bytes) -> bytes:
    """A ``bytes.translate`` table for :func:`may_hold_long_integer`: digits -> ``0``, what
    may precede a JSON number (``:``, ``,``, ``[``, whitespace) -> ``p``, ``-`` -> ``minus``,
    anything else -> ``x``."""
    marks = bytearray(b"x" * 256)
    marks[ord("0") : ord("9") + 1] = b"0" * 10
    for byte in b":,[ \t\n\r":
        marks[byte] = ord("p")
    marks[ord("-")] = minus[0]
    return bytes(marks)


_NUMBER_STARTS = _number_marks(b"p")
"""The sieve's table: a minus reads as any other place a number may start."""
_NUMBER_SIGNS = _number_marks(b"m")
"""The confirming table: a minus stays apart."""
_SIEVE = b"p" + b"0" * 19
_LONG_UNSIGNED = b"0" * 20
_LONG_NEGATIVE = b"m" + b"0" * 19
_LONG_AFTER_SEPARATOR = b"p" + _LONG_UNSIGNED


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


def dumps_exact(value: Any) -> bytes:
    """``value`` as JSON that :func:`loads` reads back exactly: orjson for plain data, the
    standard library for what orjson refuses but JSON holds (lone surrogates, integers
    beyond 64 bits), :func:`dumps`' fallbacks for the rest (SDK objects). For data kept to
    be given back as it was (an audit's originals)."""
    try:
        return orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:  # ASCII, so a lone surrogate is written as its escape
        return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (TypeError, ValueError, RecursionError):
        return dumps(value)


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
    text that may hold an integer orjson cannot read exactly (:func:`may_hold_long_integer`),
    or that orjson refuses, is read by ``json.loads``.
    ``ValueError`` (``orjson.JSONDecodeError`` is one) when it is not JSON, also when it
    nests deeper than the interpreter's stack (``"nested too deep"``).
    """
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if not may_hold_long_integer(raw):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    probe = text if isinstance(text, str) else text.decode("utf-8", "replace")
    try:
        return json.loads(probe)
    except RecursionError:  # nested past the interpreter's stack (orjson stops at 1,024)
        raise ValueError("nested too deep") from None


def may_hold_long_integer(raw: bytes) -> bool:
    """Whether the JSON text ``raw`` may hold an integer orjson reads as a float.

    orjson is exact from -2**63 to 2**64 - 1: beyond needs 20 digits, or 19 after a minus.
    A JSON number starts the text or follows ``-``, ``:``, ``,``, ``[`` or whitespace, so a
    run of digits after anything else (a hex digest, a word) cannot be one. Conservative:
    a digit run inside a string after a space also says yes (``json.loads`` is then exact
    too, only slower). A sieve of one ``bytes.translate`` and one substring search (19
    digits where a number may start), confirmed only when it passes; no regex (a regex
    scan cost more than orjson's parse of the same text).
    """
    sieved = raw.translate(_NUMBER_STARTS)
    if _SIEVE not in sieved and not sieved.startswith(_LONG_UNSIGNED):
        return False
    marked = raw.translate(_NUMBER_SIGNS)  # 19 digits after a minus, or 20 after anything
    return (
        _LONG_NEGATIVE in marked
        or _LONG_AFTER_SEPARATOR in marked
        or marked.startswith(_LONG_UNSIGNED)
    )


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
