"""Prompt-cache breaks: when a call's reads fall short of the previous prompt, and why.

One rule for recorded runs (``slimtools analyze``) and live agents (:class:`CacheWatch`):
a call is a break when its cache reads fall short of the previous call's whole prompt by
more than :data:`BREAK_SHARE` of it and at least :data:`BREAK_TOKENS` tokens (the thresholds
other cache monitors use; providers cache in blocks, so small shortfalls are rounding).
:func:`cause_of` names the cause from what happened between the two calls.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Literal

from slimtools._session import current_session
from slimtools.instrumentation._events import CacheBreak, ClearingPass, Event, Listener
from slimtools.instrumentation._registry import REGISTRY, check_listener, emit
from slimtools.instrumentation._usage import Usage, usage_of

BREAK_SHARE = 0.05
BREAK_TOKENS = 2_000
TTL_5M = 300.0
TTL_1H = 3_600.0

Cause = Literal[
    "compaction",
    "clearing",
    "model_change",
    "expired",
    "prefix_changed",
    "task_notification",
    "unexplained",
]


def is_break(previous_prompt: int, cache_read: int) -> bool:
    """Whether reads of ``cache_read`` after a prompt of ``previous_prompt`` lost the cache."""
    short = previous_prompt - cache_read
    return short > BREAK_SHARE * previous_prompt and short >= BREAK_TOKENS


def cause_of(
    *,
    compacted: bool = False,
    cleared: bool = False,
    model_changed: bool = False,
    gap_seconds: float | None = None,
    ttl_seconds: float = TTL_5M,
    prefix_changed: bool = False,
    task_notification: bool = False,
) -> Cause:
    """The cause of a break, the first that holds: compaction, clearing, a model change,
    expiry (``gap_seconds`` beyond ``ttl_seconds``), a changed prefix (system prompt or
    tool definitions, e.g. Claude Code's ``/mcp`` reconnecting servers), a turn a
    background task's notification started (Claude Code's ``<task-notification>``: on the
    sessions measured, every such call read only the system prompt and tools), else
    unexplained."""
    if compacted:
        return "compaction"
    if cleared:
        return "clearing"
    if model_changed:
        return "model_change"
    if gap_seconds is not None and gap_seconds > ttl_seconds:
        return "expired"
    if prefix_changed:
        return "prefix_changed"
    if task_notification:
        return "task_notification"
    return "unexplained"


class CacheWatch:
    """Notices cache breaks live from each response's usage and reports them as events.

    Call :meth:`record` with every model response's ``usage`` (in order); a break is
    returned and sent, as a :class:`CacheBreak`, to ``on_event`` and to every listener
    subscribed with :func:`~slimtools.instrumentation.observe`. Give the watch itself as a
    listener (``ClearingPolicy(on_event=watch)`` or ``observe(watch)``) and it learns of
    clearing passes that broke the cache; call :meth:`note_compaction` when the history is
    summarised and :meth:`note_prefix_change` when the system prompt or tools change. The
    cache's lifetime is 1 hour when the previous call wrote to the 1-hour cache, else
    ``ttl_seconds``.
    """

    def __init__(self, *, on_event: Listener | None = None, ttl_seconds: float = TTL_5M) -> None:
        if on_event is not None:
            check_listener(on_event, "CacheWatch(on_event=...)")
        self._on_event = on_event
        self._ttl = ttl_seconds
        self._previous: Usage | None = None
        self._previous_at: float | None = None
        self._model = ""
        self._cleared = self._compacted = self._prefix = False
        self.requests = 0
        """Responses recorded so far."""

    def __call__(self, event: Event) -> None:
        """Hear a clearing pass: one that broke the cache explains the next break."""
        if isinstance(event, ClearingPass) and event.cache_broken:
            self._cleared = True

    def note_compaction(self) -> None:
        """The history was summarised since the last response: the next break is its own."""
        self._compacted = True

    def note_prefix_change(self) -> None:
        """The system prompt or the tool definitions changed since the last response."""
        self._prefix = True

    def record(
        self, usage: Any, *, model: str = "", at: datetime | float | None = None
    ) -> CacheBreak | None:
        """Account one response; the break it shows, if any (already reported).

        Args:
            usage: the response's ``usage`` (a mapping or the SDK's object).
            model: the model that answered, to tell a model change.
            at: when the call was made (a ``datetime`` or epoch seconds); now when None.
        """
        now = at.timestamp() if isinstance(at, datetime) else time.time() if at is None else at
        current = usage_of(usage)
        previous, self._previous = self._previous, current
        gap = None if self._previous_at is None else now - self._previous_at
        self._previous_at = now
        changed = bool(model and self._model and model != self._model)
        self._model = model or self._model
        self.requests += 1
        cleared, compacted, prefix = self._cleared, self._compacted, self._prefix
        self._cleared = self._compacted = self._prefix = False
        if previous is None or not is_break(previous.prompt, current.cache_read):
            return None
        ttl = TTL_1H if previous.write_1h else self._ttl
        found = CacheBreak(
            session=current_session(),
            request=self.requests,
            previous_prompt=previous.prompt,
            cache_read=current.cache_read,
            shortfall=previous.prompt - current.cache_read,
            cause=cause_of(
                compacted=compacted,
                cleared=cleared,
                model_changed=changed,
                gap_seconds=gap,
                ttl_seconds=ttl,
                prefix_changed=prefix,
            ),
            gap_seconds=gap,
            model=model,
            at_ns=int(now * 1e9),
        )
        if self._on_event is not None or REGISTRY.listeners:
            emit(found, self._on_event)
        return found
