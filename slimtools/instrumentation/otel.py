"""slimtools events in OpenTelemetry: span events or short spans, and metrics.

Call :func:`instrument` once, after configuring your tracer and meter providers::

    from slimtools.instrumentation.otel import instrument

    subscription = instrument()   # every toolkit and clearer of the process, until unsubscribed

or give one toolkit or policy its own listener: ``Toolkit("logs", on_event=OTelListener())``.
Needs the OpenTelemetry API (``pip install 'slimtools[otel]'``); an SDK and an exporter are
yours to configure, as for any instrumented library. Importing ``slimtools`` never imports
OpenTelemetry: only this module does.

**Traces.** Each event becomes a span event named ``slimtools.<kind>`` on the current span
when that span is recording (the framework's tool span, your agent's span), or else a short
span of its own, timed like the call: ``execute_tool <tool>`` for a slimmed call or a
``get_record``, ``slimtools.clearing_pass`` for a clearing pass. Attributes follow the
OpenTelemetry GenAI semantic conventions where they apply (``gen_ai.operation.name`` is
``execute_tool``, with ``gen_ai.tool.name``, ``gen_ai.tool.type`` and, when the caller bound
it, ``gen_ai.tool.call.id``); the rest are ``slimtools.*``, one per event field (the README
lists them). An attribute without a value (no call id bound, no page) is left out.

**Metrics** (instrument names in :data:`METRICS`), with low-cardinality attributes only (the
tool, the toolkit, the history format; never sessions, ids or handles):
``slimtools.tokens.saved`` (an up-down counter: a page read from the page-1 snapshot and a
``get_record`` answer cost tokens, so they subtract; its sum is the net saving),
``slimtools.tool.items.shown``, ``slimtools.tool.handles.written``,
``slimtools.clearing.results.cleared``,
``slimtools.clearing.cache.breaks``, ``slimtools.cache.breaks`` (a
:class:`~slimtools.instrumentation.CacheBreak`, by its cause; no span) and
``slimtools.cache.tokens.missed`` (a
:class:`~slimtools.instrumentation.ProviderCacheMiss`'s tokens, by ``gen_ai.provider.name``,
``slimtools.cache.miss.reason`` (``unknown`` when the provider gives none) and
``slimtools.cache.miss.cleared``; no span).
"""

from __future__ import annotations

from importlib import metadata
from typing import Any, Literal

try:
    from opentelemetry import metrics, trace
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "slimtools.instrumentation.otel needs the OpenTelemetry API: pip install 'slimtools[otel]'"
    ) from exc

from slimtools.errors import ConfigurationError
from slimtools.instrumentation._events import (
    CacheBreak,
    ClearingPass,
    Event,
    ProviderCacheMiss,
    RecordLookup,
    SlimmedCall,
)
from slimtools.instrumentation._registry import Subscription, observe

__all__ = ["METRICS", "OTelListener", "instrument"]

Spans = Literal["auto", "always", "never"]

METRICS: dict[str, tuple[str, str, str]] = {
    "slimtools.tokens.saved": (
        "up_down_counter",
        "{token}",
        "Tokens kept out of the context: raw result minus envelope per slimmed call, minus "
        "get_record answers, plus what clearing passes took out",
    ),
    "slimtools.tool.items.shown": ("counter", "{item}", "Items (or lines) slimmed calls showed"),
    "slimtools.tool.handles.written": (
        "counter",
        "{handle}",
        "Full records and texts kept under handles for get_record",
    ),
    "slimtools.clearing.results.cleared": (
        "counter",
        "{result}",
        "Tool results replaced by placeholders",
    ),
    "slimtools.clearing.cache.breaks": (
        "counter",
        "{break}",
        "Clearing passes that rewrote a message the previous request held (prompt cache broken)",
    ),
    "slimtools.cache.breaks": (
        "counter",
        "{break}",
        "Model calls whose cache reads fell short of the previous prompt, by cause",
    ),
    "slimtools.cache.tokens.missed": (
        "counter",
        "{token}",
        "Input tokens the provider says missed the prompt cache against the previous response",
    ),
}
"""Each metric: instrument kind, unit and description."""


def _version() -> str:
    try:
        return metadata.version("slimtools")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return ""


class OTelListener:
    """A listener that reports every event it hears to OpenTelemetry (see the module docs).

    Args:
        tracer_provider: where spans go (default: the global one, even if set later).
        meter_provider: where metrics go (default: the global one).
        spans: ``"auto"`` (a span event on the current recording span, else a short span),
            ``"always"`` (a short child span for every event) or ``"never"`` (span events
            only; nothing is traced outside a recording span). Metrics are recorded in
            every case.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        spans: Spans = "auto",
    ) -> None:
        if spans not in ("auto", "always", "never"):
            raise ConfigurationError(f'spans must be "auto", "always" or "never", got {spans!r}')
        self.spans = spans
        version = _version()
        self._tracer = trace.get_tracer("slimtools", version, tracer_provider)
        meter = metrics.get_meter("slimtools", version, meter_provider)
        made: dict[str, Any] = {}
        for name, (kind, unit, description) in METRICS.items():
            create = getattr(meter, f"create_{kind}")
            made[name] = create(name, unit=unit, description=description)
        self._saved = made["slimtools.tokens.saved"]
        self._shown = made["slimtools.tool.items.shown"]
        self._handles = made["slimtools.tool.handles.written"]
        self._cleared = made["slimtools.clearing.results.cleared"]
        self._breaks = made["slimtools.clearing.cache.breaks"]
        self._cache_breaks = made["slimtools.cache.breaks"]
        self._missed = made["slimtools.cache.tokens.missed"]

    def __repr__(self) -> str:
        return f"OTelListener(spans={self.spans!r})"

    def __call__(self, event: Event) -> None:
        """Record ``event``: its span event or span, and its metrics."""
        if isinstance(event, SlimmedCall):
            tool = {"gen_ai.tool.name": event.tool, "slimtools.toolkit": event.toolkit}
            self._saved.add(event.tokens_saved, {**tool, "slimtools.operation": "slim"})
            self._shown.add(event.shown, {**tool, "slimtools.items.unit": event.unit})
            self._handles.add(event.handles, tool)
            self._trace(event, f"execute_tool {event.tool}", _slimmed_attributes(event))
        elif isinstance(event, RecordLookup):
            tool = {"gen_ai.tool.name": event.tool, "slimtools.toolkit": event.toolkit}
            self._saved.add(-event.tokens, {**tool, "slimtools.operation": "get_record"})
            self._trace(event, f"execute_tool {event.tool}", _lookup_attributes(event))
        elif isinstance(event, ClearingPass):
            where = {"slimtools.clearing.format": event.format or "unknown"}
            self._saved.add(event.tokens_saved, {**where, "slimtools.operation": "clear"})
            self._cleared.add(event.cleared, where)
            self._breaks.add(int(event.cache_broken), where)
            self._trace(event, "slimtools.clearing_pass", _clearing_attributes(event))
        elif isinstance(event, CacheBreak):
            self._cache_breaks.add(1, {"slimtools.cache.break.cause": event.cause})
        elif isinstance(event, ProviderCacheMiss):
            miss = {
                "gen_ai.provider.name": event.provider,
                "slimtools.cache.miss.reason": event.reason or "unknown",
                "slimtools.cache.miss.cleared": event.cleared,
            }
            self._missed.add(event.missed_tokens, miss)

    def _trace(
        self,
        event: SlimmedCall | RecordLookup | ClearingPass,
        span_name: str,
        attributes: dict[str, Any],
    ) -> None:
        """A span event on the current recording span, or a short span of its own."""
        current = trace.get_current_span()
        if self.spans != "always" and current.is_recording():
            current.add_event(f"slimtools.{event.kind}", attributes, timestamp=event.end_ns)
            return
        if self.spans == "never":
            return
        span = self._tracer.start_span(
            span_name,
            kind=trace.SpanKind.INTERNAL,
            attributes=attributes,
            start_time=event.start_ns,
        )
        span.end(end_time=event.end_ns)


def instrument(
    *,
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    spans: Spans = "auto",
) -> Subscription:
    """Report every slimtools event of this process to OpenTelemetry until unsubscribed.

    ``slimtools.observe(OTelListener(...))``: each call subscribes one more listener (so call
    it once). Use the returned subscription as a context manager, or call its
    ``unsubscribe()``. Arguments: as :class:`OTelListener`.
    """
    listener = OTelListener(
        tracer_provider=tracer_provider, meter_provider=meter_provider, spans=spans
    )
    return observe(listener)


def _present(attributes: dict[str, Any]) -> dict[str, Any]:
    """Attributes without the unset ones (OpenTelemetry refuses None values)."""
    return {k: v for k, v in attributes.items() if v is not None}


def _slimmed_attributes(event: SlimmedCall) -> dict[str, Any]:
    return _present(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.tool,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": event.call_id,
            "slimtools.toolkit": event.toolkit,
            "slimtools.session": event.session,
            "slimtools.tokens.before": event.tokens_before,
            "slimtools.tokens.after": event.tokens_after,
            "slimtools.tokens.saved": event.tokens_saved,
            "slimtools.items.shown": event.shown,
            "slimtools.items.total": event.total,
            "slimtools.items.unit": event.unit,
            "slimtools.handles.written": event.handles,
            "slimtools.page": event.page,
            "slimtools.from_snapshot": event.from_snapshot,
        }
    )


def _lookup_attributes(event: RecordLookup) -> dict[str, Any]:
    return _present(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.tool,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": event.call_id,
            "slimtools.toolkit": event.toolkit,
            "slimtools.session": event.session,
            "slimtools.record.handle": event.handle,
            "slimtools.record.source": event.source,
            "slimtools.record.found": event.found,
            "slimtools.page": event.page,
            "slimtools.tokens.after": event.tokens,
        }
    )


def _clearing_attributes(event: ClearingPass) -> dict[str, Any]:
    return _present(
        {
            "slimtools.clearing.format": event.format,
            "slimtools.session": event.session,
            "slimtools.clearing.messages": event.messages,
            "slimtools.clearing.cleared": event.cleared,
            "slimtools.clearing.inputs_cleared": event.inputs_cleared,
            "slimtools.tokens.before": event.tokens_before,
            "slimtools.tokens.after": event.tokens_after,
            "slimtools.tokens.saved": event.tokens_saved,
            "slimtools.cache.first_changed": event.first_changed,
            "slimtools.cache.broken": event.cache_broken,
        }
    )
