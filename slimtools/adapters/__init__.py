"""Framework adapters: register a slimtools ``Toolkit`` where users' agents already live.

Each adapter is its own module and imports its framework itself, so ``import slimtools``
never pulls one in; a missing framework raises an ``ImportError`` that names the extra
(``pip install 'slimtools[<extra>]'``):

- ``slimtools.adapters.langchain`` (``[langchain]``): ``to_langchain_tools(kit)`` ->
  ``StructuredTool`` objects for ``create_agent`` and LangGraph's ``ToolNode``.
- ``slimtools.adapters.langgraph`` (``[langchain]``): clearing stale tool results inside
  LangGraph graphs and ``create_agent`` runs.
- ``slimtools.adapters.mcp`` (``[mcp]``): ``to_mcp_server(kit)`` -> an official-SDK
  ``MCPServer``.
- ``slimtools.adapters.openai`` (``[openai]``), ``slimtools.adapters.anthropic``
  (``[anthropic]``), ``slimtools.adapters.openai_agents`` (``[openai-agents]``) and
  ``slimtools.adapters.pydantic_ai`` (``[pydantic-ai]``): tool specs and dispatch for
  those SDKs.

Every adapter is a thin shell over ``Toolkit.tools`` (names, descriptions, JSON schemas)
and ``Toolkit.call`` / ``Toolkit.acall`` (validation, dispatch, error messages), so the
model sees the same schema, the same envelope and the same recovery hints everywhere.
"""
