"""The recall run: scripted models of each behaviour are classified as that behaviour."""

from __future__ import annotations

from typing import Any

import pytest

from slimtools.clearing import ClearingPolicy
from slimtools.errors import ConfigurationError
from slimtools.eval import (
    BUILTIN_SCENARIOS,
    DEFAULT_SWEEP,
    ModelCallError,
    ModelReplyError,
    heads_sweep,
    run_recall,
    run_trial,
)
from tests.lab.recall_helpers import (
    after_question,
    answer_with,
    call,
    decline,
    knows,
    reads_context,
    refetch_cleared,
    refetches,
)

OFF, HEAD0, HEAD200, HEAD500 = DEFAULT_SWEEP


def episode(name: str = "file_reading", repeat: int = 0) -> Any:
    """A built-in episode at the defaults (10 rounds, answer in round 3)."""
    return BUILTIN_SCENARIOS[name].episode(repeat)


def test_default_sweep_is_clearing_off_heads_0_200_500_and_a_thinning_head():
    """Clearing off and three fixed heads, in order."""
    assert [s.label for s in DEFAULT_SWEEP] == [
        "clearing off",
        "keep_head=0",
        "keep_head=200",
        "keep_head=500",
    ]
    assert OFF.policy is None
    assert [s.policy.keep_head for s in DEFAULT_SWEEP[1:4]] == [0, 200, 500]


def test_every_sweep_setting_clears_at_the_round_end_whatever_the_cache():
    """Round M's result is cleared by the question in every setting: no cache economics."""
    report = run_recall(["file_reading", "log_search"], decline, DEFAULT_SWEEP[1:], repeats=2)
    assert all(s.cleared.count == s.trials for s in report.summaries())


def test_calling_the_tool_again_is_refetched():
    """A model that repeats round M's call, then answers from it, refetched (and is right)."""
    ep = episode()
    result = run_trial(ep, HEAD0, refetches(ep))
    assert result.outcome == "refetched"
    assert result.correct
    assert result.refetch_had_answer
    assert result.calls == (f'read_file({{"path": "{ep.target.args["path"]}"}})',)


def test_get_record_is_refetched():
    """Expanding a handle the placeholder listed counts as a refetch."""
    ep = episode("log_search")
    entry = int(ep.question.text.split("log entry ")[1].split("?")[0])

    def model(messages, tools):
        if not after_question(messages):
            return call("get_record", {"handle": entry})
        return reads_context(ep.question.check)(after_question(messages) + messages[-1:], tools)

    result = run_trial(ep, HEAD0, model)
    assert (result.outcome, result.correct) == ("refetched", True)


def test_refetched_then_wrong_is_still_refetched_and_not_correct():
    """The behaviour is the refetch; correctness is recorded beside it."""
    ep = episode()
    result = run_trial(ep, HEAD0, refetches(ep, then_answer=False))
    assert (result.outcome, result.correct, result.claimed) == ("refetched", False, None)


def test_another_call_whose_result_shows_the_answer_counts_as_refetched():
    """Recovering the fact through a different tool is a refetch too."""
    ep = episode("code_task")
    path = ep.question.text.split(" of ")[1].split(" is ")[0]
    function = ep.question.text.split("`")[3]

    def model(messages, tools):
        if not after_question(messages):
            return call("grep", {"pattern": f"def {function}("})
        return reads_context(ep.question.check)(after_question(messages) + messages[-1:], tools)

    result = run_trial(ep, HEAD0, model)
    assert result.refetch_had_answer
    assert result.outcome == "refetched"
    assert path in result.calls[0] or "grep" in result.calls[0]


def test_reading_the_kept_head_is_from_placeholder():
    """The line count is in the first line of read_file: a 200-character head shows it."""
    ep = episode()
    result = run_trial(ep, HEAD200, reads_context(ep.question.check))
    assert result.cleared
    assert result.visible
    assert (result.outcome, result.correct) == ("from_placeholder", True)


def test_without_a_head_the_same_reader_declines():
    """keep_head=0 leaves nothing to read: the honest reader says it cannot tell."""
    ep = episode()
    result = run_trial(ep, HEAD0, reads_context(ep.question.check))
    assert (result.cleared, result.visible, result.outcome) == (True, False, "declined")


def test_a_correct_answer_the_context_no_longer_shows_is_from_memory():
    """Right, without a refetch and without the fact in sight: from memory."""
    ep = episode()
    result = run_trial(ep, HEAD0, knows(ep.question.check))
    assert (result.outcome, result.correct) == ("from_memory", True)


def test_with_clearing_off_a_correct_answer_was_readable_in_context():
    """Uncleared, the whole result is in sight: a correct answer is from_placeholder."""
    ep = episode()
    result = run_trial(ep, OFF, knows(ep.question.check))
    assert (result.cleared, result.visible, result.outcome) == (False, True, "from_placeholder")


def test_a_specific_wrong_value_is_fabricated():
    """A confident wrong count is a fabrication, whatever the setting."""
    ep = episode()
    wrong = int(ep.question.check.expected) + 1
    result = run_trial(ep, HEAD500, answer_with(f"It has {wrong} lines."))
    assert (result.outcome, result.claimed, result.correct) == ("fabricated", str(wrong), False)


def test_no_value_is_declined():
    """An answer without a value of the asked kind is declined."""
    result = run_trial(episode(), HEAD200, decline)
    assert (result.outcome, result.claimed) == ("declined", None)


def test_running_out_of_steps_while_calling_tools_leaves_no_answer():
    """A model that never stops calling tools is cut off after max_steps model calls."""
    ep = episode()

    def model(messages, tools):
        return call("read_file", {"path": "README.md"})

    result = run_trial(ep, HEAD0, model, max_steps=3)
    assert result.steps == 3
    assert len(result.calls) == 3
    assert result.outcome == "refetched"  # it called round M's tool (read_file) again
    assert result.answer == ""


def test_malformed_tool_arguments_get_an_error_result_and_the_trial_goes_on():
    """Non-JSON arguments are answered with an error the model can read, never a crash."""
    ep = episode()
    seen: list[list[dict]] = []

    def model(messages, tools):
        seen.append(messages)
        if len(seen) == 1:
            bad = {"id": "x", "function": {"name": "read_file", "arguments": "{path:"}}
            return {"role": "assistant", "content": "", "tool_calls": [bad]}
        return "no idea"

    result = run_trial(ep, HEAD0, model)
    assert "Invalid arguments" in seen[1][-1]["content"]
    assert seen[1][-2]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert result.outcome == "refetched"


def test_a_model_that_raises_stops_the_run_naming_where():
    """A broken model is not a measurement: the error names scenario, repeat and setting."""

    def model(messages, tools):
        raise TimeoutError("endpoint down")

    with pytest.raises(
        ModelCallError, match=r"file_reading repeat 0 \(keep_head=0\).*endpoint down"
    ):
        run_trial(episode(), HEAD0, model)


def test_a_model_that_returns_no_message_is_refused_clearly():
    """None is not an assistant message."""
    with pytest.raises(
        ModelReplyError,
        match=r"on file_reading repeat 0 \(keep_head=0\), the model returned NoneType",
    ):
        run_trial(episode(), HEAD0, lambda messages, tools: None)


def test_the_model_is_offered_the_scenario_tools_in_openai_form():
    """Tools arrive as Chat Completions function specs; get_record only with handles."""
    offered: dict[str, list[str]] = {}
    for name in ("file_reading", "log_search"):

        def model(messages, tools, name=name):
            offered[name] = [t["function"]["name"] for t in tools]
            return "no idea"

        run_trial(episode(name), HEAD0, model)
    assert offered == {"file_reading": ["read_file"], "log_search": ["search_logs", "get_record"]}


def test_the_model_gets_a_copy_it_cannot_corrupt():
    """A model mutating its messages does not change what the next call is sent."""
    ep = episode()
    sent: list[list[dict]] = []

    def model(messages, tools):
        sent.append(messages)
        if len(sent) == 1:
            messages[1]["content"] = "tampered"
            return call("read_file", {"path": ep.target.args["path"]})
        return "no idea"

    run_trial(ep, HEAD0, model)
    assert sent[1][1]["content"] == ep.task


def test_run_recall_counts_every_trial_and_uses_the_same_episodes_for_each_setting():
    """K episodes per scenario, each played under every setting; rates add up."""
    report = run_recall(["file_reading", "api_listing"], decline, repeats=3)
    assert len(report.trials) == 2 * 3 * len(DEFAULT_SWEEP)
    for setting in report.summaries():
        assert setting.trials == 6
        assert sum(r.count for r in setting.outcomes.values()) == 6
        assert setting.outcomes["declined"].count == 6
    expected = {(t.scenario, t.repeat, t.setting): t.expected for t in report.trials}
    for (scenario, repeat, _), value in expected.items():
        assert value == expected[(scenario, repeat, "clearing off")]


def test_default_policy_clears_round_m_by_round_n_in_every_builtin_scenario():
    """Result sizes are realistic: at question time round 3 is a placeholder in every run."""
    report = run_recall(list(BUILTIN_SCENARIOS), decline, [HEAD200], repeats=5)
    assert report.summaries()[0].cleared.count == len(BUILTIN_SCENARIOS) * 5


def test_mixed_behaviours_give_the_exact_rates():
    """A model that alternates behaviours by repeat yields exact counts per outcome."""
    scenario = BUILTIN_SCENARIOS["file_reading"]
    episodes = {r: scenario.episode(r, seed=r) for r in range(4)}
    by_question = {e.question.text: e.question.check.expected for e in episodes.values()}
    behaviour = dict(zip(by_question, ["fabricate", "decline", "fabricate", "memory"], strict=True))

    def model(messages, tools):
        question = messages[-1]["content"]
        truth = int(by_question[question])
        return {"memory": f"{truth} lines", "fabricate": f"{truth + 7} lines"}.get(
            behaviour[question], "unsure"
        )

    summary = run_recall(["file_reading"], model, [HEAD0], repeats=4).summaries()[0]
    counts = {k: v.count for k, v in summary.outcomes.items()}
    assert counts == {
        "refetched": 0,
        "from_placeholder": 0,
        "from_memory": 1,
        "fabricated": 2,
        "declined": 1,
    }
    assert summary.outcomes["fabricated"].low == pytest.approx(0.150039, abs=1e-6)  # 2 of 4


def test_a_larger_head_shows_the_fact_at_least_as_often():
    """Visible at 0 never, at 500 at least as often as at 200 (the fact sits anywhere)."""
    report = run_recall(["log_search", "api_listing"], decline, DEFAULT_SWEEP[1:], repeats=8)
    visible = {s: sum(t.visible for t in report.trials if t.setting == s) for s in report.settings}
    assert visible["keep_head=0"] == 0
    assert visible["keep_head=200"] <= visible["keep_head=500"] < 16


def test_refetch_cleared_helper_refetches_in_every_builtin():
    """The CLI's scripted refetcher calls the cleared tools again: always refetched."""
    report = run_recall(list(BUILTIN_SCENARIOS), refetch_cleared, [HEAD200], repeats=2)
    assert {t.outcome for t in report.trials} == {"refetched"}


def test_heads_sweep_builds_settings_over_a_base_policy():
    """heads_sweep([0, 80], base=...) keeps the base's other fields."""
    base = ClearingPolicy(keep_turns=4)
    sweep = heads_sweep([0, 80], base=base)
    assert [s.label for s in sweep] == ["clearing off", "keep_head=0", "keep_head=80"]
    assert sweep[2].policy == base.replace(keep_head=80)
    assert [s.label for s in heads_sweep([1], clearing_off=False)] == ["keep_head=1"]


def test_a_new_policy_is_one_more_setting():
    """Any ClearingPolicy joins a sweep as a (label, policy) pair."""
    sweep = [*DEFAULT_SWEEP, ("keep 8 turns", ClearingPolicy(keep_turns=8))]
    report = run_recall(["file_reading"], decline, sweep, repeats=1)
    assert report.settings[-1] == "keep 8 turns"
    assert not report.summaries()[-1].cleared.count  # round 3 is only 7 turns old


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ([], "at least one"),
        ([("a", None), ("a", None)], "distinct labels"),
        ([("a", "policy")], "must be a ClearingPolicy or None"),
        ([("", None)], "non-empty"),
        (["nope"], "a setting is a"),
    ],
)
def test_bad_settings_are_refused(settings, message):
    """Empty, duplicated, untyped or malformed settings raise ConfigurationError."""
    with pytest.raises(ConfigurationError, match=message):
        run_recall(["file_reading"], decline, settings, repeats=1)


def test_bad_counts_and_scenarios_are_refused():
    """repeats, max_steps, rounds/target and scenario names are checked up front."""
    with pytest.raises(ConfigurationError, match="repeats"):
        run_recall(["file_reading"], decline, repeats=0)
    with pytest.raises(ConfigurationError, match="max_steps"):
        run_recall(["file_reading"], decline, max_steps=0)
    with pytest.raises(ConfigurationError, match="past the last round"):
        run_recall(["file_reading"], decline, rounds=3, target=5, repeats=1)
    with pytest.raises(ConfigurationError, match="unknown scenario 'nope'"):
        run_recall(["nope"], decline, repeats=1)
    with pytest.raises(ConfigurationError, match="model must be a callable"):
        run_recall(["file_reading"], 42, repeats=1)


def test_progress_is_reported_after_each_trial():
    """The progress callback sees every trial with its number and the total."""
    seen: list[tuple[int, int]] = []
    run_recall(["file_reading"], decline, repeats=2, progress=lambda t, i, n: seen.append((i, n)))
    total = 2 * len(DEFAULT_SWEEP)
    assert seen == [(i, total) for i in range(1, total + 1)]
