"""Reading a long Python literal list (``str()`` of many rows) one item at a time (pure).

``ast.literal_eval`` needs many times a text's size in memory (about 80 MB for a
2,000,000-character list of dicts), so one call on a huge text is refused. Yet the
``str()`` of a long query result is exactly what some MCP servers send (``mcp-server-sqlite``'s
``read_query`` of 5,000 rows is over 2,000,000 characters): refusing it withheld the whole
result under an allowlist. A top-level list (or tuple) is therefore cut at its top-level
commas, found by a scan that skips string literals, and each item is read on its own, so
memory follows the largest item, not the whole text. Anything the scan is not sure of (a
triple-quoted string, a comment) is not cut: the caller then treats the text as unreadable.
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import Any

_TOKENS = re.compile(r"""'''|"{3}|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[\[\](){},#'"]""")
"""A triple quote (which ``repr`` never writes: the scan is unsure), a complete one-line
string literal, a bracket, a comma, or another mark of unsureness (a comment, a lone quote)."""

_CLOSE = {"[": "]", "(": ")"}


def literal_items(text: str, max_item_chars: int) -> list[Any] | tuple[Any, ...] | None:
    """The list or tuple a long literal ``text`` holds, read item by item; ``None`` if not one.

    ``text`` must be stripped. Every item must be a literal of at most ``max_item_chars``.
    """
    if len(text) < 2 or text[0] not in _CLOSE or text[-1] != _CLOSE[text[0]]:
        return None
    cuts = _top_level_commas(text)
    if cuts is None:
        return None
    bounds = [0, *cuts, len(text) - 1]
    items: list[Any] = []
    for start, end in itertools.pairwise(bounds):
        piece = text[start + 1 : end]
        if not piece.strip():
            if end != len(text) - 1 or (cuts and not items):
                return None  # "[1, , 2]" or "[, ]"
            continue  # "[]", or the trailing comma of "[1, 2, ]"
        if len(piece) > max_item_chars:
            return None
        try:
            items.append(ast.literal_eval(piece.strip()))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    if text[0] == "[":
        return items
    return tuple(items) if cuts or not items else None  # "(1)" is 1, not a tuple


def _top_level_commas(text: str) -> list[int] | None:
    """Positions of the commas directly inside the outer bracket; ``None`` when unsure."""
    depth = 0
    cuts: list[int] = []
    for match in _TOKENS.finditer(text):
        token = match.group()
        if len(token) > 1 and token not in ("'''", '"""'):  # a whole string literal
            continue
        if token in "[({":
            depth += 1
        elif token in "])}":
            depth -= 1
            if depth < 0 or (depth == 0 and match.end() != len(text)):
                return None
        elif token == ",":
            if depth == 1:
                cuts.append(match.start())
        else:  # a triple quote, '#', or a quote whose string never closes on its line
            return None
    return cuts if depth == 0 else None
