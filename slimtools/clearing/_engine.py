"""The clearing engine: one incremental pass over a history, shared by every entry point.

``clear_stale_results`` (in ``clear.py``) is a fresh :class:`Clearer`'s first call, so the
one-shot function and the incremental clearer cannot disagree. The clearer ingests each
message once (decode, count its tokens once, file its results by the turn at which they go
stale) and then, at each call, only looks at what became stale since the last call:

- a result of turn ``t`` whose tool keeps ``k`` turns is *due* at turn ``t + k``;
- with ``batch_turns = b`` the clock the policy sees is ``T - T % b``, so the cleared prefix
  moves only when ``T`` crosses a multiple of ``b`` (per-request recomputation then gives
  the same prefix for ``b`` turns in a row: the prompt cache survives);
- a due result protected by ``keep`` waits (at most ``keep`` of them);
- what is clearable waits in a ready batch with its running saving until the trigger has
  fired and the batch saves at least ``clear_at_least`` tokens, then goes all at once.

**The same bytes everywhere.** A cleared history is a function of the history and the
policy alone: nothing the engine writes depends on set or dict iteration order of unordered
data, hash seeds, clocks, object ids or the process, so the same input gives the same bytes
in another process, under another ``PYTHONHASHSEED`` and after a restart (a new clearer
taking over a persisted history continues it byte for byte). That is what keeps a provider's
prompt cache warm across agent restarts; ``tests/test_clearing_determinism.py`` checks it
across processes.

The rejected simpler design, recomputing everything from scratch per call (as LangChain's
``ClearToolUsesEdit`` does, recounting the whole history after each cleared message), is
quadratic in a long run and slides the cache boundary every turn.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence
from heapq import heappop, heappush
from itertools import islice
from typing import Any

from slimtools.clearing._batch import (
    THINNING,
    Forgetful,
    Memory,
    Pending,
    SeenCall,
    State,
    Watch,
    audit_originals,
    write_batch,
)
from slimtools.clearing._observe import report_pass
from slimtools.clearing._render import Placeholders
from slimtools.clearing._supersede import Supersession
from slimtools.clearing.audit import Audit
from slimtools.clearing.formats.base import OTHER, Codec, RawResult, new_tuple, starts_turn
from slimtools.clearing.formats.media import MEDIA_TOKENS
from slimtools.clearing.formats.view import _format_of, check_history, detect_format, get_codec
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.pricing import calls_ahead
from slimtools.clearing.report import ClearingReport
from slimtools.clearing.thinning import head_at, head_length, next_age, thin
from slimtools.instrumentation._registry import REGISTRY

logger = logging.getLogger("slimtools.clearing")


class Clearer:
    """A stateful clearer for one growing history: call :meth:`clear` before each model call.

    It remembers how far it has read, so each call costs time proportional to the messages
    appended since the last one. It assumes the history only grows by appending; when the
    first or last known message changed, or the history shrank, it re-reads everything.
    Clearing is monotone: a result cleared once is cleared in every later output, whether
    the caller stores the cleared history (persisted use) or passes the original each time
    (ephemeral use). One clearer serves one history; it is not thread-safe.

    Args:
        policy: the :class:`ClearingPolicy` (defaults: turn-end clearing, 2 turns kept).
        format: the history format; detected from the first message that tells.
        audit: a sink receiving each original before it is replaced.
        observed: whether its passes are reported (``ClearingPolicy.on_event``,
            ``slimtools.observe``); the ledger's what-if replays pass False, so a
            process's live metrics count only the clearing its agents really did.
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        format: str | None = None,
        audit: Audit | None = None,
        observed: bool = True,
    ) -> None:
        self.policy = policy if policy is not None else ClearingPolicy()
        if not isinstance(self.policy, ClearingPolicy):
            raise TypeError(f"policy must be a ClearingPolicy, got {type(policy).__name__}")
        self.audit = audit
        self._observed = observed
        self._codec: Codec | None = get_codec(format) if format is not None else None
        self._named = self._sure = format is not None
        # The monotone memory, consulted only when a changed history is re-read: what each
        # cleared result became, keyed by call id and the original's hash (ids may repeat).
        self._memory = Memory()
        self._rereading = False
        self._state = State()
        self._placeholders = Placeholders(self.policy)
        self._thin = self.policy.thin
        self._clock = 0
        self._untriggered = self.policy.trigger_tokens is None and (
            self.policy.trigger_tool_uses is None
        )
        self._keeps: dict[str, int | None] = {}  # tool -> turns_to_keep, asked once per tool
        self._inputs = bool(self.policy.clear_tool_inputs)  # whether any arguments are blanked
        self._supersede = self.policy.supersede
        self.last_report = ClearingReport()

    @classmethod
    def _single_use(
        cls, policy: ClearingPolicy | None, *, format: str | None, audit: Audit | None
    ) -> Clearer:
        """A clearer for exactly one call: it keeps no memory for later calls (there are none)."""
        clearer = cls(policy, format=format, audit=audit)
        clearer._memory = Forgetful()
        return clearer

    @property
    def format(self) -> str | None:
        """The history format in use (None until a history has told it)."""
        return None if self._codec is None else self._codec.name

    def reset(self) -> None:
        """Forget everything, including which results were cleared."""
        self._memory.clear()
        self._state = State()
        if not self._named:
            self._codec, self._sure = None, False

    def clear(self, history: Sequence[Any]) -> list[Any]:
        """A new list: ``history`` with stale results replaced by placeholders."""
        return self.clear_with_report(history)[0]

    def clear_with_report(self, history: Sequence[Any]) -> tuple[list[Any], ClearingReport]:
        """:meth:`clear` and a report of what this call cleared (Anthropic's applied_edits).

        Raises:
            TypeError: ``history`` is not a list of messages (a dict, a string, a generator).
        """
        report = self._advance(history)
        return self._state.out.copy(), report

    def clear_in_place(self, history: list[Any]) -> ClearingReport:
        """Clear the caller's own list: stale results are replaced in ``history`` itself.

        For a history you keep and grow (persisted clearing): call it before each model call
        with the same list, appending new messages in between. Nothing is copied, so a whole
        run costs about one pass, where :meth:`clear` copies the history on every call.
        Messages are replaced at their positions with the same ids, never moved or removed;
        do not reorder or remove messages between calls (a changed list is re-read).

        Raises:
            TypeError: ``history`` is not a list.
        """
        if not isinstance(history, list):
            raise TypeError(
                f"clear_in_place needs the history's own list, got {type(history).__name__}; "
                "use clear() for other sequences"
            )
        report = self._advance(history)
        if self._state.out is not history:  # the first call, or the list changed: adopt it
            history[:] = self._state.out
            self._state.out = history
        return report

    def _advance(self, history: Sequence[Any]) -> ClearingReport:
        """Read what was appended since the last call, clear what is due, report it."""
        on_event = self.policy.on_event
        listening = self._observed and (on_event is not None or bool(REGISTRY.listeners))
        began = time.time_ns() if listening else 0
        if type(history) is not list:
            check_history(history)
        codec = self._codec if self._sure and self._codec is not None else self._codec_for(history)
        state = self._state
        n = state.n
        # The common case, checked inline: the caller appended to the very same messages.
        grown = n == 0 or (
            len(history) >= n and history[0] is state.first and history[n - 1] is state.last
        )
        in_place = history is state.out and len(history) >= n
        if not (grown or in_place) and not self._extends(history):
            state = self._state = State()
            self._rereading = bool(self._memory)
        start, end = state.n, len(history)
        if end > start:
            if history is not state.out:  # in place, the new messages are there already
                state.out += history[start:]
            self._read(codec, history, start)
            state.n, state.first, state.last = end, history[0], history[-1]
        self._rereading = False
        report = self.last_report = self._evaluate(codec)
        if listening:
            report_pass(
                report, format=codec.name, messages=end, previous=n, start=began, local=on_event
            )
        return report

    # -- reading ---------------------------------------------------------------------------

    def _codec_for(self, history: Sequence[Any]) -> Codec:
        """The named codec, or the detected one (re-detected while no message has told)."""
        if self._codec is not None and self._sure:
            return self._codec
        start = self._state.n if self._codec is not None else 0
        found = next((f for f in map(_format_of, islice(history, start, None)) if f), None)
        if found is None:
            if self._codec is None:
                self._codec = get_codec(detect_format(()))
            return self._codec
        self._sure = True
        if self._codec is None or self._codec.name != found:
            self._codec = get_codec(found)
            self._state = State()
        return self._codec

    def _extends(self, history: Sequence[Any]) -> bool:
        """Whether ``history`` is the one read so far, grown by appending (or the same)."""
        state = self._state
        if len(history) < state.n:
            return False
        return self._same(history[0], state.first, state.out[0]) and self._same(
            history[state.n - 1], state.last, state.out[state.n - 1]
        )

    @staticmethod
    def _same(message: Any, seen: Any, produced: Any) -> bool:
        if message is seen or message is produced:
            return True
        try:
            return bool(message == seen) or bool(message == produced)
        except Exception:  # exotic __eq__: treat as changed and re-read
            return False

    def _read(self, codec: Codec, history: Sequence[Any], start: int) -> None:
        """Ingest ``history[start:]``: turns, tokens (once per piece), calls and results.

        The hot loop of a long one-shot pass, hence the local variables.
        """
        state, count, decode = self._state, self.policy.token_counter, codec.decode
        calls, run_turns, file = state.calls, codec.run_turns, self._file
        turns, previous, tokens, uses = state.turns, state.previous_model, state.tokens, 0
        turn_start, offset = state.turn_start, state.offsets.append
        for position in range(start, len(history)):
            offset(tokens)
            try:
                model, text, found_calls, results = decode(history[position])
            except Exception:  # a malformed message must not stop the agent loop
                logger.debug("cannot decode message %d; left as is", position, exc_info=True)
                model, text, found_calls, results = OTHER
            if starts_turn(run_turns, model, previous):
                turns += 1
                turn_start = position
            previous = model
            if text:
                tokens += count(text)
            for c in found_calls:
                size = count(f"{c.name} {c.args_text}")
                tokens += size
                uses += 1
                # The latest call with an id wins: some OpenAI-compatible servers reuse
                # ids such as "call_0" every turn, and a result answers the call before it.
                info = (c.name, c.args, position, size, len(c.args_text))
                calls[c.id] = new_tuple(SeenCall, info)
            for raw in results:
                size = count(raw.text) if raw.text else 0
                if raw.media:
                    size += MEDIA_TOKENS * len(raw.media)
                tokens += size
                file(raw, position, size, turns)
        state.turns, state.previous_model, state.tokens = turns, previous, tokens
        state.turn_start = turn_start
        state.tool_uses += uses

    def _file(self, raw: RawResult, position: int, tokens: int, turn: int) -> None:
        """Decide once, at ingestion, when (if ever) this result may be cleared."""
        state = self._state
        # A result consumes its call: a second result with that id is a duplicate, left as
        # it is (and the engine keeps nothing per answered call but the pending result).
        call = state.calls.pop(raw.call_id, None)
        if call is None:
            return  # orphan or duplicate result: left as it is
        tool = call.name or raw.name or "tool"
        keeps = self._keeps
        keep_turns = (
            keeps[tool]
            if tool in keeps
            else keeps.setdefault(tool, self.policy.turns_to_keep(tool))
        )
        if keep_turns is None:
            return  # excluded or never-clear: untouched, and not counted toward keep
        eidx = len(state.eligible_turns)
        state.eligible_turns.append(turn)
        if not raw.clearable:  # empty or already cleared: counts toward keep, stays
            if raw.cleared and self._thin is not None:
                self._watch_cleared(raw, position, tokens, turn + keep_turns)
            return
        info = (raw, tool, call, position, turn, tokens, eidx, "", 0, 0, position, None)
        pending: Pending = new_tuple(Pending, info)
        if self._rereading and self._memory.knows(raw):
            state.forced.append(pending)  # cleared before the re-read: stays cleared
            return
        if self._supersede:
            tracker = state.supersession
            if tracker is None:
                tracker = state.supersession = Supersession(self.policy.category_of)
            for older, reason in tracker.file(pending):
                # Only a result not yet due by its age: one already due may have been
                # cleared by age before this result arrived (incremental = one pass).
                if turn < older.turn + (keeps.get(older.tool) or 0):
                    self._superseded(older, turn, reason)
        queue = state.waiting.get(keep_turns)
        if queue is None:
            queue = state.waiting[keep_turns] = deque()
        queue.append(pending)

    def _superseded(self, older: Pending, turn: int, reason: str) -> None:
        """Clear ``older`` ahead of its age: a newer result, in full, made it stale.

        It waits in the ready list like any clear (the trigger, ``clear_at_least`` and the
        cache rule still decide when), and is skipped when its own turn comes."""
        state = self._state
        if older.eidx in state.made or older.eidx in state.gone:
            return  # already on its way out (or written)
        text = self._placeholders.superseded(older, turn, reason)
        saving = older.tokens - self.policy.token_counter(text)
        if saving <= 0:
            return
        state.gone.add(older.eidx)
        state.made.add(older.eidx)
        args_saving, first = self._inputs_of(older)
        made = older._replace(
            placeholder=text, saving=saving, input_saving=args_saving, first=first
        )
        state.ready.append(made)
        state.ready_saving += saving + args_saving

    def _inputs_of(self, pending: Pending) -> tuple[int, int]:
        """What blanking the call's arguments saves, and the first message the clear changes."""
        call = pending.call
        if not (self._inputs and call.args and self.policy.clears_inputs_of(pending.tool)):
            return 0, pending.position
        args_saving = self._placeholders.args_saving(call.name, call.args_tokens)
        first = (
            call.position
            if args_saving and call.position < pending.position
            else (pending.position)
        )
        return args_saving, first

    # -- deciding --------------------------------------------------------------------------

    def _evaluate(self, codec: Codec) -> ClearingReport:
        state, policy = self._state, self.policy
        clock = state.turns - state.turns % policy.batch_turns
        eligible, snapshot = state.eligible_turns, state.snapshot
        while snapshot < len(eligible) and eligible[snapshot] <= clock:
            snapshot += 1
        state.snapshot = snapshot
        self._clock = clock
        self._take_due(clock)
        if state.ripe:
            cutoff = snapshot - (policy.keep or 0)
            # Popped in order from a reversed list, so each result is let go as soon as it
            # is made ready: a long pass never holds two records of the same result (the
            # extra allocations tipped 10,000-turn passes into a full collection).
            ripe, state.ripe = state.ripe, []
            ripe.reverse()
            while ripe:
                pending = ripe.pop()
                if pending.eidx < cutoff:
                    self._make_ready(pending)
                else:
                    state.ripe.append(pending)
        forced = self._forced_now() if state.forced else []
        if self._thin is not None and state.watches and state.watches[0][0] <= clock:
            self._thin_due(clock)
        fresh = self._decide() if state.ready or state.plan else []
        if self._thin is None:
            if fresh and self.audit is not None and not self._audited(self.audit, codec, fresh):
                fresh = []
            return write_batch(codec, state, forced, fresh, self._memory)
        thins = [p for p in fresh if p.eidx == THINNING]
        if thins:
            fresh = [p for p in fresh if p.eidx != THINNING]
        if fresh and self.audit is not None and not self._audited(self.audit, codec, fresh):
            self._refile(thins)  # nothing is written this call
            fresh, thins = [], []
        report = write_batch(codec, state, forced, fresh, self._memory, thins=thins)
        for pending in forced:
            self._watch_cleared(
                pending.raw,
                pending.position,
                pending.tokens - pending.saving,
                pending.turn + (self._keeps.get(pending.tool) or 0),
                text=pending.placeholder,
                key=self._memory.key(pending.raw),
            )
        return report

    def _take_due(self, clock: int) -> None:
        """Move the results due by ``clock`` to the ripe list, in due order (then filing)."""
        due: list[Pending] = []
        queues = 0
        for keep_turns, queue in self._state.waiting.items():
            if queue and queue[0].turn + keep_turns <= clock:
                queues += 1
                while queue and queue[0].turn + keep_turns <= clock:
                    due.append(queue.popleft())
        if queues > 1:  # results of several retentions fell due: merge them by due turn
            keeps = self._keeps
            due.sort(key=lambda p: (p.turn + (keeps[p.tool] or 0), p.eidx))
        self._state.ripe += due

    def _forced_now(self) -> list[Pending]:
        """Results cleared before a re-read, now outside the keep window: clear them again."""
        state = self._state
        now: list[Pending] = []
        later: list[Pending] = []
        for pending in state.forced:
            if state.turns - pending.turn < self.policy.keep_turns:
                later.append(pending)
                continue
            text, blanked = self._memory.recall(pending.raw)
            saving = pending.tokens - self.policy.token_counter(text)
            args_saving = (
                self._placeholders.args_saving(pending.call.name, pending.call.args_tokens)
                if blanked
                else 0
            )
            first = min(pending.position, pending.call.position) if blanked else pending.position
            now.append(
                pending._replace(
                    placeholder=text, saving=saving, input_saving=args_saving, first=first
                )
            )
        state.forced = later
        return now

    def _decide(self) -> list[Pending]:
        """Which ready results go now: all, none, or (under a cache price) the cheapest cut.

        The window guard comes first: over ``max_context_tokens``, results go whatever the
        trigger, ``clear_at_least`` or the cache say. Otherwise the trigger must have fired;
        without a price model everything ready goes once it saves ``clear_at_least``; with
        one, the results wait in ``state.plan`` and the rule of
        :func:`~slimtools.clearing.pricing.plan_clear` picks the cut whose saving over the
        calls ahead most outweighs the cache rewrite it causes.
        """
        state, policy = self._state, self.policy
        limit = policy.max_context_tokens
        over = limit is not None and state.tokens - state.saved > limit
        if not (over or self._untriggered or self._triggered()):
            return []
        pricing = policy.pricing
        if pricing is None:
            if not over and state.ready_saving < (policy.clear_at_least or 0):
                return []
            fresh, state.ready, state.ready_saving = state.ready, [], 0
            return fresh
        offsets, savings = state.offsets, state.savings

        def tokens_before(position: int) -> int:
            return offsets[position] - savings.before(position) if savings else offsets[position]

        plan = state.plan
        ready = state.ready
        if len(ready) > 1:
            ready.sort(key=_first_change)
        firsts = [p.first for p in ready]
        # Nothing cleared yet: the history before a position is all original tokens.
        before = [tokens_before(f) for f in firsts] if savings else [offsets[f] for f in firsts]
        plan.extend(ready, firsts, [p.saving + p.input_saving for p in ready], before)
        state.ready, state.ready_saving = [], 0
        need = state.tokens - state.saved - limit if over and limit is not None else 0
        cut = plan.choose(
            state.turn_start,
            tokens_before(state.turn_start),
            calls_ahead(state.turns, policy.expected_calls, policy.payback_horizon),
            pricing,
            at_least=policy.clear_at_least or 0,
            need=need,
        )
        return [] if cut is None else plan.take(cut)

    def _triggered(self) -> bool:
        state, policy = self._state, self.policy
        if policy.trigger_tokens is None and policy.trigger_tool_uses is None:
            return True
        by_tokens = policy.trigger_tokens is not None and (
            state.tokens - state.saved > policy.trigger_tokens
        )
        by_uses = policy.trigger_tool_uses is not None and (
            state.tool_uses > policy.trigger_tool_uses
        )
        return by_tokens or by_uses

    def _make_ready(self, pending: Pending) -> None:
        """Render the placeholder; a result it would not shrink is left alone for good."""
        if self._supersede:
            made = self._state.made
            if pending.eidx in made:
                return  # superseded: cleared ahead of its age already
            made.add(pending.eidx)
        if self._thin is not None:
            self._make_ready_thinning(pending)
            return
        raw, tool, call, position, turn, tokens, eidx, _, _, _, _, _ = pending
        sized = self._placeholders.sized(pending)
        if sized is None:
            return
        text, size = sized
        saving = tokens - size
        if saving <= 0 or (len(text) >= len(raw.text) and not raw.media):
            return
        args_saving = 0
        first = position
        if self._inputs and call.args and self.policy.clears_inputs_of(tool):
            args_saving = self._placeholders.args_saving(call.name, call.args_tokens)
            if args_saving and call.position < position:
                first = call.position
        info = (raw, tool, call, position, turn, tokens, eidx, text, saving, args_saving, first)
        state = self._state
        state.ready.append(new_tuple(Pending, (*info, None)))
        state.ready_saving += saving + args_saving

    # -- thinning --------------------------------------------------------------------------

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
        due = pending.turn + (self._keeps.get(pending.tool) or 0)
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
        raw, call, position = pending.raw, pending.call, pending.position
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
        if self._inputs and call.args and self.policy.clears_inputs_of(pending.tool):
            args_saving = self._placeholders.args_saving(call.name, call.args_tokens)
            if args_saving and call.position < position:
                first = call.position
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
        saving = watch.tokens - self.policy.token_counter(text)
        if saving <= 0:
            return
        raw = RawResult(watch.call_id, None, "", watch.slot, False, True, False)
        call = SeenCall("", {}, watch.position, 0, 0)
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

    # -- writing ---------------------------------------------------------------------------

    def _audited(self, audit: Audit, codec: Codec, fresh: list[Pending]) -> bool:
        """Audit the fresh originals first; when the sink fails they wait for the next call."""
        state = self._state
        if audit_originals(audit, codec, state, fresh):
            return True
        state.ready.extend(fresh)
        state.ready_saving += sum(p.saving + p.input_saving for p in fresh)
        return False


def _first_change(pending: Pending) -> int:
    """The first message clearing this result rewrites (its call's, when arguments blank)."""
    return pending.first
