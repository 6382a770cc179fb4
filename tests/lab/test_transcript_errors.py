"""Bad transcript files: one clear line each, the other files still read, runs streamed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from slimtools.errors import SlimtoolsError, TranscriptError
from slimtools.transcripts import iter_file, iter_transcripts, load_file, load_transcripts

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
MALFORMED = sorted((DATA / "malformed").iterdir())


@pytest.mark.parametrize(
    ("name", "line", "reason"),
    [
        ("cut_line.jsonl", 4, "not valid JSON (Invalid control character, column 59)"),
        ("truncated.json", 26, "not valid JSON (Unterminated string starting) in list element 3"),
        ("latin1.jsonl", 2, "not UTF-8 text (byte 32)"),
        ("call_without_id.traj", None, "history[0].tool_calls[0] has no id"),
        ("not_an_event.json", None, "event 1 is neither an action nor an observation"),
        (
            "third_run_broken.json",
            None,
            "list element 2: a tau-bench run needs a 'traj' list of messages",
        ),
    ],
)
def test_malformed_file_names_file_line_and_fault(name, line, reason):
    """The error names the file, the line where known and what is wrong, in one line."""
    path = DATA / "malformed" / name
    with pytest.raises(TranscriptError) as exc:
        load_file(path)
    where = f"{path}:{line}" if line else f"{path}"
    assert str(exc.value) == f"{where}: {reason}"
    assert (exc.value.path, exc.value.line, exc.value.reason) == (path, line, reason)


def test_transcript_error_is_a_value_error():
    """TranscriptError is a ValueError and a SlimtoolsError, as callers catch either."""
    assert issubclass(TranscriptError, ValueError)
    assert issubclass(TranscriptError, SlimtoolsError)


def test_a_multiline_cause_becomes_one_line():
    """Whatever the cause says, the message stays on one line."""
    error = TranscriptError("f.json", "first\nsecond\n  third")
    assert str(error) == "f.json: first second third"


def test_on_error_reports_each_bad_file_and_goes_on():
    """With on_error every malformed file is reported once and every good run still comes."""
    errors: list[TranscriptError] = []
    loaded = list(iter_transcripts(DATA, on_error=errors.append))
    assert sorted(e.path.name for e in errors) == sorted(p.name for p in MALFORMED)
    good = [t for t in loaded if t.path.parent.name != "malformed"]
    assert len(good) == 20
    assert {t.name for t in loaded if t.path.parent.name == "malformed"} == {
        "third_run_broken.json#0-0",
        "third_run_broken.json#1-0",
    }  # the runs before the fault were already read


def test_without_on_error_the_first_bad_file_raises():
    """Without on_error, iteration stops at the first malformed file."""
    with pytest.raises(TranscriptError, match="malformed"):
        load_transcripts(DATA)


def test_missing_path_goes_to_on_error(tmp_path):
    """A path that does not exist is reported like a bad file, and the others are read."""
    errors: list[TranscriptError] = []
    loaded = list(iter_transcripts(tmp_path / "gone", DATA / "tau_bench", on_error=errors.append))
    assert [str(e) for e in errors] == [f"{tmp_path / 'gone'}: no such transcript file or folder"]
    assert len(loaded) == 3


def test_a_pipe_given_as_a_transcript_is_named_as_one(tmp_path):
    """A fifo exists: the error says it is not a regular file, not that it is missing."""
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    errors: list[TranscriptError] = []
    assert list(iter_transcripts(fifo, on_error=errors.append)) == []
    assert [e.reason for e in errors] == ["not a regular file or folder (a pipe, socket or device)"]


def test_missing_path_raises_without_on_error():
    """A path that does not exist is reported, not silently skipped."""
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_transcripts("/nowhere/at/all")


@pytest.mark.parametrize("name", ["README.md", "settings.json", "blob.bin", "empty.jsonl"])
def test_files_that_are_not_transcripts_are_skipped(name):
    """READMEs, unrelated JSON, binaries and empty files are no transcripts and no errors."""
    assert load_file(DATA / "unknown" / name) == []


def test_unreadable_file_is_an_error(tmp_path):
    """A folder given as a file cannot be read: the error says so."""
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(TranscriptError, match="cannot be read"):
        load_file(tmp_path / "dir.jsonl")


def test_runs_of_a_list_stream_before_a_later_fault():
    """A file of many runs yields each run as it is read: runs before a fault arrive first."""
    runs = iter_file(DATA / "malformed" / "third_run_broken.json")
    assert next(runs).name == "third_run_broken.json#0-0"
    assert next(runs).name == "third_run_broken.json#1-0"
    with pytest.raises(TranscriptError, match="list element 2"):
        next(runs)


def test_runs_of_jsonl_stream_before_a_later_fault(tmp_path):
    """The same for one run a line: the bad line is named, the earlier runs came through."""
    good = (DATA / "openhands" / "output.jsonl").read_text()
    path = tmp_path / "runs.jsonl"
    path.write_text(good + '{"instance_id": "x", "history": [{"action": 1}]}\n')
    runs = iter_file(path)
    assert [next(runs).name, next(runs).name] == [
        "runs.jsonl#repo__issue-0",
        "runs.jsonl#repo__issue-1",
    ]
    with pytest.raises(TranscriptError) as exc:
        next(runs)
    assert str(exc.value) == f"{path}:3: event 0 is neither an action nor an observation"


def test_claude_code_line_that_is_not_an_object(tmp_path):
    """A JSON line that is not an object inside a session is named by its line."""
    lines = (DATA / "claude_code" / "session.jsonl").read_text().splitlines(True)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines[:5]) + "[1, 2]\n" + "".join(lines[5:]))
    with pytest.raises(TranscriptError, match=r"s\.jsonl:6: a list, not a JSON object"):
        load_file(path)


def test_api_history_with_a_non_object_message(tmp_path):
    """A message list holding a string names the message."""
    path = tmp_path / "h.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, "oops"]))
    with pytest.raises(TranscriptError, match="message 1 is a str, not an object"):
        load_file(path)


_DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("deep.json", _DEEP),  # a list document
        ("deep.jsonl", '{"role": "user", "content": "hi"}\n' + _DEEP + "\n"),  # a JSON line
        ("deep_object.json", '{"messages": ' + _DEEP + "}"),  # one document
    ],
)
def test_json_nested_past_the_stack_is_a_transcript_error(tmp_path, name, text):
    """JSON nested 100,000 deep is a malformed file named in one line, not a RecursionError."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(TranscriptError, match="nested too deep") as exc:
        load_file(path)
    assert exc.value.path == path


def test_a_file_nested_too_deep_does_not_stop_the_others(tmp_path):
    """With on_error, the deep file is reported and the good file beside it is still read."""
    (tmp_path / "deep.json").write_text(_DEEP)
    good = DATA / "openai_chat" / "body.json"
    (tmp_path / "good.json").write_bytes(good.read_bytes())
    errors: list[TranscriptError] = []
    loaded = list(iter_transcripts(tmp_path, on_error=errors.append))
    assert [e.path.name for e in errors] == ["deep.json"]
    assert [t.path.name for t in loaded] == ["good.json"]
