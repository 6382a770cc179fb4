"""Which tools a placeholder may offer to call again: every action of the name reads."""

from __future__ import annotations

import pytest
from hypothesis import given

from slimtools.categories import repeatable_by_name
from slimtools.clearing import ClearingPolicy
from tests.clearing.strategies_clearing import compound_tool_names, read_only_tool_names


@pytest.mark.parametrize(
    "tool",
    [
        "lookup_then_charge_card",
        "read_and_clear_inbox",
        "get_token_and_rotate",
        "get_next_job",
        "find_and_kill_process",
    ],
)
def test_compound_names_with_an_effect_are_not_safe_to_repeat(tool):
    """A read verb first does not make a name with an effect in it safe to call again."""
    assert ClearingPolicy().repeatable_of(tool) is False


@given(compound_tool_names())
def test_no_generated_name_with_an_effect_is_offered_again(tool):
    """Any compound of read actions and one effect is never repeatable by its name."""
    assert ClearingPolicy().repeatable_of(tool) is not True


@given(read_only_tool_names())
def test_names_whose_every_action_reads_are_offered_again(tool):
    """Names made only of read actions (and their nouns) are safe to call again."""
    assert ClearingPolicy().repeatable_of(tool) is True


def test_an_action_with_no_known_verb_leaves_repeating_unknown():
    """``get_user_and_frobnicate``: the second action is unknown, so nothing is promised."""
    assert repeatable_by_name("get_user_and_frobnicate") is None


def test_a_declared_or_annotated_tool_repeats_whatever_its_name():
    """``repeatable=`` (read-only or idempotent annotations) and a declared read category win."""
    policy = ClearingPolicy(
        repeatable={"get_next_job"}, categories={"read_and_clear_inbox": "read"}
    )
    assert policy.repeatable_of("get_next_job") is True
    assert policy.repeatable_of("read_and_clear_inbox") is True


def test_a_declared_write_category_is_not_repeated_even_with_a_read_name():
    """A tool declared ``write`` is not offered again though its name starts with get."""
    assert ClearingPolicy(categories={"get_user": "write"}).repeatable_of("get_user") is False


def test_the_effect_words_make_the_write_category():
    """Retention errs on keeping: a name with an effect word is inferred as a write."""
    from slimtools.clearing import infer_category

    assert infer_category("read_and_clear_inbox") == "write"
    assert infer_category("get_next_job") == "write"
