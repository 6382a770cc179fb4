"""``apply_deny``: the one function every surface calls to keep denied data from the model.

The decorators (on the records a tool returns, so on briefs, handles, snapshots and
``get_record``), ``wrap()`` and the proxy (on a foreign tool's data, and on every block of a
passed-through result) all call :func:`apply_deny`. In one pass over the data it:

1. removes every key a ``deny=`` name matches, at any depth (``projection._deny`` states
   what matches), and keeps the values found there (those of at least :data:`MIN_CHARS`);
2. masks the denied ``key: value`` pairs strings quote (``'{"ssn": "..."}'`` in a field);
3. masks those values, and the ones the pairs held, wherever else a string holds them, in
   any case and in their common encodings (``_scrub.Secrets``), except the handle key's
   own value: an ``id`` equal to a denied e-mail stays, so its record stays reachable.

Masking runs before anything is clipped or projected, so a clip never shows a denied
value's prefix. The usual result, a list of flat dicts, takes a shortcut (:func:`_flat`):
the records lose their denied top-level keys by a copy, and one JSON dump of the page
tells whether anything else needs the walk; ``tests/core/test_deny_rule.py`` pins the two.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import orjson
from pydantic import BaseModel

from slimtools.projection._deny import MIN_CHARS, DenyTree, denied_names, fold
from slimtools.projection._scrub import EXACT_MAX, Secrets, pairs_masked

__all__ = ["apply_deny"]

_SCALARS = (int, float, bool, type(None))


class _Rule:
    """A deny tree compiled for the shortcut: one generated pass per page (:func:`_compile`)
    that copies each record holding a top-level key it denies without that key, and the
    object under a dotted path's first step without the keys denied inside it.

    The keys are the spellings met so far: when a page still names a denied key after the
    pass, its top-level keys are learnt and the pass is generated again (so at most once
    per new spelling).
    """

    __slots__ = ("drop", "heads", "names", "seen", "strip", "tree")

    def __init__(self, tree: DenyTree) -> None:
        self.tree = tree
        self.names = denied_names(tree)
        self.seen: set[Any] = set()  # raw top-level keys met so far
        self.drop: tuple[str, ...] = ()  # those of them denied whole
        self.heads: dict[str, DenyTree] = {}  # those of them a dotted path starts with
        self.strip = _compile(self.drop, self.heads, tree)

    def learn(self, records: Sequence[Any]) -> bool:
        """Note the records' new top-level keys; True when one is denied (the pass changed)."""
        new = {key for record in records for key in record if key not in self.seen}
        self.seen |= new
        changed = False
        for key in new:
            sub = self.tree.get(fold(key), ...) if isinstance(key, str) else ...
            if sub is None:
                self.drop = (*self.drop, key)
            elif sub is not ...:
                self.heads[key] = sub
            changed = changed or sub is not ...
        if changed:
            self.strip = _compile(self.drop, self.heads, self.tree)
        return changed


Strip = Callable[[Sequence[Any], list[Any]], "list[Any] | None"]


def _compile(drop: tuple[str, ...], heads: dict[str, DenyTree], tree: DenyTree) -> Strip:
    """The generated pass: ``strip(records, removed)`` gives the records without the
    ``drop`` keys and with the ``heads``' objects stripped (:func:`_inside`), copied where
    they change, the values removed appended to ``removed``; ``None`` at the first record
    that is not a dict."""
    lines = [
        "def strip(records, removed):",
        "    out = []",
        "    append = out.append",
        "    for r in records:",
        "        if type(r) is not dict:",
        "            return None",
        "        c = r",
    ]
    if drop:
        lines += [
            f"        if {' or '.join(f'{k!r} in r' for k in drop)}:",
            "            c = r.copy()",
            *(f"            removed.append(c.pop({k!r}, None))" for k in drop),
        ]
    env: dict[str, Any] = {"_inside": _inside, "_root": tree}
    for i, key in enumerate(heads):
        env[f"_sub{i}"] = heads[key]
        lines += [
            f"        v = r.get({key!r})",
            "        if type(v) is dict:",
            f"            w = _inside(v, _root, _sub{i}, removed)",
            "            if w is not v:",
            "                if c is r:",
            "                    c = r.copy()",
            f"                c[{key!r}] = w",
        ]
    lines += ["        append(c)", "    return out"]
    exec(compile("\n".join(lines), "<slimtools deny>", "exec"), env)
    made: Strip = env["strip"]
    return made


def _inside(value: dict[Any, Any], root: DenyTree, sub: DenyTree, removed: list[Any]) -> Any:
    """``value`` (found under a dotted path's first step) without the keys ``sub`` or the
    root deny whole, copied if one is there; deeper paths are left to the walk."""
    copy = None
    for key in value:
        if isinstance(key, str):
            step = fold(key)
            if sub.get(step, ...) is None or root.get(step, ...) is None:
                if copy is None:
                    copy = dict(value)
                removed.append(copy.pop(key))
    return value if copy is None else copy


_RULES: dict[int, tuple[DenyTree, _Rule]] = {}


def _rule(tree: DenyTree) -> _Rule:
    """The compiled form of ``tree`` (a tool's tree lives as long as the tool: compiled once)."""
    held = _RULES.get(id(tree))
    if held is None or held[0] is not tree:
        if len(_RULES) >= 1024:
            _RULES.clear()
        held = _RULES[id(tree)] = (tree, _Rule(tree))
    return held[1]


def apply_deny(
    data: Any, tree: DenyTree | None, known: Collection[str] = (), *, key: str | None = None
) -> tuple[Any, Secrets]:
    """``data`` as plain data without what ``tree`` denies, and the denied values found.

    Args:
        data: a result's records or any plain data (models, dataclasses and objects are read
            as their fields; tuples and sets become lists). Never changed: containers are
            copied where they change.
        tree: the compiled ``deny=`` paths; ``None`` returns ``data`` as it is.
        known: values already known to be denied (another block's of the same result),
            masked too.
        key: the handle key: a value under it that is a denied value whole stays, so its
            record stays reachable (``get_record`` finds it by the id the brief shows).

    Returns:
        The clean data and the denied values (``known`` included) as :class:`Secrets`.
    """
    if not tree:
        return data, Secrets(known)
    rule = _rule(tree)
    found: set[str] = set(known)
    if type(data) in (list, tuple):
        flat = _flat(data, rule, found)
        if flat is not None:
            return flat, Secrets(found)
        found = set(known)
    slots: list[tuple[Any, Any]] = []
    clean = _walk(data, rule, found, slots)
    secrets = Secrets(found)
    if secrets and slots:
        masker = secrets.found_in("\n".join(parent[slot] for parent, slot in slots))
        if masker is not None:
            values = secrets.values
            for parent, slot in slots:
                text = parent[slot]
                if slot != key or text not in values:
                    parent[slot] = masker.text(text)
    return clean, secrets


def _flat(records: list[Any] | tuple[Any, ...], rule: _Rule, found: set[str]) -> list[Any] | None:
    """The shortcut for a list of dicts: ``None`` when a record needs the walk (not a dict,
    a denied name anywhere but a top-level key, a denied value quoted elsewhere)."""
    for _ in range(2):  # a second time only after learning a new spelling of a denied key
        removed: list[Any] = []
        cleaned = rule.strip(records, removed)
        if cleaned is None:
            return None
        try:
            blob = orjson.dumps(cleaned, option=orjson.OPT_NON_STR_KEYS).decode()
        except (TypeError, orjson.JSONEncodeError):
            return None
        lower = blob.lower()
        folded = lower.replace("_", "").replace("-", "").replace(" ", "")
        if not any(name in folded for name in rule.names):
            break
        if not rule.learn(records):
            return None  # a nested key, or a pair quoted in a string: the walk masks it
    else:
        return None
    for value in removed:
        if type(value) is str:  # the usual denied value
            text = value.strip()
            if len(text) >= MIN_CHARS:
                found.add(text)
        elif value is not None:
            _collect(value, found)
    if found and _quoted(found, blob, lower):
        return None  # a denied value quoted elsewhere: the walk masks it
    return cleaned


def _quoted(found: set[str], blob: str, lower: str) -> bool:
    """Whether ``blob`` quotes any of ``found`` (``Secrets.hits``, with a first look that
    settles the usual page: no encoded character, no value JSON writes otherwise)."""
    odd = "".join(found)
    if (
        len(found) > EXACT_MAX
        or "%" in blob
        or "\\u" in blob
        or "&" in blob
        or '"' in odd
        or "\\" in odd
    ):
        return bool(Secrets(found).hits(blob, lower))
    return any(value.lower() in lower for value in found)


def _walk(data: Any, rule: _Rule, found: set[str], slots: list[tuple[Any, Any]]) -> Any:
    """``data`` copied without its denied keys, its strings' denied pairs masked; notes the
    values removed in ``found`` and where each string sits in ``slots``.

    A walk with its own stack: data nested deeper than the interpreter's stack is read to
    its end, and a container met twice (a cycle) is the same copy both times.
    """
    names = rule.names
    root: tuple[DenyTree, ...] = (rule.tree,)
    box: list[Any] = [None]
    copies: dict[int, Any] = {}
    stack: list[tuple[Any, Any, Any, tuple[DenyTree, ...]]] = [(data, box, 0, root)]
    while stack:
        value, parent, slot, active = stack.pop()
        if isinstance(value, str):
            if ":" in value or "=" in value:
                value, seen = pairs_masked(value, names)
                found.update(seen)
            parent[slot] = value
            slots.append((parent, slot))
            continue
        if isinstance(value, _SCALARS):
            parent[slot] = value
            continue
        copy = copies.get(id(value))
        if copy is not None:
            parent[slot] = copy
            continue
        mapping = _as_mapping(value)
        if mapping is not None:
            out: dict[Any, Any] = {}
            copies[id(value)] = parent[slot] = out
            for key, item in mapping.items():
                below = _below(active, key, root) if isinstance(key, str) else root
                if below is None:
                    _collect(item, found)
                    continue
                out[key] = None  # the place, in order; filled when the item is read
                stack.append((item, out, key, below))
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            items = list(value)
            copies[id(value)] = parent[slot] = items
            stack.extend((item, items, i, active) for i, item in enumerate(items))
            continue
        parent[slot] = value  # a date, a Decimal, bytes: nothing to deny inside
    return box[0]


def _below(
    active: tuple[DenyTree, ...], key: str, root: tuple[DenyTree, ...]
) -> tuple[DenyTree, ...] | None:
    """The subtrees that apply inside ``key``'s value (the root's always: names match at
    any depth, and so do dotted paths from wherever they start); ``None``: ``key`` is denied."""
    step = fold(key)
    carried: list[DenyTree] = []
    for node in active:
        sub = node.get(step, ...)
        if sub is None:
            return None
        if sub is not ...:
            carried.append(sub)
    return (*root, *carried) if carried else root


def _as_mapping(value: Any) -> Mapping[Any, Any] | None:
    """The fields of a record-like value, as ``record_to_plain`` reads them; else ``None``."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, type):
        return None
    if dataclasses.is_dataclass(value):
        return {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        return {k: v for k, v in attrs.items() if not k.startswith("_")}
    return None


def _collect(value: Any, found: set[str]) -> None:
    """Add the specific values below a denied key (its own, or its leaves') to ``found``.

    A walk with its own stack, each container read once: a value that holds itself, or one
    nested deeper than the interpreter's stack, is read to its leaves.
    """
    stack = [value]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = value.strip() if isinstance(value, str) else repr(value)
            if len(text) >= MIN_CHARS:
                found.add(text)
            continue
        if id(value) in seen:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            seen.add(id(value))
            stack.extend(value)
            continue
        mapping = _as_mapping(value)
        if mapping is not None:
            seen.add(id(value))
            stack.extend(mapping.values())
