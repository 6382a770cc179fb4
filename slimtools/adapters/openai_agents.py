"""OpenAI Agents SDK adapter: a toolkit as ``FunctionTool`` objects.

``Agent(name=..., tools=to_agents_tools(kit))`` registers every tool and ``get_record``. The
SDK hands each tool the model's arguments as JSON text; they go through ``kit.acall``, which
validates them and never raises, so wrong types, unknown or missing fields, malformed JSON,
a page past the end or an unknown handle come back to the model as a tool output it can act
on, and the run goes on.

Schemas are strict where they can be (the SDK's default, recommended by OpenAI), with the
same rules and per-tool fallback as :mod:`slimtools.adapters.openai`
(see :mod:`slimtools.adapters._strict`): optional parameters
become nullable and a ``null`` the model sends means "use the default". To scope handles per
user, run the agent inside ``with slimtools.session(user_id):``; the binding follows the
run's tasks.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

try:
    from agents import FunctionTool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.openai_agents needs the OpenAI Agents SDK: "
        "pip install 'slimtools[openai-agents]'"
    ) from exc

from slimtools.adapters._strict import restore_defaults, strict_schema

if TYPE_CHECKING:
    from agents import ToolContext

    from slimtools.toolkit import Toolkit, ToolSpec

__all__ = ["to_agents_tools"]


def to_agents_tools(
    kit: Toolkit, *, strict: bool = True, session: str | None = None
) -> list[FunctionTool]:
    """One ``FunctionTool`` per tool of ``kit``, get_record included.

    Args:
        kit: the toolkit to expose.
        strict: use strict JSON schemas where a tool's schema allows it; a tool whose schema
            cannot be strict is sent non-strict (``strict_json_schema=False``), alone.
        session: the handle session for every call (default: the one bound with
            ``slimtools.session`` around the run, else the toolkit's default).

    Returns:
        Tools for ``Agent(tools=...)``; each returns the envelope text (or an actionable
        error message) as its output.
    """
    return [_function_tool(kit, spec, strict, session) for spec in kit.tools]


def _function_tool(kit: Toolkit, spec: ToolSpec, strict: bool, session: str | None) -> FunctionTool:
    schema = strict_schema(spec.parameters) if strict else None
    name, original = spec.name, spec.parameters

    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        # Errors are returned, not raised: a raise would end the run instead of informing
        # the model (the SDK's contract for on_invoke_tool).
        result = await kit.acall(
            name,
            restore_defaults(arguments, original),
            session=session,
            call_id=context.tool_call_id,
        )
        return result.text

    return FunctionTool(
        name=name,
        description=spec.description,
        params_json_schema=schema if schema is not None else copy.deepcopy(original),
        on_invoke_tool=invoke,
        strict_json_schema=schema is not None,
    )
