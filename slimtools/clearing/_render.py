"""What each cleared result becomes under one policy: its placeholder and what it saves.

The engine decides *which* results to clear; :class:`Placeholders` says *what* they become,
in every mode (the ledger's replay is the engine's own, :mod:`slimtools.clearing.replay`), so
one rule makes every placeholder. Per-tool answers from the policy (repeatable or not, the
cost of a call with blank arguments) are asked once and kept.
"""

from __future__ import annotations

import logging

from slimtools.clearing._batch import Pending
from slimtools.clearing._ingest import SeenCall
from slimtools.clearing.excerpt import envelope_handles, flatten_head, render_args
from slimtools.clearing.formats.base import new_tuple
from slimtools.clearing.marker import seal
from slimtools.clearing.placeholder import (
    DEFAULT_TEMPLATE,
    MAX_PLACEHOLDER_CHARS,
    PlaceholderInfo,
    constant_placeholder,
    default_body,
    render,
)
from slimtools.clearing.policy import ClearingPolicy
from slimtools.tokens import count_tokens

logger = logging.getLogger("slimtools.clearing")


class Placeholders:
    """The placeholders of one policy, with what the policy says per tool cached."""

    def __init__(self, policy: ClearingPolicy) -> None:
        self.policy = policy
        self._needs = policy.placeholder_needs
        self._constant = constant_placeholder(policy.placeholder, MAX_PLACEHOLDER_CHARS)
        self._constant_tokens = policy.token_counter(self._constant or "")
        placeholder = policy.placeholder
        self._default = isinstance(placeholder, str) and placeholder == DEFAULT_TEMPLATE
        self._ascii_count = policy.token_counter is count_tokens
        self._repeat: dict[str, bool | None] = {}  # tool -> policy.repeatable_of(tool)
        self._blank_args: dict[str, int] = {}  # tool -> tokens of its call with "{}" arguments
        self._rewrites: dict[str, bool] = {}  # tool -> whether its arguments are blanked

    def sized(self, pending: Pending) -> tuple[str, int] | None:
        """The placeholder of ``pending`` and its tokens; None when the result must stay."""
        if self._constant is not None:
            return self._constant, self._constant_tokens
        text = self._default_text(pending) if self._default else self.text(pending)
        if text is None:
            return None
        if self._ascii_count and text.isascii():  # count_tokens, inlined (a test pins it)
            return text, (len(text) + 3) // 4
        return text, self.policy.token_counter(text)

    def _default_text(self, pending: Pending) -> str:
        """:meth:`text` under the default template, which shows every field: the placeholder
        without asking which fields it needs, through the template's fast path."""
        policy, raw, tool = self.policy, pending.raw, pending.tool
        args, text = pending.call.args, raw.text
        repeat = self._repeat
        body = default_body(
            tool, render_args(args), args, len(text), pending.tokens, raw.is_error, raw.media,
            flatten_head(text, policy.keep_head),
            envelope_handles(text, policy.handle_key(tool)) if text[:1] in "{ \n" else (),
            repeat[tool] if tool in repeat else self.repeatable(tool), policy.refetch_tool,
        )  # fmt: skip
        return seal(body, MAX_PLACEHOLDER_CHARS)

    def text(self, pending: Pending) -> str | None:
        """The placeholder of one result (None when a user template fails: keep it)."""
        if self._constant is not None:
            return self._constant
        if self._default:
            return self._default_text(pending)
        policy, raw, needs = self.policy, pending.raw, self._needs
        args = pending.call.args
        text = raw.text
        args_text = render_args(args) if "args" in needs else ""
        head = flatten_head(text, policy.keep_head) if "head" in needs else ""
        handles = (
            envelope_handles(text, policy.handle_key(pending.tool))
            if "handles" in needs and text[:1] in "{ \n"
            else ()
        )
        tool = pending.tool
        repeat = self._repeat
        repeatable = repeat[tool] if tool in repeat else self.repeatable(tool)
        info: PlaceholderInfo = new_tuple(
            PlaceholderInfo,
            (
                tool, args, args_text, len(text), pending.tokens, head, handles, raw.call_id,
                pending.turn, raw.is_error, policy.refetch_tool, repeatable, raw.media,
            ),
        )  # fmt: skip
        try:
            return render(info, policy.placeholder, MAX_PLACEHOLDER_CHARS)
        except Exception:  # a user template or callable failed: keep the result
            logger.warning("placeholder for %s failed; result kept", raw.call_id, exc_info=True)
            return None

    def superseded(self, pending: Pending, turn: int, reason: str) -> str:
        """The placeholder of a result a newer one superseded: it names the newer result."""
        args, chars, tokens = render_args(pending.call.args), len(pending.raw.text), pending.tokens
        body = (
            f"{pending.tool}({args}) returned {chars:,} chars (~{tokens:,} tokens); superseded "
            f"by the result of turn {turn} ({reason}), which is further down in full; "
            "removed to save context."
        )
        return seal(body, MAX_PLACEHOLDER_CHARS)

    def repeatable(self, tool: str) -> bool | None:
        """The policy's word on repeating ``tool``, asked once per tool."""
        known = self._repeat
        if tool not in known:
            known[tool] = self.policy.repeatable_of(tool)
        return known[tool]

    def may_rewrite(self, tool: str) -> bool:
        """Whether clearing blanks the arguments of ``tool``'s calls, asked of the policy
        once per tool."""
        rewrites = self._rewrites
        if tool not in rewrites:
            rewrites[tool] = self.policy.clears_inputs_of(tool)
        return rewrites[tool]

    def input_saving(self, tool: str, call: SeenCall) -> int:
        """Tokens blanking ``call``'s arguments saves (0: they stay)."""
        if not call.args or not self.may_rewrite(tool):
            return 0
        name = call.name  # its billed text against ``name {}``
        blank = self._blank_args.get(name)
        if blank is None:
            blank = self._blank_args[name] = self.policy.token_counter(f"{name} {{}}")
        return max(0, call.args_tokens - blank)
