"""The ledger of any per-call clearing step: how the benchmarks bill the peers.

:meth:`slimtools.ledger.TokenLedger.measure` replays slimtools' own engine; a peer's step
(history in, what the model sees out) is replayed here, the prompt of every model call
cleared afresh and billed message by message with the same rules (prefix caching, a
message's tokens the sum of its pieces, each counted alone, as the clearer counts them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from slimtools.clearing import HistoryView, detect_format, view
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.ledger import LedgerRow, TokenLedger
from slimtools.tokens import TokenCounter, count_tokens

ClearFn = Callable[[Sequence[Any]], Sequence[Any]]
"""A clearing step: the history so far in, the prompt the model sees out."""


def measure_steps(
    history: Sequence[Any],
    clear: ClearFn | None = None,
    *,
    counter: TokenCounter = count_tokens,
    format: str | None = None,
    cache: CachePricing | str | None = DEFAULT_PRICING,
) -> TokenLedger:
    """``TokenLedger.measure`` for any clearing step: ``clear`` runs before each model call
    on every message before it (None: no clearing)."""
    fmt = format or detect_format(history)
    reader = _Reader(fmt, counter)
    messages = list(history)
    seen = view(messages, format=fmt)
    original = reader.bills(seen)
    starts = seen.turn_starts
    if clear is None:
        calls: Iterable[tuple[Sequence[_Bill], int]] = ((original[:p], 0) for p in starts)
    else:
        calls = _cleared_calls(messages, starts, clear, reader, original)
    rows = _rows_of(
        (bills, sum(t for b in bills for t in b.result_tokens), cleared) for bills, cleared in calls
    )
    return TokenLedger(rows, pricing_of(cache))


def _shared_prefix(previous: Sequence[_Bill], current: Sequence[_Bill]) -> int:
    """Number of leading messages identical in both prompts."""
    n = min(len(previous), len(current))
    for i in range(n):
        a, b = previous[i], current[i]
        if a is not b and a.text != b.text:
            return i
    return n


@dataclass(frozen=True, slots=True)
class _Bill:
    """One message as billed: its text (to compare prompts), tokens, and tool results."""

    text: str
    results: tuple[str, ...]
    tokens: int
    result_tokens: tuple[int, ...]


class _Reader:
    """Counts the billed text of messages read through the clearing core's ``view``."""

    def __init__(self, fmt: str, counter: TokenCounter = count_tokens) -> None:
        self.format = fmt
        self.counter = counter

    def bills(self, seen: HistoryView) -> list[_Bill]:
        """The bill of every message of a viewed history."""
        results: list[list[str]] = [[] for _ in seen.message_texts]
        media: list[list[int]] = [[] for _ in seen.message_texts]
        for r in seen.results:
            results[r.position].append(r.text)
            media[r.position].append(r.media_tokens)
        count = self.counter
        return [
            _Bill(
                text=text,
                results=tuple(texts),
                tokens=sum(count(p) for p in pieces) + extra,
                result_tokens=tuple(
                    (count(t) if t else 0) + m for t, m in zip(texts, images, strict=True)
                ),
            )
            for text, pieces, texts, images, extra in zip(
                seen.message_texts,
                seen.message_pieces,
                results,
                media,
                seen.message_media_tokens,
                strict=True,
            )
        ]

    def bill(self, message: Any) -> _Bill:
        """The bill of one message (a message a clearing step changed)."""
        return self.bills(view([message], format=self.format))[0]


def _rows_of(calls: Iterable[tuple[Sequence[_Bill], int, int]]) -> tuple[LedgerRow, ...]:
    """Ledger rows from each call's prompt bills, resident tool tokens and cleared count."""
    rows: list[LedgerRow] = []
    previous: Sequence[_Bill] = ()
    for n, (bills, tool_tokens, cleared) in enumerate(calls, start=1):
        shared = _shared_prefix(previous, bills)
        read = sum(b.tokens for b in bills[:shared])
        total = sum(b.tokens for b in bills)
        rows.append(
            LedgerRow(
                round=n,
                input_tokens=total,
                tool_tokens=tool_tokens,
                cache_read=read,
                cache_write=total - read,
                cache_broken=shared < len(previous),
                cleared=cleared,
            )
        )
        previous = bills
    return tuple(rows)


def _cleared_calls(
    history: list[Any],
    starts: Sequence[int],
    clear: ClearFn,
    reader: _Reader,
    original: Sequence[_Bill],
) -> Iterator[tuple[list[_Bill], int]]:
    """Each round's cleared prompt as bills, with the number of results shown cleared.

    Only messages not seen before are decoded.

    Clearers share unchanged message objects with their input, so a message identical (by
    identity) to the original or to last round's is not decoded again; this keeps a long
    replay linear in practice. Clearing never deletes or reorders, so positions align.
    """
    previous: list[Any] = []
    previous_bills: list[_Bill] = []
    for start in starts:
        prompt = list(clear(history[:start]))
        bills: list[_Bill] = []
        cleared = 0
        for i, message in enumerate(prompt):
            if i < len(history) and message is history[i]:
                bills.append(original[i])
                continue
            if i < len(previous) and message is previous[i]:
                bill = previous_bills[i]
            else:
                bill = reader.bill(message)
            bills.append(bill)
            if i < len(original):
                cleared += sum(
                    a != b for a, b in zip(bill.results, original[i].results, strict=False)
                )
        previous, previous_bills = prompt, bills
        yield bills, cleared
