"""get_record: every handle question gets an answer the model can act on, never an exception."""

from __future__ import annotations

import gc
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import slimtools
from slimtools import StoreUnavailableError, Toolkit, paginate, summarize_with_handle
from slimtools.stores import MemoryStore
from slimtools.typing import HandleStore, Scope
from tests.core_helpers import build_tool, call_sync
from tests.strategies import json_values

ISSUES = [{"id": i, "title": f"issue {i}", "body": "long"} for i in range(5)]
PULLS = [{"id": i, "title": f"pull {i}", "diff": "+1"} for i in range(3, 8)]


class Clock:
    """A hand-moved clock for TTL tests."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _kit(**options: Any) -> Toolkit:
    """A toolkit with two tools whose ids overlap (3 and 4)."""
    kit = Toolkit("gh", **options)

    @kit.tool
    @summarize_with_handle(key="id")
    def list_issues(repo: str) -> list[dict[str, Any]]:
        """List issues."""
        return ISSUES

    @kit.tool
    @summarize_with_handle(key="id")
    def list_pulls(repo: str) -> list[dict[str, Any]]:
        """List pull requests."""
        return PULLS

    return kit


def test_get_record_resolves_handles_from_every_tool():
    """One companion expands handles of all the toolkit's tools."""
    kit = _kit()
    kit.spec("list_issues").function("r")
    kit.spec("list_pulls").function("r")
    assert json.loads(kit.get_record(1)) == ISSUES[1]
    assert json.loads(kit.get_record(7)) == PULLS[4]


def test_an_ambiguous_handle_names_the_sources_to_choose_from():
    """The same id from two tools asks for ``source=`` and gives both calls."""
    kit = _kit()
    kit.spec("list_issues").function("r")
    kit.spec("list_pulls").function("r")
    assert kit.get_record(3) == (
        'Handle "3" matches records from several tools (list_issues, list_pulls). '
        'Call get_record("3", source="list_issues") or get_record("3", source="list_pulls").'
    )


def test_source_picks_the_tool_for_an_ambiguous_handle():
    """``get_record(3, source="list_pulls")`` returns the pull, not the issue."""
    kit = _kit()
    kit.spec("list_issues").function("r")
    kit.spec("list_pulls").function("r")
    assert json.loads(kit.get_record(3, source="list_pulls")) == PULLS[0]
    assert json.loads(kit.get_record(3, source="list_issues")) == ISSUES[3]


def test_the_same_record_from_two_tools_is_not_ambiguous():
    """When both tools hold an identical record under the handle, it is returned."""
    kit = Toolkit("k")
    for name in ("a", "b"):
        kit.tool(summarize_with_handle(key="id")(lambda: [{"id": 1, "x": 1}]), name=name)
        kit.spec(name).function()
    assert json.loads(kit.get_record(1)) == {"id": 1, "x": 1}


def test_an_unknown_source_lists_the_tools_that_keep_handles():
    """``source="nope"`` is answered with the valid sources."""
    assert _kit().get_record(1, source="nope") == (
        "No tool 'nope' keeps handles in this toolkit; sources: list_issues, list_pulls."
    )


@pytest.mark.parametrize("source", [["list_issues"], {"a": 1}, 3])
def test_a_source_that_is_not_a_name_gets_a_message(source):
    """A list, dict or number as ``source`` is answered, not raised."""
    message = _kit().get_record(1, source=source)
    assert message.startswith("No tool ")


def test_an_unknown_handle_says_how_to_recover():
    """An unknown handle tells the model to call the source tool again."""
    assert _kit().get_record(42) == (
        'No record for handle "42" in this session: it is unknown or has expired. '
        "Call list_issues or list_pulls again to get fresh handles."
    )


def test_an_expired_handle_reads_like_an_unknown_one():
    """After the store's TTL the handle is gone, with the same advice."""
    clock = Clock()
    kit = _kit(store=MemoryStore(ttl=60, clock=clock))
    kit.spec("list_issues").function("r")
    assert json.loads(kit.get_record(1)) == ISSUES[1]
    clock.now += 61
    assert kit.get_record(1).startswith('No record for handle "1" in this session')


@pytest.mark.parametrize("handle", ["", "   ", None, [1], {"id": 1}, "x" * 300, '""'])
def test_a_malformed_handle_says_what_handles_look_like(handle):
    """Empty, null, structured or absurdly long handles get an explanation with examples."""
    message = _kit().get_record(handle)
    assert "is not a handle" in message
    assert 'get_record("k3f9a2qd")' in message


def test_a_handle_from_another_session_is_unknown():
    """A handle made in one session does not resolve in another, and says nothing more."""
    kit = _kit()
    with slimtools.session("alice"):
        kit.spec("list_issues").function("r")
        assert json.loads(kit.get_record(2)) == ISSUES[2]
    with slimtools.session("bob"):
        assert kit.get_record(2).startswith('No record for handle "2" in this session')


def test_a_toolkit_without_handle_tools_still_answers():
    """With no tool keeping handles, get_record explains instead of failing."""
    kit = Toolkit("empty")
    assert kit.get_record(1).endswith(
        "Repeat the search or read that showed it to get fresh handles."
    )


def test_unregistered_tools_use_slimtools_get_record():
    """A decorated tool outside any toolkit resolves through ``slimtools.get_record``."""

    @summarize_with_handle(key="id")
    def list_issues(repo: str) -> list[dict[str, Any]]:
        return ISSUES

    list_issues("r")
    assert json.loads(slimtools.get_record(4)) == ISSUES[4]
    assert json.loads(slimtools.default_toolkit.get_record("4")) == ISSUES[4]


def test_an_unregistered_tool_is_a_source_before_its_first_call():
    """A decorated tool is known to the default get_record as soon as it is defined."""

    @summarize_with_handle(key="id")
    def list_tickets(repo: str) -> list[dict[str, Any]]:
        return ISSUES

    assert "list_tickets" in slimtools.get_record(1).removesuffix(" again to get fresh handles.")


def test_a_tool_no_longer_referenced_stops_being_a_source():
    """The default toolkit forgets a handle tool once nothing refers to it any more."""

    @summarize_with_handle(key="id")
    def list_ephemeral(repo: str) -> list[dict[str, Any]]:
        return ISSUES

    assert "list_ephemeral" in slimtools.get_record(1)
    del list_ephemeral
    gc.collect()
    assert "list_ephemeral" not in slimtools.get_record(1)


def test_a_tool_a_toolkit_registers_keeps_its_handles_there_only():
    """@kit.tool over a decorated tool: the kit resolves its handles, the default does not."""
    kit = Toolkit("kept")

    @kit.tool
    @summarize_with_handle(key="id")
    def list_owned(repo: str) -> list[dict[str, Any]]:
        return ISSUES

    list_owned("r")
    gc.collect()
    assert json.loads(kit.get_record(2)) == ISSUES[2]
    assert "list_owned" not in slimtools.get_record(2)


async def test_aget_record_answers_like_get_record():
    """The async companion gives the same answers."""
    kit = _kit()
    kit.spec("list_issues").function("r")
    assert json.loads(await kit.aget_record(1)) == ISSUES[1]
    assert (await kit.aget_record(99)).startswith("No record")


@given(handle=json_values, source=st.none() | json_values, page=json_values)
def test_get_record_never_raises(handle, source, page):
    """Whatever the model sends, get_record returns text."""
    kit = _kit()
    kit.spec("list_issues").function("r")
    assert isinstance(kit.get_record(handle, source=source, page=page), str)


# a store that fails --------------------------------------------------------------------


class BrokenStore:
    """A handle store whose every call raises, like an unreachable Redis."""

    def put_many(self, scope: Scope, items: Mapping[str, Any]) -> Collection[str]:
        raise StoreUnavailableError("connection refused")

    def get_many(self, scope: Scope, keys: Sequence[str]) -> dict[str, Any]:
        raise StoreUnavailableError("connection refused")

    def close(self) -> None:
        """Nothing to release."""


def test_broken_store_is_a_handle_store():
    """The failing store satisfies the protocol, so the toolkit accepts it."""
    assert isinstance(BrokenStore(), HandleStore)


def test_a_failing_store_still_returns_the_envelope_with_a_note(kind):
    """The tool still answers; the hint says handles cannot be expanded now."""
    kit = Toolkit("k", store=BrokenStore())
    tool = kit.tool(build_tool(kind, [summarize_with_handle(key="id")], lambda q: ISSUES))
    env = call_sync(tool, "r")
    assert env.briefs == ISSUES
    assert "the handle store is unavailable, so these handles cannot be expanded now" in env.hint


def test_get_record_says_the_store_is_unavailable():
    """With a failing store get_record says so and how to recover."""
    kit = _kit(store=BrokenStore())
    assert kit.get_record(1) == (
        'The handle store is unavailable right now, so handle "1" cannot be read. '
        "Try again later, or call list_issues or list_pulls again."
    )


def test_a_failing_store_does_not_stop_paging():
    """Page 2 with a failing store is computed from a fresh call, with notes."""
    kit = Toolkit("k", store=BrokenStore())
    tool = kit.tool(paginate(limit=2)(lambda: ISSUES), name="recent")
    env = tool(page=2)
    assert env.briefs == ISSUES[2:4]
    assert "unavailable" in env.hint


def test_a_huge_source_is_quoted_clipped_in_the_answer():
    """A megabyte ``source`` is named by its head, not echoed whole into the context."""
    answer = _kit().get_record(1, source="x" * 1_000_000)
    assert len(answer) < 300
    assert answer.startswith("No tool 'xxx")


def test_a_huge_page_is_quoted_clipped_in_the_answer():
    """A megabyte ``page`` string gets the page rule with the value's head only."""
    kit = _kit()
    kit.spec("list_issues").function("r")
    answer = kit.get_record(1, page="9" * 1_000_000)  # type: ignore[arg-type]
    assert len(answer) < 300
    assert answer.startswith('page must be an integer >= 1, got "999')


def test_a_source_whose_repr_raises_gets_a_message():
    """An object as ``source`` that cannot even be printed still gets the list of sources."""

    class Unprintable:
        def __repr__(self) -> str:
            raise RuntimeError("repr boom")

    answer = _kit().get_record(1, source=Unprintable())  # type: ignore[arg-type]
    assert answer.endswith("sources: list_issues, list_pulls.")
