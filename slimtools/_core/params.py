"""Which of a tool's parameters the model sees, and which carry secrets.

A parameter is model-visible when it is in the tool's argument schema. These are not, and so
never appear in the schema, in hints or in a "next page" call:

- parameters frameworks inject: LangChain's ``InjectedToolArg`` annotations (``InjectedState``,
  ``InjectedStore``, ``InjectedToolCallId``) and ``ToolRuntime``, Pydantic AI's ``RunContext``,
  the OpenAI Agents SDK's ``RunContextWrapper``/``ToolContext``;
- parameters the application marks ``Annotated[..., Hidden]`` (it supplies them itself),
  whose values are also removed from the error messages the model reads;
- secrets: values typed ``SecretStr``/``SecretBytes`` or marked ``Annotated[..., Secret]``,
  hidden the same way.

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import SecretBytes, SecretStr

from slimtools._frameworks import loaded_adapters
from slimtools.redaction import remove


class _Marker:
    """A parameter annotation marker (``Annotated[str, Hidden]``)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"slimtools.{self._name}"


Hidden: Any = _Marker("Hidden")
"""``Annotated[T, Hidden]``: the application passes this argument, the model never sees it.

It is left out of the tool's schema and of hints, the model cannot set it (even through
``**kwargs``), and its value (a string, bytes or an integer of four characters or more) is
removed from the error text ``Toolkit.call`` returns and from the tool's exception itself.
It still keys the page-1 snapshot, so a "next page" call is exact once the application
passes the same value again. It does not hide a value the tool puts in its *result*: what a
tool returns is the tool's to choose (an allowlist or ``deny`` governs that).
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


def withheld_defaults(fn: Callable[..., Any], param_roles: Roles) -> tuple[str, ...]:
    """The text of ``fn``'s hidden and secret parameters' defaults: what errors never show."""
    if not param_roles.hidden - param_roles.context:
        return ()
    defaults = {
        p.name: p.default
        for p in inspect.signature(fn).parameters.values()
        if p.default is not inspect.Parameter.empty
    }
    return withheld_values(param_roles, defaults)


def withheld_values(param_roles: Roles, arguments: Mapping[str, Any]) -> tuple[str, ...]:
    """The text of the hidden and secret values among ``arguments``: what errors never show.

    A string, bytes (as UTF-8) or an integer, a secret revealed. Framework context (graph
    state, run contexts) is the framework's, not a value the application hid.
    """
    names = param_roles.hidden - param_roles.context
    values: list[str] = []
    for name in names & arguments.keys():
        value = reveal(arguments[name])
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str):
            values.append(value)
    return tuple(values)


def hide_in_exception(exc: BaseException, values: tuple[str, ...]) -> None:
    """Remove ``values`` from ``exc``'s arguments, in place (its type and traceback stay).

    So a framework that shows ``str(exc)`` to the model never shows a hidden argument; an
    argument that is not text is read by its ``repr``, as ``str(exc)`` shows it.
    """
    try:
        args = tuple(_hidden_arg(a, values) for a in exc.args)
        if any(a is not b for a, b in zip(args, exc.args, strict=True)):
            exc.args = args
    except Exception:  # an exception type with unusual args is left as it is
        return


def _hidden_arg(arg: Any, values: tuple[str, ...]) -> Any:
    text = arg if isinstance(arg, str) else None
    if text is None:
        try:
            text = repr(arg)
        except Exception:
            return arg
    removed = remove(text, values)
    return arg if removed == text else removed
