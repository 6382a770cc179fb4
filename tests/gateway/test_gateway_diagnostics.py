"""Opt-in provider cache diagnostics: the provider's own word on what clearing cost."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools.gateway import create_app
from slimtools.gateway.stats import ConversationStats, Diagnosis
from slimtools.instrumentation import ClearingPass, ProviderCacheMiss, observe
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


def misses_heard(
    run: Any, fake: FakeUpstream, *, diagnostics: bool = True
) -> tuple[list[Any], dict[str, Any]]:
    """The ``ProviderCacheMiss`` events a run through the gateway emits, and its stats row."""
    heard: list[Any] = []
    with observe(heard.append), gateway_with(fake, diagnostics=diagnostics) as url:
        run(url)
        found = row(url)
    return [e for e in heard if isinstance(e, ProviderCacheMiss)], found


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_anthropic_misses_are_emitted_as_events(fake: FakeUpstream, stream: bool) -> None:
    """Each response whose diagnostics report missed tokens emits a ``ProviderCacheMiss``
    with the provider's figure and reason, the stats' sums and the conversation's session."""
    misses, found = misses_heard(lambda url: anthropic_run(url, stream=stream), fake)
    assert [e.missed_tokens for e in misses] == [m for m in fake.missed[1:] if m > 0]
    assert {(e.provider, e.reason) for e in misses} == {("anthropic", "messages_changed")}
    cleared = sum(e.missed_tokens for e in misses if e.cleared)
    assert 0 < cleared == found["provider_missed_after_clearing"]
    assert {e.session for e in misses} == {f"gateway:{found['id']}"}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_responses_misses_are_emitted_as_events(fake: FakeUpstream, stream: bool) -> None:
    """OpenAI Responses misses are emitted with provider ``openai`` and no reason (the
    provider gives none)."""
    misses, found = misses_heard(lambda url: openai_responses_run(url, stream=stream), fake)
    assert [e.missed_tokens for e in misses] == [m for m in fake.missed[1:] if m > 0]
    assert {(e.provider, e.reason) for e in misses} == {("openai", None)}
    assert sum(e.missed_tokens for e in misses) == found["provider_missed_tokens"]


def test_without_the_flag_no_miss_is_emitted(fake: FakeUpstream) -> None:
    """Miss events are opt-in with the diagnostics."""
    misses, _ = misses_heard(lambda url: anthropic_run(url, stream=False), fake, diagnostics=False)
    assert misses == []


def test_clearing_passes_and_misses_name_the_stats_conversation(fake: FakeUpstream) -> None:
    """A gateway's ``ClearingPass`` events carry the session ``gateway:<id>`` of the
    conversation's row in the stats, as its misses do, so the two can be joined."""
    heard: list[Any] = []
    with observe(heard.append), gateway_with(fake, diagnostics=True) as url:
        anthropic_run(url, stream=False)
        found = row(url)
    sessions = {e.session for e in heard if isinstance(e, (ClearingPass, ProviderCacheMiss))}
    assert sessions == {f"gateway:{found['id']}"}


def test_misses_reach_the_opentelemetry_metric(fake: FakeUpstream) -> None:
    """Through ``instrument()``, the missed tokens of a run add up in
    ``slimtools.cache.tokens.missed`` to the stats' sum."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from slimtools.instrumentation.otel import instrument

    reader = InMemoryMetricReader()
    with (
        instrument(meter_provider=MeterProvider(metric_readers=[reader])),
        gateway_with(fake, diagnostics=True) as url,
    ):
        anthropic_run(url, stream=False)
        found = row(url)
    data = reader.get_metrics_data()
    assert data is not None
    points = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "slimtools.cache.tokens.missed"
        for point in metric.data.data_points
    ]
    by_cleared = {point.attributes["slimtools.cache.miss.cleared"]: point.value for point in points}
    assert sum(by_cleared.values()) == found["provider_missed_tokens"]
    assert by_cleared[True] == found["provider_missed_after_clearing"]
    assert {p.attributes["gen_ai.provider.name"] for p in points} == {"anthropic"}


DIAGNOSES = st.builds(
    Diagnosis,
    st.none() | st.sampled_from(["msg_1", "resp_2"]),
    st.integers(0, 10_000),
    st.none() | st.sampled_from(["messages_changed", "tools_changed"]),
    st.sampled_from(["anthropic", "openai"]),
) | st.builds(Diagnosis, st.none() | st.just("msg_3"))
"""Responses as the gateway reads them: a figure always names its provider."""


@given(st.lists(st.tuples(DIAGNOSES, st.booleans()), max_size=8))
def test_miss_events_add_up_to_the_stats(responses: list[tuple[Diagnosis, bool]]) -> None:
    """Over any responses, the events' missed tokens sum to the stats'
    ``provider_missed_tokens``, and those of clearing requests to
    ``provider_missed_after_clearing``; a response without a missed token emits nothing."""
    stats = ConversationStats("c-1", "anthropic")
    events = []
    for diagnosis, cleared in responses:
        stats.diagnosed(diagnosis, cleared=cleared)
        miss = diagnosis.miss(stats.id, cleared=cleared)
        if miss is not None:
            events.append(miss)
    assert sum(e.missed_tokens for e in events) == stats.provider_missed_tokens
    assert sum(e.missed_tokens for e in events if e.cleared) == (
        stats.provider_missed_after_clearing
    )
    assert all(e.missed_tokens > 0 and e.session == "gateway:c-1" for e in events)
