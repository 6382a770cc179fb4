"""Audit sinks that receive each original before it is replaced, and ``restore``.

Clearing is a one-way door for the model, not for you: give the clearer an ``audit=`` sink
and every cleared result (and every blanked argument list) is written there first, with its
call id, tool, size and turn; :func:`restore` puts the originals back. When the sink fails,
nothing is cleared that round (the originals would otherwise be lost).

The file sinks store originals as JSON: exact for JSON data (strings, block lists, dicts;
lone surrogates and integers beyond 64 bits too); SDK objects inside a history come back
as their dict form, but the call entries of an SDK message as its SDK type.
:class:`MemoryAudit` keeps the originals themselves.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from slimtools._json import dumps_exact, loads
from slimtools.clearing.formats.view import check_history, detect_format, get_codec, safe_decode

logger = logging.getLogger("slimtools.clearing")


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One original handed to an audit sink before clearing replaced it.

    Attributes:
        kind: ``"result"`` (a tool result's content) or ``"input"`` (a call's arguments).
        call_id: the tool call id, the key ``restore`` uses.
        tool: the tool name.
        chars: the original size in characters.
        tokens: the original size in tokens.
        turn: the turn the call belongs to.
        position: the index of the message holding it when it was cleared.
        format: the history format.
        original: the content as stored in the message (``"input"``: every copy of the
            arguments, in the codec's snapshot form).
    """

    kind: Literal["result", "input"]
    call_id: str
    tool: str
    chars: int
    tokens: int
    turn: int
    position: int
    format: str
    original: Any

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (``original`` as is)."""
        return asdict(self)


@runtime_checkable
class Audit(Protocol):
    """Where originals go before they are replaced (two methods; a list can do it)."""

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Store a batch of records durably before the clearer replaces them."""

    def read(self) -> Iterable[AuditRecord]:
        """Every record written, oldest first."""


class MemoryAudit:
    """An in-process audit that keeps the originals themselves (exact restore)."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Append the records."""
        self.records.extend(records)

    def read(self) -> Iterator[AuditRecord]:
        """The records, oldest first."""
        return iter(list(self.records))


def _record(data: Any) -> AuditRecord:
    return AuditRecord(
        kind=data["kind"],
        call_id=str(data["call_id"]),
        tool=str(data["tool"]),
        chars=int(data["chars"]),
        tokens=int(data["tokens"]),
        turn=int(data["turn"]),
        position=int(data["position"]),
        format=str(data["format"]),
        original=data["original"],
    )


class JsonlAudit:
    """Appends one JSON line per record to a file (created with its parent folders)."""

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Append the batch in one write, then flush."""
        payload = b"".join(dumps_exact(r.to_dict()) + b"\n" for r in records)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as fh:
                fh.write(payload)

    def read(self) -> Iterator[AuditRecord]:
        """The records, oldest first; a torn last line (a crash mid-write) is skipped."""
        if not self.path.exists():
            return
        with self.path.open("rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield _record(loads(line))
                except (KeyError, TypeError, ValueError):
                    logger.warning("%s:%d: unreadable audit line skipped", self.path, number)


class SQLiteAudit:
    """Stores records in a SQLite table ``clearing_audit``; one transaction per batch."""

    def __init__(self, path: str | PathLike[str]) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        with self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS clearing_audit ("
                " seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,"
                " call_id TEXT NOT NULL, tool TEXT NOT NULL, chars INTEGER NOT NULL,"
                " tokens INTEGER NOT NULL, turn INTEGER NOT NULL, position INTEGER NOT NULL,"
                " format TEXT NOT NULL, original TEXT NOT NULL)"
            )
            self._db.execute(
                "CREATE INDEX IF NOT EXISTS clearing_audit_call ON clearing_audit (call_id)"
            )

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Insert the batch in one transaction."""
        rows = [
            (r.kind, r.call_id, r.tool, r.chars, r.tokens, r.turn, r.position, r.format,
             dumps_exact(r.original).decode())
            for r in records
        ]  # fmt: skip
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO clearing_audit (kind, call_id, tool, chars, tokens, turn,"
                " position, format, original) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def read(self) -> Iterator[AuditRecord]:
        """The records, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, call_id, tool, chars, tokens, turn, position, format, original"
                " FROM clearing_audit ORDER BY seq"
            ).fetchall()
        for kind, call_id, tool, chars, tokens, turn, position, fmt, original in rows:
            yield AuditRecord(
                kind, call_id, tool, chars, tokens, turn, position, fmt, loads(original)
            )

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


def check_audit(audit: object, method: str) -> None:
    """Raise ``TypeError`` unless ``audit`` has the ``method`` (``"read"``, ``"write"``) an
    audit sink needs; the message says how to make one from a file path."""
    if not callable(getattr(audit, method, None)):
        raise TypeError(
            f"audit must be an audit sink with {method}() (MemoryAudit(), JsonlAudit(path), "
            f"SQLiteAudit(path)), got {type(audit).__name__}"
            + ("; for a file, pass JsonlAudit(path)" if isinstance(audit, (str, PathLike)) else "")
        )


def restore(
    history: Sequence[Any],
    audit: Audit,
    *,
    format: str | None = None,
) -> list[Any]:
    """A new list: ``history`` with every audited original put back.

    Results are restored only where they still hold a placeholder; blanked arguments are
    put back from their snapshots. ``restore(clear(h, audit=a), a) == h``. Placeholders the
    audit holds no original for (a missing or foreign audit) stay, with a warning.

    Raises:
        TypeError: ``history`` is not a list of messages (a dict, a string, a generator),
            or ``audit`` is not an audit sink (a path: wrap it in ``JsonlAudit``).
    """
    check_history(history)
    check_audit(audit, "read")
    records: dict[tuple[str, str], list[AuditRecord]] = {}
    for record in audit.read():
        records.setdefault((record.kind, record.call_id), []).append(record)

    def original(kind: str, call_id: str, position: int) -> Any:
        # Ids may repeat (some servers reuse "call_0"): prefer the record made at this
        # position, else the latest one.
        found = records[(kind, call_id)]
        return next((r for r in found if r.position == position), found[-1]).original

    codec = get_codec(format or detect_format(history))
    out = list(history)
    missing = 0
    for position, message in enumerate(history):
        decoded = safe_decode(codec, message)
        contents = {
            r.slot: original("result", r.call_id, position)
            for r in decoded.results
            if r.cleared and ("result", r.call_id) in records
        }
        missing += sum(r.cleared for r in decoded.results) - len(contents)
        snapshots = {
            c.id: original("input", c.id, position)
            for c in decoded.calls
            if ("input", c.id) in records
        }
        if contents:
            out[position] = codec.restore_results(out[position], contents)
        if snapshots:
            out[position] = codec.restore_inputs(out[position], snapshots)
    if missing:
        logger.warning(
            "%d cleared results have no original in the audit %s: left as placeholders",
            missing,
            getattr(audit, "path", type(audit).__name__),
        )
    return out
