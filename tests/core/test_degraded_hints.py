"""When the handle store fails or refuses records, hints never offer what cannot be read."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from slimtools import StoreUnavailableError, Toolkit, paginate, summarize_with_handle
from slimtools.stores import MemoryStore
from slimtools.typing import Scope

ROWS = [{"id": i, "message": f"m{i}"} for i in range(6)]
TEXT = "\n".join(f"line {i}" for i in range(100))


class DownStore:
    """A handle store that is unreachable."""

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        raise StoreUnavailableError("down")

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        raise StoreUnavailableError("down")

    def close(self) -> None:
        """Nothing to release."""


def _kit(store: Any) -> Toolkit:
    kit = Toolkit("degraded", store=store)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return ROWS

    @kit.tool
    @summarize_with_handle(head=5, tail=2)
    def run(command: str) -> str:
        """Run a command."""
        return TEXT

    return kit


def test_a_store_that_is_down_offers_no_get_record():
    """The hint says handles cannot be expanded, and offers no get_record call."""
    env = _kit(DownStore()).call("search", {"query": "x"}).value
    assert "cannot be expanded now" in env.hint
    assert "get_record" not in env.hint
    assert 'search(query="x", page=2)' in env.hint


def test_a_text_head_with_the_store_down_offers_no_handle():
    """Head and tail of a text: no handle, and the omitted-lines marker names no call."""
    env = _kit(DownStore()).call("run", {"command": "make"}).value
    assert env.handle is None
    assert "get_record" not in str(env)
    assert "… 93 lines omitted …" in env.text


def test_page_two_with_the_store_down_says_so_and_tries_the_store_once():
    """A failed snapshot read is not followed by a write in the same call."""
    attempts: list[str] = []

    class Counting(DownStore):
        def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
            attempts.append("put")
            raise StoreUnavailableError("down")

        def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
            attempts.append("get")
            raise StoreUnavailableError("down")

    env = _kit(Counting()).call("search", {"query": "x", "page": 2}).value
    assert [b["id"] for b in env.briefs] == [2, 3]
    assert attempts == ["get"]
    assert "handle store is unavailable" in env.hint
    assert "get_record" not in env.hint


def test_a_first_record_too_large_to_keep_is_not_offered():
    """When the store refuses the first brief's record, the hint names no get_record for it."""
    kit = Toolkit("small", store=MemoryStore(max_bytes=10))

    @kit.tool
    @summarize_with_handle(key="id")
    def search() -> list[dict[str, Any]]:
        """Search."""
        return [{"id": 1, "body": "x" * 100}]

    env = kit.call("search").value
    assert "too large to keep, not expandable: 1" in env.hint
    assert "get_record(1)" not in env.hint
