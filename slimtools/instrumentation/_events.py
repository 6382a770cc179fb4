"""The events slimtools reports: one per slimmed call, ``get_record`` answer and clearing pass,
and the cache breaks and misses seen in model responses.

Each is an immutable named tuple (built only when someone listens, possibly once per tool
call) whose ``as_dict()`` is plain JSON data, and whose ``kind`` names it there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeAlias


class SlimmedCall(NamedTuple):
    """What one call of a slimmed tool did (``@project_fields``, ``@paginate``,
    ``@summarize_with_handle`` in any stack).

    Token counts use the tool's counter (``count_tokens`` unless ``@paginate`` or
    ``@summarize_with_handle`` was given ``token_counter=``). ``tokens_before`` is what the
    raw result would have cost the model as compact JSON with non-ASCII kept (text results
    as they are): the cheapest form a framework could send it in, so the saving is never
    overstated. It is exact up to 256 records or 256 KiB of text; beyond that it is
    estimated from 64 evenly spaced records (or 32 evenly spaced 4 KiB slices of the text)
    scaled to the whole, so that measuring a 10,000-row result costs about as much as
    slimming it.

    Attributes:
        tool: the tool's name, as hints write it.
        toolkit: the toolkit whose store the call used (``"default"`` for a tool no toolkit
            registered).
        session: the handle session the call ran in.
        tokens_before: what the raw result would have cost; 0 when the page was read from
            the page-1 snapshot (the tool did not run, and without slimming the first call
            had shown everything), so that summing ``tokens_saved`` over a run gives its
            net saving.
        tokens_after: what the result the model gets costs (the envelope's JSON).
        shown: items (or lines, see ``unit``) the envelope shows.
        total: items (or lines) in the whole result.
        unit: ``"items"`` for records, ``"lines"`` for text.
        handles: handles written to the store in this call: full records and texts kept for
            ``get_record`` (not page-1 snapshots, not what the store refused or a live
            ``fetch=`` serves).
        page: the page asked for; None for a tool without ``@paginate`` or a page that is
            not an integer.
        from_snapshot: the page was read from the page-1 snapshot, without running the tool.
        call_id: the model's tool-call id when the caller bound one (the OpenAI, Anthropic
            and Agents SDK adapters do; see ``slimtools.instrumentation.tool_call_id``).
        start_ns: when the call started (``time.time_ns()``).
        end_ns: when it ended.
    """

    tool: str
    toolkit: str
    session: str
    tokens_before: int
    tokens_after: int
    shown: int
    total: int
    unit: str
    handles: int
    page: int | None
    from_snapshot: bool
    call_id: str | None
    start_ns: int
    end_ns: int

    @property
    def kind(self) -> str:
        """``"slimmed_call"``: the event's name in ``as_dict()``."""
        return "slimmed_call"

    @property
    def tokens_saved(self) -> int:
        """``tokens_before - tokens_after``: negative for a page read from the snapshot."""
        return self.tokens_before - self.tokens_after

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data: ``{"event": kind, <every field>, "tokens_saved": ...}``."""
        return {"event": self.kind, **self._asdict(), "tokens_saved": self.tokens_saved}


class RecordLookup(NamedTuple):
    """What one ``get_record`` call answered (a toolkit's companion tool).

    Attributes:
        tool: the companion's name (``get_record`` unless the toolkit renamed it).
        toolkit: the toolkit whose store was read.
        session: the handle session of the lookup.
        handle: the handle asked for, as text (at most 256 characters).
        source: the ``source=`` tool named, if any.
        page: the page asked for (None when it is not an integer).
        found: whether the answer is the record or text (False: a message saying how to
            recover, for an unknown, expired or malformed handle or a bad page).
        tokens: what the answer costs the model (``count_tokens``); a cost of slimming,
            which the OpenTelemetry bridge subtracts from the tokens saved.
        call_id: the model's tool-call id when the caller bound one.
        start_ns: when the lookup started (``time.time_ns()``).
        end_ns: when it ended.
    """

    tool: str
    toolkit: str
    session: str
    handle: str
    source: str | None
    page: int | None
    found: bool
    tokens: int
    call_id: str | None
    start_ns: int
    end_ns: int

    @property
    def kind(self) -> str:
        """``"record_lookup"``: the event's name in ``as_dict()``."""
        return "record_lookup"

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data: ``{"event": kind, <every field>}``."""
        return {"event": self.kind, **self._asdict()}


class ClearingPass(NamedTuple):
    """What one call of a ``Clearer`` did (``clear``, ``clear_in_place``,
    ``clear_with_report``, and ``clear_stale_results``, a fresh clearer's one call).

    The numbers are those of the pass's :class:`~slimtools.clearing.ClearingReport`, with the
    policy's ``token_counter``.

    Attributes:
        format: the history format (``"langchain"``, ``"openai_chat"``, ...).
        session: the session bound with ``slimtools.session`` during the pass, if any.
        messages: messages in the history after the pass.
        cleared: results replaced by placeholders in this pass (earlier ones not counted).
        inputs_cleared: how many of those calls also had their arguments blanked.
        cleared_call_ids: the call ids of the cleared results, in history order.
        tokens_before: tokens of the history as the model would have seen it before the pass.
        tokens_after: the same after it.
        first_changed: index of the first message the pass rewrote (where a prompt cache
            over the previous request breaks); None when nothing changed.
        cache_broken: whether the pass rewrote a message the previous request held: one
            before the length the history had at this clearer's previous call. On a
            clearer's first call (every ``clear_stale_results``) that length is unknown and
            any rewrite counts as a break.
        start_ns: when the pass started (``time.time_ns()``).
        end_ns: when it ended.
    """

    format: str | None
    session: str | None
    messages: int
    cleared: int
    inputs_cleared: int
    cleared_call_ids: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    first_changed: int | None
    cache_broken: bool
    start_ns: int
    end_ns: int

    @property
    def kind(self) -> str:
        """``"clearing_pass"``: the event's name in ``as_dict()``."""
        return "clearing_pass"

    @property
    def tokens_saved(self) -> int:
        """``tokens_before - tokens_after``: what the pass took out of the history."""
        return self.tokens_before - self.tokens_after

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data: ``{"event": kind, <every field>, "tokens_saved": ...}``."""
        data = {"event": self.kind, **self._asdict(), "tokens_saved": self.tokens_saved}
        data["cleared_call_ids"] = list(self.cleared_call_ids)
        return data


class CacheBreak(NamedTuple):
    """A model call whose prompt-cache reads fell short of the previous prompt.

    Reported by :class:`~slimtools.instrumentation.CacheWatch` from each response's usage,
    and by ``slimtools analyze`` for recorded runs. A call is a break only when its reads
    fall short of the previous prompt by more than 5% and at least 2,000 tokens (smaller
    shortfalls are the provider's block rounding, not a lost cache).

    Attributes:
        session: the session bound with ``slimtools.session`` when it was noticed, if any.
        request: the 1-based index of the call among those the watch saw.
        previous_prompt: the previous call's whole prompt (every input token).
        cache_read: what this call read from the cache.
        shortfall: ``previous_prompt - cache_read``.
        cause: ``"compaction"`` (the history was summarised), ``"clearing"`` (a clearing
            pass rewrote a message the previous call held), ``"model_change"`` (caches are
            per model), ``"expired"`` (longer since the previous call than the cache's
            lifetime), ``"prefix_changed"`` (the system prompt or tool definitions
            changed), ``"task_notification"`` (a background task's notification started
            the turn; read from Claude Code transcripts) or ``"unexplained"``, checked in
            that order.
        gap_seconds: time since the previous call (None when unknown).
        model: the model of this call ("" when unknown).
        at_ns: when it was noticed (``time.time_ns()``), or the recorded time.
    """

    session: str | None
    request: int
    previous_prompt: int
    cache_read: int
    shortfall: int
    cause: str
    gap_seconds: float | None
    model: str
    at_ns: int

    @property
    def kind(self) -> str:
        """``"cache_break"``: the event's name in ``as_dict()``."""
        return "cache_break"

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data: ``{"event": kind, <every field>}``."""
        return {"event": self.kind, **self._asdict()}


class ProviderCacheMiss(NamedTuple):
    """Input tokens the provider itself says missed the prompt cache on one response.

    Emitted by ``slimtools gateway --cache-diagnostics``, which asks the provider to compare
    each request with the conversation's previous response (see ``docs/gateway.md``), for
    each response that reports a miss of at least one token. Where :class:`CacheBreak`
    infers a break from usage, this is the provider's own count: over the requests that
    newly cleared results, what those clearing batches actually cost.

    Attributes:
        session: ``gateway:<conversation>``, the conversation's name in the gateway's
            ``/slimtools/stats`` (its ``ClearingPass`` events carry the same session).
        provider: ``"anthropic"`` (``diagnostics.cache_miss_reason``) or ``"openai"``
            (Responses' ``prompt_cache_diagnostics``).
        reason: the provider's reason (Anthropic's ``cache_miss_reason.type``, such as
            ``"messages_changed"``); None where the provider gives none (OpenAI).
        missed_tokens: input tokens that missed the cache against the previous response.
        cleared: whether the request newly cleared results (so the miss is, by the
            provider's count, what that clearing cost).
        at_ns: when the response was read (``time.time_ns()``).
    """

    session: str
    provider: str
    reason: str | None
    missed_tokens: int
    cleared: bool
    at_ns: int

    @property
    def kind(self) -> str:
        """``"provider_cache_miss"``: the event's name in ``as_dict()``."""
        return "provider_cache_miss"

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data: ``{"event": kind, <every field>}``."""
        return {"event": self.kind, **self._asdict()}


Event: TypeAlias = SlimmedCall | RecordLookup | ClearingPass | CacheBreak | ProviderCacheMiss
"""Any event a listener receives; tell them apart with ``isinstance`` (or ``kind``)."""


Listener: TypeAlias = Callable[[Event], object]
"""Hears each ``slimtools.instrumentation`` event (a ``SlimmedCall``, ``RecordLookup``,
``ClearingPass``, ``CacheBreak`` or ``ProviderCacheMiss``); what it returns is ignored, what
it raises is logged."""
