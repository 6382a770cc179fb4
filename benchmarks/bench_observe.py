"""What live metrics cost: nothing measurable when nobody listens.

1. A decorated 3-row call (``@summarize_with_handle`` + ``@paginate`` + ``@project_fields``,
   as in ``bench_core`` 3) with nobody listening, against the same tool decorated while the
   shell's emission check was patched out (the floor), in the same run. Also the cost with
   one no-op listener (the event is built: the raw result is measured) and with the
   OpenTelemetry bridge (an SDK tracer and meter provider, spans kept in memory).
2. A round of ``Clearer.clear_in_place`` on a 1,000-message history (one tool call and its
   result appended, then cleared) with nobody listening, against a clearer built with
   ``observed=False`` (the floor: the pass's one flag test short-circuits), and with a
   no-op listener and the OpenTelemetry bridge on the policy.
3. The emission checks alone, as the hot paths run them, timed in a loop.

Goal: under 1 us per call with nobody listening. Times are CPU time (interleaved rounds, best
round, ``gc.collect()`` before each timed run).
"""

from __future__ import annotations

import gc
import time
import timeit
from collections.abc import Callable
from typing import Any

from benchmarks._data import ROWS
from benchmarks._timing import cpu_seconds
from benchmarks.results import record
from slimtools import Clearer, ClearingPolicy, Toolkit, paginate, project_fields
from slimtools import summarize_with_handle as handles
from slimtools._core import wrapper
from slimtools._core.wrapper import DEFAULT_KEEPER, _call_of, drive_sync, run
from slimtools.instrumentation import REGISTRY, Event

GOAL_US = 1.0
TINY = ROWS[:3]


def _noop(event: Event) -> None:
    """A listener that does nothing: what building and delivering an event costs."""


def _otel_listener() -> Any:
    """The OpenTelemetry bridge on an SDK whose spans stay in memory (None without the SDK)."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from slimtools.instrumentation.otel import OTelListener
    except ImportError:
        return None
    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    meter = MeterProvider(metric_readers=[InMemoryMetricReader()])

    def listener(event: Event) -> None:
        bridge(event)
        spans.clear()  # keep memory flat over a million calls

    bridge = OTelListener(tracer_provider=tracer, meter_provider=meter)
    return listener


def _unchecked_shell(state: Any) -> Callable[..., Any]:
    """The shell of ``slimtools._core.wrapper`` without its emission check: the floor."""

    def shell(wrapped: Any, instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        keeper = state.keeper or DEFAULT_KEEPER
        call, rest = _call_of(state, keeper.companion, instance, args, kwargs)
        return drive_sync(run(state.cfg, call), keeper, wrapped, args, rest)

    return shell


def _tiny_tool(kit: Toolkit, *, floor: bool = False) -> Callable[..., Any]:
    """The 3-row search of ``bench_core`` 3, registered in ``kit``."""

    def tiny(query: str) -> list[dict[str, Any]]:
        return TINY

    checked = wrapper._sync_shell
    if floor:
        wrapper._sync_shell = _unchecked_shell  # type: ignore[assignment]
    try:
        return kit.tool(
            handles(key="id")(paginate(limit=20)(project_fields(["id", "level"])(tiny)))
        )
    finally:
        wrapper._sync_shell = checked  # type: ignore[assignment]


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:7.2f} us"


def _verdict(overhead: float) -> str:
    verdict = "met" if overhead * 1e6 < GOAL_US else "NOT met"
    return verdict + ("; below the noise of the measurement" if overhead <= 0 else "")


def bench_call() -> None:
    tools = {
        "floor": _tiny_tool(Toolkit("observe-floor"), floor=True),
        "nobody": _tiny_tool(Toolkit("observe-nobody")),
        "noop": _tiny_tool(Toolkit("observe-noop", on_event=_noop)),
    }
    otel = _otel_listener()
    if otel is not None:
        tools["otel"] = _tiny_tool(Toolkit("observe-otel", on_event=otel))
    expected = tools["floor"]("q").to_json()
    for name, tool in tools.items():  # every variant gives the model the same bytes
        assert tool("q").to_json() == expected, name
    t = _cpu({name: (lambda tool=tool: tool("q")) for name, tool in tools.items()})
    overhead = t["nobody"] - t["floor"]
    print("1. a decorated 3-row call (CPU time per call)")
    print(f"   floor (emission check patched out): {_us(t['floor'])}")
    print(
        f"   nobody listening:                   {_us(t['nobody'])}  overhead "
        f"{_us(overhead)} (goal < {GOAL_US:.0f} us: {_verdict(overhead)})"
    )
    print(
        f"   one no-op listener:                 {_us(t['noop'])}  +{_us(t['noop'] - t['floor'])}"
    )
    if "otel" in t:
        print(
            f"   OpenTelemetry bridge (SDK):         {_us(t['otel'])}  +{_us(t['otel'] - t['floor'])}"
        )
    else:
        print("   OpenTelemetry bridge: opentelemetry-sdk not installed; skipped")
    record(
        "live metrics, nobody listening: a decorated 3-row call",
        baseline=f"emission checks patched out: {t['floor'] * 1e6:.1f} µs",
        measured=f"{t['nobody'] * 1e6:.1f} µs",
        ratio=f"{overhead * 1e6:+.2f} µs (goal < {GOAL_US:.0f} µs: {_verdict(overhead)})",
        baseline_s=t["floor"],
        measured_s=t["nobody"],
    )


def _history(messages: int) -> list[dict[str, Any]]:
    """An OpenAI Chat history: a question, then tool calls with ~500-token results."""
    out: list[dict[str, Any]] = [{"role": "user", "content": "Investigate the outage."}]
    i = 0
    while len(out) < messages:
        out += _round(i)
        i += 1
    return out


def _round(i: int) -> list[dict[str, Any]]:
    call = {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "search_logs", "arguments": f'{{"query": "q{i}"}}'},
    }
    text = (f"log line {i}: upstream timeout " * 80)[:2_000]
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{i}", "content": text},
    ]


def bench_clearing(messages: int = 1_000, rounds: int = 400, repeat: int = 9) -> None:
    extra = [_round(10_000 + r) for r in range(rounds)]
    makers: dict[str, Callable[[], Clearer]] = {
        "floor": lambda: Clearer(ClearingPolicy(), observed=False),
        "nobody": lambda: Clearer(ClearingPolicy()),
        "noop": lambda: Clearer(on_event=_noop),
    }
    otel = _otel_listener()
    if otel is not None:
        makers["otel"] = lambda: Clearer(on_event=otel)

    def replay(make: Callable[[], Clearer]) -> float:
        history = _history(messages)
        clearer = make()
        clearer.clear_in_place(history)
        gc.collect()
        start = time.process_time()
        for pair in extra:
            history += pair
            clearer.clear_in_place(history)
        return (time.process_time() - start) / rounds

    best = dict.fromkeys(makers, float("inf"))
    for _ in range(repeat):
        for name, make in makers.items():
            best[name] = min(best[name], replay(make))
    overhead = best["nobody"] - best["floor"]
    print(f"2. a clear_in_place round on a {messages:,}-message history (CPU time per round)")
    print(f"   floor (observed=False):  {_us(best['floor'])}")
    print(
        f"   nobody listening:        {_us(best['nobody'])}  overhead {_us(overhead)} "
        f"(goal < {GOAL_US:.0f} us: {_verdict(overhead)}; rounds differ by more than this "
        "from run to run, see 3 for the check alone)"
    )
    print(f"   one no-op listener:      {_us(best['noop'])}  +{_us(best['noop'] - best['floor'])}")
    if "otel" in best:
        print(
            f"   OpenTelemetry bridge:    {_us(best['otel'])}  +{_us(best['otel'] - best['floor'])}"
        )
    record(
        f"live metrics, nobody listening: a clear_in_place round on {messages:,} messages",
        baseline=f"observed=False: {best['floor'] * 1e6:.1f} µs",
        measured=f"{best['nobody'] * 1e6:.1f} µs",
        ratio=f"{overhead * 1e6:+.2f} µs (goal < {GOAL_US:.0f} µs: {_verdict(overhead)})",
        baseline_s=best["floor"],
        measured_s=best["nobody"],
    )


def bench_checks() -> None:
    keeper = Toolkit("observe-check")._keeper
    policy = ClearingPolicy()
    loops = 1_000_000
    namespace = {"keeper": keeper, "self": Clearer(policy), "REGISTRY": REGISTRY}
    shell = timeit.Timer(
        "keeper.on_event is None and not REGISTRY.listeners",
        globals=namespace,
        timer=time.process_time,
    )
    clearer = timeit.Timer(
        "self.on_event is not None or bool(REGISTRY.listeners)",
        globals=namespace,
        timer=time.process_time,
    )
    empty = timeit.Timer("pass", timer=time.process_time)
    gc.collect()
    base = min(empty.repeat(5, loops)) / loops
    t_shell = min(shell.repeat(5, loops)) / loops - base
    t_clear = min(clearer.repeat(5, loops)) / loops - base
    print("3. the emission checks alone, nobody listening (CPU time per check)")
    print(
        f"   decorated call's shell: {t_shell * 1e9:5.1f} ns; clearing pass: {t_clear * 1e9:5.1f} ns"
    )


def _cpu(fns: dict[str, Callable[[], Any]]) -> dict[str, float]:
    return cpu_seconds(fns, rounds=21, min_time=0.05)


def main() -> None:
    bench_call()
    bench_clearing()
    bench_checks()


if __name__ == "__main__":
    main()
