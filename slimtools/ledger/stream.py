"""Replay a run message by message, keeping per-message figures rather than the messages.

:class:`RunReplay` is fed a run's messages one at a time and gives a :class:`TokenLedger` for
no clearing and for each policy, the counts ``slimtools analyze`` reports and, on request,
the run's timeline (:mod:`slimtools.ledger.timeline`). Messages are read with the engine's own
ingestion (:func:`slimtools.clearing.replay.read_messages`), and each policy is decided by
the engine in replay mode (:class:`~slimtools.clearing.replay.ReplayClearer`): one replay,
the engine's own, with no second model of its rules. No message is kept, so memory grows
with a run's message count, not its size. :meth:`TokenLedger.measure` is this replay on a
whole history.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slimtools.clearing import ClearingPolicy, detect_format, view
from slimtools.clearing.formats.base import RawCall, RawResult
from slimtools.clearing.formats.view import check_history, get_codec
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.clearing.replay import Cleared, Reading, ReplayClearer, SeenCall, read_messages
from slimtools.ledger._columns import LedgerColumns
from slimtools.ledger._rows import LedgerRow, LedgerSummary, summarize
from slimtools.ledger.timeline import RunTimeline, Timeline
from slimtools.tokens import TokenCounter, count_tokens

__all__ = ["NO_CLEARING", "LedgerColumns", "RunFigures", "RunReplay", "TokenLedger", "round_starts"]

NO_CLEARING = "no clearing"
"""The label of the replay without clearing, which every policy is measured against."""


@dataclass(frozen=True)
class RunFigures:
    """What one replayed run holds: counts, tokens per tool, and a ledger per strategy.

    Attributes:
        format: the history format replayed.
        messages: messages read.
        model_calls: model calls (turns), each one ledger row.
        tool_calls: tool calls made.
        tool_results: tool results returned.
        calls_by_tool: tool calls per tool name.
        result_tokens: per tool, the tokens of each of its results, in order (a result is
            attributed to the latest call with its id, else to the name it carries, else
            to ``"?"``).
        ledgers: per strategy label (``"no clearing"`` first, then each policy's), the
            ledger of every model call, as columns (:meth:`ledger` gives a
            :class:`~slimtools.ledger.TokenLedger`).
        resident_by_tool: per strategy label, tool-result tokens per tool in the prompt
            of the last model call.
        call_starts: per model call, the messages its prompt holds (where its turn starts).
        offsets: per message, the tokens of the messages before it (no clearing), one more
            for the end of the run.
        timeline: the run's tool results one by one under the first policy (None unless
            the replay was asked for it).
    """

    format: str
    messages: int
    model_calls: int
    tool_calls: int
    tool_results: int
    calls_by_tool: Mapping[str, int]
    result_tokens: Mapping[str, array[int]]
    ledgers: Mapping[str, LedgerColumns]
    resident_by_tool: Mapping[str, Mapping[str, int]]
    cache: CachePricing | None = DEFAULT_PRICING
    call_starts: array[int] = field(default_factory=lambda: array("q"))
    offsets: array[int] = field(default_factory=lambda: array("q"))
    timeline: RunTimeline | None = None

    @property
    def tool_tokens(self) -> int:
        """Tokens of every tool result read."""
        return sum(sum(tokens) for tokens in self.result_tokens.values())

    def ledger(self, label: str = NO_CLEARING) -> TokenLedger:
        """The :class:`~slimtools.ledger.TokenLedger` of one strategy."""
        return TokenLedger(self.ledgers[label].rows(), self.cache)


class RunReplay:
    """Replays one run under no clearing and each policy, one message at a time.

    Feed it every message in order with :meth:`add` (or :meth:`add_all`), then call
    :meth:`finish`. Each policy's ledger is that of a real :class:`~slimtools.clearing.Clearer`
    run before every model call; a test holds it to that on real and random runs.

    Args:
        format: the history format (one the clearing core reads).
        policies: label -> policy to replay besides no clearing (labels must differ from
            ``"no clearing"``). Each policy's ``token_counter`` gives way to ``counter``:
            the replay counts every text with one counter.
        counter: counts the tokens of every text.
        cache: the cache prices the ledgers bill with (a preset name, a ``CachePricing``
            or None).
        timeline: also note each tool result, where it entered the prompt and where the
            first policy cleared it (:attr:`RunFigures.timeline`).
    """

    def __init__(
        self,
        format: str,
        policies: Mapping[str, ClearingPolicy] | None = None,
        *,
        counter: TokenCounter = count_tokens,
        cache: CachePricing | str | None = DEFAULT_PRICING,
        timeline: bool = False,
    ) -> None:
        self.format = format
        self._codec = get_codec(format)
        self._count = counter
        self._pricing = pricing_of(cache)
        # The engine's own ingestion: turns, tokens once per piece, calls paired with results
        self._offsets = array("q")
        self._reading = Reading(offsets=self._offsets)
        self._results_so_far = 0
        self._messages = 0
        self._tool_results = 0
        self._calls_by_tool: Counter[str] = Counter()
        self._result_tokens: dict[str, array[int]] = {}
        self._by_tool: Counter[str] = Counter()  # result tokens per tool read so far
        self._resident_by_tool: dict[str, int] = {}  # ... as of the last model call
        self._base = LedgerColumns()
        self._call_starts = array("q")
        self._previous_end = 0  # messages in the previous model call's prompt
        policies = dict(policies or {})
        if NO_CLEARING in policies:
            raise ValueError(f"{NO_CLEARING!r} is the baseline's label; name the policy otherwise")
        self._tracks = [
            _Track(label, p, counter, format, placeholders=timeline and i == 0)
            for i, (label, p) in enumerate(policies.items())
        ]
        self._timeline = Timeline() if timeline else None

    def add_all(self, messages: Iterable[Any]) -> RunReplay:
        """Add every message of ``messages``; returns self."""
        for message in messages:
            self.add(message)
        return self

    def add(self, message: Any) -> None:
        """Read the next message of the run (a model call is accounted at each turn start)."""
        read_messages(
            self._reading,
            self._codec,
            self._count,
            (message,),
            0,
            first=self._messages,
            file=self._result,
            on_call=self._call,
            on_turn=self._account_call,
        )
        self._messages += 1
        for track in self._tracks:
            track.clearer.read(message)

    def _call(self, call: RawCall, seen: SeenCall, displaced: SeenCall | None) -> None:
        """A call was read."""
        self._calls_by_tool[call.name or "?"] += 1

    def _result(
        self, raw: RawResult, position: int, size: int, turn: int, call: SeenCall | None
    ) -> None:
        """A result was read, with the call it answers (None: an orphan or a duplicate)."""
        self._results_so_far += size
        self._tool_results += 1
        tool = (call.name if call is not None else "") or raw.name or "?"
        self._by_tool[tool] += size
        self._result_tokens.setdefault(tool, array("q")).append(size)
        if self._timeline is not None:
            self._timeline.result(raw, tool, size, position)

    def finish(self) -> RunFigures:
        """The figures of the run read so far."""
        ledgers = {NO_CLEARING: self._base}
        resident = {NO_CLEARING: dict(self._resident_by_tool)}
        for track in self._tracks:
            ledgers[track.label] = track.rows
            resident[track.label] = {
                tool: tokens - track.tool_saved[tool]
                for tool, tokens in self._resident_by_tool.items()
            }
        return RunFigures(
            format=self.format,
            messages=self._messages,
            model_calls=self._reading.turns,
            tool_calls=sum(self._calls_by_tool.values()),
            tool_results=self._tool_results,
            calls_by_tool=dict(self._calls_by_tool),
            result_tokens=dict(self._result_tokens),
            ledgers=ledgers,
            resident_by_tool=resident,
            cache=self._pricing,
            call_starts=self._call_starts,
            offsets=self._offsets,
            timeline=None if self._timeline is None else self._timeline.run,
        )

    def _account_call(self, end: int) -> None:
        """One model call, whose prompt is every message before ``end``."""
        offsets = self._reading.offsets
        self._call_starts.append(end)
        read, total = offsets[self._previous_end], offsets[end]
        self._base.append(total, self._results_so_far, read, False, 0)
        self._previous_end = end
        self._resident_by_tool = {tool: n for tool, n in self._by_tool.items() if n}
        timeline = self._timeline
        if timeline is not None:
            timeline.model_call()
        for i, track in enumerate(self._tracks):
            cleared = track.account(end, offsets, self._results_so_far)
            if i == 0 and timeline is not None:
                timeline.cleared(cleared)


@dataclass(frozen=True)
class TokenLedger:
    """Resident tool tokens and billed input per model call of one run.

    Build it with :meth:`measure` (replays a history). ``rows`` holds one :class:`LedgerRow`
    per call, ``summary`` the totals, ``table()`` a readable rendering.

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
        counter: TokenCounter = count_tokens,
        format: str | None = None,
        cache: CachePricing | str | None = DEFAULT_PRICING,
    ) -> TokenLedger:
        """Replay ``history`` as it grew, one model call per round, and account each call.

        The prompt of round ``k`` is every message before the ``k``-th model message, sent as
        is (``policy`` None) or cleared first under ``policy``, as an agent loop calling a
        :class:`~slimtools.clearing.Clearer` before each model call would. The replay is the
        engine's own (:class:`~slimtools.ledger.stream.RunReplay`), so ``slimtools analyze``
        gives the same rows.

        Args:
            history: a recorded history in any format the clearing core reads.
            policy: clear with slimtools under this policy before each call (its
                ``token_counter`` gives way to ``counter``).
            counter: token counter for every message.
            format: the history format; detected when None.
            cache: the cache prices (a ``CachePricing``, a preset name such as
                ``"openai"``, or None for no caching); Anthropic's 5-minute prices by default.

        Raises:
            TypeError: ``history`` is not a list of messages (a dict, a string, a generator),
                or ``policy`` is not a ``ClearingPolicy``.
        """
        check_history(history)  # a dict, a string or a generator would be measured as empty
        policies = {} if policy is None else {"policy": policy}
        replay = RunReplay(format or detect_format(history), policies, counter=counter, cache=cache)
        return replay.add_all(history).finish().ledger(*policies)

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


def round_starts(history: Sequence[Any], format: str | None = None) -> list[int]:
    """Index of the first message of each model call (each turn) in ``history``.

    A model call starts at each assistant message, or at each run of model-output items in
    the OpenAI Responses format: the clearing core's turn rule, as its ``view`` reports it.
    """
    return view(history, format=format).turn_starts


class _Track:
    """One policy's engine in replay mode and the ledger rows it gives: sizes and rows only."""

    def __init__(
        self,
        label: str,
        policy: ClearingPolicy,
        counter: TokenCounter,
        fmt: str,
        *,
        placeholders: bool,
    ) -> None:
        if not isinstance(policy, ClearingPolicy):
            raise TypeError(
                f"policy {label!r} must be a ClearingPolicy, got {type(policy).__name__}"
            )
        self.label = label
        self.clearer = ReplayClearer(
            policy.replace(token_counter=counter), format=fmt, placeholders=placeholders
        )
        self.rows = LedgerColumns()
        self._result_saved = 0
        self._cleared = 0
        self.tool_saved: Counter[str] = Counter()  # tokens clearing saved per tool so far
        self._previous_end = 0

    def account(self, end: int, offsets: Sequence[int], results: int) -> list[Cleared]:
        """One model call, whose prompt is the ``end`` messages read: clear, write its row,
        and say what was cleared."""
        clearer = self.clearer
        report, cleared = clearer.account()
        for done in cleared:
            self._result_saved += done.saving
            self.tool_saved[done.tool] += done.saving
        self._cleared += len(cleared)
        first = report.first_changed
        broken = first is not None and first < self._previous_end
        shared = first if broken and first is not None else self._previous_end
        read = offsets[shared] - clearer.saved_before(shared)
        self.rows.append(
            report.tokens_after, results - self._result_saved, read, broken, self._cleared
        )
        self._previous_end = end
        return cleared
