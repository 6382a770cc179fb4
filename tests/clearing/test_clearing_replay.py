"""The engine's replay mode: the clearer's decisions, keeping only the messages held."""

from __future__ import annotations

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


@settings(max_examples=examples(60), deadline=None)
@given(history=turns(), policy=policies)
def test_a_replay_clears_what_the_clearer_clears_and_sums_its_savings(history, policy):
    """Property: with every message held, each call clears the clearer's results, and
    ``saved_before`` is the sum of what was saved before each position."""
    messages = render(FMT, history)
    replay, clearer = ReplayClearer(policy, format=FMT), Clearer(policy, format=FMT)
    for position in range(len(messages)):
        replay.hold(position)
    saved: dict[int, int] = {}
    for end in _prompts(messages):
        report, cleared = replay.account(messages[:end])
        assert report == clearer.clear_with_report(messages[:end])[1]
        assert [c.call_id for c in cleared] == list(report.cleared_call_ids)
        for c in cleared:
            saved[c.position] = saved.get(c.position, 0) + c.saving
            saved[c.call_position] = saved.get(c.call_position, 0) + c.input_saving
        for position in range(end + 1):
            expected = sum(v for p, v in saved.items() if p < position)
            assert replay.saved_before(position) == expected


def test_a_replay_keeps_only_held_messages_and_hands_back_no_copy():
    """Messages not held are let go once read; a released one goes too."""
    script = [
        Turn((Call(f"c{i}", "bash", {"n": i}, Res(big(f"r{i}_"))),), user="go") for i in range(4)
    ]
    messages = render(FMT, script)
    replay = ReplayClearer(ClearingPolicy(keep_turns=10**6), format=FMT)
    replay.hold(2)
    replay.hold(4)
    replay.hold(4)
    assert replay.clear(messages) == []
    assert replay.held == [2, 4]
    replay.release(2)
    replay.release(4)
    assert replay.held == [4]


def test_the_ledger_reaches_the_engine_through_public_names_only():
    """The streaming replay imports no private module of the clearing package (the peers'
    use of ``formats._objects.get`` is the shared helpers' move, issue 18 item 1)."""
    import ast
    from pathlib import Path

    import slimtools.ledger

    private = []
    folder = Path(slimtools.ledger.__file__).parent
    for path in [folder / name for name in ("stream.py", "_tracks.py", "_standin.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] == ["slimtools", "clearing"] and any(
                    p.startswith("_") for p in parts[2:]
                ):
                    private.append(f"{path.name}: {node.module}")
    assert private == []
