"""The floors bench_clearing times bound the default pass only if they write its output."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain.agents.middleware.context_editing")

from benchmarks._floors import check_fused_floor, fused_floor
from benchmarks.bench_clearing import _KEPT, history
from slimtools.clearing import ClearingPolicy, clear_stale_results
from slimtools.clearing.placeholder import MAX_PLACEHOLDER_CHARS


def test_the_fused_floor_writes_the_default_pass_bytes():
    """Message for message, the prototype's output is the default pass's."""
    messages, policy = history(300), ClearingPolicy()
    fused = fused_floor(messages, keep=_KEPT, max_chars=MAX_PLACEHOLDER_CHARS)
    default = clear_stale_results(messages, policy)
    assert [m.content for m in fused] == [m.content for m in default]
    assert fused == default


def test_the_check_refuses_a_floor_that_writes_something_else():
    """A floor leaving a different tail whole is not timed."""
    with pytest.raises(AssertionError, match="differs from the default pass"):
        check_fused_floor(history(300), ClearingPolicy(), keep=_KEPT + 1)
