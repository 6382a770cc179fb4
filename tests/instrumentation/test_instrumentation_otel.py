"""The OpenTelemetry bridge, read back through the SDK's in-memory exporter and reader."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from slimtools import ConfigurationError, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.instrumentation import CacheWatch, ProviderCacheMiss, observe
from slimtools.instrumentation.otel import METRICS, OTelListener, instrument
from tests.adapters.sdk_adapter_fixtures import import_error_without
from tests.clearing.strategies_clearing import render, script

ROWS = [{"id": i, "level": "WARN", "message": "disk almost full " * 3} for i in range(8)]
FLAT = ClearingPolicy(cache=None, retention={})


class Otel:
    """An SDK tracer and meter provider that keep what they receive in memory."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def listener(self, **options: Any) -> OTelListener:
        return OTelListener(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )

    def finished(self) -> list[Any]:
        return list(self.spans.get_finished_spans())

    def metric(self, name: str) -> dict[frozenset, int]:
        """Each data point of metric ``name``: its attributes -> its value."""
        data = self.reader.get_metrics_data()
        points: dict[frozenset, int] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        for point in metric.data.data_points:
                            points[frozenset(point.attributes.items())] = point.value
        return points


@pytest.fixture
def otel() -> Otel:
    return Otel()


def make_kit(listener: Any = None) -> tuple[Toolkit, Any]:
    kit = Toolkit("logs", on_event=listener)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=3)
    @project_fields(["id", "level"])
    def search_logs(query: str) -> list[dict]:
        """Search the logs."""
        return ROWS

    return kit, search_logs


def test_a_slimmed_call_outside_any_span_gets_an_execute_tool_span(otel):
    """A short span of its own, named and attributed per the GenAI conventions, timed like it."""
    heard = []
    kit, _ = make_kit()
    with (
        observe(heard.append),
        instrument(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider),
    ):
        kit.call("search_logs", {"query": "disk"}, call_id="call_42")
    (span,) = otel.finished()
    event = heard[0]
    assert span.name == "execute_tool search_logs"
    assert span.kind is SpanKind.INTERNAL
    assert (span.start_time, span.end_time) == (event.start_ns, event.end_ns)
    attributes = dict(span.attributes)
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["gen_ai.tool.name"] == "search_logs"
    assert attributes["gen_ai.tool.type"] == "function"
    assert attributes["gen_ai.tool.call.id"] == "call_42"
    assert attributes["slimtools.toolkit"] == "logs"
    assert attributes["slimtools.tokens.before"] == event.tokens_before
    assert attributes["slimtools.tokens.after"] == event.tokens_after
    assert attributes["slimtools.tokens.saved"] == event.tokens_saved
    assert (attributes["slimtools.items.shown"], attributes["slimtools.items.total"]) == (3, 8)
    assert attributes["slimtools.handles.written"] == 3
    assert attributes["slimtools.page"] == 1
    assert attributes["slimtools.from_snapshot"] is False


def test_a_call_inside_a_recording_span_becomes_an_event_on_it(otel):
    """Inside the framework's (or your) span: one span event, no extra span."""
    _, search_logs = make_kit(otel.listener())
    tracer = otel.tracer_provider.get_tracer("agent")
    with tracer.start_as_current_span("execute_tool search_logs"):
        search_logs("disk")
    (span,) = otel.finished()
    (event,) = span.events
    assert event.name == "slimtools.slimmed_call"
    assert event.attributes["slimtools.items.shown"] == 3
    assert "gen_ai.tool.call.id" not in event.attributes  # none was bound


def test_spans_always_makes_a_child_span_even_inside_a_span(otel):
    """``spans="always"``: a child of the current span, not an event on it."""
    _, search_logs = make_kit(otel.listener(spans="always"))
    with otel.tracer_provider.get_tracer("agent").start_as_current_span("agent") as parent:
        search_logs("disk")
    child, outer = otel.finished()
    assert child.name == "execute_tool search_logs"
    assert child.parent.span_id == parent.get_span_context().span_id
    assert outer.events == ()


def test_spans_never_traces_nothing_outside_a_span_but_still_counts(otel):
    """``spans="never"``: no span of its own; the metrics are recorded all the same."""
    _, search_logs = make_kit(otel.listener(spans="never"))
    search_logs("disk")
    assert otel.finished() == []
    assert sum(otel.metric("slimtools.tool.items.shown").values()) == 3


def test_an_unknown_spans_option_is_refused():
    """Only "auto", "always" and "never"."""
    with pytest.raises(ConfigurationError, match="spans must be"):
        OTelListener(spans="sometimes")  # type: ignore[arg-type]


def test_get_record_is_an_execute_tool_span_whose_answer_costs_saved_tokens(otel):
    """The companion's span, and its answer subtracted from the tokens saved."""
    heard = []
    kit, search_logs = make_kit(otel.listener())
    with observe(heard.append):
        search_logs("disk")
        kit.get_record(2)
    spans = {s.name: s for s in otel.finished()}
    lookup = dict(spans["execute_tool get_record"].attributes)
    assert (lookup["slimtools.record.handle"], lookup["slimtools.record.found"]) == ("2", True)
    assert lookup["slimtools.tokens.after"] == heard[1].tokens
    saved = otel.metric("slimtools.tokens.saved")
    by_operation = {dict(k)["slimtools.operation"]: v for k, v in saved.items()}
    assert by_operation == {"slim": heard[0].tokens_saved, "get_record": -heard[1].tokens}


def test_the_metrics_add_up_the_events(otel):
    """Tokens saved (net, pages from the snapshot subtracting), items shown, handles written."""
    heard = []
    _, search_logs = make_kit(otel.listener())
    with observe(heard.append):
        search_logs("disk")
        search_logs("disk", page=2)
        search_logs("disk", page=3)
    tool = {("gen_ai.tool.name", "search_logs"), ("slimtools.toolkit", "logs")}
    assert otel.metric("slimtools.tokens.saved") == {
        frozenset({*tool, ("slimtools.operation", "slim")}): sum(e.tokens_saved for e in heard)
    }
    assert otel.metric("slimtools.tool.items.shown") == {
        frozenset({*tool, ("slimtools.items.unit", "items")}): 8
    }
    assert otel.metric("slimtools.tool.handles.written") == {frozenset(tool): 8}


def test_a_clearing_pass_is_a_span_with_its_numbers_and_counted(otel):
    """Results cleared, cache breaks and tokens saved per history format."""
    heard = []
    with observe(heard.append):
        Clearer(FLAT, on_event=otel.listener()).clear(render("anthropic", script(*"ttttt")))
    (span,) = otel.finished()
    (event,) = heard
    assert span.name == "slimtools.clearing_pass"
    attributes = dict(span.attributes)
    assert attributes["slimtools.clearing.format"] == "anthropic"
    assert attributes["slimtools.clearing.cleared"] == event.cleared == 3
    assert attributes["slimtools.cache.first_changed"] == event.first_changed
    assert attributes["slimtools.cache.broken"] is True
    assert attributes["slimtools.tokens.saved"] == event.tokens_saved
    where = frozenset({("slimtools.clearing.format", "anthropic")})
    assert otel.metric("slimtools.clearing.results.cleared") == {where: 3}
    assert otel.metric("slimtools.clearing.cache.breaks") == {where: 1}


def _watched_break(otel: Otel) -> None:
    watch = CacheWatch(on_event=otel.listener())
    watch.record({"input_tokens": 30_000}, at=0.0)
    watch.record({"input_tokens": 30_000}, at=1_000.0)


def test_a_cache_break_is_counted_by_cause(otel):
    """A CacheWatch break adds one to the cache breaks of its cause."""
    _watched_break(otel)
    where = frozenset({("slimtools.cache.break.cause", "expired")})
    assert otel.metric("slimtools.cache.breaks") == {where: 1}


def _missed(
    tokens: int, *, provider: str = "anthropic", reason: str | None = None, cleared: bool = True
) -> ProviderCacheMiss:
    return ProviderCacheMiss("gateway:c-1", provider, reason, tokens, cleared, 0)


def test_provider_cache_misses_count_their_tokens_by_provider_reason_and_clearing(otel):
    """Missed tokens add up per provider, reason (``unknown`` when none is given) and
    whether the request newly cleared results; no span is made."""
    listener = otel.listener()
    listener(_missed(100, reason="messages_changed"))
    listener(_missed(50, reason="messages_changed"))
    listener(_missed(7, reason="messages_changed", cleared=False))
    listener(_missed(30, provider="openai"))

    def where(provider: str, reason: str, cleared: bool) -> frozenset:
        return frozenset(
            {
                ("gen_ai.provider.name", provider),
                ("slimtools.cache.miss.reason", reason),
                ("slimtools.cache.miss.cleared", cleared),
            }
        )

    assert otel.metric("slimtools.cache.tokens.missed") == {
        where("anthropic", "messages_changed", True): 150,
        where("anthropic", "messages_changed", False): 7,
        where("openai", "unknown", True): 30,
    }
    assert otel.finished() == []


def test_every_metric_is_created_with_its_unit(otel):
    """The instruments of ``METRICS`` exist with their declared units once data flows."""
    _, search_logs = make_kit(otel.listener())
    search_logs("disk")
    Clearer(FLAT, on_event=otel.listener()).clear(render("openai_chat", script(*"tttt")))
    _watched_break(otel)
    otel.listener()(_missed(10))
    data = otel.reader.get_metrics_data()
    units = {
        m.name: m.unit for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics
    }
    assert units == {name: unit for name, (_, unit, _) in METRICS.items()}


def test_instrument_subscribes_globally_until_unsubscribed(otel):
    """``instrument()`` hears every toolkit; after ``unsubscribe()`` nothing is traced."""
    _, search_logs = make_kit()
    subscription = instrument(
        tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
    )
    search_logs("disk")
    subscription.unsubscribe()
    search_logs("disk")
    assert len(otel.finished()) == 1


def test_a_toolkit_listener_traces_only_that_toolkit(otel):
    """``Toolkit(on_event=OTelListener(...))`` leaves other toolkits untraced."""
    _, mine = make_kit(otel.listener())
    _, theirs = make_kit()
    mine("disk")
    theirs("disk")
    assert len(otel.finished()) == 1


@pytest.mark.subprocess
def test_without_the_extra_the_import_error_names_it():
    """Importing the bridge without the OpenTelemetry API says which extra to install."""
    stderr = import_error_without("opentelemetry", "slimtools.instrumentation.otel")
    assert "pip install 'slimtools[otel]'" in stderr
