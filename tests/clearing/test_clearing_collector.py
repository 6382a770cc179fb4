"""A clearing pass runs with the cyclic garbage collector paused, and leaves it as it was."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest

from slimtools._gc import paused_collector
from slimtools.clearing import Clearer, ClearingPolicy, clear_stale_results


def _history(turns: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = [{"role": "user", "content": "go"}]
    for i in range(turns):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": "hit " * 400})
    return out


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The collector on for the test, and as it was afterwards."""
    was_on = gc.isenabled()
    gc.enable()
    yield
    if not was_on:
        gc.disable()


def _recording_counter(seen: list[bool]) -> Callable[[str], int]:
    def count(text: str) -> int:
        if text.startswith("hit"):  # a result's text: counted while the pass reads it
            seen.append(gc.isenabled())
        return (len(text) + 3) // 4

    return count


def test_a_pass_runs_with_the_collector_off(collector_on: None) -> None:
    """The token counter, counting results inside a long pass, sees the collector off."""
    seen: list[bool] = []
    policy = ClearingPolicy(keep_turns=1, cache=None, token_counter=_recording_counter(seen))
    clear_stale_results(_history(300), policy)  # 601 messages: a long pass
    assert seen
    assert not any(seen)


def test_the_collector_is_back_on_after_a_pass(collector_on: None) -> None:
    """A pass turns the collector back on when it ends."""
    clear_stale_results(_history(6), ClearingPolicy(keep_turns=1, cache=None))
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(collector_on: None) -> None:
    """A pass never turns on a collector the caller had turned off."""
    gc.disable()
    Clearer(ClearingPolicy(keep_turns=1, cache=None)).clear(_history(6))
    assert not gc.isenabled()


def test_the_collector_is_back_on_when_a_pass_raises(collector_on: None) -> None:
    """A token counter that raises mid-pass still leaves the collector on."""

    def broken(text: str) -> int:
        raise RuntimeError("counter down")

    with pytest.raises(RuntimeError, match="counter down"):
        clear_stale_results(_history(3), ClearingPolicy(token_counter=broken))
    assert gc.isenabled()


def test_paused_collector_restores_it_when_its_body_raises(collector_on: None) -> None:
    """The pause ends with its body, also when the body raises."""

    def fail_paused() -> None:
        with paused_collector():
            raise ValueError("body failed")

    with pytest.raises(ValueError, match="body failed"):
        fail_paused()
    assert gc.isenabled()


def test_paused_collector_nests(collector_on: None) -> None:
    """An inner pause leaves the collector off for the rest of the outer one."""
    with paused_collector():
        with paused_collector():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_short_call_leaves_the_collector_running(collector_on: None) -> None:
    """A per-round call reading a few messages does not switch the collector off."""
    seen: list[bool] = []
    clearer = Clearer(
        ClearingPolicy(keep_turns=1, cache=None, token_counter=_recording_counter(seen))
    )
    clearer.clear(_history(6))
    seen.clear()
    clearer.clear(_history(7))
    assert seen == [True]
