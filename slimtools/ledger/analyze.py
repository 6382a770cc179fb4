"""What tool results cost in recorded transcripts, and what clearing would change: plain data.

:func:`analyze` reads transcript files and folders (any format of
:mod:`slimtools.transcripts`), replays every run message by message
(:class:`~slimtools.ledger.stream.RunReplay`: a long session is never held whole) under no
clearing and each policy, and adds the figures up per file. :class:`Analysis` groups them
by file, by source or in total, and :meth:`Analysis.to_dict` gives them as JSON-ready data.
Nothing here prints; ``slimtools analyze`` is the shell around it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.errors import TranscriptError
from slimtools.ledger._figures import Figures, RoundSeries, ToolTally, Totals, percentile
from slimtools.ledger.bill import RunBill, bill_of
from slimtools.ledger.stream import NO_CLEARING, RunFigures, RunReplay
from slimtools.ledger.timeline import RunTimeline
from slimtools.tokens import TokenCounter, count_tokens
from slimtools.transcripts import RunStream, stream_file, transcript_files

__all__ = [
    "Analysis",
    "Figures",
    "FileAnalysis",
    "Grouping",
    "RoundSeries",
    "ToolTally",
    "Totals",
    "analyze",
    "percentile",
]

Grouping = Literal["file", "source", "tool"]
Progress = Callable[[int, int, Path], None]
"""Called with bytes read so far, bytes in all, and the file being read."""


@dataclass(frozen=True)
class FileAnalysis:
    """One transcript file's figures.

    Attributes:
        path: the file.
        source: its format (one of :data:`~slimtools.transcripts.SOURCES`).
        figures: its runs' figures added up.
        streamed: True when its messages were read as they were replayed (a Claude Code
            session, JSON Lines of API messages), False when each run was loaded whole.
        bills: for each run that recorded its usage (Claude Code sessions), the recorded
            bill beside the ledger's modelled one (:func:`~slimtools.ledger.bill.bill_run`).
        timelines: each run's tool results one by one under the first policy, when
            :func:`analyze` was asked for them (``timelines=True``).
    """

    path: Path
    source: str
    figures: Figures
    streamed: bool = False
    bills: tuple[RunBill, ...] = ()
    timelines: tuple[RunTimeline, ...] = ()


@dataclass
class Analysis:
    """The result of :func:`analyze`.

    Attributes:
        files: every transcript file read, in order.
        errors: the files that could not be read, one error each (their figures are left
            out of everything else).
        skipped: files that are not transcripts (READMEs, binaries, other JSON).
        policies: label -> policy, in the order given (``"no clearing"`` is always there
            too, first, as the baseline).
        cache: the cache prices everything was billed with.
    """

    files: list[FileAnalysis]
    errors: list[TranscriptError]
    skipped: list[Path]
    policies: dict[str, ClearingPolicy]
    cache: CachePricing | None

    @property
    def labels(self) -> list[str]:
        """Strategy labels in report order: no clearing, then each policy."""
        return [NO_CLEARING, *self.policies]

    @property
    def total(self) -> Figures:
        """Every file's figures added up."""
        total = Figures()
        for f in self.files:
            total.merge(f.figures)
        return total

    def groups(self, by: Grouping) -> dict[str, Figures]:
        """Figures per file (by path) or per source; ``"tool"`` gives the total alone, since
        its per-tool figures are in :attr:`Figures.tools` and :attr:`Figures.resident_by_tool`."""
        if by == "tool":
            return {"TOTAL": self.total}
        out: dict[str, Figures] = {}
        for f in self.files:
            key = str(f.path) if by == "file" else f.source
            out.setdefault(key, Figures()).merge(f.figures)
        return out

    def to_dict(self, *, rounds: bool = True) -> dict[str, Any]:
        """Everything as JSON-ready data: per file, in total, and the errors."""
        cache = self.cache
        return {
            "cache": None
            if cache is None
            else {"name": cache.name, "read": cache.read, "write": cache.write},
            "strategies": self.labels,
            "files": [
                {"file": str(f.path), "format": f.source, "streamed": f.streamed}
                | f.figures.to_dict(rounds=rounds)
                | {"runs": [b.to_dict() for b in f.bills]}
                for f in self.files
            ],
            "total": self.total.to_dict(rounds=rounds),
            "errors": [
                {"file": str(e.path), "line": e.line, "reason": e.reason} for e in self.errors
            ],
            "skipped": [str(p) for p in self.skipped],
        }


def analyze(
    *paths: str | Path,
    policies: Mapping[str, ClearingPolicy] | None = None,
    cache: CachePricing | str | None = DEFAULT_PRICING,
    format: str | None = None,
    counter: TokenCounter = count_tokens,
    on_progress: Progress | None = None,
    timelines: bool = False,
) -> Analysis:
    """Replay every transcript under ``paths`` under no clearing and each policy.

    A file that cannot be read (malformed, not UTF-8, missing) is recorded in
    :attr:`Analysis.errors` with a one-line reason and left out of the figures; the other
    files are still read.

    Args:
        paths: transcript files and folders (walked recursively).
        policies: label -> policy; by default ``{"default": ClearingPolicy(cache=cache)}``.
        cache: the cache prices to bill with (a preset name, a ``CachePricing`` or None).
        format: force a format from :data:`~slimtools.transcripts.SOURCES`.
        counter: counts tokens (policies' own counters give way to it).
        on_progress: called as files are read (bytes read, bytes in all, current file).
        timelines: also note each run's tool results one by one under the first policy
            (:attr:`FileAnalysis.timelines`, for ``analyze --html``), in the same replay.
    """
    pricing = pricing_of(cache)
    chosen = dict(policies) if policies is not None else {"default": ClearingPolicy(cache=cache)}
    errors: list[TranscriptError] = []
    files = list(transcript_files(*paths, on_error=errors.append))
    meter = _Meter([_size(p) for p in files], on_progress)
    out: list[FileAnalysis] = []
    skipped: list[Path] = []
    for index, path in enumerate(files):
        meter.start(index, path)
        try:
            found = _file(
                path,
                policies=chosen,
                pricing=pricing,
                format=format,
                counter=counter,
                progress=meter.read,
                timelines=timelines,
            )
        except TranscriptError as exc:
            errors.append(exc)
        else:
            if found is None:
                skipped.append(path)
            else:
                out.append(found)
        meter.finish()
    return Analysis(out, errors, skipped, chosen, pricing)


class _Meter:
    """Bytes read so far, reported to ``on_progress`` (never past the current file's end)."""

    def __init__(self, sizes: list[int], callback: Progress | None) -> None:
        self.sizes, self.callback = sizes, callback
        self.total, self.done, self.end = sum(sizes), 0, 0
        self.path = Path()

    def start(self, index: int, path: Path) -> None:
        self.path, self.end = path, self.done + self.sizes[index]

    def read(self, n: int) -> None:
        self.done = min(self.done + n, self.end)
        if self.callback is not None:
            self.callback(self.done, self.total, self.path)

    def finish(self) -> None:
        self.read(self.end - self.done)


def _file(
    path: Path,
    *,
    policies: Mapping[str, ClearingPolicy],
    pricing: CachePricing | None,
    format: str | None,
    counter: TokenCounter,
    progress: Callable[[int], None],
    timelines: bool,
) -> FileAnalysis | None:
    figures = Figures()
    source, streamed = None, False
    bills: list[RunBill] = []
    runs: list[RunTimeline] = []
    for run in stream_file(path, format, progress=progress):
        replayed = _replayed(run, policies, counter, pricing, timelines)
        figures.add_run(replayed, pricing)
        source, streamed = run.source, run.streamed
        if run.usage:  # read as the replay read the run's messages
            bills.append(bill_of(run.usage, replayed, restarts=run.restarts, name=run.name))
        if replayed.timeline is not None:
            replayed.timeline.name = run.name
            runs.append(replayed.timeline)
    if source is None:
        return None
    return FileAnalysis(path, source, figures, streamed, tuple(bills), tuple(runs))


def _replayed(
    run: RunStream,
    policies: Mapping[str, ClearingPolicy],
    counter: TokenCounter,
    pricing: CachePricing | None,
    timeline: bool,
) -> RunFigures:
    """One run's figures. Its replay (engines, per-message state) is freed on return, before
    adding the figures up copies their ledgers."""
    replay = RunReplay(run.format, policies, counter=counter, cache=pricing, timeline=timeline)
    return replay.add_all(run.messages).finish()


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
