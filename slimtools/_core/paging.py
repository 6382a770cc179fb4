"""Paging rules both engines share: how many pages, what a page holds, and how calls read.

The pipeline pages a tool's records and lines; ``get_record`` pages a kept text or an
oversized record. Both count pages, slice them, word a page past the end and write the
call that reads on with the functions below, so a rule and its wording exist once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from slimtools._core.keys import Memo, frozen_args
from slimtools._json import dumps_str

T = TypeVar("T")


def page_count(total: int, size: int) -> int:
    """Pages of ``size`` items that ``total`` items fill (at least one, even when empty)."""
    return max(1, -(-total // size))


def page_start(page: int, size: int) -> int:
    """The index of the first item on page ``page`` (pages are 1-based)."""
    return (page - 1) * size


def page_of(items: Sequence[T], page: int, size: int) -> tuple[int, Sequence[T]]:
    """The index of page ``page``'s first item, and the page's items."""
    start = page_start(page, size)
    return start, items[start : start + size]


def past_end(
    page: Any,
    *,
    valid: bool,
    total: int,
    unit: str,
    size: int,
    retry: str,
    pages: int | None = None,
) -> str:
    """Why a page cannot be shown, how many there are, and the call to make instead.

    ``pages`` is the page count when it is not ``total`` over ``size`` (a text's pages
    are also bounded by tokens).
    """
    what = "past the end" if valid else "not a valid page"
    even = page_count(total, size)
    count = even if pages is None else pages
    shape = f"{total} {unit} in {count} pages of {'' if count == even else 'up to '}{size}"
    return f"page {dumps_str(page)} is {what}: {shape}; {retry}"


def format_call(name: str, args: Mapping[str, Any]) -> str:
    """``name(k=v, ...)`` with JSON values: the exact call the model can make next."""
    return f"{name}({args_text(args)})"


ARG_SHOWN_MAX = 300
"""A longer argument (its JSON) is not repeated in hints: each page would carry it again."""


def args_text(args: Mapping[str, Any]) -> str:
    """``k=v, ...`` with JSON values, cached per argument tuple (``keys.frozen_args``).

    A value longer than :data:`ARG_SHOWN_MAX` is named, not repeated: ``doc=<the same
    50,000 characters as before>``.
    """
    key = frozen_args(args)
    found = _TEXTS.get(key) if key is not None else None
    if found is None:
        found = ", ".join(f"{k}={_arg_text(v)}" for k, v in args.items())
        if key is not None:
            _TEXTS.remember(key, found)
    return found


def _arg_text(value: Any) -> str:
    text = dumps_str(value)
    if len(text) <= ARG_SHOWN_MAX:
        return text
    return f"<the same {len(text):,} characters as before>"


_TEXTS = Memo()


def tool_call(
    tool: str, args: Mapping[str, Any], *, page: int | None, limit: int, default: int
) -> str:
    """The call of ``tool`` that reads page ``page`` (``None``: no page) of ``limit`` items.

    ``limit`` is left out when it is the tool's default, so the call stays as short as the
    model's own. The same text as ``format_call(tool, {**args, "page": page, "limit":
    limit})``, without rendering ``args`` again.
    """
    parts = [args_text(args)] if args else []
    if page is not None:
        parts.append(f"page={page}")
    if limit != default:
        parts.append(f"limit={limit}")
    return f"{tool}({', '.join(parts)})"


def handle_call(companion: str, handle: Any, page: int | str | None = None) -> str:
    """The companion call that reads a handle: ``get_record(3)``, ``get_record("h", page=2)``.

    ``page`` may be text, such as ``"N"`` for "any page".
    """
    shown = str(handle) if type(handle) is int else dumps_str(handle)
    return f"{companion}({shown})" if page is None else f"{companion}({shown}, page={page})"


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
