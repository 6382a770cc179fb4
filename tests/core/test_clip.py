"""clip_text and Clip: cut long text on safe boundaries, within the limit, and mark the cut."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools import Clip, ConfigurationError
from slimtools.clip import clip_text
from tests.strategies import grapheme_lists, texts

limits = st.integers(min_value=2, max_value=60)


@given(text=texts, limit=limits)
def test_clipped_text_never_exceeds_the_limit(text, limit):
    """The result, marker included, is at most ``max_chars`` characters."""
    assert len(clip_text(text, limit)) <= limit


@given(text=texts, limit=limits)
def test_clipped_text_stays_valid_utf8(text, limit):
    """The result always encodes to UTF-8 (no lone surrogate is left behind)."""
    clip_text(text, limit).encode("utf-8")


@given(units=grapheme_lists, limit=limits)
def test_cut_never_splits_a_grapheme(units, limit):
    """The kept text is a whole number of graphemes: no ZWJ sequence, flag or mark is split."""
    text = "".join(units)
    clipped = clip_text(text, limit)
    if clipped == text:
        return
    kept = clipped.removesuffix("…")
    prefixes = {"".join(units[:i]).rstrip() for i in range(len(units) + 1)}
    assert kept in prefixes


@given(text=texts, limit=limits)
def test_text_that_does_not_fit_ends_with_the_marker(text, limit):
    """A cut is marked, so the model knows the value is incomplete."""
    if len(text) > limit:
        assert clip_text(text, limit).endswith("…")


@given(text=texts)
def test_text_that_fits_is_unchanged(text):
    """Text within the limit comes back as is, without a marker."""
    assert clip_text(text, len(text) + 1) == text
    assert clip_text(text, max(len(text), 2)) == text


def test_cut_prefers_a_word_boundary():
    """Near a space the cut moves back to it instead of splitting a word."""
    assert clip_text("upstream timeout connecting to auth-service", 20) == "upstream timeout…"


def test_cjk_text_without_spaces_is_cut_anyway():
    """Text with no spaces is cut at the limit."""
    assert clip_text("日本語のテキストです", 5) == "日本語の…"


def test_flags_are_never_split():
    """Two regional indicators make one flag; a cut between them would show two letters."""
    clipped = clip_text("🇫🇷🇯🇵🇺🇸", 4)
    assert clipped == "🇫🇷…"


def test_zwj_sequences_are_never_split():
    """A family emoji joined by ZWJ is kept whole or dropped whole."""
    family = "👨\u200d👩\u200d👧\u200d👦"
    assert clip_text("ab" + family + "cd", 6) == "ab…"


def test_combining_marks_stay_with_their_base():
    """An accent is never separated from its letter."""
    assert clip_text("abe\u0301\u0301fgh", 5) == "ab…"


def test_surrogate_pairs_are_never_split():
    """Text carrying UTF-16 surrogate pairs (from ``surrogatepass`` decoding) keeps them whole."""
    pair = "\ud83d\ude00"
    clipped = clip_text("a" + pair * 3, 3)
    assert clipped == "a…"


def test_custom_marker_counts_toward_the_limit():
    """A longer marker still fits within ``max_chars``."""
    clipped = clip_text("abcdefghijklmnop", 10, marker=" [...]")
    assert clipped == "abcd [...]"


@pytest.mark.parametrize("max_chars", [0, 1, -5])
def test_clip_shorter_than_its_marker_is_a_configuration_error(max_chars):
    """``Clip(1)`` could show nothing but the marker, so it is refused."""
    with pytest.raises(ConfigurationError):
        Clip(max_chars)


def test_clip_with_a_non_int_limit_is_a_configuration_error():
    """``Clip("80")`` is refused at definition time."""
    with pytest.raises(ConfigurationError):
        Clip("80")  # type: ignore[arg-type]
