"""Clear a transcript file into a new file of the same format, and restore it from its audit.

:func:`clear_file` loads each run of a file, clears it with
:func:`~slimtools.clearing.clear_with_report` and copies the file with nothing changed but
the values the cleared results were read from (located by each message's
:class:`~slimtools.transcripts.Origin`): untouched JSONL lines stay byte-identical, and a
file of several runs is cleared run by run while it is copied. The audit it appends to
keeps every original (see ``_audit``); :func:`restore_file` splices the original texts
back, byte for byte, after checking that each place still holds what clearing wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from slimtools.clearing import ClearingPolicy, MemoryAudit, clear_with_report
from slimtools.clearing.formats.view import get_codec, safe_decode
from slimtools.errors import ConfigurationError, TranscriptError
from slimtools.transcripts._audit import AuditIndex, AuditWriter, check_target
from slimtools.transcripts._jsonio import Layout, torn_tail
from slimtools.transcripts._load import iter_file
from slimtools.transcripts._model import Location, MalformedError, Transcript
from slimtools.transcripts._rewrite import (
    Edit,
    Rewriter,
    guarded,
    layout_of,
    replacing,
    unit_of,
)
from slimtools.transcripts._spans import dump_string


@dataclass(frozen=True)
class FileClearing:
    """What :func:`clear_file` did.

    Attributes:
        path: the transcript read.
        out: the file written.
        source: the transcript format (see :data:`~slimtools.transcripts.SOURCES`).
        runs: the runs the file holds.
        results: the tool results in them.
        cleared: the results replaced by placeholders now (earlier placeholders are not
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
        out: the file to write (may be ``path`` itself: it is replaced atomically; a
            symlink is written through). A JSON Lines file whose last line is still being
            written is read up to it (with a warning) and that line copied as it is; it is
            not cleared in place, where its writer's next lines would be lost.
        policy: what to clear; :class:`~slimtools.clearing.ClearingPolicy` () by default.
            ``clear_tool_inputs`` is refused here: only results are written back.
        format: force a format from :data:`~slimtools.transcripts.SOURCES`.
        audit: a JSONL file to append the originals to (what :func:`restore_file` reads).
            Nothing is appended unless the whole file was written. One audit serves one
            file: it may gather successive clearings of it (``a -> b``, then ``b -> c``),
            not those of unrelated files.

    Raises:
        TranscriptError: the file is malformed or not a transcript, or is still being
            written and ``out`` is the file itself.
        OSError: ``out`` or ``audit`` cannot be written (the error names it).
        ConfigurationError: a policy that clears tool inputs; an audit that is the input or
            the output, or that holds the originals of another file.
    """
    policy = policy if policy is not None else ClearingPolicy()
    if policy.clear_tool_inputs:
        raise ConfigurationError("clear_file writes back tool results only: clear_tool_inputs")
    path, out = Path(path), Path(out)
    audit_path = Path(audit) if audit is not None else None
    step = (str(path.resolve()), str(out.resolve()))
    layout = _checked_layout(path, step, audit_path)
    runs = results = count = before = after = 0
    source = ""
    with replacing(out, like=path) as sink, replacing(audit_path, append=True, like=path) as spool:
        rewriter = Rewriter(path, layout, sink)
        for transcript in iter_file(path, format=format):
            memory = MemoryAudit()
            cleared, report = clear_with_report(
                transcript.messages, policy, format=transcript.format, audit=memory
            )
            writer = AuditWriter(spool, step, transcript.run) if spool is not None else None
            edits = _edits(transcript, cleared, memory, writer)
            guarded(path, partial(rewriter.apply, edits))
            source = source or transcript.source
            runs += 1
            results += sum(len(origin.results) for origin in transcript.origins)
            count += len(edits)
            before += report.tokens_before
            after += report.tokens_after
        if not runs:
            raise TranscriptError(path, "not a transcript slimtools recognises")
        guarded(path, rewriter.finish)
    return FileClearing(path, out, source, runs, results, count, before, after, audit_path)


def _checked_layout(path: Path, step: tuple[str, str], audit: Path | None) -> Layout:
    """The layout of ``path``, once the audit and an in-place write are known to be safe."""
    if audit is not None:
        check_target(audit, step)
    layout = layout_of(path)
    if layout == "jsonl" and step[0] == step[1] and torn_tail(path):
        raise TranscriptError(
            path,
            "its last line is incomplete (still being written?): clearing it in place would "
            "lose what its writer appends next; write the cleared copy to another file",
        )
    return layout


def restore_file(path: str | Path, audit: str | Path, out: str | Path) -> int:
    """Put the originals recorded in ``audit`` back into a cleared file; write it to ``out``.

    The result is byte-identical to the file that was cleared (to the first file, when the
    audit gathers successive clearings). Places already holding their original are left
    alone, so restoring twice changes nothing. The audit is read a unit (a JSONL line, a
    run of a list) at a time, so memory stays bounded by the largest unit's originals.

    Returns:
        How many values were put back.

    Raises:
        TranscriptError: ``audit`` holds no file locations or the originals of unrelated
            files, or ``path`` does not hold what clearing wrote at one of them (it is
            another file, or it changed since; nothing is written then).
    """
    path, audit, out = Path(path), Path(audit), Path(out)
    layout = layout_of(path)

    def unit(location: Location) -> int:
        try:
            return unit_of(layout, location)[0]
        except MalformedError as exc:
            raise TranscriptError(path, f"does not match the audit {audit}: {exc}") from None

    index = AuditIndex(audit, unit)
    restored = [0]
    with replacing(out, like=path) as sink:
        rewriter = Rewriter(path, layout, sink)
        for number in index.units:
            steps: dict[Location, list[tuple[str, str]]] = {}
            for entry in index.entries(number):
                steps.setdefault(entry.location, []).append((entry.raw, entry.written))
            edits = {where: _undo(where, history, restored) for where, history in steps.items()}
            guarded(path, partial(rewriter.apply, edits), audit=audit)
        guarded(path, rewriter.finish, audit=audit)
    return restored[0]


def _undo(location: Location, history: list[tuple[str, str]], restored: list[int]) -> Edit:
    """Undo the clearings of one value, the latest first, checking each left its text."""

    def edit(current: str) -> str:
        for raw, written in reversed(history):
            if current == raw:
                continue
            if current != written:
                raise MalformedError(
                    f"{location} holds neither what clearing wrote there nor the original"
                    " (another file, or changed since)",
                    line=location.line,
                )
            current = raw
            restored[0] += 1
        return current

    return edit


def _edits(
    transcript: Transcript, cleared: list[Any], memory: MemoryAudit, audit: AuditWriter | None
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
            edits[location] = _placeholder(result.text, location, record, audit)
    return edits


def _placeholder(
    text: str, location: Location, record: dict[str, Any], audit: AuditWriter | None
) -> Edit:
    def edit(old: str) -> str:
        new = dump_string(text, old)
        if audit is not None:
            audit.write(record, location, old, new)
        return new

    return edit
