"""Deny lists: record paths that no brief, detail view, stored record or snapshot may carry.

``project_fields(..., deny=["ssn", "user.email"])`` names paths in the records a tool returns
(dotted; a list on the way is crossed item by item, as dotted allowlist names are). They
are compiled once into a tree and applied two ways:

- into each allowlist (``Projection.from_spec(spec, deny=tree)``): a field that reads a denied
  path loses that source, and a field shown whole strips the denied paths inside its value,
  so deny wins over the allowlist without copying records on the hot path;
- to whole records (:func:`strip`): what a handle keeps when there is no ``detail=`` view.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from pydantic import BaseModel

from slimtools.errors import ConfigurationError
from slimtools.projection._shapes import Fit

DenyTree: TypeAlias = dict[str, "DenyTree | None"]
"""Denied paths by step: ``None`` removes the key; a subtree denies paths below it."""


def compile_deny(paths: Any) -> DenyTree | None:
    """The tree of ``deny=`` paths, ``None`` when empty; ``ConfigurationError`` when malformed."""
    if paths is None:
        return None
    if isinstance(paths, (str, bytes)) or not isinstance(paths, Sequence):
        raise ConfigurationError(
            f"deny= takes a list of field names or dotted paths, got {paths!r}"
        )
    tree: DenyTree = {}
    for path in paths:
        steps = path.split(".") if isinstance(path, str) else []
        if not steps or not all(steps):
            raise ConfigurationError(
                f"deny= entries are field names or dotted paths such as 'user.email', got {path!r}"
            )
        node = tree
        for step in steps[:-1]:
            child = node.setdefault(step, {})
            if child is None:  # an ancestor is denied whole already
                break
            node = child
        else:
            node[steps[-1]] = None
    return tree or None


def walk(tree: DenyTree, path: Sequence[str | int]) -> tuple[bool, DenyTree | None]:
    """Follow a source path through the tree: ``(denied, rest)``.

    ``denied`` is True when the path or one of its ancestors is denied; otherwise ``rest``
    is the subtree denied inside the value found at the path (``None``: nothing). Integer
    steps (list indices) are crossed without a step of their own, like lists in dotted names.
    """
    node: DenyTree | None = tree
    for step in path:
        if isinstance(step, int):
            continue
        assert node is not None
        if step not in node:
            return False, None
        node = node[step]
        if node is None:
            return True, None
    return False, node or None


def merge(a: DenyTree | None, b: DenyTree | None) -> DenyTree | None:
    """The union of two trees (a key denied whole in either stays denied whole)."""
    if a is None or b is None:
        return a if b is None else b
    out: DenyTree = dict(a)
    for key, sub in b.items():
        if key not in out:
            out[key] = sub
        elif out[key] is None or sub is None:
            out[key] = None
        else:
            out[key] = merge(out[key], sub)
    return out


def strip(value: Any, tree: DenyTree | None) -> Any:
    """``value`` as plain data without the denied paths (copied only where they lie).

    Records of every shape are read as ``record_to_plain`` reads them; lists are crossed.
    """
    if not tree:
        return value
    if isinstance(value, (list, tuple)):
        return [strip(item, tree) for item in value]
    if not isinstance(value, Mapping):
        if isinstance(value, BaseModel):
            value = value.model_dump()
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            value = dataclasses.asdict(value)
        elif isinstance(getattr(value, "__dict__", None), dict) and not isinstance(value, type):
            value = {k: v for k, v in vars(value).items() if not k.startswith("_")}
        else:
            return value
    out: dict[Any, Any] = {}
    for key, item in value.items():
        sub = tree.get(key, ...) if isinstance(key, str) else ...
        if sub is None:
            continue
        out[key] = item if sub is ... else strip(item, sub)
    return out


def strip_anywhere(value: Any, tree: DenyTree | None) -> Any:
    """``value`` without the denied paths matched at every depth: ``email`` goes from every
    object, ``user.email`` from every object's ``user``.

    For payloads whose records sit at an unknown path (a proxied server's result, a wrapped
    tool's): deny lists name secrets, so matching more places than the author pictured is the
    safe side. The input is never changed; containers are copied where they are crossed.
    """
    if not tree:
        return value
    if isinstance(value, (list, tuple)):
        return [strip_anywhere(item, tree) for item in value]
    if not isinstance(value, Mapping):
        return value
    return {
        key: strip_anywhere(item, tree) if isinstance(item, (Mapping, list, tuple)) else item
        for key, item in strip(value, tree).items()
    }


def allowed_paths(
    paths: tuple[tuple[str | int, ...], ...], deny: DenyTree | None
) -> tuple[tuple[tuple[str | int, ...], ...], DenyTree | None]:
    """The source paths deny leaves a field, and what deny removes inside their values."""
    if deny is None:
        return paths, None
    kept = []
    rest: DenyTree | None = None
    for path in paths:
        denied, inside = walk(deny, path)
        if not denied:
            kept.append(path)
            rest = merge(rest, inside)
    return tuple(kept), rest


def denying(fit: Fit | None, rest: DenyTree | None) -> Fit | None:
    """``fit`` applied to the value with the denied paths inside it removed first."""
    if rest is None:
        return fit
    if fit is None:
        return lambda value: strip(value, rest)
    return lambda value: fit(strip(value, rest))
