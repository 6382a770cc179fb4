"""Token counting: a fast offline default and the pluggable counter type.

The default does not model any vendor's tokenizer exactly; it is a cheap estimate that
stays close for English and code (about four characters a token) and for CJK text (about a
token a character), which a plain ``len(text) / 4`` undercounts four-fold.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeAlias

# Han, kana, hangul, fullwidth forms and CJK punctuation: each character is roughly one
# token in the BPE vocabularies of current models.
_WIDE = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003134f]"
)
# Other non-ASCII letters (accented Latin, Cyrillic, Greek, emoji ...) take roughly two
# characters a token.
_OTHER_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def count_tokens(text: str) -> int:
    """Estimate the tokens in ``text`` offline, in time linear in its length.

    ASCII counts a token per four characters, CJK a token per character, other non-ASCII
    characters a token per two. Empty text is zero tokens; any other text at least one.
    """
    if not text:
        return 0
    n = len(text)
    if text.isascii():
        return (n + 3) // 4
    wide = len(_WIDE.findall(text))
    other = len(_OTHER_NON_ASCII.findall(text)) - wide
    ascii_chars = n - wide - other
    return max(1, wide + (other + 1) // 2 + (ascii_chars + 3) // 4)


TokenCounter: TypeAlias = Callable[[str], int]
"""Any callable from text to a token count, e.g. ``lambda s: len(enc.encode(s))``."""
