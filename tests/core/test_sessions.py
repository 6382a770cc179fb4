"""Sessions: handles are scoped to a toolkit and a session; one user's never resolve for another."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

import slimtools
from slimtools import Toolkit, paginate, summarize_with_handle
from slimtools.stores import MemoryStore
from slimtools.typing import DEFAULT_SESSION, Scope

ROWS = [{"id": i, "secret_note": f"note {i}"} for i in range(6)]


def _kit(name: str = "s", **options: Any) -> tuple[Toolkit, Any]:
    kit = Toolkit(name, **options)

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=2)
    def search(query: str) -> list[dict[str, Any]]:
        """Search."""
        return ROWS

    return kit, search


def test_session_binds_and_restores_the_current_session():
    """Inside ``session("a")`` the current session is "a"; afterwards it is unbound again."""
    assert slimtools.current_session() is None
    with slimtools.session("a") as bound:
        assert bound == "a"
        assert slimtools.current_session() == "a"
        with slimtools.session("b"):
            assert slimtools.current_session() == "b"
        assert slimtools.current_session() == "a"
    assert slimtools.current_session() is None


@pytest.mark.parametrize("bad", ["", None, 3])
def test_a_session_id_must_be_a_non_empty_string(bad):
    """An empty or non-string session id is refused."""
    with pytest.raises(ValueError, match="session_id"), slimtools.session(bad):
        pass


def test_handles_made_in_one_session_do_not_resolve_in_another():
    """Alice's handle is unknown to Bob, with the ordinary unknown-handle message."""
    kit, search = _kit()
    with slimtools.session("alice"):
        search("x")
        assert json.loads(kit.get_record(1)) == ROWS[1]
    with slimtools.session("bob"):
        assert kit.get_record(1) == kit.get_record(12345).replace("12345", "1")


def test_without_a_session_the_toolkit_uses_its_default_session():
    """Outside ``session`` the scope is the toolkit's default session, "default" unless given."""
    kit, _ = _kit()
    assert kit.scope() == Scope("s", DEFAULT_SESSION)
    named, _ = _kit(session="worker")
    assert named.scope() == Scope("s", "worker")
    with slimtools.session("alice"):
        assert named.scope() == Scope("s", "alice")


def test_toolkits_sharing_a_store_and_name_resolve_each_others_handles():
    """Two processes (here two toolkits) on one store, no session bound, share handles."""
    store = MemoryStore()
    _first, search = _kit("shared", store=store)
    second, _ = _kit("shared", store=store)
    search("x")
    assert json.loads(second.get_record(1)) == ROWS[1]


def test_toolkits_with_different_names_never_share_handles():
    """The toolkit name is part of the scope, even on one store."""
    store = MemoryStore()
    _first, search = _kit("a", store=store)
    second, _ = _kit("b", store=store)
    search("x")
    assert second.get_record(1).startswith("No record")


def test_page_snapshots_are_per_session():
    """Page 2 in another session does not read the first session's snapshot."""
    _kit_unused, search = _kit()
    with slimtools.session("alice"):
        search("x")
    with slimtools.session("bob"):
        assert "fetched again" in search("x", page=2).hint


async def test_sessions_follow_asyncio_tasks():
    """Concurrent tasks bound to different sessions keep their own handles."""
    kit, search = _kit()

    async def user(name: str) -> str:
        with slimtools.session(name):
            search("x")
            await asyncio.sleep(0)
            return kit.get_record(0)

    alice, bob = await asyncio.gather(user("alice"), user("bob"))
    assert json.loads(alice) == json.loads(bob) == ROWS[0]
    with slimtools.session("carol"):
        assert kit.get_record(0).startswith("No record")


def test_sessions_are_per_thread():
    """A session bound in one thread is not bound in another."""
    seen: list[str | None] = []
    with slimtools.session("main"):
        worker = threading.Thread(target=lambda: seen.append(slimtools.current_session()))
        worker.start()
        worker.join()
    assert seen == [None]


def test_call_with_a_session_scopes_one_call():
    """``kit.call(..., session=...)`` binds the session only for that call."""
    kit, _ = _kit()
    kit.call("search", {"query": "x"}, session="alice")
    assert slimtools.current_session() is None
    assert not kit.call("get_record", {"handle": 0}, session="alice").is_error
    assert kit.call("get_record", {"handle": 0}).is_error
