"""Shortened arguments of old write calls: each long string becomes an excerpt with its size.

A write call (``str_replace_editor``'s ``new_str``, ``write_file``'s ``content``) keeps its
full arguments for the rest of a run, yet it is exactly the call that must not be repeated.
Once its result is cleared, :func:`shorten_args` rewrites every string longer than the
threshold as its head, its size and a note that the call was made. The shape is kept (strings
stay strings, lists and objects keep their keys and lengths), the output is a pure function of
its input, and a shortened value is never longer than the threshold, so shortening again
changes nothing.
"""

from __future__ import annotations

from typing import Any

from slimtools.clearing.formats.base import unparsed
from slimtools.errors import ConfigurationError

DEFAULT_SHORTEN_CHARS = 400
"""Strings up to this many characters stay whole (``shorten_write_inputs=True``)."""

_NOTE = "… [{size:,} chars shortened: this call was made; do not repeat it]"


def shortened_text(text: str, limit: int) -> str:
    """``text`` cut to a head with its size and the note, at most ``limit`` characters
    (``text`` itself when it fits)."""
    if len(text) <= limit:
        return text
    note = _NOTE.format(size=len(text))
    return text[: max(0, limit - len(note))] + note


def _shorten(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return shortened_text(value, limit)
    if isinstance(value, dict):
        return {k: _shorten(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shorten(v, limit) for v in value]
    return value


def shorten_args(args: dict[str, Any], limit: int) -> dict[str, Any] | None:
    """``args`` with every string longer than ``limit`` shortened (nested ones too); None
    when none is that long, so the call stays as it is. Arguments that were not a JSON
    object (held under ``RAW_ARGS``) stay as sent: rewritten, they would become one."""
    if unparsed(args):
        return None
    shortened = _shorten(args, limit)
    return shortened if shortened != args else None


def check_shortening(value: Any) -> None:
    """Refuse a ``shorten_write_inputs`` that is neither a bool nor an int of at least 100."""
    if isinstance(value, bool):
        return
    if not isinstance(value, int) or value < 100:
        raise ConfigurationError(
            f"shorten_write_inputs must be a bool or an int of at least 100, got {value!r}"
        )
