"""The ledger's modelled bill against the bill a provider recorded, for one run.

A Claude Code session records each request's usage; the ledger models the same run without
clearing, estimating what the transcript does not hold (the prefix, the token density, the
cache at the start, the context put back after a compaction) from the record, and leaves
only the cache breaks the transcript gives no reason for between the two bills. What is
recorded, modelled and estimated, and how, is on docs/ledger.md ("The ledger against the
bill").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from slimtools.clearing import detect_format
from slimtools.clearing.pricing import CachePricing
from slimtools.instrumentation import TTL_1H, TTL_5M, CacheBreak, cause_of, is_break
from slimtools.ledger.stream import NO_CLEARING, RunFigures, RunReplay
from slimtools.tokens import TokenCounter, count_tokens
from slimtools.transcripts import RecordedRequest

# Anthropic's prices (the "anthropic" and "anthropic-1h" presets of clearing.pricing)
_FIVE_MINUTES = CachePricing(read=0.1, write=1.25, name="anthropic")
_ONE_HOUR = CachePricing(read=0.1, write=2.0, name="anthropic-1h")

PREFIX_COMMANDS = frozenset({"/mcp", "/config", "/permissions", "/agents", "/hooks", "/plugin"})
"""Claude Code commands that change the system prompt or the tool definitions."""

__all__ = [
    "DEFAULT_CALIBRATION",
    "Calibration",
    "RunBill",
    "UsageTotals",
    "bill_of",
    "bill_run",
]


@dataclass(frozen=True, slots=True)
class Calibration:
    """How counted tokens map to billed ones, and the prefix outside the transcript.

    Attributes:
        factor: billed tokens per token the counter counts.
        per_message: billed tokens of framing per message.
        prefix: tokens sent before the first message (system prompt, tool definitions).
        source: ``"recorded"`` (fitted on the run's own usage) or ``"default"``.
    """

    factor: float
    per_message: float
    prefix: int = 0
    source: Literal["recorded", "default"] = "default"

    def tokens(self, counted: int, messages: int) -> float:
        """Billed tokens of ``messages`` messages the counter puts at ``counted``."""
        return self.factor * counted + self.per_message * messages

    def counter(self, base: TokenCounter = count_tokens) -> TokenCounter:
        """A token counter scaled by :attr:`factor` (for ``TokenLedger.measure(counter=)``
        or ``analyze(counter=)``); the framing per message is not a text's and stays out."""
        factor = self.factor

        def count(text: str) -> int:
            return round(factor * base(text))

        return count

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "factor": round(self.factor, 4),
            "per_message": round(self.per_message, 2),
            "prefix": self.prefix,
            "source": self.source,
        }


DEFAULT_CALIBRATION = Calibration(factor=1.25, per_message=40.0)
"""The offline default with ``count_tokens``: fitted on the requests of the shared Claude
Code samples (code, JSON and prose); recorded prompts grew 1.3x the counted text plus about
40 tokens a message, 1.4-1.7x four characters a token overall."""


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """A run's input tokens by how they were billed."""

    input: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def to_dict(self) -> dict[str, int]:
        """``{"input": n, "cache_read": n, "cache_write": n}``."""
        return {"input": self.input, "cache_read": self.cache_read, "cache_write": self.cache_write}


@dataclass(frozen=True)
class RunBill:
    """One run's recorded bill beside the ledger's modelled one (no clearing).

    Costs are in plain-input-token equivalents at ``cache`` prices (the recorded cost
    prices 5-minute and 1-hour writes each at its own price).

    Attributes:
        name: the run's label.
        requests: model calls compared (recorded and modelled matched one to one).
        recorded: the recorded usage, added up.
        modelled: the modelled usage, with the run's own calibration.
        recorded_cost: what the record cost.
        modelled_cost: what the model costs.
        offline_cost: what the model costs with :data:`DEFAULT_CALIBRATION` (the prefix
            still taken from the first request): how far a run without usage would be off.
        cache: the cache preset the run is priced with (``anthropic`` or ``anthropic-1h``).
        calibration: the run's fitted calibration.
        breaks: the recorded cache breaks, classified.
        break_cost: what the unexplained breaks cost the record over a warm cache (each
            shortfall written again instead of read): the part of a gap between the two
            bills the model leaves out (the other breaks are in the model).
        commands: per break, the local commands run just before it (``/mcp`` reconnects
            servers and so changes the tool definitions in the prefix).
        unmatched: model calls on one side without a counterpart on the other.
    """

    name: str
    requests: int
    recorded: UsageTotals
    modelled: UsageTotals
    recorded_cost: float
    modelled_cost: float
    offline_cost: float
    cache: str
    calibration: Calibration
    breaks: tuple[CacheBreak, ...] = ()
    break_cost: float = 0.0
    commands: tuple[tuple[str, ...], ...] = ()
    unmatched: int = 0

    @property
    def ratio(self) -> float:
        """Modelled cost over recorded cost (1.0 for an empty record)."""
        return self.modelled_cost / self.recorded_cost if self.recorded_cost else 1.0

    @property
    def explained_ratio(self) -> float:
        """Modelled cost with the unexplained breaks' cost added, over recorded cost."""
        if not self.recorded_cost:
            return 1.0
        return (self.modelled_cost + self.break_cost) / self.recorded_cost

    @property
    def offline_ratio(self) -> float:
        """The same with the offline default calibration."""
        return self.offline_cost / self.recorded_cost if self.recorded_cost else 1.0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (``recorded_usage``, ``modelled_usage``, costs, breaks)."""
        return {
            "name": self.name,
            "requests": self.requests,
            "unmatched": self.unmatched,
            "cache": self.cache,
            "recorded_usage": self.recorded.to_dict(),
            "modelled_usage": self.modelled.to_dict(),
            "recorded_cost": round(self.recorded_cost),
            "modelled_cost": round(self.modelled_cost),
            "offline_cost": round(self.offline_cost),
            "ratio": round(self.ratio, 4),
            "offline_ratio": round(self.offline_ratio, 4),
            "break_cost": round(self.break_cost),
            "explained_ratio": round(self.explained_ratio, 4),
            "calibration": self.calibration.to_dict(),
            "breaks": [
                {k: v for k, v in b.as_dict().items() if k not in ("event", "session", "at_ns")}
                | {"commands": list(c)}
                for b, c in zip(self.breaks, self.commands, strict=True)
            ],
        }


def bill_run(
    messages: Sequence[Any],
    requests: Sequence[RecordedRequest],
    *,
    restarts: Sequence[int] = (),
    format: str | None = None,
    counter: TokenCounter = count_tokens,
    name: str = "",
) -> RunBill:
    """Compare a run's recorded usage with the ledger's model of it without clearing.

    ``restarts`` are the messages where the model's context restarted after a compaction
    (:attr:`~slimtools.transcripts.Transcript.restarts`)."""
    replay = RunReplay(format or detect_format(messages), counter=counter)
    return bill_of(requests, replay.add_all(messages).finish(), restarts=restarts, name=name)


def bill_of(
    requests: Sequence[RecordedRequest],
    replayed: RunFigures,
    *,
    restarts: Sequence[int] = (),
    name: str = "",
) -> RunBill:
    """The bill from a replay of the run without clearing (its per-call prompts:
    :attr:`~slimtools.ledger.stream.RunFigures.call_starts` and the no-clearing ledger's
    ``input_tokens``), against ``requests`` matched in order.

    ``restarts`` are the messages where the model's context restarted after a compaction:
    a call after one is billed for the summary and what follows, not the history before.
    """
    offsets, starts = replayed.offsets, replayed.call_starts
    marks = [(m, offsets[m]) for m in restarts if m < len(offsets)]
    n = min(len(starts), len(requests))
    counted, begun = visible_prompts(
        replayed.ledgers[NO_CLEARING].input_tokens[:n], starts[:n], marks
    )
    # Claude Code logs some replies it made itself (model "<synthetic>": an API error, an
    # interruption) with zero usage: no request was billed, so neither side counts them.
    kept = [k for k in range(n) if requests[k].prompt and requests[k].model != "<synthetic>"]
    record = [requests[k] for k in kept]
    counts, begins = [counted[k] for k in kept], [begun[k] for k in kept]
    fitted = fit(counts, begins, record)
    hour = sum(r.write_1h for r in record) > sum(r.write_5m for r in record)
    pricing = _ONE_HOUR if hour else _FIVE_MINUTES
    causes = ["unexplained", *(_cause(record, k) for k in range(1, len(record)))]
    modelled = _modelled(counts, begins, record, causes, fitted)
    default = _with_prefix(DEFAULT_CALIBRATION, counts, begins, record)
    offline = _modelled(counts, begins, record, causes, default)
    breaks = tuple(_breaks(record, causes))
    unmodelled = sum(b.shortfall for b in breaks if b.cause == "unexplained")
    return RunBill(
        name=name,
        requests=len(record),
        recorded=UsageTotals(
            sum(r.input for r in record),
            sum(r.cache_read for r in record),
            sum(r.cache_write for r in record),
        ),
        modelled=modelled,
        recorded_cost=sum(_recorded_cost(r) for r in record),
        modelled_cost=_cost(modelled, pricing),
        offline_cost=_cost(offline, pricing),
        cache=pricing.name,
        calibration=fitted,
        breaks=breaks,
        break_cost=unmodelled * (pricing.write - pricing.read),
        commands=tuple(record[b.request - 1].commands for b in breaks),
        unmatched=abs(len(starts) - len(requests)),
    )


def visible_prompts(
    counted: Sequence[int], starts: Sequence[int], restarts: Sequence[tuple[int, int]]
) -> tuple[list[int], list[int]]:
    """Each call's counted tokens and messages as the model saw them: from the latest
    restart at or before its turn (a compaction's summary), else from the first message."""
    marks = sorted(restarts)
    seen_counted, seen_starts = [], []
    at, base = 0, (0, 0)
    for c, s in zip(counted, starts, strict=True):
        while at < len(marks) and marks[at][0] <= s:
            base, at = marks[at], at + 1
        seen_counted.append(c - base[1])
        seen_starts.append(s - base[0])
    return seen_counted, seen_starts


def fit(counted: list[int], messages: list[int], record: list[RecordedRequest]) -> Calibration:
    """The run's calibration: least squares over the growth of consecutive requests.

    Requests after a compaction, a local command or a model change are left out (their
    growth is not the text added). With fewer than three usable steps, or steps that do not
    tell the two apart, only the factor is fitted, with the default's framing (or none, when
    the default's would exceed the growth); with no usable step, the default.
    """
    steps = [
        (counted[k] - counted[k - 1], messages[k] - messages[k - 1], p - record[k - 1].prompt)
        for k, p in ((k, record[k].prompt) for k in range(1, len(record)))
        if not (record[k].compacted or record[k].commands or _model_changed(record, k))
        and counted[k] > counted[k - 1]
    ]
    factor, per_message = DEFAULT_CALIBRATION.factor, DEFAULT_CALIBRATION.per_message
    source: Literal["recorded", "default"] = "default"
    if len(steps) >= 3:
        solved = _least_squares(steps)
        if solved is not None:
            (factor, per_message), source = solved, "recorded"
    for framing in (per_message, 0.0) if source == "default" and steps else ():
        dc = sum(s[0] for s in steps)
        rest = sum(s[2] - framing * s[1] for s in steps)
        if dc > 0 and rest > 0:  # the default framing, else none if that leaves nothing
            factor, per_message, source = rest / dc, framing, "recorded"
            break
    return _with_prefix(Calibration(factor, per_message, 0, source), counted, messages, record)


def _least_squares(steps: list[tuple[int, int, int]]) -> tuple[float, float] | None:
    """``(factor, per_message)`` minimising the squared error with ``per_message >= 0``;
    None when no positive factor fits."""
    sxx = sum(c * c for c, _, _ in steps)
    sxm = sum(c * m for c, m, _ in steps)
    smm = sum(m * m for _, m, _ in steps)
    sxr = sum(c * r for c, _, r in steps)
    smr = sum(m * r for _, m, r in steps)
    det = sxx * smm - sxm * sxm
    if det <= 1e-9 * max(1, sxx * smm):
        return None
    factor = (sxr * smm - smr * sxm) / det
    per_message = (smr * sxx - sxr * sxm) / det
    if per_message < 0:  # the best fit with no framing (the constrained optimum's edge)
        factor, per_message = sxr / sxx, 0.0
    return (factor, per_message) if factor > 0 else None


def _with_prefix(
    calibration: Calibration,
    counted: list[int],
    messages: Sequence[int],
    record: list[RecordedRequest],
) -> Calibration:
    """``calibration`` with the prefix the first request's prompt leaves for it."""
    if not record:
        return calibration
    first = calibration.tokens(counted[0], messages[0])
    prefix = max(0, round(record[0].prompt - first))
    return Calibration(calibration.factor, calibration.per_message, prefix, calibration.source)


def _modelled(
    counted: list[int],
    messages: Sequence[int],
    record: list[RecordedRequest],
    causes: Sequence[str],
    calibration: Calibration,
) -> UsageTotals:
    """The run's usage as the ledger models it: every call reads the previous prompt whole
    (no clearing, a warm cache), except where the transcript shows the cache did not hold
    (the first call, a compaction, a model change, an expired cache, a changed prefix, a
    task's notification: ``causes``), where it reads what the record read. A compaction
    starts the prompt again: the first call after it bounds what Claude Code put before the
    summary (its prefix, and context it adds back: hook output, files read again), as the
    first call bounds the session's prefix."""
    read = write = 0
    previous, prefix = 0, calibration.prefix
    for k, (c, m) in enumerate(zip(counted, messages, strict=True)):
        if k and record[k].compacted:
            prefix = max(0, round(record[k].prompt - calibration.tokens(c, m)))
        prompt = round(prefix + calibration.tokens(c, m))
        held = record[k].cache_read if k == 0 or causes[k] != "unexplained" else previous
        got = min(held, prompt)
        read, write, previous = read + got, write + prompt - got, prompt
    return UsageTotals(0, read, write)


def _cost(usage: UsageTotals, pricing: CachePricing) -> float:
    return usage.input + pricing.cost(usage.cache_read, usage.cache_write)


def _recorded_cost(r: RecordedRequest) -> float:
    five, hour = _FIVE_MINUTES, _ONE_HOUR
    return r.input + r.cache_read * five.read + r.write_5m * five.write + r.write_1h * hour.write


def _model_changed(record: Sequence[RecordedRequest], k: int) -> bool:
    a, b = record[k - 1].model, record[k].model
    return bool(a and b and a != b)


def _cause(record: Sequence[RecordedRequest], k: int) -> str:
    """Why the transcript says the cache could not hold before request ``k``
    (``"unexplained"``: it shows no reason). A local command of :data:`PREFIX_COMMANDS` run
    between the calls changed the prefix; ``/model`` shows as a model change; a background
    task's notification started the turn. Clearing is never seen in a record: a recorder
    logs what the agent appended, not what it sent."""
    prior, now = record[k - 1], record[k]
    return cause_of(
        compacted=now.compacted,
        model_changed=_model_changed(record, k),
        gap_seconds=_gap(prior, now),
        ttl_seconds=TTL_1H if prior.write_1h else TTL_5M,
        prefix_changed=any(c in PREFIX_COMMANDS for c in now.commands),
        task_notification=now.notified,
    )


def _gap(prior: RecordedRequest, now: RecordedRequest) -> float | None:
    end = prior.ended or prior.at
    return (now.at - end).total_seconds() if now.at and end else None


def _breaks(record: Sequence[RecordedRequest], causes: Sequence[str]) -> list[CacheBreak]:
    """The record's cache breaks, each with its cause."""
    found = []
    for k in range(1, len(record)):
        prior, now = record[k - 1], record[k]
        if is_break(prior.prompt, now.cache_read):
            at_ns = int(now.at.timestamp() * 1e9) if now.at else 0
            short = prior.prompt - now.cache_read
            gap = _gap(prior, now)
            found.append(
                CacheBreak(
                    None,
                    k + 1,
                    prior.prompt,
                    now.cache_read,
                    short,
                    causes[k],
                    gap,
                    now.model,
                    at_ns,
                )
            )
    return found
