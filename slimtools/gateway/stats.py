"""What the gateway did and what it cost: per conversation and in total.

Each cleared request adds what the clearer counted (the prompt's tokens as the agent sent
it and as it went upstream, results cleared); each upstream response adds the ``usage`` it
reports (uncached input, cache reads and writes, output). Beside them stands the ledger's
model of the same requests *without* clearing: each request reads the previous prompt from
the cache and writes the rest (:class:`~slimtools.ledger.TokenLedger`'s rule), priced by the
gateway's :class:`~slimtools.clearing.CachePricing`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from slimtools.clearing import CachePricing
from slimtools.instrumentation import ProviderCacheMiss, Usage


@dataclass(slots=True)
class Billed:
    """Tokens the upstream responses of one conversation billed, summed.

    Each response's ``usage`` is read by :func:`slimtools.instrumentation.usage_of` (the
    one reading, for every API) and added here.

    Attributes:
        input: input tokens billed at the plain price (neither read nor written to a cache).
        cache_read: input tokens read from the cache.
        cache_write: input tokens written to the cache (Anthropic only; OpenAI does not bill
            writes separately).
        output: output tokens.
    """

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0

    def add(self, usage: Usage) -> None:
        """Add one response's usage."""
        self.input += usage.input
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.output += usage.output


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def raw_usage_in_event(event: Any) -> Mapping[str, Any] | None:
    """The ``usage`` object one streamed event carries: Anthropic's ``message_start`` and
    ``message_delta`` (whose figures are cumulative: later ones replace earlier ones), a
    Chat Completions chunk with ``usage``, a Responses ``response.completed``."""
    if not isinstance(event, Mapping):
        return None
    found: Any = event.get("usage")
    if isinstance(event.get("message"), Mapping):  # message_start
        found = event["message"].get("usage")
    elif isinstance(event.get("response"), Mapping):
        found = (
            event["response"].get("usage") if event.get("type") == "response.completed" else None
        )
    return found if isinstance(found, Mapping) else None


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What one response says of itself for the provider's cache diagnostics.

    Attributes:
        response_id: the response's ``id`` (the next request compares against it).
        missed: tokens the provider says missed the cache against the previous response
            (None: the response gave no figure).
        reason: the provider's reason for the miss (Anthropic's ``cache_miss_reason.type``).
        provider: whose diagnostics gave the figure (``"anthropic"`` or ``"openai"``).
    """

    response_id: str | None = None
    missed: int | None = None
    reason: str | None = None
    provider: str | None = None

    def miss(self, conversation: str, *, cleared: bool) -> ProviderCacheMiss | None:
        """The event reporting this response's cache miss in ``conversation`` (a stats
        name), or None when the provider reported no missed token."""
        if not self.missed or self.provider is None:
            return None
        return ProviderCacheMiss(
            f"gateway:{conversation}",
            self.provider,
            self.reason,
            self.missed,
            cleared,
            time.time_ns(),
        )


def diagnosis_of(message: Any) -> Diagnosis:
    """Read a response object (or streamed event) for its id and cache diagnostics.

    Fields read: Anthropic ``id`` and ``diagnostics.cache_miss_reason`` (``type``,
    ``cache_missed_input_tokens``), at the top of a message or in ``message_start``'s
    message; OpenAI Responses ``id`` and ``prompt_cache_diagnostics.cache_missed_tokens``
    (at the top of a response, in ``response.completed``'s response, or in its ``usage``).
    """
    if not isinstance(message, Mapping):
        return Diagnosis()
    inner = message.get("message") or message.get("response")
    if isinstance(inner, Mapping):
        message = inner
    found = message.get("id")
    response_id = found if isinstance(found, str) else None
    missed: int | None = None
    reason: str | None = None
    provider: str | None = None
    diagnostics = message.get("diagnostics")
    if isinstance(diagnostics, Mapping):
        miss = diagnostics.get("cache_miss_reason")
        if isinstance(miss, Mapping):
            kind = miss.get("type")
            reason = kind if isinstance(kind, str) else None
            missed, provider = _int(miss.get("cache_missed_input_tokens")), "anthropic"
        elif miss is None and "cache_miss_reason" in diagnostics:
            missed, provider = 0, "anthropic"  # compared, and no divergence found
    usage = message.get("usage")
    openai = message.get("prompt_cache_diagnostics") or (
        usage.get("prompt_cache_diagnostics") if isinstance(usage, Mapping) else None
    )
    if isinstance(openai, Mapping):
        missed, provider = _int(openai.get("cache_missed_tokens")), "openai"
    return Diagnosis(response_id, missed, reason, provider)


_STATE = frozenset({"previous_response", "last_cleared"})
"""Fields a conversation's figures keep for the next request, not shown in the stats."""


@dataclass(slots=True)
class ConversationStats:
    """One conversation's figures (:meth:`as_dict` is its JSON in ``/slimtools/stats``)."""

    id: str
    format: str
    requests: int = 0
    messages: int = 0
    cleared: int = 0
    tokens_saved: int = 0
    agent_tokens: int = 0
    upstream_tokens: int = 0
    replayed_calls: int = 0
    server_cleared: int = 0
    continued: int = 0
    unreadable: int = 0
    billed: Billed = field(default_factory=Billed)
    modelled_read: int = 0
    modelled_write: int = 0
    provider_diagnosed: int = 0
    provider_missed_tokens: int = 0
    provider_missed_after_clearing: int = 0
    provider_miss_reasons: dict[str, int] = field(default_factory=dict)
    previous_response: str | None = field(default=None, repr=False)
    last_cleared: int = field(default=0, repr=False)
    _previous_agent: int = 0

    def record(
        self, *, messages: int, cleared: int, saved: int, agent: int, upstream: int, replayed: int
    ) -> None:
        """Add one cleared request (and the ledger's no-clearing model of it)."""
        self.requests += 1
        self.last_cleared = cleared
        self.messages = messages
        self.cleared += cleared
        self.tokens_saved += saved
        self.agent_tokens += agent
        self.upstream_tokens += upstream
        self.replayed_calls += replayed
        read = min(self._previous_agent, agent)
        self.modelled_read += read
        self.modelled_write += agent - read
        self._previous_agent = agent

    def diagnosed(self, diagnosis: Diagnosis, *, cleared: bool) -> None:
        """Add what a response says of its cache miss (``cleared``: its request newly
        cleared results, so the miss is what that clearing batch cost, by the provider)."""
        if diagnosis.response_id is not None:
            self.previous_response = diagnosis.response_id
        if diagnosis.missed is None:
            return
        self.provider_diagnosed += 1
        self.provider_missed_tokens += diagnosis.missed
        if cleared:
            self.provider_missed_after_clearing += diagnosis.missed
        if diagnosis.reason is not None:
            reasons = self.provider_miss_reasons
            reasons[diagnosis.reason] = reasons.get(diagnosis.reason, 0) + 1

    def as_dict(self, pricing: CachePricing | None) -> dict[str, Any]:
        """The JSON figures; costs are in plain-input-token equivalents under ``pricing``."""
        out = {k: v for k, v in asdict(self).items() if not k.startswith("_") and k not in _STATE}
        billed = self.billed
        billed_cost = _cost(billed.input, billed.cache_read, billed.cache_write, pricing)
        out["billed_cost"] = round(billed_cost, 1)
        modelled = _cost(0, self.modelled_read, self.modelled_write, pricing)
        out["modelled_cost_without_clearing"] = round(modelled, 1)
        return out


def _cost(plain: int, read: int, written: int, pricing: CachePricing | None) -> float:
    if pricing is None:
        return float(plain + read + written)
    return plain + pricing.cost(read, written)


class GatewayStats:
    """Every conversation's figures and their total; one per gateway app."""

    def __init__(self, pricing: CachePricing | None, *, max_conversations: int = 1000) -> None:
        self.pricing = pricing
        self.max_conversations = max_conversations
        self.conversations: dict[str, ConversationStats] = {}
        self.forwarded = 0
        self.unreadable = 0

    def of(self, conversation: str, format: str) -> ConversationStats:
        """The figures of one conversation (created on first use; the oldest go first)."""
        found = self.conversations.get(conversation)
        if found is None:
            if len(self.conversations) >= self.max_conversations:
                del self.conversations[next(iter(self.conversations))]
            found = self.conversations[conversation] = ConversationStats(conversation, format)
        return found

    def as_dict(self) -> dict[str, Any]:
        """``{"total": {...}, "conversations": [...], "forwarded": N, "unreadable": N}``."""
        rows = [c.as_dict(self.pricing) for c in self.conversations.values()]
        total: dict[str, Any] = {}
        for row in rows:
            for key, value in row.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    total[key] = total.get(key, 0) + value
                elif isinstance(value, dict):
                    inner = total.setdefault(key, {})
                    for k, v in value.items():
                        inner[k] = inner.get(k, 0) + v
        total["conversations"] = len(rows)
        return {
            "total": total,
            "conversations": rows,
            "forwarded": self.forwarded,
            "unreadable": self.unreadable,
        }
