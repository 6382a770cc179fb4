"""A forwarded tool: the call to a tool we did not write, shaped and slimmed by its options.

One rule set for every surface that slims foreign tools (the MCP proxy, ``slimtools.wrap``):
each surface turns its framework's result into a :class:`Raw` and back; everything in
between is here. Errors and non-text results pass through as a ``ToolResult``, every block
of a configured tool's screened by its ``deny`` and allowlist (``_screen``);
an unconfigured tool passes through while it fits the budget and becomes an envelope when
it does not; a configured tool always goes through its decorators, denied paths removed
first, so that nothing downstream (briefs, pages, snapshots, handles) ever holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slimtools.decorators import paginate, project_fields, summarize_with_handle
from slimtools.foreign._options import ToolOptions
from slimtools.foreign._payload import extract, guard, obvious_list, raw_tokens, reshape_oversized
from slimtools.foreign._screen import Screen
from slimtools.tokens import TokenCounter, count_tokens
from slimtools.toolkit import ToolResult

UNCONFIGURED_LIMIT = 2_000
"""Records (or lines) per page of an unconfigured tool's oversized result: so many that
the page budget (``PAGE_TOKENS``), not a count, sizes its pages."""

PAGE_TOKENS = 4_000
"""Tokens a page of an unconfigured tool's oversized result holds (at most the budget).

A few thousand: a 350,000-token diff reads in about 90 calls (not 521 pages of 678 tokens,
as 100 lines a page gave), while a page stays a fifth of the 20,000-token budget, so what
the model only skims costs little, and reading on never nears a client's refusal limit.
"""

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
    screened: bool = False
    """True when a :class:`Screen` changed the structured content (it may fit no schema)."""


@dataclass(frozen=True)
class Plan:
    """How the results of one forwarded tool are treated."""

    options: ToolOptions | None
    budget: int | None
    counter: TokenCounter = count_tokens
    passthrough: Callable[[Raw], Any] = field(default=lambda raw: raw.native)
    """Makes the native form sent for a passed-through result (e.g. fit to a schema)."""
    screen_native: Callable[[Any, Screen], Any] = field(default=lambda native, screen: native)
    """Applies a :class:`Screen` to every block of the native form (the framework's own)."""

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
        if options.guards:  # what cannot be projected is withheld (slimtools.projection._readable)
            data = guard(
                raw.texts,
                raw.structured,
                options.deny_tree,
                on_unreadable=options.on_unreadable,
                items=options.items,
                key=options.key,
                tables=not options.allowlisted,
            )
        else:
            data = extract(raw.texts, raw.structured)
        if options.items is None and isinstance(data, dict):
            key = obvious_list(data)
            if key is not None:  # the records of {"total_count": 3, "items": [...]}
                data = data[key]
        return data

    def screen(self, is_error: bool) -> Screen | None:
        """The gate a passed-through result crosses (None: an unconfigured tool's)."""
        options = self.options
        if options is None:
            return None
        found = Screen(
            options.deny_tree,
            allowlist=options.brief_model(),
            items=options.items,
            is_error=is_error,
            unreadable_text=options.on_unreadable == "text",
        )
        return found if found.active else None

    def _untouched(self, raw: Raw) -> ToolResult:
        screen = self.screen(raw.is_error)
        if screen is not None:
            screen = screen.knowing(raw.texts, raw.structured)
            structured = screen.data(raw.structured)
            raw = Raw(
                texts=[screen.text(t) for t in raw.texts],
                structured=structured,
                is_error=raw.is_error,
                opaque=raw.opaque,
                native=self.screen_native(raw.native, screen),
                screened=structured != raw.structured,
            )
        return ToolResult("\n".join(raw.texts), is_error=raw.is_error, value=self.passthrough(raw))


def items_warning(tool: str, options: ToolOptions | None, output_schema: Any) -> str | None:
    """A warning for a configured tool whose declared output holds several lists of records
    and no ``items =`` says which (a single list is found by itself at call time)."""
    if options is None or options.items is not None or not options.fields:
        return None
    props = (output_schema or {}).get("properties") or {}
    lists = sorted(k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "array")
    if len(lists) < 2:
        return None
    return (
        f"slimtools proxy: [tools.{tool}] has fields but no items, and its results hold "
        f'several lists ({", ".join(lists)}): set items = "{lists[0]}" (or another)'
    )


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
        page = min(budget, PAGE_TOKENS) if budget is not None else None
        if paged:
            fn = paginate(
                limit=UNCONFIGURED_LIMIT,
                max_limit=10 * UNCONFIGURED_LIMIT,
                max_tokens=page,
                token_counter=counter,
            )(fn)
        return summarize_with_handle(
            head=UNCONFIGURED_LIMIT, max_tokens=page, token_counter=counter
        )(fn)
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
