"""max_tokens: the serialised envelope stays within budget, and the hint says how to resume."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.tokens import count_tokens
from tests._profile import examples
from tests.core_helpers import KINDS, build_tool, call_sync, next_call
from tests.strategies import LogBrief, graphemes

ROWS = [{"id": i, "level": "INFO", "message": f"request {i} served"} for i in range(30)]

short_texts = st.lists(graphemes, max_size=30).map("".join)
rows_strategy = st.lists(
    st.fixed_dictionaries({"level": st.sampled_from(["INFO", "ERROR"]), "message": short_texts}),
    max_size=40,
).map(lambda rows: [{"id": i, **row} for i, row in enumerate(rows)])


@settings(max_examples=examples(80), deadline=None)
@given(
    rows=rows_strategy,
    budget=st.integers(1, 600),
    limit=st.integers(1, 20),
    handles=st.booleans(),
    kind=st.sampled_from(KINDS),
)
def test_an_envelope_with_briefs_never_exceeds_its_budget(rows, budget, limit, handles, kind):
    """Whenever a brief is shown, the whole serialised envelope fits in ``max_tokens``."""
    decorators: list[Any] = [paginate(limit=limit, max_limit=20, max_tokens=budget)]
    if handles:
        decorators.insert(0, summarize_with_handle(key="id"))
    decorators.append(project_fields(LogBrief))
    env = call_sync(build_tool(kind, decorators, lambda q: rows), "q")
    if env.briefs:
        assert count_tokens(str(env)) <= budget


huge_or_short = st.one_of(short_texts, st.just("a long stack trace line " * 200))
rows_with_huge = st.lists(
    st.fixed_dictionaries({"level": st.sampled_from(["INFO", "ERROR"]), "message": huge_or_short}),
    max_size=40,
).map(lambda rows: [{"id": i, **row} for i, row in enumerate(rows)])


@settings(max_examples=examples(60), deadline=None)
@given(
    rows=rows_with_huge,
    budget=st.integers(150, 600),
    limit=st.integers(1, 20),
    seed=st.integers(0, 2**32),
    handles=st.booleans(),
)
def test_following_the_budget_hint_shows_every_record_exactly_once(
    rows, budget, limit, seed, handles
):
    """Walking the hints' calls over a backend that reorders shows every record once.

    Pages after a budget cut come from the page-1 snapshot, so the backend runs once and its
    reordering cannot repeat or skip a record; a record too large for the budget still shows,
    clipped, with its handle.
    """
    shuffle = random.Random(seed)
    calls: list[str] = []

    def backend(query: str) -> list[dict[str, Any]]:
        calls.append(query)
        return shuffle.sample(rows, len(rows))

    decorators: list[Any] = [
        paginate(limit=limit, max_limit=20, max_tokens=budget),
        project_fields(LogBrief),
    ]
    if handles:
        decorators.insert(0, summarize_with_handle(key="id"))
    kit = Toolkit("budget")
    tool = kit.tool(build_tool("function", decorators, backend))
    seen: list[int] = []
    args: dict[str, Any] | None = {"query": "q"}
    while args is not None:
        env = tool(**args)
        assert env.briefs or not rows, env.hint
        assert "expired" not in env.hint
        seen += [b["id"] for b in env.briefs]
        args = next_call(env.hint, "search")
    assert sorted(seen) == sorted(r["id"] for r in rows)
    assert len(seen) == len(set(seen))
    assert len(calls) == 1


def test_a_page_cut_by_the_budget_keeps_its_snapshot():
    """A result that fits ``limit`` but not the budget is snapshotted for the resume call."""
    calls: list[str] = []

    @paginate(limit=30, max_tokens=80)
    def tool(query: str) -> list[dict[str, Any]]:
        calls.append(query)
        return ROWS if len(calls) == 1 else ROWS[::-1]  # the backend reorders later

    env = tool(query="q")
    nxt = next_call(env.hint, "tool")
    assert nxt is not None
    assert tool(**nxt).briefs[0]["id"] == len(env.briefs)
    assert calls == ["q"]


def test_a_record_larger_than_the_budget_shows_its_handle_clipped():
    """A single oversized record is shown clipped with its handle, never as 0 of 1 briefs."""
    kit = Toolkit("huge")
    row = {"id": 7, "level": "ERROR", "message": "stack frame " * 500}

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=5, max_tokens=60)
    def search(query: str) -> list[dict[str, Any]]:
        return [row]

    for limit in (1, 5):
        env = search("q", limit=limit)
        assert [b["id"] for b in env.briefs] == [7]
        assert count_tokens(str(env)) <= 60
        assert "clipped to stay within 60 tokens" in env.hint
        assert "get_record(7)" in env.hint
    assert json.loads(kit.get_record(7)) == row


def test_a_clipped_brief_resumes_after_itself():
    """The record shown clipped counts as shown: the rest call starts at the next one."""
    rows = [{"id": 0, "message": "x" * 2000}, {"id": 1, "message": "short"}]

    @summarize_with_handle(key="id")
    @paginate(limit=5, max_tokens=60)
    def tool() -> list[dict[str, Any]]:
        return rows

    env = tool()
    assert [b["id"] for b in env.briefs] == [0]
    nxt = next_call(env.hint, "tool")
    assert nxt is not None
    assert [b["id"] for b in tool(**nxt).briefs] == [1]


def test_the_hint_says_how_many_briefs_were_dropped_and_how_to_resume():
    """A trimmed page says "k of n briefs shown" and gives the call that starts after them."""

    @paginate(limit=10, max_tokens=80)
    def tool(query: str) -> list[dict[str, Any]]:
        return ROWS

    env = tool(query="q")
    k = len(env.briefs)
    assert 0 < k < 10
    assert f"{k} of 10 briefs shown to stay within 80 tokens" in env.hint
    nxt = next_call(env.hint, "tool")
    assert nxt is not None
    assert tool(**nxt).briefs[0]["id"] == k


def test_a_budget_too_small_for_any_brief_shows_none_and_says_so():
    """When not even a clipped brief fits, the envelope has no briefs and says so."""

    @summarize_with_handle(key="id")
    @paginate(limit=5, max_tokens=5)
    def search(query: str) -> list[dict[str, Any]]:
        return ROWS

    env = search("q")
    assert env.briefs == []
    assert "0 of 5 briefs shown to stay within 5 tokens; ask for a smaller limit" in env.hint
    assert "get_record" not in env.hint


def test_without_paging_the_budget_still_drops_briefs_and_says_so():
    """``summarize_with_handle(max_tokens=...)`` alone trims from the end with a note."""
    env = summarize_with_handle(key="id", max_tokens=60)(lambda: ROWS)()
    assert 0 < len(env.briefs) < len(ROWS)
    assert count_tokens(str(env)) <= 60
    assert f"{len(env.briefs)} of 30 briefs shown" in env.hint


def test_text_pages_hold_the_lines_the_budget_fits():
    """A text past the budget pages by fewer lines that fit, each page whole, none cut."""
    text = "\n".join(f"line number {i}" for i in range(100))
    env = paginate(limit=50, max_tokens=100)(lambda: text)()
    shown = env.text.split("\n")
    assert 0 < len(shown) < 50
    assert env.text.startswith("line number 0\n")
    assert env.text.endswith("\n")
    assert count_tokens(str(env)) <= 100
    assert "next: <lambda>(page=2)" in env.hint


def test_cjk_briefs_are_budgeted_at_about_a_token_a_character():
    """CJK text is counted near one token per character, so fewer CJK briefs fit."""
    latin = [{"id": i, "t": "abcdefghij" * 3} for i in range(20)]
    cjk = [{"id": i, "t": "日本語の文章です。" * 3} for i in range(20)]
    fit_latin = len(paginate(limit=20, max_tokens=200)(lambda: latin)().briefs)
    fit_cjk = len(paginate(limit=20, max_tokens=200)(lambda: cjk)().briefs)
    assert fit_cjk < fit_latin / 2


def test_a_custom_token_counter_is_used():
    """``token_counter=`` replaces the default estimate (here: one token per character)."""
    env = paginate(limit=30, max_tokens=300, token_counter=len)(lambda: ROWS)()
    assert len(str(env)) <= 300
    assert 0 < len(env.briefs) < 30


def test_an_envelope_within_budget_is_untouched():
    """A generous budget changes nothing."""
    tool = paginate(limit=5)(lambda: ROWS)
    roomy = paginate(limit=5, max_tokens=10_000)(lambda: ROWS)
    assert json.loads(str(roomy())) == json.loads(str(tool()))
