"""One policy's clearing engine fed stand-ins, and the ledger rows it gives (for RunReplay).

A :class:`Track` owns a :class:`~slimtools.clearing.replay.ReplayClearer` (the engine in
replay mode) that reads the stand-ins of :mod:`slimtools.ledger._standin`. When a result is
read, the track renders its real placeholder with the policy's own renderer and keeps only
its size, which the stand-in template hands the engine; at each model call it reads what
the engine cleared and writes the ledger row: tokens sent, tool tokens resident, what the
cache could serve.

Memory is what a long session costs, so per message a track keeps only machine integers:
its engine holds the stand-ins it may still rewrite (those of results still clearable, and
of calls whose arguments clearing them may blank), and no others once it has read them.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from typing import Any

from slimtools.clearing import ClearingPolicy, PlaceholderInfo
from slimtools.clearing.formats.base import RawResult
from slimtools.clearing.replay import PlaceholderRenderer, ReplayClearer, SeenCall
from slimtools.ledger import _standin
from slimtools.ledger._columns import LedgerColumns
from slimtools.tokens import TokenCounter


class Track:
    """One policy's engine, fed stand-ins, and the ledger rows it produces."""

    def __init__(self, label: str, policy: ClearingPolicy, counter: TokenCounter, fmt: str) -> None:
        if not isinstance(policy, ClearingPolicy):
            raise TypeError(
                f"policy {label!r} must be a ClearingPolicy, got {type(policy).__name__}"
            )
        self.label = label
        self.policy = policy
        self._count = counter
        self._renderer = PlaceholderRenderer(policy.replace(token_counter=counter))
        self._bodies: dict[str, str] = {}  # uid -> its placeholder's stand-in, until used
        # uid -> (tool, rendered arguments, chars, tokens): what a superseded placeholder
        # shows, kept while the result may be cleared (only when the policy supersedes)
        self._superseding: dict[str, tuple[str, str, int, int]] = {}
        # (due turn, uid, position, held call position or -1, rewritten after it falls due:
        # its placeholder is shorter): a heap (_expire)
        self._expiring: list[tuple[int, str, int, int, bool]] = []
        self._asked: set[str] = set()  # uids the engine asked a superseded placeholder of
        standin_policy = policy.replace(
            token_counter=_standin.counter(counter), placeholder=_Bodies(self._bodies)
        )
        self._blanks = bool(policy.clear_tool_inputs)  # whether call messages are rewritten
        self.clearer = ReplayClearer(
            standin_policy,
            format=fmt,
            superseded=_Superseded(self._superseding, self._asked, self._renderer, counter)
            if policy.supersede
            else None,
        )
        self._result_saved = 0
        self._cleared = 0
        self._tool_saved: Counter[str] = Counter()
        self.rows = LedgerColumns()
        self._previous_end = 0

    def file(
        self, raw: RawResult, tokens: int, call: SeenCall, position: int, *, turn: int, uid: str
    ) -> None:
        """Note a clearable result: its placeholder's size, and the stand-ins to hold."""
        tool = call.name or raw.name or "tool"  # the engine's name for a paired result
        keep = self.policy.turns_to_keep(tool)
        if keep is None:
            return
        # The policy's own rendering of the real result: one rule for placeholders. A
        # template that fails is logged there and gives None: the result stays.
        text = self._renderer.text(raw, tool=tool, args=call.args, tokens=tokens, turn=turn)
        shorter = text is not None and (len(text) < len(raw.text) or bool(raw.media))
        # never shorter: a stand-in as long as the result's, which the engine keeps
        size = self._count(text) if shorter and text is not None else 0
        self._bodies[uid] = _standin.carried(size, length=0 if shorter else _standin.RESULT_CHARS)
        input_saving = self._renderer.input_saving(tool, call) if self._blanks else 0
        if self.policy.supersede:
            # A newer result may supersede it, whatever its own placeholder, until it falls
            # due by its age: what that needs is kept until then (_expire).
            args = self._renderer.arguments(call.args)
            self._superseding[uid] = (tool, args, len(raw.text), tokens)
        elif not shorter:
            return
        self.clearer.hold(position)
        if input_saving:
            self.clearer.hold(call.position)
        if self.policy.supersede:
            call_position = call.position if input_saving else -1
            entry = (turn + keep, uid, position, call_position, shorter)
            heapq.heappush(self._expiring, entry)

    def called(self, position: int) -> None:
        """A call was read at ``position``: until it is answered, clearing its result may
        blank its arguments there."""
        if self._blanks:
            self.clearer.hold(position)

    def answered(self, position: int) -> None:
        """The call read at ``position`` was answered (its result filed, if clearable, just
        before), or a later call took its id, so it never will be."""
        if self._blanks:
            self.clearer.release(position)

    @property
    def tool_saved_at_call(self) -> dict[str, int]:
        """Tokens clearing saved per tool, as of the last model call accounted."""
        return dict(self._tool_saved)

    def account(self, standins: Sequence[Any], offsets: Sequence[int], results: int) -> None:
        """One model call: clear the stand-ins of the prompt and write its ledger row."""
        clearer = self.clearer
        report, cleared = clearer.account(standins)
        for done in cleared:
            self._cleared += 1
            self._result_saved += done.saving
            self._tool_saved[done.tool] += done.saving
            self._bodies.pop(done.call_id, None)  # superseded: its body was never asked for
            self._superseding.pop(done.call_id, None)
            clearer.release(done.position)
            if done.input_saving:
                clearer.release(done.call_position)
        first = report.first_changed
        broken = first is not None and first < self._previous_end
        shared = first if broken and first is not None else self._previous_end
        read = offsets[shared] - clearer.saved_before(shared)
        resident = results - self._result_saved
        self.rows.append(report.tokens_after, resident, read, broken, self._cleared)
        self._previous_end = len(standins)
        if self._expiring:
            self._expire(len(self.rows))

    def _expire(self, turn: int) -> None:
        """After the model call of ``turn``, the engine reads only results of ``turn`` on,
        which cannot supersede a result due by then: forget what superseding it needed,
        and let go the stand-ins of those the engine will not rewrite by their age (never
        shorter than their placeholder, no arguments to shorten) unless one is on its way
        out as superseded."""
        heap, asked = self._expiring, self._asked
        while heap and heap[0][0] <= turn:
            _, uid, position, call_position, rewritten = heapq.heappop(heap)
            self._superseding.pop(uid, None)
            if uid in asked:
                asked.discard(uid)  # cleared as superseded, or waiting to: released then
                continue
            if not rewritten:
                self.clearer.release(position)
                if call_position >= 0:
                    self.clearer.release(call_position)


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


class _Superseded:
    """Renders a superseded result's placeholder from the figures kept when it was read,
    and gives its stand-in (the real one's size). Like :class:`_Bodies`, it does not hold
    the track."""

    __slots__ = ("_asked", "_count", "_figures", "_renderer")

    def __init__(
        self,
        figures: dict[str, tuple[str, str, int, int]],
        asked: set[str],
        renderer: PlaceholderRenderer,
        count: TokenCounter,
    ) -> None:
        self._figures, self._asked, self._renderer, self._count = figures, asked, renderer, count

    def __call__(self, uid: str, turn: int, reason: str) -> str:
        tool, args, chars, tokens = self._figures.pop(uid)  # asked once per result
        self._asked.add(uid)
        text = self._renderer.superseded(
            args, tool=tool, chars=chars, tokens=tokens, turn=turn, reason=reason
        )
        return _standin.carried(self._count(text))
