"""The result types and base error exported from ``slimtools``: what each one carries."""

from __future__ import annotations

import json

import pytest

import slimtools
from slimtools import (
    ClearingPolicy,
    ConfigurationError,
    SlimtoolsError,
    StoreUnavailableError,
    paginate,
)
from slimtools.clearing import ClearingReport, HistoryView, clear_with_report, view
from slimtools.ledger import LedgerRow, LedgerSummary, TokenLedger


def _chat_history(turns: int) -> list[dict]:
    """An OpenAI Chat history of ``turns`` search calls with sizeable results."""
    history: list[dict] = [{"role": "user", "content": "find timeouts"}]
    for t in range(turns):
        call = {"id": f"c{t}", "type": "function"}
        call["function"] = {"name": "search_logs", "arguments": json.dumps({"page": t + 1})}
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{t}", "content": "timeout " * 400})
    return history


def test_every_exported_name_exists():
    """``__all__`` names only things the package really exports, sorted."""
    assert all(hasattr(slimtools, name) for name in slimtools.__all__)
    assert list(slimtools.__all__) == sorted(slimtools.__all__)


def test_slimtools_error_is_the_base_of_every_slimtools_exception():
    """Catching SlimtoolsError catches configuration and store errors alike."""
    assert issubclass(ConfigurationError, SlimtoolsError)
    assert issubclass(StoreUnavailableError, SlimtoolsError)
    with pytest.raises(SlimtoolsError):
        paginate(limit=0)


def test_clear_with_report_returns_a_clearing_report_of_what_went():
    """The report counts the cleared tool uses and names their call ids."""
    _, report = clear_with_report(_chat_history(5), ClearingPolicy(keep_turns=2, cache=None))
    assert isinstance(report, ClearingReport)
    assert report.cleared_tool_uses == 3
    assert report.cleared_call_ids == ("c0", "c1", "c2")
    assert report.cleared_input_tokens > 0


def test_view_returns_a_history_view_of_calls_and_results():
    """A HistoryView pairs every call with its result and bills every message."""
    history = _chat_history(3)
    seen = view(history)
    assert isinstance(seen, HistoryView)
    assert seen.format == "openai_chat"
    assert seen.turns == 3
    assert [c.id for c in seen.calls] == [r.call_id for r in seen.results] == ["c0", "c1", "c2"]
    assert len(seen.message_texts) == len(history)


def test_token_ledger_has_a_ledger_row_per_model_call_and_a_summary():
    """Rows are LedgerRows, one per model call; the summary totals them."""
    ledger = TokenLedger.measure(_chat_history(4))
    assert all(isinstance(row, LedgerRow) for row in ledger.rows)
    assert [row.round for row in ledger.rows] == [1, 2, 3, 4]
    summary = ledger.summary
    assert isinstance(summary, LedgerSummary)
    assert summary.rounds == 4
    assert summary.billed == sum(row.input_tokens for row in ledger.rows)
