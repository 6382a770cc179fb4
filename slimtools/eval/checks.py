"""Answer checks: pull the value a model claims out of its answer and compare it to the truth.

Every check follows the same three rules, so a verdict never depends on wording:

1. *Extract*: find every value of the check's kind in the answer, in order of appearance
   (timestamps, integers, identifiers, or matches of a pattern), normalised.
2. *Ignore echoes*: drop every value that also appears in the question (an answer that
   repeats "entry 4711" has not claimed 4711).
3. *Judge the first claim*: the first value left is the answer. It is ``correct`` when it
   matches the expected value, ``wrong`` when it does not (a specific wrong value: the
   fabrication the harness counts), and ``none`` when nothing is left (the model declined,
   or answered in a form the check cannot read, such as a number spelled out in words).

A hedged value ("maybe 214") is still a claim: the harness measures what a user would read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from slimtools.errors import ConfigurationError

CheckKind = Literal["timestamp", "integer", "id", "regex"]
CHECK_KINDS: tuple[CheckKind, ...] = ("timestamp", "integer", "id", "regex")
"""The kinds of answer a check can read."""

Verdict = Literal["correct", "wrong", "none"]

_TIMESTAMP = re.compile(
    r"(?<![\d:.])"
    r"(?:(?P<date>\d{4}-\d{2}-\d{2})(?:[T ]|, |\s+at\s+))?"
    r"(?P<h>\d{1,2}):(?P<m>\d{2}):(?P<s>\d{2})"
    r"(?:[.,](?P<frac>\d{1,9}))?"
    r"(?![\d:])"
    r"(?:\s?(?P<tz>Z|UTC|GMT|[+-]\d{2}:?\d{2})(?![\w]))?"
)
# Digits not glued to letters, decimals, dates or times: "line 137", "invoice.py:137:def",
# "1,204" count; "v2", "2.14.3", "2024-10-24", "03:12:45" and "7f3a" do not.
_INTEGER = re.compile(
    r"(?<![\w.])(?<!\d[:\-])"
    r"(?P<n>\d{1,3}(?:,\d{3})+|\d+)"
    r"(?![\w]|[.:\-]\d)"
)
_ID_PREFIX = re.compile(r"[A-Za-z]+[-_:/#]")
_ANY_ID = r"(?<![A-Za-z0-9])[A-Za-z0-9]*\d[A-Za-z0-9]*(?![A-Za-z0-9])"
_NOUNS = {"timestamp": "a timestamp", "integer": "an integer", "id": "an id", "regex": "a match"}
_STRIP = " \t\n\"'`*_.,;:!?()[]{}<>"


class Claim(NamedTuple):
    """What a check read in an answer: the verdict and the value judged (None: no claim)."""

    verdict: Verdict
    value: str | None


@dataclass(frozen=True)
class AnswerCheck:
    """How to read one expected answer out of free text.

    Kinds and their normalisation:

    - ``timestamp``: ``HH:MM:SS`` with an optional date (``YYYY-MM-DD`` before it), fraction
      and zone (``Z``, ``UTC``, ``+02:00``). A claim must state hours, minutes and seconds;
      every other part it states must agree with the expected value (fractions compared as
      numbers, ``Z``/``UTC``/``+00:00`` alike); parts it leaves out are not held against it.
    - ``integer``: digits, with optional thousands commas (``1,204``), not part of a word,
      decimal, version, date or time; compared as numbers (``0137`` is 137).
    - ``id``: tokens matching ``pattern``; by default the expected value's alphabetic
      prefix and separator (``req-``) followed by letters and digits, or any token holding
      a digit when it has no prefix. Compared case-insensitively.
    - ``regex``: matches of ``pattern`` (its first group when it has one), compared after
      case folding, collapsing whitespace and stripping quotes and punctuation around it.

    Args:
        kind: one of :data:`CHECK_KINDS`.
        expected: the true answer, written as the source shows it.
        pattern: for ``id`` (optional) and ``regex`` (required): a Python regular expression.
    """

    kind: CheckKind
    expected: str
    pattern: str | None = None
    _read: Callable[[str], list[str]] = field(init=False, repr=False, compare=False)
    _truth: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in CHECK_KINDS:
            raise ConfigurationError(f"check must be one of {list(CHECK_KINDS)}, got {self.kind!r}")
        if not isinstance(self.expected, str) or not self.expected.strip():
            raise ConfigurationError("the expected answer must be a non-empty string")
        if self.kind == "regex" and not self.pattern:
            raise ConfigurationError("a regex check needs a pattern")
        reader = _reader(self.kind, self.expected, self.pattern)
        # A regex describes the answer in its context ("codename is X"), so the expected
        # value is normalised directly; the other kinds must read their own expected value.
        truths = [_plain(self.expected)] if self.kind == "regex" else reader(self.expected)
        if not truths:
            raise ConfigurationError(
                f"the expected answer {self.expected!r} cannot be read as {_NOUNS[self.kind]}"
                + (f" with pattern {self.pattern!r}" if self.pattern else "")
            )
        object.__setattr__(self, "_read", reader)
        object.__setattr__(self, "_truth", truths[0])

    def values(self, text: str) -> list[str]:
        """Every value of this kind in ``text``, normalised, in order of appearance."""
        return self._read(text)

    def matches(self, value: str) -> bool:
        """Whether a normalised value read by :meth:`values` is the expected answer."""
        if self.kind == "timestamp":
            return _same_time(value, self._truth)
        return value == self._truth

    def found_in(self, text: str) -> bool:
        """Whether ``text`` shows the expected answer (used to tell what the model could see)."""
        return any(self.matches(v) for v in self.values(text))

    def judge(self, answer: str, question: str = "") -> Claim:
        """The verdict on ``answer``: its first value that the question does not contain."""
        echoed = set(self.values(question))
        for value in self.values(answer):
            if value not in echoed:
                return Claim("correct" if self.matches(value) else "wrong", value)
        return Claim("none", None)


def _reader(kind: CheckKind, expected: str, pattern: str | None) -> Callable[[str], list[str]]:
    if kind == "timestamp":
        return _timestamps
    if kind == "integer":
        return _integers
    if kind == "id":
        return _matches(pattern or _id_pattern(expected), _casefold)
    assert pattern is not None  # checked by AnswerCheck
    return _matches(pattern, _plain)


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        message = f"pattern {pattern!r} is not a valid regular expression: {exc}"
        raise ConfigurationError(message) from None


def _matches(pattern: str, normalise: Callable[[str], str]) -> Callable[[str], list[str]]:
    compiled = _compile(pattern)

    def read(text: str) -> list[str]:
        out = []
        for match in compiled.finditer(text):
            raw = match.group(1) if compiled.groups else match.group(0)
            value = normalise(raw or "")
            if value:
                out.append(value)
        return out

    return read


def _id_pattern(expected: str) -> str:
    prefix = _ID_PREFIX.match(expected.strip())
    if prefix:
        return rf"(?<![A-Za-z0-9]){re.escape(prefix.group(0))}[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*"
    return _ANY_ID


def _casefold(raw: str) -> str:
    return raw.strip(_STRIP).casefold()


def _plain(raw: str) -> str:
    return " ".join(raw.split()).strip(_STRIP).casefold()


def _integers(text: str) -> list[str]:
    return [str(int(m.group("n").replace(",", ""))) for m in _INTEGER.finditer(text)]


def _timestamps(text: str) -> list[str]:
    """Timestamps as ``date|HH:MM:SS|fraction|zone`` with absent parts left empty."""
    out = []
    for m in _TIMESTAMP.finditer(text):
        hours, minutes, seconds = int(m["h"]), int(m["m"]), int(m["s"])
        if hours > 23 or minutes > 59 or seconds > 60:
            continue
        frac = (m["frac"] or "").rstrip("0") or ("0" if m["frac"] else "")
        out.append(f"{m['date'] or ''}|{hours:02d}:{minutes:02d}:{seconds:02d}|{frac}|{_zone(m)}")
    return out


def _zone(m: re.Match[str]) -> str:
    tz = m["tz"]
    if tz is None:
        return ""
    if tz in {"Z", "UTC", "GMT"}:
        return "+0000"
    return tz.replace(":", "")


def _same_time(claim: str, truth: str) -> bool:
    """Equal clocks, and every other part the claim states agrees with the truth."""
    return (
        all(
            c == t or not c or not t
            for c, t in zip(claim.split("|"), truth.split("|"), strict=True)
        )
        and claim.split("|")[1] == truth.split("|")[1]
    )
