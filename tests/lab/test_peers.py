"""The peer clearing steps: SWE-agent, the Complexity Trap and the Agents SDK's trimmer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent
from agents.extensions import ToolOutputTrimmer
from agents.run_config import CallModelData, ModelInputData
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.peers import (
    context_editing_step,
    langchain_defaults_step,
    last_n_observations_step,
    observation_masking_step,
    peer_steps,
    to_agents_input,
    to_langchain_messages,
    tool_output_trimmer_step,
)
from benchmarks.peers.ledger import measure_steps
from slimtools.clearing import view
from slimtools.errors import ConfigurationError
from slimtools.ledger import TokenLedger, round_starts
from slimtools.transcripts import load_file, load_transcripts
from tests._profile import examples
from tests._shared import sample, shared_data
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, render, turns
from tests.lab.strategies_peers import one_call_turns, without_images

SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# The properties every peer shares run 12 times (3 peers x 4 formats): fewer examples each.
PEER_SETTINGS = settings(SETTINGS, max_examples=examples(30))
fmt_param = pytest.mark.parametrize("fmt", FORMATS)
PEERS = {
    "swe_agent": lambda: last_n_observations_step(5),
    "complexity_trap": lambda: observation_masking_step(10),
    "agents_trimmer": tool_output_trimmer_step,
}
peer_param = pytest.mark.parametrize("peer", PEERS)


def results(history: list[Any]) -> list[tuple[str, str]]:
    """(call id, text) of every tool result, in order."""
    return [(r.call_id, r.text) for r in view(history).results]


def changed(before: list[Any], after: list[Any]) -> dict[str, str]:
    """The new text of every result the step changed, by call id."""
    return {
        cid: new
        for (cid, old), (_, new) in zip(results(before), results(after), strict=True)
        if old != new
    }


def lined(*line_counts: int | tuple[int, ...], user_every: int = 0) -> list[Turn]:
    """Turns whose results have the given numbers of lines (a tuple: parallel calls)."""
    out, n = [], 0
    for i, counts in enumerate(line_counts):
        calls = []
        for lines in (counts,) if isinstance(counts, int) else counts:
            text = "\n".join(f"line {j} of result {n}" for j in range(lines))
            calls.append(Call(f"call_{n}", "bash", {"cmd": n}, Res(text)))
            n += 1
        user = "task" if i == 0 else ("more" if user_every and i % user_every == 0 else None)
        out.append(Turn(tuple(calls), user=user, text="thinking"))
    return out


def placeholder(lines: int, images: int = 0) -> str:
    text = f"Old environment output: ({lines} lines omitted)"
    return text + (f" ({images} images omitted)" if images else "")


# -- SWE-agent's LastNObservations -----------------------------------------------------


@fmt_param
def test_swe_agent_masks_every_result_but_the_last_n(fmt):
    """Eight one-call turns, n=5: the first three results read SWE-agent's placeholder."""
    history = render(fmt, lined(3, 1, 4, 2, 2, 2, 2, 2))
    out = last_n_observations_step(5)(history)
    assert changed(history, out) == {
        "call_0": placeholder(3),
        "call_1": placeholder(1),
        "call_2": placeholder(4),
    }


@fmt_param
def test_swe_agent_counts_each_parallel_result_as_one_observation(fmt):
    """Three turns of three parallel calls, n=5: the four oldest results go."""
    history = render(fmt, lined((1, 1, 1), (2, 2, 2), (3, 3, 3)))
    out = last_n_observations_step(5)(history)
    assert set(changed(history, out)) == {"call_0", "call_1", "call_2", "call_3"}


@fmt_param
def test_swe_agent_counts_text_lines_and_images(fmt):
    """A multimodal result reads "(N lines omitted) (M images omitted)", as in SWE-agent."""
    content = (("text", "a\nb"), ("image", "x"), ("text", "c"))
    script = [
        Turn((Call("call_0", "screenshot", {}, Res(content)),), user="task"),
        *lined(1, 1)[1:],
    ]
    history = render(fmt, script)
    out = last_n_observations_step(1)(history)
    assert changed(history, out)["call_0"] == placeholder(3, images=1)


@pytest.mark.parametrize(
    ("count", "masked"), [(1, 0), (4, 0), (5, 3), (6, 3), (7, 3), (8, 6), (11, 9)]
)
def test_swe_agent_polling_moves_the_cut_every_polling_observations(count, masked):
    """n=2, polling=3: between 2 and 4 results stay, the cut moving every third observation."""
    history = render("openai_chat", lined(*[1] * count))
    out = last_n_observations_step(2, polling=3)(history)
    assert len(changed(history, out)) == masked


def test_swe_agent_keep_and_remove_tags_override_the_count():
    """A result tagged keep_output survives however old; remove_output goes however recent."""
    history = render("openai_chat", lined(1, 1, 1, 1))
    history[2] = {**history[2], "tags": ["keep_output"]}  # call_0's result
    history[-1] = {**history[-1], "tags": ["remove_output"]}  # call_3's result, the latest
    out = last_n_observations_step(2)(history)
    assert set(changed(history, out)) == {"call_1", "call_3"}


def test_swe_agent_neither_counts_nor_masks_demonstrations():
    """A result whose message has is_demo: true is skipped, as SWE-agent skips demos."""
    history = render("openai_chat", lined(1, 1, 1, 1))
    history[2] = {**history[2], "is_demo": True}
    out = last_n_observations_step(2)(history)
    assert set(changed(history, out)) == {"call_1"}


@pytest.mark.parametrize(("kwargs"), [{"n": 0}, {"n": "5"}, {"n": 5, "polling": 0}, {"n": True}])
def test_swe_agent_rejects_bad_options(kwargs):
    """n and polling must be ints >= 1 (SWE-agent rejects n <= 0 too)."""
    with pytest.raises(ConfigurationError, match="must be an int >= 1"):
        last_n_observations_step(**kwargs)


@pytest.mark.parametrize("tags", ["keep_output", None, ["keep_output", 3]])
def test_swe_agent_rejects_tags_that_are_not_a_collection_of_strings(tags):
    """A bare string would be read as a set of letters; say so instead."""
    with pytest.raises(ConfigurationError, match="always_keep_output_for_tags must"):
        last_n_observations_step(always_keep_output_for_tags=tags)


def _raw_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def test_swe_agent_matches_the_processor_on_its_own_trajectories():
    """On SWE-agent's .traj files with message types, every call elides what SWE-agent would."""
    checked = 0
    for path in sorted((shared_data() / "transcripts" / "swe_agent").glob("*.traj")):
        raw = json.loads(path.read_text())["history"]
        if not all("message_type" in entry for entry in raw):
            continue  # an older recorder: no observation marks to compare with
        (transcript,) = load_file(path)
        assert len(transcript.messages) == len(raw)
        step = last_n_observations_step(5)
        for start in round_starts(transcript.messages):
            # SWE-agent's rule, stated on its own history: observations 1 .. K-5 are elided.
            observations = [
                i
                for i, e in enumerate(raw[:start])
                if e["message_type"] == "observation" and not e.get("is_demo")
            ]
            expected = {
                i: placeholder(len(_raw_text(raw[i]["content"]).splitlines()))
                for i in observations[1 : max(0, len(observations) - 5)]
            }
            prompt = transcript.messages[:start]
            out = step(prompt)
            assert {i: m["content"] for i, m in enumerate(out) if m is not prompt[i]} == expected
            checked += 1
    assert checked > 50


# -- The Complexity Trap's observation masking -------------------------------------------


@fmt_param
def test_complexity_trap_masks_every_result_of_turns_before_the_window(fmt):
    """Five turns of two calls, window 2: both results of turns 1-3 go, turns 4-5 stay."""
    history = render(fmt, lined((1, 2), (3, 1), (2, 2), (1, 1), (5, 5)))
    out = observation_masking_step(2)(history)
    assert changed(history, out) == {
        "call_0": placeholder(1),
        "call_1": placeholder(2),
        "call_2": placeholder(3),
        "call_3": placeholder(1),
        "call_4": placeholder(2),
        "call_5": placeholder(2),
    }


@fmt_param
def test_complexity_trap_leaves_a_run_within_the_window_alone(fmt):
    """Ten turns with the default window of 10: nothing is masked, the list is a copy."""
    history = render(fmt, lined(*[2] * 10))
    out = observation_masking_step()(history)
    assert out == history
    assert out is not history


def test_complexity_trap_placeholder_has_no_images_note():
    """Their fork counts text lines only; images are not mentioned."""
    content = (("text", "a\nb"), ("image", "x"))
    script = [Turn((Call("call_0", "look", {}, Res(content)),), user="task"), *lined(1, 1)[1:]]
    history = render("anthropic", script)
    out = observation_masking_step(1)(history)
    assert changed(history, out)["call_0"] == placeholder(2)


def test_complexity_trap_window_zero_masks_every_result():
    """M=0 masks every observation, the latest included (their omit-all setting)."""
    history = render("openai_chat", lined(1, 1, 1))
    assert len(changed(history, observation_masking_step(0)(history))) == 3


def test_complexity_trap_rejects_a_negative_window():
    """The window must be an int >= 0."""
    with pytest.raises(ConfigurationError, match="window must be an int >= 0"):
        observation_masking_step(-1)


@fmt_param
@SETTINGS
@given(script=one_call_turns(), window=st.integers(1, 12))
def test_complexity_trap_equals_swe_agent_when_one_call_per_turn(fmt, script, window):
    """With one call a turn (their scaffold), the turn window is SWE-agent's n=window."""
    history = render(fmt, script)
    assert observation_masking_step(window)(history) == last_n_observations_step(window)(history)


# -- The Agents SDK's ToolOutputTrimmer --------------------------------------------------


def sdk(items: list[Any], trimmer: ToolOutputTrimmer | None = None) -> list[Any]:
    """The SDK's filter called directly, as the Agents runner calls it."""
    data = CallModelData(ModelInputData(input=items, instructions=None), Agent(name="t"), None)
    return list((trimmer or ToolOutputTrimmer())(data).input)


def long_turns(n_turns: int, *, user_every: int) -> list[Turn]:
    out = []
    for i in range(n_turns):
        call = Call(f"call_{i}", "search", {}, Res(f"{i}" * 700))
        user = "task" if i == 0 else ("more" if i % user_every == 0 else None)
        out.append(Turn((call,), user=user))
    return out


@fmt_param
def test_trimmer_trims_long_outputs_before_the_second_last_user_message(fmt):
    """Users at turns 0, 2, 4: results of turns 0-1 (before the 2nd-last user) are trimmed."""
    history = render(fmt, long_turns(6, user_every=2))
    out = tool_output_trimmer_step()(history)
    preview = "[Trimmed: search output — 700 chars → 200 char preview]\n"
    assert changed(history, out) == {
        "call_0": preview + "0" * 200 + "...",
        "call_1": preview + "1" * 200 + "...",
    }


@fmt_param
def test_trimmer_never_trims_a_run_with_one_user_message(fmt):
    """An autonomous run has one task message, so every item is 'recent' to the trimmer."""
    history = render(fmt, long_turns(12, user_every=100))
    assert tool_output_trimmer_step()(history) == history


def test_trimmer_leaves_outputs_of_500_chars_or_fewer():
    """Only outputs longer than max_output_chars are candidates."""
    script = [Turn((Call(f"c{i}", "t", {}, Res("y" * (499 + i))),), user="u") for i in range(5)]
    history = render("openai_chat", script)
    assert set(changed(history, tool_output_trimmer_step()(history))) == {"c2"}


def test_trimmer_takes_a_configured_instance():
    """A ToolOutputTrimmer with other settings is used as given."""
    trimmer = ToolOutputTrimmer(recent_turns=1, max_output_chars=50, preview_chars=10)
    history = render("anthropic", long_turns(3, user_every=2))
    out = tool_output_trimmer_step(trimmer)(history)
    assert changed(history, out)["call_0"].endswith("\n" + "0" * 10 + "...")


def test_trimmer_on_responses_items_is_the_sdk_output():
    """Responses histories go to the SDK as they are and come back as it returns them."""
    history = render("openai_responses", long_turns(6, user_every=2))
    assert tool_output_trimmer_step()(history) == sdk(history)


@pytest.mark.parametrize("fmt", ["openai_chat", "langchain", "anthropic"])
@SETTINGS
@given(script=turns(), recent=st.integers(1, 3))
def test_trimmer_matches_the_sdk_on_the_same_run_as_responses_items(fmt, script, recent):
    """Every result reads what the SDK class makes of the same run given as Responses items."""
    if fmt == "anthropic":  # its base64 image sources differ from the others' data URLs
        script = without_images(script)
    trimmer = ToolOutputTrimmer(recent_turns=recent, max_output_chars=120, preview_chars=30)
    expected = results(sdk(render("openai_responses", script), trimmer))
    assert results(tool_output_trimmer_step(trimmer)(render(fmt, script))) == expected


def test_trimmer_rejects_a_trimmer_that_is_not_callable():
    """The trimmer is checked when the step is built, not at the first model call."""
    with pytest.raises(ConfigurationError, match="trimmer must be a ToolOutputTrimmer"):
        tool_output_trimmer_step({"recent_turns": 2})


def test_agents_input_items_of_a_chat_history():
    """Roles, calls and outputs become the SDK's item types, outputs traced to their results."""
    history = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a b"},
    ]  # fmt: skip
    items, origins = to_agents_input(history)
    assert items == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "a b"},
    ]
    assert origins == [None, None, None, (3, 0)]


def test_agents_input_has_no_user_item_for_an_anthropic_results_message():
    """A user message of tool_result blocks only is not a user turn for the SDK."""
    history = render("anthropic", lined(1, 1))
    items, _ = to_agents_input(history)
    assert [i for i in items if i.get("role") == "user"] == [{"role": "user", "content": "task"}]


# -- every peer ------------------------------------------------------------------------


@peer_param
@fmt_param
@PEER_SETTINGS
@given(script=turns(max_turns=14))
def test_peer_changes_only_result_contents(peer, fmt, script):
    """Same length, same calls and results at the same places; other messages are untouched."""
    history = render(fmt, script)
    out = PEERS[peer]()(history)
    before, after = view(history), view(out)
    assert len(out) == len(history)
    assert [(r.call_id, r.position) for r in after.results] == [
        (r.call_id, r.position) for r in before.results
    ]
    assert after.calls == before.calls
    carrying = {r.position for r in before.results}
    for i, (old, new) in enumerate(zip(history, out, strict=True)):
        if i not in carrying:
            assert new is old


@peer_param
@fmt_param
@PEER_SETTINGS
@given(script=turns(max_turns=14))
def test_peer_is_idempotent(peer, fmt, script):
    """Applying a step to its own output changes nothing."""
    step = PEERS[peer]()
    once = step(render(fmt, script))
    assert step(once) == once


@fmt_param
@SETTINGS
@given(script=turns(max_turns=14), n=st.integers(1, 6))
def test_swe_agent_last_n_results_untouched(fmt, script, n):
    """The last n results always keep their text."""
    history = render(fmt, script)
    tail = results(history)[-n:]
    assert results(last_n_observations_step(n)(history))[-n:] == tail


@fmt_param
@SETTINGS
@given(script=turns(max_turns=14), window=st.integers(0, 6))
def test_complexity_trap_window_untouched_and_older_masked(fmt, script, window):
    """Results of the last `window` turns keep their text; every older one is a placeholder."""
    history = render(fmt, script)
    seen, out = view(history), view(observation_masking_step(window)(history))
    for before, after in zip(seen.results, out.results, strict=True):
        if before.turn > seen.turns - window:
            assert after.text == before.text
        else:
            assert after.text.startswith("Old environment output: (")


@fmt_param
@SETTINGS
@given(script=turns(max_turns=14))
def test_trimmer_recent_turns_untouched(fmt, script):
    """Results after the second-last user message keep their text."""
    history = render(fmt, script)
    users = [i for i, t in enumerate(script) if t.user is not None]
    if len(users) < 2:
        assert tool_output_trimmer_step()(history) == history
        return
    recent = {c.id for t in script[users[-2] :] for c in t.calls} | {
        cid for t in script[users[-2] :] for cid, _ in t.orphans
    }
    out = dict(results(tool_output_trimmer_step()(history)))
    for cid, text in results(history):
        if cid in recent:
            assert out[cid] == text


@peer_param
@pytest.mark.parametrize(
    "history",
    [
        [],
        [None, 3, "text"],
        [{"role": "assistant", "tool_calls": "bad"}, {"role": "tool", "content": "x" * 900}],
        [{"role": "user", "content": [{"type": "tool_result"}]}, {"role": "assistant"}],
    ],
)
def test_peer_passes_malformed_messages_through(peer, history):
    """Messages no codec can read are context: the step returns them as they are."""
    assert PEERS[peer]()(list(history)) == history


def test_peer_steps_names_the_three_peers():
    """peer_steps gives a ready step per peer, each returning a list of the same length."""
    steps = peer_steps()
    assert len(steps) == 3
    history = render("openai_chat", lined(*[1] * 12))
    for step in steps.values():
        assert len(step(history)) == len(history)


@peer_param
def test_peer_runs_over_every_shared_transcript(peer):
    """The ledger replays every shared transcript through the step, one call at a time."""
    step = PEERS[peer]()
    runs = sample(load_transcripts(shared_data() / "transcripts"), key=lambda t: t.source)
    for transcript in runs:
        plain = TokenLedger.measure(transcript.messages, format=transcript.format).summary
        cleared = measure_steps(transcript.messages, step, format=transcript.format).summary
        assert cleared.rounds == plain.rounds
        final = step(transcript.messages)
        assert [r.call_id for r in view(final).results] == [
            r.call_id for r in view(transcript.messages).results
        ]


def test_langchain_conversion_bills_like_the_original():
    """Converting a transcript to LangChain messages keeps its calls and bill within 1%."""
    for t in load_transcripts(shared_data() / "transcripts" / "claude_code"):
        native = TokenLedger.measure(t.messages).summary
        converted = TokenLedger.measure(to_langchain_messages(t.messages)).summary
        assert converted.rounds == native.rounds
        assert abs(converted.billed - native.billed) <= 0.01 * native.billed + 5


def test_langchain_step_clears_past_its_trigger():
    """LangChain's edit, replayed per call, clears all but 3 results once past 100k tokens."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(12):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    messages, step = langchain_defaults_step(history)
    edited = step(messages)
    cleared = [m.content == "[cleared]" for m in edited if m.type == "tool"]
    assert cleared == [True] * 9 + [False] * 3
    assert all(m.content != "[cleared]" for m in messages if m.type == "tool")


def test_langchain_step_breaks_the_cache_every_call_once_triggered():
    """Per-call recomputation slides the cleared boundary: every call past the trigger breaks."""
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(20):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    ledger = measure_steps(to_langchain_messages(history), context_editing_step())
    broken = [r.round for r in ledger.rows if r.cache_broken]
    assert broken == list(range(broken[0], 21))
    assert len(broken) >= 10


def test_without_langchain_the_documented_defaults_are_emulated(monkeypatch):
    """With LangChain missing, the baseline clears all but 3 results past 100k tokens."""
    import benchmarks.peers as baseline
    import benchmarks.peers.langchain as langchain_peer

    monkeypatch.setattr(langchain_peer, "has_langchain", lambda: False)
    history: list[dict] = [{"role": "user", "content": "go"}]
    for i in range(12):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        history.append({"role": "assistant", "content": "", "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": "y" * 40_000})
    messages, step = baseline.langchain_defaults_step(history)
    assert messages == history
    kept = [len(m["content"]) == 40_000 for m in step(messages) if m["role"] == "tool"]
    assert kept == [False] * 9 + [True] * 3
