"""Live metrics: what slimming and clearing saved, per tool, while the agent runs. Offline.

Run: ``python examples/live_metrics.py``. A scripted model calls two slimmed tools (a log
search with handles, a file read shown a page of lines at a time) and ``get_record`` over
eight rounds of an OpenAI Chat history, cleared at each round end. One plain listener,
subscribed with ``slimtools.observe``, hears every event: a ``SlimmedCall`` per tool call,
a ``RecordLookup`` per ``get_record`` answer and a ``ClearingPass`` per clearing pass. It
adds them into a savings table. The same events then go to OpenTelemetry through
``slimtools.instrumentation.otel`` (an in-memory exporter here; yours in production).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Annotated, Any

from pydantic import BaseModel, Field

import slimtools
from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.instrumentation import ClearingPass, Event, RecordLookup, SlimmedCall

LOGS = [
    {
        "id": i,
        "time": f"10-24 03:{i:02d}",
        "level": "ERROR" if i % 3 else "WARN",
        "message": f"upstream timeout connecting to auth-service (attempt {i}); pool exhausted "
        + "retrying with backoff " * 6,
        "tenant": "acme-prod-7731",
        "trace_id": f"{i:032x}",
        "stack": "Traceback (most recent call last):\n" + "  frame\n" * 30,
    }
    for i in range(1, 41)
]
CONFIG = "\n".join(f"auth.pool.setting_{i} = {i * 7}  # tuned in incident {i}" for i in range(400))


class LogBrief(BaseModel):
    """The allowlist of a search result: nothing else reaches the model."""

    id: int
    time: str
    level: str
    summary: Annotated[str, Clip(60)] = Field(validation_alias="message")


kit = Toolkit("ops")


@kit.tool
@summarize_with_handle(key="id")
@paginate(limit=5)
@project_fields(LogBrief)
def search_logs(query: str) -> list[dict[str, Any]]:
    """Search the logs for ``query``."""
    return [row for row in LOGS if query in row["message"]]


@kit.tool
@summarize_with_handle(head=20)
def read_file(path: str) -> str:
    """Read a file of the deployment."""
    return CONFIG


SCRIPT: list[tuple[str, dict[str, Any]]] = [  # the scripted model's tool calls, one a round
    ("search_logs", {"query": "timeout"}),
    ("search_logs", {"query": "timeout", "page": 2}),
    ("get_record", {"handle": 7}),
    ("read_file", {"path": "auth.conf"}),
    ("search_logs", {"query": "pool"}),
    ("get_record", {"handle": 12}),
    ("read_file", {"path": "auth.conf"}),
    ("search_logs", {"query": "timeout", "page": 3}),
]


class Savings:
    """A listener: adds each event into per-tool rows and clearing totals."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = defaultdict(int)
        self.before: dict[str, int] = defaultdict(int)
        self.after: dict[str, int] = defaultdict(int)
        self.handles: dict[str, int] = defaultdict(int)
        self.passes: list[ClearingPass] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, SlimmedCall):
            self.calls[event.tool] += 1
            self.before[event.tool] += event.tokens_before
            self.after[event.tool] += event.tokens_after
            self.handles[event.tool] += event.handles
        elif isinstance(event, RecordLookup):  # a refetch costs tokens: count it against slimming
            self.calls[event.tool] += 1
            self.after[event.tool] += event.tokens
        elif isinstance(event, ClearingPass):
            self.passes.append(event)

    def table(self) -> str:
        rows = [
            f"{'tool':<12} {'calls':>5} {'raw tokens':>10} {'sent':>6} {'saved':>6} {'handles':>7}"
        ]
        for tool in sorted(self.calls):
            saved = self.before[tool] - self.after[tool]
            rows.append(
                f"{tool:<12} {self.calls[tool]:>5} {self.before[tool]:>10} "
                f"{self.after[tool]:>6} {saved:>6} {self.handles[tool]:>7}"
            )
        cleared = sum(p.cleared for p in self.passes)
        taken = sum(p.tokens_saved for p in self.passes)
        breaks = sum(p.cache_broken for p in self.passes)
        rows.append(
            f"clearing: {len(self.passes)} passes, {cleared} results cleared, "
            f"{taken} tokens taken out, {breaks} cache breaks"
        )
        return "\n".join(rows)


def agent_run() -> None:
    """Eight rounds: the model's call, its result, a clearing pass at the round end."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Why does auth time out?"}]
    clearer = Clearer(ClearingPolicy(cache=None, keep_turns=2))  # no prompt cache: clear each round
    for n, (name, args) in enumerate(SCRIPT):
        call_id = f"call_{n}"
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        result = kit.call(name, args, call_id=call_id)
        history.append({"role": "tool", "tool_call_id": call_id, "content": result.text})
        clearer.clear_in_place(history)


def with_opentelemetry() -> None:
    """The same run, its events recorded as OpenTelemetry spans and metrics."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from slimtools.instrumentation.otel import instrument
    except ImportError:
        print("\n(OpenTelemetry: pip install 'slimtools[otel]' opentelemetry-sdk to see spans)")
        return
    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    with instrument(tracer_provider=tracer, meter_provider=MeterProvider(metric_readers=[reader])):
        agent_run()
    print("\nOpenTelemetry spans (no span was current, so each event got a short one of its own):")
    keys = (
        "gen_ai.tool.call.id",
        "slimtools.tokens.before",
        "slimtools.tokens.after",
        "slimtools.clearing.cleared",
        "slimtools.cache.broken",
    )
    for span in spans.get_finished_spans()[:4]:
        attributes = span.attributes or {}
        print(
            f"  {span.name}: " + ", ".join(f"{k}={attributes[k]}" for k in keys if k in attributes)
        )
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "slimtools.tokens.saved":
                    total = sum(point.value for point in metric.data.data_points)
                    print(f"  metric slimtools.tokens.saved: {total} in all")


def main() -> None:
    savings = Savings()
    with slimtools.observe(savings):  # every toolkit and clearer of the process hears it
        agent_run()
    print(savings.table())
    with_opentelemetry()


if __name__ == "__main__":
    main()
