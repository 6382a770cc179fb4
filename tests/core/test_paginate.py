"""paginate: page and limit in the signature, consistent pages, exact next calls, bad input."""

from __future__ import annotations

import inspect
import json
import random
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import ConfigurationError, Toolkit, paginate
from tests._profile import examples
from tests.core_helpers import KINDS, build_tool, call_sync, next_call

ROWS = [{"id": i, "msg": f"m{i}"} for i in range(12)]


def _rows(_query: str) -> list[dict[str, Any]]:
    return ROWS


def _field_info(annotation: Any) -> Any:
    assert typing.get_origin(annotation) is typing.Annotated
    return typing.get_args(annotation)[1]


def test_signature_gains_keyword_only_page_and_limit(make_tool):
    """``inspect.signature`` shows ``page: int = 1`` and ``limit: int = <limit>``, keyword-only."""
    tool = make_tool([paginate(limit=3, max_limit=10)], _rows)
    params = inspect.signature(tool).parameters
    assert list(params) == ["query", "page", "limit"]
    assert params["page"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["page"].default == 1
    assert params["limit"].default == 3


def test_type_hints_describe_page_and_limit(make_tool):
    """``get_type_hints`` gives ``Annotated[int, Field(description=...)]`` for both."""
    tool = make_tool([paginate(limit=3, max_limit=10)], _rows)
    hints = typing.get_type_hints(tool, include_extras=True)
    assert typing.get_args(hints["page"])[0] is int
    assert "1-based" in _field_info(hints["page"]).description
    assert "1 to 10" in _field_info(hints["limit"]).description
    assert hints["query"] is str


def test_total_is_the_full_count(make_tool, call):
    """``total`` counts every record, not the page."""
    env = call(make_tool([paginate(limit=3)], _rows), "x")
    assert env.total == 12
    assert len(env.briefs) == 3


def test_hint_gives_the_exact_next_call(make_tool, call):
    """The hint names the remaining count and the call for page 2."""
    env = call(make_tool([paginate(limit=3)], _rows), "timeout")
    assert env.hint == '9 more: search(query="timeout", page=2)'


def test_following_the_hint_returns_the_next_page(make_tool, call):
    """Calling exactly what the hint says shows the next records."""
    tool = make_tool([paginate(limit=5)], _rows)
    env = call(tool, "x")
    nxt = next_call(env.hint, "search")
    assert nxt is not None
    env2 = call(tool, **nxt)
    assert [b["id"] for b in env2.briefs] == [5, 6, 7, 8, 9]
    assert env2.page == 2


def test_last_page_says_so(make_tool, call):
    """The last page has no next call and says how many there were in all."""
    tool = make_tool([paginate(limit=5)], _rows)
    call(tool, "x")
    env = call(tool, "x", page=3)
    assert [b["id"] for b in env.briefs] == [10, 11]
    assert env.hint == "last page (12 in all)"


def test_everything_on_page_one_says_all_shown(make_tool, call):
    """A result that fits on one page says every item is shown."""
    assert call(make_tool([paginate(limit=20)], _rows), "x").hint == "all 12 shown"


def test_page_one_is_not_shown_page_two_is(make_tool, call):
    """``page`` is omitted on page 1 (the default) and shown from page 2."""
    tool = make_tool([paginate(limit=5)], _rows)
    assert "page" not in json.loads(str(call(tool, "x")))
    assert json.loads(str(call(tool, "x", page=2)))["page"] == 2


def test_a_non_default_limit_is_kept_in_the_next_call(make_tool, call):
    """The next call repeats the caller's limit when it is not the default."""
    env = call(make_tool([paginate(limit=3)], _rows), "x", limit=4)
    assert env.hint == '8 more: search(query="x", page=2, limit=4)'


def test_empty_result_says_there_are_no_results(make_tool, call):
    """An empty result gives total 0, no briefs and a hint that says so."""
    env = call(make_tool([paginate(limit=3)], lambda q: []), "x")
    assert (env.total, env.briefs) == (0, [])
    assert env.hint == "no results"


@st.composite
def _walks(draw: st.DrawFn) -> tuple[list[int], int, int, str]:
    ids = draw(st.lists(st.integers(0, 10_000), unique=True, max_size=60))
    limit = draw(st.integers(1, 12))
    seed = draw(st.integers(0, 2**32))
    return ids, limit, seed, draw(st.sampled_from(KINDS))


@settings(max_examples=examples(60), deadline=None)
@given(walk=_walks())
def test_walking_all_pages_yields_every_record_once_despite_reordering(walk):
    """Pages come from a page-1 snapshot, so a backend that reorders loses and repeats nothing."""
    ids, limit, seed, kind = walk
    shuffle = random.Random(seed)

    def backend(_query: str) -> list[dict[str, int]]:
        rows = [{"id": i} for i in ids]
        shuffle.shuffle(rows)
        return rows

    kit = Toolkit("walk")
    tool = kit.tool(build_tool(kind, [paginate(limit=limit, max_limit=20)], backend))
    seen: list[int] = []
    args: dict[str, Any] | None = {"query": "q"}
    while args is not None:
        env = call_sync(tool, **args)
        assert env.total == len(ids)
        seen += [b["id"] for b in env.briefs]
        args = next_call(env.hint, "search")
        assert len(seen) <= len(ids)
    assert sorted(seen) == sorted(ids)
    assert len(seen) == len(set(seen))


def test_backend_runs_once_per_call_and_not_for_later_pages(make_tool, call):
    """Page 1 calls the backend; page 2 reads the snapshot instead."""
    calls = []

    def backend(query: str) -> list[dict[str, int]]:
        calls.append(query)
        return ROWS

    tool = make_tool([paginate(limit=5)], backend)
    call(tool, "x")
    call(tool, "x", page=2)
    assert calls == ["x"]


def test_page_two_without_a_snapshot_fetches_again_and_says_so(make_tool, call):
    """If the page-1 snapshot is gone, page 2 is computed from a fresh call, with a note."""
    env = call(make_tool([paginate(limit=5)], _rows), "fresh", page=2)
    assert [b["id"] for b in env.briefs] == [5, 6, 7, 8, 9]
    assert "fetched again" in env.hint


def test_different_arguments_use_different_snapshots(make_tool, call):
    """Page 2 of one query never comes from another query's snapshot."""

    def backend(query: str) -> list[dict[str, str]]:
        return [{"q": query, "n": str(i)} for i in range(6)]

    tool = make_tool([paginate(limit=3)], backend)
    call(tool, "a")
    call(tool, "b")
    assert {b["q"] for b in call(tool, "a", page=2).briefs} == {"a"}


def test_page_past_the_end_gives_an_envelope_with_the_valid_range(make_tool, call):
    """Page 9 of 3 returns no briefs, the full total, and the call for the last page."""
    tool = make_tool([paginate(limit=5)], _rows)
    env = call(tool, "x", page=9)
    assert env.briefs == []
    assert env.total == 12
    assert "page 9 is past the end: 12 items in 3 pages of 5" in env.hint
    assert next_call(env.hint, "search") == {"query": "x", "page": 3}


@pytest.mark.parametrize("page", [0, -1, "2", 1.5, None, True])
def test_invalid_page_gives_an_envelope_that_says_what_is_valid(make_tool, call, page):
    """Page 0, negative, or not an int: no exception, a hint naming page 1."""
    env = call(make_tool([paginate(limit=5)], _rows), "x", page=page)
    assert env.briefs == []
    assert "not a valid page" in env.hint
    assert next_call(env.hint, "search") == {"query": "x", "page": 1}


@pytest.mark.parametrize("limit", [0, -3, "5", 2.5, None, False])
def test_invalid_limit_falls_back_to_the_default_and_says_so(make_tool, call, limit):
    """A bad limit uses the default limit, and the hint says what is valid."""
    env = call(make_tool([paginate(limit=4, max_limit=10)], _rows), "x", limit=limit)
    assert len(env.briefs) == 4
    assert "limit must be an integer from 1 to 10; used 4" in env.hint


def test_limit_above_max_limit_is_capped_and_says_so(make_tool, call):
    """``limit=500`` with ``max_limit=10`` shows 10 and says the limit was capped."""
    env = call(make_tool([paginate(limit=4, max_limit=10)], _rows), "x", limit=500)
    assert len(env.briefs) == 10
    assert env.hint.startswith("limit capped at 10")
    assert next_call(env.hint, "search") == {"query": "x", "page": 2, "limit": 10}


@pytest.mark.parametrize(
    "options", [{"limit": 0}, {"limit": "5"}, {"max_limit": 0}, {"limit": 10, "max_limit": 5}]
)
def test_bad_paginate_options_raise_configuration_error(options):
    """Options are checked when the decorator is applied, not when the model calls."""
    with pytest.raises(ConfigurationError):
        paginate(**options)


def test_a_tool_with_its_own_page_parameter_is_refused():
    """``paginate`` adds ``page``; a tool that already has one is a configuration error."""
    with pytest.raises(ConfigurationError, match="page"):

        @paginate
        def search(query: str, page: int = 1) -> list[int]:
            return []


def test_bare_decorator_uses_the_defaults():
    """``@paginate`` without parentheses pages by 20."""

    @paginate
    def search(query: str) -> list[int]:
        return list(range(50))

    env = search("x")
    assert (len(env.briefs), env.total) == (20, 50)
    assert inspect.signature(search).parameters["limit"].default == 20


def test_arguments_left_at_their_default_are_not_repeated_in_the_hint():
    """The next call shows the arguments the caller gave, positional ones by name."""

    @paginate(limit=2)
    def search(query: str, level: str = "ERROR", since: int = 0) -> list[int]:
        return list(range(5))

    assert search("x", since=3).hint == '3 more: search(query="x", since=3, page=2)'


class Matrix:
    """A value whose ``!=`` is not a bool (like a NumPy array)."""

    def __ne__(self, other: object) -> Any:
        raise ValueError("truth value of an array is ambiguous")

    __hash__ = None  # type: ignore[assignment]


def test_arguments_that_cannot_be_compared_to_their_default_are_shown():
    """An argument whose comparison raises is treated as given, not as a crash."""

    @paginate(limit=1)
    def search(query: str, weights: Any = None) -> list[int]:
        return [1, 2]

    assert search("x", weights=Matrix()).hint.startswith('1 more: search(query="x", weights=')


def test_page_and_limit_come_before_var_keyword_arguments():
    """With ``**filters`` the added parameters are inserted before it, as Python requires."""

    @paginate(limit=2)
    def search(query: str, **filters: str) -> list[int]:
        return list(range(5))

    assert list(inspect.signature(search).parameters) == ["query", "page", "limit", "filters"]
    assert search("x", level="E").hint == '3 more: search(query="x", level="E", page=2)'


# text results ------------------------------------------------------------------------

TEXT = "\n".join(f"line {i}" for i in range(1, 8))


def test_text_is_paged_by_lines(make_tool, call):
    """A string result is paged by lines; ``total`` is the line count."""
    env = call(make_tool([paginate(limit=3)], lambda q: TEXT), "a.py")
    assert (env.total, env.text) == (7, "line 1\nline 2\nline 3\n")
    assert env.hint == 'lines 1-3 of 7; next: search(query="a.py", page=2)'
    assert "briefs" not in json.loads(str(env))


def test_text_pages_follow_the_hint_to_the_end(make_tool, call):
    """Following the hint reads every line once; the last page has no next call."""
    tool = make_tool([paginate(limit=3)], lambda q: TEXT)
    env = call(tool, "a.py")
    pages = [env.text]
    while (nxt := next_call(env.hint, "search")) is not None:
        env = call(tool, **nxt)
        pages.append(env.text)
    assert "".join(pages) == TEXT
    assert env.hint == "lines 7-7 of 7"


def test_text_that_fits_is_shown_whole(make_tool, call):
    """A short text is shown as is with a hint counting its lines."""
    env = call(make_tool([paginate(limit=30)], lambda q: TEXT), "a.py")
    assert (env.text, env.hint) == (TEXT, "all 7 lines")


def test_text_page_past_the_end_says_what_is_valid(make_tool, call):
    """A text page past the end shows no text and the call for the last page."""
    tool = make_tool([paginate(limit=3)], lambda q: TEXT)
    call(tool, "a.py")
    env = call(tool, "a.py", page=5)
    assert env.text == ""
    assert "page 5 is past the end: 7 lines in 3 pages of 3" in env.hint


def test_bytes_results_are_paged_as_text():
    """Bytes are decoded as UTF-8 (invalid bytes replaced) and paged by lines."""

    @paginate(limit=1)
    def cat() -> bytes:
        return b"one\ntwo\xff"

    env = cat()
    assert (env.total, env.text) == (2, "one\n")
    assert cat(page=2).text == "two\ufffd"


line_texts = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=8),
    min_size=1,
    max_size=30,
)


@given(lines=line_texts, limit=st.integers(1, 10))
def test_text_pages_reproduce_the_lines_exactly(lines, limit):
    """Pages split on newlines only: form feeds, U+2028 and the like stay inside their line."""

    @paginate(limit=limit)
    def read(path: str) -> str:
        return text

    text = "\n".join(lines)
    pages: list[str] = []
    while True:
        env = read(f"{lines!r}-{limit}", page=len(pages) + 1)
        assert env.total == len(lines) - (lines[-1] == "")  # a final newline ends a line
        pages.append(env.text)
        if "next:" not in env.hint:
            break
    assert "".join(pages) == text


def test_a_final_newline_does_not_count_as_a_line():
    """``"a\\nb\\n"`` is two lines, like a file read line by line."""

    @paginate(limit=1)
    def read() -> str:
        return "a\nb\n"

    assert read().total == 2


def test_windows_line_endings_are_kept_on_pages():
    """``\\r\\n`` ends a line like ``\\n`` and stays on the page as it was."""

    @paginate(limit=2)
    def read() -> str:
        return "a\r\nb\r\nc\r\n"

    env = read()
    assert (env.total, env.text) == (3, "a\r\nb\r\n")
    assert read(page=2).text == "c\r\n"


def test_page_two_first_says_page_one_was_never_asked_for_and_gives_its_call(make_tool, call):
    """Page 2 of a query never seen in this session names page 1's call for consistent pages."""
    env = call(make_tool([paginate(limit=5)], _rows), "fresh", page=2)
    assert "page 1 was never asked for, or its snapshot expired" in env.hint
    assert 'start at search(query="fresh")' in env.hint


def test_a_large_limit_raises_the_default_max_limit():
    """``@paginate(limit=1000)`` needs no ``max_limit``: it defaults to ``max(100, limit)``."""
    tool = paginate(limit=1000)(lambda: list(range(2000)))
    assert len(tool().briefs) == 1000
    assert "1 to 1000" in str(inspect.signature(tool).parameters["limit"].annotation)
    assert "1 to 100 " in str(inspect.signature(paginate(limit=5)(list)).parameters["limit"])
