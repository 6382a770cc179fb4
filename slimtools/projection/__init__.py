"""Allowlist projection: keep only declared fields of a record, renamed and clipped.

Deny by default: a field reaches the model only when the allowlist names it, so secrets,
tenant ids and internal columns never leak. The allowlist is a Pydantic model (field names
are the output names; ``validation_alias``/``alias`` name the source, ``AliasPath`` reaches
into nested data; ``Annotated[str, Clip(80)]`` clips) or a list of dotted field names.

Projection selects, renames and clips; it does not coerce types: a brief shows what the
backend returned. A declared field missing from a record takes the model's default when it
declares one and is otherwise omitted from the brief (never an exception). A value that does
not fit its field's declared shape (a container under ``str``, records under ``list[str]``, a
string where a nested model is declared) is omitted too, so nested secrets never ride out
whole under an allowlisted name; the shape rule is ``slimtools.projection._shapes``.

The package also owns what projection withholds: ``deny=`` (``compile_deny`` states what a
denied name matches; ``apply_deny`` is the one function every surface calls on data), the
reader that decides what a result reads as records (``read``; what it cannot read is
``Unreadable`` and withheld; ``rows`` for the items of a list, rows without keys included;
``records_by_id`` for a mapping of ids to records, ``table_records`` for a table of columns
and rows), and the masking of denied values in text (``scrub_pairs``, ``scrub_exception``,
``scrub_rows``). The slimming core, ``wrap()`` and the proxy use these public names.
"""

from slimtools.clip import Clip, clip_text
from slimtools.projection._clean import apply_deny
from slimtools.projection._deny import DenyTree, all_names, compile_deny, denied_names, spelled
from slimtools.projection._keyed import records_by_id, table_records
from slimtools.projection._projection import Projection, record_to_plain
from slimtools.projection._readable import (
    UNPARSED,
    Rows,
    Unreadable,
    as_record,
    read,
    read_text,
    rows,
)
from slimtools.projection._rowtext import scrub_rows
from slimtools.projection._scrub import DENIED_ATTR, Secrets, scrub_exception, scrub_pairs

__all__ = [
    "DENIED_ATTR",
    "UNPARSED",
    "Clip",
    "DenyTree",
    "Projection",
    "Rows",
    "Secrets",
    "Unreadable",
    "all_names",
    "apply_deny",
    "as_record",
    "clip_text",
    "compile_deny",
    "denied_names",
    "read",
    "read_text",
    "record_to_plain",
    "records_by_id",
    "rows",
    "scrub_exception",
    "scrub_pairs",
    "scrub_rows",
    "spelled",
    "table_records",
]
