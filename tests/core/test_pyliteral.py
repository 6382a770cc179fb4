"""Reading a long Python literal list item by item gives what one ``literal_eval`` gives."""

from __future__ import annotations

import ast

from hypothesis import given

from slimtools.projection._pyliteral import literal_items
from tests.strategies import literal_rows


@given(literal_rows)
def test_item_by_item_reading_equals_one_literal_eval(rows):
    """For any list of literals, the items read one by one are the list ``str()`` wrote."""
    assert literal_items(str(rows), 10_000) == ast.literal_eval(str(rows))


@given(literal_rows)
def test_a_tuple_reads_as_a_tuple(rows):
    """A top-level tuple literal is read item by item too, and stays a tuple."""
    text = str(tuple(rows))
    assert literal_items(text, 10_000) == ast.literal_eval(text)


def test_an_item_over_the_limit_is_not_read():
    """Memory follows the largest item: one item longer than the limit refuses the text."""
    assert literal_items(str([1, "x" * 50, 2]), 20) is None


def test_a_triple_quoted_string_is_not_cut():
    """A triple-quoted string (which ``repr`` never writes) is not scanned: not read."""
    assert literal_items("['''a, b''', 1]", 100) is None


def test_a_comment_is_not_cut():
    """A comment outside strings makes the scan unsure: not read."""
    assert literal_items("[1, # ' two\n 2]", 100) is None


def test_text_after_the_closing_bracket_is_not_read():
    """``[1], [2]`` is not one list: not read."""
    assert literal_items("[1], [2]", 100) is None


def test_an_empty_list_and_a_trailing_comma_read():
    """``[]`` is an empty list and ``[1, 2, ]`` is ``[1, 2]``, as ``literal_eval`` reads them."""
    assert (literal_items("[]", 10), literal_items("[1, 2, ]", 10)) == ([], [1, 2])


def test_a_parenthesised_item_is_not_a_tuple():
    """``(1)`` is the number 1, not a tuple: not read as a list of items."""
    assert literal_items("(1)", 10) is None
