"""The pass-through screen (pure): no denied value survives any text shape, any flag."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from slimtools.foreign import Screen
from slimtools.projection import compile_deny
from tests.proxy.strategies_proxy import SECRET_MARK, records_with_secrets, shapes


@given(records_with_secrets(), st.booleans(), st.sampled_from([None, ["id", "name"]]))
def test_no_denied_value_survives_the_screen_in_any_shape(records, is_error, allowlist):
    """JSON, pretty JSON, reprs and JSON quoted in prose: the secret never comes out."""
    screen = Screen(compile_deny(["ssn"]), allowlist=allowlist, is_error=is_error)
    for shape, text in shapes(records).items():
        assert SECRET_MARK not in screen.text(text), shape


@given(records_with_secrets())
def test_structured_data_loses_the_denied_paths_at_every_depth(records):
    """Structured content of an error or a mixed result loses ``ssn`` wherever it is."""
    screen = Screen(compile_deny(["ssn"]), is_error=True)
    assert SECRET_MARK not in repr(screen.data({"rows": records}))


def test_an_inactive_screen_changes_nothing():
    """No deny and no allowlist: texts pass exactly as sent."""
    screen = Screen(None)
    assert not screen.active
    assert screen.text("anything {'ssn': 1}") == "anything {'ssn': 1}"
