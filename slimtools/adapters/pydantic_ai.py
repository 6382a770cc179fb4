"""Pydantic AI adapter: a toolkit as a toolset, or as ``Tool`` objects.

``Agent(model, toolsets=[to_pydantic_ai_toolset(kit)])`` is the recommended registration:
the toolset validates nothing itself and hands the model's arguments, as sent, to
``kit.acall``, so every bad call (wrong types, unknown or missing fields, even malformed
JSON, a page past the end, an unknown handle) comes back as a failed tool result
(``outcome='failed'``, which Pydantic AI maps to the provider's error flag, e.g. Anthropic's
``is_error``) without using up the tool's retries, and the run goes on.

``Agent(model, tools=to_pydantic_ai_tools(kit))`` gives plain ``Tool`` objects with the same
schemas and errors, for code that builds its tool list itself; the one difference is that
arguments that are not valid JSON are rejected by Pydantic AI before the tool runs, as a
retry prompt that counts against the tool's ``max_retries``.

Either way the model sees the envelope text; the structured envelope (``ToolResult.structured``)
rides along as the tool return's ``metadata``, which the application can read from the
message history and which is never sent to the model.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any

try:
    from pydantic_ai import Tool, ToolDefinition, ToolFailed, ToolReturn
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.pydantic_ai needs Pydantic AI: pip install 'slimtools[pydantic-ai]'"
    ) from exc

import orjson

if TYPE_CHECKING:
    from pydantic_ai import RunContext

    from slimtools.toolkit import Toolkit

__all__ = ["SlimToolset", "to_pydantic_ai_tools", "to_pydantic_ai_toolset"]

_RAW = "__slimtools_raw_arguments__"
"""Key under which arguments that are not a JSON object reach ``call_tool`` unparsed."""


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
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            return {_RAW: text}
        return self.validate_python(parsed)

    def validate_python(self, input: Any, **_: Any) -> dict[str, Any]:
        if input is None:
            return {}
        return dict(input) if isinstance(input, Mapping) else {_RAW: input}


_PASS_THROUGH = _PassThroughArgs()


async def _call(kit: Toolkit, name: str, arguments: dict[str, Any]) -> ToolReturn:
    """Run one call through the toolkit; a failure becomes ``ToolFailed`` (a failed result)."""
    raw = arguments.get(_RAW, arguments)
    result = await kit.acall(
        name, raw if isinstance(raw, (str, Mapping)) else orjson.dumps(raw).decode()
    )
    if result.is_error:
        raise ToolFailed(result.text)
    return ToolReturn(return_value=result.text, metadata=result.structured)


class SlimToolset(AbstractToolset[Any]):
    """Every tool of a toolkit, get_record included, as one Pydantic AI toolset.

    Args:
        kit: the toolkit to expose; tools registered later appear on the next run step.
        id: the toolset id (needed for durable execution); defaults to ``slimtools:<name>``.
    """

    def __init__(self, kit: Toolkit, *, id: str | None = None) -> None:
        self._kit = kit
        self._id = id if id is not None else f"slimtools:{kit.name}"

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
        return await _call(self._kit, name, tool_args)


def to_pydantic_ai_toolset(kit: Toolkit, *, id: str | None = None) -> SlimToolset:
    """The toolkit as a toolset for ``Agent(toolsets=[...])`` (recommended; see module doc)."""
    return SlimToolset(kit, id=id)


def to_pydantic_ai_tools(kit: Toolkit) -> list[Tool[Any]]:
    """The toolkit as ``Tool`` objects for ``Agent(tools=[...])``, get_record included.

    Malformed JSON arguments are handled by Pydantic AI as a retry prompt (see module doc);
    every other bad call is a failed result, as with :func:`to_pydantic_ai_toolset`.
    """
    return [
        Tool.from_schema(
            _bound(kit, spec.name),
            name=spec.name,
            description=spec.description or None,
            json_schema=copy.deepcopy(spec.parameters),
        )
        for spec in kit.tools
    ]


def _bound(kit: Toolkit, name: str) -> Callable[..., Coroutine[Any, Any, ToolReturn]]:
    async def run(**arguments: Any) -> ToolReturn:
        return await _call(kit, name, arguments)

    run.__name__ = name
    return run
