"""The handles a page's briefs show, and what the store keeps under each (sans-I/O).

**A handle once shown fetches what it was shown with**, for as long as it lives in the
store. A brief's handle is its record's key value (``id``) when it has one, so the same id
can come back with other content: on a later page, from a later call with other arguments,
or after the record changed. The id handle belongs to the record first kept under it; a
later record with the same id and other content gets a generated, content-addressed handle
(``make_handle``) instead, exactly as a second record with one id on a single page does, and
the brief shows it first (``{"handle": "k3f9a2qd", "id": 5, ...}``). The same content again
keeps the id handle (and refreshes its lifetime). So the pipeline reads the ids a page shows
before writing: :func:`stored_ids` yields that ``Load``.

Rejected: letting the later write win (handle ``5``, shown with the first record, would then
fetch the second); refusing the later record (it could then not be fetched at all); and
content-addressing every handle (``get_record(5)`` is what a model sends for id ``5``, and
records persisted under id handles would be stranded).

Limits, said where they apply: the check reads before it writes, so two calls writing the
same id at the same instant (two processes on one durable store) can still race, the later
write winning; and a handle that expired may be given out again for other content.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from slimtools._core.config import HandleSpec
from slimtools._core.drive import Engine, Load
from slimtools._core.keys import make_handle, normalize_handle, record_key
from slimtools._json import dumps


def stored_ids(
    spec: HandleSpec, tool: str, briefs: Sequence[Any], *, store_down: bool
) -> Engine[Mapping[str, Any]]:
    """What the store holds under the id handles ``briefs`` would show, or ``UNAVAILABLE``.

    Nothing is read when the handles are not kept (``fetch=``), when no brief has an id, or
    when the store already failed in this call (one timeout per call at worst).
    """
    key = spec.key
    if key is None or spec.fetch is not None or store_down:
        return {}
    prefix = record_key(tool, "")
    keys: dict[str, None] = {}
    for brief in briefs:
        shown = brief.get(key) if isinstance(brief, dict) else None
        handle = str(shown) if type(shown) is int else normalize_handle(shown)
        if handle is not None:
            keys[prefix + handle] = None
    if not keys:
        return {}
    found: Mapping[str, Any] = yield Load(list(keys))
    return found


def _differs(stored: Any, record: Any) -> bool:
    """True when ``stored`` (a store's form of an earlier record) is not ``record`` as kept.

    Compared as JSON, since a serialising store hands back the JSON form.
    """
    if stored is record:
        return False
    return dumps(stored) != dumps(record)


def attach_handles(
    spec: HandleSpec,
    tool: str,
    page: tuple[Sequence[Any], list[Any]],
    saves: dict[str, Any],
    *,
    taken: Mapping[str, Any],
) -> tuple[Any, str] | None:
    """Give every brief a handle, queue what the handle keeps, return the first one.

    ``page`` holds the records handles keep (the full records, or their reduced form) and
    their briefs, which gain a generated handle where needed. ``taken`` is what the store
    holds under the page's ids (:func:`stored_ids`). Returns the first handle as the brief
    shows it and its store key, or ``None`` when there are none. A key value that a page
    repeats, or that the store holds, for a different record is no handle for this record:
    it gets a generated one (so get_record reaches both).
    """
    records, briefs = page
    key = spec.key
    keep = spec.fetch is None
    prefix = record_key(tool, "")  # every record key is this prefix plus the handle
    if key is not None and keep and briefs and not taken:
        # The usual case first: every brief a dict whose key holds an int id, whose handle
        # is its decimal text. At the first other brief, the general loop below does it all.
        start = len(saves)  # no record key yet: only a snapshot's or a text's
        for record, brief in zip(records, briefs, strict=True):
            some_id = brief.get(key) if type(brief) is dict else None
            if type(some_id) is not int:
                break
            saves[f"{prefix}{some_id}"] = record
        else:
            if len(saves) - start == len(briefs):  # no id repeated on the page
                first_id = briefs[0][key]
                return first_id, f"{prefix}{first_id}"
        for brief in briefs:  # the general loop redoes them all, a repeated id included
            some_id = brief.get(key) if type(brief) is dict else None
            if type(some_id) is int:
                saves.pop(f"{prefix}{some_id}", None)
    first: tuple[Any, str] | None = None
    for i, (record, brief) in enumerate(zip(records, briefs, strict=True)):
        shown: Any = brief.get(key) if key and isinstance(brief, dict) else None
        # An int id (the usual key) is its decimal text, inline: one call less per record.
        handle = str(shown) if type(shown) is int else normalize_handle(shown)
        if handle is not None and keep and _claimed(prefix + handle, record, saves, taken):
            handle = None  # this key is another record's handle already
        if handle is None:
            handle = make_handle(record)
            shown = handle
            if isinstance(brief, dict):
                briefs[i] = {"handle": handle, **brief}
                briefs[i]["handle"] = handle  # first, and not a record's own "handle" field
            else:
                briefs[i] = {"handle": handle, "value": brief}
        full_key = prefix + handle
        if keep:
            saves[full_key] = record
        if first is None:
            first = (shown, full_key)
    return first


def _claimed(
    full_key: str,
    record: Any,
    saves: Mapping[str, Any],
    taken: Mapping[str, Any],
) -> bool:
    """True when ``full_key`` already keeps another record: on this page, or in the store."""
    if full_key in saves:
        return saves[full_key] is not record
    return full_key in taken and _differs(taken[full_key], record)
