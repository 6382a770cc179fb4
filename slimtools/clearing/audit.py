"""Audit sinks that receive each original before it is replaced, and ``restore``.

Clearing is a one-way door for the model, not for you: give the clearer an ``audit=`` sink
and every cleared result (and every blanked argument list) is written there first, with its
call id, tool, size and turn; :func:`restore` puts the originals back. When the sink fails,
nothing is cleared that round (the originals would otherwise be lost).

The file sinks store originals as JSON: exact for JSON data (strings, block lists, dicts;
lone surrogates and integers beyond 64 bits too); SDK objects inside a history come back
as their dict form, but the call entries of an SDK message as its SDK type.
:class:`MemoryAudit` keeps the originals themselves.
One sink may serve several histories, each through its own :class:`ScopedAudit`.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from os import PathLike
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from slimtools._json import dumps_exact, loads
from slimtools.clearing._ingest import same_message
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
        scope: the history the record belongs to, set by :class:`ScopedAudit` (``""``:
            unscoped).
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
    scope: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (``original`` as is; ``scope`` only when set, so an
        unscoped record keeps the shape audit files had before scopes)."""
        data = asdict(self)
        if not self.scope:
            del data["scope"]
        return data


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
        scope=str(data.get("scope", "")),
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
                " format TEXT NOT NULL, original TEXT NOT NULL,"
                " scope TEXT NOT NULL DEFAULT '')"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(clearing_audit)")}
            if "scope" not in columns:  # a database written before scopes: add the column
                self._db.execute(
                    "ALTER TABLE clearing_audit ADD COLUMN scope TEXT NOT NULL DEFAULT ''"
                )
            self._db.execute(
                "CREATE INDEX IF NOT EXISTS clearing_audit_call ON clearing_audit (call_id)"
            )

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Insert the batch in one transaction."""
        rows = [
            (r.kind, r.call_id, r.tool, r.chars, r.tokens, r.turn, r.position, r.format,
             dumps_exact(r.original).decode(), r.scope)
            for r in records
        ]  # fmt: skip
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO clearing_audit (kind, call_id, tool, chars, tokens, turn,"
                " position, format, original, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def read(self) -> Iterator[AuditRecord]:
        """The records, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT kind, call_id, tool, chars, tokens, turn, position, format, original,"
                " scope FROM clearing_audit ORDER BY seq"
            ).fetchall()
        for kind, call_id, tool, chars, tokens, turn, position, fmt, original, scope in rows:
            yield AuditRecord(
                kind, call_id, tool, chars, tokens, turn, position, fmt, loads(original), scope
            )

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


class ScopedAudit:
    """One history's view of a shared audit sink: records are stamped with ``scope``.

    Give each conversation its own ``ScopedAudit(sink, conversation_id)`` over one sink
    (a file, a database) and pass the same to :func:`restore`: it reads back only that
    conversation's records, so histories whose ids repeat (servers that number calls
    ``call_0``, ``call_1`` in every run) never take each other's originals. The scope is
    stored with each record (``AuditRecord.scope``); a sink that keeps records as given
    (the three here) keeps it. Scopes do not nest: the inner one's stamp wins.

    Args:
        sink: the audit sink shared between histories.
        scope: a non-empty string naming this history (a conversation or thread id).

    Raises:
        TypeError: ``sink`` is not an audit sink, or ``scope`` is not a string.
        ValueError: ``scope`` is empty.
    """

    def __init__(self, sink: Audit, scope: str) -> None:
        check_audit(sink, "write")
        check_audit(sink, "read")
        if not isinstance(scope, str):
            raise TypeError(f"scope must be a string naming the history, got {scope!r}")
        if not scope:
            raise ValueError("scope must be a non-empty string naming the history")
        self.sink = sink
        self.scope = scope

    def write(self, records: Sequence[AuditRecord]) -> None:
        """Write the records to the sink, stamped with this scope."""
        self.sink.write([replace(r, scope=self.scope) for r in records])

    def read(self) -> Iterator[AuditRecord]:
        """This scope's records, oldest first."""
        scope = self.scope
        return (r for r in self.sink.read() if r.scope == scope)


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
    put back from their snapshots. ``restore(clear(h, audit=a), a) == h``.

    It never guesses: an original goes back only where this history's records name one
    unambiguously (docs/clearing.md, "restore never guesses"); where records disagree (a
    sink shared by histories whose ids repeat: give each a :class:`ScopedAudit`) or are
    missing, the placeholder stays, with a warning.

    Raises:
        TypeError: ``history`` is not a list of messages (a dict, a string, a generator),
            or ``audit`` is not an audit sink (a path: wrap it in ``JsonlAudit``).
    """
    check_history(history)
    check_audit(audit, "read")
    fmt = format or detect_format(history)
    codec = get_codec(fmt)
    decoded = [safe_decode(codec, message) for message in history]
    held: Counter[tuple[str, str]] = Counter()
    for d in decoded:
        held.update(("result", r.call_id) for r in d.results if r.cleared)
        held.update(("input", c.id) for c in d.calls)
    originals = _Originals(audit.read(), fmt, held)
    out = list(history)
    for position, d in enumerate(decoded):  # results first: arguments follow their results
        cleared = [(r.slot, r.call_id) for r in d.results if r.cleared]
        contents = originals.take("result", position, cleared)
        if contents:
            out[position] = codec.restore_results(out[position], contents)
    for position, d in enumerate(decoded):
        snapshots = originals.take("input", position, [(c.id, c.id) for c in d.calls])
        if snapshots:
            out[position] = codec.restore_inputs(out[position], snapshots)
    originals.warn(getattr(audit, "path", type(audit).__name__))
    return out


class _Originals:
    """An audit's records of one format by kind and call id, and the rules for taking one
    back (see :func:`restore`)."""

    def __init__(
        self, records: Iterable[AuditRecord], fmt: str, held: Counter[tuple[str, str]]
    ) -> None:
        # (kind, call id) -> position -> records: ids such as "call_0" may recur every turn
        self._by_id: dict[tuple[str, str], dict[int, list[AuditRecord]]] = {}
        for record in records:
            if record.format == fmt:
                places = self._by_id.setdefault((record.kind, record.call_id), {})
                places.setdefault(record.position, []).append(record)
        self._held = held  # how many placeholders (results) or calls (inputs) hold each id
        # (call id, turn) of this history's results -> the scopes of the records naming them
        self._owned: dict[tuple[str, int], set[str]] = {}
        self.missing = 0  # placeholders with no record
        self.ambiguous = 0  # placeholders or calls whose records disagree

    def take(self, kind: str, position: int, keys: Iterable[tuple[Any, str]]) -> dict[Any, Any]:
        """The originals of ``(slot or id, call id)`` pairs at ``position`` that the audit
        gives unambiguously, by slot or id (results: asked for placeholders only)."""
        taken: dict[Any, Any] = {}
        for key, call_id in keys:
            places = self._by_id.get((kind, call_id))
            if not places:
                self.missing += kind == "result"
                continue
            here = places.get(position, [])
            if not here and self._held[kind, call_id] == 1 and len(places) == 1:
                here = next(iter(places.values()))  # moved: one id here, one place audited
            if kind == "input":  # only with a result of this history's, from its scope(s)
                scopes = {s for r in here for s in self._owned.get((r.call_id, r.turn), ())}
                here = [r for r in here if r.scope in self._owned.get((r.call_id, r.turn), ())]
                if not here:
                    continue
                if {r.scope for r in here} != scopes:  # a result several histories share
                    self.ambiguous += 1
                    continue
            if here and _agree(here):
                taken[key] = here[0].original
                self._own(here)
            else:
                self.ambiguous += 1
        return taken

    def _own(self, records: list[AuditRecord]) -> None:
        for r in records:
            self._owned.setdefault((r.call_id, r.turn), set()).add(r.scope)

    def warn(self, audit: object) -> None:
        """Log the placeholders left, for want of an original or for ambiguity."""
        if self.missing:
            logger.warning(
                "%d cleared results have no original in the audit %s: left as placeholders",
                self.missing,
                audit,
            )
        if self.ambiguous:
            logger.warning(
                "%d originals in the audit %s are ambiguous (records of several histories, or"
                " of a reused id, disagree): left as they are; give each history its own"
                " ScopedAudit(sink, conversation_id)",
                self.ambiguous,
                audit,
            )


def _agree(records: list[AuditRecord]) -> bool:
    """Whether every record holds the same original."""
    first = records[0].original
    return all(same_message(first, r.original) for r in records[1:])
