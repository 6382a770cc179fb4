"""What one clearing call did, in the shape of Anthropic's ``applied_edits``."""

from __future__ import annotations

from typing import Any, NamedTuple

from slimtools.clearing.anthropic_edit import ANTHROPIC_EDIT_TYPE


class ClearingReport(NamedTuple):
    """The edits one call applied (new ones only: earlier clears are not counted again).

    Immutable; a named tuple because one is built per call of a per-round clearer.

    Attributes:
        cleared_tool_uses: results replaced by placeholders in this call.
        cleared_input_tokens: tokens those replacements saved (original minus placeholder,
            plus blanked arguments).
        cleared_call_ids: the call ids of those results, in history order.
        cleared_inputs: how many of those calls also had their arguments blanked.
        first_changed: the index of the first message changed in this call (where the
            prompt cache breaks), None when nothing changed.
        tokens_before: billed tokens of the history as the model would see it before this
            call's clearing.
        tokens_after: the same after it.
    """

    cleared_tool_uses: int = 0
    cleared_input_tokens: int = 0
    cleared_call_ids: tuple[str, ...] = ()
    cleared_inputs: int = 0
    first_changed: int | None = None
    tokens_before: int = 0
    tokens_after: int = 0

    @property
    def changed(self) -> bool:
        """Whether the history changed (and so the prompt cache breaks at first_changed)."""
        return self.first_changed is not None

    def as_applied_edit(self) -> dict[str, Any]:
        """``{"type": "clear_tool_uses_20250919", "cleared_tool_uses": N,
        "cleared_input_tokens": T}``, as Anthropic reports it."""
        return {
            "type": ANTHROPIC_EDIT_TYPE,
            "cleared_tool_uses": self.cleared_tool_uses,
            "cleared_input_tokens": self.cleared_input_tokens,
        }
