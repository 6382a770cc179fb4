"""Opt-in provider cache diagnostics: the provider's own word on what clearing cost."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from slimtools.gateway import create_app
from tests.gateway.gateway_upstream import FakeUpstream, Script, create_upstream, serve
from tests.gateway.test_gateway_app import POLICY, anthropic_run, openai_responses_run

TOKEN = "t"


@pytest.fixture
def fake() -> FakeUpstream:
    """A fresh scripted upstream: five rounds of read_log calls."""
    return FakeUpstream(Script(rounds=5))


@contextlib.contextmanager
def gateway_with(fake: FakeUpstream, *, diagnostics: bool) -> Iterator[str]:
    """A gateway in front of ``fake``, asking for diagnostics or not."""
    with serve(create_upstream(fake)) as upstream:
        app = create_app(upstream, POLICY, stats_token=TOKEN, cache_diagnostics=diagnostics)
        with serve(app) as url:
            yield url


def row(url: str) -> dict[str, Any]:
    """The one conversation's stats row."""
    stats = httpx.get(url + "/slimtools/stats", headers={"authorization": f"Bearer {TOKEN}"})
    (found,) = stats.json()["conversations"]
    return found


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_requests_name_the_previous_message(fake: FakeUpstream, stream: bool) -> None:
    """Each request carries ``diagnostics.previous_message_id``: null first, then the id of
    the response before it."""
    with gateway_with(fake, diagnostics=True) as url:
        anthropic_run(url, stream=stream)
    sent = [r.body["diagnostics"]["previous_message_id"] for r in fake.received]
    assert sent[0] is None
    assert sent[1:] == [f"msg_{n}" for n in range(1, len(sent))]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_misses_are_reported_beside_the_model(fake: FakeUpstream, stream: bool) -> None:
    """The stats report the tokens the provider says missed the cache, those of requests
    that newly cleared apart, and the reasons, beside the modelled cost."""
    with gateway_with(fake, diagnostics=True) as url:
        anthropic_run(url, stream=stream)
        found = row(url)
    assert found["provider_missed_tokens"] == sum(fake.missed[1:]) > 0
    assert 0 < found["provider_missed_after_clearing"] <= found["provider_missed_tokens"]
    assert found["provider_miss_reasons"] == {
        "messages_changed": sum(m > 0 for m in fake.missed[1:])
    }
    assert found["provider_diagnosed"] == 6
    assert found["modelled_cost_without_clearing"] > 0


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_requests_name_the_previous_response(fake: FakeUpstream, stream: bool) -> None:
    """OpenAI Responses requests carry ``prompt_cache_options.comparison_response_id`` once
    a response is known, and the misses the provider reports are summed."""
    with gateway_with(fake, diagnostics=True) as url:
        openai_responses_run(url, stream=stream)
        found = row(url)
    sent = [r.body.get("prompt_cache_options") for r in fake.received]
    assert sent[0] is None
    assert [s["comparison_response_id"] for s in sent[1:]] == [
        f"resp_{n}" for n in range(1, len(sent))
    ]
    assert found["provider_missed_tokens"] == sum(fake.missed[1:]) > 0
    assert found["provider_diagnosed"] == 5


def test_without_the_flag_nothing_is_asked(fake: FakeUpstream) -> None:
    """Diagnostics are opt-in: without the flag no request carries the fields."""
    with gateway_with(fake, diagnostics=False) as url:
        anthropic_run(url, stream=False)
        found = row(url)
    assert not any("diagnostics" in r.body for r in fake.received)
    assert found["provider_diagnosed"] == 0
