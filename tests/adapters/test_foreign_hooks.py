"""ResultSlimmer: a finished result slimmed by tool name, as wrap() slims the tool."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import slimtools
from slimtools import Toolkit
from slimtools.foreign import Raw
from slimtools.foreign.hooks import ResultSlimmer

SECRET = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=12, max_size=20).map(
    lambda s: f"sk-{s}"
)
RECORDS = st.lists(
    st.fixed_dictionaries(
        {"id": st.integers(0, 10**6), "title": st.text(max_size=30), "token": SECRET}
    ),
    max_size=40,
)


def raw(value: Any) -> Raw:
    return Raw(texts=[json.dumps(value)], native=value)


@given(RECORDS, st.sampled_from([None, 60, 20_000]))
def test_a_denied_value_never_reaches_the_model(records, max_tokens):
    """Whatever the records and the budget, no denied value is in what the model reads."""
    slimmer = ResultSlimmer(Toolkit("t"), deny=["token"], max_tokens=max_tokens)
    slimmed = slimmer.slim("search", raw(records))
    assert slimmed is not None
    assert not any(r["token"] in slimmed.text for r in records)


@given(RECORDS)
def test_briefs_hold_only_the_allowlisted_fields(records):
    """Under fields, every brief holds those fields (and a handle where one is needed)."""
    slimmer = ResultSlimmer(Toolkit("t"), fields=["id"])
    slimmed = slimmer.slim("search", raw(records))
    assert slimmed is not None
    assert slimmed.structured is not None
    assert all(set(b) <= {"id", "handle"} for b in slimmed.structured["briefs"])


def test_slim_and_aslim_show_the_same_envelope():
    """The sync and async paths run one engine: same result, same text."""
    records = [{"id": i, "title": "t" * 50} for i in range(30)]
    sync = ResultSlimmer(Toolkit("a"), fields=["id"], max_tokens=50).slim("s", raw(records))
    made = ResultSlimmer(Toolkit("a"), fields=["id"], max_tokens=50).aslim("s", raw(records))
    assert sync == asyncio.run(made)


def test_an_unconfigured_result_within_the_budget_is_left_as_it_is():
    """No options and a small result: nothing to replace (None)."""
    assert ResultSlimmer(Toolkit("t")).slim("s", raw([{"id": 1}])) is None


def test_a_later_slimmer_on_the_same_toolkit_replaces_the_earlier_one():
    """Rebuilding a plugin on one toolkit slims by the new options (not not at all)."""
    kit = Toolkit("t")
    ResultSlimmer(kit, fields=["id"]).slim("s", raw([{"id": 1, "title": "x"}]))
    slimmed = ResultSlimmer(kit, fields=["title"]).slim("s", raw([{"id": 1, "title": "x"}]))
    assert slimmed is not None
    assert slimmed.structured is not None
    assert [b["title"] for b in slimmed.structured["briefs"]] == ["x"]
    assert "id" not in slimmed.structured["briefs"][0]


UNIQUE = st.lists(
    st.fixed_dictionaries({"title": st.text(max_size=20), "token": SECRET}), max_size=15
).map(lambda rs: [{"id": i, **r} for i, r in enumerate(rs)])


@given(UNIQUE)
def test_a_hook_and_wrap_show_the_same_briefs_and_records(records):
    """Slimmed in a hook or by wrap(), one result gives the same briefs and the same records."""
    options = {"fields": ["id", "title"], "deny": ["token"], "key": "id", "limit": 100}

    def search() -> list[dict[str, Any]]:
        """Search."""
        return records

    wrapped_kit, hook_kit = Toolkit("w"), Toolkit("h")
    wrapped = slimtools.wrap(search, toolkit=wrapped_kit, **options)().jsonable()
    slimmed = ResultSlimmer(hook_kit, **options).slim("search", raw(records))
    assert slimmed is not None
    assert slimmed.structured is not None
    assert (slimmed.structured["total"], slimmed.structured["briefs"]) == (
        wrapped["total"],
        wrapped["briefs"],
    )
    for r in records[:3]:
        assert hook_kit.get_record(r["id"]) == wrapped_kit.get_record(r["id"])
