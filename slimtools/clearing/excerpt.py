"""What a placeholder keeps of the result it replaces: a flattened head, the call's arguments
on one line, the handles an envelope carried."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from slimtools._json import dumps_str, loads
from slimtools.envelope import is_envelope_dict

PATH_KEYS = ("path", "file_path", "filepath", "file", "filename", "target_file", "absolute_path")
"""Argument names that carry the path a call reads or writes (the supersession rule's paths,
and what a placeholder names as the place to read again)."""

_ARGS_MAX = 160
_MAX_HANDLES = 20


def flatten_head(text: str, keep_head: int) -> str:
    """The first ``keep_head`` characters of ``text`` with whitespace runs flattened.

    Only a prefix is looked at (doubling while whitespace eats it), so a 1 MB result costs
    no more than a short one; a prefix with nothing to flatten is returned as is.
    """
    if keep_head <= 0:
        return ""
    head = text[: keep_head + 1]
    if head.isascii() and "  " not in head and head[:1] != " " and _single_spaced(head):
        # ASCII with single spaces only: nothing to flatten (the common case, 5x cheaper
        # than split/join; non-ASCII text has more kinds of whitespace, so it takes that).
        return head[:keep_head] if len(text) > keep_head else head.rstrip()
    window = keep_head * 2 + 16
    while True:
        flat = " ".join(text[:window].split())
        if len(flat) > keep_head or window >= len(text):
            return flat[:keep_head]
        window *= 4


def _single_spaced(ascii_text: str) -> bool:
    """True when ASCII text holds no whitespace but plain spaces (what ``str.split`` splits
    on: tab, newline, vertical tab, form feed, carriage return and the four separators).
    Nine scans for a character, each a fast search: cheaper than ``isprintable``, which
    looks every character up in the Unicode tables."""
    return (
        "\n" not in ascii_text
        and "\t" not in ascii_text
        and "\r" not in ascii_text
        and "\x0b" not in ascii_text
        and "\x0c" not in ascii_text
        and "\x1c" not in ascii_text
        and "\x1d" not in ascii_text
        and "\x1e" not in ascii_text
        and "\x1f" not in ascii_text
    )


def render_args(args: Mapping[str, Any]) -> str:
    """Arguments as ``k=<json>, ...`` bounded to a short line."""
    try:  # plain JSON values (nearly all arguments) need none of dumps_str's fallbacks
        if len(args) == 1:  # the common single argument, without the list (the same text)
            ((key, value),) = args.items()
            text = f"{key}={orjson.dumps(value).decode()}"
        else:
            text = ", ".join(
                [f"{key}={orjson.dumps(value).decode()}" for key, value in args.items()]
            )
    except (TypeError, orjson.JSONEncodeError):
        text = ", ".join([f"{key}={dumps_str(value)}" for key, value in args.items()])
    return text if len(text) <= _ARGS_MAX else text[: _ARGS_MAX - 1] + "…"


def envelope_handles(text: str, key: str | None) -> tuple[str, ...]:
    """The handles a slimtools envelope carries, JSON-rendered, in order, de-duplicated.

    Each brief's ``"handle"`` field, else its ``key`` field (the tool's declared handle key;
    ``"id"`` when nothing is known, None when the tool declares no handles), plus the
    top-level ``"handle"`` of a text envelope. Anything that is not an envelope has none.
    """
    if not text.lstrip().startswith("{"):
        return ()
    try:
        value = loads(text)  # exact: a snowflake id stays an integer
    except ValueError:
        return ()
    if not is_envelope_dict(value):
        return ()
    found: list[Any] = []
    briefs = value.get("briefs")
    if isinstance(briefs, list):
        for brief in briefs:
            if not isinstance(brief, dict):
                continue
            if "handle" in brief:
                found.append(brief["handle"])
            elif key is not None and key in brief:
                found.append(brief[key])
    if "handle" in value:
        found.append(value["handle"])
    rendered = dict.fromkeys(
        dumps_str(h) for h in found if isinstance(h, (str, int)) and not isinstance(h, bool)
    )
    handles = list(rendered)
    if len(handles) > _MAX_HANDLES:
        extra = len(handles) - _MAX_HANDLES
        handles = [*handles[:_MAX_HANDLES], f"… (+{extra} more)"]
    return tuple(handles)
