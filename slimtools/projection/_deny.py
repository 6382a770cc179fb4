"""What a ``deny=`` name matches: the one statement of the rule (pure).

``deny=["ssn", "user.email"]`` names keys. A name matches a key **at any depth** of a
result (a record's own key, a nested object's, an item's of a list on the way); a dotted
path ``user.email`` matches an ``email`` key directly inside a ``user`` key, wherever that
``user`` stands. Keys are compared **folded** (:func:`fold`): case ignored, ``_``, ``-`` and
spaces dropped, so ``ssn`` also matches ``SSN``, ``S-S-N`` and ``s_s_n``, and
``social_security_number`` matches ``socialSecurityNumber``. Deny lists name secrets:
matching more places than their author pictured is the safe side.

The paths are compiled once into a tree of folded steps (:func:`compile_deny`);
:func:`slimtools.projection._clean.apply_deny` applies it to data, :func:`denied_names`
gives the names text scanning masks (``key: value`` pairs), and :func:`path_denied` tells an
allowlist which of its fields read a denied path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeAlias

from slimtools.errors import ConfigurationError

DenyTree: TypeAlias = dict[str, "DenyTree | None"]
"""Denied paths by folded step: ``None`` denies the key; a subtree denies paths below it."""

MIN_CHARS = 5
"""A denied value is masked elsewhere only when its text has at least this many characters.

Strings shorter than that and numbers written with fewer characters (``1234``, ``0.5``),
booleans and ``None`` are exempt: they are not specific enough to identify anything."""

_FOLDED: dict[str, str] = {}
"""Keys folded so far: records repeat the same few keys, so each is folded once."""
_FOLDED_MAX = 65_536
_FOLD_OUT = str.maketrans("", "", "_- ")


def fold(key: str) -> str:
    """``key`` as deny compares it: lower case, without ``_``, ``-`` and spaces."""
    folded = _FOLDED.get(key)
    if folded is None:
        folded = key.lower().translate(_FOLD_OUT)
        if len(_FOLDED) >= _FOLDED_MAX:  # a result of endless distinct keys: start afresh
            _FOLDED.clear()
        _FOLDED[key] = folded
    return folded


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
        steps = [fold(s) for s in path.split(".")] if isinstance(path, str) else []
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


def path_denied(tree: DenyTree | None, path: Sequence[str | int]) -> bool:
    """Whether a source path (an allowlisted field's) reads a denied key, or inside one.

    The path is matched from each of its steps, as data is (integer steps, list indices,
    are crossed without a step of their own).
    """
    if not tree:
        return False
    steps = [fold(s) for s in path if isinstance(s, str)]
    for start in range(len(steps)):
        node: DenyTree | None = tree
        for step in steps[start:]:
            assert node is not None
            if step not in node:
                break
            node = node[step]
            if node is None:
                return True
    return False


def denied_names(tree: DenyTree | None) -> frozenset[str]:
    """The folded keys ``tree`` denies whole, at any depth: the pairs text scanning masks."""
    names: set[str] = set()
    stack = [tree] if tree else []
    while stack:
        node = stack.pop()
        for key, sub in node.items():
            if sub is None:
                names.add(key)
            else:
                stack.append(sub)
    return frozenset(names)


def all_names(tree: DenyTree | None) -> frozenset[str]:
    """Every folded step ``tree`` names, at any depth (the names a free text may quote)."""
    names: set[str] = set()
    stack = [tree] if tree else []
    while stack:
        node = stack.pop()
        names.update(node)
        stack.extend(sub for sub in node.values() if sub)
    return frozenset(names)


def spelled(name: str) -> str:
    """A regex matching every spelling of the folded ``name`` in text: any case (give
    ``re.IGNORECASE``), with ``_``, ``-`` or a space between its letters."""
    return "[_\\- ]*".join(re.escape(ch) for ch in name)
