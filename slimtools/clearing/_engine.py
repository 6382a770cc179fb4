"""The clearing engine: one incremental pass over a history, shared by every entry point.

``clear_stale_results`` (in ``clear.py``) is a fresh :class:`Clearer`'s first call, so the
one-shot function and the incremental clearer cannot disagree. The clearer ingests each
message once (decode, count its tokens once, file its results by the turn at which they go
stale) and then, at each call, only looks at what became stale since the last call:

- a result of turn ``t`` whose tool keeps ``k`` turns is *due* at turn ``t + k``;
- a due result protected by ``keep`` waits (at most ``keep`` of them);
- what is clearable waits in a ready batch with its running saving until the trigger has
  fired and the batch saves at least ``clear_at_least`` tokens, then goes all at once.

A cleared history is a function of the history and the policy alone: no hash seed, clock,
object id or unordered iteration reaches the output, so a restarted clearer continues a
persisted history byte for byte (docs/clearing.md, "The same bytes everywhere"). The parts
it is composed of are listed in ARCHITECTURE.md.

The rejected simpler design, recomputing everything from scratch per call (as LangChain's
``ClearToolUsesEdit`` does, recounting the whole history after each cleared message), is
quadratic in a long run and slides the cache boundary every turn.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence
from itertools import islice
from typing import Any

from slimtools._gc import paused_collector
from slimtools.clearing._batch import (
    Forgetful,
    Memory,
    Pending,
    State,
    audit_originals,
    write_batch,
)
from slimtools.clearing._checks import check_count
from slimtools.clearing._deciding import Decider
from slimtools.clearing._ingest import SeenCall, read_messages, same_message
from slimtools.clearing._observe import report_pass
from slimtools.clearing._render import Placeholders
from slimtools.clearing._rules import rules_for
from slimtools.clearing.audit import Audit, check_audit
from slimtools.clearing.formats.base import Codec, RawResult, new_tuple
from slimtools.clearing.formats.view import _format_of, detect_format, get_codec, history_list
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.report import ClearingReport
from slimtools.instrumentation import REGISTRY, Listener, check_listener

logger = logging.getLogger("slimtools.clearing")

_LONG_PASS = 512  # messages read in one call from which the collector is paused


class Clearer:
    """A stateful clearer for one growing history: call :meth:`clear` before each model call.

    It remembers how far it has read, so each call reads only the messages appended since
    the last one (and checks the rest by identity, one C-level scan). When a message it read
    was edited or replaced, or the history shrank, it re-reads everything, so an edit is
    sent as edited (:meth:`clear_in_place` lists are the clearer's own and are not checked).
    Clearing is monotone: a result cleared once is cleared in every later output, whether
    the caller stores the cleared history (persisted use) or passes the original each time
    (ephemeral use). One clearer serves one history; it is not thread-safe.

    Args:
        policy: the :class:`ClearingPolicy` (defaults: turn-end clearing, 2 turns kept).
        format: the history format; detected from the first message that tells.
        audit: a sink receiving each original before it is replaced.
        expected_calls: the model calls this run will make in all, if you know; a clear is
            then weighed against what is left of them instead of the estimate from the
            run's age (see :class:`ClearingPolicy`), so under a cache price no clear costs
            more than it saves.
        on_event: hears a :class:`~slimtools.instrumentation.ClearingPass` for each call of
            this clearer (``slimtools.observe`` hears every clearer's).
        observed: whether its passes are reported (``on_event``, ``slimtools.observe``);
            the ledger's what-if replays pass False, so a process's live metrics count only
            the clearing its agents really did.
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        format: str | None = None,
        audit: Audit | None = None,
        expected_calls: int | None = None,
        on_event: Listener | None = None,
        observed: bool = True,
    ) -> None:
        self.policy = policy if policy is not None else ClearingPolicy()
        if not isinstance(self.policy, ClearingPolicy):
            raise TypeError(f"policy must be a ClearingPolicy, got {type(policy).__name__}")
        if audit is not None:
            check_audit(audit, "write")
        self.audit = audit
        check_count(expected_calls, "expected_calls", optional=True, minimum=1)
        self.expected_calls = expected_calls
        if on_event is not None:
            check_listener(on_event, "on_event")
        self.on_event = on_event
        self._observed = observed
        self._codec: Codec | None = get_codec(format) if format is not None else None
        self._named = self._sure = format is not None
        # The monotone memory, consulted only when a changed history is re-read: what each
        # cleared result became, keyed by call id and the original's hash (ids may repeat).
        self._memory = Memory()
        self._rereading = False
        self._state = self._new_state()
        self._placeholders = Placeholders(self.policy)
        self._decider = Decider(self.policy, self._placeholders, expected_calls)
        self._inputs = bool(self.policy.clear_tool_inputs)  # whether arguments are blanked
        self.last_report = ClearingReport()

    @classmethod
    def _single_use(
        cls, policy: ClearingPolicy | None, *, format: str | None, audit: Audit | None
    ) -> Clearer:
        """A clearer for exactly one call: it keeps no memory for later calls (there are none)."""
        clearer = cls(policy, format=format, audit=audit)
        clearer._memory = Forgetful()
        return clearer

    _write = staticmethod(write_batch)  # writes a decided batch (replay mode only accounts it)

    def _new_state(self) -> State:
        """The state of a pass that has read nothing yet (replay mode keeps it leaner)."""
        return State()

    @property
    def format(self) -> str | None:
        """The history format in use (None until a history has told it)."""
        return None if self._codec is None else self._codec.name

    def reset(self) -> None:
        """Forget everything, including which results were cleared."""
        self._memory.clear()
        self._state = self._new_state()
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
        run costs about one pass, where :meth:`clear` copies the history on every call (a
        list subclass is cleared as a copy and written back, at that cost).
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
        if type(history) is not list:
            # A list subclass is read through a plain copy, so the engine keeps its own
            # list (adopting the caller's would add each appended message twice).
            history[:] = self._state.out
            return report
        if self._state.out is not history:  # the first call, or the list changed: adopt it
            history[:] = self._state.out
            self._state.out = history
        return report

    def _advance(self, history: Sequence[Any]) -> ClearingReport:
        """Read what was appended since the last call, clear what is due, report it."""
        on_event = self.on_event
        listening = self._observed and (on_event is not None or bool(REGISTRY.listeners))
        began = time.time_ns() if listening else 0
        if type(history) is not list:
            history = history_list(history)
        codec = self._codec if self._sure and self._codec is not None else self._codec_for(history)
        state = self._state
        n = state.n
        # The common case, checked inline: the caller appended to the very same messages.
        in_place = history is state.out and len(history) >= n
        grown = n == 0 or (
            len(history) >= n
            and history[0] is state.first
            and history[n - 1] is state.last
            and (in_place or same_message(history[:n], state.seen))
        )
        if not (grown or in_place) and not self._extends(history):
            state = self._state = self._new_state()
            self._rereading = bool(self._memory)
        if (end := len(history)) - state.n < _LONG_PASS:  # a short pass: the collector left alone
            report = self._pass(codec, history)
        else:
            with paused_collector():  # no cycles made (slimtools._gc)
                report = self._pass(codec, history)
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
            self._state = self._new_state()
        return self._codec

    def _extends(self, history: Sequence[Any]) -> bool:
        """Whether ``history`` is the one read so far, grown by appending: each message read
        is the same, the one sent for it or equal (an edited one forces a re-read)."""
        state, same = self._state, same_message
        n, seen, out = state.n, state.seen, state.out
        if len(history) < n:
            return False
        if len(seen) != n or not all(same(history[i], seen[i], out[i]) for i in range(n)):
            return False
        if n:  # the next call compares these objects by identity
            seen[:] = history[:n]
            state.first, state.last = seen[0], seen[-1]
        return True

    def _pass(self, codec: Codec, history: Sequence[Any]) -> ClearingReport:
        """Ingest what is new (turns, tokens once per piece, calls, results), then clear."""
        state = self._state
        start, end = state.n, len(history)
        if end > start:
            if history is not state.out:  # in place, the new messages are there already
                state.out += history[start:]
                state.seen += history[start:]
            count = self.policy.token_counter
            read_messages(state, codec, count, history, start, file=self._file)
            state.n, state.first, state.last = end, history[0], history[-1]
        self._rereading = False
        report = self.last_report = self._evaluate(codec)
        return report

    def _file(
        self, raw: RawResult, position: int, tokens: int, turn: int, call: SeenCall | None
    ) -> None:
        """Decide once, at ingestion, when (if ever) this result may be cleared."""
        if call is None:
            return  # orphan or duplicate result: left as it is
        state = self._state
        tool = call.name or raw.name or "tool"
        keeps = state.keeps
        keep_turns = (
            keeps[tool]
            if tool in keeps
            else keeps.setdefault(tool, self.policy.turns_to_keep(tool))
        )
        if keep_turns is None:
            return  # excluded or never-clear: untouched, and not counted toward keep
        eidx = len(state.eligible_turns)
        state.eligible_turns.append(turn)
        state.made.append(0)
        if not raw.clearable:  # empty or already cleared: counts toward keep, stays
            return
        info = (raw, tool, call, position, turn, tokens, eidx, "", 0, 0, position)
        pending: Pending = new_tuple(Pending, info)
        if self._rereading and self._memory.knows(raw):
            state.forced.append(pending)  # cleared before the re-read: stays cleared
            return
        rules = state.rules
        if rules is None:
            rules = state.rules = rules_for(self.policy)
        due = turn + keep_turns
        for rule in rules:
            for result, when, reason in rule.propose(pending, due):
                if reason is None:  # the ordinary placeholder once ``when`` comes
                    queue = state.waiting.get(wait := when - result.turn)
                    if queue is None:
                        queue = state.waiting[wait] = deque()
                    queue.append(result)
                # Ahead of its age only a result not yet due by it: one already due may
                # have been cleared by age before this result arrived (incremental = one pass).
                elif when < result.turn + (keeps.get(result.tool) or 0):
                    self._ahead(result, when, reason)

    def _ahead(self, older: Pending, turn: int, reason: str) -> None:
        """Clear ``older`` ahead of its age: the newer result of ``turn``, in full, made it
        stale (``reason``).

        It waits in the ready list like any clear (the trigger, ``clear_at_least`` and the
        cache rule still decide when), and is skipped when its own turn comes."""
        state = self._state
        if state.made[older.eidx]:
            return  # already on its way out (or written)
        text = self._placeholders.superseded(older, turn, reason)
        saving = older.tokens - self.policy.token_counter(text)
        raw = older.raw
        if saving <= 0 or (len(text) >= len(raw.text) and not raw.media):
            return  # never a placeholder longer than the result (as by age)
        state.made[older.eidx] = 1
        args_saving, first = self._inputs_of(older)
        self._ready(
            older._replace(placeholder=text, saving=saving, input_saving=args_saving, first=first)
        )

    def _ready(self, made: Pending) -> None:
        """Queue a result whose placeholder is rendered for the decider."""
        state = self._state
        state.ready.append(made)
        state.ready_saving += made.saving + made.input_saving

    def _inputs_of(self, pending: Pending) -> tuple[int, int]:
        """What blanking the call's arguments saves, and the first message the clear changes."""
        call = pending.call
        if not self._inputs or not self._placeholders.may_rewrite(pending.tool):
            return 0, pending.position
        args_saving = self._placeholders.input_saving(pending.tool, call)
        first = (
            call.position
            if args_saving and call.position < pending.position
            else (pending.position)
        )
        return args_saving, first

    # -- deciding (when ready results go: the Decider) ------------------------------------

    def _evaluate(self, codec: Codec) -> ClearingReport:
        state, policy = self._state, self.policy
        clock = state.turns
        eligible, snapshot = state.eligible_turns, state.snapshot
        while snapshot < len(eligible) and eligible[snapshot] <= clock:
            snapshot += 1
        state.snapshot = snapshot
        decider = self._decider
        decider.take_due(state, clock)
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
        forced = decider.forced_now(state, self._memory) if state.forced else []
        fresh = decider.decide(state) if state.ready or state.plan.items else []
        if fresh and self.audit is not None and not self._audited(self.audit, codec, fresh):
            fresh = []
        return self._write(codec, state, forced, fresh, self._memory)

    def _audited(self, audit: Audit, codec: Codec, fresh: list[Pending]) -> bool:
        """Audit the fresh originals first; when the sink fails they wait for the next call."""
        state = self._state
        if audit_originals(audit, codec, state, fresh):
            return True
        state.ready.extend(fresh)
        state.ready_saving += sum(p.saving + p.input_saving for p in fresh)
        return False

    def _make_ready(self, pending: Pending) -> None:
        """Render the placeholder; a result it would not shrink is left alone for good."""
        state = self._state
        made = state.made
        if made[pending.eidx]:
            return  # cleared ahead of its age already
        made[pending.eidx] = 1
        sized = self._placeholders.sized(pending)
        if sized is None:
            return
        text, size = sized
        raw, saving = pending.raw, pending.tokens - size
        if saving <= 0 or (len(text) >= len(raw.text) and not raw.media):
            return
        args_saving, first = self._inputs_of(pending)
        made_ready = pending[:7] + (text, saving, args_saving, first)  # noqa: RUF005
        self._ready(new_tuple(Pending, made_ready))
