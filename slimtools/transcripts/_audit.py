"""The audit file ``clear_file`` writes and ``restore_file`` reads.

Every line is a :class:`~slimtools.clearing.AuditRecord` (so a
:class:`~slimtools.clearing.JsonlAudit` reads the file) with a ``"file"`` entry added: the
clearing it belongs to (``source`` and ``target`` paths), the run, the value's location,
the JSON text written in its place and the original JSON text. The original text is kept as
``raw``, or, when it is exactly the record's ``original`` serialised by ``json.dumps`` in
one of four spellings (the common case), as the name of that spelling alone, which halves
the audit. :class:`AuditIndex` reads an audit once for the byte offsets of each unit's
lines, so a restore holds one unit's originals at a time.

A line cut short by a crash mid-append (a torn line) blocks nothing: a restore puts back
what the intact records allow and a later clearing appends after it, each with a
:class:`~slimtools.transcripts.TornLineWarning`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from slimtools._json import dumps
from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts._jsonio import truncated, warn_torn
from slimtools.transcripts._model import Location

Step = tuple[str, str]
"""One clearing: the path of the file read and of the file written."""

SPELLINGS: dict[str, dict[str, Any]] = {
    "ascii": {"ensure_ascii": True},
    "utf8": {"ensure_ascii": False},
    "ascii-compact": {"ensure_ascii": True, "separators": (",", ":")},
    "utf8-compact": {"ensure_ascii": False, "separators": (",", ":")},
}


class AuditWriter:
    """Writes the audit lines of one run of one clearing."""

    def __init__(self, fh: IO[bytes], step: Step, run: int) -> None:
        self.fh, self.step, self.run = fh, step, run

    def write(self, record: dict[str, Any], location: Location, raw: str, written: str) -> None:
        """Append ``record`` with the file entry of the value at ``location``."""
        entry: dict[str, Any] = {
            "source": self.step[0],
            "target": self.step[1],
            "run": self.run,
            "line": location.line,
            "path": list(location.path),
            "written": written,
        }
        # The original as restore will read it back (the audit's JSON fallbacks may alter
        # values JSON cannot hold, such as lone surrogates): only then may raw be dropped.
        spelling = _spelling(orjson.loads(dumps(record["original"])), raw)
        if spelling is None:
            entry["raw"] = raw
        else:
            entry["spelling"] = spelling
        record["file"] = entry
        self.fh.write(dumps(record) + b"\n")


def _spelling(value: Any, raw: str) -> str | None:
    for name, options in SPELLINGS.items():
        if json.dumps(value, **options) == raw:
            return name
    return None


class AuditEntry(NamedTuple):
    """One audited value: where it is, its original and written JSON texts, its clearing."""

    location: Location
    raw: str
    written: str
    step: Step


def read_entry(audit: Path, number: int, line: bytes) -> AuditEntry | None:
    """The entry of one audit line; None for a record without a file location.

    Raises:
        TranscriptError: the line is not an audit record with a well-formed file entry.
    """
    try:
        record = orjson.loads(line)
        entry = record.get("file")
    except (orjson.JSONDecodeError, AttributeError):
        raise TranscriptError(audit, "not a JSON object", line=number) from None
    if entry is None:
        return None
    try:
        location = Location(entry["line"], tuple(entry["path"]))
        step = (str(entry["source"]), str(entry["target"]))
        raw = entry.get("raw")
        if raw is None:
            raw = json.dumps(record["original"], **SPELLINGS[entry["spelling"]])
        return AuditEntry(location, str(raw), str(entry["written"]), step)
    except (KeyError, TypeError, ValueError):
        raise TranscriptError(audit, "a malformed file entry", line=number) from None


_LOST = "; restoring what the other records allow"
_TORN = AuditEntry(Location(None, ()), "", "", ("", ""))
"""What :func:`_entry_or_torn` returns for a torn line: neither an entry nor foreign."""


def _entry_or_torn(audit: Path, number: int, line: bytes) -> AuditEntry | None:
    """:func:`read_entry` of a line, or :data:`_TORN` (with a warning) for a torn one."""
    if not line.strip():
        return None
    try:
        return read_entry(audit, number, line)
    except TranscriptError:
        if not truncated(line):
            raise
    warn_torn(audit, number, _LOST)
    return _TORN


class AuditIndex:
    """The units an audit touches, with the byte offsets of their lines (read once).

    Raises:
        TranscriptError: an unreadable audit, a malformed line, records of unrelated
            clearings, or records without any file location.
    """

    def __init__(self, audit: Path, unit: Callable[[Location], int]) -> None:
        self.audit = audit
        self.offsets: dict[int, list[tuple[int, int]]] = {}  # unit -> (line number, offset)
        steps: list[Step] = []
        foreign = 0
        try:
            with audit.open("rb") as fh:
                offset = 0
                for number, line in enumerate(fh, 1):
                    found = _entry_or_torn(audit, number, line)
                    if found is None:
                        foreign += bool(line.strip())
                    elif found is not _TORN:
                        self.offsets.setdefault(unit(found.location), []).append((number, offset))
                        _chain(audit, steps, found.step)
                    offset += len(line)
        except OSError as exc:
            raise TranscriptError(audit, f"cannot be read ({exc.strerror or exc})") from None
        if foreign and not self.offsets:
            raise TranscriptError(
                audit, "holds no file locations (write one with `slimtools clear --audit`)"
            )

    @property
    def units(self) -> list[int]:
        """The units with audited values, in file order."""
        return sorted(self.offsets)

    def entries(self, unit: int) -> list[AuditEntry]:
        """The entries of one unit, in the order they were written."""
        out = []
        with self.audit.open("rb") as fh:
            for number, offset in self.offsets[unit]:
                fh.seek(offset)
                found = read_entry(self.audit, number, fh.readline())
                if found is not None:
                    out.append(found)
        return out


def _chain(audit: Path, steps: list[Step], step: Step) -> None:
    """Record ``step``; each clearing must read the file the one before it wrote."""
    if steps and steps[-1] == step:
        return
    if steps and step[0] != steps[-1][1]:
        shown = f"{steps[-1][0]} -> {steps[-1][1]} and {step[0]} -> {step[1]}"
        raise TranscriptError(audit, f"holds the originals of unrelated clearings ({shown})")
    steps.append(step)


def check_target(audit: Path, step: Step) -> None:
    """Refuse an audit that is the input or output, or holds another file's originals.

    A torn last line (a crash mid-append) is skipped with a warning: the check reads the
    intact line before it, and the records appended next start on a line of their own.
    """
    if str(audit.resolve()) in step:
        raise ConfigurationError(f"the audit must be a file of its own, not {audit}")
    lines = _last_lines(audit)
    if lines and truncated(lines[-1]):
        lines.pop()
        warn_torn(audit, None, "; the records of this clearing are appended after it")
    if not lines:
        return
    last = lines[-1]
    try:
        entry = orjson.loads(last).get("file") if last.startswith(b"{") else None
    except orjson.JSONDecodeError:
        raise TranscriptError(audit, "its last line is not JSON") from None
    previous = (entry.get("source"), entry.get("target")) if isinstance(entry, dict) else None
    if previous is not None and previous != step and previous[1] != step[0]:
        raise ConfigurationError(
            f"{audit} already holds the originals of another clearing ({previous[0]} ->"
            f" {previous[1]}); one audit serves one file and its successive clearings:"
            " give another audit file"
        )


def _last_lines(path: Path, count: int = 2) -> list[bytes]:
    """The last ``count`` non-blank lines of a file, read from the end; [] when none."""
    try:
        with path.open("rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            block, tail = 1 << 16, b""
            while end > 0:
                start = max(0, end - block)
                fh.seek(start)
                tail = fh.read(end - start) + tail
                lines = [line for line in tail.splitlines() if line.strip()]
                # the first line of a block may be cut: trust it only at the file's start
                if len(lines) > count or (start == 0 and lines):
                    return [line.strip() for line in lines[-count:]]
                end = start
    except FileNotFoundError:
        pass
    return []
