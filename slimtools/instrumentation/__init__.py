"""Live metrics: what each slimmed call, ``get_record`` answer and clearing pass did.

Listen with ``Toolkit(on_event=...)`` (that toolkit's tools), ``ClearingPolicy(on_event=...)``
(clearing under that policy) or :func:`observe` (everything, process-wide; also
``slimtools.observe``). Events are :class:`SlimmedCall`, :class:`RecordLookup`,
:class:`ClearingPass` and :class:`CacheBreak` (from a :class:`CacheWatch` fed each
response's usage). :mod:`slimtools.instrumentation.otel` reports them to OpenTelemetry
(``pip install 'slimtools[otel]'``). When nobody listens, no event is built.

(``slimtools.observe`` is the function; this namespace is not called ``observe`` because the
function would hide it: ``import slimtools.observe.otel as otel`` would then fail.)
"""

from slimtools.instrumentation._breaks import CacheWatch, cause_of, is_break
from slimtools.instrumentation._events import (
    CacheBreak,
    ClearingPass,
    Event,
    RecordLookup,
    SlimmedCall,
)
from slimtools.instrumentation._registry import Subscription, observe, tool_call_id
from slimtools.typing import Listener

__all__ = [
    "CacheBreak",
    "CacheWatch",
    "ClearingPass",
    "Event",
    "Listener",
    "RecordLookup",
    "SlimmedCall",
    "Subscription",
    "cause_of",
    "is_break",
    "observe",
    "tool_call_id",
]
