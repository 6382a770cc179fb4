"""Plain helpers for the core tests: build a tool of each callable kind, call it, read hints.

``conftest.py`` exposes these as fixtures; hypothesis tests import them directly (a
function-scoped fixture would be shared across generated examples).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

KINDS = ("function", "async_function", "method", "classmethod", "staticmethod")
"""Every callable kind a slimming decorator must support (wrapt's matrix)."""

Decorator = Callable[[Any], Any]


def apply(decorators: Sequence[Decorator], fn: Any) -> Any:
    """Apply ``decorators`` as if written top to bottom above ``fn``."""
    for deco in reversed(decorators):
        fn = deco(fn)
    return fn


def build_tool(
    kind: str, decorators: Sequence[Decorator], body: Callable[[str], Any], *, name: str = "search"
) -> Any:
    """A tool ``name(query: str)`` of ``kind`` returning ``body(query)``, decorated as given.

    Methods are returned bound (``Service().search``); classmethods and staticmethods as
    read from the class, the way a user would pass them to a framework. The decorators sit
    above ``@classmethod``/``@staticmethod``, the order wrapt recommends.
    """
    if kind == "function":

        def search(query: str) -> Any:
            """Search the backend."""
            return body(query)

        return apply(decorators, _named(search, name))
    if kind == "async_function":

        async def asearch(query: str) -> Any:
            """Search the backend."""
            return body(query)

        return apply(decorators, _named(asearch, name))

    def method(self: Any, query: str) -> Any:
        """Search the backend."""
        return body(query)

    def static(query: str) -> Any:
        """Search the backend."""
        return body(query)

    if kind == "method":
        service = type("Service", (), {name: apply(decorators, _named(method, name))})
        return getattr(service(), name)
    if kind == "classmethod":
        member = apply(decorators, classmethod(_named(method, name)))
        return getattr(type("Service", (), {name: member}), name)
    if kind == "staticmethod":
        member = apply(decorators, staticmethod(_named(static, name)))
        return getattr(type("Service", (), {name: member}), name)
    raise ValueError(f"unknown callable kind {kind!r}")


def _named(fn: Any, name: str) -> Any:
    fn.__name__ = name
    fn.__qualname__ = name
    return fn


def call_sync(tool: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``tool`` and return its result, running it to completion when it is async."""
    result = tool(*args, **kwargs)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def _await(value: Any) -> Any:
    return await value


_JSON_NAMES = {"true": True, "false": False, "null": None}


def calls_in(hint: str, tool: str) -> list[dict[str, Any]]:
    """Every call of ``tool`` written in ``hint``, as keyword arguments (JSON values).

    ``calls_in('3 more: search(query="a", page=2)', "search")`` is ``[{"query": "a", "page": 2}]``;
    positional arguments are returned under the key ``"_args"``.
    """
    found: list[dict[str, Any]] = []
    start = hint.find(tool + "(")
    while start != -1:
        before = hint[start - 1] if start else " "
        if before.isalnum() or before == "_":
            start = hint.find(tool + "(", start + 1)
            continue
        end = hint.find(")", start)
        while end != -1:
            parsed = _parse_call(hint[start : end + 1])
            if parsed is not None:
                found.append(parsed)
                break
            end = hint.find(")", end + 1)
        start = hint.find(tool + "(", start + 1)
    return found


def _parse_call(source: str) -> dict[str, Any] | None:
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    out: dict[str, Any] = {k.arg or "**": _literal(k.value) for k in node.keywords}
    if node.args:
        out["_args"] = [_literal(a) for a in node.args]
    return out


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    # JSON strings and numbers are Python literals too; only the names above differ.
    return ast.literal_eval(node)


def next_call(hint: str, tool: str) -> dict[str, Any] | None:
    """The call of ``tool`` that a hint offers for more items (one that sets ``page``)."""
    for found in calls_in(hint, tool):
        if "page" in found:
            return found
    return None
