"""Find, recognise and stream transcripts: one file or whole folders, run by run.

A file's format is recognised from its content (the extension only says whether it is JSON
Lines): the first records of a JSONL file, the first element of a top-level list, or the
keys of a single document. Files that are not JSON, or JSON of no known shape, are not
transcripts and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from pathlib import Path
from typing import Any

from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts._formats import Match, match
from slimtools.transcripts._jsonio import (
    Layout,
    iter_array,
    iter_jsonl,
    open_text,
    read_object,
    reading,
    sniff,
)
from slimtools.transcripts._model import (
    SOURCES,
    Location,
    MalformedError,
    Run,
    Source,
    Transcript,
)

OnError = Callable[[TranscriptError], None]
"""What :func:`iter_transcripts` calls with each file that cannot be read."""

ROOT = Location(None, ())
SNIFF_RECORDS = 50  # JSONL records read to recognise a format before giving up


def iter_transcripts(
    *paths: str | Path, format: str | None = None, on_error: OnError | None = None
) -> Iterator[Transcript]:
    """Every transcript under ``paths`` (files or folders), one run at a time.

    Folders are walked recursively, files in path order. Files that are not transcripts
    (README, binaries, unknown JSON) are skipped.

    Args:
        paths: files and folders.
        format: a name from :data:`SOURCES` to force instead of recognising each file.
        on_error: called with the :class:`TranscriptError` of each file (or missing path)
            that cannot be read, after which iteration goes on with the next file. Runs a
            bad file yielded before its fault stay yielded. Without it the first error is
            raised.

    Raises:
        TranscriptError: a malformed file, when there is no ``on_error``.
        FileNotFoundError: a path that does not exist, when there is no ``on_error``.
    """
    check_format(format)
    for path in files(paths, on_error):
        yield from _guarded(path, format, on_error)


def _guarded(path: Path, format: str | None, on_error: OnError | None) -> Iterator[Transcript]:
    try:
        yield from iter_file(path, format=format)
    except TranscriptError as exc:
        if on_error is None:
            raise
        on_error(exc)


def load_transcripts(*paths: str | Path, format: str | None = None) -> list[Transcript]:
    """:func:`iter_transcripts` as a list; the first malformed file raises."""
    return list(iter_transcripts(*paths, format=format))


def load_file(path: str | Path, format: str | None = None) -> list[Transcript]:
    """The runs of one file; ``[]`` when it is not a transcript slimtools knows."""
    return list(iter_file(path, format=format))


def detect_source(path: str | Path) -> Source | None:
    """The format of a transcript file (a name from :data:`SOURCES`), None if it is none.

    Reads the first records of a JSONL file or the first element of a list, and parses a
    single JSON document whole. Histories in one of the three API formats are read whole,
    since which of them it is shows only at the first tool call.

    Raises:
        TranscriptError: the file cannot be read or is not well-formed JSON.
    """
    path = Path(path)
    with reading(path):
        layout = sniff(path)
        if layout is None:
            return None
        for value in _first_entries(path, layout):
            found = match(value, None)
            if found is not None:
                break
        else:
            return None
    if found.reader.source is not None:
        return found.reader.source
    return next((t.source for t in iter_file(path)), None)


def _first_entries(path: Path, layout: Layout) -> Iterator[Any]:
    """The first entries of a file, lazily: JSONL records, a list's first element, or the
    document itself."""
    if layout == "jsonl":
        yield from (value for _, value in islice(iter_jsonl(path), SNIFF_RECORDS))
    elif layout == "object":
        yield read_object(path)
    else:
        with open_text(path) as fh:
            yield from (e.value for e in islice(iter_array(fh), 1) if e.position is not None)


def iter_file(path: str | Path, format: str | None = None) -> Iterator[Transcript]:
    """The runs of one file, one at a time (nothing when it is not a transcript).

    Raises:
        TranscriptError: the file cannot be read, or is malformed; the message names the
            file, the line where known, and the fault.
    """
    forced = check_format(format)
    path = Path(path)
    with reading(path):
        layout = sniff(path)
        if layout is None:
            return
        for index, (source, run) in enumerate(_runs(path, layout, forced)):
            yield Transcript(
                name=path.name + run.label,
                source=source,
                format=run.format,
                messages=run.messages,
                synthetic=run.synthetic,
                path=path,
                run=index,
                origins=run.origins,
                restarts=run.restarts,
            )


def check_format(format: str | None) -> Source | None:
    """``format`` as a :data:`SOURCES` name (None: recognise each file).

    Raises:
        ConfigurationError: a name that is not in :data:`SOURCES`.
    """
    if format is not None and format not in SOURCES:
        raise ConfigurationError(f"unknown transcript format {format!r}; expected one of {SOURCES}")
    return format


def files(paths: Iterable[str | Path], on_error: OnError | None) -> Iterator[Path]:
    """Every file under ``paths``: folders recursively and sorted, files as given."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path
        elif path.exists():  # a fifo (a shell's <(...)), a socket, a device: never opened
            reason = "not a regular file or folder (a pipe, socket or device)"
            if on_error is None:
                raise TranscriptError(path, reason)
            on_error(TranscriptError(path, reason))
        elif on_error is None:
            raise FileNotFoundError(f"no such transcript file or folder: {path}")
        else:
            on_error(TranscriptError(path, "no such transcript file or folder"))


def _source(found: Match, run: Run) -> Source:
    return found.reader.source or run.format


def _document_run(found: Match, doc: Any, base: Location) -> Run:
    """The run held by one JSON object of the matched format."""
    if not isinstance(doc, dict):
        raise MalformedError(
            f"expected a JSON object holding a {found.kind} run, got {type(doc).__name__}"
        )
    return found.reader.read_run(doc, base, found.forced)


def _sequence_run(found: Match, entries: Iterable[tuple[Any, Location]]) -> Run:
    """The run whose messages (or events) are ``entries``, each with its place."""
    if found.reader.read_messages is None:
        raise MalformedError(f"a {found.kind} file holds whole runs, not one message per entry")
    return found.reader.read_messages(entries, found.forced)


# -- reading -----------------------------------------------------------------------------------


def _runs(path: Path, layout: Layout, forced: Source | None) -> Iterator[tuple[Source, Run]]:
    if layout == "jsonl":
        yield from _jsonl_runs(path, forced)
    elif layout == "array":
        yield from _array_runs(path, forced)
    else:
        yield from _object_runs(path, forced)


def _jsonl_runs(path: Path, forced: Source | None) -> Iterator[tuple[Source, Run]]:
    records = iter_jsonl(path)
    head = list(islice(records, SNIFF_RECORDS))
    found = next((m for _, v in head if (m := match(v, forced)) is not None), None)
    if found is None:
        return
    everything = chain(head, records)
    if not found.whole:
        run = _sequence_run(found, ((v, Location(n, ())) for n, v in everything))
        yield _source(found, run), run
        return
    for number, value in everything:
        try:
            run = _document_run(found, value, Location(number, ()))
        except MalformedError as exc:
            raise MalformedError(exc.reason, line=exc.line or number) from None
        yield _source(found, run), run._replace(label=run.label or f"#{number}")


def _array_runs(path: Path, forced: Source | None) -> Iterator[tuple[Source, Run]]:
    with open_text(path) as fh:
        elements = (e for e in iter_array(fh) if e.position is not None)
        first = next(elements, None)
        if first is None:
            return
        found = match(first.value, forced)
        if found is None:
            return
        if found.whole:
            for element in chain([first], elements):
                index = element.position or 0
                try:
                    run = _document_run(found, element.value, Location(None, (index,)))
                except MalformedError as exc:
                    raise MalformedError(
                        f"list element {index}: {exc.reason}", line=exc.line
                    ) from None
                yield _source(found, run), run._replace(label=run.label or f"#{index}")
            return
        values = [first.value, *(e.value for e in elements)]
    run = _sequence_run(found, ((v, Location(None, (i,))) for i, v in enumerate(values)))
    yield _source(found, run), run


def _object_runs(path: Path, forced: Source | None) -> Iterator[tuple[Source, Run]]:
    doc = read_object(path)
    found = match(doc, forced)
    if found is None:
        return
    # not a whole run: a JSON Lines file of a single record
    if found.whole:
        run = _document_run(found, doc, ROOT)
    else:
        run = _sequence_run(found, [(doc, Location(1, ()))])
    yield _source(found, run), run
