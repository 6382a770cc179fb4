"""One request body in, the body to send upstream out: the gateway's decision, free of I/O.

A body the gateway cannot read, or one it must not clear (the server clears it, or the
history lives upstream behind ``previous_response_id``), goes out as the very bytes that
came in; so does one whose clearing changed nothing. Otherwise only the history field is
replaced and the body is serialized again, every other field kept in its order.

orjson reads an integer past 64 bits as a float. Looking for one costs more than the parse
itself, so it is looked for only in a body serialized again, and only where orjson wrote a
float in exponent form (:func:`_exact`): then the integers are restored from an exact
reading, digit for digit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson

from slimtools._json import dumps, loads, may_hold_long_integer
from slimtools.clearing.formats import ANTHROPIC, OPENAI_RESPONSES
from slimtools.gateway._state import Cleared, ConversationCache, conversation_name
from slimtools.gateway._wire import (
    Endpoint,
    UnreadableError,
    continues_response,
    history_of,
    server_clearing,
)
from slimtools.gateway.stats import ConversationStats, GatewayStats

logger = logging.getLogger("slimtools.gateway")


@dataclass(frozen=True, slots=True)
class Outgoing:
    """The body to send and whom its response's usage belongs to.

    Attributes:
        body: the bytes to send upstream.
        stats: the conversation's figures (None for a body that could not be read).
        streaming: whether the request asked for a streamed response.
        note: why the body went unchanged, if it did for a reason (``"server-clearing"``,
            ``"previous-response"``, ``"unreadable"``).
        cleared: results this request newly cleared.
    """

    body: bytes
    stats: ConversationStats | None
    streaming: bool
    note: str = ""
    cleared: int = 0


def rewrite(
    raw: bytes,
    endpoint: Endpoint,
    cache: ConversationCache,
    stats: GatewayStats,
    *,
    diagnostics: bool = False,
) -> Outgoing:
    """The body to send upstream for ``raw``; never raises (unreadable goes unchanged).

    ``diagnostics`` asks the provider for its cache diagnostics (:func:`diagnostics_fields`).
    """
    try:
        # What orjson refuses (NaN, lone surrogates) stays unreadable: it goes unchanged.
        body = orjson.loads(raw)
    except ValueError as exc:
        return _unreadable(raw, stats, exc)
    streaming = isinstance(body, dict) and body.get("stream") is True
    try:
        cleared, conversation, note = clear_body(body, endpoint, cache, stats)
    except UnreadableError as exc:
        return _unreadable(raw, stats, exc)
    newly = conversation.last_cleared if not note else 0
    extra = diagnostics_fields(body, endpoint, conversation) if diagnostics and not note else {}
    if extra:
        cleared = {**(cleared if cleared is not None else body), **extra}
    if cleared is None:
        return Outgoing(raw, conversation, streaming, note, newly)
    return Outgoing(_exact(cleared, raw), conversation, streaming, note, newly)


def _exact(cleared: dict[str, Any], raw: bytes) -> bytes:
    """``cleared`` serialized, with every integer ``raw`` wrote past 64 bits as it came.

    orjson wrote such an integer read as a float in exponent form (``1.8446744073709552e+19``),
    so a body without ``e+`` has none; one with it is checked by the sieve and, where it
    may, read exactly, and each float standing where ``raw`` had an integer is put back."""
    out = dumps(cleared)
    if b"e+" not in out or not may_hold_long_integer(raw):
        return out
    return dumps(_integers_from(cleared, loads(raw)))


def _integers_from(value: Any, exact: Any) -> Any:
    """``value`` with each float that ``exact`` holds as an integer at the same place
    replaced by that integer (the rest of ``value`` as it is)."""
    if isinstance(value, float) and isinstance(exact, int) and not isinstance(exact, bool):
        return exact
    if isinstance(value, dict) and isinstance(exact, dict):
        return {k: _integers_from(v, exact.get(k)) for k, v in value.items()}
    if isinstance(value, list) and isinstance(exact, list) and len(value) == len(exact):
        return [_integers_from(v, e) for v, e in zip(value, exact, strict=True)]
    return value


def diagnostics_fields(
    body: Any, endpoint: Endpoint, conversation: ConversationStats
) -> dict[str, Any]:
    """The fields asking the provider to compare this request with the conversation's
    previous response: Anthropic's ``diagnostics.previous_message_id`` (null on a first
    turn, which opts in), OpenAI Responses' ``prompt_cache_options.comparison_response_id``
    (once a previous response is known). None where the agent set them itself, and none on
    Chat Completions (no documented field) or ``count_tokens``."""
    if endpoint.counts_tokens:
        return {}
    previous = conversation.previous_response
    if endpoint.format == ANTHROPIC and "diagnostics" not in body:
        return {"diagnostics": {"previous_message_id": previous}}
    if endpoint.format == OPENAI_RESPONSES and previous and "prompt_cache_options" not in body:
        return {"prompt_cache_options": {"comparison_response_id": previous}}
    return {}


def clear_body(
    body: Any, endpoint: Endpoint, cache: ConversationCache, stats: GatewayStats
) -> tuple[dict[str, Any] | None, ConversationStats, str]:
    """Clear a parsed request body: ``(new body or None when unchanged, stats, note)``.

    The new body is a shallow copy with only the history replaced; ``body`` is not mutated.

    Raises:
        UnreadableError: the body or its history cannot be read or cleared.
    """
    history = history_of(body, endpoint)
    name = conversation_name(history, endpoint.format)
    if endpoint.format == OPENAI_RESPONSES and continues_response(body):
        found = stats.of(name, endpoint.format)
        found.continued += 1
        return None, found, "previous-response"
    if server_clearing(body):
        found = stats.of(name, endpoint.format)
        found.server_cleared += 1
        return None, found, "server-clearing"
    try:
        cleared = cache.clear(history, endpoint.format, keep=not endpoint.counts_tokens)
    except Exception as exc:  # a history the clearer cannot read must not fail the agent
        raise UnreadableError(
            f"the history cannot be cleared: {type(exc).__name__}: {exc}"
        ) from exc
    conversation = stats.of(cleared.conversation.id, endpoint.format)
    if not endpoint.counts_tokens:
        _record(conversation, cleared, len(history))
    if not cleared.changed:
        return None, conversation, ""
    return {**body, endpoint.field: cleared.messages}, conversation, ""


def _record(conversation: ConversationStats, cleared: Cleared, messages: int) -> None:
    conversation.record(
        messages=messages,
        cleared=cleared.report.cleared_tool_uses,
        saved=cleared.report.cleared_input_tokens,
        agent=cleared.agent_tokens,
        upstream=cleared.upstream_tokens,
        replayed=cleared.replayed,
    )


def _unreadable(raw: bytes, stats: GatewayStats, exc: Exception) -> Outgoing:
    stats.unreadable += 1
    logger.warning("slimtools gateway: forwarding a request it cannot read unchanged: %s", exc)
    return Outgoing(raw, None, False, "unreadable")
