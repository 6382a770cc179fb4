"""Live metrics: what each slimmed call, ``get_record`` answer and clearing pass did.

Listen with ``Toolkit(on_event=...)`` (that toolkit's tools), ``ClearingPolicy(on_event=...)``
(clearing under that policy) or :func:`observe` (everything, process-wide; also
``slimtools.observe``). Events are :class:`SlimmedCall`, :class:`RecordLookup`,
:class:`ClearingPass`, :class:`CacheBreak` (from a :class:`CacheWatch` fed each
response's usage) and :class:`ProviderCacheMiss` (the provider's own count of cache misses,
from ``slimtools gateway --cache-diagnostics``). :mod:`slimtools.instrumentation.otel`
reports them to OpenTelemetry (``pip install 'slimtools[otel]'``). When nobody listens, no
event is built.

(``slimtools.observe`` is the function; this namespace is not called ``observe`` because the
function would hide it: ``import slimtools.observe.otel as otel`` would then fail.)

For the engines that report events (the slimming core, the clearer) and tools built on
them: :data:`REGISTRY` holds the process-wide listeners (check its flag before building an
event), :func:`emit` delivers an event to a local listener and the registry,
:func:`check_listener` validates a listener where it is configured, :data:`CALL_ID` is the
tool call being served, :data:`TTL_5M`/:data:`TTL_1H` are the cache lifetimes in seconds, and
:func:`usage_of` reads a response's usage (:class:`Usage`), live or recorded.
"""

from slimtools.instrumentation._breaks import (
    TTL_1H,
    TTL_5M,
    CacheWatch,
    cause_of,
    is_break,
)
from slimtools.instrumentation._events import (
    CacheBreak,
    ClearingPass,
    Event,
    Listener,
    ProviderCacheMiss,
    RecordLookup,
    SlimmedCall,
)
from slimtools.instrumentation._registry import (
    CALL_ID,
    REGISTRY,
    Subscription,
    check_listener,
    emit,
    observe,
    tool_call_id,
)
from slimtools.instrumentation._usage import Usage, usage_of

__all__ = [
    "CALL_ID",
    "REGISTRY",
    "TTL_1H",
    "TTL_5M",
    "CacheBreak",
    "CacheWatch",
    "ClearingPass",
    "Event",
    "Listener",
    "ProviderCacheMiss",
    "RecordLookup",
    "SlimmedCall",
    "Subscription",
    "Usage",
    "cause_of",
    "check_listener",
    "emit",
    "is_break",
    "observe",
    "tool_call_id",
    "usage_of",
]
