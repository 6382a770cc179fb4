"""A request body in, the body sent upstream out: what clearing may change, and what not."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.clearing.pricing import pricing_of
from slimtools.gateway._rewrite import rewrite
from slimtools.gateway._state import ConversationCache
from slimtools.gateway._wire import endpoint_of
from slimtools.gateway.stats import GatewayStats

MESSAGES = endpoint_of("POST", "/v1/messages")
assert MESSAGES is not None

# Integers on both sides of what orjson holds exactly (-2**63 .. 2**64 - 1), and floats.
numbers = st.one_of(
    st.integers(-(2**80), 2**80),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
)


def history(rounds: int, values: list[Any]) -> list[dict[str, Any]]:
    """An Anthropic run of ``rounds`` tool calls whose arguments carry ``values``."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "Read the logs."}]
    for n in range(rounds):
        args = {"n": n, "ref": values[n % len(values)]}
        out.append(
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{n}", "name": "read_log", "input": args}]}
        )  # fmt: skip
        out.append(
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x" * 4000}]}
        )  # fmt: skip
    return out


@given(values=st.lists(numbers, min_size=1, max_size=6), extra=numbers)
def test_clearing_changes_the_results_and_not_one_number(values: list[Any], extra: Any) -> None:
    """Every number of a cleared body reaches the upstream as the agent wrote it, integers
    past 64 bits included, wherever they stand."""
    policy = ClearingPolicy(keep_turns=1, cache=None)
    cache, stats = ConversationCache(policy), GatewayStats(pricing_of(policy.cache))
    messages = history(8, values)
    body = {"model": "m", "max_tokens": 8, "messages": messages, "metadata": {"n": extra}}
    sent = json.loads(rewrite(json.dumps(body).encode(), MESSAGES, cache, stats).body)
    assert any(
        is_placeholder(b["content"])
        for m in sent["messages"] if isinstance(m["content"], list)
        for b in m["content"] if b["type"] == "tool_result"
    )  # fmt: skip
    assert sent["metadata"] == {"n": extra}
    calls = [m["content"][0]["input"] for m in sent["messages"][1::2]]
    assert calls == [m["content"][0]["input"] for m in messages[1::2]]


def test_an_unchanged_body_goes_out_as_the_bytes_that_came() -> None:
    """Nothing to clear: the very bytes go upstream, spacing and number spelling kept."""
    policy = ClearingPolicy()
    cache, stats = ConversationCache(policy), GatewayStats(pricing_of(policy.cache))
    raw = b'{"model": "m", "max_tokens": 8, "metadata": {"n": 1.50e3},\n "messages": []}'
    assert rewrite(raw, MESSAGES, cache, stats).body == raw
