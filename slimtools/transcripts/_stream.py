"""Runs whose messages are read as they are used, so one long session is never held whole.

:func:`stream_file` yields a file's runs like :func:`~slimtools.transcripts.iter_file`, but
a run's messages come as an iterator. Single-run JSON Lines files (a Claude Code session,
one API message a line) are read a line at a time: only the messages not yet consumed, and
for Claude Code the lines of a response not yet complete, are held. Every other file is
read as :func:`~slimtools.transcripts.iter_file` reads it (a list of runs a run at a time,
a single document whole) and its runs' messages are handed out from memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from slimtools.transcripts._formats import match
from slimtools.transcripts._jsonio import describe, iter_jsonl, loads, reading, sniff
from slimtools.transcripts._load import SNIFF_RECORDS, OnError, check_format, detect_source, files
from slimtools.transcripts._load import iter_file as _iter_file
from slimtools.transcripts._model import MalformedError, Source
from slimtools.transcripts._reader import Progress, Reader, RunStream
from slimtools.transcripts._usage import RecordedRequest, recorded_requests

__all__ = ["Progress", "RunStream", "read_usage", "stream_file", "transcript_files"]


def transcript_files(*paths: str | Path, on_error: OnError | None = None) -> Iterator[Path]:
    """Every file under ``paths``, as :func:`~slimtools.transcripts.iter_transcripts` walks
    them: folders recursively and in path order, files as given.

    Raises:
        FileNotFoundError: a path that does not exist, when there is no ``on_error`` (with
            it, ``on_error`` gets a :class:`~slimtools.errors.TranscriptError` instead).
    """
    yield from files(paths, on_error)


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
    forced = check_format(format)
    path = Path(path)
    report = progress or (lambda _n: None)
    with reading(path):
        layout = sniff(path)
        if layout is None:
            report(_size(path))
            return
        streamer = _line_reader(path, forced) if layout == "jsonl" else None
    if streamer is not None and streamer.stream is not None:
        yield streamer.stream(path, forced, report)
        return
    for t in _iter_file(path, format=forced):
        yield RunStream(
            name=t.name,
            source=t.source,
            format=t.format,
            messages=iter(t.messages),
            path=path,
            run=t.run,
            synthetic=t.synthetic,
            restarts=list(t.restarts),
        )
    report(_size(path))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _line_reader(path: Path, forced: Source | None) -> Reader | None:
    """The reader of a JSONL file of one run's messages that it reads line by line, else None."""
    for _, value in islice(iter_jsonl(path), SNIFF_RECORDS):
        found = match(value, forced)
        if found is None:
            continue
        return found.reader if not found.whole and found.reader.stream is not None else None
    return None


def read_usage(path: str | Path) -> list[RecordedRequest]:
    """The recorded usage of a Claude Code session file (empty for any other file).

    Only lines that can matter are parsed (those naming ``usage``, a compaction, a local
    command or a task's notification): a session's tool results, most of its bytes, are
    skipped unread.

    Raises:
        TranscriptError: the file cannot be read or a line read is not JSON.
    """
    target = Path(path)
    with reading(target):
        if detect_source(target) != "claude_code":
            return []
        return recorded_requests(_lines_that_matter(target))


_MATTERS = (b'"usage"', b"compact", b"<command-name>", b"<task-notification>")


def _lines_that_matter(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of the lines :func:`recorded_requests` reads."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not any(mark in raw for mark in _MATTERS):
                continue
            try:
                yield number, loads(raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw)
            except ValueError as exc:
                raise MalformedError(describe(exc), line=number) from None
