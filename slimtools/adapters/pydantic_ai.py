"""Pydantic AI adapter: a toolkit as a toolset.

``Agent(model, toolsets=[to_pydantic_ai_toolset(kit)])`` registers every tool and
get_record. The toolset validates nothing itself and hands the model's arguments, as sent,
to ``kit.acall``, so every bad call (wrong types, unknown or missing fields, malformed JSON or
JSON that is not an object, a page past the end, an unknown handle) comes back as a tool
result the model can act on: a failed one (``outcome='failed'``, which Pydantic AI maps to
the provider's error flag, e.g. Anthropic's ``is_error``) when it is an error, without using
up the tool's retries, and the run goes on.

Why a toolset rather than ``Tool`` objects: a ``Tool`` built from a JSON schema
(``Tool.from_schema``) lets Pydantic AI parse the arguments first, so malformed JSON becomes
a retry prompt that spends the tool's retries (and ends the run with an exception once they
run out), and a JSON array is splatted into the function as keyword arguments and raises a
``TypeError`` out of the run. A toolset owns argument validation, so neither can happen.

The model sees the envelope text; the structured envelope (``ToolResult.structured``) rides
along as the tool return's ``metadata``, which the application can read from the message
history and which is never sent to the model.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

try:
    from pydantic_ai import ToolDefinition, ToolFailed, ToolReturn
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.pydantic_ai needs Pydantic AI: pip install 'slimtools[pydantic-ai]'"
    ) from exc

from slimtools._json import dumps_str, loads

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from slimtools.toolkit import Toolkit

__all__ = ["SlimToolset", "to_pydantic_ai_toolset"]

_RAW = "__slimtools_raw_arguments__"
"""Key under which arguments that are not a JSON object reach ``call_tool``, as JSON text."""


class _PassThroughArgs:
    """An args validator that never fails, so that ``kit.acall`` judges every call itself.

    Pydantic AI turns a validator failure into a retry prompt that uses up the tool's retries
    and, once they run out, ends the run with an exception; the toolkit's own validation
    gives the same information as an ordinary failed result instead.
    """

    def validate_json(self, input: str | bytes | bytearray, **_: Any) -> dict[str, Any]:
        text = input if isinstance(input, str) else bytes(input).decode("utf-8", "replace")
        if not text.strip():
            return {}
        try:
            parsed = loads(text)  # exact: an id beyond 64 bits stays an integer
        except ValueError:
            parsed = None
        return dict(parsed) if isinstance(parsed, dict) else {_RAW: text}

    def validate_python(self, input: Any, **_: Any) -> dict[str, Any]:
        if input is None:
            return {}
        return dict(input) if isinstance(input, Mapping) else {_RAW: dumps_str(input)}


_PASS_THROUGH = _PassThroughArgs()


async def _call(
    kit: Toolkit, name: str, arguments: dict[str, Any], session: str | None, call_id: str | None
) -> ToolReturn:
    """Run one call through the toolkit; a failure becomes ``ToolFailed`` (a failed result)."""
    raw = arguments.get(_RAW, arguments)
    result = await kit.acall(name, raw, session=session, call_id=call_id)
    if result.is_error:
        raise ToolFailed(result.text)
    return ToolReturn(return_value=result.text, metadata=result.structured)


class SlimToolset(AbstractToolset[Any]):
    """Every tool of a toolkit, get_record included, as one Pydantic AI toolset.

    Args:
        kit: the toolkit to expose; tools registered later appear on the next run step.
        id: the toolset id (needed for durable execution); defaults to ``slimtools:<name>``.
        session: the handle session for every call (default: the one bound with
            ``slimtools.session`` around the run, else the toolkit's default).
    """

    def __init__(self, kit: Toolkit, *, id: str | None = None, session: str | None = None) -> None:
        self._kit = kit
        self._id = id if id is not None else f"slimtools:{kit.name}"
        self._session = session

    @property
    def id(self) -> str | None:
        """The toolset id, unique among an agent's toolsets."""
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """One tool definition per toolkit tool, its schema the tool's parameters."""
        return {
            spec.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=spec.name,
                    description=spec.description or None,
                    parameters_json_schema=copy.deepcopy(spec.parameters),
                ),
                max_retries=1,  # unused: failures are ToolFailed, which spends no retries
                args_validator=_PASS_THROUGH,
            )
            for spec in self._kit.tools
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run the call through ``kit.acall``; errors become failed results, never raises."""
        return await _call(self._kit, name, tool_args, self._session, ctx.tool_call_id)


def to_pydantic_ai_toolset(
    kit: Toolkit, *, id: str | None = None, session: str | None = None
) -> SlimToolset:
    """The toolkit as a toolset: ``Agent(model, toolsets=[to_pydantic_ai_toolset(kit)])``.

    Args:
        kit: the toolkit to expose, get_record included.
        id: the toolset id; defaults to ``slimtools:<toolkit name>``.
        session: the handle session (default: the bound one, see :class:`SlimToolset`).
    """
    return SlimToolset(kit, id=id, session=session)
