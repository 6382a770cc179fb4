"""Flat allowlists compiled to Python once, for the records that need no shape check.

A flat allowlist (one source key per field) whose every field shows a JSON scalar as it is
gets two generated functions: ``project(record)`` and ``project_many(records)``. For a dict
record that carries every key with a JSON scalar under each, they take the values with one
``operator.itemgetter`` call, clip the clipped fields and build the brief as one dict
display. Any other record (a key missing, a container or object value, not a dict) goes to
the general code, so the brief is always the general code's (``tests/core/test_fast_paths.py``
pins the two together).

Generating the shape checks too was rejected: they would restate ``slimtools.projection._shapes``
in generated text, and records that need them are not the common case.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from slimtools.clip import Clip, cut_text
from slimtools.projection._shapes import PLAIN

Brief = dict[str, Any]
Flat = tuple[str, Any, Clip | None, Any, bool, Any]
"""One flat field: output name, source key, clip, default, scalars shown as is, shape fit."""


def compile_flat(
    fields: Sequence[Flat], general: Callable[[Any], Brief]
) -> tuple[Callable[[Any], Brief], Callable[[Sequence[Any]], list[Brief]]] | None:
    """``(project, project_many)`` for ``fields``, falling back to ``general(record)``.

    ``None`` when the allowlist does not qualify: no fields, a field that checks the shape of
    scalars (``Literal``, ``Enum``...), or a name or key that is not a string.
    """
    if not fields or not all(
        scalars_ok and type(out) is str and type(key) is str
        for out, key, _clip, _default, scalars_ok, _fit in fields
    ):
        return None
    names = [f"v{i}" for i in range(len(fields))]
    env: dict[str, Any] = {
        "_getter": operator.itemgetter(*(key for _, key, *_ in fields)),
        "_PLAIN": PLAIN,
        "_general": general,
        "_cut": cut_text,
        "_dict": dict,
    }
    # What each field needs before its value is shown as is: a field with a shape fit takes
    # only JSON scalars (``type in _PLAIN``); a clipped field cuts a long str and otherwise
    # takes only scalars too (``_clip_value`` handles the rest); a field with neither takes
    # anything.
    checked = [
        v for v, (_o, _k, clip, _d, _s, fit) in zip(names, fields, strict=True) if fit and not clip
    ]
    clips = []
    for i, (_out, _key, clip, *_) in enumerate(fields):
        if clip is not None:
            env[f"_m{i}"] = clip.marker
            clips.append((f"v{i}", clip.max_chars, f"_m{i}"))
    take = f"{names[0]} = _getter(r)" if len(names) == 1 else f"{', '.join(names)} = _getter(r)"
    pairs = (f"{out!r}: {v}" for (out, *_), v in zip(fields, names, strict=True))
    brief = "{" + ", ".join(pairs) + "}"

    def body(bail: list[str], done: str) -> list[str]:
        return _body(take, checked, clips, bail, done)

    # One body, written twice: as a function of one record, and inlined in the loop over
    # many (a call per record would cost as much as the dict display).
    one = [
        "if type(r) is not _dict:",
        "    return _general(r)",
        *body(["return _general(r)"], f"return {brief}"),
    ]
    many = [
        "out = []",
        "append = out.append",
        "for r in records:",
        "    if type(r) is not _dict:",
        "        append(_general(r))",
        "        continue",
        *(f"    {line}" for line in body(["append(_general(r))", "continue"], f"append({brief})")),
        "return out",
    ]
    return _make(env, one, many)


def _body(
    take: str, checked: list[str], clips: list[tuple[str, int, str]], bail: list[str], done: str
) -> list[str]:
    """The lines reading one record's fields: ``bail`` when a value needs the general path
    (a missing key, a non-scalar under a shape fit or a clip), ``done`` with the brief."""
    lines = ["try:", f"    {take}", "except KeyError:", *(f"    {b}" for b in bail)]
    if checked:
        plain = " and ".join(f"type({v}) in _PLAIN" for v in checked)
        lines += [f"if not ({plain}):", *(f"    {b}" for b in bail)]
    for v, limit, marker in clips:
        lines += [
            f"if type({v}) is str:",
            f"    if len({v}) > {limit}:",
            f"        {v} = _cut({v}, {limit}, {marker})",
            f"elif type({v}) not in _PLAIN:",
            *(f"    {b}" for b in bail),
        ]
    return [*lines, done]


def _make(
    env: dict[str, Any], one: list[str], many: list[str]
) -> tuple[Callable[[Any], Brief], Callable[[Sequence[Any]], list[Brief]]]:
    """Compile ``project`` (body ``one``) and ``project_many`` (body ``many``) over ``env``."""
    source = "\n".join(
        [
            f"def make({', '.join(env)}):",
            "    def project(r):",
            *(f"        {line}" for line in one),
            "    def project_many(records):",
            *(f"        {line}" for line in many),
            "    return project, project_many",
        ]
    )
    namespace: dict[str, Any] = {}
    exec(compile(source, "<slimtools projection>", "exec"), namespace)
    made: tuple[Callable[[Any], Brief], Callable[[Sequence[Any]], list[Brief]]]
    made = namespace["make"](**env)
    return made
