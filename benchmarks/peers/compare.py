"""Compare clearing strategies on recorded runs: per source, in one run, against no clearing.

A :class:`Strategy` turns a recorded history into what to replay and how to clear it before
each model call: a slimtools :class:`~slimtools.clearing.ClearingPolicy`, or a peer's per-call
step (:mod:`benchmarks.peers`). :func:`compare` replays every run under every strategy and
adds the figures up per group (the recorder, by default), including how many single runs
cost more than no clearing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchmarks.peers.ledger import ClearFn, measure_steps
from slimtools.clearing import ClearingPolicy
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.ledger import LedgerSummary, TokenLedger
from slimtools.ledger.analyze import Totals

Prepared = tuple[Sequence[Any], "ClearFn | ClearingPolicy | None"]
"""What to replay, and the clearing before each call (a step, a policy, or none)."""


class Run(Protocol):
    """A recorded run as :func:`compare` reads it (``slimtools.transcripts.Transcript``)."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def messages(self) -> list[Any]: ...


@dataclass(frozen=True)
class Strategy:
    """A named way to clear, ready to replay on any recorded history.

    Attributes:
        label: the name reports show.
        prepare: ``(history, format) -> (history to replay, clearing)``, the clearing being a
            per-call step, a ``ClearingPolicy`` or None (no clearing).
    """

    label: str
    prepare: Callable[[Sequence[Any], str], Prepared]

    @classmethod
    def policy(cls, label: str, policy: ClearingPolicy | None) -> Strategy:
        """Replay the history as it is, cleared by slimtools under ``policy`` (None: none)."""
        return cls(label, lambda history, fmt: (history, policy))

    @classmethod
    def step(cls, label: str, make: Callable[[], ClearFn]) -> Strategy:
        """Replay the history as it is, cleared by a fresh per-call step from ``make``."""
        return cls(label, lambda history, fmt: (history, make()))


def slimtools_strategies(cache: CachePricing | str | None = DEFAULT_PRICING) -> list[Strategy]:
    """Slimtools' two ways: turn-end clearing and the cache-aware default."""
    return [
        Strategy.policy("slimtools turn-end (cache=None)", ClearingPolicy(cache=None)),
        Strategy.policy("slimtools default", ClearingPolicy(cache=cache)),
    ]


def peer_strategies() -> list[Strategy]:
    """Other agents' clearing with their published defaults, where their library is installed.

    LangChain's ``ClearToolUsesEdit`` runs through LangChain (or, without it, the documented
    emulation); the Agents SDK's ``ToolOutputTrimmer`` only where ``openai-agents`` is.
    """
    from benchmarks import peers

    out = [
        Strategy("langchain ClearToolUsesEdit (defaults)", _langchain_step(None)),
        Strategy(
            "langchain ClearToolUsesEdit (30k, keep 3, >=5k)",
            _langchain_step({"trigger": 30_000, "keep": 3, "clear_at_least": 5_000}),
        ),
        Strategy.step("swe-agent last 5 observations", lambda: peers.last_n_observations_step(5)),
        Strategy.step("complexity trap (10-turn window)", peers.observation_masking_step),
    ]
    if importlib.util.find_spec("agents") is not None:
        out.append(Strategy.step("agents sdk ToolOutputTrimmer", peers.tool_output_trimmer_step))
    return out


def published_strategies(cache: CachePricing | str | None = DEFAULT_PRICING) -> list[Strategy]:
    """No clearing, the peers and slimtools' ways: the comparison the README reports."""
    return [Strategy.policy("no clearing", None), *peer_strategies(), *slimtools_strategies(cache)]


def _langchain_step(settings: dict[str, int] | None) -> Callable[[Sequence[Any], str], Prepared]:
    # ``settings``: trigger, keep and clear_at_least, as ClearToolUsesEdit takes them.
    """LangChain's edit with ``settings`` (None: its defaults), replayed per call."""

    def prepare(history: Sequence[Any], fmt: str) -> Prepared:
        from benchmarks import peers

        if settings is None:
            return peers.langchain_defaults_step(history)
        if not peers.has_langchain():
            policy = ClearingPolicy.from_anthropic(
                {
                    "trigger": {"type": "input_tokens", "value": settings["trigger"]},
                    "keep": {"type": "tool_uses", "value": settings["keep"]},
                    "clear_at_least": {"type": "input_tokens", "value": settings["clear_at_least"]},
                },
                placeholder="[cleared]",
            )
            return list(history), policy
        from langchain.agents.middleware.context_editing import ClearToolUsesEdit

        edit = ClearToolUsesEdit(
            trigger=settings["trigger"],
            keep=settings["keep"],
            clear_at_least=settings["clear_at_least"],
        )
        return peers.to_langchain_messages(history, fmt), peers.context_editing_step(
            edit, deep_copy=False
        )

    return prepare


@dataclass
class Comparison:
    """Per group, per strategy label, the :class:`Totals`; ``"ALL"`` adds every group up.

    Ratios (``Totals.cost_ratio``, ``Totals.resident_ratio``) are against no clearing of the
    same replayed histories.
    """

    cache: CachePricing | None
    groups: dict[str, dict[str, Totals]] = field(default_factory=dict)

    def table(self, group: str) -> str:
        """A readable table of one group, ratios against no clearing."""
        rows = self.groups[group]
        first = next(iter(rows.values()))
        lines = [
            f"{group}: {first.runs} runs, {first.rounds:,} model calls "
            f"(avg {first.rounds / max(1, first.runs):.1f}), cache {_cache_name(self.cache)}",
            f"{'strategy':<48} {'resident end':>14} {'peak':>10} {'billed':>12} "
            f"{'cached cost':>16} {'breaks':>7} {'worse':>9}",
        ]
        for label, t in rows.items():
            lines.append(
                f"{label:<48} {t.resident_end:>8,} {t.resident_ratio:>5.2f}x "
                f"{t.resident_peak:>10,} {t.billed:>12,} {round(t.cached):>10,} "
                f"{t.cost_ratio:>5.2f}x {t.breaks:>7,} {t.worse:>4}/{t.runs}"
            )
        return "\n".join(lines)


def _cache_name(cache: CachePricing | None) -> str:
    if cache is None:
        return "none (every token at the input price)"
    return f"{cache.name} (read {cache.read:g}x, write {cache.write:g}x)"


def compare(
    runs: Iterable[Run],
    strategies: Sequence[Strategy],
    *,
    cache: CachePricing | str | None = DEFAULT_PRICING,
    group: Callable[[Run], str] = lambda run: run.source,
) -> Comparison:
    """Replay every run under every strategy; add the figures up per group and in ``"ALL"``.

    Every strategy is judged against no clearing of the history it replays (the run's own, or
    its conversion for peers that need one), so ratios and ``worse`` compare like with like.
    """
    pricing = pricing_of(cache)
    result = Comparison(pricing)
    for run in runs:
        rows = [(s.label, *_replay(s, run, pricing)) for s in strategies]
        for key in (group(run), "ALL"):
            totals = result.groups.setdefault(key, {})
            for label, summary, baseline in rows:
                totals.setdefault(label, Totals(pricing=pricing)).add(summary, baseline)
    return result


def _replay(
    strategy: Strategy, run: Run, pricing: CachePricing | None
) -> tuple[LedgerSummary, LedgerSummary]:
    """The strategy's summary, and no clearing's on the same replayed history.

    A peer that replays a converted history (LangChain messages) is judged against no
    clearing of that same history: conversion moves a bill by a fraction of a percent.
    """
    history, how = strategy.prepare(run.messages, run.format)
    fmt = run.format if history is run.messages else None
    plain = TokenLedger.measure(history, format=fmt, cache=pricing).summary
    if how is None:
        return plain, plain
    if isinstance(how, ClearingPolicy):
        return TokenLedger.measure(history, how, format=fmt, cache=pricing).summary, plain
    return measure_steps(history, how, cache=pricing).summary, plain
