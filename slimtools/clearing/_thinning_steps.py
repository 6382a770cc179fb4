"""Thinning, as the engine does it: placeholders whose head shortens as they age.

A mixin of :class:`~slimtools.clearing.Clearer` (``_engine.py``): under a policy's
``thin`` schedule every cleared result is watched (a heap of :class:`Watch` by the turn of
its next step); when a step comes, a clear still waiting is rendered again with the
shorter head, and a placeholder already written gets a thinning candidate that goes
through the same decision as a clear.
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush

from slimtools.clearing._batch import THINNING, Pending, State, Watch
from slimtools.clearing._ingest import SeenCall
from slimtools.clearing._render import Placeholders
from slimtools.clearing.formats.base import RawResult, new_tuple
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.thinning import head_at, head_length, next_age, thin


class Thinning:
    """The thinning steps of the clearer (state and policy are the clearer's)."""

    policy: ClearingPolicy
    _state: State
    _placeholders: Placeholders
    _thin: Sequence[tuple[int, int]] | None
    _clock: int
    _inputs: bool

    def _inputs_of(self, pending: Pending) -> tuple[int, int]:
        """What rewriting the call's arguments saves, and the first message it changes."""
        raise NotImplementedError

    def _push_watch(self, turn: int, watch: Watch) -> None:
        state = self._state
        state.watch_seq += 1
        heappush(state.watches, (turn, state.watch_seq, watch))

    def _watch_cleared(
        self, raw: RawResult, position: int, tokens: int, due: int, *, text: str = "",
        key: str = "",
    ) -> None:  # fmt: skip
        """Watch a result the history already holds cleared, for its next thinning step."""
        schedule = self._thin
        text = text or raw.text
        head = head_length(text)
        if schedule is None or not head:
            return
        step = next_age(schedule, head)
        if step is not None:
            watch = Watch(due, position, raw.slot, raw.call_id, text=text, tokens=tokens, key=key)
            self._push_watch(due + step, watch)

    def _thin_due(self, clock: int) -> None:
        """Re-make what a thinning step reached: a waiting clear is rendered again with the
        shorter head, a written placeholder gets a thinning candidate."""
        state, schedule, policy = self._state, self._thin, self.policy
        assert schedule is not None
        heap = state.watches
        while heap and heap[0][0] <= clock:
            watch = heappop(heap)[2]
            head = head_at(schedule, clock - watch.due, policy.keep_head)
            waiting, retry = watch.candidate, watch.retry
            watch.candidate = watch.retry = None
            if waiting is not None:
                self._unfile(waiting)
            if waiting is not None and waiting.eidx != THINNING:  # not written yet
                self._remake(waiting, watch, head)
            elif retry is not None:
                self._remake(retry, watch, head)
            elif watch.text:
                self._file_thinning(watch, head)
            step = next_age(schedule, head)
            if step is not None and (watch.text or watch.candidate or watch.retry):
                self._push_watch(watch.due + step, watch)

    def _make_ready_thinning(self, pending: Pending) -> None:
        """:meth:`_make_ready` under a thinning schedule: the head its age gives, and a
        watch when a later step will shorten it."""
        due = pending.turn + (self._state.keeps.get(pending.tool) or 0)
        schedule = self._thin
        assert schedule is not None
        head = head_at(schedule, self._clock - due, self.policy.keep_head)
        step = next_age(schedule, head)
        watch = None
        if step is not None:
            raw = pending.raw
            watch = Watch(due, pending.position, raw.slot, raw.call_id)
            self._push_watch(due + step, watch)
        self._remake(pending, watch, head)

    def _remake(self, pending: Pending, watch: Watch | None, head: int) -> None:
        """Render a result's placeholder with a ``head``-character head and file the clear.

        A result the placeholder would not shrink waits in its watch for a shorter head.
        """
        raw, position = pending.raw, pending.position
        sized = self._placeholders.sized(pending, keep_head=head)
        if sized is None:
            return
        text, size = sized
        saving = pending.tokens - size
        if saving <= 0 or (len(text) >= len(raw.text) and not raw.media):
            if watch is not None:
                watch.retry = pending
            return
        args_saving, first = 0, position
        if self._inputs:
            args_saving, first = self._inputs_of(pending)
        made = pending._replace(
            placeholder=text, saving=saving, input_saving=args_saving, first=first, watch=watch
        )
        if watch is not None:
            watch.candidate = made
        self._state.ready.append(made)
        self._state.ready_saving += saving + args_saving

    def _file_thinning(self, watch: Watch, head: int) -> None:
        """A candidate shortening a written placeholder to a ``head``-character head."""
        text = thin(watch.text, head, self.policy.max_placeholder_chars)
        if text == watch.text:
            return
        # A step that saves no token is still taken (when nothing grows): a one-pass clear
        # renders the head its age gives, and round by round must end in the same bytes.
        saving = watch.tokens - self.policy.token_counter(text)
        if saving < 0:
            return
        raw = RawResult(watch.call_id, None, "", watch.slot, False, True, False)
        call = SeenCall("", {}, watch.position, 0, 0, 0)
        info = (raw, "", call, watch.position, 0, watch.tokens, THINNING, text, saving, 0,
                watch.position, watch)  # fmt: skip
        made: Pending = new_tuple(Pending, info)
        watch.candidate = made
        self._state.ready.append(made)
        self._state.ready_saving += saving

    def _unfile(self, pending: Pending) -> None:
        """Take a waiting candidate out of the ready list or the plan."""
        state = self._state
        for i, candidate in enumerate(state.ready):
            if candidate is pending:
                del state.ready[i]
                state.ready_saving -= pending.saving + pending.input_saving
                return
        state.plan.remove(pending, pending.first)

    def _refile(self, thins: list[Pending]) -> None:
        """Thinnings that could not be written this call wait again."""
        state = self._state
        state.ready.extend(thins)
        state.ready_saving += sum(p.saving for p in thins)
