"""Clearing for frameworks whose histories no codec reads: through the Anthropic codec.

Google ADK (``types.Content`` with function call and response parts) and Strands Agents
(Bedrock Converse ``toolUse``/``toolResult`` blocks) hold the same thing as Anthropic
Messages: assistant messages of calls, user messages of results, paired by id, one block per
part. Their adapters convert each message to an Anthropic message block for block (the
pairing kept as the framework states it), :class:`Conversations` clears that with one
incremental :class:`~slimtools.clearing.Clearer` per conversation, and :func:`edits` says,
block by block, which results became placeholders and which arguments were shortened, for
the adapter to write back in its own form. A codec per framework was the rejected
alternative: two more formats for the engine, the view and the ledger to know, where a
conversion of a few lines each is enough.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.clearing.audit import Audit, check_audit

__all__ = ["Conversations", "Edit", "edits"]

logger = logging.getLogger("slimtools.adapters")


class Edit(NamedTuple):
    """One block the clearer rewrote: a result's new ``text``, or a call's new ``args``."""

    message: int
    block: int
    text: str | None = None
    args: dict[str, Any] | None = None


class Conversations:
    """One :class:`Clearer` per conversation, least recently used dropped beyond a bound.

    Args:
        policy: what to clear and when (defaults: turn-end clearing, 2 turns kept).
        audit: a sink receiving each original before it is replaced.
        max_conversations: clearers kept (a session, an agent); the oldest go first.
        format: the history format of the messages (the adapters' converted ones are
            Anthropic's; LangGraph's nodes pass LangChain messages).
    """

    def __init__(
        self,
        policy: ClearingPolicy | None = None,
        *,
        audit: Audit | None = None,
        max_conversations: int = 1024,
        format: str = "anthropic",
    ) -> None:
        if max_conversations < 1:
            raise ValueError("max_conversations must be at least 1")
        if policy is not None and not isinstance(policy, ClearingPolicy):
            raise TypeError(f"policy must be a ClearingPolicy, got {type(policy).__name__}")
        if audit is not None:  # refused now, not as a warning on every model call
            check_audit(audit, "write")
        self.policy = policy if policy is not None else ClearingPolicy()
        self.audit = audit
        self.max_conversations = max_conversations
        self.format = format
        self._clearers: OrderedDict[str, tuple[Clearer, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self, key: str, messages: Sequence[Any]) -> list[Any] | None:
        """Conversation ``key``'s ``messages`` (in :attr:`format`) cleared; None on any
        failure (logged), so clearing can never stop the agent loop; that conversation's
        clearer starts afresh next time."""
        try:
            clearer, lock = self._for(key)
            with lock:
                return clearer.clear(messages)
        except Exception:
            logger.warning("clearing failed; the model gets the history as is", exc_info=True)
            with self._lock:
                self._clearers.pop(key, None)
            return None

    def edits(self, key: str, messages: Sequence[Mapping[str, Any]]) -> list[Edit]:
        """What clearing changes in conversation ``key``'s Anthropic-form ``messages``
        (nothing when clearing failed)."""
        cleared = self.clear(key, messages)
        return [] if cleared is None else list(edits(messages, cleared))

    def _for(self, key: str) -> tuple[Clearer, threading.Lock]:
        with self._lock:
            entry = self._clearers.get(key)
            if entry is None:
                clearer = Clearer(self.policy, format=self.format, audit=self.audit)
                entry = self._clearers[key] = (clearer, threading.Lock())
                while len(self._clearers) > self.max_conversations:
                    self._clearers.popitem(last=False)
            else:
                self._clearers.move_to_end(key)
            return entry


def edits(before: Sequence[Mapping[str, Any]], after: Sequence[Any]) -> Iterator[Edit]:
    """The blocks of ``after`` (a cleared history) that differ from ``before``'s."""
    for i, (old, new) in enumerate(zip(before, after, strict=False)):
        if new is old or new == old:
            continue
        for j, (a, b) in enumerate(zip(old["content"], new["content"], strict=False)):
            if a == b:
                continue
            if b.get("type") == "tool_result":
                yield Edit(i, j, text=_text(b.get("content")))
            elif b.get("type") == "tool_use":
                yield Edit(i, j, args=dict(b.get("input") or {}))


def _text(content: Any) -> str:
    """A placeholder's text: a string, or the text of its one block."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if isinstance(b, Mapping))
