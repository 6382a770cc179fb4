"""Framework adapters: register a slimtools ``Toolkit`` where users' agents already live.

Each adapter is its own module and imports its framework itself, so ``import slimtools``
never pulls one in; a missing framework raises an ``ImportError`` that names the extra:

- ``slimtools.adapters.langchain``: ``to_langchain_tools(kit)`` -> LangChain
  ``StructuredTool`` objects for ``create_agent`` and LangGraph's ``ToolNode``
  (``pip install 'slimtools[langchain]'``).
- ``slimtools.adapters.mcp``: ``to_mcp_server(kit)`` -> an official-SDK ``MCPServer``
  (``pip install 'slimtools[mcp]'``).

Every adapter is a thin shell over ``Toolkit.tools`` (names, descriptions, JSON schemas)
and ``Toolkit.call`` / ``Toolkit.acall`` (validation, dispatch, error messages), so the
model sees the same schema, the same envelope and the same recovery hints everywhere.
"""
