"""The numbers a SlimmedCall and a RecordLookup carry, per decorator stack and store outcome."""

from __future__ import annotations

import logging

import pytest

from slimtools import (
    Toolkit,
    ToolResult,
    paginate,
    project_fields,
    summarize_with_handle,
)
from slimtools._json import dumps_str
from slimtools.instrumentation import RecordLookup, SlimmedCall, observe
from slimtools.stores import MemoryStore
from slimtools.tokens import count_tokens

ROWS = [{"id": i, "level": "ERROR", "message": f"upstream timeout {i} " * 4} for i in range(10)]
LINES = "\n".join(f"line {i}: connection reset by peer" for i in range(10))


def make(*decorators, result=ROWS, store=None, name="search"):
    """A toolkit listening to itself, and its tool returning ``result`` under ``decorators``."""
    heard: list = []
    kit = Toolkit("logs", on_event=heard.append, store=store)

    def search(query: str):
        return result() if callable(result) else result

    search.__name__ = name
    for decorator in reversed(decorators):
        search = decorator(search)
    return kit, kit.tool(search), heard


def test_a_paginated_projected_call_reports_what_it_showed_and_saved():
    """Page 1: the raw result's and the envelope's tokens, 3 of 10 items, no handle kept."""
    _, search, heard = make(paginate(limit=3), project_fields(["id", "level"]))
    env = search("timeout")
    (event,) = heard
    assert isinstance(event, SlimmedCall)
    assert (event.tool, event.toolkit, event.session) == ("search", "logs", "default")
    assert event.tokens_before == count_tokens(dumps_str(ROWS))
    assert event.tokens_after == count_tokens(str(env))
    assert event.tokens_saved == event.tokens_before - event.tokens_after > 0
    assert (event.shown, event.total, event.unit) == (3, 10, "items")
    assert (event.handles, event.page, event.from_snapshot) == (0, 1, False)
    assert event.call_id is None
    assert event.start_ns <= event.end_ns


def test_a_page_read_from_the_snapshot_saved_nothing_and_cost_its_envelope():
    """Page 2 runs no tool: ``tokens_before`` is 0, so summing savings gives the net saving."""
    _, search, heard = make(paginate(limit=3), project_fields(["id", "level"]))
    search("timeout")
    env = search("timeout", page=2)
    event = heard[-1]
    assert (event.from_snapshot, event.page, event.shown) == (True, 2, 3)
    assert event.tokens_before == 0
    assert event.tokens_saved == -count_tokens(str(env))


def test_every_brief_kept_under_a_handle_counts_once():
    """``summarize_with_handle`` keeps one record per brief; the page-1 snapshot is not a handle."""
    _, search, heard = make(summarize_with_handle(key="id"), paginate(limit=3))
    search("timeout")
    assert heard[-1].handles == 3


def test_project_fields_alone_shows_every_record_and_has_no_page():
    """Without ``@paginate`` every record is shown and ``page`` is None."""
    _, search, heard = make(project_fields(["id"]))
    search("timeout")
    assert (heard[-1].shown, heard[-1].total, heard[-1].page) == (10, 10, None)


def test_a_head_and_tail_text_counts_the_lines_it_shows_not_the_marker():
    """Head 2 and tail 1 of 10 lines: 3 lines shown (the omission marker is not one), 1 handle."""
    _, search, heard = make(summarize_with_handle(head=2, tail=1), result=LINES)
    env = search("q")
    event = heard[-1]
    assert "lines omitted" in (env.text or "")
    assert (event.shown, event.total, event.unit, event.handles) == (3, 10, "lines", 1)
    assert event.tokens_before == count_tokens(LINES)


def test_a_paginated_text_counts_the_lines_of_the_page():
    """A text paged by 4 lines: page 3 shows the last 2 of 10."""
    _, search, heard = make(paginate(limit=4), result=LINES)
    search("q")
    search("q", page=3)
    assert [(e.shown, e.total, e.unit) for e in heard] == [(4, 10, "lines"), (2, 10, "lines")]


def test_a_page_past_the_end_shows_nothing():
    """Page 9 of 4 pages: no item shown, the total still reported."""
    _, search, heard = make(paginate(limit=3))
    search("q")
    search("q", page=9)
    assert (heard[-1].shown, heard[-1].total, heard[-1].page) == (0, 10, 9)


def test_a_page_that_is_not_an_integer_is_reported_as_none():
    """A model-sent ``page="two"`` is answered with a note; the event has no page."""
    _, search, heard = make(paginate(limit=3))
    search("q", page="two")
    assert heard[-1].page is None


def test_a_live_fetch_keeps_no_handle():
    """With ``fetch=`` the briefs carry handles but nothing is written to the store."""
    _, search, heard = make(
        summarize_with_handle(key="id", fetch=lambda handle: {"id": handle}), paginate(limit=3)
    )
    search("q")
    assert heard[-1].handles == 0


class PickyStore(MemoryStore):
    """A store that refuses the record with handle 1."""

    def put_many(self, scope, items):
        refused = [k for k in items if k.endswith(":1")]
        super().put_many(scope, {k: v for k, v in items.items() if k not in refused})
        return refused


class BrokenStore(MemoryStore):
    """A store whose every write fails."""

    def put_many(self, scope, items):
        raise RuntimeError("disk full")


def test_records_the_store_refuses_are_not_counted():
    """Two of the three briefs' records were kept, so two handles."""
    _, search, heard = make(summarize_with_handle(key="id"), paginate(limit=3), store=PickyStore())
    search("q")
    assert heard[-1].handles == 2


def test_a_store_that_fails_keeps_no_handle_and_the_call_still_answers():
    """A failed write is no handle; the envelope is the one the call gives unobserved."""
    _, search, heard = make(summarize_with_handle(key="id"), paginate(limit=3), store=BrokenStore())
    plain_kit = Toolkit("logs", store=BrokenStore())
    plain = summarize_with_handle(key="id")(paginate(limit=3)(lambda query: ROWS))
    plain = plain_kit.tool(plain, name="search")
    assert search("q").to_json() == plain("q").to_json()
    assert heard[-1].handles == 0


def test_a_generator_result_is_measured_and_slimmed_as_unobserved():
    """A tool that yields its records: measured in full, and the same envelope as unobserved."""
    _, search, heard = make(paginate(limit=3), result=lambda: (r for r in ROWS))
    plain = Toolkit("plain").tool(paginate(limit=3)(lambda query: (r for r in ROWS)), name="search")
    assert search("q").to_json() == plain("q").to_json()
    assert heard[-1].tokens_before == count_tokens(dumps_str(ROWS))
    assert (heard[-1].shown, heard[-1].total) == (3, 10)


def test_a_large_result_is_estimated_within_two_percent():
    """5,000 records of varied size: the sampled estimate is close to the exact count."""
    rows = [{"id": i, "text": "x" * (20 + i % 97), "tags": ["a"] * (i % 5)} for i in range(5000)]
    _, search, heard = make(paginate(limit=20), result=rows)
    search("q")
    exact = count_tokens(dumps_str(rows))
    assert abs(heard[-1].tokens_before - exact) / exact < 0.02


def test_a_long_text_is_estimated_within_two_percent():
    """A 1 MB text, half ASCII and half CJK by region: the sampled estimate is close."""
    text = "\n".join(f"log line {i} " * 4 if i % 2 else "日本語のログ" * 8 for i in range(30000))
    _, search, heard = make(summarize_with_handle(head=5), result=text)
    search("q")
    exact = count_tokens(text)
    assert len(text) > 1_000_000
    assert abs(heard[-1].tokens_before - exact) / exact < 0.02


def test_the_tools_own_token_counter_counts_both_sides():
    """``token_counter=`` of ``@paginate`` counts the raw result and the envelope."""
    _, search, heard = make(paginate(limit=3, token_counter=len))
    env = search("q")
    assert heard[-1].tokens_before == len(dumps_str(ROWS))
    assert heard[-1].tokens_after == len(str(env))


def test_every_callable_kind_reports_the_same_numbers(make_tool, call):
    """Functions, async functions, methods, classmethods and staticmethods alike."""
    heard = []
    with observe(heard.append):
        call(make_tool([summarize_with_handle(key="id"), paginate(limit=3)], lambda q: ROWS), "q")
    (event,) = heard
    before = count_tokens(dumps_str(ROWS))
    assert (event.tokens_before, event.shown, event.total, event.handles) == (before, 3, 10, 3)


def test_a_final_result_passed_through_is_reported_as_unslimmed():
    """A ``ToolResult`` the tool returns is answered as it is: before equals after, none shown."""
    _, search, heard = make(paginate(limit=3), result=ToolResult("upstream error", True))
    search("q")
    event = heard[-1]
    assert event.tokens_before == event.tokens_after == count_tokens("upstream error")
    assert (event.shown, event.total) == (0, 0)


def test_a_failing_tool_raises_as_before_and_reports_nothing():
    """The tool's exception reaches the caller; no event claims a call that did not finish."""

    def boom():
        raise KeyError("backend down")

    _, search, heard = make(paginate(limit=3), result=boom)
    with pytest.raises(KeyError):
        search("q")
    assert heard == []


def test_a_measuring_failure_is_logged_and_the_result_kept(caplog):
    """A token counter that fails on the raw result: a WARNING, no event, the same envelope."""

    def picky(text: str) -> int:
        if "upstream" in text:
            raise ValueError("cannot count this")
        return len(text)

    _, search, heard = make(paginate(limit=3, token_counter=picky), project_fields(["id"]))
    with caplog.at_level(logging.WARNING, logger="slimtools"):
        env = search("q")
    assert env.total == 10
    assert heard == []
    assert "could not measure a call of tool 'search'" in caplog.text


def test_a_found_record_is_reported_with_its_cost():
    """``get_record(3)``: found, the answer's tokens, the handle as text."""
    kit, search, heard = make(summarize_with_handle(key="id"), paginate(limit=3))
    search("q")
    answer = kit.get_record(1, page=1)
    event = heard[-1]
    assert isinstance(event, RecordLookup)
    assert (event.tool, event.toolkit, event.handle, event.found) == (
        "get_record",
        "logs",
        "1",
        True,
    )
    assert (event.source, event.page, event.tokens) == (None, 1, count_tokens(answer))


def test_an_unknown_handle_is_reported_as_not_found():
    """A lookup that answers with a recovery message is ``found=False``."""
    kit, _search, heard = make(summarize_with_handle(key="id"), paginate(limit=3))
    kit.get_record("nope", source="search")
    assert (heard[-1].found, heard[-1].source) == (False, "search")


async def test_an_async_lookup_and_a_dispatched_one_are_reported_alike():
    """``aget_record`` and ``Toolkit.call("get_record")`` report like ``get_record``."""
    kit, search, heard = make(summarize_with_handle(key="id"), paginate(limit=3))
    search("q")
    sync = kit.get_record(2)
    asynchronous = await kit.aget_record(2)
    dispatched = kit.call("get_record", {"handle": 2}).text
    assert sync == asynchronous == dispatched
    lookups = [e for e in heard if isinstance(e, RecordLookup)]
    assert [(e.handle, e.found, e.tokens) for e in lookups] == [("2", True, count_tokens(sync))] * 3
