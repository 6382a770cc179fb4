"""Recall scenarios: built-ins generated deterministically, user files validated field by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.errors import ConfigurationError
from slimtools.eval import (
    BUILTIN_SCENARIOS,
    AnswerCheck,
    FileScenario,
    ScenarioError,
    load_scenario,
    validate_episode,
)
from tests._profile import examples

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "recall" / "deploy_logs.toml"


def scenario_data(**changes: Any) -> dict[str, Any]:
    """A small valid scenario file's content, with ``changes`` applied at the top level."""
    data: dict[str, Any] = {
        "name": "mini",
        "task": "Find the failing job.",
        "rounds": [
            {
                "tool": "list_jobs",
                "args": {"state": "failed"},
                "result": "job-7 failed at 10:01:02",
            },
            {"tool": "read_log", "args": {"job": "job-7"}, "result": "exit code 137 (killed)"},
            {"tool": "list_jobs", "args": {"state": "queued"}, "result": "job-9 queued"},
        ],
        "question": {
            "round": 2,
            "text": "What exit code did it end with?",
            "answer": 137,
            "check": "integer",
        },
    }
    data.update(changes)
    return data


def write(tmp_path: Path, data: Any, suffix: str = ".json") -> Path:
    path = tmp_path / f"scenario{suffix}"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.parametrize("name", sorted(BUILTIN_SCENARIOS))
def test_a_builtin_episode_is_the_same_for_the_same_seed_and_repeat(name):
    """Deterministic: same arguments, same rounds and question."""
    scenario = BUILTIN_SCENARIOS[name]
    first, again = scenario.episode(2, seed=7), scenario.episode(2, seed=7)
    assert [r.result for r in first.rounds] == [r.result for r in again.rounds]
    assert first.question.text == again.question.text
    assert first.question.check == again.question.check


@pytest.mark.parametrize("name", sorted(BUILTIN_SCENARIOS))
def test_different_seeds_give_different_episodes(name):
    """Each repeat is a fresh draw, so K repeats are K samples."""
    scenario = BUILTIN_SCENARIOS[name]
    answers = {scenario.episode(r, seed=r).question.check.expected for r in range(6)}
    assert len(answers) >= 4


@pytest.mark.parametrize("name", sorted(BUILTIN_SCENARIOS))
def test_builtin_results_have_realistic_sizes(name):
    """Tool results of a few hundred to a few thousand characters, the target among the big."""
    episode = BUILTIN_SCENARIOS[name].episode(0)
    sizes = [len(r.result) for r in episode.rounds]
    assert sum(sizes) / len(sizes) >= 1000
    assert len(episode.target.result) >= 1000
    assert max(sizes) <= 10_000


@settings(max_examples=examples(60), deadline=None)
@given(
    st.sampled_from(sorted(BUILTIN_SCENARIOS)),
    st.integers(0, 10_000),
    st.integers(2, 14).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))),
)
def test_builtin_answers_exist_only_in_the_target_round(name, seed, shape):
    """Property: for any seed, N and M, the answer is read in round M's result and nowhere else."""
    rounds, target = shape
    episode = BUILTIN_SCENARIOS[name].episode(0, seed=seed, rounds=rounds, target=target)
    assert len(episode.rounds) == rounds
    assert episode.question.round == target
    assert validate_episode(episode) is episode


def test_builtin_rounds_and_target_are_checked():
    """N above the maximum, M past N, and non-integers are configuration errors."""
    scenario = BUILTIN_SCENARIOS["log_search"]
    with pytest.raises(ConfigurationError, match="at most"):
        scenario.episode(0, rounds=500)
    with pytest.raises(ConfigurationError, match="past the last round"):
        scenario.episode(0, rounds=4, target=5)
    with pytest.raises(ConfigurationError, match="int >= 1"):
        scenario.episode(0, rounds=0)


def test_log_search_serves_get_record_for_a_handle_it_showed():
    """The toolkit behind log_search expands a brief's id to the full record."""
    episode = BUILTIN_SCENARIOS["log_search"].episode(0)
    entry = episode.question.text.split("log entry ")[1].split("?")[0]
    record = json.loads(episode.serve("get_record", {"handle": int(entry)}).text)
    assert record["time"] == episode.question.check.expected
    assert "stack" in record  # the full record, not the brief


def test_a_builtin_serves_a_repeated_call_with_the_same_result():
    """Calling round M's tool again gives round M's result back."""
    episode = BUILTIN_SCENARIOS["api_listing"].episode(0)
    assert episode.serve(episode.target.tool, episode.target.args).text == episode.target.result


def test_a_builtin_answers_bad_calls_with_errors_not_exceptions():
    """Unknown tools and invalid arguments come back as error results."""
    episode = BUILTIN_SCENARIOS["code_task"].episode(0)
    assert episode.serve("rm_rf", {}).is_error
    assert episode.serve("read_file", "{not json").is_error
    assert episode.serve("read_file", {"path": "nope.py"}).is_error


def test_example_scenario_file_loads():
    """examples/recall/deploy_logs.toml is valid and asks for a timestamp in round 3."""
    scenario = load_scenario(EXAMPLE)
    assert isinstance(scenario, FileScenario)
    assert scenario.base.question.round == 3
    assert scenario.base.question.check == AnswerCheck("timestamp", "2024-10-24T14:11:37.509Z")


def test_json_and_toml_files_load_alike(tmp_path):
    """The same scenario as JSON and as TOML gives the same episode."""
    data = scenario_data()
    from_json = load_scenario(write(tmp_path, data)).base
    toml = (
        'name = "mini"\ntask = "Find the failing job."\n'
        + "".join(
            f'[[rounds]]\ntool = "{r["tool"]}"\nargs = {{ {next(iter(r["args"]))} = '
            f'"{next(iter(r["args"].values()))}" }}\nresult = "{r["result"]}"\n'
            for r in data["rounds"]
        )
        + '[question]\nround = 2\ntext = "What exit code did it end with?"\nanswer = 137\n'
        'check = "integer"\n'
    )
    from_toml = load_scenario(write(tmp_path, toml, ".toml")).base
    assert from_toml.rounds == from_json.rounds
    assert from_toml.question == from_json.question


def test_tools_are_derived_from_the_rounds_when_not_declared(tmp_path):
    """Each tool gets a schema from its arguments: types, and keys present in every call."""
    episode = load_scenario(write(tmp_path, scenario_data())).base
    list_jobs = next(t for t in episode.tools if t.name == "list_jobs")
    assert list_jobs.parameters["properties"] == {"state": {"type": "string"}}
    assert list_jobs.parameters["required"] == ["state"]
    assert [t.name for t in episode.tools] == ["list_jobs", "read_log"]


def test_records_add_get_record_and_are_served_by_handle(tmp_path):
    """A round's ``records`` make get_record available, serving each record by handle."""
    data = scenario_data()
    data["rounds"][1]["records"] = {"job-7": {"id": "job-7", "exit": 137, "node": "n3"}}
    data["rounds"][1]["result"] = "exit code 137 (killed); full record: job-7"
    episode = load_scenario(write(tmp_path, data)).base
    assert episode.refetch_tool == "get_record"
    assert "get_record" in [t.name for t in episode.tools]
    assert json.loads(episode.serve("get_record", {"handle": "job-7"}).text)["node"] == "n3"
    assert episode.serve("get_record", {"handle": "job-1"}).is_error


def test_a_file_serves_agreeing_calls_from_its_rounds(tmp_path):
    """Same tool, agreeing arguments: that round's result; otherwise an error naming the calls."""
    episode = load_scenario(write(tmp_path, scenario_data())).base
    assert episode.serve("read_log", {"job": "job-7"}).text == "exit code 137 (killed)"
    assert episode.serve("list_jobs", '{"state": "queued"}').text == "job-9 queued"
    missing = episode.serve("read_log", {"job": "job-8"})
    assert missing.is_error
    assert 'read_log({"job":"job-7"})' in missing.text
    assert episode.serve("delete_job", {}).is_error
    assert episode.serve("read_log", "[1, 2]").is_error


def test_later_repeats_shuffle_the_other_rounds_and_keep_the_target_in_place(tmp_path):
    """Repeat 0 is the file's order; later ones reorder all but round M."""
    data = scenario_data(
        rounds=[
            *scenario_data()["rounds"],
            *[
                {"tool": "list_jobs", "args": {"state": s}, "result": f"{s} jobs: none"}
                for s in ("paused", "done", "retrying", "blocked")
            ],
        ]
    )
    scenario = load_scenario(write(tmp_path, data))
    base = scenario.episode(0)
    orders = {tuple(r.result for r in scenario.episode(k).rounds) for k in range(1, 6)}
    assert len(orders) > 1
    for order in orders:
        assert order[1] == base.rounds[1].result
        assert sorted(order) == sorted(r.result for r in base.rounds)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rounds": None}, "rounds: Input should be a valid list"),
        ({"rounds": [{"tool": "x", "result": "1"}]}, "rounds: List should have at least 2 items"),
        ({"task": ""}, "task: String should have at least 1 character"),
        ({"colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"question": {"round": 2, "text": "?", "answer": 1}}, "question.check: Field required"),
        (
            {"question": {"round": 2, "text": "?", "answer": 137, "check": "date"}},
            "question.check: Input should be",
        ),
        (
            {"question": {"round": 9, "text": "?", "answer": 137, "check": "integer"}},
            "question.round: 9 is not one of the 3 rounds",
        ),
        (
            {"question": {"round": 1, "text": "?", "answer": 137, "check": "integer"}},
            "(integer) cannot be read in rounds[0].result",
        ),
        (
            {"question": {"round": 2, "text": "?", "answer": "x", "check": "regex"}},
            "question: a regex check needs a pattern",
        ),
        (
            {"question": {"round": 2, "text": "?", "answer": "many", "check": "integer"}},
            "question: the expected answer 'many' cannot be read",
        ),
        ({"system": "Remember: exit code 137 is fatal."}, "also appears in system"),
        (
            {"tools": [{"name": "list_jobs"}]},
            "rounds[1].tool: 'read_log' is not among the declared tools",
        ),
    ],
)
def test_invalid_scenario_files_name_the_field(tmp_path, change, message):
    """Every defect is reported with the file and the field it is in."""
    path = write(tmp_path, scenario_data(**change))
    with pytest.raises(ScenarioError, match=None) as caught:
        load_scenario(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_missing_field_inside_a_round_is_named_with_its_index(tmp_path):
    """``rounds[1].result: Field required``."""
    data = scenario_data()
    del data["rounds"][1]["result"]
    with pytest.raises(ScenarioError, match=r"rounds\[1\]\.result: Field required"):
        load_scenario(write(tmp_path, data))


def test_an_answer_shown_in_another_round_is_refused(tmp_path):
    """The answer must exist only in round M: here round 3 shows 137 too."""
    data = scenario_data()
    data["rounds"][2]["result"] = "job-9 queued after job-7 exited 137"
    with pytest.raises(ScenarioError, match=r"also appears in rounds\[2\]\.result"):
        load_scenario(write(tmp_path, data))


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ("{not json", ".json", "not valid JSON"),
        ("name = ", ".toml", "not valid TOML"),
        ("{}", ".yaml", "must end in .json or .toml"),
    ],
)
def test_unparseable_files_are_refused_clearly(tmp_path, content, suffix, message):
    """Broken JSON or TOML, and other extensions, raise ScenarioError naming the file."""
    with pytest.raises(ScenarioError, match=message):
        load_scenario(write(tmp_path, content, suffix))


def test_a_missing_file_is_a_scenario_error(tmp_path):
    """Reading a path that does not exist says so."""
    with pytest.raises(ScenarioError, match="cannot read scenario"):
        load_scenario(tmp_path / "absent.json")
