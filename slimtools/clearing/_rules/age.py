"""The age rule: a result goes once its retention has passed (the policy's per-category or
per-tool turns, at least ``keep_turns``), with the ordinary placeholder."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from slimtools.clearing._batch import Pending
    from slimtools.clearing._rules.base import Proposal
    from slimtools.clearing.policy import ClearingPolicy


class Age:
    """Every result is due at its own turn plus its retention: the engine computes that
    turn (it decides which results count toward ``keep``), so the rule only passes it on."""

    __slots__ = ()

    def __init__(self, policy: ClearingPolicy) -> None:
        del policy  # the retention is the policy's ``turns_to_keep``, asked by the engine

    def propose(self, result: Pending, due: int) -> tuple[Proposal]:
        """The result itself, due at ``due``, for the ordinary placeholder."""
        return ((result, due, None),)
