"""The recorded bill against the ledger's modelled one: usage reader, calibration, pricing."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given

from slimtools.cli import main
from slimtools.errors import TranscriptError
from slimtools.instrumentation import usage_of
from slimtools.ledger.analyze import analyze
from slimtools.ledger.bill import DEFAULT_CALIBRATION, bill_run
from slimtools.transcripts import (
    claude_code_messages,
    load_file,
    read_usage,
    recorded_requests,
    stream_file,
)
from tests._shared import shared_data
from tests.lab.strategies_usage import compacted_sessions, notified_sessions, recorded_sessions
from tests.lab.usage_sessions import (
    RESULTS,
    SUMMARY,
    compacted_lines,
    compacted_prompts,
    prompts_of,
    session_lines,
    with_notification,
    with_usage,
    write_session,
)

TRUE = {"factor": 1.6, "per_message": 30.0, "prefix": 21_000}


def _session(**true: float) -> list[dict]:
    lines = session_lines(RESULTS)
    return with_usage(lines, prompts_of(lines, **(TRUE | true)))  # type: ignore[arg-type]


def test_usage_reader_reads_each_response_once_from_its_last_line():
    """A response logged over several lines is one request, with the split by cache."""
    lines = _session()
    first = lines[1]
    lines.insert(2, {**first, "message": {**first["message"], "content": []}})
    requests = recorded_requests(enumerate(lines, 1))
    assert len(requests) == len(RESULTS) + 1
    assert requests[0].write_5m == 0
    assert requests[0].write_1h == requests[0].cache_write > 0


def test_usage_reader_reads_usage_as_the_live_watch_reads_it():
    """A recorded response's usage is the one reading a live ``CacheWatch`` makes of it."""
    lines = _session()
    for line, request in zip(lines[1::2], recorded_requests(enumerate(lines, 1)), strict=False):
        live = usage_of(line["message"]["usage"])
        assert (request.prompt, request.cache_read, request.write_1h) == (
            live.prompt,
            live.cache_read,
            live.write_1h,
        )
        assert (request.input, request.write_5m) == (live.input, live.write_5m)


def test_usage_reader_drops_sidechain_responses_of_a_main_session():
    """A subagent's responses inside a session are not the main agent's requests."""
    lines = _session()
    side = {**lines[1], "isSidechain": True, "message": {**lines[1]["message"], "id": "side"}}
    assert len(recorded_requests(enumerate([*lines, side], 1))) == len(RESULTS) + 1


def test_session_without_usage_records_nothing(tmp_path):
    """No usage logged: no requests, and analyze adds no bill for it."""
    path = write_session(tmp_path / "s.jsonl", session_lines(RESULTS))
    assert read_usage(path) == []
    assert analyze(path).files[0].bills == ()


def test_calibration_recovers_density_framing_and_prefix():
    """Fitted on the run's own growth, the tokenizer and the unseen prefix come back."""
    lines = _session()
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    fitted = bill.calibration
    assert fitted.source == "recorded"
    assert fitted.factor == pytest.approx(1.6, rel=0.02)
    assert fitted.per_message == pytest.approx(30.0, abs=3)
    assert fitted.prefix == pytest.approx(21_000, rel=0.01)


def test_modelled_bill_matches_a_warm_recorded_run_within_one_percent():
    """With no break in the record, the calibrated model bills what was billed."""
    lines = _session()
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert bill.ratio == pytest.approx(1.0, abs=0.01)
    assert bill.breaks == ()


def test_offline_default_is_closer_than_four_characters_a_token():
    """The default calibration beats the bare counter on a dense tokenizer's record."""
    lines = _session(factor=1.3, per_message=40.0)
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    bare = bill_run(
        claude_code_messages(lines), recorded_requests(enumerate(lines, 1)), counter=len
    )
    assert abs(bill.offline_ratio - 1) < 0.02
    assert DEFAULT_CALIBRATION.factor > 1
    assert bare.calibration.factor < 1  # characters overcount: the fit scales them down


def test_run_that_wrote_the_one_hour_cache_is_priced_at_its_prices():
    """1-hour writes are billed at 2x the input price, 5-minute ones at 1.25x."""
    lines = session_lines(RESULTS)
    prompts = prompts_of(lines, **TRUE)  # type: ignore[arg-type]
    hour = with_usage(lines, prompts, hour=True)
    five = with_usage(lines, prompts, hour=False)
    billed_hour = bill_run(claude_code_messages(hour), recorded_requests(enumerate(hour, 1)))
    billed_five = bill_run(claude_code_messages(five), recorded_requests(enumerate(five, 1)))
    assert (billed_hour.cache, billed_five.cache) == ("anthropic-1h", "anthropic")
    writes = billed_hour.recorded.cache_write
    assert billed_hour.recorded_cost - billed_five.recorded_cost == pytest.approx(0.75 * writes)


def test_expired_cache_break_is_classified_and_modelled():
    """A call an hour and a half after the last one re-writes its prompt: the break is
    named expired, and the model, which sees the gap, writes the prompt again too."""
    lines = session_lines(RESULTS, gaps=[10, 10, 10, 5_400, 10, 10])
    prompts = prompts_of(lines, **TRUE)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    reads[3] = 0
    recorded = with_usage(lines, prompts, reads=reads)
    bill = bill_run(claude_code_messages(recorded), recorded_requests(enumerate(recorded, 1)))
    assert [(b.request, b.cause) for b in bill.breaks] == [(4, "expired")]
    assert bill.ratio == pytest.approx(1.0, abs=0.01)
    assert bill.break_cost == 0


def test_small_shortfall_is_not_a_break():
    """Reads short by under 2,000 tokens are rounding, not a lost cache."""
    lines = session_lines(RESULTS)
    prompts = prompts_of(lines, **TRUE)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    reads[2] -= 1_500
    recorded = with_usage(lines, prompts, reads=reads)
    bill = bill_run(claude_code_messages(recorded), recorded_requests(enumerate(recorded, 1)))
    assert bill.breaks == ()


def test_compaction_before_a_break_names_it():
    """A break after a compaction boundary is the compaction's."""
    lines = _session()
    lines[5]["message"]["usage"]["cache_read_input_tokens"] = 0
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "c", "sessionId": "s"}
    lines.insert(5, boundary)
    (found,) = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1))).breaks
    assert found.cause == "compaction"


def test_model_change_before_a_break_names_it():
    """Caches are per model: a break when the model changed is the change's."""
    lines = _session()
    lines[5]["message"] = {**lines[5]["message"], "model": "claude-sonnet-4-5"}
    lines[5]["message"]["usage"] = {**lines[5]["message"]["usage"], "cache_read_input_tokens": 0}
    (found,) = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1))).breaks
    assert (found.request, found.cause) == (3, "model_change")


def test_usage_reader_marks_the_call_a_task_notification_started():
    """The call after a background task's ``<task-notification>`` line is marked, no other."""
    lines = with_notification(_session(), 3)
    marked = [r.notified for r in recorded_requests(enumerate(lines, 1))]
    assert marked == [k == 3 for k in range(len(RESULTS) + 1)]


def test_read_usage_marks_a_task_notification_as_the_reader_does(tmp_path):
    """Reading a session file's usage alone marks the call a notification started too."""
    lines = with_notification(_session(), 3)
    path = write_session(tmp_path / "s.jsonl", lines)
    assert read_usage(path) == recorded_requests(enumerate(lines, 1))


def _notified(*, read_prefix: bool) -> list[dict]:
    """A session with a task notification before its fourth call, which reads only the
    prefix (system prompt and tools) when ``read_prefix``, else the whole previous prompt."""
    lines = with_notification(session_lines(RESULTS), 3)
    prompts = prompts_of(lines, **TRUE)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    if read_prefix:
        reads[3] = TRUE["prefix"]
    return with_usage(lines, prompts, reads=reads)


def test_break_after_a_task_notification_is_named_and_modelled():
    """A call a task notification started that reads only the prefix is a break of cause
    ``task_notification``; the model reads there what the record read, so it costs the
    explained bill nothing."""
    lines = _notified(read_prefix=True)
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert [(b.request, b.cause) for b in bill.breaks] == [(4, "task_notification")]
    assert bill.ratio == pytest.approx(1.0, abs=0.01)
    assert bill.break_cost == 0


def test_task_notification_that_kept_the_cache_is_no_break():
    """A notification whose call read the whole previous prompt leaves the bill warm."""
    lines = _notified(read_prefix=False)
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert bill.breaks == ()
    assert bill.ratio == pytest.approx(1.0, abs=0.01)


@given(notified_sessions())
def test_calibrated_model_bills_any_notified_session_within_two_percent(lines):
    """Whatever the tokenizer and prefix, a run with a task notification before one call,
    which lost the cache or kept it, is modelled within 2%: a break there is named
    ``task_notification`` and costs the explained bill nothing."""
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert {b.cause for b in bill.breaks} <= {"task_notification"}
    assert bill.ratio == pytest.approx(1.0, abs=0.02)
    assert bill.break_cost == 0


def test_analyze_json_gives_each_run_recorded_and_modelled_usage(tmp_path, capsys):
    """``--json``: each run with usage carries both, as input / cache_read / cache_write."""
    path = write_session(tmp_path / "s.jsonl", _session())
    assert main(["analyze", str(path), "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["files"][0]["runs"]
    keys = {"input", "cache_read", "cache_write"}
    assert set(run["recorded_usage"]) == set(run["modelled_usage"]) == keys
    assert run["ratio"] == pytest.approx(1.0, abs=0.01)


def test_analyze_table_shows_the_ratio(tmp_path, capsys):
    """The table lists the run with recorded, modelled and their ratio."""
    path = write_session(tmp_path / "s.jsonl", _session())
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("s.jsonl")]
    assert "1.00x" in line


def _main_sessions() -> list[Path]:
    """Every shared Claude Code main session (a subagent's run is ``<session>__agent-*``)."""
    root = shared_data()
    folders = (
        root / "transcripts" / "claude_code",
        root / "sessions_with_compaction" / "claude_code",
    )
    return [p for f in folders for p in sorted(f.glob("*.jsonl")) if "__agent-" not in p.name]


@pytest.mark.shared
def test_shared_main_sessions_are_modelled_within_ten_percent():
    """Each shared main session with usage is modelled within 10% of its record, every
    break has a cause the transcript shows, and the explained bill is the model's."""
    bills = [b for p in _main_sessions() for f in analyze(p).files for b in f.bills]
    assert len(bills) == 4
    for bill in bills:
        assert abs(bill.ratio - 1) <= 0.10, bill.name
        assert [b for b in bill.breaks if b.cause == "unexplained"] == [], bill.name
        assert bill.explained_ratio == bill.ratio, bill.name


@pytest.mark.shared
def test_shared_compacted_session_restarts_at_its_summary():
    """The real compacted session's history restarts once, at the summary message."""
    (path,) = shared_data().glob("sessions_with_compaction/claude_code/*-*-*-*-????????????.jsonl")
    (run,) = load_file(path)
    (restart,) = run.restarts
    assert run.messages[restart]["content"].startswith("This session is being continued")
    (streamed,) = stream_file(path)
    list(streamed.messages)
    assert streamed.restarts == [restart]


@pytest.mark.shared
def test_shared_compacted_session_is_billed_from_its_summary_on():
    """On the real compacted session the compaction is modelled (its break costs the
    explained bill nothing), and so is each break after a background task's notification:
    the bill is within 2% of the record."""
    (path,) = shared_data().glob("sessions_with_compaction/claude_code/*-*-*-*-????????????.jsonl")
    (bill,) = analyze(path).files[0].bills
    causes = [(b.request, b.cause) for b in bill.breaks]
    assert causes == [(32, "task_notification"), (103, "compaction"), (150, "task_notification")]
    assert bill.break_cost == 0
    assert bill.ratio == pytest.approx(1.0, abs=0.02)


def test_gap_is_measured_from_the_previous_response_end():
    """The time between calls runs from the previous response's last line."""
    lines = _session()
    requests = recorded_requests(enumerate(lines, 1))
    assert requests[1].at is not None
    assert requests[0].ended is not None
    assert requests[1].at - requests[0].ended == timedelta(seconds=10)


def test_analyze_bills_from_the_stream_as_from_the_whole_run(tmp_path):
    """The bill analyze makes from its streamed replay equals the one of the whole history."""
    lines = _session()
    path = write_session(tmp_path / "s.jsonl", lines)
    (streamed,) = analyze(path).files[0].bills
    whole = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert streamed.modelled == whole.modelled
    assert streamed.calibration == whole.calibration


def test_calibrated_counter_scales_the_base_counter():
    """``Calibration.counter`` counts factor times the base counter, rounded."""
    counter = DEFAULT_CALIBRATION.counter(len)
    assert counter("x" * 400) == round(DEFAULT_CALIBRATION.factor * 400)
    assert counter("") == 0


def test_synthetic_replies_are_no_requests():
    """A reply Claude Code made itself (zero usage) is left out of both bills."""
    lines = _session()
    synthetic = {**lines[3], "message": {**lines[3]["message"], "model": "<synthetic>"}}
    synthetic["message"]["usage"] = {"input_tokens": 0, "output_tokens": 0}
    lines[3] = synthetic
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert bill.requests == len(RESULTS)
    assert bill.breaks == ()


@given(recorded_sessions())
def test_calibrated_model_bills_any_warm_session_within_two_percent(case):
    """Whatever the tokenizer and prefix, a run without breaks is modelled within 2%."""
    lines, true = case
    bill = bill_run(claude_code_messages(lines), recorded_requests(enumerate(lines, 1)))
    assert bill.breaks == ()
    assert bill.ratio == pytest.approx(1.0, abs=0.02)
    assert bill.calibration.prefix == pytest.approx(true["prefix"], rel=0.05, abs=200)


def test_usage_of_a_broken_session_line_names_the_line(tmp_path):
    """A line that names usage but is not JSON is a TranscriptError with its number."""
    lines = _session()
    path = write_session(tmp_path / "s.jsonl", lines)
    path.write_text(path.read_text() + '{"type": "assistant", "usage": \n')
    with pytest.raises(TranscriptError) as caught:
        read_usage(path)
    assert caught.value.line == len(lines) + 1


def test_usage_of_another_format_is_empty(tmp_path):
    """A file of another format records no usage (and is not an error)."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert read_usage(path) == []


def test_streamed_session_carries_its_usage_once_read(tmp_path):
    """``stream_file`` gives a Claude Code run's usage once its messages are read."""
    lines = _session()
    (run,) = stream_file(write_session(tmp_path / "s.jsonl", lines))
    assert run.usage == []
    list(run.messages)
    assert run.usage == recorded_requests(enumerate(lines, 1))


def _compacted(tmp_path):
    """A compacted session with usage: after the compaction the prompt is the prefix, the
    context Claude Code adds back and the summary onward; the call after it reads only the
    prefix from the cache."""
    lines = compacted_lines(RESULTS[:4], RESULTS[2:])
    prompts = compacted_prompts(lines, **TRUE, added=4_000)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    reads[4] = TRUE["prefix"]
    return write_session(tmp_path / "compacted.jsonl", with_usage(lines, prompts, reads=reads))


def test_compacted_session_is_billed_for_what_the_model_saw_after_it(tmp_path):
    """After a compaction the model bills the summary and what follows, not the history
    before it: a compacted run's model is within 2% of its record."""
    (run,) = load_file(_compacted(tmp_path))
    bill = bill_run(run.messages, read_usage(run.path), restarts=run.restarts)
    assert [(b.request, b.cause) for b in bill.breaks] == [(5, "compaction")]
    assert bill.ratio == pytest.approx(1.0, abs=0.02)


@given(compacted_sessions())
def test_calibrated_model_bills_any_compacted_session_within_two_percent(lines):
    """Whatever the tokenizer, the prefix and the context put back after the compaction,
    a run compacted once and otherwise warm is modelled within 2%, its compaction in the
    model (no break cost)."""
    messages = claude_code_messages(lines)
    (restart,) = [i for i, m in enumerate(messages) if m["content"] == SUMMARY]
    bill = bill_run(messages, recorded_requests(enumerate(lines, 1)), restarts=[restart])
    assert [b.cause for b in bill.breaks] in ([], ["compaction"])
    assert bill.break_cost == 0
    assert bill.ratio == pytest.approx(1.0, abs=0.02)


def test_a_modelled_compaction_adds_nothing_to_the_explained_bill(tmp_path):
    """The compaction's break is in the model already: the explained ratio is the ratio."""
    (run,) = load_file(_compacted(tmp_path))
    bill = bill_run(run.messages, read_usage(run.path), restarts=run.restarts)
    assert bill.break_cost == 0
    assert bill.explained_ratio == bill.ratio


def test_analyze_bills_a_compacted_stream_as_the_whole_run(tmp_path):
    """The streamed replay finds the compaction as the whole run does, and bills the same."""
    path = _compacted(tmp_path)
    (run,) = load_file(path)
    (streamed,) = analyze(path).files[0].bills
    whole = bill_run(run.messages, read_usage(path), restarts=run.restarts)
    assert streamed.modelled == whole.modelled
    assert streamed.ratio == pytest.approx(1.0, abs=0.02)


def test_unexplained_break_is_what_the_explained_bill_adds(tmp_path):
    """A break the transcript gives no reason for stays out of the model; its cost is the
    explained bill's addition, which brings the ratio to 1."""
    lines = session_lines(RESULTS)
    prompts = prompts_of(lines, **TRUE)  # type: ignore[arg-type]
    reads = [0, *prompts[:-1]]
    reads[3] = TRUE["prefix"]
    recorded = with_usage(lines, prompts, reads=reads)
    bill = bill_run(claude_code_messages(recorded), recorded_requests(enumerate(recorded, 1)))
    assert [(b.request, b.cause) for b in bill.breaks] == [(4, "unexplained")]
    assert bill.ratio < 0.95
    assert bill.explained_ratio == pytest.approx(1.0, abs=0.01)
