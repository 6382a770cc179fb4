"""The LiteLLM hook with the real ``litellm`` package against the scripted upstream."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from slimtools.clearing import is_placeholder
from tests.gateway.gateway_upstream import FakeUpstream, Script, create_upstream, serve
from tests.gateway.test_gateway_app import (
    OPENAI_TOOLS,
    POLICY,
    assert_cleared_from_round_after,
    log_text,
)

litellm = pytest.importorskip("litellm")

from slimtools.integrations.litellm import SlimtoolsClearing  # noqa: E402


@pytest.fixture
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    """The scripted upstream and its base URL."""
    fake = FakeUpstream(Script(rounds=5))
    with serve(create_upstream(fake)) as url:
        yield fake, url


@pytest.fixture
def hook() -> Iterator[SlimtoolsClearing]:
    """The hook registered as LiteLLM's only callback for the test."""
    found = SlimtoolsClearing(POLICY)
    saved = litellm.callbacks
    litellm.callbacks = [found]
    yield found
    litellm.callbacks = saved


async def litellm_run(url: str) -> list[dict[str, Any]]:
    """The scripted tool loop through ``litellm.acompletion``; returns the agent's history."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read the logs."}]
    for _ in range(10):
        answer = await litellm.acompletion(
            model="openai/m", api_base=url + "/v1", api_key="sk-x", messages=history,
            tools=OPENAI_TOOLS,
        )  # fmt: skip
        message = answer.choices[0].message
        calls = [c.model_dump() for c in message.tool_calls or []]
        if not calls:
            history.append({"role": "assistant", "content": message.content})
            return history
        history.append({"role": "assistant", "content": None, "tool_calls": calls})
        for call in calls:
            name = orjson.loads(call["function"]["arguments"])["name"]
            history.append({"role": "tool", "tool_call_id": call["id"], "content": log_text(name)})
    raise AssertionError("the scripted run did not end")


async def test_litellm_requests_go_out_cleared(
    upstream: tuple[FakeUpstream, str], hook: SlimtoolsClearing
) -> None:
    """Through ``litellm.acompletion`` with the hook, stale results leave as placeholders."""
    fake, url = upstream
    history = await litellm_run(url)
    assert_cleared_from_round_after(fake.model_requests("/v1/chat/completions"))
    kept = [m["content"] for m in history if m["role"] == "tool"]
    assert len(kept) == 5
    assert not any(is_placeholder(t) for t in kept)


async def test_litellm_hook_counts_what_it_cleared(
    upstream: tuple[FakeUpstream, str], hook: SlimtoolsClearing
) -> None:
    """The hook's figures hold the requests and the clears it made."""
    await litellm_run(upstream[1])
    total = hook.stats.as_dict()["total"]
    assert total["requests"] == 6
    assert total["cleared"] == 4


async def test_proxy_hook_clears_the_received_request(hook: SlimtoolsClearing) -> None:
    """The proxy's ``async_pre_call_hook`` returns the request with its history cleared,
    and the deployment hook after it leaves that history alone."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(1, 5):
        call = {"id": f"c{n}", "type": "function",
                "function": {"name": "read_log", "arguments": '{"name": "x"}'}}  # fmt: skip
        history += [{"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": f"c{n}",
                     "content": log_text("x")}]  # fmt: skip
    data = {"model": "m", "messages": history}
    out = await hook.async_pre_call_hook(None, None, data, "acompletion")
    assert sum(is_placeholder(m["content"]) for m in out["messages"] if m["role"] == "tool") == 3
    assert await hook.async_pre_call_deployment_hook(out, "acompletion") is None
    assert data["messages"] is history


async def test_hook_leaves_other_call_types_alone(hook: SlimtoolsClearing) -> None:
    """An embedding request (no history) passes the hook unchanged."""
    data = {"model": "m", "input": ["text"]}
    assert await hook.async_pre_call_hook(None, None, data, "aembedding") is data
