"""Replay a run message by message, keeping per-message figures rather than the messages.

:class:`RunReplay` is fed a run's messages one at a time (:meth:`RunReplay.add`) and gives
the same :class:`~slimtools.ledger.TokenLedger` rows as :meth:`TokenLedger.measure
<slimtools.ledger.TokenLedger.measure>` for no clearing and for each policy, plus the counts
``slimtools analyze`` reports (calls and result tokens per tool). Messages are read with the
engine's own ingestion (:func:`slimtools.clearing.replay.read_messages`); each becomes a
small stand-in (:mod:`slimtools.ledger._standin`) that the engine in replay mode
(:class:`~slimtools.clearing.replay.ReplayClearer`, one per policy) reads, so every decision
is the engine's own while a long session's texts are never held; once read, a stand-in is
kept only while its engine may still rewrite it (a result still clearable). Per message
there remain a few machine words (token offsets, ledger columns, an emptied slot among the
stand-ins): about a hundred bytes a message with one policy. Holding the run whole, as
``measure`` does, was the simpler design; memory then grew with the file rather than with
its message count.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.formats.base import RawCall, RawResult
from slimtools.clearing.formats.view import get_codec
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.clearing.replay import Reading, SeenCall, read_messages, standing_args
from slimtools.ledger import _standin
from slimtools.ledger._columns import LedgerColumns
from slimtools.ledger._replay import TokenLedger
from slimtools.ledger._tracks import Track
from slimtools.tokens import TokenCounter, count_tokens

__all__ = ["NO_CLEARING", "LedgerColumns", "RunFigures", "RunReplay"]

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

    @property
    def tool_tokens(self) -> int:
        """Tokens of every tool result read."""
        return sum(sum(tokens) for tokens in self.result_tokens.values())

    def ledger(self, label: str = NO_CLEARING) -> TokenLedger:
        """The :class:`~slimtools.ledger.TokenLedger` of one strategy."""
        return self.ledgers[label].ledger(self.cache)


class RunReplay:
    """Replays one run under no clearing and each policy, one message at a time.

    Feed it every message in order with :meth:`add` (or :meth:`add_all`), then call
    :meth:`finish`. The ledgers equal ``TokenLedger.measure(history, policy, counter=...,
    cache=...)`` on the whole run; a test holds it to that on real and random runs.

    Args:
        format: the history format (one the clearing core reads).
        policies: label -> policy to replay besides no clearing (labels must differ from
            ``"no clearing"``). Each policy's ``token_counter`` gives way to ``counter``:
            the replay counts every text with one counter.
        counter: counts the tokens of every text.
        cache: the cache prices the ledgers bill with (a preset name, a ``CachePricing``
            or None).
    """

    def __init__(
        self,
        format: str,
        policies: Mapping[str, ClearingPolicy] | None = None,
        *,
        counter: TokenCounter = count_tokens,
        cache: CachePricing | str | None = DEFAULT_PRICING,
    ) -> None:
        self.format = format
        self._codec = get_codec(format)
        self._count = counter
        self._pricing = pricing_of(cache)
        self._standin_format = _standin.standin_format(format)
        # The engine's own ingestion: turns, tokens once per piece, calls paired with results
        self._offsets = array("q")
        self._reading = Reading(offsets=self._offsets)
        self._results_so_far = 0
        self._messages = 0
        self._names: dict[str, str] = {}  # one string object per tool name
        self._tool_results = 0
        self._calls_by_tool: Counter[str] = Counter()
        self._result_tokens: dict[str, array[int]] = {}
        self._by_tool: Counter[str] = Counter()  # result tokens per tool read so far
        self._resident_by_tool: dict[str, int] = {}  # ... as of the last model call
        self._base = LedgerColumns()
        self._call_starts = array("q")
        self._previous_end = 0  # messages in the previous model call's prompt
        self._orphans = 0
        self._message_calls: list[_standin.Call] = []  # of the message being read
        self._message_results: list[_standin.Result] = []
        policies = dict(policies or {})
        if NO_CLEARING in policies:
            raise ValueError(f"{NO_CLEARING!r} is the baseline's label; name the policy otherwise")
        self._tracks = [
            Track(label, p, counter, self._standin_format) for label, p in policies.items()
        ]
        self._superseding = any(track.policy.supersede for track in self._tracks)
        # The stand-ins read so far, None where every engine has read them but the first and
        # the last (by which an engine sees that its history grew by appending). A sequence
        # holding only those two saved these 8 bytes a message, but the engines' reads
        # through its Python ``__getitem__`` made a file of short runs some 5% slower.
        self._standins: list[Any] = []
        self._released = 1  # stand-ins from 1 up to this one are None

    def add_all(self, messages: Iterable[Any]) -> RunReplay:
        """Add every message of ``messages``; returns self."""
        for message in messages:
            self.add(message)
        return self

    def add(self, message: Any) -> None:
        """Read the next message of the run (a model call is accounted at each turn start)."""
        reading, position = self._reading, self._messages
        self._message_calls, self._message_results = [], []
        read_messages(
            reading,
            self._codec,
            self._count,
            (message,),
            0,
            first=position,
            file=self._result,
            on_call=self._call,
            on_turn=self._account_call,
        )
        self._messages = position + 1
        if self._tracks:
            model = reading.previous_model
            calls = self._message_calls if model else []
            standin = _standin.build(
                self._standin_format, model, reading.text_tokens, calls, self._message_results
            )
            self._standins.append(standin)

    def _call(self, call: RawCall, seen: SeenCall, displaced: SeenCall | None) -> None:
        """A call was read (``displaced``: an unanswered earlier call with its id)."""
        name = self._names.setdefault(call.name, call.name)
        for track in self._tracks:
            if displaced is not None:  # its id is taken: the earlier call is never answered
                track.answered(displaced.position)
            track.called(seen.position)
        self._calls_by_tool[name or "?"] += 1
        args = standing_args(call.args) if self._superseding else None
        self._message_calls.append(_standin.Call(str(seen.number), name, seen.args_tokens, args))

    def _result(
        self, raw: RawResult, position: int, size: int, turn: int, call: SeenCall | None
    ) -> None:
        """A result was read, with the call it answers (None: an orphan or a duplicate)."""
        self._results_so_far += size
        self._tool_results += 1
        tool = (call.name if call is not None else "") or raw.name or "?"
        self._by_tool[tool] += size
        self._result_tokens.setdefault(tool, array("q")).append(size)
        if call is None:
            self._orphans += 1
            uid = f"o{self._orphans}"  # answers no stand-in call
        else:
            uid = str(call.number)
            for track in self._tracks:
                if raw.clearable:
                    track.file(raw, size, call, position, turn=turn, uid=uid)
                track.answered(call.position)
        empty = not raw.text and not raw.media
        self._message_results.append(_standin.Result(uid, raw.name, size, empty, raw.clearable))

    def finish(self) -> RunFigures:
        """The figures of the run read so far."""
        ledgers = {NO_CLEARING: self._base}
        resident = {NO_CLEARING: dict(self._resident_by_tool)}
        for track in self._tracks:
            ledgers[track.label] = track.rows
            resident[track.label] = {
                tool: tokens - track.tool_saved_at_call.get(tool, 0)
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
        )

    def _account_call(self, end: int) -> None:
        """One model call, whose prompt is every message before ``end``."""
        offsets = self._reading.offsets
        self._call_starts.append(end)
        read, total = offsets[self._previous_end], offsets[end]
        self._base.append(total, self._results_so_far, read, False, 0)
        self._previous_end = end
        self._resident_by_tool = {tool: n for tool, n in self._by_tool.items() if n}
        if not self._tracks:
            return
        standins = self._standins
        for track in self._tracks:
            track.account(standins, offsets, self._results_so_far)
        for i in range(self._released, end - 1):
            standins[i] = None
        self._released = max(self._released, end - 1)
