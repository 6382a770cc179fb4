"""The engine's replay mode: the clearer's decisions, keeping no message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from slimtools.clearing import Clearer, ClearingPolicy
from slimtools.clearing.formats.view import get_codec
from slimtools.clearing.replay import Reading, ReplayClearer, read_messages
from slimtools.tokens import count_tokens
from tests._profile import examples
from tests.clearing.strategies_clearing import Call, Res, Turn, big, policies, render, turns

FMT = "openai_chat"


def _prompts(history: list) -> list[int]:
    """Where each model call's prompt ends (the engine's own turn rule)."""
    starts: list[int] = []
    read_messages(
        Reading(), get_codec(FMT), count_tokens, history, 0,
        file=lambda *_: None, on_turn=starts.append,
    )  # fmt: skip
    return [*starts, len(history)]


def _replayed(replay: ReplayClearer, messages: list, end: int) -> None:
    """Read the messages up to ``end`` not read yet."""
    while replay._state.n < end:
        replay.read(messages[replay._state.n])


@settings(max_examples=examples(60), deadline=None)
@given(history=turns(), policy=policies)
def test_a_replay_clears_what_the_clearer_clears_and_sums_its_savings(history, policy):
    """Property: fed the same messages, each call clears the clearer's results with the
    same report, and ``saved_before`` is the sum of what was saved before each position."""
    messages = render(FMT, history)
    replay, clearer = ReplayClearer(policy, format=FMT), Clearer(policy, format=FMT)
    saved: dict[int, int] = {}
    for end in _prompts(messages):
        _replayed(replay, messages, end)
        report, cleared = replay.account()
        assert report == clearer.clear_with_report(messages[:end])[1]
        assert [c.call_id for c in cleared] == list(report.cleared_call_ids)
        for c in cleared:
            saved[c.position] = saved.get(c.position, 0) + c.saving
            saved[c.call_position] = saved.get(c.call_position, 0) + c.input_saving
        for position in range(end + 1):
            expected = sum(v for p, v in saved.items() if p < position)
            assert replay.saved_before(position) == expected


def test_a_replay_reports_the_placeholders_only_when_asked():
    """With ``placeholders=True`` each cleared result carries the placeholder the clearer
    wrote; without, none is kept."""
    script = [
        Turn((Call(f"c{i}", "bash", {"n": i}, Res(big(f"r{i}_"))),), user="go") for i in range(5)
    ]
    messages = render(FMT, script)
    policy = ClearingPolicy(cache=None)
    written = Clearer(policy, format=FMT).clear(messages)
    kept = {m["tool_call_id"]: m["content"] for m in written if m.get("role") == "tool"}
    for texts in (True, False):
        replay = ReplayClearer(policy, format=FMT, placeholders=texts)
        cleared = []
        for end in _prompts(messages):
            _replayed(replay, messages, end)
            cleared += replay.account()[1]
        assert cleared
        assert all(c.placeholder == (kept[c.call_id] if texts else "") for c in cleared)


def test_a_replay_keeps_no_message_and_no_text_of_a_decided_result():
    """Once read, no message is kept; a result made ready keeps its figures only."""
    marker = "UNIQUE-RESULT-TEXT-"
    script = [
        Turn((Call(f"c{i}", "bash", {"n": marker}, Res(marker * 30 + str(i))),), user="go")
        for i in range(8)
    ]
    messages = render(FMT, script)
    replay = ReplayClearer(ClearingPolicy(clear_at_least=10**9, cache=None), format=FMT)
    for end in _prompts(messages):
        _replayed(replay, messages, end)
        replay.account()
    state = replay._state
    assert state.plan.items or state.ready  # decided, waiting for the batch minimum
    held = repr(state.ready) + repr(state.plan.items) + repr(state.out)
    assert marker not in held


def test_a_replay_is_not_a_clearer_of_histories():
    """It reads with ``read`` and clears with ``account``; ``clear`` says so."""
    replay = ReplayClearer(ClearingPolicy(), format=FMT)
    with pytest.raises(TypeError, match="account"):
        replay.clear([{"role": "user", "content": "go"}])


def test_the_ledger_reaches_the_engine_through_public_names_only():
    """The streaming replay imports no private module of the clearing package (the peers'
    use of ``formats._objects.get`` is the shared helpers' move, issue 18 item 1)."""
    import ast
    from pathlib import Path

    import slimtools.ledger

    private = []
    folder = Path(slimtools.ledger.__file__).parent
    for path in [folder / name for name in ("stream.py", "timeline.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] == ["slimtools", "clearing"] and any(
                    p.startswith("_") for p in parts[2:]
                ):
                    private.append(f"{path.name}: {node.module}")
    assert private == []
