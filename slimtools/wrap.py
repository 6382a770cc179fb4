"""``slimtools.wrap``: slim a tool you did not write, in process, and get it back in its kind.

It accepts a LangChain ``BaseTool`` (langchain-mcp-adapters' included), an OpenAI Agents
SDK ``FunctionTool``, a Pydantic AI ``Tool`` or a plain callable, and returns the same kind:
a forwarder around the original, slimmed by the same options as the decorators (or a proxy
config table) and registered on a toolkit, so its schema gains ``page``/``limit`` the way
every adapter shows them. Given a list, it returns the wrapped tools followed by
``get_record`` in the same kind. Results are shaped by the proxy's rules
(``slimtools.proxy._forward``): errors and images pass through, denied paths never enter.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from slimtools._core.scrub import denied_names, scrub_exception
from slimtools.errors import ConfigurationError
from slimtools.proxy._forward import Plan, slim
from slimtools.proxy._payload import guard_value
from slimtools.proxy.config import DEFAULT_MAX_TOKENS, ToolOptions, tool_options
from slimtools.toolkit import Toolkit, default_toolkit

__all__ = ["wrap"]

_FRAMEWORKS = (
    ("langchain_core", "slimtools.adapters._wrap_langchain"),
    ("agents", "slimtools.adapters._wrap_openai_agents"),
    ("pydantic_ai", "slimtools.adapters._wrap_pydantic_ai"),
)


def wrap(
    tool: Any,
    /,
    *,
    config: Mapping[str, Any] | None = None,
    toolkit: Toolkit | None = None,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    **options: Any,
) -> Any:
    """Slim ``tool`` (or each tool of a list) and return it in its own framework's kind.

    Args:
        tool: a LangChain ``BaseTool``, an Agents SDK ``FunctionTool``, a Pydantic AI
            ``Tool``, a plain callable, or a list of them (then ``get_record`` is appended).
        config: the options as a proxy config table (``{"fields": [...], "limit": 10}``).
        toolkit: where handles are kept and ``get_record`` reads (default:
            ``slimtools.default_toolkit``).
        max_tokens: the budget when no options are given: a larger result becomes an
            envelope; ``None`` leaves an unconfigured tool's results as they are.
        **options: the same options by keyword: ``fields`` (a list of paths, or a Pydantic
            allowlist model), ``items``, ``deny``, ``key``, ``limit``, ``max_limit``,
            ``max_tokens``, ``category``, ``head``, ``tail``, ``description``,
            ``on_unreadable``. With ``fields`` or ``deny``, a result that cannot be read as
            records is withheld (``on_unreadable="text"`` opts in to showing it; see
            ``project_fields``).

    Raises:
        ConfigurationError: an unknown option, a bad value, or both ``config`` and options.
        TypeError: ``tool`` is of no supported kind.
    """
    kit = toolkit or default_toolkit
    if isinstance(tool, (list, tuple)):
        wrapped = [
            wrap(t, config=config, toolkit=kit, max_tokens=max_tokens, **options) for t in tool
        ]
        return [*wrapped, companion(kit, like=tool[0])] if tool else []
    parsed = _options(config, options)
    plan = Plan(parsed, max_tokens)
    adapter = _adapter(tool)
    category = parsed.category if parsed else None
    description = parsed.description if parsed else None
    if adapter is None:
        name = getattr(tool, "__name__", None)
        if not callable(tool) or not isinstance(name, str):
            raise TypeError(
                "wrap() takes a LangChain BaseTool, an Agents SDK FunctionTool, a Pydantic AI "
                f"Tool or a plain function, got {type(tool).__name__}"
            )
        fn = _guarding(tool, parsed) if parsed and parsed.guards else tool
        slimmed = slim(fn, plan, name=name)
        return kit.tool(slimmed, name=name, description=description, category=category)
    name = tool.name
    schema = adapter.schema(tool)
    forward = adapter.forwarder(tool, plan)
    forward.__name__ = name
    slimmed = slim(forward, plan, name=name, paged=_free(schema))
    kit.tool(
        slimmed,
        name=name,
        description=description or getattr(tool, "description", None) or name,
        category=category,
        parameters=schema,
    )
    return adapter.build(kit, name)


def companion(kit: Toolkit, *, like: Any) -> Any:
    """``kit``'s ``get_record`` in the same kind as the tool ``like``."""
    adapter = _adapter(like)
    if adapter is None:
        return kit.get_record
    if hasattr(adapter, "build"):
        return adapter.build(kit, kit.companion_name)
    return kit.get_record  # pragma: no cover - every adapter builds


def _options(config: Mapping[str, Any] | None, options: dict[str, Any]) -> ToolOptions | None:
    if config is not None and options:
        raise ConfigurationError("wrap() takes options either as config= or as keywords")
    table = dict(config if config is not None else options)
    if not table:
        return None
    model = table.get("fields")
    if isinstance(model, type) and issubclass(model, BaseModel):
        del table["fields"]
        parsed = tool_options(table, source="wrap()")
        return ToolOptions(**{**parsed.__dict__, "model": model})
    return tool_options(table, source="wrap()")


def _free(schema: Mapping[str, Any]) -> bool:
    props = schema.get("properties") or {}
    return "page" not in props and "limit" not in props


def _adapter(tool: Any) -> ModuleType | None:
    """The wrap module for ``tool``'s framework, imported only if that framework is loaded."""
    import sys

    for package, module in _FRAMEWORKS:
        if package in sys.modules:
            adapter = importlib.import_module(module)
            if adapter.accepts(tool):
                return adapter
    return None


def _guarding(fn: Any, options: ToolOptions) -> Any:
    """``fn`` whose results are read as records, withheld when they cannot be, and lose the
    denied paths (the caller's data is never changed): ``_payload.guard_value``. Its
    exceptions lose the values of denied ``key: value`` pairs (``_core.scrub``)."""
    tree, mode = options.deny_tree, options.on_unreadable
    names = denied_names(tree)
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def guarding_async(*args: Any, **kwargs: Any) -> Any:
            try:
                result = await fn(*args, **kwargs)
            except Exception as exc:
                scrub_exception(exc, names)
                raise
            return guard_value(result, tree, on_unreadable=mode)

        return guarding_async

    @functools.wraps(fn)
    def guarding(*args: Any, **kwargs: Any) -> Any:
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            scrub_exception(exc, names)
            raise
        return guard_value(result, tree, on_unreadable=mode)

    return guarding
