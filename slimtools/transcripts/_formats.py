"""The table of transcript formats: which reader recognises and reads which file.

A file is recognised from its first entry (see :class:`~slimtools.transcripts._reader.Reader`
for the order of the tests); ``format=`` picks a reader by name instead. Adding a format
is a reader module declaring a ``Reader`` and one row of :data:`READERS`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from slimtools.transcripts._api import API, LANGCHAIN
from slimtools.transcripts._claude_code import CLAUDE_CODE
from slimtools.transcripts._model import Source
from slimtools.transcripts._openhands import OPENHANDS
from slimtools.transcripts._reader import Reader
from slimtools.transcripts._swe_agent import MINI_SWE_AGENT, SWE_AGENT
from slimtools.transcripts._tau_bench import TAU_BENCH

READERS: tuple[Reader, ...] = (
    CLAUDE_CODE,
    MINI_SWE_AGENT,
    OPENHANDS,  # before SWE-agent: an OpenHands run record has a ``history`` list too
    SWE_AGENT,
    TAU_BENCH,
    LANGCHAIN,  # before the API formats: a LangChain dump's entries have no ``role``
    API,
)
"""Every reader, in the order the loader tries them on a file's first entry."""

_BY_NAME: dict[str, Reader] = {name: r for r in READERS for name in r.names}


class Match(NamedTuple):
    """How a file's entries are read: by which reader, named how, and whether each is a run.

    ``kind`` names the format in error messages: the forced name, else the reader's.
    """

    reader: Reader
    kind: str
    whole: bool
    forced: Source | None


def match(first: Any, forced: Source | None) -> Match | None:
    """How to read a file whose first entry is ``first``; None: it is not a transcript."""
    if forced is not None:
        reader = _BY_NAME[forced]
        if reader.holds == "either":
            whole = _run_reader(first) is not None or _entry_reader(first) is None
        else:
            whole = reader.holds == "runs"
        return Match(reader, forced, whole, forced)
    for reader in READERS:
        if reader.marks is not None and reader.marks(first):
            return Match(reader, reader.name, False, None)
    found = _run_reader(first)
    if found is not None:
        return Match(found, found.name, True, None)
    found = _entry_reader(first)
    return Match(found, found.name, False, None) if found is not None else None


def _run_reader(value: Any) -> Reader | None:
    if not isinstance(value, dict):
        return None
    return next((r for r in READERS if r.is_run is not None and r.is_run(value)), None)


def _entry_reader(value: Any) -> Reader | None:
    return next((r for r in READERS if r.is_entry is not None and r.is_entry(value)), None)
