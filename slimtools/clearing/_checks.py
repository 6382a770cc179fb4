"""Validation of policy fields, with messages that name the field and the bad value."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from slimtools.categories import CATEGORIES
from slimtools.errors import ConfigurationError


def frozen_map(value: Any, name: str, *, values: Callable[[Any], bool]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{name} must be a mapping, got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str) or not values(item):
            raise ConfigurationError(f"{name} has an invalid entry {key!r}: {item!r}")
    return MappingProxyType(dict(value))


def tool_names(value: Any, name: str) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ConfigurationError(f"{name} must be a collection of tool names, not {value!r}")
    names = frozenset(value)
    if not all(isinstance(n, str) for n in names):
        raise ConfigurationError(f"{name} must hold only str tool names, got {sorted(names)!r}")
    return names


def is_turns(item: Any) -> bool:
    return item is None or (isinstance(item, int) and not isinstance(item, bool) and item >= 0)


def check_count(value: Any, name: str, *, optional: bool, minimum: int = 0) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        kind = "None or " if optional else ""
        raise ConfigurationError(f"{name} must be {kind}an int >= {minimum}, got {value!r}")


def check_counter(counter: Any) -> None:
    """Refuse a ``token_counter`` that is not callable or answers a probe with anything but
    an int (``len(text) / 4`` is a float, which placeholders would show as ``~756.75...
    tokens``; ``None`` would fail deep in a pass). A counter that raises on the probe (a
    client not connected yet) is left to its first use."""
    if not callable(counter):
        raise ConfigurationError("token_counter must be a callable from str to int")
    try:
        answer = counter("a probe of the token counter")
    except Exception:
        return
    try:
        if not isinstance(answer, bool):
            operator.index(answer)  # int, or an int-like (a numpy integer)
            return
    except TypeError:
        pass
    raise ConfigurationError(
        f"token_counter must return an int, got {type(answer).__name__} {answer!r}"
        " (round it: lambda text: int(...))"
    )


def check_categories(categories: Mapping[str, str], retention: Mapping[str, Any]) -> None:
    """Refuse a declared category that is neither built in nor given a ``retention``: a
    typo (``"serach"``) would otherwise clear the tool after ``keep_turns``, unnoticed."""
    known = CATEGORIES | set(retention)
    for tool, category in categories.items():
        if category not in known:
            raise ConfigurationError(
                f"categories[{tool!r}] is {category!r}, not a category: use one of "
                f"{', '.join(sorted(known))}, or give {category!r} a retention"
            )
