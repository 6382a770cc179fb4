"""Every protocol and alias users implement, in one place (each is defined beside its data).

- :class:`HandleStore` (and the optional :class:`AsyncHandleStore` and
  :class:`ForgettingStore`) with :class:`Scope`: a store for full records behind handles
  (``slimtools.testing`` ships its conformance suite).
- :class:`Audit`: a sink for the originals clearing replaces.
- :data:`TokenCounter`: text in, a token count out.
- :data:`OnError`: how a tool's exception reads to the model.
- :data:`PlaceholderTemplate`: how a cleared result reads.
- :data:`Summarizer`: what compaction folds messages into.
- :data:`Listener`: hears each event (``slimtools.observe``, ``on_event=``).
"""

from slimtools.clearing.audit import Audit
from slimtools.clearing.placeholder import PlaceholderTemplate
from slimtools.compaction import Summarizer
from slimtools.errors import OnError
from slimtools.instrumentation import Listener
from slimtools.stores.base import (
    DEFAULT_SESSION,
    AsyncHandleStore,
    ForgettingStore,
    HandleStore,
    Scope,
)
from slimtools.tokens import TokenCounter

__all__ = [
    "DEFAULT_SESSION",
    "AsyncHandleStore",
    "Audit",
    "ForgettingStore",
    "HandleStore",
    "Listener",
    "OnError",
    "PlaceholderTemplate",
    "Scope",
    "Summarizer",
    "TokenCounter",
]
