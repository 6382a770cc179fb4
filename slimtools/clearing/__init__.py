"""Context-side clearing: replace stale tool results in place by informative placeholders.

``clear_stale_results(history, policy)`` takes an agent history (LangChain, OpenAI Chat
Completions, OpenAI Responses or Anthropic Messages) and returns a new list in the same
format with old tool results replaced; ``Clearer`` does the same incrementally for a growing
history; ``view`` reads any history the same way for measuring. ``ClearingPolicy`` says what
may be cleared and, under ``CachePricing``, whether clearing pays; audits keep the originals
(``restore`` puts them back; ``ScopedAudit`` lets histories share one sink).
"""

from __future__ import annotations

from slimtools.categories import infer_category, repeatable_tools
from slimtools.clearing._engine import Clearer
from slimtools.clearing.audit import (
    AuditRecord,
    JsonlAudit,
    MemoryAudit,
    ScopedAudit,
    SQLiteAudit,
    restore,
)
from slimtools.clearing.clear import clear_stale_results, clear_with_report
from slimtools.clearing.formats.media import MEDIA_TOKENS
from slimtools.clearing.formats.view import (
    FORMATS,
    CallView,
    HistoryView,
    ResultView,
    detect_format,
    view,
)
from slimtools.clearing.hints import ToolHints, tool_hints
from slimtools.clearing.marker import is_placeholder
from slimtools.clearing.placeholder import DEFAULT_TEMPLATE, PlaceholderInfo
from slimtools.clearing.policy import DEFAULT_RETENTION, ClearingPolicy
from slimtools.clearing.pricing import PRESETS, CachePricing
from slimtools.clearing.report import ClearingReport

__all__ = [
    "DEFAULT_RETENTION",
    "DEFAULT_TEMPLATE",
    "FORMATS",
    "MEDIA_TOKENS",
    "PRESETS",
    "AuditRecord",
    "CachePricing",
    "CallView",
    "Clearer",
    "ClearingPolicy",
    "ClearingReport",
    "HistoryView",
    "JsonlAudit",
    "MemoryAudit",
    "PlaceholderInfo",
    "ResultView",
    "SQLiteAudit",
    "ScopedAudit",
    "ToolHints",
    "clear_stale_results",
    "clear_with_report",
    "detect_format",
    "infer_category",
    "is_placeholder",
    "repeatable_tools",
    "restore",
    "tool_hints",
    "view",
]
