"""One request body in, the body to send upstream out: the gateway's decision, free of I/O.

A body the gateway cannot read, or one it must not clear (the server clears it, or the
history lives upstream behind ``previous_response_id``), goes out as the very bytes that
came in; so does one whose clearing changed nothing. Otherwise only the history field is
replaced and the body is serialized again, every other field kept in its order.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import orjson

from slimtools._core.session import session
from slimtools.gateway._state import Cleared, ConversationCache, conversation_name
from slimtools.gateway._wire import (
    OPENAI_RESPONSES,
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
    """

    body: bytes
    stats: ConversationStats | None
    streaming: bool
    note: str = ""


def rewrite(
    raw: bytes, endpoint: Endpoint, cache: ConversationCache, stats: GatewayStats
) -> Outgoing:
    """The body to send upstream for ``raw``; never raises (unreadable goes unchanged)."""
    try:
        body = orjson.loads(raw)
        history = history_of(body, endpoint)
    except (orjson.JSONDecodeError, UnreadableError) as exc:
        return _unreadable(raw, stats, exc)
    streaming = body.get("stream") is True
    if endpoint.format == OPENAI_RESPONSES and continues_response(body):
        found = stats.of(conversation_name(history, endpoint.format), endpoint.format)
        found.continued += 1
        return Outgoing(raw, found, streaming, "previous-response")
    if server_clearing(body):
        found = stats.of(conversation_name(history, endpoint.format), endpoint.format)
        found.server_cleared += 1
        return Outgoing(raw, found, streaming, "server-clearing")
    try:
        cleared = _clear(history, endpoint, cache)
    except Exception as exc:  # a history the clearer cannot read must not fail the agent
        return _unreadable(raw, stats, exc)
    conversation = stats.of(cleared.conversation.id, endpoint.format)
    if not endpoint.counts_tokens:
        conversation.record(
            messages=len(history),
            cleared=cleared.report.cleared_tool_uses,
            saved=cleared.report.cleared_input_tokens,
            agent=cleared.agent_tokens,
            upstream=cleared.upstream_tokens,
            replayed=cleared.replayed,
        )
    if not cleared.changed:
        return Outgoing(raw, conversation, streaming)
    body[endpoint.field] = cleared.messages
    return Outgoing(orjson.dumps(body), conversation, streaming)


def _clear(history: list[Any], endpoint: Endpoint, cache: ConversationCache) -> Cleared:
    name = conversation_name(history, endpoint.format)
    with session(f"gateway:{name}"):
        return cache.clear(history, endpoint.format, keep=not endpoint.counts_tokens)


def _unreadable(raw: bytes, stats: GatewayStats, exc: Exception) -> Outgoing:
    stats.unreadable += 1
    logger.warning("slimtools gateway: forwarding a request it cannot read unchanged: %s", exc)
    return Outgoing(raw, None, False, "unreadable")
