"""Handles a page's briefs show: an id handle keeps the first record it was shown with."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.errors import StoreUnavailableError
from slimtools.stores import MemoryStore
from slimtools.typing import Scope


class CountingStore(MemoryStore):
    """A memory store that notes each batch it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[list[str]] = []
        self.writes: list[list[str]] = []

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        self.reads.append(list(keys))
        return super().get_many(scope, keys)

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> list[str]:
        self.writes.append(list(items))
        return super().put_many(scope, items)


class ReadsFail(MemoryStore):
    """A store whose reads fail and whose writes are noted."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        raise StoreUnavailableError("connection refused")

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        self.writes += 1
        return super().put_many(scope, items)


def test_a_record_whose_denied_value_is_masked_keeps_its_id_handle_when_shown_again() -> None:
    """The stored (masked) form of a record is the same record: no generated handle."""
    kit = Toolkit("k")

    @kit.tool
    @summarize_with_handle(key="id")
    @project_fields(["id", "note"], deny=["password"])
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": 5, "password": "hunter22", "note": "pw is hunter22"}]

    kit.call("search", {"query": "a"})
    again = json.loads(kit.call("search", {"query": "a"}).text)
    assert again["briefs"] == [{"id": 5, "note": "pw is [redacted]"}]
    assert "hunter22" not in kit.get_record(5)


def test_later_pages_of_one_result_keep_their_id_handles() -> None:
    """Page 2, read from the page-1 snapshot, shows its records under their ids."""
    kit = Toolkit("k")

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": i, "query": query} for i in range(4)]

    kit.call("search", {"query": "a"})
    page2 = json.loads(kit.call("search", {"query": "a", "page": 2}).text)
    assert page2["briefs"] == [{"id": 2, "query": "a"}, {"id": 3, "query": "a"}]


def test_a_call_reads_the_ids_its_page_shows_in_one_batch() -> None:
    """One read of every id key of the page, then one write."""
    store = CountingStore()
    kit = Toolkit("k", store=store)

    @kit.tool
    @summarize_with_handle(key="id")
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": i} for i in (1, 2, 2)]

    kit.call("search", {"query": "a"})
    assert store.reads == [["r:search:1", "r:search:2"]]
    assert len(store.writes) == 1


def test_handles_fetched_live_read_nothing_first() -> None:
    """With ``fetch=`` nothing is kept, so nothing is read before the (absent) write."""
    store = CountingStore()
    kit = Toolkit("k", store=store)

    @kit.tool
    @summarize_with_handle(key="id", fetch=lambda handle: {"id": handle})
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": 1}]

    kit.call("search", {"query": "a"})
    assert store.reads == []


def test_a_store_that_fails_to_read_the_ids_is_not_written_in_that_call() -> None:
    """The tool still answers, saying handles cannot be kept, and the store is not tried again."""
    store = ReadsFail()
    kit = Toolkit("k", store=store)

    @kit.tool
    @summarize_with_handle(key="id")
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return [{"id": 1, "title": "one"}]

    result = kit.call("search", {"query": "a"})
    assert not result.is_error
    assert json.loads(result.text)["briefs"] == [{"id": 1, "title": "one"}]
    assert "unavailable" in result.text
    assert store.writes == 0
