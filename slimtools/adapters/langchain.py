"""LangChain / LangGraph adapter: a toolkit as ``StructuredTool`` objects, get_record included.

The tools work wherever LangChain tools do: ``langchain.agents.create_agent``, LangGraph's
``ToolNode``, or ``model.bind_tools``. Each one:

- shows the model the toolkit's own JSON schema (``ToolSpec.parameters``), so ``page`` and
  ``limit`` appear with their types, defaults and descriptions;
- answers with ``response_format="content_and_artifact"``: the ``ToolMessage`` content is
  the compact envelope JSON the model reads (``ToolResult.text``) and its ``artifact`` is
  the same page as a plain JSON dict (``ToolResult.structured``) for the application, or
  the raw return value for a tool that is not slimmed (``get_record``'s text, say);
- turns every bad call (wrong types, unknown or missing fields, an unknown handle, a tool
  that raises) into a ``ToolMessage`` with ``status="error"`` whose content tells the
  model how to recover, instead of an exception out of the agent loop; a page past the
  end is an ordinary envelope whose hint names the valid pages.
"""

from __future__ import annotations

import copy
from typing import Any

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "slimtools.adapters.langchain needs LangChain: pip install 'slimtools[langchain]'"
    ) from exc

from slimtools.toolkit import Toolkit, ToolResult, ToolSpec

__all__ = ["to_langchain_tools"]


def to_langchain_tools(kit: Toolkit, *, session: str | None = None) -> list[StructuredTool]:
    """Every tool of ``kit``, its ``get_record`` companion included, as LangChain tools.

    Args:
        kit: the toolkit to expose.
        session: the handle session the tools run in; ``None`` uses the session bound with
            ``slimtools.session(...)`` at call time, else the toolkit's default.

    Returns:
        One ``StructuredTool`` per ``kit.tools`` entry, in the same order. ``invoke`` runs
        through ``kit.call``; ``ainvoke`` awaits ``kit.acall`` for async tools and runs sync
        ones through ``kit.call`` in LangChain's executor.
    """
    return [_structured_tool(kit, spec, session) for spec in kit.tools]


def _structured_tool(kit: Toolkit, spec: ToolSpec, session: str | None) -> StructuredTool:
    """One ``StructuredTool`` that validates and dispatches through ``kit``."""
    name = spec.name

    def run(**arguments: Any) -> tuple[str, Any]:
        return _content_and_artifact(kit.call(name, arguments, session=session))

    async def arun(**arguments: Any) -> tuple[str, Any]:
        return _content_and_artifact(await kit.acall(name, arguments, session=session))

    # args_schema is the JSON Schema dict, not ``spec.args_model``: with a dict LangChain
    # passes the model's arguments through untouched, so they are validated once, by
    # ``kit.call``, and a bad call gets the toolkit's recovery message. With the pydantic
    # model LangChain would validate first and answer with its own pydantic error text
    # (or, inside ToolNode, raise its own ToolInvocationError): a second implementation of
    # the same rule, with messages no other adapter shares.
    return StructuredTool.from_function(
        func=run,
        # Only async tools get a coroutine. For a sync tool ``ainvoke`` then runs ``run`` in
        # LangChain's executor (context copied, so a bound session follows), as it does for
        # any sync tool, and LangChain's callbacks see the same thread they always do.
        coroutine=arun if spec.is_async else None,
        name=name,
        description=spec.description,
        args_schema=copy.deepcopy(spec.parameters),
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _content_and_artifact(result: ToolResult) -> tuple[str, Any]:
    """The ``(content, artifact)`` pair LangChain expects, or a ``ToolException`` on error.

    Raising ``ToolException`` (caught by ``handle_tool_error=True``) is how a LangChain tool
    marks its ``ToolMessage`` with ``status="error"``; the message is the toolkit's text.
    """
    if result.is_error:
        raise ToolException(result.text)
    if isinstance(result.value, ToolMessage):  # a wrapped tool's result, passed through
        return result.value.content, result.value.artifact  # type: ignore[return-value]
    artifact = result.structured if result.structured is not None else result.value
    return result.text, artifact
