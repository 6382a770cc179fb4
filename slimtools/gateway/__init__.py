"""``slimtools gateway``: clear the tool results of an agent you don't own, on the wire.

The gateway sits between any agent and its model API (Anthropic Messages, OpenAI Chat
Completions and Responses): it clears stale tool results in each request before it goes
upstream, keeps the agent's own history untouched, and measures the bill. ``create_app``
builds the ASGI app (needs the ``gateway`` extra: starlette, uvicorn, aiohttp);
:class:`ConversationCache`, :func:`rewrite` and :func:`clear_body` are the I/O-free core
that the LiteLLM hook shares.
"""

from __future__ import annotations

from slimtools.gateway._request import Limits
from slimtools.gateway._rewrite import Outgoing, clear_body, rewrite
from slimtools.gateway._state import Cleared, Conversation, ConversationCache, conversation_name
from slimtools.gateway._wire import ENDPOINTS, Endpoint, UnreadableError
from slimtools.gateway.stats import Billed, ConversationStats, GatewayStats

__all__ = [
    "ENDPOINTS",
    "Billed",
    "Cleared",
    "Conversation",
    "ConversationCache",
    "ConversationStats",
    "Endpoint",
    "GatewayStats",
    "Limits",
    "Outgoing",
    "UnreadableError",
    "clear_body",
    "conversation_name",
    "create_app",
    "rewrite",
]


def __getattr__(name: str) -> object:
    """``create_app`` loads the HTTP stack only when asked for."""
    if name == "create_app":
        from slimtools.gateway.app import create_app

        return create_app
    raise AttributeError(f"module 'slimtools.gateway' has no attribute {name!r}")
