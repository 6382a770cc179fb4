"""``slimtools.wrap``: slim a tool you did not write, in process, and get it back in its kind.

It accepts a LangChain ``BaseTool`` (langchain-mcp-adapters' included), an OpenAI Agents
SDK ``FunctionTool``, a Pydantic AI ``Tool`` or a plain function, and returns the same kind:
a forwarder around the original, slimmed by the same options as the decorators (or a proxy
config table) and registered on a toolkit, so its schema gains ``page``/``limit`` the way
every adapter shows them. Given a list, it returns the wrapped tools followed by
``get_record`` in the same kind. Results are shaped by the proxy's rules
(``slimtools.foreign``): errors and images pass through, every block of them screened
by ``deny`` and the allowlist; denied paths never enter. Two tools of one name, a tool named
like the record tool, and ``response_format`` are refused.
"""

from __future__ import annotations

import functools
import inspect
import re
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from slimtools.errors import ConfigurationError
from slimtools.foreign import (
    DEFAULT_MAX_TOKENS,
    Plan,
    ToolOptions,
    WrapAdapter,
    adapter_for,
    can_page,
    guard_value,
    slim,
    tool_options,
)
from slimtools.projection import denied_names, scrub_exception
from slimtools.toolkit import Toolkit, default_toolkit

__all__ = ["wrap"]


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
            ``Tool``, a function (sync or async), a ``functools.partial`` (named after its
            function) or a callable object (named after its class, in snake case), or a list
            of them (then ``get_record`` is appended).
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
        ConfigurationError: an unknown option, a bad value, or both ``config`` and options;
            two tools of one name, or a tool named like the toolkit's record tool;
            ``response_format``, which ``wrap()`` does not add (the proxy does).
        TypeError: ``tool`` is of no supported kind.
    """
    kit = toolkit or default_toolkit
    if isinstance(tool, (list, tuple)):
        _refuse_collisions(kit, tool)
        wrapped = [
            wrap(t, config=config, toolkit=kit, max_tokens=max_tokens, **options) for t in tool
        ]
        return [*wrapped, companion(kit, like=tool[0])] if tool else []
    parsed = _options(config, options)
    adapter = adapter_for(tool)
    _refuse_collisions(kit, [tool])
    if adapter is None:
        return _wrap_callable(tool, kit, parsed, Plan(parsed, max_tokens))
    return _wrap_framework(
        tool, adapter, kit, parsed, Plan(parsed, max_tokens, screen_native=adapter.screen_native)
    )


def _wrap_framework(
    tool: Any, adapter: WrapAdapter, kit: Toolkit, parsed: ToolOptions | None, plan: Plan
) -> Any:
    """A framework's tool, slimmed, registered on ``kit`` and built back in its kind."""
    name = tool.name
    _origins(kit)[name] = id(tool)
    schema = adapter.schema(tool)
    forward = adapter.forwarder(tool, plan)
    forward.__name__ = name
    if parsed is not None and parsed.deny_tree:
        forward = _masking_errors(forward, denied_names(parsed.deny_tree))
    slimmed = slim(forward, plan, name=name, paged=can_page(schema))
    description = parsed.description if parsed else None
    kit.tool(
        slimmed,
        name=name,
        description=description or getattr(tool, "description", None) or name,
        category=parsed.category if parsed else None,
        parameters=schema,
    )
    return adapter.build(kit, name)


def _wrap_callable(tool: Any, kit: Toolkit, parsed: ToolOptions | None, plan: Plan) -> Any:
    """A plain function, a ``functools.partial`` or a callable object, slimmed and registered
    on ``kit`` (its signature kept, the partial's bound arguments left out)."""
    name = _callable_name(tool)
    if name is None:
        raise TypeError(
            "wrap() takes a LangChain BaseTool, an Agents SDK FunctionTool, a Pydantic AI "
            f"Tool, a function, a functools.partial or a callable object, got {type(tool).__name__}"
        )
    # A callable object is run through its bound __call__, so an async one is seen as such.
    target = (
        tool if inspect.isroutine(tool) or isinstance(tool, functools.partial) else tool.__call__
    )
    fn = _guarding(target, parsed) if parsed and parsed.guards else target
    slimmed = slim(fn, plan, name=name)
    _origins(kit)[name] = id(tool)
    described = parsed.description if parsed else None
    return kit.tool(
        slimmed,
        name=name,
        description=described or _callable_doc(tool),
        category=parsed.category if parsed else None,
    )


def _callable_name(tool: Any) -> str | None:
    """The tool name of a callable: its ``__name__``, a partial's function's, or a callable
    object's class name in snake case (``TicketSearch()`` is ``ticket_search``)."""
    if not callable(tool) or isinstance(tool, type):
        return None
    inner = _innermost(tool)
    name = getattr(inner, "__name__", None)
    if isinstance(name, str):
        return name
    return _SNAKE.sub("_", type(inner).__name__).lower()


_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _callable_doc(tool: Any) -> str | None:
    """What the model reads of a callable: a partial's function's docstring (not
    ``functools.partial``'s own), else the callable's (an object's: its class's)."""
    return inspect.getdoc(_innermost(tool))


def _innermost(tool: Any) -> Any:
    """The function a (possibly nested) ``functools.partial`` calls; ``tool`` otherwise."""
    while isinstance(tool, functools.partial):
        tool = tool.func
    return tool


def companion(kit: Toolkit, *, like: Any) -> Any:
    """``kit``'s ``get_record`` in the same kind as the tool ``like``."""
    adapter = adapter_for(like)
    return kit.get_record if adapter is None else adapter.build(kit, kit.companion_name)


_ORIGINS: weakref.WeakKeyDictionary[Toolkit, dict[str, int]] = weakref.WeakKeyDictionary()
"""For each toolkit, which original each wrapped name came from (wrapping it again is fine)."""


def _origins(kit: Toolkit) -> dict[str, int]:
    return _ORIGINS.setdefault(kit, {})


def _name_of(tool: Any) -> str | None:
    name = getattr(tool, "name", None) if adapter_for(tool) is not None else None
    return name if isinstance(name, str) else _callable_name(tool)


def _refuse_collisions(kit: Toolkit, tools: Sequence[Any]) -> None:
    """Refuse two tools of one name (the second would answer for both) and the companion's.

    Raises:
        ConfigurationError: naming the clash and how to resolve it.
    """
    seen: dict[str, Any] = {}
    origins = _origins(kit)
    for tool in tools:
        name = _name_of(tool)
        if name is None:
            continue
        if name == kit.companion_name:
            raise ConfigurationError(
                f"wrap(): the tool {name!r} is named like toolkit {kit.name!r}'s record tool; "
                f"name the record tool otherwise: wrap(..., toolkit=Toolkit({kit.name!r}, "
                f'companion_name="get_full_record"))'
            )
        taken = name in seen and seen[name] is not tool
        taken = taken or (name in origins and origins[name] != id(tool))
        if taken or (name not in origins and name in kit):
            raise ConfigurationError(
                f"wrap(): two tools are named {name!r} in toolkit {kit.name!r}, so one would "
                "answer for both; rename one (a LangChain or Agents SDK tool: tool.name = "
                '"..."; a function: wrap a def of another name) or wrap it on its own '
                "Toolkit(...)"
            )
        seen[name] = tool


def _options(config: Mapping[str, Any] | None, options: dict[str, Any]) -> ToolOptions | None:
    if config is not None and options:
        raise ConfigurationError("wrap() takes options either as config= or as keywords")
    if config is not None and not isinstance(config, Mapping):
        raise ConfigurationError(
            "wrap(): config must be a mapping like a proxy [tools.NAME] table "
            f'({{"fields": [...], "limit": 10}}), got {type(config).__name__}'
        )
    table = dict(config if config is not None else options)
    if not table:
        return None
    if table.get("response_format"):
        raise ConfigurationError(
            "wrap() does not add a response_format parameter: choose the fields the model "
            "needs, or wrap the tool twice (under two names) with and without fields= "
            "(the MCP proxy's response_format = true does add it)"
        )
    return tool_options(table, source="wrap()")


def _guarding(fn: Any, options: ToolOptions) -> Any:
    """``fn`` whose results are read as records, withheld when they cannot be, and lose the
    denied paths (the caller's data is never changed): ``guard_value``. Its
    exceptions (a generator's too, raised as its items are read) lose the values of denied
    ``key: value`` pairs (``projection._scrub``)."""
    tree, mode, items, key = options.deny_tree, options.on_unreadable, options.items, options.key
    names = denied_names(tree)
    tables = not options.allowlisted  # an allowlist's pipeline reads tables itself
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        streams = inspect.isasyncgenfunction(fn)  # its result is what it yields

        @functools.wraps(fn)
        async def guarding_async(*args: Any, **kwargs: Any) -> Any:
            try:
                if streams:
                    result = [item async for item in fn(*args, **kwargs)]
                else:
                    result = await fn(*args, **kwargs)
                return guard_value(
                    result, tree, on_unreadable=mode, items=items, key=key, tables=tables
                )
            except Exception as exc:
                scrub_exception(exc, names)
                raise

        return guarding_async

    @functools.wraps(fn)
    def guarding(*args: Any, **kwargs: Any) -> Any:
        try:  # a generator runs in guard_value, as its items are read
            result = fn(*args, **kwargs)
            return guard_value(
                result, tree, on_unreadable=mode, items=items, key=key, tables=tables
            )
        except Exception as exc:
            scrub_exception(exc, names)
            raise

    return guarding


def _masking_errors(fn: Any, names: frozenset[str]) -> Any:
    """``fn`` (a framework tool's forwarder) whose exceptions lose the values of denied
    ``key: value`` pairs in place, as :func:`_guarding`'s do: with ``deny`` and no
    allowlist nothing later knows which keys to mask."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def masking_async(**arguments: Any) -> Any:
            try:
                return await fn(**arguments)
            except Exception as exc:
                scrub_exception(exc, names)
                raise

        return masking_async

    @functools.wraps(fn)
    def masking(**arguments: Any) -> Any:
        try:
            return fn(**arguments)
        except Exception as exc:
            scrub_exception(exc, names)
            raise

    return masking
