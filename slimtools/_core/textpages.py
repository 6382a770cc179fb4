"""A text cut into pages that rejoin to it exactly, each within a token budget (pure).

A page is a slice of the original text: whole lines with their own line ends (``\\n``,
``\\r\\n``, a lone ``\\r`` inside a line, no final newline: all as they were), at most
``max_lines`` of them and at most ``max_tokens`` tokens as the envelope's JSON shows them.
A line longer than a page is cut into pieces, each a page of its own, on boundaries that
break no grapheme (``slimtools.clip.safe_cut``); the hint names the piece. So joining the
pages gives the text back byte for byte, and no line is ever dropped for being too long.

Pages are a function of the text and the two limits only, so the tool's ``page=N`` and
``get_record(handle, page=N)`` read the same page whenever they are asked, and a page the
budget fits never has to be cut afterwards (which is what made resume calls shrink).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from slimtools._json import dumps_str
from slimtools.clip import safe_cut

Counter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class TextPage:
    """One page: ``text[start:end]``, lines ``first``-``last`` (1-based), and, for a piece
    of a line longer than a page, its characters ``[lo, hi)`` of ``length`` in that line."""

    start: int
    end: int
    first: int
    last: int
    piece: tuple[int, int, int] | None = None


def cost(counter: Counter, text: str) -> int:
    """Tokens ``text`` takes inside the envelope's JSON (escapes included, quotes not)."""
    return counter(dumps_str(text)[1:-1])


def text_pages(
    text: str, max_lines: int, max_tokens: int | None, counter: Counter
) -> tuple[TextPage, ...]:
    """``text`` cut into pages of at most ``max_lines`` lines and ``max_tokens`` tokens.

    ``max_tokens=None`` bounds pages by lines only (no line is then ever cut). The last few
    cuts are remembered: reading a text page by page would otherwise cut it again on every
    call (quadratic in its length); a hit costs one hash and one comparison of the text.
    """
    try:
        return _cached_pages(text, max_lines, max_tokens, counter)
    except TypeError:  # an unhashable token counter: cut afresh
        return tuple(_cut(text, max_lines, max_tokens, counter))


@functools.lru_cache(maxsize=8)
def _cached_pages(
    text: str, max_lines: int, max_tokens: int | None, counter: Counter
) -> tuple[TextPage, ...]:
    return tuple(_cut(text, max_lines, max_tokens, counter))


def _cut(text: str, max_lines: int, max_tokens: int | None, counter: Counter) -> list[TextPage]:
    """The pages of ``text`` (see ``text_pages``), computed."""
    pages: list[TextPage] = []
    size = len(text)
    start = pos = 0
    lines = tokens = 0
    number = 0  # lines begun so far
    while pos < size:
        nl = text.find("\n", pos)
        end = size if nl < 0 else nl + 1
        number += 1
        if max_tokens is None:
            lines += 1
            pos = end
            if lines == max_lines:
                pages.append(TextPage(start, pos, number - lines + 1, number))
                start, lines = pos, 0
            continue
        spent = cost(counter, text[pos:end])
        if lines and (lines == max_lines or tokens + spent > max_tokens):
            pages.append(TextPage(start, pos, number - lines, number - 1))
            start, lines, tokens = pos, 0, 0
        if spent > max_tokens:
            pages += _pieces(text, (pos, end), number, max_tokens, counter)
            start = pos = end
            continue
        lines += 1
        tokens += spent
        pos = end
    if lines or not pages:
        pages.append(TextPage(start, size, max(1, number - lines + 1), number))
    return pages


def _pieces(
    text: str, span: tuple[int, int], number: int, max_tokens: int, counter: Counter
) -> list[TextPage]:
    """Line ``number`` (``text[span[0]:span[1]]``), longer than a page, as pages of pieces."""
    begin, end = span
    length = end - begin
    ratio = length / max(1, cost(counter, text[begin:end]))  # characters per token, this line
    pieces: list[TextPage] = []
    pos = begin
    while pos < end:
        want = max(1, int(max_tokens * ratio * 0.95))
        while True:
            cut = min(end, safe_cut(text, pos + want, pos, whole=True)) if pos + want < end else end
            if want == 1 or cut >= end or cost(counter, text[pos:cut]) <= max_tokens:
                break
            want = max(1, want * 4 // 5)
        pieces.append(TextPage(pos, cut, number, number, (pos - begin, cut - begin, length)))
        pos = cut
    return pieces


def describe(page: TextPage, total: int) -> str:
    """What a page shows, as the hint words it: ``lines 3-9 of 40`` or a line's piece."""
    if page.piece is not None:
        lo, hi, length = page.piece
        return (
            f"line {page.first} of {total} is {length:,} characters, too long for one page: "
            f"characters {lo + 1:,}-{hi:,} shown"
        )
    if page.first > page.last:
        return f"no lines of {total}"
    return f"lines {page.first}-{page.last} of {total}"
