"""Which of a tool's parameters the model sees, and which carry secrets.

A parameter is model-visible when it is in the tool's argument schema. These are not, and so
never appear in the schema, in hints or in a "next page" call:

- parameters frameworks inject: LangChain's ``InjectedToolArg`` annotations (``InjectedState``,
  ``InjectedStore``, ``InjectedToolCallId``) and ``ToolRuntime``, Pydantic AI's ``RunContext``,
  the OpenAI Agents SDK's ``RunContextWrapper``/``ToolContext``;
- parameters the application marks ``Annotated[..., Hidden]`` (it supplies them itself);
- secrets: values typed ``SecretStr``/``SecretBytes`` or marked ``Annotated[..., Secret]``,
  which are also removed from the error messages the model reads.

Frameworks are recognised by class name and module along the annotation's MRO, as each
framework's wrap module declares them (``slimtools._frameworks``), so nothing here names or
imports a framework. Framework context (run contexts, graph state, tool-call ids) changes on
every call and is left out of the page-1 snapshot key; hidden and secret arguments change the
query and key it (a secret by its revealed value, only ever hashed).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import SecretBytes, SecretStr

from slimtools._frameworks import loaded_adapters


class _Marker:
    """A parameter annotation marker (``Annotated[str, Hidden]``)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"slimtools.{self._name}"


Hidden: Any = _Marker("Hidden")
"""``Annotated[T, Hidden]``: the application passes this argument, the model never sees it.

It is left out of the tool's schema and of hints, and still keys the page-1 snapshot, so a
"next page" call is exact once the application passes the same value again.
"""

Secret: Any = _Marker("Secret")
"""``Annotated[T, Secret]``: a hidden argument whose value is also removed from error messages.

Values typed ``pydantic.SecretStr`` or ``SecretBytes`` are secrets without the marker.
"""

VISIBLE, HIDDEN, CONTEXT, SECRET = "visible", "hidden", "context", "secret"

_Names = frozenset[tuple[str, str]]


def _framework_classes() -> tuple[_Names, _Names]:
    """The injected-context and hidden annotation classes the loaded frameworks declare.

    Each framework's wrap module declares them (``slimtools._frameworks``); a framework
    whose module cannot be imported here (an incompatible version) declares none.
    """
    context: set[tuple[str, str]] = set()
    hidden: set[tuple[str, str]] = set()
    for adapter in loaded_adapters(skip_broken=True):
        context.update(getattr(adapter, "CONTEXT_CLASSES", ()))
        hidden.update(getattr(adapter, "HIDDEN_CLASSES", ()))
    return frozenset(context), frozenset(hidden)


def _named(cls: Any, names: frozenset[tuple[str, str]]) -> bool:
    """True when ``cls`` or a base class is one of ``names``."""
    for base in getattr(cls, "__mro__", ()):
        module = str(getattr(base, "__module__", "")).partition(".")[0]
        if (module, base.__name__) in names:
            return True
    return False


def role(annotation: Any, classes: tuple[_Names, _Names] | None = None) -> str:
    """The role of a parameter annotated ``annotation``: visible, hidden, context or secret.

    ``classes``: the frameworks' ``(context, hidden)`` classes (default: read now).
    """
    context_classes, hidden_classes = classes or _framework_classes()
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        for meta in metadata:
            if meta is Secret:
                return SECRET
            if meta is Hidden:
                return HIDDEN
            cls = meta if isinstance(meta, type) else type(meta)
            if _named(cls, context_classes):
                return CONTEXT
            if _named(cls, hidden_classes):
                return HIDDEN
        return role(base, (context_classes, hidden_classes))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        found = {
            role(arg, (context_classes, hidden_classes)) for arg in typing.get_args(annotation)
        }
        return next((r for r in (SECRET, CONTEXT, HIDDEN) if r in found), VISIBLE)
    cls = typing.get_origin(annotation) or annotation
    if isinstance(cls, type) and issubclass(cls, (SecretStr, SecretBytes)):
        return SECRET
    if _named(cls, context_classes):
        return CONTEXT
    return VISIBLE


@dataclass(frozen=True, slots=True)
class Roles:
    """A tool's parameters by role (names), derived once from its signature."""

    hidden: frozenset[str] = frozenset()
    """Not model-visible: framework context, hidden and secret parameters."""
    context: frozenset[str] = frozenset()
    """Framework context: left out of the snapshot key too."""
    secret: frozenset[str] = frozenset()
    """Secrets: revealed for the snapshot key only, removed from error messages."""


NO_ROLES = Roles()


def roles(fn: Callable[..., Any]) -> Roles:
    """The roles of ``fn``'s parameters (annotations resolved where they can be)."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: read the raw annotations
        hints = {}
    by_role: dict[str, set[str]] = {HIDDEN: set(), CONTEXT: set(), SECRET: set()}
    classes = _framework_classes()
    for param in inspect.signature(fn).parameters.values():
        found = role(hints.get(param.name, param.annotation), classes)
        if found != VISIBLE:
            by_role[found].add(param.name)
    if not any(by_role.values()):
        return NO_ROLES
    return Roles(
        hidden=frozenset(set().union(*by_role.values())),
        context=frozenset(by_role[CONTEXT]),
        secret=frozenset(by_role[SECRET]),
    )


def reveal(value: Any) -> Any:
    """A secret's underlying value (``SecretStr.get_secret_value()``), else ``value`` itself."""
    getter = getattr(value, "get_secret_value", None)
    return getter() if callable(getter) else value


def secret_defaults(fn: Callable[..., Any], param_roles: Roles) -> tuple[str, ...]:
    """The text of ``fn``'s secret parameters' defaults: what errors must never show."""
    if not param_roles.secret:
        return ()
    values = []
    for param in inspect.signature(fn).parameters.values():
        if param.name in param_roles.secret and param.default is not inspect.Parameter.empty:
            value = reveal(param.default)
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            if isinstance(value, str):
                values.append(value)
    return tuple(values)
