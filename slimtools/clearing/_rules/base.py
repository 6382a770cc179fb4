"""The seam every clearing rule fills (see the package docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

if TYPE_CHECKING:
    from slimtools.clearing._batch import Pending

Proposal: TypeAlias = "tuple[Pending, int, str | None]"
"""``(result, due turn, reason)``: a plain tuple, as one is made per result filed."""


class Rule(Protocol):
    """A reason to clear: told of each clearable result as it is filed."""

    def propose(self, result: Pending, due: int) -> Sequence[Proposal]:
        """What filing ``result`` (due by its age at turn ``due``) makes clearable."""
        ...
