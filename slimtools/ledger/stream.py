"""Replay a run message by message, keeping per-message figures rather than the messages.

:class:`RunReplay` is fed a run's messages one at a time (:meth:`RunReplay.add`) and gives
the same :class:`~slimtools.ledger.TokenLedger` rows as :meth:`TokenLedger.measure
<slimtools.ledger.TokenLedger.measure>` for no clearing and for each policy, plus the counts
``slimtools analyze`` reports (calls and result tokens per tool). Each message becomes a
small stand-in (:mod:`slimtools.ledger._standin`) that a real
:class:`~slimtools.clearing.Clearer` per policy reads, so every decision is the engine's own
while a long session's texts are never held; once read, a stand-in is kept only while its
engine may still rewrite it (a result still clearable). Per message there remain a few
machine words (token offsets, ledger columns, an emptied slot among the stand-ins): about a
hundred bytes a message with one policy. Holding the run whole, as ``measure`` does, was
the simpler design; memory then grew with the file rather than with its message count.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slimtools.clearing import MEDIA_TOKENS, ClearingPolicy
from slimtools.clearing.formats.base import starts_turn
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.ledger import _standin
from slimtools.ledger._columns import LedgerColumns
from slimtools.ledger._replay import TokenLedger
from slimtools.ledger._tracks import CallRecord, Track
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
        self._offsets = array("q", [0])  # tokens before each message, and in all
        self._results_so_far = 0
        self._previous_model = False
        self._turns = 0
        self._messages = 0
        self._calls: dict[str, CallRecord] = {}
        self._names: dict[str, str] = {}  # one string object per tool name
        self._tool_results = 0
        self._calls_by_tool: Counter[str] = Counter()
        self._result_tokens: dict[str, array[int]] = {}
        self._by_tool: Counter[str] = Counter()  # result tokens per tool read so far
        self._resident_by_tool: dict[str, int] = {}  # ... as of the last model call
        self._base = LedgerColumns()
        self._call_starts = array("q")
        self._previous_end = 0  # messages in the previous model call's prompt
        self._uid = 0
        policies = dict(policies or {})
        if NO_CLEARING in policies:
            raise ValueError(f"{NO_CLEARING!r} is the baseline's label; name the policy otherwise")
        self._tracks = [
            Track(label, p, counter, self._standin_format) for label, p in policies.items()
        ]
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
        decoded = safe_decode(self._codec, message)
        model = decoded.model_output
        if starts_turn(self._codec.run_turns, model, self._previous_model):
            self._turns += 1
            self._account_call()
        self._previous_model = model
        position = self._messages
        self._messages += 1
        count = self._count
        tokens = count(decoded.content_text) if decoded.content_text else 0
        content = tokens if decoded.content_text else None
        calls: list[_standin.Call] = []
        for c in decoded.calls:
            piece = count(f"{c.name} {c.args_text}")
            tokens += piece
            uid = self._next_id()
            name = self._names.setdefault(c.name, c.name)
            # the latest call with an id is the one a result answers (the engine's rule)
            args = c.args if self._tracks else {}  # only placeholders show them
            taken = self._calls.get(c.id)
            self._calls[c.id] = (uid, name, args, position, piece)
            for track in self._tracks:
                if taken is not None:  # its id is taken: the earlier call is never answered
                    track.answered(taken[3])
                track.called(position)
            self._calls_by_tool[name or "?"] += 1
            calls.append(_standin.Call(uid, name, piece))
        results: list[_standin.Result] = []
        for raw in decoded.results:
            size = count(raw.text) if raw.text else 0
            if raw.media:
                size += MEDIA_TOKENS * len(raw.media)
            tokens += size
            self._results_so_far += size
            self._tool_results += 1
            call = self._calls.pop(raw.call_id, None)  # a result consumes its call
            tool = (call[1] if call is not None else "") or raw.name or "?"
            self._by_tool[tool] += size
            self._result_tokens.setdefault(tool, array("q")).append(size)
            if call is None:
                uid = self._next_id()  # an orphan or a duplicate: answers no stand-in call
            else:
                uid = call[0]
                for track in self._tracks:
                    if raw.clearable:
                        track.file(raw, size, call, position, self._turns)
                    track.answered(call[3])
            empty = not raw.text and not raw.media
            results.append(_standin.Result(uid, raw.name, size, empty, raw.clearable))
        self._offsets.append(self._offsets[-1] + tokens)
        if self._tracks:
            model_calls = calls if model else []
            self._standins.append(
                _standin.build(self._standin_format, model, content, model_calls, results)
            )

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
            model_calls=self._turns,
            tool_calls=sum(self._calls_by_tool.values()),
            tool_results=self._tool_results,
            calls_by_tool=dict(self._calls_by_tool),
            result_tokens=dict(self._result_tokens),
            ledgers=ledgers,
            resident_by_tool=resident,
            cache=self._pricing,
            call_starts=self._call_starts,
        )

    def _next_id(self) -> str:
        self._uid += 1
        return str(self._uid)

    def _account_call(self) -> None:
        """One model call, whose prompt is every message read so far."""
        end, offsets = self._messages, self._offsets
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
