"""Placeholders that thin with age: a shorter head the longer a result has been stale.

A schedule such as ``((0, 200), (10, 80), (30, 0))`` gives a 200-character head when a
result falls due, 80 characters ten turns later and none after thirty. Age is counted from
the turn a result falls due (its turn plus its tool's retention), so it is a property of
the history, not of when clearing happened to run: a clearer called every round and a
one-shot pass over a stored history give every placeholder the same head.

Thinning only shortens the ``Head:`` line of a placeholder; the call, the size, the handles
and the way back stay for life, so a result remains recoverable at any age. It works on the
placeholder's text alone, which is what lets a clearer thin placeholders it reads back from
a stored history as well as its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from slimtools.clearing.marker import _BODY_START, is_placeholder, seal
from slimtools.errors import ConfigurationError

Schedule = tuple[tuple[int, int], ...]
"""``(age in turns, head characters)`` steps, ages increasing, heads decreasing."""

HEAD_LINE = "Head: "
_HEAD_TEMPLATE_LINE = "Head: {head}"


def check_schedule(value: Any) -> Schedule | None:
    """The schedule as a tuple of ``(age, head)`` pairs, or a ConfigurationError saying why not."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise ConfigurationError(
            f"thin must be a non-empty list of (age_turns, head_chars) pairs, got {value!r}"
        )
    steps: list[tuple[int, int]] = []
    for step in value:
        if (
            not isinstance(step, Sequence)
            or isinstance(step, (str, bytes))
            or len(step) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in step)
        ):
            raise ConfigurationError(
                f"each thin step must be (age_turns, head_chars) with ints >= 0, got {step!r}"
            )
        age, head = int(step[0]), int(step[1])
        if steps and (age <= steps[-1][0] or head >= steps[-1][1]):
            raise ConfigurationError(
                f"thin steps must have increasing ages and decreasing heads, got {value!r}"
            )
        steps.append((age, head))
    return tuple(steps)


def check_template(template: str | Callable[..., str], schedule: Schedule | None) -> None:
    """A thinning schedule needs a template whose head sits on its own ``Head: {head}`` line.

    Callables are trusted: their placeholders are thinned when they have such a line.
    """
    if schedule is None or callable(template):
        return
    if _HEAD_TEMPLATE_LINE not in template.split("\n"):
        raise ConfigurationError(
            "thin shortens the 'Head: {head}' line of placeholders; the placeholder template "
            "has no such line"
        )


def head_at(schedule: Sequence[tuple[int, int]], age: int, keep_head: int) -> int:
    """The head length a result stale for ``age`` turns gets (never more than ``keep_head``)."""
    head = keep_head
    for step_age, step_head in schedule:
        if step_age > age:
            break
        head = min(keep_head, step_head)
    return head


def next_age(schedule: Sequence[tuple[int, int]], head: int) -> int | None:
    """The age at which a placeholder with a ``head``-character head thins next (None: never)."""
    for step_age, step_head in schedule:
        if step_head < head:
            return step_age
    return None


def head_length(text: str) -> int | None:
    """The length of a placeholder's head (0: no head line), None when ``text`` is not one."""
    if not is_placeholder(text):
        return None
    span = _head_span(text)
    return 0 if span is None else span[1] - span[0]


def thin(text: str, head_chars: int, max_chars: int) -> str:
    """``text`` with its head cut to ``head_chars`` (the line dropped at 0), sealed again.

    Anything that is not a placeholder, has no head, or has a head no longer than that is
    returned as it is, so thinning is idempotent and never lengthens a placeholder.
    """
    if not is_placeholder(text):
        return text
    span = _head_span(text)
    if span is None or span[1] - span[0] <= head_chars:
        return text
    start, end = span
    if head_chars:
        body = text[_BODY_START:start] + text[start : start + head_chars] + text[end:]
    else:  # the whole line goes, with the line break before it (or after, at the top)
        line = start - len(HEAD_LINE)
        top = line == _BODY_START
        body = text[end + 1 :] if top else text[_BODY_START : line - 1] + text[end:]
    return seal(body, max_chars)


def _head_span(text: str) -> tuple[int, int] | None:
    """Where the head of a placeholder starts and ends (the text after ``Head: ``)."""
    if text.startswith(HEAD_LINE, _BODY_START):
        start = _BODY_START + len(HEAD_LINE)
    else:
        found = text.find("\n" + HEAD_LINE, _BODY_START)
        if found < 0:
            return None
        start = found + 1 + len(HEAD_LINE)
    end = text.find("\n", start)
    return start, len(text) if end < 0 else end
