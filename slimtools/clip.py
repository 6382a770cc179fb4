"""Clipping: cut a text to a length on a boundary a reader cannot see broken.

``Annotated[str, Clip(80)]`` on an allowlist field clips that field in every brief; the
budget fitting of ``max_tokens`` clips with ``clip_text`` too. A cut never lands inside a
surrogate pair, a combining sequence, an emoji ZWJ sequence or a flag, and backs off to a
space when one is near, and the cut text ends with a marker the model can see.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from slimtools.errors import ConfigurationError

__all__ = ["Clip", "clip_text", "safe_cut"]


@dataclass(frozen=True, slots=True)
class Clip:
    """Annotation marker: cut a text field to at most ``max_chars`` characters.

    The cut lands on a safe boundary (never inside a surrogate pair, a combining sequence,
    an emoji ZWJ sequence, a flag or a word when a space is near) and ends with ``marker``;
    the marker counts toward ``max_chars``.
    """

    max_chars: int
    marker: str = "…"

    def __post_init__(self) -> None:
        if not isinstance(self.max_chars, int) or self.max_chars <= len(self.marker):
            raise ConfigurationError(
                f"Clip(max_chars={self.max_chars!r}) must be an int longer than its "
                f"marker {self.marker!r}"
            )


def _is_regional(ch: str) -> bool:
    return "\U0001f1e6" <= ch <= "\U0001f1ff"


def _continues(ch: str) -> bool:
    """True when ``ch`` attaches to the character before it (cutting before it splits)."""
    if ch in "\u200d\n" or "\ufe00" <= ch <= "\ufe0f" or "\U000e0000" <= ch <= "\U000e01ef":
        return True
    if (
        "\U0001f3fb" <= ch <= "\U0001f3ff"
        or "\u1160" <= ch <= "\u11ff"
        or "\udc00" <= ch <= "\udfff"
    ):
        return True
    return unicodedata.category(ch) in ("Mn", "Me", "Mc")


def _splits(text: str, i: int) -> bool:
    """True when cutting ``text`` between ``i-1`` and ``i`` breaks a grapheme or pair."""
    prev, cur = text[i - 1], text[i]
    if prev == "\u200d" or "\ud800" <= prev <= "\udbff" or (prev == "\r" and cur == "\n"):
        return True
    if _continues(cur) and cur != "\n":
        return True
    if _is_regional(prev) and _is_regional(cur):
        run = 0
        while i - 1 - run >= 0 and _is_regional(text[i - 1 - run]):
            run += 1
        return run % 2 == 1
    return False


_GRAPHEME_REACH = 32
"""Characters past a cut searched for the end of the grapheme it falls in (the longest
emoji sequences, a family or a tagged flag, are 11-14 code points)."""


def safe_cut(text: str, i: int, low: int = 0) -> int:
    """The cut at or before ``i`` (and after ``low``) that breaks no grapheme or pair.

    Used to cut a long text into pieces that rejoin exactly: a cut never lands inside a
    surrogate pair, a combining sequence, an emoji ZWJ sequence, a flag or ``\\r\\n``.
    When no such cut lies after ``low`` (one grapheme longer than the piece), the first
    safe cut after ``i`` is taken when it is near (``_GRAPHEME_REACH``: a whole emoji
    sequence, over a budget of a token or two); past that (a run of combining marks), the
    nearest cut that splits no surrogate pair, so a piece is never empty.
    """
    if i >= len(text):
        return len(text)
    cut = i
    while cut > low and _splits(text, cut):
        cut -= 1
    if cut > low:
        return cut
    reach = min(len(text), i + _GRAPHEME_REACH)
    cut = next((c for c in range(i, reach) if not _splits(text, c)), reach)
    if cut < len(text) and not _splits(text, cut):
        return cut
    if reach == len(text):
        return reach
    cut = i
    while cut > low + 1 and "\ud800" <= text[cut - 1] <= "\udbff":
        cut -= 1
    return cut


_WORD_BACKOFF = 16


def clip_text(text: str, max_chars: int, marker: str = "…") -> str:
    """Return ``text`` cut to at most ``max_chars`` characters on a safe boundary.

    Text that fits is returned unchanged. Otherwise the result ends with ``marker``.
    """
    if len(text) <= max_chars:
        return text
    return cut_text(text, max_chars, marker)


def cut_text(text: str, max_chars: int, marker: str = "…") -> str:
    """``clip_text`` of a text known to be longer than ``max_chars`` (the check is skipped)."""
    cut = max_chars - len(marker)
    if cut <= 0:
        return marker
    # Every check below reads only ``text[: cut + 1]``. When that part is ASCII (most log
    # lines, URLs, code) the only pair a cut can split is "\r\n": there are no combining
    # marks, joiners, surrogates or flags, so one comparison replaces the grapheme walk.
    # (``text.isascii()`` is a flag lookup; the slice is only made for non-ASCII text.)
    if text.isascii() or text[: cut + 1].isascii():
        if text[cut] == "\n" and text[cut - 1] == "\r":
            cut -= 1
    else:
        while cut > 0 and _splits(text, cut):
            cut -= 1
    if cut > 0 and text[cut - 1].isalnum() and text[cut].isalnum():
        low = cut - _WORD_BACKOFF  # (plain comparisons: ``max`` costs more than the search)
        space = text.rfind(" ", low if low > 0 else 0, cut)
        if space > 0:
            cut = space
    return text[:cut].rstrip() + marker
