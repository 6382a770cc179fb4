"""The engine's bookkeeping records, and the writing of one batch of clears.

Kept apart from the deciding logic in ``_engine.py``: what to clear is decided there, how a
decided batch is audited and written into the output list is decided here.
"""

from __future__ import annotations

import logging
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from slimtools.clearing._ingest import Reading, SeenCall
from slimtools.clearing._plan import Candidates
from slimtools.clearing._savings import SavingsIndex
from slimtools.clearing.audit import Audit, AuditRecord
from slimtools.clearing.formats import with_changes
from slimtools.clearing.formats.base import Codec, RawResult, new_tuple
from slimtools.clearing.report import ClearingReport

logger = logging.getLogger("slimtools.clearing")


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

    def remember(self, cleared: list[Pending]) -> None:
        """Record cleared results (their placeholders, and whether arguments were blanked)."""
        key, placeholders = self._key, self.placeholders
        for pending in cleared:
            placeholders[key(pending.raw)] = pending.placeholder
            if pending.input_saving:
                self.blanked.add(key(pending.raw))

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


class Forgetful(Memory):
    """The memory of a clearer called only once (the one-shot functions): there is no
    later call to stay monotone for, so nothing is kept (fingerprinting every result cost a
    one-shot pass 3.5% of its instructions)."""

    __slots__ = ()

    def remember(self, cleared: list[Pending]) -> None:
        """Keep nothing."""


class Pending(NamedTuple):
    """A clearable result on its way out: waiting for its turn and its keep slot, then,
    with its placeholder rendered, for the trigger and the batch minimum.

    A named tuple built with ``new_tuple`` at C speed, and rebuilt once when it is made
    ready: a long pass files one per result, and a slots dataclass's ``__init__`` costs
    several times more.
    """

    raw: RawResult
    tool: str
    call: SeenCall
    position: int
    turn: int
    tokens: int
    eidx: int  # index among results that count toward ``keep``
    placeholder: str = ""  # rendered when the result is made ready
    saving: int = 0  # tokens the placeholder saves
    input_saving: int = 0  # tokens blanking the call's arguments saves (0: not blanked)
    first: int = 0  # the first message clearing it rewrites (the call's, when blanked)


@dataclass(slots=True)
class State(Reading):
    """Everything derived from the messages ingested so far (reset on a full pass)."""

    n: int = 0
    out: list[Any] = field(default_factory=list)
    # The caller's messages as read (not kept for a list cleared in place: it is ``out``).
    seen: list[Any] = field(default_factory=list)
    first: Any = None
    last: Any = None
    saved: int = 0
    savings: SavingsIndex = field(default_factory=SavingsIndex)  # saved tokens by position
    # The turn of each result that counts toward ``keep``: one machine integer a result.
    eligible_turns: array[int] = field(default_factory=lambda: array("q"))
    snapshot: int = 0
    # Results not yet due, one queue per retention (turns kept): turns only grow, so each
    # queue is in due order, and a call pops only what fell due (no container per turn).
    waiting: dict[int, deque[Pending]] = field(default_factory=dict)
    ripe: list[Pending] = field(default_factory=list)
    ready: list[Pending] = field(default_factory=list)
    ready_saving: int = 0
    plan: Candidates = field(default_factory=Candidates)  # cache-aware: ready, by position
    forced: list[Pending] = field(default_factory=list)
    # Per eidx, 1 once the result is made ready or cleared ahead of its age (too late for a
    # rule to clear it ahead, or skipped when it falls due); a byte a result.
    made: bytearray = field(default_factory=bytearray)
    # The _rules.Rule list of this pass (_rules.rules_for), made on first use; typed Any, as
    # the rules' module names this one's Pending (no import cycle).
    rules: list[Any] | None = None
    keeps: dict[str, int | None] = field(default_factory=dict)  # tool -> turns_to_keep
    # Whether every tool in ``keeps`` is a command (shell): evidence of a long run
    # (``pricing.calls_ahead``); checked again when ``keeps`` grows past ``shell_checked``.
    shell: bool = True
    shell_checked: int = 0


def write_batch(
    codec: Codec, state: State, forced: list[Pending], fresh: list[Pending], memory: Memory
) -> ClearingReport:
    """Write the placeholders (and blanked arguments) into ``state.out``; account for it.

    Results are grouped by message, so a message holding several (Anthropic) is rebuilt
    once, then the calls whose arguments are blanked.
    """
    out = state.out
    if len(fresh) == 1 and not forced and not fresh[0].input_saving:
        # A per-round clearer's usual call, without a batch's grouping and accounting (a
        # tenth of its time, bench_clearing (b)); the round-by-round property tests hold
        # it to the general path.
        p = fresh[0]
        out[p.position] = codec.replace_results(out[p.position], {p.raw.slot: p.placeholder})
        before = state.tokens - state.saved
        state.savings.add_many([(p.position, p.saving)])
        state.saved += p.saving
        memory.remember(fresh)
        fields = (1, p.saving, (p.raw.call_id,), 0, p.position, before, before - p.saving)
        written: ClearingReport = new_tuple(ClearingReport, fields)
        return written
    blank: dict[int, set[str]] = {}  # message position -> ids of calls to blank
    # Formats whose result is a whole message (WholeMessageResults) name the field holding
    # it: one result per message, nothing to group (1.5% of a one-pass clear, callgrind).
    field = getattr(codec, "result_field", None)
    if field is not None:
        for p in forced + fresh:
            out[p.position] = with_changes(out[p.position], {field: p.placeholder})
            if p.input_saving:
                blank.setdefault(p.call.position, set()).add(p.raw.call_id)
    else:
        grouped: dict[int, dict[int, str]] = {}  # message position -> slot -> placeholder
        for p in forced + fresh:
            grouped.setdefault(p.position, {})[p.raw.slot] = p.placeholder
            if p.input_saving:
                blank.setdefault(p.call.position, set()).add(p.raw.call_id)
        for position, slots in grouped.items():
            out[position] = codec.replace_results(out[position], slots)
    for position, ids in blank.items():
        out[position] = codec.blank_inputs(out[position], ids)
    return account_batch(codec, state, forced, fresh, memory)


def account_batch(
    codec: Codec, state: State, forced: list[Pending], fresh: list[Pending], memory: Memory
) -> ClearingReport:
    """Note a decided batch in the savings index, the saved total and ``memory``; report it.

    ``fresh`` results are cleared for the first time; ``forced`` ones are re-applied after a
    re-read and not reported again. No message is touched: the replay mode calls this alone.
    """
    before = state.tokens - state.saved
    batch = forced + fresh
    if not batch:
        return ClearingReport(tokens_before=before, tokens_after=before)
    saved = [(p.position, p.saving) for p in batch]
    saved += [(p.call.position, p.input_saving) for p in batch if p.input_saving]
    state.savings.add_many(saved)
    saving = sum([s for _, s in saved])
    state.saved += saving
    memory.remember(fresh)
    repeated = sum([p.saving + p.input_saving for p in forced]) if forced else 0
    blanked = sum([1 for p in fresh if p.input_saving]) if len(saved) > len(batch) else 0
    return ClearingReport(
        len(fresh),
        saving - repeated,
        tuple([p.raw.call_id for p in fresh]),
        blanked,
        min(saved)[0],  # the first message changed
        before,
        before - saving,
    )


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
