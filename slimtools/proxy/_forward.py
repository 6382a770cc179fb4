"""A forwarded tool: the call to a tool we did not write, shaped and slimmed by its options.

One rule set for every surface that slims foreign tools (the MCP proxy, ``slimtools.wrap``):
each surface turns its framework's result into a :class:`Raw` and back; everything in
between is here. Errors and non-text results pass through untouched as a ``ToolResult``;
an unconfigured tool passes through while it fits the budget and becomes an envelope when
it does not; a configured tool always goes through its decorators, denied paths removed
first, so that nothing downstream (briefs, pages, snapshots, handles) ever holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.proxy._payload import extract, guard, raw_tokens, reshape_oversized
from slimtools.proxy.config import ToolOptions
from slimtools.tokens import count_tokens
from slimtools.toolkit import ToolResult
from slimtools.typing import TokenCounter

UNCONFIGURED_LIMIT = 100
"""Records (or lines) per page of an unconfigured tool's oversized result, before the budget."""

ADDED = ("page", "limit")
"""The parameters paging adds; a backend that has either one pages itself."""


@dataclass(frozen=True)
class Raw:
    """A foreign tool's result in neutral form."""

    texts: list[str]
    structured: Any = None
    is_error: bool = False
    opaque: bool = False
    """True when it holds more than text (an image, audio, a resource): it passes through."""
    native: Any = None
    """The result in its framework's own form, sent as it is when passed through."""


@dataclass(frozen=True)
class Plan:
    """How the results of one forwarded tool are treated."""

    options: ToolOptions | None
    budget: int | None
    counter: TokenCounter = count_tokens
    passthrough: Callable[[Raw], Any] = field(default=lambda raw: raw.native)
    """Makes the native form sent for a passed-through result (e.g. fit to a schema)."""

    @property
    def slims(self) -> bool:
        """False for a tool that is forwarded untouched (unconfigured, no budget)."""
        return self.options is not None or self.budget is not None

    def shape(self, raw: Raw) -> Any:
        """What the forwarder returns: a pass-through ``ToolResult`` or data to slim."""
        if raw.is_error or raw.opaque or not self.slims:
            return self._untouched(raw)
        if self.options is None:
            assert self.budget is not None
            if raw_tokens(raw.texts, raw.structured, self.counter) <= self.budget:
                return self._untouched(raw)
            return reshape_oversized(extract(raw.texts, raw.structured), self.budget, self.counter)
        options = self.options
        if options.guards:  # what cannot be projected is withheld (slimtools._core.readable)
            return guard(
                raw.texts, raw.structured, options.deny_tree, on_unreadable=options.on_unreadable
            )
        return extract(raw.texts, raw.structured)

    def _untouched(self, raw: Raw) -> ToolResult:
        return ToolResult("\n".join(raw.texts), is_error=raw.is_error, value=self.passthrough(raw))


def can_page(schema: Mapping[str, Any] | None) -> bool:
    """True when the backend's schema leaves ``page`` and ``limit`` free for paging."""
    props = (schema or {}).get("properties") or {}
    return not any(name in props for name in ADDED)


def slim(fn: Any, plan: Plan, *, name: str, paged: bool = True) -> Any:
    """``fn`` decorated as ``plan`` says (or ``fn`` itself when the tool is not slimmed).

    Args:
        fn: the forwarder, taking ``**arguments``.
        plan: the tool's options and budget.
        name: the tool's name (names the allowlist model).
        paged: False when the backend has its own ``page``/``limit``: results are then
            summarised (head, tail, handles) instead of paged.
    """
    options, budget = plan.options, plan.budget
    if not plan.slims:
        return fn
    counter = plan.counter
    if options is None:
        if paged:
            fn = paginate(
                limit=UNCONFIGURED_LIMIT,
                max_limit=10 * UNCONFIGURED_LIMIT,
                max_tokens=budget,
                token_counter=counter,
            )(fn)
        return summarize_with_handle(max_tokens=budget, token_counter=counter)(fn)
    budget = options.max_tokens or budget
    allowlist = options.brief_model(_model_name(name))
    if allowlist is not None:
        fn = project_fields(allowlist)(fn)
    summarized = options.head is not None or options.tail > 0 or not paged
    if not summarized:
        fn = paginate(
            limit=options.limit,
            max_limit=options.max_limit,
            max_tokens=budget,
            token_counter=counter,
            items=options.items,
        )(fn)
    return summarize_with_handle(
        key=options.key,
        head=options.head or 20,
        tail=options.tail,
        max_tokens=budget,
        token_counter=counter,
        items=options.items if summarized else None,
    )(fn)


def _model_name(tool: str) -> str:
    return "".join(part.capitalize() for part in tool.replace("-", "_").split("_")) + "Brief"
