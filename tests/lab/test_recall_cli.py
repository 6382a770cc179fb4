"""``slimtools recall`` run as a user would, with scripted models named module:callable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slimtools.cli import main
from slimtools.cli.recall import resolve_model
from tests._ports import run, slimtools

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "recall" / "deploy_logs.toml"


def test_recall_prints_a_row_per_setting(capsys):
    """The default sweep: clearing off and keep_head 0/200/500, with intervals."""
    code = main(
        ["recall", "--model", "tests.lab.recall_helpers:decline", "--repeats", "2", "file_reading"]
    )
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:5]] == [
        "clearing",
        "keep_head=0",
        "keep_head=200",
        "keep_head=500",
    ]
    assert "2 100% [ 34-100]" in lines[1]  # both declined
    assert "Wilson score interval" in lines[-1]


def test_recall_json_has_config_summaries_and_every_trial(capsys):
    """--json: the run's configuration, rates per setting and scenario, and each trial."""
    args = ["recall", "--model", "tests.lab.recall_helpers:refetch_cleared", "--repeats", "2"]
    assert main([*args, "log_search", "api_listing", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["repeats"] == 2
    assert data["config"]["model"] == "tests.lab.recall_helpers:refetch_cleared"
    assert [s["setting"] for s in data["settings"]] == [
        "clearing off",
        "keep_head=0",
        "keep_head=200",
        "keep_head=500",
    ]
    assert len(data["trials"]) == 2 * 2 * 4
    cleared = data["settings"][1]["outcomes"]["refetched"]
    assert (cleared["count"], cleared["total"]) == (4, 4)
    off = data["settings"][0]["outcomes"]["declined"]
    assert off["count"] == 4  # nothing cleared, nothing to refetch
    assert {row["scenario"] for row in data["by_scenario"]} == {"log_search", "api_listing"}


def test_recall_options_shape_the_sweep(capsys):
    """--keep-heads, --no-off, --rounds, --target and --by scenario."""
    args = ["recall", "--model", "tests.lab.recall_helpers:decline", "--repeats", "1"]
    args += ["--keep-heads", "80", "--no-off", "--rounds", "6", "--target", "2", "--by", "scenario"]
    assert main([*args, "code_task", "log_search"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:-1]
    assert [r.split()[0:3] for r in rows] == [
        ["keep_head=80", "/", "code_task"],
        ["keep_head=80", "/", "log_search"],
    ]


def test_recall_appends_each_trial_to_a_jsonl_file_as_it_finishes(tmp_path, capsys):
    """--trials-jsonl keeps every finished trial, one JSON object a line."""
    path = tmp_path / "trials.jsonl"
    args = [
        "recall",
        "--model",
        "tests.lab.recall_helpers:decline",
        "--repeats",
        "2",
        "file_reading",
    ]
    assert main([*args, "--trials-jsonl", str(path)]) == 0
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 8
    assert {r["outcome"] for r in rows} == {"declined"}
    assert rows[0]["setting"] == "clearing off"


def test_recall_runs_a_scenario_file(capsys):
    """A .toml path is loaded as a scenario."""
    args = ["recall", str(EXAMPLE), "--model", "tests.lab.recall_helpers:decline", "--repeats", "3"]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {t["scenario"] for t in data["trials"]} == {"deploy_logs"}
    assert data["settings"][1]["cleared"]["count"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "tests.lab.recall_helpers:decline", "nope"], "unknown scenario 'nope'"),
        (["--model", "no_such_module_xyz:f"], "cannot import 'no_such_module_xyz'"),
        (["--model", "tests.lab.recall_helpers:absent"], "has no attribute 'absent'"),
        (["--model", "tests.lab.test_recall_cli:EXAMPLE"], "model must be a callable"),
        (["--model", "justaname"], "expected openai:NAME, anthropic:NAME or module:callable"),
        (
            ["--model", "tests.lab.recall_helpers:decline", "--rounds", "2", "--target", "3"],
            "past the last round",
        ),
        (
            ["--model", "tests.lab.recall_helpers:decline", "missing.json"],
            "cannot read scenario missing.json",
        ),
    ],
)
def test_recall_reports_bad_input_and_exits_1(capsys, args, message):
    """Unknown scenarios, unimportable models, bad shapes: one line on stderr, status 1."""
    assert main(["recall", *args, "--repeats", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("slimtools recall: ")
    assert message in err


def test_recall_without_a_model_is_a_usage_error(capsys):
    """--model is required (status 2, argparse's usage message)."""
    with pytest.raises(SystemExit) as exc:
        main(["recall"])
    assert exc.value.code == 2
    assert "--model" in capsys.readouterr().err


def test_recall_reports_a_model_that_raises(capsys):
    """A failing model stops the run with the place it failed."""
    assert (
        main(
            [
                "recall",
                "--model",
                "tests.lab.test_recall_cli:broken",
                "--repeats",
                "1",
                "file_reading",
            ]
        )
        == 1
    )
    assert "the model failed on file_reading repeat 0 (clearing off)" in capsys.readouterr().err


def broken(messages, tools):
    """A model whose endpoint is down."""
    raise ConnectionError("endpoint down")


def test_openai_spec_needs_a_key_and_names_where_to_put_it(monkeypatch, capsys):
    """openai:NAME without any key: a clear error, not a traceback."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["recall", "--model", "openai:gpt-x", "--base-url", "http://127.0.0.1:9/v1"])
    assert code == 1
    assert "--api-key" in capsys.readouterr().err


def test_model_specs_resolve_to_adapters():
    """openai: and anthropic: build SDK adapters; module:callable imports the callable."""
    assert callable(resolve_model("openai:m", base_url="http://127.0.0.1:9/v1", api_key="k"))
    assert callable(resolve_model("anthropic:m", base_url="http://127.0.0.1:9", api_key="k"))
    from tests.lab.recall_helpers import decline

    assert resolve_model("tests.lab.recall_helpers:decline") is decline


@pytest.mark.subprocess
def test_recall_as_a_console_command(tmp_path):
    """`python -m slimtools.cli recall --model mymodel:answer` from a user's folder."""
    (tmp_path / "mymodel.py").write_text("def answer(messages, tools):\n    return 'no idea'\n")
    done = run(slimtools("recall", "--model", "mymodel:answer", "--repeats", "1"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "keep_head=500" in done.stdout
