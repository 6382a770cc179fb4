"""RunReplay with shortened write arguments: stand-in calls weigh what the shortened ones do."""

from __future__ import annotations

import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.replay import ReplayClearer
from slimtools.ledger.stream import RunReplay
from slimtools.tokens import count_tokens
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, big, render
from tests.lab.test_ledger_stream import assert_same_ledgers, replayed


def _writes(policy: ClearingPolicy) -> ClearingPolicy:
    """``policy`` with write results due after one turn, so their calls get shortened."""
    return policy.replace(retention={**policy.retention, "write": 1})


WRITES = {
    "turn end": _writes(ClearingPolicy(cache=None, keep_turns=0)),
    "default": _writes(ClearingPolicy()),
    "superseding": _writes(ClearingPolicy(cache=None, supersede=True)),
    "short threshold": _writes(ClearingPolicy(cache=None, shorten_write_inputs=100)),
    "write_file blanked": _writes(
        ClearingPolicy(cache=None, keep_turns=0, clear_tool_inputs=frozenset({"write_file"}))
    ),
}


def _edits(turns: int = 8) -> list[Turn]:
    """Writes with long contents: short results ("ok": only the call shrinks) and long ones,
    one turn with two parallel writes, between searches."""
    script = [Turn((Call("s", "search_logs", {"q": "x"}, Res(big("s", 300))),), user="go")]
    for i in range(turns):
        content = {"path": f"src/m{i}.py", "content": big(f"line{i}_", 150)}
        result = Res("ok") if i % 2 else Res(big(f"w{i}_", 200))
        calls = [Call(f"w{i}", "write_file", content, result)]
        if i == 3:
            calls.append(Call("issue", "create_issue", {"body": big("b", 120)}, Res("created")))
        script.append(Turn(tuple(calls)))
        script.append(Turn((Call(f"q{i}", "search_logs", {"q": i}, Res(big(f"r{i}_"))),)))
    return script


@pytest.mark.parametrize("fmt", FORMATS)
def test_shortened_write_calls_replay_as_measure_does_to_the_token(fmt):
    """Writes whose results are cleared, or stay too short to clear while only the call is
    shortened, give measure's rows under each policy (blanked tools blanked instead)."""
    history = render(fmt, _edits())
    assert_same_ledgers(history, fmt, WRITES)


def test_shortening_shows_in_the_replayed_prompt():
    """The replay frees what shortening frees: the last prompt is smaller with it on."""
    policy = WRITES["turn end"]
    figures = replayed(
        render("openai_chat", _edits()),
        "openai_chat",
        {"on": policy, "off": policy.replace(shorten_write_inputs=False)},
    )
    on, off = figures.ledger("on").rows[-1], figures.ledger("off").rows[-1]
    assert on.input_tokens < off.input_tokens - 1_000
    assert on.cleared == off.cleared  # a call shortened alone is not a result cleared


def test_a_call_shortened_while_its_result_stays_is_not_counted_cleared():
    """A "created" result after a long issue body: the call shrinks, the result is shown as
    it was, so the ledger counts no cleared result (as measure does)."""
    script = [
        Turn((Call("c", "create_issue", {"body": big("b", 150)}, Res("created")),), user="go"),
        *(Turn((Call(f"q{i}", "search_logs", {"q": i}, Res("none")),)) for i in range(3)),
    ]
    history = render("anthropic", script)
    policy = WRITES["turn end"]
    off = policy.replace(shorten_write_inputs=False)
    figures = replayed(history, "anthropic", {"p": policy, "off": off})
    last = figures.ledger("p").rows[-1]
    assert last.cleared == 0
    assert last.input_tokens < figures.ledger("off").rows[-1].input_tokens  # yet it shrank
    assert_same_ledgers(history, "anthropic", {"p": policy})


@pytest.mark.parametrize("label", ["turn end", "superseding"])
def test_stand_ins_of_shortened_calls_are_let_go_once_rewritten(label):
    """Over a long run of writes, an engine holds only the stand-ins of the last few calls
    and results, and the track forgets each call's shortened size once it is written."""
    history = render("openai_chat", _edits(turns=40))
    replay = RunReplay("openai_chat", {label: WRITES[label]}).add_all(history)
    (track,) = replay._tracks
    assert len(track.clearer.held) <= 8
    assert len(track._shortened) <= 2


def test_a_replay_clearer_writes_the_arguments_its_shortening_hook_gives():
    """``shortened=``: a cleared write call is left with the hook's arguments, and what it
    saves is its tokens less theirs; without the hook the engine shortens what it reads."""
    args = {"path": "a.py", "content": big("line", 150)}
    history = render(
        "openai_chat",
        [
            Turn((Call("w", "write_file", args, Res(big("w", 200))),), user="go"),
            *(Turn((Call(f"q{i}", "search_logs", {}, Res("none")),)) for i in range(3)),
        ],
    )
    given = {"path": "a.py", "content": "short"}
    policy = WRITES["turn end"]
    saved = {}
    for hook in (None, lambda tool, call: given if tool == "write_file" else None):
        clearer = ReplayClearer(policy, format="openai_chat", shortened=hook)
        for position in range(len(history)):
            clearer.hold(position)
        _, cleared = clearer.account(history)
        (done,) = cleared
        saved[hook is None] = done.input_saving
        if hook is not None:
            call = history[done.call_position]["tool_calls"][0]["function"]
            before = count_tokens(f"write_file {call['arguments']}")
            after = count_tokens('write_file {"path":"a.py","content":"short"}')
            assert done.input_saving == before - after
    assert 0 < saved[True] < saved[False]  # the engine's own shortening keeps a longer head
