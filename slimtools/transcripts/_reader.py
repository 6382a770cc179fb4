"""What a transcript format declares to be read: a :class:`Reader`, and the runs it streams.

Each reader module (``_claude_code``, ``_swe_agent``, ``_openhands``, ``_tau_bench``,
``_api``) declares its formats as :class:`Reader` values; ``transcripts._formats.READERS``
is the one table the loader and the streaming reader consult, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from slimtools.transcripts._model import HistoryFormat, Location, Run, Source
from slimtools.transcripts._usage import RecordedRequest

Progress: TypeAlias = Callable[[int], None]
"""Called with the number of bytes of the file read since the last call."""

Entries: TypeAlias = Iterable[tuple[Any, Location]]
"""The entries of one run (messages, events or session lines) and where each sits."""


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
        restarts: the indexes of the messages where the model's context restarted after a
            compaction, once ``messages`` has been read (see
            :attr:`~slimtools.transcripts.Transcript.restarts`).
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
    restarts: list[int] = field(default_factory=list, repr=False)


@dataclass(frozen=True)
class Reader:
    """One transcript format: how a file of it is recognised, read whole and streamed.

    The loader looks at a file's first entry (a JSON Lines record, a list's first element
    or the whole document) and tries the readers of the table in order: the first whose
    ``marks`` holds wins; else, for an object, the first whose ``is_run`` holds (each entry
    is then a whole run); else the first whose ``is_entry`` holds (the entries are then one
    run's messages). A file of no reader is not a transcript.

    Attributes:
        name: the format's name in messages: a :data:`~slimtools.transcripts.Source`, or
            ``"api"`` for the three API formats, which only the history tells apart.
        source: what a run it reads reports as its source; None: the run's history format.
        holds: what each entry of a file is when ``format=`` forces this reader:
            ``"runs"``, ``"messages"``, or ``"either"`` (decided from the first entry).
        read_run: a JSON object holding a whole run, where it sits, and the forced format
            (None when recognised) -> the run.
        read_messages: a run's entries in order, and the forced format -> the run; None
            when the format only stores whole runs.
        marks: true for an entry only this format writes (checked before any other).
        is_run: true for a JSON object holding one whole run of this format.
        is_entry: true for one message or event of a run of this format.
        stream: a JSON Lines file of one run's messages, the forced format and a progress
            callback -> the run, its messages read line by line; None: read whole.
        forced_by: the names of :data:`~slimtools.transcripts.SOURCES` that force this
            reader (``(name,)`` when empty).
    """

    name: str
    source: Source | None
    holds: Literal["runs", "messages", "either"]
    read_run: Callable[[dict[str, Any], Location, Source | None], Run]
    read_messages: Callable[[Entries, Source | None], Run] | None = None
    marks: Callable[[Any], bool] | None = None
    is_run: Callable[[dict[str, Any]], bool] | None = None
    is_entry: Callable[[Any], bool] | None = None
    stream: Callable[[Path, Source | None, Progress], RunStream] | None = None
    forced_by: tuple[Source, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The ``format=`` names that force this reader."""
        return self.forced_by or (self.name,)


def unzip(entries: Entries) -> tuple[list[Any], list[Location]]:
    """A run's entries as two lists, for readers that take values and places apart."""
    values: list[Any] = []
    ats: list[Location] = []
    for value, at in entries:
        values.append(value)
        ats.append(at)
    return values, ats
