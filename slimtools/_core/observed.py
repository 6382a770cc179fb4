"""A slimmed call or a ``get_record`` lookup run while someone listens, and its event.

The shells (``slimtools._core.wrapper``) and ``Toolkit.get_record`` come here only after
checking that a listener exists, so nothing below costs anything otherwise. A call runs
the same engine through the same driver as always; only the tool and the store are seen
through a :class:`Watch`, which keeps the raw result (to count what it would have cost) and
counts the handles written. Building the event never changes the result: a failure while
measuring is logged and the call returns what it would have returned.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, cast

from slimtools._core.config import Call, SlimConfig
from slimtools._core.drive import drive_async, drive_sync
from slimtools._core.jsonenc import dumps_str
from slimtools._core.keeper import Keeper
from slimtools._core.keys import is_snapshot_key
from slimtools._core.lookup import Answer
from slimtools._core.paging import split_lines
from slimtools._core.pipeline import FinalResult, run
from slimtools.envelope import Envelope
from slimtools.instrumentation._events import RecordLookup, SlimmedCall
from slimtools.instrumentation._registry import CALL_ID, emit
from slimtools.tokens import count_tokens
from slimtools.typing import AsyncHandleStore, HandleStore, Scope, TokenCounter

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


class _CountingStore:
    """The keeper's store, counting the handles each write keeps."""

    __slots__ = ("_store", "_watch")

    def __init__(self, store: HandleStore, watch: Watch) -> None:
        self._store = store
        self._watch = watch

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        return self._store.get_many(scope, keys)

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        refused = self._store.put_many(scope, items)
        self._watch.wrote(items, refused)
        return refused

    async def aget_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        return await cast("AsyncHandleStore", self._store).aget_many(scope, keys)

    async def aput_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        refused = await cast("AsyncHandleStore", self._store).aput_many(scope, items)
        self._watch.wrote(items, refused)
        return refused

    def close(self) -> None:
        self._store.close()


class Watch:
    """A keeper as the drivers see it (a ``Port``), noting what one call did."""

    __slots__ = ("handles", "keeper", "ran", "raw", "store", "store_is_async")

    def __init__(self, keeper: Keeper) -> None:
        self.keeper = keeper
        self.store: HandleStore = _CountingStore(keeper.store, self)
        self.store_is_async = keeper.store_is_async
        self.ran = False
        """Whether the tool ran (False: the page came from the page-1 snapshot)."""
        self.raw: Any = None
        self.handles = 0

    def scope(self) -> Scope:
        return self.keeper.scope()

    def unavailable(self, action: str, exc: Exception) -> Any:
        return self.keeper.unavailable(action, exc)

    def took(self, result: Any) -> Any:
        """Keep the tool's raw result; hand the pipeline the same data."""
        if isinstance(result, Iterator) and not isinstance(result, Mapping):
            # The pipeline turns any such iterator into this very tuple (``classify``);
            # made here, the result can still be measured once the pipeline consumed it.
            result = tuple(result)
        self.ran, self.raw = True, result
        return result

    def wrote(self, items: Mapping[str, Any], refused: Collection[str]) -> None:
        self.handles += sum(1 for k in items if not is_snapshot_key(k) and k not in refused)


def observed_sync(
    cfg: SlimConfig,
    keeper: Keeper,
    call: Call,
    wrapped: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    kwargs: dict[str, Any],
) -> Any:
    """Run a synchronous slim tool's call as ``drive_sync`` would; report it."""
    watch = Watch(keeper)
    start = time.time_ns()

    def tool(*a: Any, **k: Any) -> Any:
        return watch.took(wrapped(*a, **k))

    result = drive_sync(run(cfg, call), watch, tool, args, kwargs)
    _report_call(cfg, keeper, call, result, watch, start=start)
    return result


async def observed_async(
    cfg: SlimConfig,
    keeper: Keeper,
    call: Call,
    wrapped: Callable[..., Awaitable[Any]],
    args: tuple[Any, ...],
    *,
    kwargs: dict[str, Any],
) -> Any:
    """Run an asynchronous slim tool's call as ``drive_async`` would; report it."""
    watch = Watch(keeper)
    start = time.time_ns()

    async def tool(*a: Any, **k: Any) -> Any:
        return watch.took(await wrapped(*a, **k))

    result = await drive_async(run(cfg, call), watch, tool, args, kwargs)
    _report_call(cfg, keeper, call, result, watch, start=start)
    return result


def _report_call(
    cfg: SlimConfig, keeper: Keeper, call: Call, result: Any, watch: Watch, *, start: int
) -> None:
    try:
        end = time.time_ns()
        counter = cfg.counter
        shown, total, unit = _shown(cfg, result)
        event = SlimmedCall(
            tool=call.tool,
            toolkit=keeper.name,
            session=keeper.scope().session,
            tokens_before=raw_tokens(watch.raw, counter) if watch.ran else 0,
            tokens_after=counter(result_text(result)),
            shown=shown,
            total=total,
            unit=unit,
            handles=watch.handles,
            page=call.page if cfg.paging is not None and type(call.page) is int else None,
            from_snapshot=not watch.ran,
            call_id=CALL_ID.get(),
            start_ns=start,
            end_ns=end,
        )
    except Exception:
        log.warning("slimtools: could not measure a call of tool %r", call.tool, exc_info=True)
        return
    emit(event, keeper.on_event)


def lookup_sync(
    keeper: Keeper, engine: Any, handle: Any, source: Any, page: Any
) -> str:  # fmt: skip
    """Drive a ``get_record`` engine as ``Toolkit.get_record`` does; report the answer."""
    start = time.time_ns()
    answer: Answer = drive_sync(engine, keeper)
    _report_lookup(keeper, (handle, source, page), answer, start)
    return answer[0]


async def lookup_async(keeper: Keeper, engine: Any, handle: Any, source: Any, page: Any) -> str:
    """:func:`lookup_sync` for ``Toolkit.aget_record``."""
    start = time.time_ns()
    answer: Answer = await drive_async(engine, keeper)
    _report_lookup(keeper, (handle, source, page), answer, start)
    return answer[0]


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
