"""A slimmed call or a ``get_record`` lookup run while someone listens, and its event.

The shells (``slimtools._core.wrapper``) and the toolkit come here only after checking that
a listener exists, so nothing below costs anything otherwise. :func:`observed_run` and
:func:`observed_lookup` are the engines ``run`` and ``get_record`` seen through a
transparent generator: each request goes to the driver and each answer back unchanged,
noting on the way the tool's raw result (to count what it would have cost) and the handles
the store kept; the event is emitted when the engine returns. So either driver runs them,
and a call gives the model exactly what it would without a listener: a failure while
measuring is logged and the event skipped.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from slimtools._core.config import Call, SlimConfig
from slimtools._core.drive import UNAVAILABLE, Engine, Invoke, Save
from slimtools._core.keeper import Keeper
from slimtools._core.keys import is_snapshot_key
from slimtools._core.lookup import Answer, Lookup, Sources, get_record
from slimtools._core.paging import split_lines
from slimtools._core.pipeline import FinalResult, run
from slimtools._json import dumps_str
from slimtools._session import session
from slimtools.envelope import Envelope
from slimtools.instrumentation import CALL_ID, RecordLookup, SlimmedCall, emit
from slimtools.tokens import TokenCounter, count_tokens

log = logging.getLogger("slimtools")

# Beyond these sizes the raw result's tokens are estimated from a sample (documented on
# SlimmedCall): counting a 10,000-row result whole costs milliseconds, a hundred times the
# slimmed call it measures.
_EXACT_ITEMS = 256
_SAMPLED_ITEMS = 64
_EXACT_CHARS = 256 * 1024
_SLICES = 32
_SLICE_CHARS = 4096

# The line a head-and-tail text shows in place of its middle, right after the head
# (``pipeline._text``); not a line of the result.
_OMITTED = re.compile(r"… \d+ lines omitted[ :]")


def observed_run(cfg: SlimConfig, keeper: Keeper, call: Call) -> Engine[Any]:
    """``run(cfg, call)`` that reports a :class:`SlimmedCall` when it returns."""
    start = time.time_ns()
    engine = run(cfg, call)
    raw: Any = None
    ran = False
    handles = 0
    answer: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                op = engine.send(answer) if error is None else engine.throw(error)
            except StopIteration as stop:
                result = stop.value
                break
            error = None
            try:
                answer = yield op
            except Exception as exc:  # the driver's failure to answer: the engine decides
                error = exc
                continue
            if isinstance(op, Invoke) and op.fn is None:
                answer = raw = _settled(answer)
                ran = True
            elif isinstance(op, Save) and answer is not UNAVAILABLE:
                refused = set(answer)
                handles += sum(1 for k in op.items if not is_snapshot_key(k) and k not in refused)
    finally:
        engine.close()
    _report_call(cfg, keeper, call, result, (ran, raw, handles), start=start)
    return result


def _settled(result: Any) -> Any:
    """The tool's result as the pipeline will read it, still there to measure afterwards."""
    if isinstance(result, Iterator) and not isinstance(result, Mapping):
        # The pipeline turns any such iterator into this very tuple (``classify``); made
        # here, the result can still be measured once the pipeline has consumed it.
        return tuple(result)
    return result


def _report_call(
    cfg: SlimConfig,
    keeper: Keeper,
    call: Call,
    result: Any,
    seen: tuple[bool, Any, int],
    *,
    start: int,
) -> None:
    ran, raw, handles = seen
    try:
        end = time.time_ns()
        counter = cfg.counter
        shown, total, unit = _shown(cfg, result)
        event = SlimmedCall(
            tool=call.tool,
            toolkit=keeper.name,
            session=keeper.scope().session,
            tokens_before=raw_tokens(raw, counter) if ran else 0,
            tokens_after=counter(result_text(result)),
            shown=shown,
            total=total,
            unit=unit,
            handles=handles,
            page=call.page if cfg.paging is not None and type(call.page) is int else None,
            from_snapshot=not ran,
            call_id=CALL_ID.get(),
            start_ns=start,
            end_ns=end,
        )
    except Exception:
        log.warning("slimtools: could not measure a call of tool %r", call.tool, exc_info=True)
        return
    emit(event, keeper.on_event)


def observed_lookup(keeper: Keeper) -> Lookup:
    """``get_record``'s engine, reporting a :class:`RecordLookup` when it returns."""

    def lookup(sources: Sources, handle: Any, source: Any, page: Any) -> Engine[Answer]:
        start = time.time_ns()
        answer = yield from get_record(sources, handle, source, page)
        _report_lookup(keeper, (handle, source, page), answer, start)
        return answer

    return lookup


def _report_lookup(
    keeper: Keeper, asked: tuple[Any, Any, Any], answer: Answer, start: int
) -> None:  # fmt: skip
    handle, source, page = asked
    text, is_error = answer
    try:
        event = RecordLookup(
            tool=keeper.companion,
            toolkit=keeper.name,
            session=keeper.scope().session,
            handle=str(handle)[:256],
            source=source if isinstance(source, str) else None,
            page=page if type(page) is int else None,
            found=not is_error,
            tokens=count_tokens(text),
            call_id=CALL_ID.get(),
            start_ns=start,
            end_ns=time.time_ns(),
        )
    except Exception:
        log.warning("slimtools: could not measure a %s call", keeper.companion, exc_info=True)
        return
    emit(event, keeper.on_event)


# -- measuring -------------------------------------------------------------------------------


def result_text(result: Any) -> str:
    """The text the model gets for a call's result (an envelope's JSON, a final result's text)."""
    if isinstance(result, Envelope):
        return str(result)
    text = getattr(result, "text", None) if isinstance(result, FinalResult) else None
    return text if isinstance(text, str) else dumps_str(result)


def raw_tokens(value: Any, counter: TokenCounter) -> int:
    """What ``value``, a tool's raw result, would cost the model (estimated past a size)."""
    if isinstance(value, str):
        return text_tokens(value, counter)
    if isinstance(value, (bytes, bytearray)):
        return text_tokens(bytes(value).decode("utf-8", "replace"), counter)
    if isinstance(value, (Envelope, FinalResult)):
        return counter(result_text(value))
    if isinstance(value, (list, tuple)) and len(value) > _EXACT_ITEMS:
        n = len(value)
        sample = [value[i * n // _SAMPLED_ITEMS] for i in range(_SAMPLED_ITEMS)]
        return round(text_tokens(dumps_str(sample), counter) * n / _SAMPLED_ITEMS)
    return text_tokens(dumps_str(value), counter)


def text_tokens(text: str, counter: TokenCounter) -> int:
    """``counter(text)``, or for a long text an estimate from evenly spaced slices."""
    n = len(text)
    if n <= _EXACT_CHARS:
        return counter(text)
    step = n // _SLICES
    sampled = sum(counter(text[i * step : i * step + _SLICE_CHARS]) for i in range(_SLICES))
    return round(sampled * n / (_SLICES * _SLICE_CHARS))


def _shown(cfg: SlimConfig, result: Any) -> tuple[int, int, str]:
    """Items (or lines) shown, the total, and which of the two they count."""
    if not isinstance(result, Envelope):
        return 0, 0, "items"  # a final result passed through: nothing was slimmed
    if result.text is None:
        return len(result.briefs), result.total, "items"
    lines = split_lines(result.text) if result.text else []
    spec = cfg.handles
    if (
        cfg.paging is None
        and spec is not None
        and spec.tail
        and len(lines) > spec.head
        and _OMITTED.match(lines[spec.head])
    ):
        return len(lines) - 1, result.total, "lines"  # the marker in place of the middle
    return len(lines), result.total, "lines"


@contextmanager
def bound_call(session_id: str | None, call_id: str | None) -> Iterator[None]:
    """``slimtools.session(session_id)`` and the tool-call id of events, each when given."""
    token = CALL_ID.set(call_id) if call_id is not None else None
    try:
        if session_id:
            with session(session_id):
                yield
        else:
            yield
    finally:
        if token is not None:
            CALL_ID.reset(token)
