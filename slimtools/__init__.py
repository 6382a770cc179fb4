"""slimtools: keep LLM agents' context windows lean.

Slim tool results at the source (``project_fields``, ``paginate``, ``summarize_with_handle``
returning an ``Envelope``), refetch any item by handle (``Toolkit.get_record``), clear stale
results in place, and measure the bill.
"""

from slimtools._session import current_session, session
from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError, SlimtoolsError, StoreUnavailableError
from slimtools.handles import AsyncHandleStore, HandleStore, MemoryStore, Scope
from slimtools.projection import Clip, clip_text
from slimtools.stores import SQLiteStore, open_store
from slimtools.tokens import TokenCounter, count_tokens
from slimtools.toolkit import Toolkit, ToolResult, ToolSpec, default_toolkit, get_record

__all__ = [
    "AsyncHandleStore",
    "Clip",
    "ConfigurationError",
    "Envelope",
    "HandleStore",
    "MemoryStore",
    "SQLiteStore",
    "Scope",
    "SlimtoolsError",
    "StoreUnavailableError",
    "TokenCounter",
    "ToolResult",
    "ToolSpec",
    "Toolkit",
    "clip_text",
    "count_tokens",
    "current_session",
    "default_toolkit",
    "get_record",
    "open_store",
    "paginate",
    "project_fields",
    "session",
    "summarize_with_handle",
]
