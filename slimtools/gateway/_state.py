"""Per-conversation clearing state, found again by the history's content.

The upstream request is a function of the history and the policy only: the
:class:`~slimtools.clearing.Clearer` is called at every model call the history records
(each :func:`~slimtools.ledger.round_starts` position) and at the request's end, exactly
as an agent loop clearing before each call would have. A gateway that saw the earlier
rounds and one that starts cold therefore send the same bytes. The state after a request
is found again by the history's content (its first message's digest, then the messages it
read compared with the request's), so the next round (the same history grown) finds it and
reads only the new messages; a history that does not extend a
known one (an edited or branched conversation, another instance served the rounds between)
is replayed from its start.

Parallel workers of one agent often share their first message (the system prompt), so a
first message names a bucket of candidates, not a conversation: each candidate is checked
against the request (its last message read first, then the whole prefix) and any number
of them are kept, each with its own name in the stats. What is retained is bounded in
bytes (each conversation is charged :data:`FOOTPRINT` times the JSON size of the history
it read) and in count; the least recently used conversation goes first, and costs one
cold replay if it comes back.

Names are digests salted per process: the stats never let one user confirm a guess of
another's prompt by hashing it.

The rejected simpler designs: a conversation id header (agents do not send one) and one
clearer per conversation fed whatever arrives (its decisions would then depend on which
requests this instance happened to see, and two instances would disagree).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from slimtools._json import dumps
from slimtools._session import session
from slimtools.clearing import Clearer, ClearingPolicy, ClearingReport
from slimtools.clearing.formats.base import starts_turn
from slimtools.clearing.formats.view import get_codec
from slimtools.gateway._wire import merge_back, normalize

FOOTPRINT = 2
"""Bytes a conversation is charged per byte of its history's JSON: the parsed messages and
the clearer's copy (measured at 1.4x by ``bench_gateway``), with room to spare."""

MAX_BYTES = 256 * 1024 * 1024
"""The default bound on retained state (``--max-state-mb``)."""

_SALT = os.urandom(16)
"""Per process: a name in the stats cannot be matched against a guessed prompt's digest."""


def digest(message: Any) -> bytes:
    """A 16-byte digest of one normalized message (keys sorted, so field order is moot),
    salted per process."""
    try:
        text = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer past 64 bits, read exactly: the standard library writes it
        text = json.dumps(message, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.blake2b(text, digest_size=16, key=_SALT).digest()


def conversation_name(history: Sequence[dict[str, Any]], format: str) -> str:
    """The stats name of a request that is not cleared (its first message's salted digest,
    in hex); a cleared conversation's own name is :attr:`Conversation.id`."""
    return digest(normalize(history[0], format)).hex()[:16] if history else "empty"


@dataclass
class Conversation:
    """One conversation's clearer and what it has read and written.

    Attributes:
        id: its name in the stats (its first message's salted digest, a dash, and a serial
            number telling apart the conversations that share that first message).
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
    size: int = 0

    def call(self, messages: Sequence[Any], end: int) -> ClearingReport:
        """Read ``messages[len(seen):end]`` and clear as before a model call at ``end``."""
        start = len(self.seen)
        new = messages[start:end]
        self.seen.extend(new)
        self.work.extend(new)
        self.size += FOOTPRINT * sum(len(dumps(m)) for m in new)
        with session(f"gateway:{self.id}"):  # events name the conversation as the stats do
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
    """Conversations by the history they have read; the least recently used go first.

    Args:
        policy: the clearing policy of every conversation.
        max_conversations: how many to keep.
        max_bytes: how many bytes they may hold together, each charged :data:`FOOTPRINT`
            times its history's JSON size (the most recent one is kept whatever its size).
    """

    def __init__(
        self, policy: ClearingPolicy, *, max_conversations: int = 1000, max_bytes: int = MAX_BYTES
    ) -> None:
        if max_conversations < 1:
            raise ValueError(f"max_conversations must be >= 1, got {max_conversations}")
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be >= 1, got {max_bytes}")
        self.policy = policy
        self.max_conversations = max_conversations
        self.max_bytes = max_bytes
        # First message's digest -> length read -> last message's digest -> conversations.
        # Any number share a first message (parallel workers share a system prompt): a
        # request looks up, for each length a candidate has read, its own message at that
        # length, so it meets only the candidates that end as its prefix does, whatever
        # their number; those are then compared whole (a C-level list comparison, cheaper
        # than digesting the whole history again on every request).
        self._by_first: dict[bytes, dict[int, dict[bytes, list[Conversation]]]] = {}
        # Every conversation, least recently used first: where it is filed, and the size
        # it was charged.
        self._recent: OrderedDict[int, tuple[bytes, int, bytes, Conversation, int]] = OrderedDict()
        self._serial = itertools.count(1)
        self.size = 0

    def __len__(self) -> int:
        return len(self._recent)

    def clear(
        self, history: Sequence[dict[str, Any]], format: str, *, keep: bool = True
    ) -> Cleared:
        """The history to send upstream for ``history`` (the agent's, untouched).

        ``keep=False`` computes without recording the new state (``count_tokens``).
        """
        normalized = [normalize(m, format) for m in history]
        if not normalized:  # nothing to clear, nothing worth remembering
            empty = self._fresh(b"", format, "empty")
            return Cleared([], False, empty, ClearingReport(), 0, 0)
        first = digest(normalized[0])
        key = format.encode() + first
        found = self._find(key, normalized, format)
        length = len(found.seen) if found is not None else 0
        if found is not None and length == len(normalized):
            messages, changed = _outgoing(history, normalized, found, format)
            return Cleared(messages, changed, found, found.last, 0, 0)
        conversation = found if found is not None and keep else None
        if conversation is None:
            conversation = self._fresh(first, format, found.id if found is not None else "")
            length = 0
        replayed = 0
        for start in _starts_after(normalized, format, len(conversation.seen)):
            conversation.call(normalized, start)
            replayed += 1
        report = conversation.call(normalized, len(normalized))
        if keep:
            self._remember(key, conversation)
        messages, changed = _outgoing(history, normalized, conversation, format)
        return Cleared(messages, changed, conversation, report, replayed, len(normalized) - length)

    def _find(self, key: bytes, normalized: list[Any], format: str) -> Conversation | None:
        """The conversation that read the longest prefix of this history, provided that
        prefix ends where this history records a model call."""
        by_length = self._by_first.get(key)
        if not by_length:
            return None
        best: Conversation | None = None
        for length in sorted(by_length, reverse=True):
            if length > len(normalized):
                continue
            last = digest(normalized[length - 1])
            best = next(
                (c for c in by_length[length].get(last, ()) if c.seen == normalized[:length]),
                None,
            )
            if best is not None:
                break
        if best is None:
            return None
        self._recent.move_to_end(id(best))
        length = len(best.seen)
        if length < len(normalized) and not _call_at(get_codec(format), normalized, length):
            # The state was made for a request this history does not record as a model
            # call (an interrupted one): reusing it would make the output depend on it.
            return None
        return best

    def _fresh(self, first: bytes, format: str, name: str = "") -> Conversation:
        name = name or f"{first.hex()[:12]}-{next(self._serial)}"
        return Conversation(name, Clearer(self.policy, format=format))

    def _remember(self, key: bytes, conversation: Conversation) -> None:
        """File a conversation under what it has now read, with its new size; evict the
        least recently used past a bound."""
        held = self._recent.pop(id(conversation), None)
        if held is not None:
            self._unfile(*held[:4])
            self.size -= held[4]
        length, last = len(conversation.seen), digest(conversation.seen[-1])
        by_length = self._by_first.setdefault(key, {})
        by_length.setdefault(length, {}).setdefault(last, []).append(conversation)
        self._recent[id(conversation)] = (key, length, last, conversation, conversation.size)
        self.size += conversation.size
        while len(self._recent) > 1 and (
            self.size > self.max_bytes or len(self._recent) > self.max_conversations
        ):
            _, (old_key, old_length, old_last, old, charged) = self._recent.popitem(last=False)
            self._unfile(old_key, old_length, old_last, old)
            self.size -= charged

    def _unfile(self, key: bytes, length: int, last: bytes, conversation: Conversation) -> None:
        by_length = self._by_first[key]
        by_last = by_length[length]
        kept = [c for c in by_last[last] if c is not conversation]
        if kept:
            by_last[last] = kept
            return
        del by_last[last]
        if not by_last:
            del by_length[length]
            if not by_length:
                del self._by_first[key]


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
    history: Sequence[dict[str, Any]],
    normalized: Sequence[Any],
    conversation: Conversation,
    format: str,
) -> tuple[list[Any], bool]:
    """The agent's messages, with the clearer's rewrites merged in where it made any (a
    message the agent sent as the clearer read it takes the rewrite as it is)."""
    seen, work = conversation.seen, conversation.work
    out: list[Any] = list(history)
    changed = False
    for i, message in enumerate(work):
        if message is not seen[i]:
            plain = normalized[i] is history[i]
            out[i] = message if plain else merge_back(history[i], seen[i], message, format)
            changed = True
    return out, changed
