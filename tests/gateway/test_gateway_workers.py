"""Retained state bounded in bytes, conversations told apart beyond their first message,
and names that do not give a prompt away."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy
from slimtools.gateway import ConversationCache, GatewayStats, conversation_name, rewrite
from slimtools.gateway._state import FOOTPRINT
from slimtools.gateway._wire import ENDPOINTS
from tests._profile import examples
from tests.gateway.gateway_upstream import worker_history

POLICY = ClearingPolicy(cache=None, keep_turns=1)
MESSAGES = ENDPOINTS[0]
SYSTEM = worker_history(0, 0)[0]


def body(history: list[dict[str, Any]]) -> bytes:
    """A Messages request body for ``history``."""
    return orjson.dumps({"model": "m", "max_tokens": 8, "messages": history})


def run_workers(workers: int, *, shared: bool) -> dict[str, Any]:
    """Interleave ``workers`` conversations of 8 rounds each; the stats."""
    cache, stats = ConversationCache(POLICY), GatewayStats(None)
    for rounds in range(1, 9):
        for worker in range(workers):
            history = worker_history(worker, rounds, shared=shared)
            rewrite(body(history), MESSAGES, cache, stats)
    return stats.as_dict()


@pytest.mark.parametrize("workers", [12, 100])
def test_workers_sharing_a_first_message_cost_what_distinct_ones_cost(workers: int) -> None:
    """Interleaved workers with one system prompt replay no more than workers with their
    own, and each has its own stats row."""
    shared, distinct = run_workers(workers, shared=True), run_workers(workers, shared=False)
    assert len(shared["conversations"]) == workers
    assert [r["requests"] for r in shared["conversations"]] == [8] * workers
    assert shared["total"]["replayed_calls"] == distinct["total"]["replayed_calls"]
    assert shared["total"]["cleared"] == distinct["total"]["cleared"] > 0


def test_a_worker_seen_again_keeps_its_name() -> None:
    """The same conversation, request after request, is one stats row with one name."""
    cache = ConversationCache(POLICY)
    names = {cache.clear(worker_history(1, n), "anthropic").conversation.id for n in range(5)}
    assert len(names) == 1


def test_state_is_bounded_in_bytes() -> None:
    """Past ``max_bytes``, the least recently used conversations go, down to the bound."""
    one = len(orjson.dumps(worker_history(0, 4)[1:])) * FOOTPRINT
    cache = ConversationCache(POLICY, max_bytes=3 * one)
    for worker in range(10):
        for rounds in range(5):
            cache.clear(worker_history(worker, rounds), "anthropic")
    assert cache.size <= 3 * one + FOOTPRINT * len(orjson.dumps(SYSTEM)) * 3
    assert 2 <= len(cache) <= 3


def test_the_least_recently_used_conversation_goes_first() -> None:
    """A conversation used again stays; the one left alone longest is evicted, and costs
    one cold replay (sending the same bytes) when it comes back."""
    one = len(orjson.dumps(worker_history(0, 4))) * FOOTPRINT
    cache = ConversationCache(POLICY, max_bytes=2 * one + one // 2)
    sent = {w: cache.clear(worker_history(w, 4), "anthropic").messages for w in (0, 1)}
    cache.clear(worker_history(0, 4), "anthropic")  # 0 is now the most recent
    cache.clear(worker_history(2, 4), "anthropic")  # evicts 1
    assert cache.clear(worker_history(0, 5), "anthropic").replayed == 0
    back = cache.clear(worker_history(1, 4), "anthropic")
    assert back.replayed > 0
    assert orjson.dumps(back.messages) == orjson.dumps(sent[1])


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), max_size=40), st.integers(1, 20))
def test_the_byte_bound_holds_whatever_the_order(
    requests: list[tuple[int, int]], kilobytes: int
) -> None:
    """After every request the state is within its bound, or holds only that request's
    conversation (one larger than the bound is kept: it is the one in use)."""
    cache = ConversationCache(POLICY, max_bytes=kilobytes * 1024)
    for worker, rounds in requests:
        cache.clear(worker_history(worker, rounds), "anthropic")
        assert cache.size <= cache.max_bytes or len(cache) == 1


def test_names_are_salted() -> None:
    """A name in the stats is not the plain digest of the first message: guessing another
    user's prompt and hashing it does not find their conversation."""
    plain = hashlib.blake2b(orjson.dumps(SYSTEM, option=orjson.OPT_SORT_KEYS), digest_size=16)
    assert conversation_name([SYSTEM], "anthropic") != plain.hexdigest()[:16]
    cache = ConversationCache(POLICY)
    name = cache.clear(worker_history(0, 1), "anthropic").conversation.id
    assert not name.startswith(plain.hexdigest()[:12])
