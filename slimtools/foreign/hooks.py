"""Slim a result a framework already made: ``wrap()``'s rules, applied by tool name in a hook.

Several frameworks hand each finished tool result to a hook that may replace it (Google
ADK's ``after_tool_callback``, Strands Agents' ``AfterToolCallEvent``). A
:class:`ResultSlimmer` shapes such a result exactly as ``wrap()`` shapes a wrapped tool's:
one :class:`~slimtools.foreign.Plan` per tool, the same decorators, the allowlist rule (what
cannot be projected is withheld with a note), under options given for every tool, per tool,
or both (a tool's own table overrides the shared keys). Each tool it slims is registered on
the toolkit, whose ``get_record`` reads the handles its envelopes show.

The framework's tool keeps its own schema, so a result is never paged through it (the model
could not send ``page``): an oversized one is summarised, as the proxy summarises a backend
that pages itself, and every record stays reachable by ``get_record``. So ``limit`` and
``max_limit`` do not apply; ``head``, ``tail`` and ``max_tokens`` bound what is shown.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from slimtools.errors import ConfigurationError
from slimtools.foreign._forward import Plan, Raw, slim
from slimtools.foreign._options import DEFAULT_MAX_TOKENS, ToolOptions, tool_options
from slimtools.foreign._screen import Screen
from slimtools.toolkit import Toolkit, ToolResult, default_toolkit

__all__ = ["ResultSlimmer", "Slimmed"]

_OPEN_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}
"""The arguments schema a hooked tool is registered with: the toolkit never calls it with
the model's arguments (the framework did), so there is nothing to validate."""

_PENDING: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "slimtools_hook_call", default=None
)
"""The call being slimmed, read by the registered forwarder (set around each call, so
parallel tool calls on other tasks or threads each see their own)."""


@dataclass
class _Call:
    """One result on its way through the toolkit, and what the forwarder made of it."""

    raw: Raw
    shaped: Any = None


@dataclass(frozen=True)
class Slimmed:
    """What the model reads instead of a tool's result.

    Args:
        text: the envelope, the withheld note or the screened result, as text.
        structured: the envelope as data, when the result became one (None otherwise).
        passed: the result kept its framework's form (an error, or a result holding media,
            of a tool with ``deny`` or ``fields``) with the tool's screen applied: ``native``
            is that form.
        native: the screened result in the framework's own form, when ``passed``.
        is_error: the result is an error the model should see as one.
    """

    text: str
    structured: dict[str, Any] | None = None
    passed: bool = False
    native: Any = None
    is_error: bool = False


class ResultSlimmer:
    """Slims finished tool results by tool name, as ``wrap()`` would slim those tools.

    Args:
        toolkit: where handles are kept and ``get_record`` reads (default:
            ``slimtools.default_toolkit``). A tool the toolkit already has (registered by
            you, so slimmed by its own decorators) and ``get_record`` itself pass untouched.
        tools: per-tool option tables (``{"search": {"fields": [...], "key": "id"}}``), each
            merged over ``options``.
        max_tokens: the budget of a tool with no options: a larger result becomes an
            envelope; ``None`` leaves such tools' results as they are.
        screen_native: applies a screen to a passed-through result in the framework's own
            form (an error, or a result holding media, of a tool with ``deny`` or ``fields``).
        **options: ``wrap()``'s options for every tool: ``fields``, ``items``, ``deny``,
            ``key``, ``max_tokens``, ``category``, ``head``, ``tail``, ``on_unreadable``.

    Raises:
        ConfigurationError: an unknown option or a bad value (named with its tool), or
            ``response_format``, which a hook cannot add to a tool it did not make.
    """

    def __init__(
        self,
        toolkit: Toolkit | None = None,
        *,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        screen_native: Callable[[Any, Screen], Any] | None = None,
        **options: Any,
    ) -> None:
        self.toolkit = toolkit or default_toolkit
        self.max_tokens = max_tokens
        self._screen_native = screen_native or (lambda native, screen: native)
        self._shared = _validated(options, "every tool")
        self._tables: dict[str, ToolOptions | None] = {}
        for name, table in (tools or {}).items():
            if not isinstance(table, Mapping):
                raise ConfigurationError(
                    f"tools[{name!r}] must be a mapping of options like "
                    f'{{"fields": [...], "key": "id"}}, got {type(table).__name__}'
                )
            self._tables[name] = _validated({**options, **table}, f"tools[{name!r}]")
        self._plans: dict[str, Plan | None] = {}
        self._lock = threading.Lock()

    def plan(self, name: str) -> Plan | None:
        """How results of tool ``name`` are slimmed (None: they pass untouched)."""
        if name in self._plans:
            return self._plans[name]
        with self._lock:
            if name not in self._plans:
                self._plans[name] = self._register(name)
            return self._plans[name]

    def slim(
        self, name: str, raw: Raw, *, call_id: str | None = None, session: str | None = None
    ) -> Slimmed | None:
        """What the model reads instead of tool ``name``'s result ``raw`` (None: as it is).

        ``session`` scopes its handles (default: the one bound with ``slimtools.session``,
        else the toolkit's default).
        """
        plan = self.plan(name)
        if plan is None:
            return None
        call = _Call(raw)
        token = _PENDING.set(call)
        try:
            result = self.toolkit.call(name, {}, call_id=call_id, session=session)
        finally:
            _PENDING.reset(token)
        return _slimmed(plan, call, result)

    async def aslim(
        self, name: str, raw: Raw, *, call_id: str | None = None, session: str | None = None
    ) -> Slimmed | None:
        """Asynchronous :meth:`slim` (handles kept through the store's async API)."""
        plan = self.plan(name)
        if plan is None:
            return None
        call = _Call(raw)
        token = _PENDING.set(call)
        try:
            result = await self.toolkit.acall(name, {}, call_id=call_id, session=session)
        finally:
            _PENDING.reset(token)
        return _slimmed(plan, call, result)

    def _register(self, name: str) -> Plan | None:
        """The plan of tool ``name``, its slimmed forwarder registered on the toolkit."""
        kit = self.toolkit
        hooked = _HOOKED.setdefault(kit, set())
        if name == kit.companion_name or (name not in hooked and name in kit):
            return None  # get_record, or a tool the toolkit slims itself
        options = self._tables.get(name, self._shared)
        plan = Plan(options, self.max_tokens, screen_native=self._screen_native)
        if not plan.slims:
            return None

        def forward(**_: Any) -> Any:
            call = _PENDING.get()
            assert call is not None, "a hooked tool runs only inside ResultSlimmer.slim"
            call.shaped = plan.shape(call.raw)
            return call.shaped

        forward.__name__ = name
        kit.tool(
            slim(forward, plan, name=name, paged=False),
            name=name,
            description=(options.description if options else None) or name,
            category=options.category if options else None,
            read_only=options.read_only if options else None,
            parameters=_OPEN_SCHEMA,
        )
        hooked.add(name)
        return plan


_HOOKED: weakref.WeakKeyDictionary[Toolkit, set[str]] = weakref.WeakKeyDictionary()
"""For each toolkit, the tools a slimmer registered (a later slimmer replaces them; the
last one registered shapes that tool's results: give each slimmer its own toolkit)."""


def _validated(table: Mapping[str, Any], where: str) -> ToolOptions | None:
    """The options of one table (None when empty), refusing what a hook cannot do."""
    if not table:
        return None
    if table.get("response_format"):
        raise ConfigurationError(
            f"{where}: response_format adds a parameter, and a hook cannot change the schema "
            "of a tool it did not make; choose the fields the model needs"
        )
    return tool_options(table, source=f"slimtools hook: {where}")


def _slimmed(plan: Plan, call: _Call, result: ToolResult) -> Slimmed | None:
    """What :meth:`ResultSlimmer.slim` returns for the toolkit's ``result`` (None: as it is)."""
    if result is call.shaped:  # passed through (the decorators return a ToolResult as is)
        if plan.screen(call.raw.is_error) is None:
            return None  # an unconfigured tool's result within its budget, or an error
        return Slimmed(result.text, None, True, result.value, result.is_error)
    return Slimmed(result.text, result.structured, is_error=result.is_error)
