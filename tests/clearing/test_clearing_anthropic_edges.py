"""Clearing at the edges of the Anthropic Messages format: cache breakpoints, the server
edit's semantics, and a call id given twice in one turn."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.clearing import (
    ClearingPolicy,
    JsonlAudit,
    MemoryAudit,
    clear_stale_results,
    is_placeholder,
    restore,
    view,
)
from tests.clearing.strategies_clearing import (
    FORMATS,
    Call,
    Res,
    Turn,
    big,
    cached_anthropic_histories,
    doubled_id_turns,
    render,
)

FLAT = ClearingPolicy(cache=None, retention={}, keep_turns=1)
EPHEMERAL = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}


def _history(result: dict[str, Any]) -> list[Any]:
    """A user prompt, one call of ``read_file`` answered by ``result``, two more turns."""
    return [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}],
        },
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": "done"},
    ]


def _result(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": "toolu_1", "content": content, **extra}


def _cleared_block(history: list[Any]) -> dict[str, Any]:
    out = clear_stale_results(history, FLAT)
    block: dict[str, Any] = out[2]["content"][0]
    assert view(out).results[0].cleared
    return block


def test_a_cache_control_on_the_tool_result_block_stays_on_the_cleared_block():
    """A breakpoint on the tool_result block itself is still there once it is cleared."""
    block = _cleared_block(_history(_result(big("a"), cache_control=EPHEMERAL)))
    assert block["cache_control"] == EPHEMERAL


def test_a_cache_control_on_a_content_block_moves_to_the_placeholder_block():
    """A breakpoint on a text block of the result's content ends on the placeholder's block."""
    content = [{"type": "text", "text": big("a"), "cache_control": EPHEMERAL}]
    block = _cleared_block(_history(_result(content)))
    assert block["content"] == [
        {"type": "text", "text": block["content"][0]["text"], "cache_control": EPHEMERAL}
    ]
    assert is_placeholder(block["content"][0]["text"])


def test_the_last_breakpoint_of_the_content_is_the_one_kept():
    """Of several breakpoints in one result's content, the placeholder keeps the last."""
    content = [
        {"type": "text", "text": big("a"), "cache_control": HOUR},
        {"type": "text", "text": big("b"), "cache_control": EPHEMERAL},
    ]
    block = _cleared_block(_history(_result(content)))
    assert [b["cache_control"] for b in block["content"]] == [EPHEMERAL]


def test_a_breakpoint_on_an_image_block_moves_to_the_placeholder_block():
    """A multimodal result's breakpoint (on its image) survives the clear."""
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "x" * 400},
        "cache_control": EPHEMERAL,
    }
    block = _cleared_block(_history(_result([{"type": "text", "text": big("a")}, image])))
    assert block["content"][0]["cache_control"] == EPHEMERAL


def test_a_result_without_breakpoints_is_cleared_to_plain_text():
    """No cache_control anywhere: the placeholder is the plain string it always was."""
    block = _cleared_block(_history(_result([{"type": "text", "text": big("a")}])))
    assert isinstance(block["content"], str)
    assert "cache_control" not in block


def test_restore_gives_back_the_exact_block_with_its_breakpoints(tmp_path):
    """restore puts back the original content, breakpoints and all, from a file sink too."""
    content = [{"type": "text", "text": big("a"), "cache_control": HOUR}]
    history = _history(_result(content, cache_control=EPHEMERAL, is_error=True))
    for audit in (MemoryAudit(), JsonlAudit(tmp_path / "audit.jsonl")):
        out = clear_stale_results(history, FLAT, audit=audit)
        assert out != history
        assert restore(out, audit) == history


def test_clearing_a_cleared_result_with_a_breakpoint_is_idempotent():
    """A placeholder block carrying the breakpoint reads as cleared: a second pass keeps it."""
    content = [{"type": "text", "text": big("a"), "cache_control": EPHEMERAL}]
    once = clear_stale_results(_history(_result(content)), FLAT)
    assert clear_stale_results(once, FLAT) == once


@settings(max_examples=60, deadline=None)
@given(cached_anthropic_histories())
def test_clear_then_restore_is_exact_with_breakpoints_and_keeps_the_pairing(history):
    """Property: with cache_control anywhere, restore(clear(h)) == h (arguments blanked
    too); clearing keeps every tool_use/tool_result id where it was and every breakpoint on
    the block it was on (or on the placeholder block that replaced the content)."""
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT.replace(clear_tool_inputs=True), audit=audit)
    assert restore(out, audit) == history
    before, after = view(history), view(out)
    assert [(c.id, c.position) for c in after.calls] == [(c.id, c.position) for c in before.calls]
    assert [(r.call_id, r.position) for r in after.results] == [
        (r.call_id, r.position) for r in before.results
    ]
    for old, new in zip(history, out, strict=True):
        if not isinstance(old["content"], list):
            continue
        for a, b in zip(old["content"], new["content"], strict=True):
            assert a.get("cache_control") == b.get("cache_control")
            if a["type"] == "tool_result" and a["content"] != b["content"]:
                marks = [c["cache_control"] for c in a["content"] if "cache_control" in c]
                kept = [c.get("cache_control") for c in b["content"]] if marks else []
                assert kept == marks[-1:]


def test_from_anthropic_clears_by_age_only():
    """Anthropic's edit has no supersession: from_anthropic() sets supersede=False."""
    assert ClearingPolicy.from_anthropic().supersede is False


def test_from_anthropic_lets_supersession_be_asked_for():
    """An override still turns supersession on."""
    assert ClearingPolicy.from_anthropic(supersede=True).supersede is True


def test_from_anthropic_leaves_a_repeated_call_to_its_age():
    """The same call made again does not clear the older result ahead of its age (both are
    among the tool uses kept), where supersession would."""
    edit = {"trigger": {"type": "tool_uses", "value": 0}, "keep": {"type": "tool_uses", "value": 2}}
    policy = ClearingPolicy.from_anthropic(edit, keep_turns=5)
    args = {"path": "/a"}
    history = render(
        "anthropic",
        [
            Turn((Call("c1", "read_file", args, Res(big("a"))),)),
            Turn((Call("c2", "read_file", args, Res(big("b"))),)),
        ],
    )
    assert not any(r.cleared for r in view(clear_stale_results(history, policy)).results)
    superseding = policy.replace(supersede=True)
    assert any(r.cleared for r in view(clear_stale_results(history, superseding)).results)


def _twice(fmt: str) -> list[Any]:
    """A turn calling two tools under one id, both answered, then more turns."""
    calls = (
        Call("dup", "search_logs", {"q": "a"}, Res(big("first"))),
        Call("dup", "read_file", {"path": "/b"}, Res(big("second"))),
    )
    return render(fmt, [Turn(calls), Turn(), Turn(), Turn()])


def test_results_of_an_id_called_twice_in_one_turn_stay_whole():
    """Two tool_use blocks with one id in one assistant message: neither result is cleared
    (which call a result answers is ambiguous), and nothing raises."""
    history = _twice("anthropic")
    assert clear_stale_results(history, FLAT) == history


def test_an_id_called_twice_in_one_turn_stays_whole_in_every_format():
    """The rule lives in ingestion, so every format keeps such results whole."""
    for fmt in FORMATS:
        history = _twice(fmt)
        assert clear_stale_results(history, FLAT) == history, fmt


def test_an_id_reused_in_a_later_turn_is_cleared_again():
    """Once the ambiguous turn is past, a later single call with that id pairs as usual."""
    history = _twice("anthropic")
    history += render("anthropic", [Turn((Call("dup", "bash", {}, Res(big("later"))),))])
    history += render("anthropic", [Turn(), Turn()])
    cleared = [r for r in view(clear_stale_results(history, FLAT)).results if r.cleared]
    assert [r.position for r in cleared] == [len(_twice("anthropic")) + 1]


def test_other_results_of_a_turn_with_a_doubled_id_are_still_cleared():
    """Only the ambiguous pair stays whole: the turn's other results clear as usual."""
    calls = (
        Call("dup", "search_logs", {}, Res(big("a"))),
        Call("dup", "search_logs", {}, Res(big("b"))),
        Call("solo", "search_logs", {}, Res(big("c"))),
    )
    history = render("anthropic", [Turn(calls), Turn(), Turn()])
    cleared = [r.call_id for r in view(clear_stale_results(history, FLAT)).results if r.cleared]
    assert cleared == ["solo"]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(FORMATS), doubled_id_turns())
def test_no_result_of_an_id_called_twice_in_a_turn_is_ever_cleared(fmt, doubled):
    """Property, every format: the results of a doubled id stay whole, clearing the rest
    raises nothing, and restore gives the history back."""
    script_, twin = doubled
    history = render(fmt, script_)
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT.replace(clear_tool_inputs=True), audit=audit)
    assert not [r for r in view(out).results if r.call_id == twin and r.cleared]
    assert restore(out, audit) == history
