"""The clearing rules: each says why a result may go, and from which turn.

A rule is a seam. As the engine files each clearable result it asks every rule in force
(:func:`rules_for`) what the result changes, telling it the turn at which the result's age
makes it due; a rule answers with proposals ``(result, due, reason)``: a result (this one or
an earlier one), the turn from which it may go, and why. The engine does the rest alike for
every rule: the ``keep`` window, the trigger, ``clear_at_least``, the cache rule, the audit
and the writing.

- ``reason`` None: the ordinary placeholder, once ``due`` comes (the age rule).
- a reason: the result is stale now, made so by the newer result of turn ``due``; its
  placeholder names that turn and the reason, and it may go ahead of its age (inside
  ``keep_turns``/``keep``: the newer result is there in full). A result already due by its
  age keeps its age placeholder (so clearing call by call equals one pass), and a result
  goes once, whichever rule proposes it first.

A new rule is one module in this package with a class satisfying :class:`Rule` (made from
the policy, holding what it must remember of the run), and one row of :data:`RULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from slimtools.clearing._rules.age import Age
from slimtools.clearing._rules.base import Proposal, Rule
from slimtools.clearing._rules.superseded import Superseded

if TYPE_CHECKING:
    from slimtools.clearing.policy import ClearingPolicy

__all__ = ["RULES", "Proposal", "Rule", "RuleRow", "rules_for"]


class RuleRow(NamedTuple):
    """One rule of the table: its name, whether a policy has it, and how it is made."""

    name: str
    applies: Callable[[ClearingPolicy], bool]
    make: Callable[[ClearingPolicy], Rule]


RULES: tuple[RuleRow, ...] = (
    RuleRow("age", lambda policy: True, Age),
    RuleRow("superseded", lambda policy: policy.supersede, Superseded),
)
"""Every rule, in the order the engine asks them."""


def rules_for(policy: ClearingPolicy) -> list[Rule]:
    """Fresh rules for one pass under ``policy`` (a rule may remember the run)."""
    return [row.make(policy) for row in RULES if row.applies(policy)]
