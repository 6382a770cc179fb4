"""ClearingPolicy: which stale tool results to clear, when, and what to leave in their place.

*What* may be cleared: results older than their retention (per category or tool: search
results go first, write confirmations late, task input never), outside the last
``keep_turns`` turns and ``keep`` tool uses. *Whether and how much* to clear now: by default
only what pays for itself under prompt caching (``cache=``, Anthropic's 5-minute prices
unless told otherwise); with ``cache=None`` everything clearable goes at every round end.
Anthropic's server-side ``clear_tool_uses_20250919`` settings map onto the same fields
(:meth:`ClearingPolicy.from_anthropic`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from slimtools.categories import (
    CATEGORIES,
    REPEATABLE_CATEGORIES,
    infer_category,
    repeatable_by_name,
)
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
from slimtools.clearing.pricing import DEFAULT_PRICING, CachePricing, pricing_of
from slimtools.errors import ConfigurationError
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

    **Clearing and prompt caching.** Clearing rewrites history and so breaks the provider's
    prompt cache from the first rewritten message. With ``cache`` set (the default:
    Anthropic's 5-minute prices) a clear is made only when it pays for itself over the
    calls the run is expected to make (:func:`~slimtools.clearing.pricing.calls_ahead`),
    and among those the one with the largest net saving; ``cache=None`` clears everything
    clearable at every round end. The rule and its guarantees are in the clearing guide
    ("Clearing and prompt caching").

    The fields come in three groups: what the tools are, when to clear, and what the
    placeholder shows.

    Attributes:
        categories: tool name -> category; names not listed are inferred
            (``search_logs`` -> search, ``read_file`` -> read, ...).
        repeatable: tool name -> whether calling it again is safe (True: it only reads) or
            repeats an effect (False: MCP tools annotated ``destructiveHint``); any
            collection of names means True for each. Placeholders tell the model to call a
            tool again only when it is True here or, unlisted, its category is ``search`` or
            ``read``; for any other they say that calling it again would repeat its effect.
            :meth:`with_tool_hints` fills it from MCP tool definitions, :meth:`for_toolkit`
            from a toolkit's read-only tools.
        handle_keys: tool name -> brief field carrying its handle (None: no handles);
            tools not listed use ``"id"``.
        keep_turns: results of the last ``keep_turns`` turns are never touched.
        keep: also keep the results of the last ``keep`` tool uses (Anthropic's ``keep``);
            a result is kept when either ``keep`` or ``keep_turns`` protects it.
        retention: turns to keep per category or per tool name (None: never clear, and the
            tool's results do not count toward ``keep``); a key naming a tool (not a
            category) wins over its category; every value is at least ``keep_turns``.
        trigger: clear only once the history exceeds this many tokens (an int), or holds
            more tool uses than ``("tool_uses", n)`` says; Anthropic's
            ``{"type": "input_tokens" | "tool_uses", "value": n}`` is read too. Stored as
            ``(kind, n)`` with kind ``"tokens"`` or ``"tool_uses"``; None: always.
        clear_at_least: clear nothing unless at least this many tokens can go at once, since
            clearing rewrites the history and breaks the prompt cache from that point.
        max_context_tokens: clear regardless of trigger, ``clear_at_least`` and cache once
            the history exceeds this many tokens (what may be cleared still applies).
        cache: the prompt-cache prices (and payback ``horizon``) that decide whether clearing
            pays: a :class:`~slimtools.clearing.pricing.CachePricing`, a preset name
            (``"anthropic"``, ``"anthropic-1h"``, ``"openai"``, ``"gemini"``, ``"none"``) or
            None for no caching; stored as a ``CachePricing`` or None.
        supersede: clear a result ahead of its age once a newer one makes it stale (the
            same call again, or a read of a path written and re-read since), even inside
            ``keep_turns``/``keep``; the placeholder names the newer result. On by default
            (no dearer on any source, ``bench_clearing`` (f)); False clears by age alone.
            See "Superseded results" in docs/clearing.md.
        placeholder: a ``str.format`` template (fields in ``placeholder.TEMPLATE_FIELDS``)
            or a callable from :class:`PlaceholderInfo` to text; either is bounded to
            ``placeholder.MAX_PLACEHOLDER_CHARS``.
        keep_head: characters of the original kept in the placeholder, whitespace flattened.
        refetch_tool: the companion named in placeholders (``get_record``).
        clear_tool_inputs: also blank the arguments of cleared calls (True, or a set of
            tool names), leaving valid JSON.
        token_counter: counts tokens for triggers, ``clear_at_least`` and reports; it must
            return an int (asked once about a probe text when the policy is made).
    """

    # -- what the tools are
    categories: Mapping[str, str] = field(default_factory=dict)
    # Any collection of names is accepted ({"search"}: all True); stored as a mapping.
    repeatable: Mapping[str, bool] | AbstractSet[str] = field(default_factory=dict)
    handle_keys: Mapping[str, str | None] = field(default_factory=dict)
    # -- when to clear
    keep_turns: int = 2
    keep: int | None = None
    retention: Mapping[str, int | None] = field(default_factory=lambda: dict(DEFAULT_RETENTION))
    trigger: int | tuple[str, int] | Mapping[str, Any] | None = None
    clear_at_least: int | None = None
    max_context_tokens: int | None = None
    cache: CachePricing | str | None = DEFAULT_PRICING
    supersede: bool = True
    # -- what the placeholder shows
    placeholder: str | Callable[[PlaceholderInfo], str] = DEFAULT_TEMPLATE
    keep_head: int = 200
    refetch_tool: str = "get_record"
    clear_tool_inputs: bool | AbstractSet[str] = False
    token_counter: TokenCounter = count_tokens

    def __post_init__(self) -> None:
        for name in ("keep_turns", "keep_head"):
            check_count(getattr(self, name), name, optional=False)
        for name in ("keep", "clear_at_least"):
            check_count(getattr(self, name), name, optional=True)
        check_count(self.max_context_tokens, "max_context_tokens", optional=True, minimum=1)
        set_ = object.__setattr__
        set_(self, "cache", pricing_of(self.cache))
        set_(self, "trigger", trigger_of(self.trigger))
        set_(self, "repeatable", repeatable_map(self.repeatable))
        if not isinstance(self.clear_tool_inputs, bool):
            set_(self, "clear_tool_inputs", tool_names(self.clear_tool_inputs, "clear_tool_inputs"))
        set_(self, "retention", frozen_map(self.retention, "retention", values=is_turns))
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
        if self.token_counter is not count_tokens:
            check_counter(self.token_counter)
        if not isinstance(self.refetch_tool, str) or not self.refetch_tool:
            raise ConfigurationError("refetch_tool must be a non-empty tool name")
        if not isinstance(self.supersede, bool):
            raise ConfigurationError("supersede must be a bool")
        check_categories(self.categories, self.retention)
        # Per-tool decisions are asked once per result; memoise them (the policy is frozen).
        set_(self, "_turns_cache", {})
        set_(self, "_needs", template_needs(self.placeholder))
        set_(self, "_category_keys", CATEGORIES | frozenset(self.categories.values()))

    def __hash__(self) -> int:
        # The generated hash would fail on the mapping fields; hash them as item sets, so a
        # policy can key a cache like any other frozen value.
        return hash(
            tuple(
                frozenset(v.items()) if isinstance(v, Mapping) else v
                for v in (getattr(self, f.name) for f in dataclasses.fields(self))
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
        return infer_category(tool) if category is None else category

    def turns_to_keep(self, tool: str) -> int | None:
        """How many turns a result of ``tool`` stays untouched; None: never cleared."""
        cache: dict[str, int | None] = self.__dict__["_turns_cache"]
        if tool not in cache:
            cache[tool] = self._turns_to_keep(tool)
        return cache[tool]

    def _turns_to_keep(self, tool: str) -> int | None:
        retention = self.retention
        if tool in retention and tool not in self.__dict__["_category_keys"]:
            turns = retention[tool]
        else:
            category = self.category_of(tool)
            turns = self.keep_turns if category is None else retention.get(category, 0)
        return None if turns is None else max(turns, self.keep_turns)

    def repeatable_of(self, tool: str) -> bool | None:
        """Whether calling ``tool`` again is safe (True), repeats an effect (False) or is
        unknown (None): what a placeholder may tell the model."""
        said = self.repeatable.get(tool)  # type: ignore[union-attr]  # a mapping, normalised
        if said is not None:
            return bool(said)
        declared = self.categories.get(tool)
        if declared is not None:
            return declared in REPEATABLE_CATEGORIES
        # Guessed from the name: only a name whose every action reads may repeat.
        return repeatable_by_name(tool)

    def with_tool_hints(self, tools: Iterable[Any]) -> ClearingPolicy:
        """A copy that also reads the MCP annotations of ``tools`` (``list_tools`` output).

        Read-only and idempotent tools become repeatable, destructive ones not; names
        already in ``repeatable`` keep the caller's word.
        """
        hints = tool_hints(tools)
        said = dict.fromkeys(hints.repeatable, True) | dict.fromkeys(hints.unrepeatable, False)
        return self.replace(repeatable=said | dict(repeatable_map(self.repeatable)))

    def clears_inputs_of(self, tool: str) -> bool:
        """Whether a cleared call of ``tool`` also has its arguments blanked."""
        if isinstance(self.clear_tool_inputs, bool):
            return self.clear_tool_inputs
        return tool in self.clear_tool_inputs

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
        only cache control; the edit's ``exclude_tools`` are kept for good
        (``retention={name: None}``). Supersession is off too (``supersede=False``): the
        server's edit clears by age alone, so a result stays until it falls out of the kept
        tool uses even when the same call was made again. ``overrides`` (e.g.
        ``placeholder=``, ``supersede=True``) are applied last.

        Args:
            edit: the edit dict as sent in ``context_management.edits``.
            overrides: any other policy field.
        """
        fields: dict[str, Any] = {"keep_turns": 0, "cache": None, "supersede": False}
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
        repeatable = dict.fromkeys(getattr(kit, "read_only_tools", ()), True)
        companion = getattr(kit, "companion_name", None)
        if isinstance(companion, str) and companion:
            overrides.setdefault("refetch_tool", companion)
            repeatable[companion] = True
        repeatable.update(repeatable_map(overrides.pop("repeatable", {})))
        return cls(
            categories=categories, handle_keys=handle_keys, repeatable=repeatable, **overrides
        )


def trigger_of(value: Any) -> tuple[str, int] | None:
    """A policy's ``trigger=`` as ``(kind, n)``: an int counts tokens; ``("tokens", n)``,
    ``("tool_uses", n)`` and Anthropic's ``{"type": ..., "value": n}`` are read as said."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        kind = {"input_tokens": "tokens", "tool_uses": "tool_uses"}.get(str(value.get("type")))
        value = (kind, value.get("value"))
    elif isinstance(value, int) and not isinstance(value, bool):
        value = ("tokens", value)
    if not isinstance(value, tuple) or len(value) != 2 or value[0] not in {"tokens", "tool_uses"}:
        raise ConfigurationError(
            "trigger must be None, a token count, ('tokens', n), ('tool_uses', n) or "
            f"{{'type': 'input_tokens' | 'tool_uses', 'value': n}}, got {value!r}"
        )
    check_count(value[1], "trigger", optional=False)
    return (str(value[0]), int(value[1]))


def repeatable_map(value: Any) -> Mapping[str, bool]:
    """A policy's ``repeatable=`` as a read-only mapping: a collection of names is all True."""
    if isinstance(value, Mapping):
        return frozen_map(value, "repeatable", values=lambda v: isinstance(v, bool))
    return MappingProxyType(dict.fromkeys(tool_names(value, "repeatable"), True))
