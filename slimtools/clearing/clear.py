"""One-shot clearing: the functions most users call.

Both are a fresh :class:`~slimtools.clearing.Clearer`'s first (and only) call, so one-shot
and incremental clearing share a single implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from slimtools.clearing._engine import Clearer
from slimtools.clearing.audit import Audit
from slimtools.clearing.policy import ClearingPolicy
from slimtools.clearing.report import ClearingReport


def clear_stale_results(
    history: Sequence[Any],
    policy: ClearingPolicy | None = None,
    *,
    format: str | None = None,
    audit: Audit | None = None,
) -> list[Any]:
    """Replace stale tool results in ``history`` by informative placeholders.

    Args:
        history: the messages (LangChain, OpenAI Chat, OpenAI Responses or Anthropic).
        policy: what to clear and when; defaults to :class:`ClearingPolicy` ().
        format: the history format; detected when None.
        audit: a sink receiving each original before it is replaced.

    Returns:
        A new list in the same format. The input list and its messages are not mutated;
        unchanged messages are shared, replaced ones are copies with the same ids.
    """
    return Clearer._single_use(policy, format=format, audit=audit).clear(history)


def clear_with_report(
    history: Sequence[Any],
    policy: ClearingPolicy | None = None,
    *,
    format: str | None = None,
    audit: Audit | None = None,
) -> tuple[list[Any], ClearingReport]:
    """:func:`clear_stale_results` and a :class:`ClearingReport` of what it cleared."""
    return Clearer._single_use(policy, format=format, audit=audit).clear_with_report(history)
