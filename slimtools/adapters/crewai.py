"""CrewAI adapter: slim every tool's result in an after-tool-call hook.

``slimming = CrewSlimming(tools={...}, deny=[...])`` then ``slimming.register()`` (or ``with
slimming.registered():``) adds a global after-tool-call hook whose non-None return replaces
the result the agent sees, as ``wrap()`` would show it (fields, deny, key, the budget; per
tool in ``tools=``, for every tool as keyword arguments), and ``Agent(tools=[...,
slimming.record_tool])`` gives the agent the ``get_record`` that reads the envelopes'
handles. CrewAI logs a hook that raises and keeps the
original result, so this hook never raises: a failure under an allowlist or a ``deny`` gives
a withheld note instead of the raw result.

No clearing: CrewAI's before-LLM-call hook may edit ``context.messages`` in place, but its
agents keep each tool result inside the assistant's ReAct text (``Observation: ...``), which
the clearing codecs do not read; run the model calls through ``slimtools gateway`` or the
LiteLLM callback (``slimtools.integrations.litellm``) to clear stale results.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any

try:
    from crewai.hooks import (
        ToolCallHookContext,
        register_after_tool_call_hook,
        unregister_after_tool_call_hook,
    )
    from crewai.tools import BaseTool
    from crewai.tools.base_tool import Tool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.crewai needs CrewAI: pip install 'slimtools[crewai]'"
    ) from exc

from pydantic import BaseModel, Field

from slimtools.foreign import DEFAULT_MAX_TOKENS, Raw
from slimtools.foreign.hooks import ResultSlimmer
from slimtools.toolkit import Toolkit

__all__ = ["CrewSlimming"]

_log = logging.getLogger("slimtools")


class _RecordArguments(BaseModel):
    """``get_record``'s arguments, as the toolkit's schema has them."""

    handle: str | int = Field(
        description='The handle or id value from a brief, e.g. 3 or "k3f9a2qd".'
    )
    source: str | None = Field(default=None, description="The tool that showed the handle.")
    page: int = Field(default=1, description="For long texts and records, the page to read.")


def _record_tool(kit: Toolkit) -> BaseTool:
    """``kit``'s ``get_record`` as a CrewAI tool, described as the toolkit describes it (its
    answers never raise: an unknown handle or a bad page is a text the model can act on)."""

    def get_record(handle: str | int, source: str | None = None, page: int = 1) -> str:
        arguments = {"handle": handle, "source": source, "page": page}
        return kit.call(kit.companion_name, arguments).text

    description = kit.spec(kit.companion_name).description
    made: BaseTool = Tool(
        name=kit.companion_name,
        description=description,
        func=get_record,
        args_schema=_RecordArguments,
    )
    return made


class CrewSlimming:
    """An after-tool-call hook and a ``get_record`` tool for CrewAI agents.

    Args:
        tools: per-tool option tables by tool name, each merged over ``options``.
        toolkit: where handles are kept and ``get_record`` reads (default: a memory-backed
            toolkit of its own; pass ``Toolkit("crew", store=...)`` to keep them elsewhere).
        max_tokens: the budget of a tool with no options (``None``: such results pass).
        **options: ``wrap()``'s options for every tool (``fields``, ``deny``, ``key``,
            ``max_tokens``, ``head``, ``tail``, ``on_unreadable``, ...).

    Raises:
        ConfigurationError: an unknown option or a bad value (``limit`` and ``max_limit``
            do not apply: a hook cannot add ``page`` to a tool it does not own).
    """

    def __init__(
        self,
        *,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        toolkit: Toolkit | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        **options: Any,
    ) -> None:
        kit = toolkit if toolkit is not None else Toolkit("crewai")
        self.slimmer = ResultSlimmer(kit, tools=tools, max_tokens=max_tokens, **options)
        self.record_tool = _record_tool(kit)
        """``get_record`` as a CrewAI tool: add it to each agent's ``tools``."""

    @property
    def toolkit(self) -> Toolkit:
        """Where the handles are kept (``toolkit.get_record`` reads them in Python too)."""
        return self.slimmer.toolkit

    def hook(self, context: ToolCallHookContext) -> str | None:
        """The after-tool-call hook: the text the agent sees instead, or None to keep it."""
        result = context.tool_result
        if not isinstance(result, str):
            return None
        name = context.tool_name
        raw = Raw(texts=[result], native=result)
        try:
            slimmed = self.slimmer.slim(name, raw)
        except Exception:  # CrewAI would keep the raw result: never let it through a guard
            _log.warning("slimtools: slimming %s's result failed", name, exc_info=True)
            plan = self.slimmer.plan(name)
            if plan is not None and plan.options is not None and plan.options.guards:
                return f"[withheld by slimtools: slimming {name}'s result failed]"
            return None
        return None if slimmed is None else slimmed.text

    def register(self) -> None:
        """Register the hook for every CrewAI tool call in this process."""
        register_after_tool_call_hook(self.hook)

    def unregister(self) -> None:
        """Remove the hook (no error when it is not registered)."""
        unregister_after_tool_call_hook(self.hook)

    @contextlib.contextmanager
    def registered(self) -> Iterator[CrewSlimming]:
        """The hook registered for the ``with`` block only."""
        self.register()
        try:
            yield self
        finally:
            self.unregister()
