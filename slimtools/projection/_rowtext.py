"""Rows without keys quoted in text: their values masked under a deny (pure).

An error quoting a database row rarely names its columns: ``UNIQUE constraint failed on
row (1, 'alice', '078-05-1120')`` (the ``repr`` of a ``fetchall()`` tuple), or Postgres'
``Key (ssn)=(078-05-1120) already exists``. ``scrub_pairs`` finds ``key: value`` pairs, and
neither form has one, so a tool with a ``deny`` would show the denied column's value. Here:

- a tuple literal of two or more items, one of them quoted, has every specific value masked
  (a quoted string or a number of at least ``MIN_CHARS`` characters): which item is the
  denied column cannot be known, so none is shown;
- ``(names)=(values)`` has its values masked when one of its names is denied;
- a bare value a database quotes beside the key it broke has it masked when the key names
  a denied column: MySQL's ``Duplicate entry '...' for key 'users.ssn'``, SQL Server's
  ``... constraint 'UQ_users_ssn' ... The duplicate key value is (...)``.

Short values (``(1, 'a')``) stay, as :data:`MIN_CHARS` says of every denied value.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from slimtools.projection._deny import MIN_CHARS, fold, spelled
from slimtools.redaction import MASK

MASK_QUOTED = f"'{MASK}'"

_ITEM = r"""(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|-?\d[\w.+-]*|None|True|False|NULL|null)"""
_TUPLE = re.compile(rf"\(\s*{_ITEM}\s*(?:,\s*{_ITEM}\s*)*,?\s*\)")
"""A parenthesised run of scalars separated by commas: ``(1, 'a')``, ``('a',)``; every
separator is a required comma, so the scan is linear."""
_VALUE = re.compile(_ITEM)
_KEYED = re.compile(r"\(([\w\s,\"]{1,200})\)\s*=\s*\(([^()\n]*)\)")
"""Postgres' ``Key (a, b)=(1, x)``: names in the first parentheses, values in the second."""
_FOR_KEY = re.compile(r"(?i)'([^'\n]*)'(\s+for\s+(?:key|column)\s+'([^'\n]{1,200})')")
"""MySQL's ``Duplicate entry 'value' for key 'table.column'``."""
_DUPLICATE = re.compile(
    r"(?i)(constraint\s+'([^'\n]{1,200})'[^\n]{0,200}?duplicate key value is \()([^()\n]*)\)"
)
"""SQL Server's ``... constraint 'UQ_users_ssn' ... The duplicate key value is (value).``"""


def scrub_rows(text: str, denied: Collection[str]) -> str:
    """``text`` with the values of the rows without keys it quotes masked (see the module).

    ``denied`` are the denied names folded (``projection._deny.fold``), so a column is
    matched as ``deny`` matches a key. Nothing is masked without ``denied``: with no deny,
    nothing is withheld from a row.
    """
    if not denied:
        return text
    if "'" in text:
        text = _FOR_KEY.sub(lambda m: MASK_QUOTED + m[2] if _names(m[3], denied) else m[0], text)
    if "(" not in text:  # the usual message: no row in it
        return text
    text = _KEYED.sub(lambda m: _keyed(m, denied), text)
    if "'" in text:
        text = _DUPLICATE.sub(lambda m: m[1] + MASK + ")" if _names(m[2], denied) else m[0], text)
    return _TUPLE.sub(_masked_tuple, text)


def _names(key: str, denied: Collection[str]) -> bool:
    """Whether a key or constraint name (``users.ssn``, ``UQ_users_SSN``, ``users_ssn_key``)
    names a denied column: the whole name, or a part of it between other separators than
    letters and digits, in any spelling ``deny`` matches (``projection._deny.spelled``)."""
    if fold(key) in denied:
        return True
    return any(
        re.search(rf"(?<![A-Za-z0-9]){spelled(name)}(?![A-Za-z0-9])", key, re.IGNORECASE)
        for name in denied
    )


def _keyed(match: re.Match[str], denied: Collection[str]) -> str:
    names = {fold(n.strip().strip('"')) for n in match[1].split(",")}
    if names.isdisjoint(denied):
        return match[0]
    return match[0][: match.start(2) - match.start()] + MASK + ")"


def _masked_tuple(match: re.Match[str]) -> str:
    row = match[0]
    if ("'" not in row and '"' not in row) or "," not in row:  # (1, 2), ('a'): not a row
        return row
    return _VALUE.sub(_masked_value, row)


def _masked_value(match: re.Match[str]) -> str:
    value = match[0]
    quote = value[0] if value[0] in "'\"" else ""
    inner = value[1:-1] if quote else value
    if len(inner.strip()) < MIN_CHARS:
        return value
    return f"{quote}{MASK}{quote}"
