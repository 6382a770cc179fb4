"""Find, recognise and stream transcripts: one file or whole folders, run by run.

A file's format is recognised from its content (the extension only says whether it is JSON
Lines): the first records of a JSONL file, the first element of a top-level list, or the
keys of a single document. Files that are not JSON, or JSON of no known shape, are not
transcripts and are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import chain, islice
from pathlib import Path
from typing import Any, cast

from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts._api import (
    API_FORMATS,
    api_run,
    body_kind,
    body_run,
    is_langchain_dict,
    is_message,
    langchain_run,
)
from slimtools.transcripts._claude_code import claude_code_run, is_claude_code_line
from slimtools.transcripts._jsonio import (
    Layout,
    iter_array,
    iter_jsonl,
    open_text,
    read_object,
    sniff,
)
from slimtools.transcripts._model import (
    SOURCES,
    HistoryFormat,
    Location,
    MalformedError,
    Run,
    Source,
    Transcript,
)
from slimtools.transcripts._openhands import (
    is_event,
    is_openhands_run,
    openhands_record_run,
    openhands_run,
)
from slimtools.transcripts._swe_agent import is_mini_swe_agent, mini_swe_agent_run, swe_agent_run
from slimtools.transcripts._tau_bench import is_tau_bench_run, tau_bench_run

OnError = Callable[[TranscriptError], None]
"""What :func:`iter_transcripts` calls with each file that cannot be read."""

ROOT = Location(None, ())
_SNIFF_RECORDS = 50  # JSONL records read to recognise a format before giving up
_API = "api"  # one of the three API formats, decided from the whole history


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
    _check_format(format)
    for path in _files(paths, on_error):
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
    with _reading(path):
        layout = sniff(path)
        if layout is None:
            return None
        for value in _first_entries(path, layout):
            split = _split(value, None)
            if split is not None:
                break
        else:
            return None
    if split[0] != _API:
        return cast(Source, split[0])
    return next((t.source for t in iter_file(path)), None)


def _first_entries(path: Path, layout: Layout) -> Iterator[Any]:
    """The first entries of a file, lazily: JSONL records, a list's first element, or the
    document itself."""
    if layout == "jsonl":
        yield from (value for _, value in islice(iter_jsonl(path), _SNIFF_RECORDS))
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
    _check_format(format)
    path = Path(path)
    with _reading(path):
        layout = sniff(path)
        if layout is None:
            return
        for index, (source, run) in enumerate(_runs(path, layout, format)):
            yield Transcript(
                name=path.name + run.label,
                source=source,
                format=run.format,
                messages=run.messages,
                synthetic=run.synthetic,
                path=path,
                run=index,
                origins=run.origins,
            )


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Turn whatever reading ``path`` raises into one :class:`TranscriptError`."""
    try:
        yield
    except MalformedError as exc:
        raise TranscriptError(path, exc.reason, line=exc.line) from None
    except UnicodeDecodeError as exc:
        raise TranscriptError(path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise TranscriptError(path, f"cannot be read ({exc.strerror or exc})") from None
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        if isinstance(exc, TranscriptError):
            raise
        reason = f"not a well-formed transcript ({type(exc).__name__}: {exc})"
        raise TranscriptError(path, reason) from None


def _check_format(format: str | None) -> None:
    if format is not None and format not in SOURCES:
        raise ConfigurationError(f"unknown transcript format {format!r}; expected one of {SOURCES}")


def _files(paths: Iterable[str | Path], on_error: OnError | None) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path
        elif on_error is None:
            raise FileNotFoundError(f"no such transcript file or folder: {path}")
        else:
            on_error(TranscriptError(path, "no such transcript file or folder"))


# -- recognising -----------------------------------------------------------------------------


def _document_kind(value: Any) -> str | None:
    """The format of one JSON object holding a whole run, or None."""
    if not isinstance(value, dict):
        return None
    if is_mini_swe_agent(value):
        return "mini_swe_agent"
    if is_openhands_run(value):
        return "openhands"
    if isinstance(value.get("history"), list):
        return "swe_agent"
    if is_tau_bench_run(value):
        return "tau_bench"
    body = body_kind(value)
    return _API if body == "api" else body


def _entry_kind(value: Any) -> str | None:
    """The format of one entry of a run's message list (a message, an event), or None."""
    if is_event(value):
        return "openhands"
    if is_langchain_dict(value):
        return "langchain"
    return _API if is_message(value) else None


def _source(kind: str, run: Run) -> Source:
    return run.format if kind == _API else cast(Source, kind)


def _document_run(kind: str, doc: Any, base: Location) -> Run:
    """The run held by one JSON object of format ``kind``."""
    if not isinstance(doc, dict):
        raise MalformedError(
            f"expected a JSON object holding a {kind} run, got {type(doc).__name__}"
        )
    if kind == "mini_swe_agent":
        return mini_swe_agent_run(doc, base)
    if kind == "swe_agent":
        return swe_agent_run(doc, base)
    if kind == "openhands":
        return openhands_record_run(doc, base)
    if kind == "tau_bench":
        return tau_bench_run(doc, base)
    if kind == "langchain":
        items = doc.get("messages")
        if not isinstance(items, list):
            raise MalformedError("a LangChain dump needs a 'messages' list")
        return langchain_run(items, [base.child("messages", i) for i in range(len(items))])
    if kind == "claude_code":
        raise MalformedError("Claude Code sessions are JSON Lines, one record a line")
    return body_run(doc, base, None if kind == _API else cast(HistoryFormat, kind))


def _sequence_run(kind: str, values: list[Any], ats: list[Location]) -> Run:
    """The run whose messages (or events) are ``values``, located at ``ats``."""
    if kind == "openhands":
        return openhands_run(values, ats)
    if kind == "langchain":
        return langchain_run(values, ats)
    if kind == "claude_code":
        if any(at.line is None for at in ats):
            raise MalformedError("Claude Code sessions are JSON Lines, one record a line")
        return claude_code_run((at.line or 0, v) for v, at in zip(values, ats, strict=True))
    if kind in (_API, *API_FORMATS):
        return api_run(values, ats, None if kind == _API else cast(HistoryFormat, kind))
    raise MalformedError(f"a {kind} file holds whole runs, not one message per entry")


def _split(first: Any, forced: str | None) -> tuple[str, bool] | None:
    """(format, True when each entry is a whole run) for a file's entries, from the first.

    Entries are JSONL records or the elements of a top-level list; None: not a transcript.
    """
    if forced is not None:
        entry = _entry_kind(first)
        whole = _document_kind(first) is not None or entry is None
        if forced == "claude_code":
            return forced, False
        if forced in ("tau_bench", "swe_agent", "mini_swe_agent"):
            return forced, True
        return forced, whole
    if is_claude_code_line(first):
        return "claude_code", False
    kind = _document_kind(first)
    if kind is not None:
        return kind, True
    entry = _entry_kind(first)
    return (entry, False) if entry is not None else None


# -- reading -----------------------------------------------------------------------------------


def _runs(path: Path, layout: Layout, forced: str | None) -> Iterator[tuple[Source, Run]]:
    if layout == "jsonl":
        yield from _jsonl_runs(path, forced)
    elif layout == "array":
        yield from _array_runs(path, forced)
    else:
        yield from _object_runs(path, forced)


def _jsonl_runs(path: Path, forced: str | None) -> Iterator[tuple[Source, Run]]:
    records = iter_jsonl(path)
    head = list(islice(records, _SNIFF_RECORDS))
    split = None
    for _, value in head:
        split = _split(value, forced)
        if split is not None:
            break
    if split is None:
        return
    kind, whole = split
    everything = chain(head, records)
    if whole:
        for number, value in everything:
            try:
                run = _document_run(kind, value, Location(number, ()))
            except MalformedError as exc:
                raise MalformedError(exc.reason, line=exc.line or number) from None
            yield _source(kind, run), run._replace(label=run.label or f"#{number}")
    elif kind == "claude_code":
        run = claude_code_run(everything)
        yield "claude_code", run
    else:
        values, ats = [], []
        for number, value in everything:
            values.append(value)
            ats.append(Location(number, ()))
        run = _sequence_run(kind, values, ats)
        yield _source(kind, run), run


def _array_runs(path: Path, forced: str | None) -> Iterator[tuple[Source, Run]]:
    with open_text(path) as fh:
        elements = (e for e in iter_array(fh) if e.position is not None)
        first = next(elements, None)
        if first is None:
            return
        split = _split(first.value, forced)
        if split is None:
            return
        kind, whole = split
        if whole:
            for element in chain([first], elements):
                index = element.position or 0
                try:
                    run = _document_run(kind, element.value, Location(None, (index,)))
                except MalformedError as exc:
                    raise MalformedError(
                        f"list element {index}: {exc.reason}", line=exc.line
                    ) from None
                yield _source(kind, run), run._replace(label=run.label or f"#{index}")
            return
        values = [first.value, *(e.value for e in elements)]
    run = _sequence_run(kind, values, [Location(None, (i,)) for i in range(len(values))])
    yield _source(kind, run), run


def _object_runs(path: Path, forced: str | None) -> Iterator[tuple[Source, Run]]:
    doc = read_object(path)
    split = _split(doc, forced)
    if split is None:
        return
    kind, whole = split
    # not a whole run: a JSON Lines file of a single record
    run = _document_run(kind, doc, ROOT) if whole else _sequence_run(kind, [doc], [Location(1, ())])
    yield _source(kind, run), run
