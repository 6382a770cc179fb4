"""Cache stability: what goes upstream is a function of the history and the policy."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given, settings

from slimtools.clearing import ClearingPolicy, is_placeholder
from slimtools.gateway import ConversationCache, create_app
from slimtools.gateway._wire import normalize
from slimtools.ledger import round_starts
from slimtools.transcripts import load_file
from tests._profile import examples
from tests._shared import shared_data
from tests.clearing.strategies_clearing import policies, render, turns
from tests.gateway.gateway_upstream import FakeUpstream, create_upstream, serve

WIRE_FORMATS = ("anthropic", "openai_chat", "openai_responses")
EAGER = ClearingPolicy(
    cache=None,
    keep_turns=1,
    retention={"search": 1, "read": 1, "command": 1, "write": 1, "input": None},
)
"""Turn-end clearing one turn after each result: the short recorded sessions clear early."""


def requests_of(history: list[Any], fmt: str) -> Iterator[list[Any]]:
    """The history of each model call the run made: up to each round start, then all."""
    for start in [p for p in round_starts(history, fmt) if p > 0] + [len(history)]:
        yield history[:start]


def as_claude_code_sends(messages: list[Any]) -> list[Any]:
    """The messages with Claude Code's moving breakpoint: the last message's last block
    carries ``cache_control`` (a string message is folded into one text block for it)."""
    out = copy.deepcopy(messages)
    if not out:
        return out
    last = out[-1]
    if isinstance(last["content"], str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    if last["content"]:
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return out


def unmarked(messages: list[Any]) -> list[Any]:
    """The messages without the agent's breakpoints (what stays equal across rounds)."""
    return [normalize(m, "anthropic") for m in messages]


def first_difference(a: list[Any], b: list[Any]) -> int:
    """The index of the first message that differs between two requests."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def placeholders(message: Any) -> int:
    """How many placeholders an Anthropic message's tool results carry."""
    blocks = message["content"] if isinstance(message["content"], list) else []
    return sum(
        b.get("type") == "tool_result" and isinstance(b["content"], str)
        and is_placeholder(b["content"])
        for b in blocks
    )  # fmt: skip


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
@settings(max_examples=examples(40), deadline=None)
@given(script=turns(), policy=policies)
def test_a_cold_cache_sends_what_a_warm_one_sends(fmt: str, script: Any, policy: Any) -> None:
    """Round by round, a cache that saw every round and a fresh one send the same bytes."""
    history = render(fmt, script)
    warm = ConversationCache(policy)
    for request in requests_of(history, fmt):
        sent = warm.clear(request, fmt).messages
        assert orjson.dumps(sent) == orjson.dumps(
            ConversationCache(policy).clear(request, fmt).messages
        )


@settings(max_examples=examples(40), deadline=None)
@given(script=turns(), policy=policies)
def test_moving_breakpoints_change_nothing_but_the_breakpoints(script: Any, policy: Any) -> None:
    """With Claude Code's moving breakpoint, what goes upstream is what goes without it
    (breakpoints aside), warm or cold, and the agent's breakpoint stays where it put it."""
    history = render("anthropic", script)
    warm, bare = ConversationCache(policy), ConversationCache(policy)
    for request in requests_of(history, "anthropic"):
        marked = as_claude_code_sends(request)
        sent = warm.clear(marked, "anthropic").messages
        cold = ConversationCache(policy).clear(marked, "anthropic").messages
        assert orjson.dumps(sent) == orjson.dumps(cold)
        assert unmarked(sent) == unmarked(bare.clear(request, "anthropic").messages)
        if marked and marked[-1]["content"]:
            assert sent[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
@settings(max_examples=examples(40), deadline=None)
@given(script=turns(), policy=policies)
def test_each_request_extends_the_last_up_to_a_new_clear(
    fmt: str, script: Any, policy: Any
) -> None:
    """Round N starts with round N-1's messages up to the first message newly cleared."""
    history = render(fmt, script)
    cache = ConversationCache(policy)
    before: list[Any] = []
    for request in requests_of(history, fmt):
        cleared = cache.clear(request, fmt)
        sent = cleared.messages
        i = first_difference(before, sent)
        if i < len(before):
            assert cleared.report.first_changed is not None
            assert cleared.report.first_changed <= i
        before = sent


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
@settings(max_examples=examples(30), deadline=None)
@given(script=turns(), policy=policies)
def test_the_agents_history_is_never_touched(fmt: str, script: Any, policy: Any) -> None:
    """Clearing for upstream leaves the request's own messages as they were."""
    history = render(fmt, script)
    cache = ConversationCache(policy)
    for request in requests_of(history, fmt):
        kept = copy.deepcopy(request)
        cache.clear(request, fmt)
        assert request == kept


def test_moving_breakpoints_do_not_count_as_changes() -> None:
    """Claude Code's breakpoint on the last block moves every round; the state still holds."""
    history = render("anthropic", [*script_of_reads(6)])
    cache = ConversationCache(ClearingPolicy(cache=None, keep_turns=1))
    replays = [cache.clear(as_claude_code_sends(r), "anthropic").replayed for r in
               requests_of(history, "anthropic")]  # fmt: skip
    assert replays == [0] * len(replays)
    assert len(cache) == 1


def test_a_cleared_block_keeps_the_agents_breakpoint() -> None:
    """A breakpoint on a result that goes upstream cleared stays on its placeholder."""
    history = render("anthropic", [*script_of_reads(6)])
    request = history[: round_starts(history, "anthropic")[-1]]
    marked = copy.deepcopy(request)
    for message in marked:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                block["cache_control"] = {"type": "ephemeral"}
    sent = ConversationCache(ClearingPolicy(cache=None, keep_turns=1)).clear(marked, "anthropic")
    blocks = [b for m in sent.messages if isinstance(m["content"], list) for b in m["content"]
              if b.get("type") == "tool_result"]  # fmt: skip
    assert any(is_placeholder(b["content"]) for b in blocks)
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in blocks)


def test_a_cleared_result_keeps_the_last_breakpoint_of_its_content() -> None:
    """Of several breakpoints in a cleared result's content, the one sent upstream is the
    last, as ``clear_stale_results`` keeps (one rule for both surfaces)."""
    history = render("anthropic", [*script_of_reads(6)])
    request = copy.deepcopy(history[: round_starts(history, "anthropic")[-1]])
    first, last = {"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}
    for message in request:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                head = {"type": "text", "text": block["content"], "cache_control": first}
                block["content"] = [head, {"type": "text", "text": "end", "cache_control": last}]
    sent = ConversationCache(ClearingPolicy(cache=None, keep_turns=1)).clear(request, "anthropic")
    cleared = [b for m in sent.messages if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result" and is_placeholder(str(b["content"]))]  # fmt: skip
    assert cleared
    assert all(b["cache_control"] == last for b in cleared)


def script_of_reads(n: int) -> Iterator[Any]:
    """``n`` turns, each reading one large file."""
    from tests.clearing.strategies_clearing import script

    yield from script(*(["read_file"] * n), size=400)


def claude_code_requests(path: str, limit: int = 60) -> list[bytes]:
    """The request bodies Claude Code would have sent for a recorded session (first runs)."""
    (transcript,) = load_file(path)[:1]
    messages = transcript.messages
    bodies = []
    for request in list(requests_of(messages, "anthropic"))[:limit]:
        body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": True,
                "system": [{"type": "text", "text": "You are Claude Code."}],
                "messages": as_claude_code_sends(request),
                "context_management": {"edits": [{"type": "clear_thinking_20251015",
                                                   "keep": "all"}]}}  # fmt: skip
        bodies.append(orjson.dumps(body))
    return bodies


@pytest.mark.shared
@pytest.mark.parametrize("name", ["tool_heavy.jsonl", "subagent.jsonl"])
def test_two_instances_alternately_send_what_one_sends(name: str) -> None:
    """A recorded Claude Code session's requests, sent alternately to two gateways, reach
    the upstream as the very bytes one gateway sends."""
    path = shared_data() / "transcripts" / "claude_code" / name
    bodies = claude_code_requests(str(path))
    policy = EAGER
    one, two = FakeUpstream(), FakeUpstream()
    with serve(create_upstream(one)) as up_one, serve(create_upstream(two)) as up_two, \
            serve(create_app(up_one, policy)) as single, serve(create_app(up_two, policy)) as a, \
            serve(create_app(up_two, policy)) as b:  # fmt: skip
        for i, body in enumerate(bodies):
            httpx.post(single + "/v1/messages", content=body, timeout=30)
            httpx.post((a if i % 2 else b) + "/v1/messages", content=body, timeout=30)
    alone = [r.raw for r in one.model_requests("/v1/messages")]
    alternating = [r.raw for r in two.model_requests("/v1/messages")]
    assert alone == alternating
    assert any(b"[cleared" in raw for raw in alone)


@pytest.mark.shared
def test_a_recorded_session_keeps_its_prefix_between_rounds() -> None:
    """Each request of a recorded session extends the previous one (breakpoints aside) up
    to the first message that holds a newly cleared result."""
    path = shared_data() / "transcripts" / "claude_code" / "subagent.jsonl"
    cache = ConversationCache(EAGER)
    before: list[Any] = []
    breaks = 0
    for raw in claude_code_requests(str(path)):
        sent = unmarked(cache.clear(orjson.loads(raw)["messages"], "anthropic").messages)
        i = first_difference(before, sent)
        if i < len(before):
            breaks += 1
            assert placeholders(sent[i]) > placeholders(before[i])
        before = sent
    assert breaks >= 1


def test_a_cleared_search_result_gives_its_real_size() -> None:
    """An Anthropic ``search_result`` block is text: its placeholder counts its characters
    and shows its head (it said "returned 0 chars" for 8.4 KB of text)."""
    text = "result text " * 700
    inner = [{"type": "text", "text": text}]
    block = {"type": "search_result", "source": "https://example.com/doc", "title": "Doc",
             "content": inner, "citations": {"enabled": True}}  # fmt: skip
    history: list[Any] = [{"role": "user", "content": "go"}]
    for n in range(3):
        history.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{n}", "name": "search_docs", "input": {"q": n}}
                ],
            }
        )
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{n}", "content": [block]}]})  # fmt: skip
    policy = ClearingPolicy(cache=None, keep_turns=1, retention={"search_docs": 1})
    placeholder = ConversationCache(policy).clear(history, "anthropic").messages[2]
    sent = placeholder["content"][0]["content"]
    assert is_placeholder(sent)
    assert f"returned {len(text) + len('Doc https://example.com/doc') + 1:,} chars" in sent
    assert "Head: Doc https://example.com/doc result text" in sent
