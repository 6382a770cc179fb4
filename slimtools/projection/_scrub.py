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
import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from slimtools._json import dumps_str
from slimtools.projection._deny import DenyTree, strip_anywhere
from slimtools.projection._rowtext import scrub_rows
from slimtools.redaction import MASK

MIN_CHARS = 5
"""A denied value is masked elsewhere only when its text has at least this many characters.

Strings shorter than that and numbers written with fewer characters (``1234``, ``0.5``),
booleans and ``None`` are exempt: they are not specific enough to identify anything."""

EXACT_MAX = 128
"""Up to this many denied values per call are looked for as exact substrings; beyond, as words."""

_WORD = re.compile(r"[\w@+\-]+(?:\.[\w@+\-]+)*")
"""A word as secrets are looked up: letters, digits and ``@ _ + -``, with inner dots (an
e-mail address, a decimal, ``123-45-6789``), so ``"SSN 123-45-6789."`` holds ``123-45-6789``."""


def denied_values(records: Iterable[Any], tree: DenyTree | None) -> Secrets:
    """The specific values found at the denied paths of ``records``."""
    found: set[str] = set()
    if tree:
        leaves = [key for key, sub in tree.items() if sub is None]
        flat = len(leaves) == len(tree)
        for record in records:
            if flat and type(record) is dict:  # the usual record: its denied keys, read at once
                for key in leaves:
                    value = record.get(key)
                    if type(value) is str:
                        if len(value) >= MIN_CHARS and len(value.strip()) >= MIN_CHARS:
                            found.add(value.strip())
                    elif value is not None:
                        _collect(value, None, found)
            else:
                _collect(record, tree, found)
    return Secrets(found)


def _collect(value: Any, tree: DenyTree | None, found: set[str]) -> None:
    """Add the values below ``value``'s denied paths (all of it when ``tree`` is None).

    A walk with its own stack, each container visited once per subtree: a value that holds
    itself, or one nested deeper than the interpreter's stack, is read to its leaves like
    any other (a recursive walk would stop at a ``RecursionError`` and mask nothing).
    """
    stack: list[tuple[Any, DenyTree | None]] = [(value, tree)]
    seen: set[tuple[int, int]] = set()
    while stack:
        value, tree = stack.pop()
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            if tree is None:
                text = value if isinstance(value, str) else repr(value)
                if len(text.strip()) >= MIN_CHARS:
                    found.add(text.strip() if isinstance(value, str) else text)
            continue
        items = isinstance(value, (list, tuple, set, frozenset))
        if not items and not (isinstance(value, (Mapping, BaseModel)) or _is_object(value)):
            continue
        visit = (id(value), id(tree))
        if visit in seen:
            continue
        seen.add(visit)
        if items:
            stack.extend((item, tree) for item in value)
        elif tree is None:
            stack.extend((item, None) for item in _as_mapping(value).values())
        else:
            mapping = _as_mapping(value)
            stack.extend((mapping[key], sub) for key, sub in tree.items() if key in mapping)


def _is_object(value: Any) -> bool:
    if isinstance(value, (str, bytes, type)):
        return False
    return dataclasses.is_dataclass(value) or isinstance(getattr(value, "__dict__", None), dict)


def _as_mapping(value: Any) -> Mapping[Any, Any]:
    if isinstance(value, Mapping):
        return value
    if isinstance(value, BaseModel):
        return {k: getattr(value, k, None) for k in type(value).model_fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
    return {k: v for k, v in vars(value).items() if not k.startswith("_")}


class Secrets:
    """Denied values to mask wherever they appear in a call's text.

    Up to :data:`EXACT_MAX` values are looked for as substrings (one fast ``in`` per value);
    more (a long result's) are looked up by words: the text's words meet the values in a set
    intersection, one scan whatever their number, so there a value is found where it stands
    as a word (:data:`_WORD`; a value of several words when all its words are there and it
    is too). Only the values found are then replaced (:class:`Masker`).
    """

    __slots__ = ("_singles", "_values")

    def __init__(self, values: Collection[str]) -> None:
        self._values = frozenset(v for v in values if v)
        self._singles: frozenset[str] | None = None  # the values that are one word, once known

    def __bool__(self) -> bool:
        return bool(self._values)

    def found_in(self, value: Any) -> Masker | None:
        """A masker of the secrets ``value`` (text or plain data) holds, ``None`` if none."""
        blob = value if isinstance(value, str) else dumps_str(value)
        if len(self._values) <= EXACT_MAX:
            hits = {v for v in self._values if v in blob or (_odd(v) and _escaped(v) in blob)}
        else:
            hits = self._by_words(blob)
        return Masker(hits) if hits else None

    def _by_words(self, blob: str) -> set[str]:
        words = set(_WORD.findall(blob))
        singles = self._singles
        if singles is None:  # one scan of the values, on the first lookup of this call
            singles = self._singles = self._values & set(_WORD.findall("\n".join(self._values)))
        hits = set(singles & words)
        for phrase in self._values - singles:
            parts = _WORD.findall(phrase)
            if all(p in words for p in parts) and (
                phrase in blob or (_odd(phrase) and _escaped(phrase) in blob)
            ):
                hits.add(phrase)
        return hits

    def text(self, text: str) -> str:
        """``text`` with every secret it holds masked."""
        masker = self.found_in(text)
        return masker.text(text) if masker is not None else text

    def data(self, value: Any) -> Any:
        """Plain data with every secret it holds masked (the same object when none)."""
        masker = self.found_in(value)
        return masker.data(value) if masker is not None else value


def _odd(value: str) -> bool:
    """True when JSON writes ``value`` otherwise than as it is (quotes, backslashes, controls)."""
    return '"' in value or "\\" in value or not value.isprintable()


def _escaped(value: str) -> str:
    """``value`` as it reads inside a JSON string (quotes and backslashes escaped)."""
    return dumps_str(value)[1:-1]


class Masker:
    """Replaces given values by the mask: anywhere for words, as whole numbers for numbers."""

    __slots__ = ("_pattern",)

    def __init__(self, values: Collection[str]) -> None:
        ordered = sorted(values, key=len, reverse=True)
        words = [re.escape(v) for v in ordered if not _is_number(v)]
        numbers = [re.escape(v) for v in ordered if _is_number(v)]
        parts = ["|".join(words)] if words else []
        if numbers:
            parts.append(rf"(?<![0-9.])(?:{'|'.join(numbers)})(?![0-9])")
        self._pattern = re.compile("|".join(parts))

    def text(self, text: str) -> str:
        """``text`` with every value replaced by the mask."""
        return self._pattern.sub(MASK, text)

    def data(self, value: Any) -> Any:
        """Plain data (as briefs and stored views are) with every string masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {
                (self.text(k) if isinstance(k, str) else k): self.data(v) for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


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
    """``text`` with the value of every pair whose key is in ``denied`` masked.

    Pairs are ``key: value``, ``key=value`` and their quoted-key forms (JSON, dict reprs);
    a value is a quoted string, a bracketed structure or a bare token. Given ``allowed``
    (an allowlist's names), a quoted pair (``"key": v``, ``'key': v``) or a keyword pair
    of a repr (``Row(key=v)``, ``key='v'``) whose key is not allowed is masked too; prose such as
    ``timeout: 30s`` is left alone. A masked value that is specific (:data:`MIN_CHARS`) is
    masked wherever else it appears in ``text`` too. Under a deny, rows quoted without their
    column names (``(1, 'alice', '078-05-1120')``) lose their values
    (``slimtools.projection._rowtext``).
    """
    if not denied and allowed is None:
        return text
    text = scrub_rows(text, denied)  # rows quoted without their column names
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
        return text
    out.append(text[pos:])
    masked = "".join(out)
    return Masker(seen).text(masked) if seen else masked


def _masks(
    text: str, match: re.Match[str], denied: Collection[str], allowed: Collection[str] | None
) -> bool:
    """Whether the pair ``match`` found in ``text`` has its value masked."""
    key = match["key"]
    if key in denied:
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


def denied_names(tree: DenyTree | None) -> frozenset[str]:
    """The keys ``tree`` denies whole, at any depth: what :func:`scrub_pairs` masks."""
    names: set[str] = set()
    stack = [tree] if tree else []
    while stack:
        node = stack.pop()
        for key, sub in node.items():
            if sub is None:
                names.add(key)
            else:
                stack.append(sub)
    return frozenset(names)


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


def deny_anywhere(data: Any, tree: DenyTree | None) -> Any:
    """Plain ``data`` without denied paths matched at every depth, and with the values found
    there masked wherever else they appear (for results whose records sit at no known path)."""
    if not tree:
        return data
    found = secrets_anywhere(data, tree)
    clean = strip_anywhere(data, tree)
    return found.data(clean) if found else clean


def secrets_anywhere(data: Any, tree: DenyTree | None) -> Secrets:
    """The specific values of ``tree``'s paths matched at every depth of plain ``data``."""
    found: set[str] = set()
    if tree:
        _collect_anywhere(data, tree, found)
    return Secrets(found)


def _collect_anywhere(value: Any, tree: DenyTree, found: set[str]) -> None:
    """Add the values of ``tree``'s paths matched at every depth of ``value``, each container
    read once (a walk with its own stack: cycles and deep nesting are read to the end)."""
    stack: list[Any] = [value]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            children: Iterable[Any] = value.values()
        elif isinstance(value, (list, tuple)):
            children = value
        else:
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, Mapping):
            _collect(value, tree, found)
        stack.extend(children)
