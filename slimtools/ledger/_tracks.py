"""One policy's clearing engine fed stand-ins, and the ledger rows it gives (for RunReplay).

A :class:`Track` owns a real :class:`~slimtools.clearing.Clearer` that reads the stand-ins of
:mod:`slimtools.ledger._standin`. When a result is read, the track renders its real
placeholder with the engine's own renderer (so one rule makes placeholders) and keeps only
what clearing it would save; at each model call it reads the engine's report and writes the
ledger row: tokens sent, tool tokens resident, what the cache could serve.

Memory is what a long session costs, so per message a track keeps only machine integers:
its engine holds the stand-ins it may still rewrite (those of results still clearable, and
of calls whose arguments clearing them may blank), and no others once it has read them.
"""

from __future__ import annotations

import logging
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.clearing._batch import Forgetful, State
from slimtools.clearing._batch import Pending as EnginePending
from slimtools.clearing._batch import SeenCall as EngineCall
from slimtools.clearing._render import Placeholders
from slimtools.clearing.formats.base import RawResult
from slimtools.clearing.placeholder import PlaceholderInfo
from slimtools.errors import ConfigurationError
from slimtools.ledger import _standin
from slimtools.ledger._columns import LedgerColumns
from slimtools.tokens import TokenCounter

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
        if policy.supersede:
            raise ConfigurationError(
                f"policy {label!r}: the streaming replay does not model superseded results "
                "(supersede=True) yet; measure them with TokenLedger.measure"
            )
        self.label = label
        self.policy = policy
        self._count = counter
        self._renderer = Placeholders(policy.replace(token_counter=counter))
        self._bodies: dict[str, str] = {}  # uid -> its placeholder's stand-in, until used
        standin_policy = policy.replace(
            token_counter=_standin.counter(counter), placeholder=_Bodies(self._bodies)
        )
        self.clearer = Clearer(standin_policy, format=fmt, observed=False)
        self._holds: dict[int, int] = {}  # position -> rewrites the engine may still make there
        self._out = _lean(self.clearer, self._holds)
        # uid -> (position, tokens, tool, call position, placeholder tokens, argument saving)
        self._pending: dict[str, tuple[int, int, str, int, int, int]] = {}
        self._blanks = bool(policy.clear_tool_inputs)  # whether call messages are rewritten
        self._saved = _Fenwick()
        self._result_saved = 0
        self._cleared = 0
        self._tool_saved: Counter[str] = Counter()
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
        self._hold(position)
        if args_saving:
            self._hold(call_position)

    def called(self, position: int) -> None:
        """A call was read at ``position``: until it is answered, clearing its result may
        blank its arguments there."""
        if self._blanks:
            self._hold(position)

    def answered(self, position: int) -> None:
        """The call read at ``position`` was answered (its result filed, if clearable, just
        before), or a later call took its id, so it never will be."""
        if self._blanks:
            self._release(position)

    @property
    def tool_saved_at_call(self) -> dict[str, int]:
        """Tokens clearing saved per tool, as of the last model call accounted."""
        return dict(self._tool_saved)

    def account(self, standins: Sequence[Any], offsets: Sequence[int], results: int) -> None:
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
                self._release(position)
                if args_saving:
                    self._saved.add(call_position, args_saving)
                    expected += args_saving
                    self._release(call_position)
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
        self._previous_end = end

    def _hold(self, position: int) -> None:
        """The engine may rewrite the stand-in at ``position`` once more: it keeps it."""
        holds = self._holds
        holds[position] = holds.get(position, 0) + 1

    def _release(self, position: int) -> None:
        """One rewrite at ``position`` is done; with none left, the engine lets its stand-in go."""
        left = self._holds.pop(position) - 1
        if left:
            self._holds[position] = left
        elif self._out is not None:
            self._out.release(position)


class _Bodies:
    """The stand-in template: the body prepared when the result was read.

    It holds the bodies, not the track: a track whose engine's policy pointed back at it
    would live until a full garbage collection, and its engine's per-message state with it.
    """

    __slots__ = ("_bodies",)

    def __init__(self, bodies: dict[str, str]) -> None:
        self._bodies = bodies

    def __call__(self, info: PlaceholderInfo) -> str:
        return self._bodies.pop(info.call_id)


class _Held:
    """The engine's output list as a track keeps it: by position, only the stand-ins the
    engine may still rewrite (``holds`` says which when they are read); the copy of it the
    engine hands back, which the replay never reads, is empty."""

    __slots__ = ("_held", "_holds", "_length")

    def __init__(self, holds: dict[int, int]) -> None:
        self._holds = holds
        self._held: dict[int, Any] = {}
        self._length = 0

    def __len__(self) -> int:
        return self._length

    def __iadd__(self, messages: Iterable[Any]) -> _Held:
        position, holds, held = self._length, self._holds, self._held
        for message in messages:
            if position in holds:
                held[position] = message
            position += 1
        self._length = position
        return self

    def __getitem__(self, position: int) -> Any:
        return self._held[position]

    def __setitem__(self, position: int, message: Any) -> None:
        self._held[position] = message

    def copy(self) -> list[Any]:
        return []

    def release(self, position: int) -> None:
        """The engine will not rewrite the stand-in at ``position`` again."""
        self._held.pop(position, None)


def _lean(clearer: Clearer, holds: dict[int, int]) -> _Held | None:
    """Spare a fresh engine what the replay never reads; returns its output list.

    - ``clear_with_report`` returns a copy of the cleared history, which the replay never
      reads; over a 180,000-message session those copies (and freeing them) were two thirds
      of the time and made it grow with the square of the run. The output list (a
      :class:`_Held`) hands back an empty copy, and keeps only the stand-ins the engine may
      still rewrite (a list kept them all, rewritten ones too: some 1 KB a message).
    - The memory of cleared results is consulted only when a changed history is re-read;
      the replay only ever appends to the history it gives the engine, so the engine never
      re-reads (a test holds it to that), and a forgetful memory keeps nothing.
    - The tokens before each message are kept as machine integers (the replay's counts are
      integers; a user's clearer keeps a list, which any counter's numbers fit).

    The rejected alternative, an engine variant for the replay, would have been a second
    copy of the engine's plumbing. Where the engine keeps its state differently this does
    nothing: the replay then takes more memory and time, never gives other figures (a test
    holds it to ``measure``).
    """
    state = getattr(clearer, "_state", None)
    if not (isinstance(state, State) and type(state.out) is list and not state.out):
        return None
    if type(state.offsets) is list and not state.offsets:
        state.offsets = array("q")  # type: ignore[assignment]
    clearer._memory = Forgetful()
    out = _Held(holds)
    state.out = out  # type: ignore[assignment]
    return out


class _Fenwick:
    """Saved tokens by message position, summed before any position in log time (as machine
    integers: 8 bytes a position)."""

    def __init__(self) -> None:
        self._tree = array("q", [0]) * 65  # 1-based; the capacity (64) doubles as needed

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
        self._tree.extend(array("q", [0]) * n)
        self._tree[2 * n] = total
