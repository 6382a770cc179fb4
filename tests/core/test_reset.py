"""Toolkit.reset forgets exactly the toolkit's stored handles and snapshots."""

from __future__ import annotations

import json
from typing import Any

import pytest

import slimtools
from slimtools import ConfigurationError, Toolkit, paginate, summarize_with_handle
from slimtools.stores import LangGraphStore, SQLiteStore
from slimtools.stores.memory import MemoryStore
from slimtools.typing import Scope

ROWS = [{"id": i, "body": f"row {i}"} for i in range(6)]


def _kit(store: Any = None) -> Toolkit:
    kit = Toolkit("resettable", store=store)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    def rows(query: str) -> list[dict[str, Any]]:
        """Rows."""
        return ROWS

    return kit


def test_reset_forgets_handles_in_every_session():
    """After reset, handles made in any session read as unknown."""
    kit = _kit()
    tool = kit.spec("rows").function
    with slimtools.session("alice"):
        tool("q")
    tool("q")
    kit.reset()
    with slimtools.session("alice"):
        assert kit.get_record(1).startswith('No record for handle "1"')
    assert kit.get_record(1).startswith('No record for handle "1"')


def test_reset_forgets_page_one_snapshots():
    """After reset, page 2 finds no snapshot and says it fetched again."""
    kit = _kit()
    tool = kit.spec("rows").function
    tool("q")
    kit.reset()
    assert "no page-1 snapshot of this query exists" in tool("q", page=2).hint


def test_reset_keeps_the_tools_and_other_toolkits_entries():
    """Registered tools still work afterwards; another toolkit on the same store keeps its own."""
    store = MemoryStore()
    kit = _kit(store)
    store.put_many(Scope("other"), {"r:x:1": {"id": 1}})
    kit.spec("rows").function("q")
    kit.reset()
    assert store.get_many(Scope("other"), ["r:x:1"]) == {"r:x:1": {"id": 1}}
    assert [s.name for s in kit.tools] == ["rows", "get_record"]
    kit.spec("rows").function("q")
    assert json.loads(kit.get_record(1)) == ROWS[1]


def test_reset_with_a_store_that_cannot_forget_says_what_to_do():
    """A store without forget(toolkit) raises a ConfigurationError naming it and the remedy."""
    from langgraph.store.memory import InMemoryStore

    store = LangGraphStore(InMemoryStore())
    with pytest.raises(ConfigurationError, match=r"forget\(toolkit\).*LangGraphStore"):
        _kit(store).reset()


def test_reset_forgets_handles_in_a_durable_store(tmp_path):
    """On a SQLite store, reset forgets the toolkit's handles and snapshots for every process."""
    store = SQLiteStore(tmp_path / "h.db")
    kit = _kit(store)
    tool = kit.spec("rows").function
    tool("q")
    assert json.loads(kit.get_record(1)) == ROWS[1]
    kit.reset()
    assert kit.get_record(1).startswith('No record for handle "1"')
    assert "no page-1 snapshot of this query exists" in tool("q", page=2).hint
    store.close()


def test_forget_drops_only_the_named_toolkits_entries():
    """MemoryStore.forget keeps every other toolkit's entries and counts bytes right."""
    store = MemoryStore()
    store.put_many(Scope("a", "s1"), {"k": "x" * 10})
    store.put_many(Scope("a", "s2"), {"k": "y"})
    store.put_many(Scope("b", "s1"), {"k": "z"})
    store.forget("a")
    assert len(store) == 1
    assert store.get_many(Scope("b", "s1"), ["k"]) == {"k": "z"}
    assert store.nbytes == len('"z"')
