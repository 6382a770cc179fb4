"""stream_file: runs read as their messages are used, equal to what iter_file loads whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.errors import TranscriptError
from slimtools.transcripts import iter_file, stream_file, transcript_files
from slimtools.transcripts._claude_code import (
    claude_code_run,
    index_session,
    session_entries,
    session_messages,
)
from slimtools.transcripts._model import Location, Origin, Run
from tests._profile import examples
from tests._shared import sample, shared_data
from tests.lab.claude_code_reference import reference_messages, session_lines
from tests.lab.strategies_transcripts import RENDERERS, histories, styles

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"


def _every_file(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def loaded(path: Path) -> Any:
    """What iter_file gives (or its error message)."""
    try:
        return [(t.name, t.source, t.format, t.synthetic, t.messages) for t in iter_file(path)]
    except TranscriptError as exc:
        return str(exc)


def streamed(path: Path) -> Any:
    """What stream_file gives, its messages consumed (or its error message)."""
    try:
        return [
            (s.name, s.source, s.format, s.synthetic, list(s.messages)) for s in stream_file(path)
        ]
    except TranscriptError as exc:
        return str(exc)


@pytest.mark.parametrize("path", _every_file(DATA), ids=lambda p: str(p.relative_to(DATA)))
def test_every_test_file_streams_as_it_loads(path):
    """Runs, names, formats and messages equal iter_file's; a bad file fails the same way."""
    assert streamed(path) == loaded(path)


@pytest.mark.shared
def test_every_real_file_streams_as_it_loads():
    """The shared transcripts stream exactly as they load."""
    root = shared_data() / "transcripts"
    for path in sample(_every_file(root), key=lambda path: path.relative_to(root).parts[0]):
        assert streamed(path) == loaded(path), path


@pytest.mark.parametrize("layout", sorted(RENDERERS))
@settings(max_examples=examples(30), deadline=None)
@given(history=histories, style=styles)
def test_any_file_streams_as_it_loads(layout, history, style, tmp_path_factory):
    """Property: a random history in every file layout streams as iter_file loads it."""
    _, suffix, render = RENDERERS[layout]
    path = tmp_path_factory.mktemp("stream") / f"run{suffix}"
    path.write_bytes(render(history, style))
    assert streamed(path) == loaded(path)


def test_a_claude_code_session_and_a_message_log_are_read_message_by_message():
    """Single-run JSON Lines files are streamed; documents and lists of runs are loaded."""
    kinds = {
        p.name: [s.streamed for s in stream_file(p)]
        for p in (
            DATA / "claude_code" / "session.jsonl",
            DATA / "openai_chat" / "messages.jsonl",
            DATA / "openai_chat" / "list.json",
            DATA / "openhands" / "output.jsonl",
        )
    }
    assert kinds == {
        "session.jsonl": [True],
        "messages.jsonl": [True],
        "list.json": [False],
        "output.jsonl": [False, False],
    }


def _session(n: int) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for i in range(n):
        use = {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "message": {"id": f"m{i}", "role": "assistant", "content": [use]},
            }
        )
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 50}
        lines.append(
            {"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": [result]}}
        )
    return lines


def test_a_session_message_is_emitted_before_the_rest_of_the_file_is_read():
    """The emit pass holds a response only until its results are read, not to the end."""
    lines = list(enumerate(_session(200), 1))
    index = index_session(session_entries(lines))
    read = 0

    def counted():
        nonlocal read
        for item in session_entries(lines):
            read += 1
            yield item

    lags = []
    for n, _ in enumerate(session_messages(counted(), index), 1):
        lags.append(read - n)
    assert max(lags) <= 1
    assert len(lags) == 400


def test_a_malformed_line_fails_while_the_messages_are_read(tmp_path):
    """A broken line deep in a streamed session raises TranscriptError naming file and line."""
    path = tmp_path / "session.jsonl"
    text = "\n".join(json.dumps(line) for line in _session(30)) + "\n{broken\n"
    path.write_text(text)
    (run,) = stream_file(path)
    with pytest.raises(TranscriptError) as exc:
        list(run.messages)
    assert str(exc.value).startswith(f"{path}:61: not valid JSON")


def test_progress_adds_up_to_the_file_size(tmp_path):
    """The bytes reported while streaming add up to the file's size, in both kinds of file."""
    for path in (DATA / "claude_code" / "session.jsonl", DATA / "tau_bench" / "airline.json"):
        seen: list[int] = []
        for run in stream_file(path, progress=seen.append):
            list(run.messages)
        assert sum(seen) == path.stat().st_size, path


def test_a_message_log_whose_first_tool_call_comes_late_gets_its_format(tmp_path):
    """The messages before the first telling one are held, then the format is known."""
    path = tmp_path / "log.jsonl"
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"m{i}"} for i in range(30)]
    messages.append(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        }
    )
    messages.append(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
    )
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    (run,) = stream_file(path)
    assert (run.source, run.format) == ("anthropic", "anthropic")
    assert list(run.messages) == messages


def test_transcript_files_walks_folders_and_reports_missing_paths():
    """Folders are walked in order; a missing path goes to on_error, not an exception."""
    errors: list[TranscriptError] = []
    found = list(transcript_files(DATA / "tau_bench", DATA / "nope", on_error=errors.append))
    assert found == [DATA / "tau_bench" / "airline.json"]
    assert [str(e) for e in errors] == [f"{DATA / 'nope'}: no such transcript file or folder"]
    with pytest.raises(FileNotFoundError):
        list(transcript_files(DATA / "nope"))


# -- the session reader against the one-pass reader it replaced ------------------------------


def _reference(records: list[tuple[int, Any]]) -> Run:
    """The reader before streaming: every line held, two loops over them (the slow reference)."""
    entries = list(session_entries(records))
    main = [e for e in entries if not e[1].get("isSidechain")]
    entries = main or entries

    def blocks_of(content: Any, number: int) -> list[tuple[dict[str, Any], Location]]:
        if isinstance(content, str):
            return [({"type": "text", "text": content}, Location(number, ("message", "content")))]
        return [
            (b, Location(number, ("message", "content", i)))
            for i, b in enumerate(content if isinstance(content, list) else [])
            if isinstance(b, dict)
        ]

    def key_of(line: dict[str, Any], number: int) -> str:
        return str(line["message"].get("id") or f"line{number}")

    blocks: dict[str, list[Any]] = {}
    owner: dict[str, str] = {}
    for number, line in entries:
        if line["type"] == "assistant":
            for block in blocks_of(line["message"].get("content"), number):
                blocks.setdefault(key_of(line, number), []).append(block)
                if block[0].get("type") == "tool_use":
                    owner[str(block[0].get("id"))] = key_of(line, number)
    answers: dict[str, list[Any]] = {}
    for number, line in entries:
        if line["type"] == "user":
            for block in blocks_of(line["message"].get("content"), number):
                answered = owner.get(str(block[0].get("tool_use_id")))
                if block[0].get("type") == "tool_result" and answered is not None:
                    answers.setdefault(answered, []).append(block)
    messages: list[Any] = []
    origins: list[Origin] = []

    def user(bs: list[Any]) -> None:
        messages.append({"role": "user", "content": [b for b, _ in bs]})
        results = {
            s: p.child("content") for s, (b, p) in enumerate(bs) if b.get("type") == "tool_result"
        }
        origins.append(Origin(Location(bs[0][1].line, ("message",)), results))

    emitted: set[str] = set()
    for number, line in entries:
        at = Location(number, ("message",))
        content = line["message"].get("content")
        if line["type"] == "assistant":
            key = key_of(line, number)
            if key in emitted:
                continue
            emitted.add(key)
            messages.append({"role": "assistant", "content": [b for b, _ in blocks.get(key, [])]})
            origins.append(Origin(at))
            if key in answers:
                user(answers[key])
        elif isinstance(content, str):
            messages.append({"role": "user", "content": content})
            origins.append(Origin(at))
        else:
            rest = [
                b
                for b in blocks_of(content, number)
                if not (b[0].get("type") == "tool_result" and str(b[0].get("tool_use_id")) in owner)
            ]
            if rest:
                user(rest)
    return Run(messages, tuple(origins), "anthropic")


_ids = st.sampled_from(["t0", "t1", "t2", "t3", "t4"])
_block = st.one_of(
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "Bash", "input": {}}, _ids),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "out"}, _ids),
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["a", "b"])),
)
_line = st.builds(
    lambda kind, mid, content, side: {
        "type": kind,
        "uuid": "u",
        "isSidechain": side,
        "message": {"role": kind, "content": content} | ({"id": mid} if mid else {}),
    },
    st.sampled_from(["user", "assistant"]),
    st.sampled_from([None, "m0", "m1", "m2", "m3"]),
    st.one_of(st.lists(_block, max_size=3), st.just("plain text")),
    st.booleans() | st.just(False),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_line, max_size=25))
def test_the_two_pass_session_reader_equals_the_one_pass_reader(lines):
    """Property: split responses, early and unknown answers, sidechains: the same history."""
    records = list(enumerate(lines, 1))
    assert claude_code_run(records) == _reference(records)


@settings(max_examples=examples(600), deadline=None)
@given(records=session_lines)
def test_a_session_reads_as_the_reference_reader_reads_it(records):
    """Property: the lean session index changes no message and no origin, on sessions whose
    responses scatter, reuse call ids, and are answered early, late, twice or never."""
    run = claude_code_run(records)
    assert list(zip(run.messages, run.origins, strict=True)) == reference_messages(records)


def test_reading_a_session_lets_its_index_go():
    """Once every message is read, the index holds no call and no response."""
    lines = list(enumerate(_session(50), 1))
    index = index_session(session_entries(lines))
    assert len(index.scan.owner) == len(index.scan.complete) == 50
    assert len(list(session_messages(session_entries(lines), index))) == 100
    assert not index.scan.owner
    assert not index.scan.complete


def test_a_result_appended_after_the_session_was_indexed_is_kept():
    """A line written to a live session between the two passes, answering a call whose
    response was emitted already, comes out as a user message of its own, not dropped."""
    lines = list(enumerate(_session(3), 1))
    index = index_session(session_entries(lines))
    late = {"type": "tool_result", "tool_use_id": "t0", "content": "again"}
    appended = [*lines, (7, {"type": "user", "message": {"role": "user", "content": [late]}})]
    messages = [m for m, _ in session_messages(session_entries(appended), index)]
    assert len(messages) == 7
    assert messages[-1] == {"role": "user", "content": [late]}
