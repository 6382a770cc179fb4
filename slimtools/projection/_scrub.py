"""Keeping denied values out of text: values seen in records, and ``key: value`` pairs (pure).

Removing denied paths from records is not enough when the same secret also sits in a field
the allowlist shows (``"note": "ssn is 123-45-6789"``) or in an exception's message
(``ValueError(f"bad row {row}")``). Two tools close that:

- :class:`Secrets` holds the values of denied paths a call's records carry and replaces
  every occurrence of them in the strings of what is shown or stored. Values too short to
  be specific are exempt (see :data:`MIN_CHARS`): masking every ``"yes"`` or ``42`` in a
  result would shred it and protect nothing.
- :func:`scrub_pairs` masks the value of each ``key: value``, ``"key": "value"``,
  ``'key': value`` and ``key=value`` pair of a text whose key is denied: what an exception
  quoting a dict, a JSON body or a dataclass shows.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Collection
from typing import Any

from slimtools._json import dumps_str
from slimtools.projection._deny import MIN_CHARS, fold
from slimtools.projection._rowtext import scrub_rows
from slimtools.redaction import MASK

EXACT_MAX = 128
"""Up to this many denied values per call are looked for as exact substrings; beyond, as words."""

_WORD = re.compile(r"[\w@+\-]+(?:\.[\w@+\-]+)*")
"""A word as secrets are looked up: letters, digits and ``@ _ + -``, with inner dots (an
e-mail address, a decimal, ``123-45-6789``), so ``"SSN 123-45-6789."`` holds ``123-45-6789``."""


class Secrets:
    """Denied values to mask wherever they appear in a call's text, in their common forms.

    A value is found in any case (an e-mail address written ``Ann@X.org``), and, where the
    text holds encodings, URL-encoded (``%40``), JSON-escaped (``\\u0040``) or as HTML
    entities (``&#64;``, ``&#x40;``, ``&commat;``). Up to :data:`EXACT_MAX` values are looked
    for so; more (a long result's) are looked up by words, in any case: the text's words
    meet the values in a set intersection, one scan whatever their number, so there a value
    is found where it stands as a word (:data:`_WORD`; a value of several words when all its
    words are there and it is too). Only the values found are then replaced (:class:`Masker`).
    """

    __slots__ = ("_singles", "_values")

    def __init__(self, values: Collection[str]) -> None:
        found = frozenset(values)
        self._values = found - {""} if "" in found else found
        self._singles: frozenset[str] | None = None  # the values that are one word, once known

    def __bool__(self) -> bool:
        return bool(self._values)

    @property
    def values(self) -> frozenset[str]:
        """The values masked."""
        return self._values

    def found_in(self, value: Any) -> Masker | None:
        """A masker of the secrets ``value`` (text or plain data) holds, ``None`` if none."""
        blob = value if isinstance(value, str) else dumps_str(value)
        hits = self.hits(blob, blob.lower())
        return Masker(hits) if hits else None

    def hits(self, blob: str, lower: str) -> set[str]:
        """The secrets ``blob`` holds (``lower`` is ``blob.lower()``, given when known)."""
        if len(self._values) > EXACT_MAX:
            return self._by_words(lower)
        encoded = ("%" in blob or "\\u" in blob or "&" in blob) and bool(_ENCODED.search(blob))
        return {
            v
            for v in self._values
            if v.lower() in lower
            or (_odd(v) and _escaped(v).lower() in lower)
            or (encoded and _any_form(v).search(blob) is not None)
        }

    def _by_words(self, lower: str) -> set[str]:
        words = set(_WORD.findall(lower))
        singles = self._singles
        if singles is None:  # one scan of the values, on the first lookup of this call
            single = set(_WORD.findall("\n".join(self._values).lower()))
            singles = self._singles = frozenset(v for v in self._values if v.lower() in single)
        hits = {v for v in singles if v.lower() in words}
        for phrase in self._values - singles:
            low = phrase.lower()
            parts = _WORD.findall(low)
            if all(p in words for p in parts) and (
                low in lower or (_odd(phrase) and _escaped(phrase).lower() in lower)
            ):
                hits.add(phrase)
        return hits

    def text(self, text: str) -> str:
        """``text`` with every secret it holds masked."""
        masker = self.found_in(text)
        return masker.text(text) if masker is not None else text


_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|&#|&[A-Za-z]+;")
"""Whether a text holds encoded characters at all (then values are looked for encoded too)."""

_ENTITIES = {
    "@": ("commat",),
    "&": ("amp",),
    ".": ("period",),
    "-": ("hyphen", "dash"),
    "_": ("lowbar",),
    "+": ("plus",),
    ":": ("colon",),
    "/": ("sol",),
    "<": ("lt",),
    ">": ("gt",),
    '"': ("quot",),
    "'": ("apos",),
    " ": ("nbsp",),
}
"""HTML's named entities for the characters secrets hold besides letters and digits."""


def _char_forms(ch: str) -> str:
    """A regex for ``ch`` written plainly or encoded (URL, JSON escape, HTML entity)."""
    if ch.isalnum() and ch.isascii():
        return re.escape(ch)
    code = ord(ch)
    forms = [re.escape(ch)]
    forms.append("".join(f"%{b:02x}" for b in ch.encode("utf-8")))
    if code <= 0xFFFF:
        forms.append(rf"\\{{1,2}}u{code:04x}")
    forms += [f"&#0*{code};", f"&#x0*{code:x};"]
    forms += [f"&{name};" for name in _ENTITIES.get(ch, ())]
    if ch == " ":
        forms.append(r"\+")
    elif ch in '"\\':
        forms.append(re.escape("\\" + ch))
    return "(?:" + "|".join(forms) + ")"


def _any_form(value: str) -> re.Pattern[str]:
    """``value`` in any case, each character plain or encoded (:func:`_char_forms`)."""
    return _compiled("".join(_char_forms(ch) for ch in value))


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(source: str) -> re.Pattern[str]:
    found = _PATTERNS.get(source)
    if found is None:
        if len(_PATTERNS) >= 4096:
            _PATTERNS.clear()
        found = _PATTERNS[source] = re.compile(source, re.IGNORECASE)
    return found


def _odd(value: str) -> bool:
    """True when JSON writes ``value`` otherwise than as it is (quotes, backslashes, controls)."""
    return '"' in value or "\\" in value or not value.isprintable()


def _escaped(value: str) -> str:
    """``value`` as it reads inside a JSON string (quotes and backslashes escaped)."""
    return dumps_str(value)[1:-1]


class Masker:
    """Replaces given values by the mask, in any case and encoding (:class:`Secrets`):
    anywhere for words, as whole numbers for numbers."""

    __slots__ = ("_pattern",)

    def __init__(self, values: Collection[str]) -> None:
        ordered = sorted(values, key=len, reverse=True)
        words = [_any_form(v).pattern for v in ordered if not _is_number(v)]
        numbers = [re.escape(v) for v in ordered if _is_number(v)]
        parts = ["|".join(words)] if words else []
        if numbers:
            parts.append(rf"(?<![0-9.])(?:{'|'.join(numbers)})(?![0-9])")
        self._pattern = re.compile("|".join(parts), re.IGNORECASE)

    def text(self, text: str) -> str:
        """``text`` with every value replaced by the mask."""
        return self._pattern.sub(MASK, text)


def _is_number(text: str) -> bool:
    return bool(re.fullmatch(r"-?[0-9][0-9.e+\-]*", text))


# A key starts a word: tried once per run of word characters, so a long token (a base64
# blob in an error) is scanned in linear time, not once from each of its characters.
_PAIR = re.compile(
    r"""(?P<q>\\?["']|)(?<![\w\-])(?P<key>[A-Za-z_][\w\-]*)(?P=q)[ \t]*(?P<sep>:|=)(?!=)[ \t]*""",
)
_CLOSE = {"{": "}", "[": "]", "(": ")"}
_QUOTES = ('"', "'", '\\"', "\\'")
"""How a pair's value may be quoted: plainly, or escaped (JSON quoted inside a string)."""
_BARE = re.compile(r"[^\s,;&}\])]+")


def scrub_pairs(text: str, denied: Collection[str], allowed: Collection[str] | None = None) -> str:
    """``text`` with the value of every pair whose key, folded (``projection._deny.fold``),
    is in ``denied`` masked.

    Pairs are ``key: value``, ``key=value`` and their quoted-key forms (JSON, dict reprs);
    a value is a quoted string, a bracketed structure or a bare token. Given ``allowed``
    (an allowlist's names), a quoted pair (``"key": v``, ``'key': v``) or a keyword pair
    of a repr (``Row(key=v)``, ``key='v'``) whose key is not allowed is masked too; prose such as
    ``timeout: 30s`` is left alone. A masked value that is specific (:data:`MIN_CHARS`) is
    masked wherever else it appears in ``text`` too. Under a deny, rows quoted without their
    column names (``(1, 'alice', '078-05-1120')``) lose their values
    (``slimtools.projection._rowtext``).
    """
    masked, seen = pairs_masked(scrub_rows(text, denied), denied, allowed)
    return Masker(seen).text(masked) if seen else masked


def pairs_masked(
    text: str, denied: Collection[str], allowed: Collection[str] | None = None
) -> tuple[str, set[str]]:
    """``text`` with the denied (and unlisted) pairs' values masked, and the specific values
    masked so, to be masked wherever else they appear (:func:`scrub_pairs`)."""
    if not denied and allowed is None:
        return text, set()
    out: list[str] = []
    seen: set[str] = set()
    pos = 0
    for match in _PAIR.finditer(text):
        if match.start() < pos or not _masks(text, match, denied, allowed):
            continue
        end = _value_end(text, match.end())
        if end == match.end():
            continue
        value = text[match.end() : end]
        quote = value[:2] if value[:2] in ('\\"', "\\'") else value[0]  # JSON in a string
        quoted = quote in _QUOTES
        inner = value[len(quote) : -len(quote)] if quoted else value
        if inner[:1] not in _CLOSE and len(inner.strip()) >= MIN_CHARS:
            seen.add(inner.strip())
        out.append(text[pos : match.end()])
        out.append(f"{quote}{MASK}{quote}" if quoted else MASK)
        pos = end
    if not out:
        return text, seen
    out.append(text[pos:])
    return "".join(out), seen


def _masks(
    text: str, match: re.Match[str], denied: Collection[str], allowed: Collection[str] | None
) -> bool:
    """Whether the pair ``match`` found in ``text`` has its value masked."""
    key = match["key"]
    if denied and fold(key) in denied:
        return True
    if allowed is None or key in allowed:
        return False
    if match["q"]:
        return True
    if match["sep"] != "=":
        return False
    before = text[: match.start()].rstrip(" \t")[-1:]
    # Row(key=v), and key='v' as pydantic's str() writes fields: id=1 name='a'
    return before in ("(", ",") or text[match.end() : match.end() + 1] in ("'", '"')


DENIED_ATTR = "_slimtools_denied"
"""The attribute :func:`scrub_exception` leaves on an exception: the denied keys of the guard
it crossed, so the text ``Toolkit.call`` shows masks them even in a message that is not the
exception's arguments (a ``__str__`` quoting an attribute)."""


def scrub_exception(
    exc: BaseException, denied: Collection[str], allowed: Collection[str] | None = None
) -> None:
    """Mask pairs in ``exc``'s arguments as :func:`scrub_pairs` does, in place (its type and
    traceback stay), and note the denied keys on it (:data:`DENIED_ATTR`).

    So a framework that shows ``str(exc)`` to the model (LangChain's ``handle_tool_error``)
    shows the masked message too. An argument that is not text (``KeyError(row)``) is read
    by its ``repr``, as ``str(exc)`` shows it, and replaced by the masked text when masking
    changed it.
    """
    if not denied and allowed is None:
        return
    if denied:  # for a message its __str__ builds from elsewhere: masked where it is shown
        noted = frozenset(denied) | getattr(exc, DENIED_ATTR, frozenset())
        with contextlib.suppress(Exception):  # an exception that takes no attributes
            setattr(exc, DENIED_ATTR, noted)
    try:
        args = tuple(_scrub_arg(a, denied, allowed) for a in exc.args)
        if any(a is not b for a, b in zip(args, exc.args, strict=True)):
            exc.args = args
    except Exception:  # an exception type with unusual args is left as it is
        return


def _scrub_arg(arg: Any, denied: Collection[str], allowed: Collection[str] | None) -> Any:
    if isinstance(arg, str):
        masked = scrub_pairs(arg, denied, allowed)
        return arg if masked == arg else masked
    if arg is None or isinstance(arg, (bool, int, float)):
        return arg
    try:
        text = repr(arg)
    except Exception:
        return f"<unprintable {type(arg).__name__}>"
    masked = scrub_pairs(text, denied, allowed)
    return arg if masked == text else masked


def _value_end(text: str, i: int) -> int:
    """Where the value starting at ``text[i]`` ends: a quoted string, a bracketed structure,
    or a bare token."""
    if i >= len(text):
        return i
    ch = text[i]
    if ch == "\\" and text[i + 1 : i + 2] in ('"', "'"):  # \"value\" of JSON in a string
        close = text.find(text[i : i + 2], i + 2)
        return len(text) if close < 0 else close + 2
    if ch in "\"'":
        j = i + 1
        while j < len(text):
            if text[j] == "\\":
                j += 2
                continue
            if text[j] == ch:
                return j + 1
            j += 1
        return len(text)
    if ch in _CLOSE:
        depth, j, quote = 0, i, ""
        while j < len(text):
            c = text[j]
            if quote:
                if c == "\\":
                    j += 1
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c in _CLOSE:
                depth += 1
            elif c in _CLOSE.values():
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return len(text)
    match = _BARE.match(text, i)
    return match.end() if match else i
