"""One policy's clearing engine fed stand-ins, and the ledger rows it gives (for RunReplay).

A :class:`Track` owns a real :class:`~slimtools.clearing.Clearer` that reads the stand-ins of
:mod:`slimtools.ledger._standin`. When a result is read, the track renders its real
placeholder with the engine's own renderer (so one rule makes placeholders) and keeps only
what clearing it would save; at each model call it reads the engine's report and writes the
ledger row: tokens sent, tool tokens resident, what the cache could serve.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from typing import Any

from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.clearing._batch import Pending as EnginePending
from slimtools.clearing._batch import SeenCall as EngineCall
from slimtools.clearing._batch import State
from slimtools.clearing._render import Placeholders
from slimtools.clearing.formats.base import RawResult
from slimtools.clearing.placeholder import PlaceholderInfo
from slimtools.errors import ConfigurationError
from slimtools.ledger import _standin
from slimtools.ledger._columns import LedgerColumns
from slimtools.typing import TokenCounter

logger = logging.getLogger("slimtools.ledger")

CallRecord = tuple[str, str, dict[str, Any], int, int]
"""A call as the replay keeps it until its result: stand-in id, name, arguments, position
and billed tokens."""


class Track:
    """One policy's engine, fed stand-ins, and the ledger rows it produces."""

    def __init__(self, label: str, policy: ClearingPolicy, counter: TokenCounter, fmt: str) -> None:
        if not isinstance(policy, ClearingPolicy):
            raise TypeError(
                f"policy {label!r} must be a ClearingPolicy, got {type(policy).__name__}"
            )
        if policy.thin is not None:
            raise ConfigurationError(
                f"policy {label!r}: the streaming replay does not model placeholders that thin "
                "with age (thin=) yet; measure them with TokenLedger.measure or slimtools report"
            )
        self.label = label
        self.policy = policy
        self._count = counter
        self._renderer = Placeholders(policy.replace(token_counter=counter))
        standin_policy = policy.replace(
            token_counter=_standin.counter(counter), placeholder=self._placeholder
        )
        self.clearer = Clearer(standin_policy, format=fmt, observed=False)
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
        call: CallRecord,
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
        text = self._renderer.text(pending)
        if text is None or (len(text) >= len(raw.text) and not raw.media):
            # never shorter: a stand-in as long as the result's, which the engine keeps
            self._bodies[uid] = _standin.carried(0, length=_standin.RESULT_CHARS)
            return
        size = self._count(text)
        self._bodies[uid] = _standin.carried(size)
        args_saving = 0
        if self.policy.clear_tool_inputs and self.policy.clears_inputs_of(tool):
            args_saving = self._renderer.args_saving(name, piece)
        self._pending[uid] = (position, tokens, tool, call_position, size, args_saving)

    def _placeholder(self, info: PlaceholderInfo) -> str:
        """The stand-in template: the body prepared when the result was read."""
        return self._bodies.pop(info.call_id)

    def account(self, standins: list[Any], offsets: Sequence[int], results: int) -> None:
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
