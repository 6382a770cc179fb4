"""The engine's bookkeeping records, and the writing of one batch of clears.

Kept apart from the deciding logic in ``_engine.py``: what to clear is decided there, how a
decided batch is audited and written into the output list is decided here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from slimtools.clearing._codec import Codec, RawResult, new_tuple
from slimtools.clearing.audit import Audit, AuditRecord
from slimtools.clearing.report import ClearingReport

logger = logging.getLogger("slimtools.clearing")


class Call(NamedTuple):
    """A tool call as the engine remembers it (by id)."""

    name: str
    args: dict[str, Any]
    position: int
    args_tokens: int
    args_chars: int


class Memory:
    """What each cleared result became, for re-applying it after a re-read (monotonicity).

    Keyed by call id and a fingerprint of the original (its length and both ends: constant
    time, unlike a hash of a long result), since some servers reuse ids. Keys and values
    are strings, which the garbage collector does not track: a 10,000-turn run leaves no
    container objects behind here to slow down full collections.
    """

    __slots__ = ("blanked", "placeholders")

    def __init__(self) -> None:
        self.placeholders: dict[str, str] = {}
        self.blanked: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.placeholders)

    @staticmethod
    def _key(raw: RawResult) -> str:
        text = raw.text
        return f"{raw.call_id}\x00{len(text)}\x00{text[:48]}\x00{text[-48:]}"

    def remember(self, raw: RawResult, placeholder: str, *, blanked: bool) -> None:
        """Record a cleared result (and whether its call's arguments were blanked)."""
        key = self._key(raw)
        self.placeholders[key] = placeholder
        if blanked:
            self.blanked.add(key)

    def knows(self, raw: RawResult) -> bool:
        """Whether this result was cleared before."""
        return self._key(raw) in self.placeholders

    def recall(self, raw: RawResult) -> tuple[str, bool]:
        """The placeholder it became, and whether its arguments were blanked."""
        key = self._key(raw)
        return self.placeholders[key], key in self.blanked

    def clear(self) -> None:
        """Forget everything."""
        self.placeholders.clear()
        self.blanked.clear()


@dataclass(slots=True, eq=False)
class Pending:
    """A clearable result waiting for its turn, its keep slot, the trigger or the batch."""

    raw: RawResult
    tool: str
    call: Call
    position: int
    turn: int
    tokens: int
    eidx: int  # index among results that count toward ``keep``
    placeholder: str = ""
    saving: int = 0
    input_saving: int = 0


@dataclass(slots=True)
class State:
    """Everything derived from the messages ingested so far (reset on a full pass)."""

    n: int = 0
    out: list[Any] = field(default_factory=list)
    first: Any = None
    last: Any = None
    turns: int = 0
    previous_model: bool = False
    tokens: int = 0
    saved: int = 0
    tool_uses: int = 0
    calls: dict[str, Call] = field(default_factory=dict)
    eligible_turns: list[int] = field(default_factory=list)
    snapshot: int = 0
    due: dict[int, list[Pending]] = field(default_factory=dict)
    due_done: int = -1
    ripe: list[Pending] = field(default_factory=list)
    ready: list[Pending] = field(default_factory=list)
    ready_saving: int = 0
    forced: list[Pending] = field(default_factory=list)


def write_batch(
    codec: Codec,
    state: State,
    forced: list[Pending],
    fresh: list[Pending],
    memory: Memory,
) -> ClearingReport:
    """Write the placeholders (and blanked arguments) into ``state.out``; report it.

    ``fresh`` results are cleared for the first time and remembered in ``memory``;
    ``forced`` ones are re-applied after a re-read and not reported again.
    """
    before = state.tokens - state.saved
    if not forced and not fresh:
        return report(0, 0, (), 0, None, before, before)
    by_position: dict[int, dict[int, str]] = {}
    blank: dict[int, set[str]] = {}
    saving = fresh_saving = inputs = 0
    for p in forced + fresh if forced else fresh:
        texts = by_position.get(p.position)
        if texts is None:
            by_position[p.position] = {p.raw.slot: p.placeholder}
        else:
            texts[p.raw.slot] = p.placeholder
        saving += p.saving + p.input_saving
        if p.input_saving:
            blank.setdefault(p.call.position, set()).add(p.raw.call_id)
    for p in fresh:
        fresh_saving += p.saving + p.input_saving
        memory.remember(p.raw, p.placeholder, blanked=bool(p.input_saving))
        inputs += bool(p.input_saving)
    out, replace = state.out, codec.replace_results
    for position, texts in by_position.items():
        out[position] = replace(out[position], texts)
    for position, ids in blank.items():
        out[position] = codec.blank_inputs(out[position], ids)
    state.saved += saving
    first = min([*by_position, *blank]) if blank else min(by_position)
    call_ids = tuple([p.raw.call_id for p in fresh])
    return report(len(fresh), fresh_saving, call_ids, inputs, first, before, before - saving)


def report(*fields: Any) -> ClearingReport:
    """A :class:`ClearingReport` from its seven fields in order, built at C speed (one per
    call of a per-round clearer)."""
    built: ClearingReport = new_tuple(ClearingReport, fields)
    return built


def audit_originals(audit: Audit, codec: Codec, state: State, fresh: list[Pending]) -> bool:
    """Hand the originals to the audit sink first; False (clear nothing) if it fails."""
    out, fmt = state.out, codec.name
    records = []
    for p in fresh:
        records.append(
            AuditRecord(
                kind="result",
                call_id=p.raw.call_id,
                tool=p.tool,
                chars=len(p.raw.text),
                tokens=p.tokens,
                turn=p.turn,
                position=p.position,
                format=fmt,
                original=codec.result_content(out[p.position], p.raw.slot),
            )
        )
        if p.input_saving:
            records.append(
                AuditRecord(
                    kind="input",
                    call_id=p.raw.call_id,
                    tool=p.tool,
                    chars=p.call.args_chars,
                    tokens=p.call.args_tokens,
                    turn=p.turn,
                    position=p.call.position,
                    format=fmt,
                    original=codec.input_snapshot(out[p.call.position], p.raw.call_id),
                )
            )
    try:
        audit.write(records)
    except Exception:  # a failing sink must not lose originals: clear nothing this time
        logger.warning("audit sink failed; nothing cleared this round", exc_info=True)
        return False
    return True
