"""When ready results go: the trigger, the batch minimum and the cache-aware cut.

One part of the :class:`~slimtools.clearing.Clearer` (``_engine.py``): results fall due by
turn (one queue per retention), wait for the ``keep`` window, and once their placeholders
are rendered wait in the ready list (or, under a cache price, in the plan,
``_plan.py``) until the cache rule lets them go. It reads and changes only the
pass's :class:`~slimtools.clearing._batch.State` it is handed.
"""

from __future__ import annotations

from operator import attrgetter

from slimtools.clearing._batch import Memory, Pending, State
from slimtools.clearing._render import Placeholders
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.pricing import calls_ahead


class Decider:
    """The deciding part of a clearer, under one policy (and, if known, the run's length)."""

    __slots__ = ("_placeholders", "_untriggered", "expected_calls", "policy")

    def __init__(
        self, policy: ClearingPolicy, placeholders: Placeholders, expected_calls: int | None
    ) -> None:
        self.policy = policy
        self._placeholders = placeholders
        self.expected_calls = expected_calls
        self._untriggered = policy.trigger is None

    def take_due(self, state: State, clock: int) -> None:
        """Move the results due by ``clock`` to the ripe list, in due order (then filing)."""
        due = state.ripe  # appended to in place; merged below when several fell due
        mark = len(due)
        queues = 0
        for keep_turns, queue in state.waiting.items():
            if queue and queue[0].turn + keep_turns <= clock:
                queues += 1
                if len(queue) > 32:  # a long queue (a one-pass clear): taken at once (0.9%
                    tail = []  # of its instructions), but for the last turns' results, not due
                    while queue[-1].turn + keep_turns > clock:
                        tail.append(queue.pop())
                    due += queue
                    queue.clear()
                    queue.extend(reversed(tail))
                while queue and queue[0].turn + keep_turns <= clock:
                    due.append(queue.popleft())
        if queues > 1:  # results of several retentions fell due: merge them by due turn
            keeps = state.keeps
            order = lambda p: (p.turn + (keeps[p.tool] or 0), p.eidx)  # noqa: E731
            if mark:
                due[mark:] = sorted(due[mark:], key=order)
            else:
                due.sort(key=order)

    def forced_now(self, state: State, memory: Memory) -> list[Pending]:
        """Results cleared before a re-read, now outside the keep window: clear them again."""
        now: list[Pending] = []
        later: list[Pending] = []
        for pending in state.forced:
            if state.turns - pending.turn < self.policy.keep_turns:
                later.append(pending)
                continue
            text, blanked = memory.recall(pending.raw)
            saving = pending.tokens - self.policy.token_counter(text)
            args_saving = (
                self._placeholders.input_saving(pending.tool, pending.call) if blanked else 0
            )
            first = min(pending.position, pending.call.position) if blanked else pending.position
            now.append(
                pending._replace(
                    placeholder=text, saving=saving, input_saving=args_saving, first=first
                )
            )
        state.forced = later
        return now

    def decide(self, state: State) -> list[Pending]:
        """Which ready results go now: all, none, or (under a cache price) the cheapest cut.

        The window guard comes first: over ``max_context_tokens``, results go whatever the
        trigger, ``clear_at_least`` or the cache say. Otherwise the trigger must have fired;
        without a price model everything ready goes once it saves ``clear_at_least``; with
        one, the results wait in ``state.plan`` and the rule of
        :class:`~slimtools.clearing._plan.Candidates` picks the cut whose saving over the
        calls ahead most outweighs the cache rewrite it causes.
        """
        policy = self.policy
        limit = policy.max_context_tokens
        over = limit is not None and state.tokens - state.saved > limit
        if not (over or self._untriggered or self._triggered(state)):
            return []
        pricing = policy.pricing
        if pricing is None:
            if not over and state.ready_saving < (policy.clear_at_least or 0):
                return []
            fresh, state.ready, state.ready_saving = state.ready, [], 0
            return fresh
        offsets, savings = state.offsets, state.savings
        ready = state.ready
        # Tokens of the history before each position, as cleared so far.
        if len(ready) == 1:  # a per-round clearer's usual call: one result, no columns
            p = ready[0]
            f = p.first
            state.plan.add(p, f, p.saving + p.input_saving, offsets[f] - savings.before(f))
        elif ready:
            ready.sort(key=_first_change)
            firsts = [p.first for p in ready]
            before = [offsets[f] - savings.before(f) for f in firsts]
            state.plan.extend(ready, firsts, [p.saving + p.input_saving for p in ready], before)
        start = state.turn_start
        now = offsets[start] - savings.before(start)
        ready.clear()
        state.ready_saving = 0
        need = state.tokens - state.saved - limit if over and limit is not None else 0
        plan, horizon, expected = state.plan, pricing.horizon, self.expected_calls
        if expected is None and horizon is not None and state.turns >= horizon >= 1:
            calls = horizon  # what calls_ahead gives a run this old, shell or not
        else:
            shell = self._commands_only(state)
            calls = calls_ahead(state.turns, expected, horizon, commands_only=shell)
        cut = plan.choose(
            state.turn_start,
            now,
            calls,
            pricing,
            at_least=policy.clear_at_least or 0,
            need=need,
        )
        return [] if cut is None else plan.take(cut)

    def _commands_only(self, state: State) -> bool:
        """Whether every tool that has returned a result is a command (a shell agent's run)."""
        keeps = state.keeps
        if state.shell and state.shell_checked < len(keeps):
            category_of = self.policy.category_of
            state.shell = all(category_of(tool) == "command" for tool in keeps)
            state.shell_checked = len(keeps)
        return state.shell and bool(keeps)

    def _triggered(self, state: State) -> bool:
        trigger: tuple[str, int] = self.policy.trigger  # type: ignore[assignment]  # not None
        kind, value = trigger
        if kind == "tokens":
            return state.tokens - state.saved > value
        return state.tool_uses > value


_first_change = attrgetter("first")
"""The first message clearing a result rewrites (its call's, when arguments blank): the
sort key of the ready list, read in C (a one-pass clear sorts every result by it)."""
