"""Replay a run message by message, keeping per-message figures rather than the messages.

:class:`RunReplay` is fed a run's messages one at a time (:meth:`RunReplay.add`) and gives
the same :class:`~slimtools.ledger.TokenLedger` rows as :meth:`TokenLedger.measure
<slimtools.ledger.TokenLedger.measure>` for no clearing and for each policy, plus the counts
``slimtools analyze`` reports (calls and result tokens per tool). It keeps, per message, its
token offset and a small stand-in (:mod:`slimtools.ledger._standin`) that a real
:class:`~slimtools.clearing.Clearer` per policy reads, so every decision is the engine's own
while a long session's texts are never held. Holding the run whole, as ``measure`` does,
was the simpler design; memory then grew with the file rather than with its message count.
"""

from __future__ import annotations

import logging
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.clearing._batch import Call as EngineCall
from slimtools.clearing._batch import Pending as EnginePending
from slimtools.clearing._batch import State
from slimtools.clearing._codec import RawResult
from slimtools.clearing._view import get_codec, safe_decode
from slimtools.clearing.placeholder import PlaceholderInfo
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.ledger import _standin
from slimtools.ledger._replay import LedgerRow, LedgerSummary, TokenLedger
from slimtools.tokens import TokenCounter, count_tokens

logger = logging.getLogger("slimtools.ledger")

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

    @property
    def tool_tokens(self) -> int:
        """Tokens of every tool result read."""
        return sum(sum(tokens) for tokens in self.result_tokens.values())

    def ledger(self, label: str = NO_CLEARING) -> TokenLedger:
        """The :class:`~slimtools.ledger.TokenLedger` of one strategy."""
        return self.ledgers[label].ledger(self.cache)


class LedgerColumns:
    """A ledger's rows as columns of machine integers: 48 bytes a model call, where
    :class:`~slimtools.ledger.LedgerRow` objects take about 230 (a long session has
    tens of thousands of calls per strategy).

    Attributes are ``array("q")`` columns, one value per model call, named as the
    :class:`~slimtools.ledger.LedgerRow` fields (``cache_broken`` holds 0 or 1).
    """

    __slots__ = (
        "cache_broken",
        "cache_read",
        "cache_write",
        "cleared",
        "input_tokens",
        "tool_tokens",
    )

    def __init__(self) -> None:
        self.input_tokens = array("q")
        self.tool_tokens = array("q")
        self.cache_read = array("q")
        self.cache_write = array("q")
        self.cache_broken = array("q")
        self.cleared = array("q")

    def __len__(self) -> int:
        return len(self.input_tokens)

    def append(
        self, input_tokens: int, tool_tokens: int, read: int, broken: bool, cleared: int
    ) -> None:
        """Add the next model call (what was not read from the cache was written to it)."""
        self.input_tokens.append(input_tokens)
        self.tool_tokens.append(tool_tokens)
        self.cache_read.append(read)
        self.cache_write.append(input_tokens - read)
        self.cache_broken.append(broken)
        self.cleared.append(cleared)

    def rows(self) -> tuple[LedgerRow, ...]:
        """The rows, as :class:`~slimtools.ledger.LedgerRow` objects."""
        columns = zip(
            self.input_tokens,
            self.tool_tokens,
            self.cache_read,
            self.cache_write,
            self.cache_broken,
            self.cleared,
            strict=True,
        )
        return tuple(
            LedgerRow(n, i, t, r, w, bool(b), c) for n, (i, t, r, w, b, c) in enumerate(columns, 1)
        )

    def ledger(self, cache: CachePricing | str | None = DEFAULT_PRICING) -> TokenLedger:
        """The rows as a :class:`~slimtools.ledger.TokenLedger` billed at ``cache`` prices."""
        return TokenLedger(self.rows(), pricing_of(cache))

    def summary(self, cache: CachePricing | str | None = DEFAULT_PRICING) -> LedgerSummary:
        """``self.ledger(cache).summary``, without building the rows."""
        pricing = pricing_of(cache)
        read, write = sum(self.cache_read), sum(self.cache_write)
        cost = read + write if pricing is None else pricing.cost(read, write)
        return LedgerSummary(
            rounds=len(self),
            resident_end=self.tool_tokens[-1] if len(self) else 0,
            resident_peak=max(self.tool_tokens, default=0),
            billed=sum(self.input_tokens),
            cache_read=read,
            cache_write=write,
            billed_cached=round(cost),
            cache_breaks=sum(self.cache_broken),
        )


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
        self._calls: dict[str, tuple[str, str, dict[str, Any], int, int]] = {}
        self._names: dict[str, str] = {}  # one string object per tool name
        self._tool_results = 0
        self._calls_by_tool: Counter[str] = Counter()
        self._result_tokens: dict[str, array[int]] = {}
        self._by_tool: Counter[str] = Counter()  # result tokens per tool read so far
        self._resident_by_tool: dict[str, int] = {}  # ... as of the last model call
        self._base = LedgerColumns()
        self._previous_end = 0  # messages in the previous model call's prompt
        self._uid = 0
        policies = dict(policies or {})
        if NO_CLEARING in policies:
            raise ValueError(f"{NO_CLEARING!r} is the baseline's label; name the policy otherwise")
        self._tracks = [
            _Track(label, p, counter, self._standin_format) for label, p in policies.items()
        ]
        self._standins: list[Any] = []

    def add_all(self, messages: Iterable[Any]) -> RunReplay:
        """Add every message of ``messages``; returns self."""
        for message in messages:
            self.add(message)
        return self

    def add(self, message: Any) -> None:
        """Read the next message of the run (a model call is accounted at each turn start)."""
        decoded = safe_decode(self._codec, message)
        model = decoded.model_output
        if model and not (self._codec.run_turns and self._previous_model):
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
            self._calls[c.id] = (uid, name, c.args, position, piece)
            self._calls_by_tool[name or "?"] += 1
            calls.append(_standin.Call(uid, name, piece))
        results: list[_standin.Result] = []
        for raw in decoded.results:
            size = count(raw.text) if raw.text else 0
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
                if raw.clearable:
                    for track in self._tracks:
                        track.file(raw, size, call, position, self._turns)
            results.append(_standin.Result(uid, raw.name, size, not raw.text, raw.clearable))
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
        )

    def _next_id(self) -> str:
        self._uid += 1
        return str(self._uid)

    def _account_call(self) -> None:
        """One model call, whose prompt is every message read so far."""
        end, offsets = self._messages, self._offsets
        read, total = offsets[self._previous_end], offsets[end]
        self._base.append(total, self._results_so_far, read, False, 0)
        self._previous_end = end
        self._resident_by_tool = {tool: n for tool, n in self._by_tool.items() if n}
        for track in self._tracks:
            track.account(self._standins, offsets, self._results_so_far)


class _Track:
    """One policy's engine, fed stand-ins, and the ledger rows it produces."""

    def __init__(self, label: str, policy: ClearingPolicy, counter: TokenCounter, fmt: str) -> None:
        if not isinstance(policy, ClearingPolicy):
            raise TypeError(
                f"policy {label!r} must be a ClearingPolicy, got {type(policy).__name__}"
            )
        self.label = label
        self.policy = policy
        self._count = counter
        self._renderer = Clearer(policy.replace(token_counter=counter))
        standin_policy = policy.replace(
            token_counter=_standin.counter(counter), placeholder=self._placeholder
        )
        self.clearer = Clearer(standin_policy, format=fmt)
        _skip_output_copies(self.clearer)
        self._bodies: dict[str, str] = {}
        # uid -> (position, tokens, tool, call position, placeholder tokens, argument saving)
        self._pending: dict[str, tuple[int, int, str, int, int, int]] = {}
        self._saved = _Fenwick()
        self._result_saved = 0
        self._cleared = 0
        self._tool_saved: Counter[str] = Counter()
        self.tool_saved_at_call: dict[str, int] = {}
        self.rows = LedgerColumns()
        self._previous_end = 0

    def file(
        self,
        raw: RawResult,
        tokens: int,
        call: tuple[str, str, dict[str, Any], int, int],
        position: int,
        turn: int,
    ) -> None:
        """Note a clearable result: its placeholder's cost, and what clearing it saves."""
        uid, name, args, call_position, piece = call
        tool = name or raw.name or "tool"  # the engine's name for a paired result
        if self.policy.turns_to_keep(tool) is None:
            return
        engine_call = EngineCall(name, args, call_position, piece, 0)
        pending = EnginePending(raw, tool, engine_call, position, turn, tokens, 0)
        # The engine's own rendering of the real result: one rule for placeholders. A
        # template that fails is logged there and gives None: the result stays.
        text = self._renderer._render(pending)
        if text is None or len(text) >= len(raw.text):
            # never shorter: a stand-in as long as the result's, which the engine keeps
            self._bodies[uid] = _standin.carried(0, length=_standin.RESULT_CHARS)
            return
        size = self._count(text)
        self._bodies[uid] = _standin.carried(size)
        args_saving = 0
        if self.policy.clear_tool_inputs and self.policy.clears_inputs_of(tool):
            args_saving = max(0, piece - self._count(f"{name} {{}}"))
        self._pending[uid] = (position, tokens, tool, call_position, size, args_saving)

    def _placeholder(self, info: PlaceholderInfo) -> str:
        """The stand-in template: the body prepared when the result was read."""
        return self._bodies.pop(info.call_id)

    def account(self, standins: list[Any], offsets: array[int], results: int) -> None:
        """One model call: clear the stand-ins of the prompt and write its ledger row."""
        _, report = self.clearer.clear_with_report(standins)
        if report.cleared_call_ids:
            expected = 0
            for uid in report.cleared_call_ids:
                position, tokens, tool, call_position, placeholder, args_saving = self._pending.pop(
                    uid
                )
                saving = tokens - placeholder
                self._saved.add(position, saving)
                self._result_saved += saving
                self._tool_saved[tool] += saving
                expected += saving
                if args_saving:
                    self._saved.add(call_position, args_saving)
                    expected += args_saving
            self._cleared += report.cleared_tool_uses
            if expected != report.cleared_input_tokens:  # pragma: no cover - a broken mirror
                logger.warning(
                    "replay of %s: %d tokens saved, the engine says %d",
                    self.label,
                    expected,
                    report.cleared_input_tokens,
                )
        end = len(standins)
        first = report.first_changed
        broken = first is not None and first < self._previous_end
        shared = first if broken and first is not None else self._previous_end
        read = offsets[shared] - self._saved.before(shared)
        total = report.tokens_after
        self.rows.append(total, results - self._result_saved, read, broken, self._cleared)
        self.tool_saved_at_call = dict(self._tool_saved)
        self._previous_end = end


class _Uncopied(list):  # type: ignore[type-arg]
    """The engine's output list, handed back as an empty copy: the replay reads reports only."""

    __slots__ = ()

    def copy(self) -> list[Any]:
        return []


def _skip_output_copies(clearer: Clearer) -> None:
    """Spare the engine its copy of the whole history at every call.

    ``clear_with_report`` returns a copy of the cleared history, which the replay never
    reads; over a 180,000-message session those copies (and freeing them) were two thirds
    of the time and made it grow with the square of the run. The rejected alternative,
    re-implementing ``clear_with_report`` without the copy, would have been a second copy
    of the engine's plumbing. Where the engine keeps its state differently this does
    nothing: the replay is then slower, never different (a test holds it to ``measure``).
    """
    state = getattr(clearer, "_state", None)
    if isinstance(state, State) and type(state.out) is list and not state.out:
        state.out = _Uncopied()


class _Fenwick:
    """Saved tokens by message position, summed before any position in log time."""

    def __init__(self) -> None:
        self._tree = [0] * 65  # 1-based; the capacity (64) doubles as positions grow

    def add(self, position: int, value: int) -> None:
        while position + 1 >= len(self._tree):
            self._grow()
        tree, i = self._tree, position + 1
        while i < len(tree):
            tree[i] += value
            i += i & -i

    def before(self, position: int) -> int:
        tree, i, total = self._tree, min(position, len(self._tree) - 1), 0
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    def _grow(self) -> None:
        # A node covers (i - lowbit(i), i] whatever the size, so doubling keeps every node;
        # of the new ones only the last, which covers everything, is not empty.
        n = len(self._tree) - 1
        total = self.before(n)
        self._tree += [0] * n
        self._tree[2 * n] = total
