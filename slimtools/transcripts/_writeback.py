"""Clear a transcript file into a new file of the same format, and restore it from its audit.

:func:`clear_file` loads each run of a file, clears it with
:func:`~slimtools.clearing.clear_stale_results` and writes the file again with nothing
changed but the values the cleared results were read from (located by each message's
:class:`~slimtools.transcripts.Origin`): every other byte is copied as it was, so untouched
JSONL lines stay byte-identical, and a file of several runs is cleared run by run while it
is copied. The audit it writes is a :class:`~slimtools.clearing.JsonlAudit` file (every
line an ``AuditRecord``, so ``restore(history, JsonlAudit(path))`` works on a reloaded
single-run history) whose lines also carry a ``"file"`` entry: the value's location, its
original JSON text and the text written in its place. :func:`restore_file` splices the
original texts back, byte for byte, after checking that each location still holds what
clearing wrote.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Any

import orjson

from slimtools._json import dumps
from slimtools.clearing import ClearingPolicy, MemoryAudit, clear_with_report
from slimtools.clearing._view import get_codec, safe_decode
from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts._jsonio import BOM, Element, iter_array, open_text, sniff
from slimtools.transcripts._load import iter_file
from slimtools.transcripts._model import JsonPath, Location, MalformedError, Transcript
from slimtools.transcripts._spans import dump_string, replace_values

Edit = Callable[[str], str]
"""Old JSON text of a value in, new JSON text out."""


@dataclass(frozen=True)
class FileClearing:
    """What :func:`clear_file` did.

    Attributes:
        path: the transcript read.
        out: the file written.
        source: the transcript format (see :data:`~slimtools.transcripts.SOURCES`).
        runs: the runs the file holds.
        results: the tool results in them.
        cleared: the results replaced by placeholders (now; earlier placeholders are not
            counted again).
        tokens_before: billed tokens of all runs before clearing.
        tokens_after: the same after.
        audit: where the originals went (None: not kept).
    """

    path: Path
    out: Path
    source: str
    runs: int
    results: int
    cleared: int
    tokens_before: int
    tokens_after: int
    audit: Path | None


def clear_file(
    path: str | Path,
    out: str | Path,
    policy: ClearingPolicy | None = None,
    *,
    format: str | None = None,
    audit: str | Path | None = None,
) -> FileClearing:
    """Clear every run of a transcript file and write it, same format, to ``out``.

    Args:
        path: the transcript.
        out: the file to write (may be ``path`` itself: it is replaced atomically).
        policy: what to clear; :class:`~slimtools.clearing.ClearingPolicy` () by default.
            ``clear_tool_inputs`` is refused: only results are written back.
        format: force a format from :data:`~slimtools.transcripts.SOURCES`.
        audit: a JSONL file to append the originals to (what :func:`restore_file` reads).
            Nothing is appended unless the whole file was written. One audit serves one
            file: it may gather successive clearings of it (``a -> b``, then ``b -> c``),
            not those of unrelated files.

    Raises:
        TranscriptError: the file is malformed or not a transcript.
        ConfigurationError: a policy that clears tool inputs; an audit that is the input or
            the output, or that holds the originals of another file.
    """
    policy = policy if policy is not None else ClearingPolicy()
    if policy.clear_tool_inputs:
        raise ConfigurationError("clear_file writes back tool results only: clear_tool_inputs")
    path, out = Path(path), Path(out)
    audit_path = Path(audit) if audit is not None else None
    step = (str(path.resolve()), str(out.resolve()))
    if audit_path is not None:
        _check_audit_target(audit_path, step)
    layout = _layout(path)
    runs = results = count = before = after = 0
    source = ""
    with _replacing(out, like=path) as sink, _replacing(audit_path, append=True) as spool:
        rewriter = _Rewriter(path, layout, sink)
        for transcript in iter_file(path, format=format):
            memory = MemoryAudit()
            cleared, report = clear_with_report(
                transcript.messages, policy, format=transcript.format, audit=memory
            )
            sink_audit = _Spool(spool, step, transcript.run) if spool is not None else None
            edits = _edits(transcript, cleared, memory, sink_audit)
            _wrap(path, partial(rewriter.apply, edits))
            source = source or transcript.source
            runs += 1
            results += sum(len(origin.results) for origin in transcript.origins)
            count += len(edits)
            before += report.tokens_before
            after += report.tokens_after
        if not runs:
            raise TranscriptError(path, "not a transcript slimtools recognises")
        _wrap(path, rewriter.finish)
    return FileClearing(path, out, source, runs, results, count, before, after, audit_path)


def restore_file(path: str | Path, audit: str | Path, out: str | Path) -> int:
    """Put the originals recorded in ``audit`` back into a cleared file; write it to ``out``.

    The result is byte-identical to the file that was cleared (to the first file, when the
    audit gathers successive clearings). Locations already holding their original are left
    alone, so restoring twice changes nothing.

    Returns:
        How many values were put back.

    Raises:
        TranscriptError: ``audit`` holds no file locations or the originals of unrelated
            files, or ``path`` does not hold what clearing wrote at one of them (it is
            another file, or it changed since; nothing is written then).
    """
    path, audit, out = Path(path), Path(audit), Path(out)
    steps: dict[Location, list[tuple[str, str]]] = {}
    clearings: list[tuple[str, str]] = []
    foreign = 0
    for entry in _audit_entries(audit):
        if entry is None:
            foreign += 1
            continue
        location, raw, written, step = entry
        steps.setdefault(location, []).append((raw, written))
        if not clearings or clearings[-1] != step:
            if clearings and step[0] != clearings[-1][1]:
                shown = f"{clearings[-1][0]} -> {clearings[-1][1]} and {step[0]} -> {step[1]}"
                raise TranscriptError(
                    audit, f"holds the originals of unrelated clearings ({shown})"
                )
            clearings.append(step)
    if foreign and not steps:
        raise TranscriptError(
            audit, "holds no file locations (write one with `slimtools clear --audit`)"
        )
    restored = 0

    def undo(location: Location, history: list[tuple[str, str]]) -> Edit:
        def edit(current: str) -> str:
            nonlocal restored
            for raw, written in reversed(history):  # the latest clearing first
                if current == raw:
                    continue
                if current != written:
                    raise MalformedError(
                        f"{location} holds neither what clearing wrote there nor the"
                        " original (another file, or changed since)",
                        line=location.line,
                    )
                current = raw
                restored += 1
            return current

        return edit

    layout = _layout(path)
    with _replacing(out, like=path) as sink:
        rewriter = _Rewriter(path, layout, sink)
        edits = {location: undo(location, history) for location, history in steps.items()}
        _wrap(path, partial(rewriter.apply, edits), audit=audit)
        _wrap(path, rewriter.finish, audit=audit)
    return restored


# -- clearing one run ------------------------------------------------------------------------


class _Spool:
    """Writes the audit lines of one run: each record plus its ``"file"`` entry."""

    def __init__(self, fh: IO[bytes], step: tuple[str, str], run: int) -> None:
        self.fh, self.step, self.run = fh, step, run

    def write(self, record: dict[str, Any], location: Location, raw: str, written: str) -> None:
        record["file"] = {
            "source": self.step[0],
            "target": self.step[1],
            "run": self.run,
            "line": location.line,
            "path": list(location.path),
            "raw": raw,
            "written": written,
        }
        self.fh.write(dumps(record) + b"\n")


def _edits(
    transcript: Transcript, cleared: list[Any], memory: MemoryAudit, spool: _Spool | None
) -> dict[Location, Edit]:
    """One edit per result the clearing replaced: write its placeholder, audit the original."""
    records = {(r.position, r.call_id): r for r in memory.records if r.kind == "result"}
    codec = get_codec(transcript.format)
    edits: dict[Location, Edit] = {}
    for i, (old, new) in enumerate(zip(transcript.messages, cleared, strict=True)):
        if old is new:
            continue
        before = {r.slot: r for r in safe_decode(codec, old).results}
        for result in safe_decode(codec, new).results:
            previous = before.get(result.slot)
            if previous is None or not result.cleared or previous.cleared:
                continue
            location = transcript.origins[i].results.get(result.slot)
            if location is None:  # every reader locates every result; this guards the rule
                raise TranscriptError(
                    transcript.path or transcript.name,
                    f"cannot write back the result of call {result.call_id}: no location",
                )
            record = records[(i, result.call_id)].to_dict()  # the engine audits every one
            edits[location] = _placeholder_edit(result.text, location, record, spool)
    return edits


def _placeholder_edit(
    text: str, location: Location, record: dict[str, Any], spool: _Spool | None
) -> Edit:
    def edit(old: str) -> str:
        new = dump_string(text, old)
        if spool is not None:
            spool.write(record, location, old, new)
        return new

    return edit


AuditEntry = tuple[Location, str, str, tuple[str, str]]


def _audit_entries(audit: Path) -> Iterator[AuditEntry | None]:
    """``(location, original text, written text, (source, target))`` per audit line, in
    order; None for a record without a file location (written by a plain ``JsonlAudit``)."""
    try:
        with audit.open("rb") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    yield _audit_entry(audit, number, line)
    except OSError as exc:
        raise TranscriptError(audit, f"cannot be read ({exc.strerror or exc})") from None


def _audit_entry(audit: Path, number: int, line: bytes) -> AuditEntry | None:
    try:
        entry = orjson.loads(line).get("file")
    except (orjson.JSONDecodeError, AttributeError):
        raise TranscriptError(audit, "not a JSON object", line=number) from None
    if entry is None:
        return None
    try:
        location = Location(entry["line"], tuple(entry["path"]))
        step = (str(entry["source"]), str(entry["target"]))
        return location, str(entry["raw"]), str(entry["written"]), step
    except (KeyError, TypeError):
        raise TranscriptError(audit, "a malformed file entry", line=number) from None


def _check_audit_target(audit: Path, step: tuple[str, str]) -> None:
    """Refuse an audit that is the input or output, or holds another file's originals."""
    if str(audit.resolve()) in step:
        raise ConfigurationError(f"the audit must be a file of its own, not {audit}")
    last = _last_line(audit)
    if not last:
        return
    try:
        entry = orjson.loads(last).get("file") if last.startswith(b"{") else None
    except orjson.JSONDecodeError:
        raise TranscriptError(audit, "its last line is not JSON (a torn write?)") from None
    previous = (entry.get("source"), entry.get("target")) if isinstance(entry, dict) else None
    if previous is not None and previous != step and previous[1] != step[0]:
        raise ConfigurationError(
            f"{audit} already holds the originals of another clearing ({previous[0]} ->"
            f" {previous[1]}); one audit serves one file and its successive clearings:"
            " give another audit file"
        )


def _last_line(path: Path) -> bytes:
    """The last non-blank line of a file (b"" when there is none), read from the end."""
    try:
        with path.open("rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            block, tail = 1 << 16, b""
            while end > 0:
                start = max(0, end - block)
                fh.seek(start)
                tail = fh.read(end - start) + tail
                lines = tail.strip().splitlines()
                if len(lines) > 1 or (start == 0 and lines):
                    return lines[-1]
                end = start
    except FileNotFoundError:
        pass
    return b""


# -- copying a file with values replaced -------------------------------------------------------


def _layout(path: Path) -> str:
    try:
        layout = sniff(path)
    except OSError as exc:
        raise TranscriptError(path, f"cannot be read ({exc.strerror or exc})") from None
    if layout is None:
        raise TranscriptError(path, "not a transcript slimtools recognises (not JSON)")
    return layout


def _wrap(path: Path, step: Callable[[], None], audit: Path | None = None) -> None:
    try:
        step()
    except MalformedError as exc:
        reason = exc.reason if audit is None else f"does not match the audit {audit}: {exc.reason}"
        raise TranscriptError(path, reason, line=exc.line) from None
    except UnicodeDecodeError as exc:
        raise TranscriptError(path, f"not UTF-8 text (byte {exc.start})") from None


class _Rewriter:
    """Copies a transcript to ``sink`` unit by unit (a JSONL line, an element of a top-level
    list, or the whole document), replacing values where edits are given.

    Edits must come in file order (the loader yields runs in file order); each call copies
    up to the last unit it edits, so a file of many runs is copied while it is cleared.
    """

    def __init__(self, path: Path, layout: str, sink: IO[bytes]) -> None:
        self.path, self.layout, self.sink = path, layout, sink
        self.pending: dict[Any, dict[JsonPath, Edit]] = {}
        self._lines: Iterator[tuple[int, bytes]] | None = None
        self._elements: Iterator[Element] | None = None
        self._text: IO[str] | None = None
        self.done: int | None = None  # the last unit copied

    def apply(self, edits: Mapping[Location, Edit]) -> None:
        """Queue ``edits`` and copy the file up to the last unit they touch."""
        last = None
        for location, edit in edits.items():
            unit, inner = self._unit(location)
            if self.layout != "object" and self.done is not None and unit <= self.done:
                raise RuntimeError("write-back edits must come in file order")
            self.pending.setdefault(unit, {})[inner] = edit
            last = unit if last is None or unit > last else last
        if last is not None and self.layout != "object":
            self._copy(last)

    def finish(self) -> None:
        """Copy the rest of the file."""
        self._copy(None)
        if self.pending:
            unit = min(self.pending)
            raise MalformedError(f"no value to replace at {unit} (the file changed?)")
        if self._text is not None:
            self._text.close()

    def _unit(self, location: Location) -> tuple[Any, JsonPath]:
        if self.layout == "jsonl":
            if location.line is None:
                raise MalformedError("a location without a line in a JSON Lines file")
            return location.line, location.path
        if self.layout == "array":
            if not location.path or not isinstance(location.path[0], int):
                raise MalformedError("a location outside the top-level list")
            return location.path[0], location.path[1:]
        return 0, location.path

    def _copy(self, until: Any) -> None:
        if self.layout == "jsonl":
            self._copy_lines(until)
        elif self.layout == "array":
            self._copy_elements(until)
        else:
            self._copy_document()

    def _copy_lines(self, until: int | None) -> None:
        if self._lines is None:
            self._lines = _numbered(self.path)
        for number, raw in self._lines:
            edits = self.pending.pop(number, None)
            line = raw
            if edits:
                body = raw.rstrip(b"\r\n")
                text = body.decode("utf-8")
                start = 1 if number == 1 and text.startswith(BOM) else 0
                line = replace_values(text, edits, start).encode("utf-8") + raw[len(body) :]
            self.sink.write(line)
            self.done = number
            if until is not None and number >= until:
                return

    def _copy_elements(self, until: int | None) -> None:
        if self._elements is None:
            self._text = open_text(self.path)
            self._elements = iter_array(self._text, keep_text=True)
        for element in self._elements:
            self.sink.write(element.gap.encode("utf-8"))
            if element.position is None:
                return
            edits = self.pending.pop(element.position, None)
            text = replace_values(element.text, edits) if edits else element.text
            self.sink.write(text.encode("utf-8"))
            self.done = element.position
            if until is not None and element.position >= until:
                return

    def _copy_document(self) -> None:
        with open_text(self.path) as fh:
            text = fh.read()
        edits = self.pending.pop(0, None)
        if edits:
            text = replace_values(text, edits, 1 if text.startswith(BOM) else 0)
        self.sink.write(text.encode("utf-8"))


def _numbered(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as fh:
        yield from enumerate(fh, 1)


@contextmanager
def _replacing(
    target: Path | None, *, append: bool = False, like: Path | None = None
) -> Iterator[Any]:
    """A temporary file beside ``target`` that replaces it (or is appended to it) only if the
    block succeeds; nothing happens to ``target`` otherwise. None: no file at all.

    A replaced file takes the permissions of the file it replaces, else those of ``like``.
    """
    if target is None:
        yield None
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        model = target if target.exists() else like
        if model is not None:
            shutil.copymode(model, name)
        if append and target.exists():
            with target.open("ab") as dst, open(name, "rb") as src:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
        else:
            os.replace(name, target)
    finally:
        if os.path.exists(name):
            os.unlink(name)
