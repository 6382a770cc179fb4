"""slimtools: keep LLM agents' context windows lean.

Slim tool results at the source (``project_fields``, ``paginate``, ``summarize_with_handle``
returning an ``Envelope``), refetch any item by handle (``Toolkit.get_record``), clear stale
results in place, and measure the bill.
"""

from slimtools._core.params import Hidden, Secret
from slimtools._core.session import current_session, session
from slimtools.clearing import (
    Audit,
    AuditRecord,
    CallView,
    Clearer,
    ClearingPolicy,
    ClearingReport,
    HistoryView,
    JsonlAudit,
    MemoryAudit,
    PlaceholderInfo,
    ResultView,
    SQLiteAudit,
    clear_stale_results,
    clear_with_report,
    detect_format,
    restore,
    view,
)
from slimtools.compaction import CompactionPolicy, ContextPipeline, compact
from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.envelope import Envelope
from slimtools.errors import ConfigurationError, SlimtoolsError, StoreUnavailableError
from slimtools.ledger import LedgerRow, LedgerSummary, TokenLedger, tool_result_bill
from slimtools.projection import Clip, clip_text
from slimtools.redaction import describe_error, redact
from slimtools.stores import SQLiteStore, open_store
from slimtools.stores.memory import AsyncHandleStore, HandleStore, MemoryStore, Scope
from slimtools.tokens import TokenCounter, count_tokens
from slimtools.toolkit import Toolkit, ToolResult, ToolSpec, default_toolkit, get_record
from slimtools.wrap import wrap

__all__ = [
    "AsyncHandleStore",
    "Audit",
    "AuditRecord",
    "CallView",
    "Clearer",
    "ClearingPolicy",
    "ClearingReport",
    "Clip",
    "CompactionPolicy",
    "ConfigurationError",
    "ContextPipeline",
    "Envelope",
    "HandleStore",
    "Hidden",
    "HistoryView",
    "JsonlAudit",
    "LedgerRow",
    "LedgerSummary",
    "MemoryAudit",
    "MemoryStore",
    "PlaceholderInfo",
    "ResultView",
    "SQLiteAudit",
    "SQLiteStore",
    "Scope",
    "Secret",
    "SlimtoolsError",
    "StoreUnavailableError",
    "TokenCounter",
    "TokenLedger",
    "ToolResult",
    "ToolSpec",
    "Toolkit",
    "clear_stale_results",
    "clear_with_report",
    "clip_text",
    "compact",
    "count_tokens",
    "current_session",
    "default_toolkit",
    "describe_error",
    "detect_format",
    "get_record",
    "open_store",
    "paginate",
    "project_fields",
    "redact",
    "restore",
    "session",
    "summarize_with_handle",
    "tool_result_bill",
    "view",
    "wrap",
]
