"""Answer checks: the value a model claims is extracted, normalised and judged by fixed rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.errors import ConfigurationError
from slimtools.eval import AnswerCheck
from tests._profile import examples

STAMP = AnswerCheck("timestamp", "2024-10-24T03:12:45.123Z")


@pytest.mark.parametrize(
    "answer",
    [
        "It was logged at 2024-10-24T03:12:45.123Z.",
        "2024-10-24 03:12:45.123 UTC",
        "The entry is from 03:12:45.",
        "03:12:45.123+00:00",
        "at 03:12:45,123",
        "2024-10-24T03:12:45.1230Z",
    ],
)
def test_timestamp_in_any_usual_form_is_correct(answer):
    """Date, fraction and zone may be written or left out; what is written must agree."""
    assert STAMP.judge(answer).verdict == "correct"


@pytest.mark.parametrize(
    "answer",
    [
        "03:12:46",
        "2024-10-25 03:12:45",
        "03:12:45.124",
        "03:12:45+02:00",
    ],
)
def test_timestamp_that_differs_in_any_stated_part_is_wrong(answer):
    """A different second, date, fraction or zone is a specific wrong value."""
    assert STAMP.judge(answer).verdict == "wrong"


def test_timestamp_needs_seconds_to_count_as_a_claim():
    """ "03:12" or a bare date is not a claimed timestamp: the answer declined."""
    assert STAMP.judge("Sometime around 03:12 on 2024-10-24.").verdict == "none"


def test_impossible_clock_values_are_not_timestamps():
    """ "27:61:99" is not read as a time."""
    assert STAMP.values("27:61:99") == []


def test_the_first_claimed_value_is_the_one_judged():
    """Later values do not rescue or spoil the first one."""
    assert STAMP.judge("03:12:40, or maybe 03:12:45").verdict == "wrong"
    assert STAMP.judge("03:12:45 (not 03:12:40)").verdict == "correct"


def test_values_echoed_from_the_question_are_not_claims():
    """An answer repeating the question's numbers has not claimed them."""
    check = AnswerCheck("integer", "214")
    question = "How many lines did the file have in round 3?"
    assert check.judge("In round 3 the file had 214 lines.", question).verdict == "correct"
    assert check.judge("Round 3, I cannot say.", question).verdict == "none"


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("It has 214 lines.", "214"),
        ("1,204 items", "1204"),
        ("line 0137", "137"),
        ("src/shop/invoice.py:137:def apply()", "137"),
        ("answer: 42.", "42"),
    ],
)
def test_integers_are_read_and_normalised(answer, value):
    """Thousands commas and leading zeros are normalised; ``path:line:`` is read."""
    assert AnswerCheck("integer", "1").values(answer)[0] == value


@pytest.mark.parametrize(
    "text", ["version 2.14.3", "on 2024-10-24", "at 03:12:45", "build v2", "id 7f3a9c", "3.5 s"]
)
def test_integers_inside_versions_dates_times_words_and_decimals_are_ignored(text):
    """Digits glued to other tokens are not a count."""
    assert AnswerCheck("integer", "1").values(text) == []


def test_numbers_spelled_in_words_are_not_read():
    """The documented limit: "two hundred" is no claim."""
    assert AnswerCheck("integer", "200").judge("two hundred lines").verdict == "none"


def test_id_with_a_prefix_matches_only_tokens_with_that_prefix_case_insensitively():
    """``dep-`` ids: other hex-looking tokens (commit shas) are not claims."""
    check = AnswerCheck("id", "dep-7f3a9c21")
    assert check.judge("Commit 9e1f2a3 shipped as DEP-7F3A9C21.").verdict == "correct"
    assert check.judge("It was dep-0000beef.").verdict == "wrong"
    assert check.judge("No deployment matched.").verdict == "none"


def test_id_without_a_prefix_reads_any_token_holding_a_digit():
    """A bare sha-like id: the first token with a digit is the claim."""
    check = AnswerCheck("id", "3f9a2c1")
    assert check.judge("The commit is `3f9a2c1`.").verdict == "correct"
    assert check.judge("The commit is abc123d.").verdict == "wrong"


def test_id_with_a_custom_pattern():
    """``pattern`` overrides the derived one."""
    check = AnswerCheck("id", "PROJ-142", pattern=r"[A-Z]+-\d+")
    assert check.judge("Filed as proj-142").verdict == "correct"


def test_regex_check_uses_its_first_group_and_normalises_case_and_punctuation():
    """The group is the claim, compared after folding case and stripping quotes."""
    check = AnswerCheck("regex", "Blue Whale", pattern=r"codename (?:is )?\"?([A-Za-z ]+?)\"?[.,]")
    assert check.judge('The codename is "BLUE   whale".').verdict == "correct"
    assert check.judge("The codename is red fox.").verdict == "wrong"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "date", "expected": "x"}, "check must be one of"),
        ({"kind": "integer", "expected": "  "}, "non-empty"),
        ({"kind": "regex", "expected": "x"}, "needs a pattern"),
        ({"kind": "regex", "expected": "x", "pattern": "("}, "not a valid regular expression"),
        ({"kind": "integer", "expected": "many"}, "cannot be read as an integer"),
    ],
)
def test_a_check_that_cannot_work_is_refused_with_the_reason(kwargs, message):
    """Unknown kinds, empty answers, missing or broken patterns, unreadable answers."""
    with pytest.raises(ConfigurationError, match=message):
        AnswerCheck(**kwargs)


@settings(max_examples=examples(200))
@given(
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 999),
    st.booleans(),
    st.booleans(),
)
def test_a_true_timestamp_is_correct_however_much_of_it_is_written(h, m, s, ms, date, frac):
    """Property: any rendering of the true clock (with or without date/fraction) is correct."""
    check = AnswerCheck("timestamp", f"2024-10-24T{h:02d}:{m:02d}:{s:02d}.{ms:03d}Z")
    answer = ("2024-10-24 " if date else "") + f"{h:02d}:{m:02d}:{s:02d}"
    answer += f".{ms:03d}" if frac else ""
    assert check.judge(f"It was {answer}.").verdict == "correct"


@settings(max_examples=examples(200))
@given(st.text(), st.sampled_from(["timestamp", "integer", "id"]))
def test_judging_never_raises_on_any_text(text, kind):
    """Property: arbitrary answers give a verdict, never an exception."""
    expected = {"timestamp": "03:12:45", "integer": "214", "id": "req-1a2b"}[kind]
    assert AnswerCheck(kind, expected).judge(text).verdict in {"correct", "wrong", "none"}


@settings(max_examples=examples(100))
@given(st.integers(0, 10**9))
def test_an_integer_is_found_in_its_own_rendering(n):
    """Property: the expected value, written plainly or with commas, is found."""
    check = AnswerCheck("integer", str(n))
    assert check.found_in(f"count: {n}")
    assert check.found_in(f"count: {n:,}")
