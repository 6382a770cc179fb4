"""``slimtools.wrap`` for OpenAI Agents SDK ``FunctionTool`` objects."""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar
from typing import Any

import orjson
from agents import FunctionTool
from agents.tool import default_tool_error_function

from slimtools._json import to_jsonable
from slimtools.adapters.openai_agents import to_agents_tools
from slimtools.foreign import Plan, Raw, Screen
from slimtools.toolkit import Toolkit

# The SDK hands each call a ToolContext; the wrapped tool gets it through the toolkit's
# dispatch (which knows nothing of the SDK) by this contextvar, set around the call.
_CONTEXT: ContextVar[Any] = ContextVar("slimtools_agents_context", default=None)
# What the SDK's default failure_error_function answers when the tool raised: an error for
# the model (screened as errors are), not a result withheld as unreadable.
_SDK_FAILURE = default_tool_error_function(None, Exception())  # type: ignore[arg-type]


CONTEXT_CLASSES = frozenset({("agents", "RunContextWrapper")})  # ToolContext subclasses it
"""The run context the SDK injects per call (``slimtools.foreign.WrapAdapter``)."""

HIDDEN_CLASSES: frozenset[tuple[str, str]] = frozenset()


def accepts(tool: Any) -> bool:
    """True for an Agents SDK ``FunctionTool``."""
    return isinstance(tool, FunctionTool)


def schema(tool: FunctionTool) -> dict[str, Any]:
    """The tool's parameters schema."""
    return dict(tool.params_json_schema)


def forwarder(tool: FunctionTool, plan: Plan) -> Any:
    """A ``**arguments`` coroutine that invokes ``tool`` and shapes its output by ``plan``."""

    async def forward(**arguments: Any) -> Any:
        out = await tool.on_invoke_tool(_CONTEXT.get(), orjson.dumps(arguments).decode())
        if isinstance(out, str):
            return plan.shape(Raw(texts=[out], is_error=out == _SDK_FAILURE, native=out))
        return plan.shape(Raw(texts=[], structured=to_jsonable(out), native=out))

    return forward


def screen_native(native: Any, screen: Screen) -> Any:
    """The native result as it is: its text was screened, and only that reaches the model."""
    return native


def build(kit: Toolkit, name: str) -> FunctionTool:
    """The toolkit's tool ``name`` as a ``FunctionTool`` that passes its context along."""
    made = next(t for t in to_agents_tools(kit) if t.name == name)
    inner = made.on_invoke_tool

    async def on_invoke(context: Any, arguments: str) -> Any:
        token = _CONTEXT.set(context)
        try:
            return await inner(context, arguments)
        finally:
            _CONTEXT.reset(token)

    return dataclasses.replace(made, on_invoke_tool=on_invoke)
