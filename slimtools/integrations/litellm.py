"""LiteLLM: clear stale tool results before LiteLLM sends a request, with one config line.

Add to the LiteLLM proxy's ``config.yaml``::

    litellm_settings:
      callbacks: slimtools.integrations.litellm.clearing

or, with the SDK, ``litellm.callbacks = [SlimtoolsClearing()]``. The proxy calls
:meth:`SlimtoolsClearing.async_pre_call_hook` with the request it received; LiteLLM's SDK
(and the proxy, once it picked a deployment) calls
:meth:`SlimtoolsClearing.async_pre_call_deployment_hook`. Both clear the request's history
with the gateway's own core (:func:`slimtools.gateway.clear_body`), so a LiteLLM user and a
gateway user get the same bytes upstream, and :attr:`SlimtoolsClearing.stats` holds the
same figures as the gateway's ``/slimtools/stats``.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

try:
    from litellm.integrations.custom_logger import CustomLogger
except ImportError as exc:  # pragma: no cover - the message names the extra
    raise ImportError(
        "slimtools.integrations.litellm needs litellm: pip install 'slimtools[litellm]'"
    ) from exc

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.formats import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES
from slimtools.clearing.pricing import pricing_of
from slimtools.gateway import (
    ENDPOINTS,
    ConversationCache,
    Endpoint,
    GatewayStats,
    UnreadableError,
    clear_body,
    conversation_name,
)
from slimtools.instrumentation import usage_of

__all__ = ["SlimtoolsClearing", "clearing"]

logger = logging.getLogger("slimtools.gateway")

_BY_FORMAT = {e.format: e for e in ENDPOINTS if not e.counts_tokens}
_REMEMBERED = 256


def endpoint_for(call_type: Any) -> Endpoint | None:
    """The wire format of a LiteLLM call type (None: not a model call with a history)."""
    name = str(getattr(call_type, "value", call_type) or "")
    if name in ("anthropic_messages", "aanthropic_messages"):
        return _BY_FORMAT[ANTHROPIC]
    if name in ("responses", "aresponses"):
        return _BY_FORMAT[OPENAI_RESPONSES]
    if name in ("completion", "acompletion", "text_completion", "atext_completion"):
        return _BY_FORMAT[OPENAI_CHAT]  # LiteLLM's own messages are Chat Completions'
    return None


class SlimtoolsClearing(CustomLogger):
    """A LiteLLM callback that clears each request's stale tool results before it goes out.

    Args:
        policy: the clearing policy (defaults to ``ClearingPolicy()``).
        max_conversations: conversations kept in memory (least recently used go first).
    """

    def __init__(
        self, policy: ClearingPolicy | None = None, *, max_conversations: int = 1000
    ) -> None:
        super().__init__()
        self.policy = policy if policy is not None else ClearingPolicy()
        self.cache = ConversationCache(self.policy, max_conversations=max_conversations)
        self.stats = GatewayStats(
            pricing_of(self.policy.cache), max_conversations=max_conversations
        )
        # Histories this hook produced: the proxy runs both hooks on one request, and the
        # second must not read the cleared history as a new conversation.
        self._sent: OrderedDict[int, Any] = OrderedDict()

    def clear(self, data: dict[str, Any], call_type: Any) -> dict[str, Any] | None:
        """The request with its history cleared, or None when it is left as it is."""
        endpoint = endpoint_for(call_type)
        if endpoint is None or not isinstance(data, dict):
            return None
        history = data.get(endpoint.field)
        if history is not None and self._sent.get(id(history)) is history:
            return None
        try:
            cleared, _, _ = clear_body(data, endpoint, self.cache, self.stats)
        except UnreadableError as exc:
            self.stats.unreadable += 1
            logger.warning("slimtools: LiteLLM request left as it is: %s", exc)
            return None
        if cleared is None:
            return None
        sent = cleared[endpoint.field]
        self._sent[id(sent)] = sent
        while len(self._sent) > _REMEMBERED:
            self._sent.popitem(last=False)
        return cleared

    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        """The proxy's hook: the request as received, returned with its history cleared."""
        return self.clear(data, call_type) or data

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        """The SDK's (and Router's) hook, just before the request goes to the deployment."""
        return self.clear(kwargs, call_type)

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        """Add the usage the provider billed to the conversation's figures."""
        try:
            messages = kwargs.get("messages") or kwargs.get("input")
            usage: Any = getattr(response_obj, "usage", None)
            if usage is None or not isinstance(messages, list) or not messages:
                return
            found = usage_of(usage.model_dump() if hasattr(usage, "model_dump") else usage)
            endpoint = endpoint_for(kwargs.get("call_type")) or _BY_FORMAT[OPENAI_CHAT]
            name = conversation_name(messages, endpoint.format)
            if name in self.stats.conversations:
                self.stats.conversations[name].billed.add(found)
        except Exception:  # a logging callback must never fail the call
            logger.debug("slimtools: could not read a LiteLLM response's usage", exc_info=True)


clearing = SlimtoolsClearing()
"""The instance the proxy's ``callbacks:`` line names (default policy)."""
