"""Which values fit a field's declared annotation: projection's shape rule, compiled once.

A brief shows a value only when it fits the shape its allowlist field declares, so nested
data never rides out whole under a name the allowlist meant for something smaller:

- scalar types (``str``, ``int``, ``float``, ``bool``), ``Literal`` and ``Enum`` annotations,
  and other classes (``datetime``, ``Decimal``) take any scalar: projection does not coerce,
  so a backend's ``"3"`` under ``int`` is shown as sent. An enum member is shown as its value
  when that is a scalar; a ``str`` subclass (``markupsafe.Markup``) as its plain string;
- ``list[X]`` (and tuples, sets) takes a list whose every item fits ``X``;
- ``dict[K, V]`` takes a mapping whose every value fits ``V``;
- a nested model (or a dotted name with children) takes a record, or a list of records, and
  projects it; a scalar there shows nothing; as the items of a list or mapping
  (``list[Model]``) it takes records only, so a list of lists shows nothing;
- ``X | Y`` takes what fits either; ``None`` fits every shape; ``Any`` takes anything.

What does not fit is omitted, never shown in part. Each field's check is built once, when the
allowlist is compiled, as a small closure: the hot path asks one question per value.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

MISSING: Any = object()
"""What a fit returns for a value that does not fit (the field is then omitted)."""

Fit = Callable[[Any], Any]
"""A compiled check: the value to show (normalised), or ``MISSING``."""

PLAIN = frozenset({str, int, float, bool, type(None)})
"""Exact JSON scalar types: shown as they are wherever scalars fit."""

_LISTS = (list, tuple, set, frozenset)
_LIST_ORIGINS = frozenset(
    {
        list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.MutableSequence,
        collections.abc.Set, collections.abc.MutableSet, collections.abc.Collection,
        collections.abc.Iterable,
    }
)  # fmt: skip
_MAP_ORIGINS = frozenset({dict, collections.abc.Mapping, collections.abc.MutableMapping})


def is_record(value: Any) -> bool:
    """True for a mapping, a model, a dataclass or an object whose data are attributes."""
    if isinstance(value, (Mapping, BaseModel)):
        return True
    if isinstance(value, (str, bytes, enum.Enum, type, *_LISTS)):
        return False
    return dataclasses.is_dataclass(value) or hasattr(value, "__dict__")


def fit_scalar(value: Any) -> Any:
    """``value`` as a scalar brief value, or ``MISSING`` for containers and objects."""
    if type(value) in PLAIN:
        return value
    if isinstance(value, enum.Enum):
        value = value.value
        if type(value) in PLAIN:
            return value
    # Subclasses become their base value: a ``str`` subclass with an attribute dictionary
    # (``Markup``) would otherwise look like an object, and JSON shows only the base anyway.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if is_record(value) or isinstance(value, (*_LISTS, bytes, bytearray, type)):
        return MISSING
    return value  # Decimal, datetime, UUID ...: encoded as one JSON scalar


def _fit_list(item: Fit | None) -> Fit:
    def fit(value: Any) -> Any:
        if not isinstance(value, _LISTS):
            return MISSING
        if item is None:
            return list(value)
        out = []
        for x in value:
            shown = x if x is None else item(x)
            if shown is MISSING:
                return MISSING
            out.append(shown)
        return out

    return fit


def _fit_map(item: Fit | None) -> Fit:
    def fit(value: Any) -> Any:
        if not isinstance(value, Mapping):
            return MISSING
        if item is None:
            return dict(value)
        out = {}
        for key, x in value.items():
            shown = x if x is None else item(x)
            if shown is MISSING:
                return MISSING
            out[key] = shown
        return out

    return fit


def fit_records(project: Callable[[Any], dict[str, Any]], *, lists: bool = True) -> Fit:
    """A nested allowlist's fit: a record, or (with ``lists``) a list of records (or nulls),
    projected. Items of a declared list (``list[Model]``) take records only."""

    def fit(value: Any) -> Any:
        if is_record(value):
            return project(value)
        if not lists or not isinstance(value, (list, tuple)):
            return MISSING
        out: list[Any] = []
        for x in value:
            if x is None:
                out.append(None)
            elif is_record(x):
                out.append(project(x))
            else:
                return MISSING
        return out

    return fit


def _fit_any_of(fits: list[Fit]) -> Fit:
    def fit(value: Any) -> Any:
        for one in fits:
            shown = one(value)
            if shown is not MISSING:
                return shown
        return MISSING

    return fit


def _fit_instance(cls: type) -> Fit:
    def fit(value: Any) -> Any:
        return value if isinstance(value, cls) else fit_scalar(value)

    return fit


def _any_of(
    members: list[Any],
    nested: Callable[[type[BaseModel]], Callable[[Any], dict[str, Any]]],
    *,
    item: bool = False,
) -> tuple[Fit | None, bool]:
    """The fit of a union of ``members``: what fits any of them."""
    parts = [compile_fit(member, nested, item=item) for member in members]
    if not parts or any(fit is None for fit, _ in parts):
        return None, True
    if len(parts) == 1:
        return parts[0]
    return _fit_any_of([fit for fit, _ in parts if fit is not None]), any(s for _, s in parts)


def compile_fit(
    annotation: Any,
    nested: Callable[[type[BaseModel]], Callable[[Any], dict[str, Any]]],
    *,
    item: bool = False,
) -> tuple[Fit | None, bool]:
    """The fit of ``annotation`` and whether an exact JSON scalar fits it as is.

    Args:
        annotation: a field's declared type (``None`` or ``Any`` for no constraint).
        nested: returns the compiled projection of a nested model (its ``project``).
        item: ``annotation`` types the items of a declared list or mapping, where a nested
            model takes one record (a field typed with the model also takes a list of them).

    Returns:
        ``(fit, scalars_ok)``; ``fit`` is ``None`` when anything fits (then ``scalars_ok``).
    """
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is None or annotation is Any or annotation is object:
        return None, True
    if origin is typing.Annotated:
        return compile_fit(args[0], nested, item=item)
    if origin in (typing.Union, types.UnionType):
        return _any_of([a for a in args if a is not type(None)], nested, item=item)
    if origin is typing.Literal or annotation in (str, int, float, bool):
        return fit_scalar, True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return fit_records(nested(annotation), lists=not item), False
    if origin in _LIST_ORIGINS or annotation in _LIST_ORIGINS:
        items = [a for a in args if a is not Ellipsis]  # tuple[X, ...] and tuple[X, Y] too
        return _fit_list(_any_of(items, nested, item=True)[0] if items else None), False
    if origin in _MAP_ORIGINS or annotation in _MAP_ORIGINS:
        value = compile_fit(args[1], nested, item=True)[0] if len(args) == 2 else None
        return _fit_map(value), False
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return fit_scalar, True
    if isinstance(annotation, type) and not typing.is_typeddict(annotation):
        return _fit_instance(annotation), True
    if isinstance(annotation, type):  # a TypedDict: a mapping as it is
        return _fit_map(None), False
    return None, True  # a TypeVar, a string forward reference ...: nothing to check against
