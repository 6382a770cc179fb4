"""Runs whose messages are read as they are used, so one long session is never held whole.

:func:`stream_file` yields a file's runs like :func:`~slimtools.transcripts.iter_file`, but
a run's messages come as an iterator. Single-run JSON Lines files (a Claude Code session,
one API message a line) are read a line at a time: only the messages not yet consumed, and
for Claude Code the lines of a response not yet complete, are held. Every other file is
read as :func:`~slimtools.transcripts.iter_file` reads it (a list of runs a run at a time,
a single document whole) and its runs' messages are handed out from memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, cast

from slimtools.clearing.formats.view import _format_of
from slimtools.transcripts._api import API_FORMATS
from slimtools.transcripts._claude_code import index_session, session_entries, session_messages
from slimtools.transcripts._jsonio import iter_jsonl, sniff
from slimtools.transcripts._load import (
    _API,
    _SNIFF_RECORDS,
    OnError,
    _check_format,
    _files,
    _reading,
    _split,
)
from slimtools.transcripts._load import iter_file as _iter_file
from slimtools.transcripts._model import HistoryFormat, MalformedError, Source
from slimtools.transcripts._usage import RecordedRequest, UsageCollector

Progress = Callable[[int], None]
"""Called with the number of bytes of the file read since the last call."""


@dataclass(frozen=True)
class RunStream:
    """One run of a transcript file, its messages read while they are iterated.

    Attributes:
        name: the run's label, as :class:`~slimtools.transcripts.Transcript` names it.
        source: the format the run is read from (one of
            :data:`~slimtools.transcripts.SOURCES`).
        format: the history format of the messages, one the clearing core reads.
        messages: the history, oldest first; iterate it once, before asking the file for
            its next run. A malformed line raises
            :class:`~slimtools.errors.TranscriptError` from here.
        path: the file.
        run: the run's index in its file.
        synthetic: True when some tool calls were synthesised from text actions.
        streamed: True when the messages are read from the file as they are iterated
            (False: the run was loaded whole).
        usage: what each request of the run recorded it was billed, once ``messages`` has
            been read (Claude Code sessions; empty for every other run).
    """

    name: str
    source: Source
    format: HistoryFormat
    messages: Iterator[Any] = field(repr=False)
    path: Path
    run: int = 0
    synthetic: bool = False
    streamed: bool = False
    usage: list[RecordedRequest] = field(default_factory=list, repr=False)


def transcript_files(*paths: str | Path, on_error: OnError | None = None) -> Iterator[Path]:
    """Every file under ``paths``, as :func:`~slimtools.transcripts.iter_transcripts` walks
    them: folders recursively and in path order, files as given.

    Raises:
        FileNotFoundError: a path that does not exist, when there is no ``on_error`` (with
            it, ``on_error`` gets a :class:`~slimtools.errors.TranscriptError` instead).
    """
    yield from _files(paths, on_error)


def stream_file(
    path: str | Path, format: str | None = None, *, progress: Progress | None = None
) -> Iterator[RunStream]:
    """The runs of one transcript file, each run's messages read lazily where the file allows.

    Args:
        path: the transcript file.
        format: a name from :data:`~slimtools.transcripts.SOURCES` to force.
        progress: called with bytes read as reading goes on (the whole file is reported
            by the time its last run is done).

    Raises:
        TranscriptError: the file cannot be read or is malformed (from this iterator or
            from a run's ``messages``); the message names the file, the line and the fault.
    """
    _check_format(format)
    path = Path(path)
    report = progress or (lambda _n: None)
    with _reading(path):
        layout = sniff(path)
        if layout is None:
            report(_size(path))
            return
        kind = _jsonl_sequence(path, format) if layout == "jsonl" else None
    if kind == "claude_code":
        yield _claude_code(path, report)
        return
    if kind is not None:
        stream = _api_messages(path, kind, report)
        yield stream
        return
    for t in _iter_file(path, format=format):
        yield RunStream(
            name=t.name,
            source=t.source,
            format=t.format,
            messages=iter(t.messages),
            path=path,
            run=t.run,
            synthetic=t.synthetic,
        )
    report(_size(path))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _jsonl_sequence(path: Path, forced: str | None) -> str | None:
    """The format of a JSONL file of one run's messages read line by line, else None."""
    for _, value in islice(iter_jsonl(path), _SNIFF_RECORDS):
        split = _split(value, forced)
        if split is None:
            continue
        kind, whole = split
        if not whole and kind in ("claude_code", _API, *API_FORMATS):
            return kind
        return None
    return None


def _claude_code(path: Path, report: Progress) -> RunStream:
    """A Claude Code session read twice: ids and line numbers first, then the messages."""

    usage: list[RecordedRequest] = []

    def messages() -> Iterator[Any]:
        with _reading(path):
            collector = UsageCollector()
            index = index_session(session_entries(_tapped(iter_jsonl(path), collector)))
            usage.extend(collector.requests())
            lines = session_entries(iter_jsonl(path, progress=report))
            for message, _ in session_messages(lines, index):
                yield message

    return RunStream(
        path.name, "claude_code", "anthropic", messages(), path, streamed=True, usage=usage
    )


def _tapped(records: Iterator[tuple[int, Any]], collector: UsageCollector) -> Iterator[Any]:
    """``records``, each also read by ``collector`` (every line: system lines too)."""
    for number, value in records:
        collector.add(number, value)
        yield number, value


def _api_messages(path: Path, kind: str, report: Progress) -> RunStream:
    """A JSONL file of API messages; its format is the first telling message's (see
    :func:`slimtools.clearing.detect_format`), so the messages before that one are held."""
    records = iter_jsonl(path, progress=report)
    held: deque[Any] = deque()
    found = None if kind == _API else kind
    with _reading(path):
        for number, value in records:
            held.append(_message(number, value))
            found = found or _format_of(value)
            if found is not None:
                break
    fmt = cast(HistoryFormat, found or "openai_chat")

    def messages() -> Iterator[Any]:
        with _reading(path):
            while held:  # handed out one by one, so none is kept once used
                yield held.popleft()
            for number, value in records:
                yield _message(number, value)

    return RunStream(path.name, cast(Source, fmt), fmt, messages(), path, streamed=True)


def _message(number: int, value: Any) -> Any:
    if not isinstance(value, dict):
        raise MalformedError(f"a {type(value).__name__}, not a message object", line=number)
    return value
