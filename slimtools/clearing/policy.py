"""ClearingPolicy: which stale tool results to clear, when, and what to leave in their place.

*What* may be cleared: results older than their retention (per category: search results go
first, write confirmations late, task input never), outside the last ``keep_turns`` turns and
``keep`` tool uses, of tools not excluded. *Whether and how much* to clear now: by default
only what pays for itself under prompt caching (``cache=``, Anthropic's 5-minute prices
unless told otherwise); with ``cache=None`` everything clearable goes at every round end.
Anthropic's server-side ``clear_tool_uses_20250919`` settings map onto the same fields
(:meth:`ClearingPolicy.from_anthropic`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from slimtools.categories import REPEATABLE_CATEGORIES, infer_category, repeatable_by_name
from slimtools.clearing._checks import (
    check_categories,
    check_count,
    check_counter,
    frozen_map,
    is_turns,
    tool_names,
)
from slimtools.clearing.anthropic_edit import anthropic_fields
from slimtools.clearing.hints import tool_hints
from slimtools.clearing.placeholder import (
    DEFAULT_TEMPLATE,
    PlaceholderInfo,
    template_needs,
    validate_template,
)
from slimtools.clearing.pricing import DEFAULT_HORIZON, DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.clearing.shorten import DEFAULT_SHORTEN_CHARS, check_shortening, shorten_args
from slimtools.clearing.thinning import check_schedule, check_template
from slimtools.errors import ConfigurationError
from slimtools.instrumentation import Listener, check_listener
from slimtools.tokens import TokenCounter, count_tokens

DEFAULT_RETENTION: Mapping[str, int | None] = MappingProxyType(
    {"search": 2, "read": 3, "command": 3, "write": 20, "input": None}
)
"""Turns to keep per category: search/browse results go first (the model digests them at
once), reads and command output early (a read's handle survives), write confirmations late
(they record what changed), task input data never (None)."""


@dataclass(frozen=True)
class ClearingPolicy:
    """Which stale tool results to clear, when, and what placeholder replaces them.

    **Clearing and prompt caching.** Clearing rewrites history, so the provider's prompt
    cache serves the next request only up to the first rewritten message and writes the rest
    again. With ``cache`` set (the default: Anthropic's 5-minute prices, reads 0.1x and
    writes 1.25x of the input price) a clear is made only when it pays for itself. Clearing
    ``k`` tokens whose first change has ``S`` cached tokens after it costs
    ``(write - read) * (S - k)`` once (the cached tokens that stay but must be written
    again) and saves ``read * k`` on every later request; it pays within
    ``(write - read) * (S - k) / (read * k)`` requests. The policy counts on
    ``expected_calls`` minus the calls made when you pass the run's length, and otherwise on
    the run's age as the estimate of what is left (a run that has made ``t`` calls is
    expected to make ``t`` more), bounded by ``payback_horizon`` (18, measured on recorded
    runs); a run whose every tool so far is a command (a shell agent) is trusted for the
    whole ``payback_horizon`` from its first call (see
    :func:`~slimtools.clearing.pricing.calls_ahead`). Among the clears that pay
    within that many requests it makes the one with the largest net saving, or none. With
    the true length, every clear pays for itself, so a run never costs more than without
    clearing; with the estimate, each clear's expected saving is positive as long as the run
    is expected to make at least that many more calls. ``max_context_tokens`` overrides the
    economics: a history over it is cleared whatever the cache says. ``cache=None`` (no
    caching) clears everything clearable at every round end.

    Attributes:
        keep_turns: results of the last ``keep_turns`` turns are never touched.
        keep_head: characters of the original kept in the placeholder, whitespace flattened.
        keep: also keep the results of the last ``keep`` tool uses (Anthropic's ``keep``);
            a result is kept when either ``keep`` or ``keep_turns`` protects it.
        trigger_tokens: clear only when the history exceeds this many tokens.
        trigger_tool_uses: clear only when the history holds more tool uses than this.
        clear_at_least: clear nothing unless at least this many tokens can go at once, since
            clearing rewrites the history and breaks the prompt cache from that point.
        batch_turns: cache-aware batching: the cleared prefix moves only every
            ``batch_turns`` turns (1: at every round end).
        exclude_tools: tools whose results are never cleared and do not count toward keep.
        clear_tool_inputs: also blank the arguments of cleared calls (True, or a set of
            tool names), leaving valid JSON.
        shorten_write_inputs: shorten the long string arguments of cleared calls of write
            tools (category "write") to a head, their size and a note that the call was made
            and must not be repeated; the arguments keep their keys and value types. True:
            strings over 400 characters; an int: over that many (at least 100); False: off.
            Calls whose arguments ``clear_tool_inputs`` blanks are blanked instead.
        retention: turns to keep per category (None: never clear); at least ``keep_turns``.
        tool_retention: turns to keep per tool name; wins over ``retention``.
        categories: tool name -> category; names not listed are inferred when
            ``infer_categories`` (``search_logs`` -> search, ``read_file`` -> read, ...).
        infer_categories: whether to infer categories from tool names.
        handle_keys: tool name -> brief field carrying its handle (None: no handles);
            tools not listed use ``"id"``.
        placeholder: a ``str.format`` template (fields in ``placeholder.TEMPLATE_FIELDS``)
            or a callable from :class:`PlaceholderInfo` to text.
        max_placeholder_chars: upper bound on a placeholder's size.
        refetch_tool: the companion named in placeholders (``get_record``).
        token_counter: counts tokens for triggers, ``clear_at_least`` and reports; it must
            return an int (asked once about a probe text when the policy is made).
        repeatable: tools safe to call again (they only read): MCP tools annotated
            ``readOnlyHint``/``idempotentHint`` (:func:`repeatable_tools`), a toolkit's
            read-only tools (:meth:`for_toolkit`). Placeholders tell the model to call a tool
            again only when it is here or its category is ``search`` or ``read``; for any
            other they say that calling it again would repeat its effect.
        unrepeatable: tools whose placeholders never offer the call again (MCP tools
            annotated ``destructiveHint``); wins over ``repeatable`` and the category.
            :meth:`with_tool_hints` fills both from MCP tool definitions.
        cache: the prompt-cache prices that decide whether clearing pays: a
            :class:`~slimtools.clearing.pricing.CachePricing`, a preset name
            (``"anthropic"``, ``"anthropic-1h"``, ``"openai"``, ``"gemini"``, ``"none"``) or
            None for no caching; stored as a ``CachePricing`` or None.
        expected_calls: the model calls you expect the whole run to make, if you know;
            otherwise the run so far and ``payback_horizon`` are the estimate (see above).
        payback_horizon: without ``expected_calls``, the most requests a clear may take to
            pay for itself (None: as many as the run has made so far); what a run whose
            every tool is a command (category ``"command"``) counts on from its first call.
        max_context_tokens: clear regardless of trigger, ``clear_at_least`` and cache once
            the history exceeds this many tokens (what may be cleared still applies).
        thin: placeholders that thin with age, as ``(age_turns, head_chars)`` steps:
            ``[(0, 200), (10, 80), (30, 0)]`` keeps a 200-character head when a result falls
            due, 80 characters ten turns later, none after thirty (never more than
            ``keep_head``). Age counts from the turn a result falls due (its turn plus its
            retention). Only the ``Head:`` line shortens: the call, size, handles and the
            way back stay. Thinning rewrites history, so under a cache price it is weighed
            like a clear and made only when it pays or rides on a clear made anyway.
            None (the default): heads keep ``keep_head`` characters for life.
        supersede: clear a result ahead of its age once a newer one makes it stale: the same
            call again (same tool, same arguments; write tools aside), or a read of a path
            that a later call wrote and a later read re-read. The placeholder names the
            newer result ("superseded by the result of turn N"); it may go inside
            ``keep_turns``/``keep`` (the newer result is there in full), still under the
            trigger, ``clear_at_least`` and the cache rule. A result already due by its age
            when the newer one arrives keeps its age placeholder (so incremental clearing
            equals one pass). On by default: on the shared transcripts it is no dearer on
            any source (``bench_clearing`` (f)); False clears by age alone.
        on_event: hears a :class:`~slimtools.instrumentation.ClearingPass` for each call of
            a clearer under this policy (``slimtools.observe`` hears every policy's). It
            observes and changes nothing, so it takes no part in ``==`` and ``hash``: two
            policies that clear alike are equal whatever they report to.
    """

    keep_turns: int = 2
    keep_head: int = 200
    keep: int | None = None
    trigger_tokens: int | None = None
    trigger_tool_uses: int | None = None
    clear_at_least: int | None = None
    batch_turns: int = 1
    # Any set of names is accepted ({"create_issue"}); it is stored as a frozenset.
    exclude_tools: AbstractSet[str] = frozenset()
    clear_tool_inputs: bool | AbstractSet[str] = False
    shorten_write_inputs: bool | int = True
    retention: Mapping[str, int | None] = field(default_factory=lambda: dict(DEFAULT_RETENTION))
    tool_retention: Mapping[str, int | None] = field(default_factory=dict)
    categories: Mapping[str, str] = field(default_factory=dict)
    infer_categories: bool = True
    handle_keys: Mapping[str, str | None] = field(default_factory=dict)
    placeholder: str | Callable[[PlaceholderInfo], str] = DEFAULT_TEMPLATE
    max_placeholder_chars: int = 1000
    refetch_tool: str = "get_record"
    token_counter: TokenCounter = count_tokens
    repeatable: AbstractSet[str] = frozenset()
    unrepeatable: AbstractSet[str] = frozenset()
    cache: CachePricing | str | None = DEFAULT_PRICING
    expected_calls: int | None = None
    payback_horizon: int | None = DEFAULT_HORIZON
    max_context_tokens: int | None = None
    thin: Sequence[tuple[int, int]] | None = None
    supersede: bool = True
    on_event: Listener | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("keep_turns", "keep_head"):
            check_count(getattr(self, name), name, optional=False)
        for name in ("keep", "trigger_tokens", "trigger_tool_uses", "clear_at_least"):
            check_count(getattr(self, name), name, optional=True)
        check_count(self.expected_calls, "expected_calls", optional=True, minimum=1)
        check_count(self.payback_horizon, "payback_horizon", optional=True, minimum=1)
        check_count(self.max_context_tokens, "max_context_tokens", optional=True, minimum=1)
        check_count(self.batch_turns, "batch_turns", optional=False, minimum=1)
        check_count(self.max_placeholder_chars, "max_placeholder_chars", optional=False, minimum=80)
        set_ = object.__setattr__
        set_(self, "cache", pricing_of(self.cache))
        set_(self, "exclude_tools", tool_names(self.exclude_tools, "exclude_tools"))
        set_(self, "repeatable", tool_names(self.repeatable, "repeatable"))
        set_(self, "unrepeatable", tool_names(self.unrepeatable, "unrepeatable"))
        if not isinstance(self.clear_tool_inputs, bool):
            set_(self, "clear_tool_inputs", tool_names(self.clear_tool_inputs, "clear_tool_inputs"))
        set_(self, "retention", frozen_map(self.retention, "retention", values=is_turns))
        set_(
            self,
            "tool_retention",
            frozen_map(self.tool_retention, "tool_retention", values=is_turns),
        )
        set_(
            self,
            "categories",
            frozen_map(self.categories, "categories", values=lambda v: isinstance(v, str)),
        )
        set_(
            self,
            "handle_keys",
            frozen_map(
                self.handle_keys, "handle_keys", values=lambda v: v is None or isinstance(v, str)
            ),
        )
        validate_template(self.placeholder)
        schedule = check_schedule(self.thin)
        check_template(self.placeholder, schedule)
        set_(self, "thin", schedule)
        if self.token_counter is not count_tokens:
            check_counter(self.token_counter)
        if not isinstance(self.refetch_tool, str) or not self.refetch_tool:
            raise ConfigurationError("refetch_tool must be a non-empty tool name")
        check_shortening(self.shorten_write_inputs)
        if not isinstance(self.supersede, bool):
            raise ConfigurationError("supersede must be a bool")
        if not isinstance(self.infer_categories, bool):
            raise ConfigurationError("infer_categories must be a bool")
        check_categories(self.categories, self.retention)
        if self.on_event is not None:
            check_listener(self.on_event, "on_event")
        # Per-tool decisions are asked once per result; memoise them (the policy is frozen).
        set_(self, "_turns_cache", {})
        set_(self, "_needs", template_needs(self.placeholder))

    def __hash__(self) -> int:
        # The generated hash would fail on the mapping fields; hash them as item sets, so a
        # policy can key a cache like any other frozen value.
        return hash(
            tuple(
                frozenset(v.items()) if isinstance(v, Mapping) else v
                for v in (getattr(self, f.name) for f in dataclasses.fields(self) if f.compare)
            )
        )

    @property
    def pricing(self) -> CachePricing | None:
        """The cache prices in force (``cache`` resolved), or None for no caching."""
        return self.cache  # type: ignore[return-value]  # normalised in __post_init__

    @property
    def placeholder_needs(self) -> frozenset[str]:
        """The costly placeholder fields the template shows (see ``template_needs``)."""
        needs: frozenset[str] = self.__dict__["_needs"]
        return needs

    def category_of(self, tool: str) -> str | None:
        """The tool's category: declared in ``categories``, else inferred, else None."""
        category = self.categories.get(tool)
        if category is None and self.infer_categories:
            category = infer_category(tool)
        return category

    def turns_to_keep(self, tool: str) -> int | None:
        """How many turns a result of ``tool`` stays untouched; None: never cleared."""
        cache: dict[str, int | None] = self.__dict__["_turns_cache"]
        if tool not in cache:
            cache[tool] = self._turns_to_keep(tool)
        return cache[tool]

    def _turns_to_keep(self, tool: str) -> int | None:
        if tool in self.exclude_tools:
            return None
        if tool in self.tool_retention:
            turns = self.tool_retention[tool]
        else:
            category = self.category_of(tool)
            turns = self.keep_turns if category is None else self.retention.get(category, 0)
        return None if turns is None else max(turns, self.keep_turns)

    def repeatable_of(self, tool: str) -> bool | None:
        """Whether calling ``tool`` again is safe (True), repeats an effect (False) or is
        unknown (None): what a placeholder may tell the model."""
        if tool in self.unrepeatable:
            return False
        if tool in self.repeatable:
            return True
        declared = self.categories.get(tool)
        if declared is not None:
            return declared in REPEATABLE_CATEGORIES
        if not self.infer_categories:
            return None
        # Guessed from the name: only a name whose every action reads may repeat.
        return repeatable_by_name(tool)

    def with_tool_hints(self, tools: Iterable[Any]) -> ClearingPolicy:
        """A copy that also reads the MCP annotations of ``tools`` (``list_tools`` output).

        Read-only and idempotent tools become ``repeatable``, destructive ones
        ``unrepeatable``; names already in either set keep the caller's choice.
        """
        hints = tool_hints(tools)
        chosen = self.repeatable | self.unrepeatable
        return self.replace(
            repeatable=self.repeatable | (hints.repeatable - chosen),
            unrepeatable=self.unrepeatable | (hints.unrepeatable - chosen),
        )

    def clears_inputs_of(self, tool: str) -> bool:
        """Whether a cleared call of ``tool`` also has its arguments blanked."""
        if isinstance(self.clear_tool_inputs, bool):
            return self.clear_tool_inputs
        return tool in self.clear_tool_inputs

    @property
    def shorten_chars(self) -> int | None:
        """The length over which write calls' strings are shortened; None: never."""
        shorten = self.shorten_write_inputs
        if shorten is True:
            return DEFAULT_SHORTEN_CHARS
        return None if shorten is False else shorten

    @property
    def rewrites_inputs(self) -> bool:
        """Whether clearing may rewrite any call's arguments (blank or shorten them)."""
        return bool(self.clear_tool_inputs) or self.shorten_chars is not None

    def input_rewrite_of(self, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The arguments a cleared call of ``tool`` is left with: ``{}`` when blanked,
        shortened for write tools, None when they stay as they are."""
        if self.clears_inputs_of(tool):
            return {}
        limit = self.shorten_chars
        if limit is None or self.category_of(tool) != "write":
            return None
        return shorten_args(args, limit)

    def handle_key(self, tool: str) -> str | None:
        """The brief field carrying ``tool``'s handles (``"id"`` when nothing is declared)."""
        return self.handle_keys.get(tool, "id")

    def replace(self, **changes: Any) -> ClearingPolicy:
        """A copy with ``changes`` applied and validated again."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_anthropic(
        cls, edit: Mapping[str, Any] | None = None, **overrides: Any
    ) -> ClearingPolicy:
        """A policy with the semantics of Anthropic's ``clear_tool_uses_20250919`` edit.

        With no ``edit``: Anthropic's defaults, a trigger at 100,000 input tokens and the
        3 most recent tool uses kept. Turn windows, category retention and the cache
        economics are off (``cache=None``), as on the server, where ``clear_at_least`` is the
        only cache control. Supersession is off too (``supersede=False``): the server's edit
        clears by age alone, so a result stays until it falls out of the kept tool uses even
        when the same call was made again. ``overrides`` (e.g. ``placeholder=``,
        ``supersede=True``) are applied last.

        Args:
            edit: the edit dict as sent in ``context_management.edits``.
            overrides: any other policy field.
        """
        fields: dict[str, Any] = {
            "keep_turns": 0,
            "retention": {},
            "infer_categories": False,
            "cache": None,
            "supersede": False,
        }
        fields.update(anthropic_fields(edit))
        fields.update(overrides)
        return cls(**fields)

    @classmethod
    def for_toolkit(cls, kit: Any, **overrides: Any) -> ClearingPolicy:
        """A policy using a slimtools ``Toolkit``'s categories, handle keys and read-only tools.

        ``kit`` is duck-typed: anything with ``categories`` and ``handle_keys`` mappings
        (and optionally ``companion_name`` and ``read_only_tools``). Explicit
        ``categories=``/``handle_keys=``/``repeatable=`` in ``overrides`` are merged over the
        toolkit's.
        """
        categories = {k: v for k, v in dict(getattr(kit, "categories", {})).items() if v}
        categories.update(overrides.pop("categories", {}))
        handle_keys = dict(getattr(kit, "handle_keys", {}))
        handle_keys.update(overrides.pop("handle_keys", {}))
        repeatable = set(getattr(kit, "read_only_tools", ()))
        repeatable.update(overrides.pop("repeatable", ()))
        companion = getattr(kit, "companion_name", None)
        if isinstance(companion, str) and companion:
            overrides.setdefault("refetch_tool", companion)
            repeatable.add(companion)
        return cls(
            categories=categories, handle_keys=handle_keys, repeatable=repeatable, **overrides
        )
