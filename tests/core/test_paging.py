"""The paging rules both engines share, and the store keys they read back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from slimtools._core.keys import handle_of, is_snapshot_key, record_key, snapshot_key, text_key
from slimtools._core.paging import (
    handle_call,
    page_count,
    page_of,
    past_end,
    tool_call,
)
from slimtools._core.textpages import describe, text_pages
from slimtools.tokens import count_tokens
from tests.strategies import texts

sizes = st.integers(min_value=1, max_value=12)


@given(items=st.lists(st.integers(), max_size=60), size=sizes)
def test_pages_partition_the_items(items, size):
    """Pages 1..page_count hold every item exactly once, in order."""
    pages = [page_of(items, n, size)[1] for n in range(1, page_count(len(items), size) + 1)]
    assert [x for page in pages for x in page] == items
    assert all(0 < len(page) <= size for page in pages) or items == []


@given(total=st.integers(min_value=0, max_value=500), size=sizes)
def test_page_count_is_the_fewest_pages_that_hold_everything(total, size):
    """At least one page; the last page is the first that reaches the end."""
    pages = page_count(total, size)
    assert pages >= 1
    assert (pages - 1) * size < max(total, 1) <= pages * size


@given(text=texts, size=sizes)
def test_text_pages_join_back_into_the_text(text, size):
    """The pages of a text, each at most ``size`` lines, concatenate to the text."""
    pages = text_pages(text, size, None, count_tokens)
    assert "".join(text[p.start : p.end] for p in pages) == text
    assert all(p.last - p.first < size for p in pages)


def test_a_text_page_says_which_lines_it_shows():
    """The hint's first part names the lines shown and how many there are."""
    pages = text_pages("a\nb\nc", 2, None, count_tokens)
    assert describe(pages[1], 3) == "lines 3-3 of 3"


def test_past_end_names_the_pages_and_the_call_to_make():
    """A page past the end says how many there are and which call to make instead."""
    message = past_end(9, valid=True, total=5, unit="items", size=2, retry="t(page=3)")
    assert message == "page 9 is past the end: 5 items in 3 pages of 2; t(page=3)"


def test_an_invalid_page_is_called_so():
    """A page that is not a positive integer is "not a valid page", shown as JSON."""
    message = past_end("x", valid=False, total=1, unit="lines", size=5, retry="t(page=1)")
    assert message.startswith('page "x" is not a valid page: 1 lines in 1 pages of 5')


def test_a_tool_call_leaves_out_the_default_limit():
    """The limit is written only when it differs from the tool's default."""
    assert tool_call("s", {"q": "a"}, page=2, limit=20, default=20) == 's(q="a", page=2)'
    assert tool_call("s", {}, page=None, limit=5, default=20) == "s(limit=5)"


def test_a_handle_call_writes_int_ids_bare_and_text_as_json():
    """``get_record(3)`` for an int id, ``get_record("3")`` for text, ``page=N`` verbatim."""
    assert handle_call("get_record", 3) == "get_record(3)"
    assert handle_call("get_record", "3", 2) == 'get_record("3", page=2)'
    assert handle_call("more", "h", "N") == 'more("h", page=N)'


names = st.text(min_size=1, max_size=8)


@given(tool=names, handle=st.text(max_size=8))
def test_a_key_gives_back_its_handle_even_with_colons(tool, handle):
    """Record and text keys read back the handle whatever ``:`` the tool or handle holds."""
    assert handle_of(record_key(tool, handle), tool) == handle
    assert handle_of(text_key(tool, handle), tool) == handle
    assert not is_snapshot_key(record_key(tool, handle))
    assert is_snapshot_key(snapshot_key(tool, handle))
