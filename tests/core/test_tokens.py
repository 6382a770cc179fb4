"""count_tokens: a fast offline estimate that counts CJK text sensibly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from slimtools.tokens import count_tokens
from slimtools.typing import TokenCounter
from tests.strategies import texts


def test_empty_text_is_zero_tokens():
    """Nothing costs nothing."""
    assert count_tokens("") == 0


def test_ascii_is_about_four_characters_a_token():
    """English and code count one token per four characters, rounded up."""
    assert count_tokens("abcd" * 25) == 25
    assert count_tokens("a") == 1


def test_cjk_is_about_a_token_a_character():
    """Chinese, Japanese and Korean count one token per character, not len/4."""
    assert count_tokens("日本語の文章です") == 8
    assert count_tokens("한국어") == 3
    assert count_tokens("漢" * 400) == 400


def test_other_non_ascii_is_about_two_characters_a_token():
    """Accented Latin, Cyrillic or emoji count one token per two characters."""
    assert count_tokens("привет") == 3


def test_mixed_text_adds_its_parts():
    """A mix counts each script at its own rate."""
    assert count_tokens("abcd日本") == 1 + 2


@given(text=texts)
def test_non_empty_text_counts_between_one_and_its_length(text):
    """Any non-empty text is at least one token and at most a token per character."""
    if text:
        assert 1 <= count_tokens(text) <= len(text)


@given(a=st.text(), b=st.text())
def test_counts_are_nearly_additive(a, b):
    """Joining two texts never costs more than the two apart (rounding only saves)."""
    assert count_tokens(a + b) <= count_tokens(a) + count_tokens(b)


def test_any_callable_is_a_token_counter():
    """``TokenCounter`` is a plain callable type: ``len`` or a lambda will do."""
    counters: list[TokenCounter] = [count_tokens, len, lambda s: len(s.split())]
    assert [c("a b c") for c in counters] == [2, 5, 3]
