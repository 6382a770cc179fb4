"""Slim a tool's result after its framework ran it: by tool name, under per-tool options.

The frameworks that own their tools (CrewAI, the Claude Agent SDK, ...) hand a hook the tool's
name, its arguments and what it returned, and take back a replacement. :class:`HookSlimmer`
turns that result into what ``wrap()`` would have shown: each tool is registered once, on first
sight, on a toolkit as a forwarder that returns the result the hook holds, slimmed by the same
``Plan`` and decorators as ``wrap()``, so the allowlist, ``deny`` and the budget are the one rule
every surface calls. The hook cannot add ``page``/``limit`` to a tool it does not own, so a
hook's results are summarised (every brief within the budget, each record behind a handle that
``get_record`` reads) rather than paged; ``limit`` and ``max_limit`` are refused.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

from slimtools.errors import ConfigurationError
from slimtools.foreign._forward import Plan, Raw, slim
from slimtools.foreign._options import DEFAULT_MAX_TOKENS, ToolOptions, tool_options
from slimtools.foreign._screen import Screen
from slimtools.toolkit import Toolkit, ToolResult

__all__ = ["HookSlimmer"]

_PAGING = ("limit", "max_limit", "response_format")
"""Options a hook cannot honour: the framework's tool schema has no ``page`` to read on with."""

_PENDING: ContextVar[Raw | None] = ContextVar("slimtools_hook_result", default=None)
"""The result a hook is slimming, read by the registered forwarder (one per call's context,
so parallel calls in threads or tasks never see each other's)."""

_ANY_OBJECT: dict[str, Any] = {"type": "object"}
"""The arguments schema of a hooked tool: the framework validated them already."""


class HookSlimmer:
    """Slims the results a framework's after-tool hook sees, by tool name.

    Args:
        tools: per-tool options by tool name, each a mapping of ``wrap()``'s options
            (``{"search": {"fields": ["id", "title"], "key": "id"}}``).
        default: options for every tool not named in ``tools`` (None: unconfigured tools
            pass while they fit ``max_tokens`` and become an envelope when they do not).
        toolkit: where handles are kept and ``get_record`` reads (default: a new one named
            ``"hooks"``; register its ``get_record`` with the framework).
        max_tokens: the budget of unconfigured tools; ``None`` leaves them untouched.
        screen_native: applies a ``deny``/allowlist :class:`Screen` to every block of the
            framework's own form of a passed-through result (``Raw.native``), e.g. MCP
            content blocks; by default the native form is returned as it is.

    Raises:
        ConfigurationError: an unknown option or a bad value (named with its tool), or an
            option a hook cannot honour (``limit``, ``max_limit``, ``response_format``).
    """

    def __init__(
        self,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        *,
        default: Mapping[str, Any] | None = None,
        toolkit: Toolkit | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        screen_native: Callable[[Any, Screen], Any] | None = None,
    ) -> None:
        self.toolkit = toolkit if toolkit is not None else Toolkit("hooks")
        self._options = {name: _parse(name, table) for name, table in (tools or {}).items()}
        self._default = _parse("default", default) if default is not None else None
        self._max_tokens = max_tokens
        self._screen_native = screen_native
        self._registered: set[str] = set()
        self._lock = threading.Lock()

    @property
    def companion_name(self) -> str:
        """The name of the ``get_record`` tool, whose own results are never slimmed again."""
        return self.toolkit.companion_name

    def options(self, tool: str) -> ToolOptions | None:
        """The options ``tool`` is slimmed by (its own, else the default)."""
        return self._options.get(tool, self._default)

    def slim(
        self,
        tool: str,
        arguments: Mapping[str, Any] | None,
        raw: Raw,
        *,
        call_id: str | None = None,
        session: str | None = None,
    ) -> ToolResult | None:
        """What the model should see of ``raw``, the result of ``tool(**arguments)``.

        Returns:
            The slimmed result (an envelope's text, a screened error, a withheld note), or
            None when the result goes to the model as it is (nothing to change).
        """
        if not self._hooked(tool):
            return None
        token = _PENDING.set(raw)
        try:
            result = self.toolkit.call(
                tool, dict(arguments or {}), session=session, call_id=call_id
            )
        finally:
            _PENDING.reset(token)
        return _changed(result, raw)

    async def aslim(
        self,
        tool: str,
        arguments: Mapping[str, Any] | None,
        raw: Raw,
        *,
        call_id: str | None = None,
        session: str | None = None,
    ) -> ToolResult | None:
        """Asynchronous :meth:`slim` (the toolkit's store is used through its async API)."""
        if not self._hooked(tool):
            return None
        token = _PENDING.set(raw)
        try:
            result = await self.toolkit.acall(
                tool, dict(arguments or {}), session=session, call_id=call_id
            )
        finally:
            _PENDING.reset(token)
        return _changed(result, raw)

    def _hooked(self, tool: str) -> bool:
        """Register ``tool`` on first sight; False for a tool left alone (``get_record``)."""
        if tool == self.companion_name:
            return False
        if tool in self._registered:
            return True
        options = self.options(tool)
        plan = Plan(options, self._max_tokens)
        if self._screen_native is not None:
            plan = dataclasses.replace(plan, screen_native=self._screen_native)
        if not plan.slims:
            return False
        with self._lock:
            if tool not in self._registered:
                self._register(tool, options, plan)
                self._registered.add(tool)
        return True

    def _register(self, tool: str, options: ToolOptions | None, plan: Plan) -> None:
        def forward(**arguments: Any) -> Any:
            raw = _PENDING.get()
            if raw is None:  # called as a tool, not from a hook: there is nothing to slim
                raise RuntimeError(f"{tool} is slimmed by a hook; the framework runs it")
            return plan.shape(raw)

        forward.__name__ = tool
        self.toolkit.tool(
            slim(forward, plan, name=tool, paged=False),
            name=tool,
            description=(options.description if options else None) or tool,
            category=options.category if options else None,
            parameters=_ANY_OBJECT,
        )


def _parse(tool: str, table: Mapping[str, Any]) -> ToolOptions:
    """One tool's options, validated as ``wrap()``'s; paging options refused."""
    if not isinstance(table, Mapping):
        raise ConfigurationError(
            f"hook options for {tool!r} must be a mapping like wrap()'s keywords "
            f'({{"fields": [...], "key": "id"}}), got {type(table).__name__}'
        )
    paging = [key for key in _PAGING if key in table]
    if paging:
        raise ConfigurationError(
            f"hook options for {tool!r}: {', '.join(paging)} cannot apply in a hook, which "
            "cannot add page/limit to a tool it does not own: its results show every brief "
            "within max_tokens, each record behind a handle get_record reads (wrap() the "
            "tool to page it)"
        )
    model = table.get("fields")
    if isinstance(model, type) and issubclass(model, BaseModel):
        rest = {k: v for k, v in table.items() if k != "fields"}
        parsed = tool_options(rest, source=f"hook options for {tool!r}")
        return dataclasses.replace(parsed, model=model)
    return tool_options(table, source=f"hook options for {tool!r}")


def _changed(result: ToolResult, raw: Raw) -> ToolResult | None:
    """``result``, or None when it is the tool's own text, untouched."""
    if result.value is raw.native and result.text == "\n".join(raw.texts):
        return None
    return result
