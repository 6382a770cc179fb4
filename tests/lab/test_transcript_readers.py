"""The table of transcript readers: one row per format, detection and dispatch read from it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from slimtools.transcripts import SOURCES, TranscriptError, _formats, iter_file
from slimtools.transcripts._model import Location, Run
from slimtools.transcripts._reader import Reader


def test_every_source_name_forces_exactly_one_reader():
    """Each name of SOURCES forces one reader of the table, and no reader has another name."""
    forced = [name for reader in _formats.READERS for name in reader.names]
    assert sorted(forced) == sorted(SOURCES)


def test_reader_names_are_unique():
    """No two rows of the table share a name."""
    names = [reader.name for reader in _formats.READERS]
    assert len(names) == len(set(names))


def test_only_line_readers_stream():
    """Only readers of one run's messages a line at a time declare a stream."""
    streaming = {r.name for r in _formats.READERS if r.stream is not None}
    assert streaming == {"claude_code", "api"}
    assert all(r.holds != "runs" for r in _formats.READERS if r.stream is not None)


def _toy_run(doc: dict[str, Any], base: Location, _forced: Any) -> Run:
    messages = [{"role": "user", "content": text} for text in doc["toy"]]
    return Run(messages, (), "openai_chat", label="#toy")


def test_a_new_format_is_its_reader_and_one_row(tmp_path, monkeypatch):
    """A reader added to the table is recognised and read with no other change."""
    toy = Reader(
        "toy", None, "runs", read_run=_toy_run, is_run=lambda doc: isinstance(doc.get("toy"), list)
    )
    monkeypatch.setattr(_formats, "READERS", (toy, *_formats.READERS))
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"toy": ["a", "b"]}), encoding="utf-8")
    (run,) = iter_file(path)
    assert [m["content"] for m in run.messages] == ["a", "b"]
    assert run.source == "openai_chat"


def test_a_whole_run_format_reads_each_line_as_a_run(tmp_path):
    """Forcing a format of whole runs on one message per line reads each line as a run."""
    path = tmp_path / "run.jsonl"
    path.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    with pytest.raises(TranscriptError, match=r":1: a tau-bench run needs a 'traj' list"):
        list(iter_file(path, format="tau_bench"))


def test_the_first_matching_row_wins(tmp_path):
    """An OpenHands run record (a ``history`` of events) is not read as a SWE-agent trajectory."""
    path = tmp_path / "run.json"
    doc = {"history": [{"action": "message", "args": {"content": "hi"}, "source": "user"}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    (run,) = iter_file(path)
    assert run.source == "openhands"
