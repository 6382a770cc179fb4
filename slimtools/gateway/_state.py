"""Per-conversation clearing state, found again by the history's content.

The upstream request is a function of the history and the policy only: the
:class:`~slimtools.clearing.Clearer` is called at every model call the history records
(each :func:`~slimtools.ledger.round_starts` position) and at the request's end, exactly
as an agent loop clearing before each call would have. A gateway that saw the earlier
rounds and one that starts cold therefore send the same bytes. The state after a request
is kept under the digest of the normalized history it read, so the next round (the same
history grown) finds it and reads only the new messages; a history that does not extend a
known one (an edited or branched conversation, another instance served the rounds between)
is replayed from its start.

The rejected simpler designs: a conversation id header (agents do not send one) and one
clearer per conversation fed whatever arrives (its decisions would then depend on which
requests this instance happened to see, and two instances would disagree).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from slimtools.clearing import Clearer, ClearingPolicy, ClearingReport
from slimtools.clearing.formats.base import starts_turn
from slimtools.clearing.formats.view import get_codec
from slimtools.gateway._wire import merge_back, normalize

_EMPTY = b"\x00" * 16


def digest(message: Any) -> bytes:
    """A 16-byte digest of one normalized message (keys sorted, so field order is moot)."""
    return hashlib.blake2b(
        orjson.dumps(message, option=orjson.OPT_SORT_KEYS), digest_size=16
    ).digest()


def conversation_name(history: Sequence[dict[str, Any]], format: str) -> str:
    """A conversation's name in the stats: its first normalized message's digest, in hex."""
    return digest(normalize(history[0], format)).hex()[:16] if history else "empty"


def chain(previous: bytes, message_digest: bytes) -> bytes:
    """The digest of a history prefix from the previous prefix's and the next message's."""
    return hashlib.blake2b(previous + message_digest, digest_size=16).digest()


@dataclass
class Conversation:
    """One conversation's clearer and what it has read and written.

    Attributes:
        id: a stable name for the stats (the digest of its first message, hex).
        clearer: the clearer, called at every model call of the history so far.
        seen: the normalized messages the clearer read, in order.
        work: the clearer's own list (``clear_in_place``): ``seen`` with clears applied.
        saved: tokens saved so far (every call's ``cleared_input_tokens``).
        cleared_ids: call ids of every result cleared so far.
        last: the report of the last call (the request's own).
    """

    id: str
    clearer: Clearer
    seen: list[Any] = field(default_factory=list)
    work: list[Any] = field(default_factory=list)
    saved: int = 0
    cleared_ids: list[str] = field(default_factory=list)
    last: ClearingReport = field(default_factory=ClearingReport)

    def call(self, messages: Sequence[Any], end: int) -> ClearingReport:
        """Read ``messages[len(seen):end]`` and clear as before a model call at ``end``."""
        start = len(self.seen)
        self.seen.extend(messages[start:end])
        self.work.extend(messages[start:end])
        report = self.clearer.clear_in_place(self.work)
        self.saved += report.cleared_input_tokens
        self.cleared_ids.extend(report.cleared_call_ids)
        self.last = report
        return report


@dataclass(frozen=True, slots=True)
class Cleared:
    """A request's history as sent upstream, and what the clearing did.

    Attributes:
        messages: the history to send (the agent's own messages where nothing changed).
        changed: whether any message differs from the agent's.
        conversation: the conversation's state after this request.
        report: this request's own clearing call.
        replayed: model calls replayed from the history because no state extended it.
        new_messages: messages read for this request.
    """

    messages: list[Any]
    changed: bool
    conversation: Conversation
    report: ClearingReport
    replayed: int
    new_messages: int

    @property
    def agent_tokens(self) -> int:
        """The prompt's tokens as the agent sent it (the clearer's count)."""
        return self.report.tokens_after + self.conversation.saved

    @property
    def upstream_tokens(self) -> int:
        """The prompt's tokens as sent upstream."""
        return self.report.tokens_after


class ConversationCache:
    """Conversations by the digest of the history they have read; least recent goes first.

    Args:
        policy: the clearing policy of every conversation.
        max_conversations: how many to keep (each holds about one copy of its history).
    """

    def __init__(self, policy: ClearingPolicy, *, max_conversations: int = 1000) -> None:
        if max_conversations < 1:
            raise ValueError(f"max_conversations must be >= 1, got {max_conversations}")
        self.policy = policy
        self.max_conversations = max_conversations
        self._by_prefix: OrderedDict[bytes, Conversation] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_prefix)

    def clear(
        self, history: Sequence[dict[str, Any]], format: str, *, keep: bool = True
    ) -> Cleared:
        """The history to send upstream for ``history`` (the agent's, untouched).

        ``keep=False`` computes without recording the new state (``count_tokens``).
        """
        normalized = [normalize(m, format) for m in history]
        if not normalized:  # nothing to clear, nothing worth remembering
            empty = self._fresh(normalized, format)
            return Cleared([], False, empty, ClearingReport(), 0, 0)
        prefixes = _prefix_digests(normalized)
        found, length, key = self._find(prefixes, normalized, format)
        if found is not None and length == len(normalized):
            messages, changed = _outgoing(history, found, format)
            return Cleared(messages, changed, found, found.last, 0, 0)
        if found is not None and keep:
            del self._by_prefix[key]
        conversation = found if found is not None and keep else None
        replayed = 0
        if conversation is None:
            conversation = self._fresh(normalized, format)
        starts = _starts_after(normalized, format, len(conversation.seen))
        for start in starts:
            conversation.call(normalized, start)
            replayed += 1
        report = conversation.call(normalized, len(normalized))
        if keep:
            self._remember(prefixes[-1], conversation)
        messages, changed = _outgoing(history, conversation, format)
        return Cleared(messages, changed, conversation, report, replayed, len(normalized) - length)

    def _find(
        self, prefixes: list[bytes], normalized: list[Any], format: str
    ) -> tuple[Conversation | None, int, bytes]:
        """The state of the longest known prefix whose end is a model call of this history."""
        codec = get_codec(format)
        for length in range(len(prefixes), 0, -1):
            found = self._by_prefix.get(prefixes[length - 1])
            if found is None:
                continue
            if length < len(normalized) and not _call_at(codec, normalized, length):
                # The state was made for a request this history does not record as a model
                # call (an interrupted one): reusing it would make the output depend on it.
                return None, 0, b""
            self._by_prefix.move_to_end(prefixes[length - 1])
            return found, length, prefixes[length - 1]
        return None, 0, b""

    def _fresh(self, normalized: list[Any], format: str) -> Conversation:
        name = digest(normalized[0]).hex()[:16] if normalized else "empty"
        clearer = Clearer(self.policy, format=format)
        return Conversation(name, clearer)

    def _remember(self, key: bytes, conversation: Conversation) -> None:
        self._by_prefix[key] = conversation
        self._by_prefix.move_to_end(key)
        while len(self._by_prefix) > self.max_conversations:
            self._by_prefix.popitem(last=False)


def _prefix_digests(normalized: Sequence[Any]) -> list[bytes]:
    out: list[bytes] = []
    previous = _EMPTY
    for message in normalized:
        previous = chain(previous, digest(message))
        out.append(previous)
    return out


def _call_at(codec: Any, normalized: Sequence[Any], position: int) -> bool:
    """Whether a model call's output starts at ``position`` of the history."""
    try:
        model = codec.decode(normalized[position])[0]
        previous = codec.decode(normalized[position - 1])[0] if position else False
    except Exception:
        return False
    return starts_turn(codec.run_turns, bool(model), bool(previous))


def _starts_after(normalized: Sequence[Any], format: str, done: int) -> list[int]:
    """The model calls the history records after its first ``done`` messages (the turn
    rule of :func:`~slimtools.ledger.round_starts`, applied to the new messages only)."""
    codec = get_codec(format)
    return [p for p in range(done + 1, len(normalized)) if _call_at(codec, normalized, p)]


def _outgoing(
    history: Sequence[dict[str, Any]], conversation: Conversation, format: str
) -> tuple[list[Any], bool]:
    """The agent's messages, with the clearer's rewrites merged in where it made any."""
    seen, work = conversation.seen, conversation.work
    out: list[Any] = list(history)
    changed = False
    for i, message in enumerate(work):
        if message is not seen[i]:
            out[i] = merge_back(history[i], seen[i], message, format)
            changed = True
    return out, changed
