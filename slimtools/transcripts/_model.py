"""What loading a transcript produces: runs as histories, and where each message came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeAlias, get_args

Message: TypeAlias = dict[str, Any]
JsonPath: TypeAlias = tuple["str | int", ...]
"""Keys and list indexes from the root of a JSON value down to one value inside it."""

Source = Literal[
    "claude_code",
    "tau_bench",
    "swe_agent",
    "mini_swe_agent",
    "openhands",
    "openai_chat",
    "openai_responses",
    "anthropic",
    "langchain",
]
SOURCES: tuple[Source, ...] = get_args(Source)
"""Every transcript format slimtools reads, by the name a transcript's ``source`` carries
and ``format=`` (``--format`` on the command line) forces: five recorders and the four
history formats of the clearing core, as files."""

HistoryFormat = Literal["anthropic", "openai_chat", "openai_responses", "langchain"]


@dataclass(frozen=True, slots=True)
class Location:
    """Where one JSON value sits in a transcript file.

    Attributes:
        line: the 1-based line of a JSON Lines file holding it; None in a JSON document.
        path: keys and list indexes from that line's (or the document's) root to the value.
    """

    line: int | None
    path: JsonPath

    def child(self, *keys: str | int) -> Location:
        """The location of a value inside this one."""
        return Location(self.line, self.path + keys)

    def __str__(self) -> str:
        inside = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in self.path)
        where = f"line {self.line}" if self.line is not None else "document"
        return f"{where}{inside or ' root'}"


NO_RESULTS: Mapping[int, Location] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Origin:
    """Where one loaded message came from in its file, so that clearing can be written back.

    Attributes:
        at: the message's own place (for a message merged from several lines, the first).
        results: per result slot of the message (as the clearing codec numbers them: the
            block index in an Anthropic message, 0 elsewhere), the place of the value the
            result's text was read from. Write-back replaces exactly that value.
    """

    at: Location
    results: Mapping[int, Location] = field(default_factory=lambda: NO_RESULTS)


@dataclass(frozen=True, slots=True)
class Transcript:
    """One recorded run as a model history.

    Attributes:
        name: a label: the file name, plus for files that hold several runs ``#`` and the
            run's own id where it has one (``#<task>-<trial>`` for tau-bench,
            ``#<instance_id>`` for OpenHands), else its line (JSONL) or index (a list).
        source: the format the run was read from (one of :data:`SOURCES`); reports group
            by it.
        format: the history format of ``messages``, one the clearing core reads.
        messages: the history, oldest first (dicts; LangChain message objects for
            ``format="langchain"``).
        synthetic: True when some tool calls were synthesised from text actions.
        path: the file it was loaded from (None when built from data in memory).
        run: the run's index in its file (0 for files holding one run).
        origins: per message, where it came from in the file (empty when built from data
            in memory).
        restarts: the indexes of the messages where the model's context restarted: after
            a compaction the model sees the summary and what follows, not the messages
            before it (Claude Code sessions; empty for every other run).
    """

    name: str
    source: Source
    format: HistoryFormat
    messages: list[Any]
    synthetic: bool = False
    path: Path | None = None
    run: int = 0
    origins: tuple[Origin, ...] = field(default=(), repr=False)
    restarts: tuple[int, ...] = ()


class Run(NamedTuple):
    """What a format reader makes of one run; the loader adds its name, file and source."""

    messages: list[Any]
    origins: tuple[Origin, ...]
    format: HistoryFormat
    synthetic: bool = False
    label: str = ""  # appended to the file name for files that hold several runs
    restarts: tuple[int, ...] = ()  # messages where the context restarted (a compaction)


class MalformedError(ValueError):
    """Raised by the format readers, which do not know the file; the loader adds its name."""

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
