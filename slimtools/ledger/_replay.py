"""The token bill of tool results: a closed-form model and a ledger measured on real histories.

Two questions, two columns: how many tool-result tokens are *resident*
in the window at a given round (attention, context rot: prompt caching does not help), and
how many input tokens were *billed* over the run (each round re-sends the whole history;
caching makes the re-sent prefix cheap, but clearing rewrites history and so breaks the
cached prefix from the first rewritten message on).

:func:`tool_result_bill` is the closed-form model; :class:`TokenLedger` replays a recorded
history round by round (a round is one model call, i.e. one assistant message) and counts
both columns, with and without caching, optionally clearing before each call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from slimtools.clearing import Clearer, ClearingPolicy, HistoryView, detect_format, view
from slimtools.clearing.clear import ClearFn
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.tokens import TokenCounter, count_tokens


def tool_result_bill(rounds: int, per_result: int, *, every: int = 5) -> list[tuple[int, int, int]]:
    """Rows ``(round, resident, billed)`` for every ``every``-th round, no clearing, no cache.

    One ``per_result``-token result is added per round and never leaves: at round ``r``
    ``r * per_result`` tokens are resident, and the run has billed ``per_result * r(r+1)/2``
    input tokens for them (each round re-sends every earlier result)::

        >>> tool_result_bill(20, 5_000)[-1]
        (20, 100000, 1050000)

    Raises:
        ValueError: a negative count or a non-positive ``every``.
    """
    if rounds < 0 or per_result < 0 or every < 1:
        raise ValueError("rounds and per_result must be >= 0 and every >= 1")
    return [
        (r, r * per_result, per_result * r * (r + 1) // 2) for r in range(every, rounds + 1, every)
    ]


def format_bill(rows: Iterable[tuple[int, int, int]]) -> str:
    """Render :func:`tool_result_bill` rows one line a row."""
    return "\n".join(
        f"round {r:2d}: resident {resident:>9,} | billed input {billed:>11,}"
        for r, resident, billed in rows
    )


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One model call of a replayed run.

    Attributes:
        round: 1-based index of the model call.
        input_tokens: the whole prompt the model received.
        tool_tokens: tool-result tokens resident in that prompt (placeholders count as
            what they are, the text that replaced the original).
        cache_read: prompt tokens served from the cache (the unchanged prefix of the
            previous call's prompt).
        cache_write: prompt tokens written to the cache (everything after that prefix).
        cache_broken: True when a message the previous call had cached was rewritten, so
            the cache was read only up to it.
        cleared: tool results shown as cleared in this prompt.
    """

    round: int
    input_tokens: int
    tool_tokens: int
    cache_read: int
    cache_write: int
    cache_broken: bool
    cleared: int


@dataclass(frozen=True, slots=True)
class LedgerSummary:
    """Totals of a :class:`TokenLedger`.

    Attributes:
        rounds: model calls replayed.
        resident_end: tool-result tokens resident at the last call.
        resident_peak: the largest resident figure of any call.
        billed: input tokens billed without caching (sum of every prompt).
        cache_read: input tokens read from the cache over the run.
        cache_write: input tokens written to the cache over the run.
        billed_cached: the cached bill in plain-input-token equivalents,
            ``cache_read * pricing.read + cache_write * pricing.write``, rounded (equal to
            ``billed`` when the ledger models no caching).
        cache_breaks: calls whose cached prefix was broken by a rewrite.
    """

    rounds: int
    resident_end: int
    resident_peak: int
    billed: int
    cache_read: int
    cache_write: int
    billed_cached: int
    cache_breaks: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one model call saw: the billed text of each message and of each tool result."""

    message_texts: Sequence[str]
    result_texts: Sequence[str]
    cleared: int = 0


@dataclass(frozen=True)
class TokenLedger:
    """Resident tool tokens and billed input per model call of one run.

    Build it with :meth:`measure` (replays a history) or :meth:`from_snapshots` (you supply
    what each call saw). ``rows`` holds one :class:`LedgerRow` per call, ``summary`` the
    totals, ``table()`` a readable rendering.

    Caching is modelled as prefix caching with a breakpoint on the last message of every
    call (Anthropic's automatic caching; OpenAI and Gemini cache prefixes by themselves),
    calls close enough together for the cache to live, and no minimum cacheable length: each
    call reads the longest prefix of messages it shares with the previous call's prompt and
    writes the rest. ``pricing`` prices the two (``None``: no caching, every token at the
    input price). A message's tokens are the sum of its billed pieces (content, each call,
    each result), each counted alone, as the clearer counts them.
    """

    rows: tuple[LedgerRow, ...]
    pricing: CachePricing | None = DEFAULT_PRICING

    @classmethod
    def measure(
        cls,
        history: Sequence[Any],
        policy: ClearingPolicy | None = None,
        *,
        clear: ClearFn | None = None,
        counter: TokenCounter = count_tokens,
        format: str | None = None,
        cache: CachePricing | str | None = DEFAULT_PRICING,
    ) -> TokenLedger:
        """Replay ``history`` as it grew, one model call per round, and account each call.

        The prompt of round ``k`` is every message before the ``k``-th model message. With
        neither ``policy`` nor ``clear`` it is sent as is (no clearing); with ``policy`` a
        fresh :class:`~slimtools.clearing.Clearer` clears it first, as an agent loop calling
        the clearer before each model call would; with ``clear`` that callable does.

        Args:
            history: a recorded history in any format the clearing core reads.
            policy: clear with slimtools under this policy before each call.
            clear: any other clearing step before each call (wins over ``policy``).
            counter: token counter for every message.
            format: the history format; detected when None.
            cache: the cache prices (a ``CachePricing``, a preset name such as
                ``"openai"``, or None for no caching); Anthropic's 5-minute prices by default.
        """
        fmt = format or detect_format(history)
        if clear is None and policy is not None:
            clear = Clearer(policy, format=fmt, observed=False).clear
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
            (bills, sum(t for b in bills for t in b.result_tokens), cleared)
            for bills, cleared in calls
        )
        return cls(rows, pricing_of(cache))

    @classmethod
    def from_snapshots(
        cls,
        snapshots: Iterable[Snapshot],
        *,
        counter: TokenCounter = count_tokens,
        cache: CachePricing | str | None = DEFAULT_PRICING,
    ) -> TokenLedger:
        """Account a run from what each model call saw, in order (each text counted whole)."""
        memo: dict[str, int] = {}

        def bill(text: str) -> _Bill:
            found = memo.get(text)
            if found is None:
                found = memo[text] = counter(text)
            return _Bill(text, (), found, ())

        def calls() -> Iterator[tuple[list[_Bill], int, int]]:
            for snap in snapshots:
                results = sum(bill(t).tokens for t in snap.result_texts)
                yield [bill(t) for t in snap.message_texts], results, snap.cleared

        return cls(_rows_of(calls()), pricing_of(cache))

    @property
    def summary(self) -> LedgerSummary:
        """Totals over the run (all zero for a run without model calls)."""
        rows = self.rows
        return summarize(
            [r.tool_tokens for r in rows],
            [r.input_tokens for r in rows],
            [r.cache_read for r in rows],
            [r.cache_write for r in rows],
            [r.cache_broken for r in rows],
            pricing=self.pricing,
        )

    def table(self, *, every: int = 1) -> str:
        """Render every ``every``-th row (and the last) plus a totals line, aligned."""
        head = (
            f"{'round':>5} {'input':>9} {'tool':>9} {'cache read':>11} {'cache write':>11} broken"
        )
        lines = [head]
        for row in self.rows:
            if row.round % every and row is not self.rows[-1]:
                continue
            line = (
                f"{row.round:>5} {row.input_tokens:>9,} {row.tool_tokens:>9,} "
                f"{row.cache_read:>11,} {row.cache_write:>11,} {'yes' if row.cache_broken else ''}"
            )
            lines.append(line.rstrip())
        s = self.summary
        lines.append(
            f"{s.rounds} calls: billed {s.billed:,} uncached, {s.billed_cached:,} cached "
            f"(read {s.cache_read:,}, write {s.cache_write:,}); resident at end "
            f"{s.resident_end:,}, peak {s.resident_peak:,}; cache broken {s.cache_breaks}x"
        )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def cached_cost(read: int, write: int, pricing: CachePricing | None) -> float:
    """Cache reads and writes in input-token equivalents (``pricing`` None: no caching,
    every token at the input price): the one cost rule of every ledger figure."""
    return float(read + write) if pricing is None else pricing.cost(read, write)


def summarize(
    tool_tokens: Sequence[int],
    input_tokens: Sequence[int],
    cache_read: Sequence[int],
    cache_write: Sequence[int],
    cache_broken: Sequence[int],
    *,
    pricing: CachePricing | None,
) -> LedgerSummary:
    """The :class:`LedgerSummary` of a ledger's columns, one value per model call each."""
    read, write = sum(cache_read), sum(cache_write)
    return LedgerSummary(
        rounds=len(input_tokens),
        resident_end=tool_tokens[-1] if tool_tokens else 0,
        resident_peak=max(tool_tokens, default=0),
        billed=sum(input_tokens),
        cache_read=read,
        cache_write=write,
        billed_cached=round(cached_cost(read, write, pricing)),
        cache_breaks=sum(cache_broken),
    )


def _shared_prefix(previous: Sequence[_Bill], current: Sequence[_Bill]) -> int:
    """Number of leading messages identical in both prompts."""
    n = min(len(previous), len(current))
    for i in range(n):
        a, b = previous[i], current[i]
        if a is not b and a.text != b.text:
            return i
    return n


def round_starts(history: Sequence[Any], format: str | None = None) -> list[int]:
    """Index of the first message of each model call (each turn) in ``history``.

    A model call starts at each assistant message, or at each run of model-output items in
    the OpenAI Responses format: the clearing core's turn rule, as its ``view`` reports it.
    """
    return view(history, format=format).turn_starts


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
