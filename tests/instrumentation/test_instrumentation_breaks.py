"""Cache breaks, live: CacheWatch reads each response's usage and reports CacheBreak events."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

import slimtools
from slimtools.instrumentation import (
    CacheBreak,
    CacheWatch,
    ClearingPass,
    cause_of,
    is_break,
    usage_of,
)


def _usage(read: int, written: int, *, hour: bool = False) -> dict:
    split = {"ephemeral_1h_input_tokens": written if hour else 0}
    return {
        "input_tokens": 2,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
        "cache_creation": split,
    }


def _pass(broken: bool) -> ClearingPass:
    return ClearingPass("anthropic", None, 10, 1, 0, ("c1",), 900, 400, 3, broken, 0, 1)


@given(st.integers(0, 500_000), st.integers(0, 500_000))
def test_break_needs_five_percent_and_two_thousand_tokens(previous: int, read: int):
    """A break is a shortfall above 5% of the previous prompt and at least 2,000 tokens."""
    short = previous - read
    assert is_break(previous, read) == (short > 0.05 * previous and short >= 2_000)


def test_watch_reports_a_break_after_clearing_as_clearing():
    """A clearing pass that broke the cache explains the next break, sent to both listeners."""
    heard: list[object] = []
    watch = CacheWatch(on_event=heard.append)
    watch.record(_usage(0, 40_000), at=0.0)
    watch(_pass(broken=True))
    with slimtools.observe(heard.append):
        found = watch.record(_usage(10_000, 25_000), at=5.0)
    assert isinstance(found, CacheBreak)
    assert (found.cause, found.request, found.shortfall) == ("clearing", 2, 30_002)
    assert heard == [found, found]
    assert found.as_dict()["event"] == "cache_break"


def test_watch_is_quiet_while_the_cache_holds():
    """Reads of the whole previous prompt are no break, and no event is sent."""
    heard: list[object] = []
    watch = CacheWatch(on_event=heard.append)
    watch.record(_usage(0, 40_000), at=0.0)
    assert watch.record(_usage(40_002, 500), at=5.0) is None
    assert heard == []


def test_watch_tells_expiry_by_the_cache_it_wrote():
    """Ten minutes is past the 5-minute cache's life, not the 1-hour cache's."""
    five, hour = CacheWatch(), CacheWatch()
    five.record(_usage(0, 40_000), at=0.0)
    hour.record(_usage(0, 40_000, hour=True), at=0.0)
    broke_five = five.record(_usage(0, 41_000), at=600.0)
    broke_hour = hour.record(_usage(0, 41_000), at=600.0)
    assert broke_five is not None
    assert broke_five.cause == "expired"
    assert broke_hour is not None
    assert broke_hour.cause == "unexplained"


def test_watch_names_compaction_and_model_change():
    """A noted compaction, or another model, explains a break."""
    watch = CacheWatch()
    watch.record(_usage(0, 40_000), model="a", at=0.0)
    watch.note_compaction()
    compacted = watch.record(_usage(0, 5_000), model="a", at=1.0)
    changed = watch.record(_usage(0, 5_000), model="b", at=2.0)
    assert compacted is not None
    assert compacted.cause == "compaction"
    assert changed is not None
    assert changed.cause == "model_change"


def test_watch_reads_openai_usage_objects():
    """OpenAI's prompt_tokens with cached_tokens in its details, as an SDK object."""
    watch = CacheWatch()
    details = SimpleNamespace(cached_tokens=0)
    watch.record(SimpleNamespace(prompt_tokens=30_000, prompt_tokens_details=details), at=0.0)
    again = SimpleNamespace(prompt_tokens=31_000, prompt_tokens_details=details)
    found = watch.record(again, at=1.0)
    assert found is not None
    assert found.previous_prompt == 30_000


def test_watch_survives_usage_without_counts():
    """A response without usage reads as an empty prompt: no crash, no break."""
    watch = CacheWatch()
    assert watch.record(None) is None
    assert watch.record({"input_tokens": "many"}) is None


def test_causes_are_checked_in_order():
    """Compaction, clearing, a model change, expiry, a changed prefix, a task notification."""
    assert cause_of(compacted=True, cleared=True) == "compaction"
    assert cause_of(cleared=True, model_changed=True) == "clearing"
    assert cause_of(model_changed=True, gap_seconds=10_000) == "model_change"
    assert cause_of(gap_seconds=10_000, prefix_changed=True) == "expired"
    assert cause_of(prefix_changed=True, task_notification=True) == "prefix_changed"
    assert cause_of(task_notification=True) == "task_notification"
    assert cause_of() == "unexplained"


_count = st.one_of(st.integers(0, 200_000), st.none(), st.just(-5), st.just("12"), st.just(True))


@given(_count, _count, _count, _count, _count)
def test_usage_parts_add_up_to_the_prompt(plain, read, written, five, hour):
    """However malformed its counts, a usage's plain input, reads and both writes add up to
    its whole prompt, none negative."""
    raw = {
        "input_tokens": plain,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
        "cache_creation": {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour},
    }
    usage = usage_of(raw)
    parts = (usage.input, usage.cache_read, usage.write_5m, usage.write_1h)
    assert min(parts) >= 0
    assert sum(parts) == usage.prompt


def test_usage_splits_anthropic_writes_by_lifetime():
    """The 1-hour writes are the split's; the rest of the writes are 5-minute ones."""
    raw = {
        "input_tokens": 3,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 50,
        "cache_creation": {"ephemeral_5m_input_tokens": 20, "ephemeral_1h_input_tokens": 30},
    }
    usage = usage_of(raw)
    assert (usage.input, usage.cache_read, usage.write_5m, usage.write_1h) == (3, 100, 20, 30)


def test_usage_reads_the_output_of_every_api():
    """Anthropic's and Responses' ``output_tokens`` and Chat's ``completion_tokens`` are the
    output, beside the prompt."""
    anthropic = usage_of({"input_tokens": 3, "cache_read_input_tokens": 9, "output_tokens": 4})
    chat = usage_of({"prompt_tokens": 12, "completion_tokens": 4})
    responses = usage_of(
        {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 9}, "output_tokens": 4}
    )
    assert {(u.prompt, u.output) for u in (anthropic, chat, responses)} == {(12, 4)}


@given(_count, _count, _count, _count, st.booleans())
def test_openai_shaped_usage_parts_add_up_to_the_prompt(prompt, cached, written, output, chat):
    """In OpenAI's shape too (LiteLLM's Anthropic writes beside it), however malformed the
    counts, plain input, reads and writes add up to the prompt, none negative."""
    raw = {
        "prompt_tokens" if chat else "input_tokens": prompt,
        "prompt_tokens_details" if chat else "input_tokens_details": {"cached_tokens": cached},
        "cache_creation_input_tokens": written,
        "completion_tokens" if chat else "output_tokens": output,
    }
    usage = usage_of(raw)
    assert min(usage.input, usage.cache_read, usage.cache_write, usage.output) >= 0
    assert usage.input + usage.cache_read + usage.cache_write == usage.prompt
