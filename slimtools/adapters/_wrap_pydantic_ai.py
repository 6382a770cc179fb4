"""``slimtools.wrap`` for Pydantic AI ``Tool`` objects."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from pydantic_ai import Tool

from slimtools._json import to_jsonable
from slimtools.adapters.pydantic_ai import _call
from slimtools.foreign import Plan, Raw, Screen
from slimtools.toolkit import Toolkit

# The run context of the current call, for the original tool (see _wrap_openai_agents).
_CONTEXT: ContextVar[Any] = ContextVar("slimtools_pydantic_ai_context", default=None)


CONTEXT_CLASSES = frozenset({("pydantic_ai", "RunContext")})
"""The run context Pydantic AI injects per call (``slimtools.foreign.WrapAdapter``)."""

HIDDEN_CLASSES: frozenset[tuple[str, str]] = frozenset()


def accepts(tool: Any) -> bool:
    """True for a Pydantic AI ``Tool``."""
    return isinstance(tool, Tool)


def schema(tool: Tool[Any]) -> dict[str, Any]:
    """The tool's parameters schema."""
    return dict(tool.function_schema.json_schema)


def forwarder(tool: Tool[Any], plan: Plan) -> Any:
    """A ``**arguments`` coroutine that validates, runs ``tool`` and shapes its result."""
    function_schema = tool.function_schema

    async def forward(**arguments: Any) -> Any:
        validated = function_schema.validator.validate_python(arguments)
        out = await function_schema.call(validated, _CONTEXT.get())
        if isinstance(out, str):
            return plan.shape(Raw(texts=[out], native=out))
        return plan.shape(Raw(texts=[], structured=to_jsonable(out), native=out))

    return forward


def screen_native(native: Any, screen: Screen) -> Any:
    """The native result as it is: its text was screened, and only that reaches the model."""
    return native


def build(kit: Toolkit, name: str) -> Tool[Any]:
    """The toolkit's tool ``name`` as a Pydantic AI ``Tool`` (errors: failed results)."""
    spec = kit.spec(name)

    async def run(ctx: Any, **arguments: Any) -> Any:
        token = _CONTEXT.set(ctx)
        try:
            return await _call(kit, name, arguments, None, ctx.tool_call_id)
        finally:
            _CONTEXT.reset(token)

    made: Tool[Any] = Tool.from_schema(
        run, name=name, description=spec.description, json_schema=spec.parameters, takes_ctx=True
    )
    return made
