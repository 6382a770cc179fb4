"""Hypothesis properties of live metrics: listening changes nothing, and events are consistent."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.instrumentation import ClearingPass, SlimmedCall, observe
from slimtools.tokens import count_tokens
from tests._profile import examples
from tests.clearing.strategies_clearing import FORMATS, policies, render, turns
from tests.strategies import complete_records, flat_allowlists, scalar_values

SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
fmt_param = pytest.mark.parametrize("fmt", FORMATS)

loose_records = st.dictionaries(st.text(max_size=6), scalar_values, max_size=4)


def raising(event: Any) -> None:
    raise RuntimeError("a listener bug")


@st.composite
def tool_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A decorator stack, a result (records, a generator of them, or text) and pages to ask."""
    model, keys = draw(flat_allowlists())
    records = draw(st.lists(complete_records(keys) | loose_records, max_size=12))
    return {
        "model": model,
        "records": records,
        "form": draw(st.sampled_from(["list", "generator", "text"])),
        "limit": draw(st.integers(1, 5)),
        "handles": draw(st.sampled_from([None, "generated", "tail"])),
        "pages": draw(st.lists(st.integers(0, 5), min_size=1, max_size=4)),
    }


def build(case: dict[str, Any], **toolkit_options: Any) -> tuple[Toolkit, Any]:
    """The case's tool, registered in a fresh toolkit ``logs``."""
    records, form = case["records"], case["form"]

    def search(query: str) -> Any:
        if form == "generator":
            return (r for r in records)
        if form == "text":
            return "\n".join(orjson.dumps(r, default=str).decode() for r in records)
        return records

    tool: Any = project_fields(case["model"])(search)
    tool = paginate(limit=case["limit"])(tool)
    if case["handles"] == "generated":
        tool = summarize_with_handle()(tool)
    elif case["handles"] == "tail":
        tool = summarize_with_handle(head=2, tail=1)(tool)
    kit = Toolkit("logs", **toolkit_options)
    return kit, kit.tool(tool, name="search")


def run(case: dict[str, Any], kit: Toolkit, tool: Any) -> list[bytes]:
    """Every answer the model would read: each page asked, then get_record of a handle shown."""
    answers = []
    handle = None
    for page in case["pages"]:
        env = tool("q", page=page)
        answers.append(env.to_json())
        for brief in env.briefs:
            if isinstance(brief, dict) and "handle" in brief:
                handle = handle or brief["handle"]
        handle = handle or env.handle
    if handle is not None:
        answers.append(kit.get_record(handle).encode())
    return answers


@SETTINGS
@given(case=tool_cases())
def test_listening_leaves_every_tool_answer_byte_identical(case):
    """With a toolkit listener, a global one and a raising one, each answer is unchanged."""
    plain = run(case, *build(case))
    heard: list[Any] = []
    with observe(heard.append), observe(raising):
        observed = run(case, *build(case, on_event=heard.append))
    assert observed == plain
    assert len(heard) == 2 * len(observed)  # each event heard by the toolkit and globally


@SETTINGS
@given(case=tool_cases())
def test_slimmed_call_events_are_consistent(case):
    """Shown within total, a snapshot page saved nothing, handles within what was shown."""
    heard: list[Any] = []
    _, tool = build(case, on_event=heard.append)
    envelopes = [tool("q", page=page) for page in case["pages"]]
    calls = [e for e in heard if isinstance(e, SlimmedCall)]
    assert len(calls) == len(envelopes)
    for event, env in zip(calls, envelopes, strict=True):
        assert 0 <= event.shown <= event.total == env.total
        assert event.tokens_after == count_tokens(str(env))
        # The allowlisted tool reads its JSON Lines text as records: never as text, which
        # the allowlist could not project.
        assert event.unit == "items"
        if event.from_snapshot:
            assert event.tokens_before == 0
            assert (event.page or 0) > 1
        else:
            assert event.tokens_before >= 0
        assert event.handles <= event.shown


def as_bytes(history: list[Any]) -> bytes:
    """A history as JSON bytes (LangChain messages through their model dump)."""
    return orjson.dumps(history, default=lambda m: m.model_dump())


def grow(fmt: str, script: Any, policy: ClearingPolicy, on_event: Any = None) -> list[bytes]:
    """The history a clearer gives the model before each message is appended."""
    history = render(fmt, script)
    clearer, growing, seen = Clearer(policy, on_event=on_event), [], []
    for message in history:
        growing.append(message)
        seen.append(as_bytes(clearer.clear(growing)))
    return seen


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies)
def test_listening_leaves_every_cleared_history_byte_identical(fmt, script, policy):
    """A clearer's listener, a global one and a raising one change no cleared history."""
    plain = grow(fmt, script, policy)
    heard: list[Any] = []
    with observe(heard.append), observe(raising):
        observed = grow(fmt, script, policy, on_event=heard.append)
    assert observed == plain
    assert len(heard) == 2 * len(plain)


@fmt_param
@SETTINGS
@given(script=turns(), policy=policies)
def test_clearing_pass_events_are_consistent(fmt, script, policy):
    """Each pass: ids match the count, tokens never grow, a break needs a change."""
    heard: list[Any] = []
    history = render(fmt, script)
    clearer, growing = Clearer(policy, on_event=heard.append), []
    for message in history:
        growing.append(message)
        clearer.clear_in_place(growing)
    assert len(heard) == len(history)
    for n, event in enumerate(heard, 1):
        assert isinstance(event, ClearingPass)
        assert event.messages == n
        assert len(event.cleared_call_ids) == event.cleared
        assert event.inputs_cleared <= event.cleared
        assert 0 <= event.tokens_after <= event.tokens_before
        changed = event.first_changed is not None
        assert changed == bool(event.cleared or event.tokens_saved)
        assert not event.cache_broken or changed
