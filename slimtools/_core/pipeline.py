"""The one slimming pipeline behind every decorator stack (sans-I/O).

``run`` is a generator: it yields I/O requests (run the tool, load or save in the handle
store) and receives their answers, so the two drivers of ``slimtools._core.drive`` run the
same logic for synchronous and asynchronous tools. Per call it takes the page, keeps the
page's full records under handles, projects only the page's records and builds the
envelope: projection never runs over 10,000 rows to return 3.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from slimtools._core.config import Call, PageSpec, SlimConfig
from slimtools._core.drive import INVOKE, UNAVAILABLE, Engine, Load, Save
from slimtools._core.fit import Out, Part, Req, fit, note_unkept
from slimtools._core.handles import attach_handles, stored_ids
from slimtools._core.paging import (
    format_call,
    handle_call,
    page_count,
    page_of,
    past_end,
    tool_call,
)
from slimtools._core.params import hide_in_exception
from slimtools._core.texts import multipage, show_text
from slimtools._core.withhold import unreadable
from slimtools._json import dumps_str, to_jsonable
from slimtools.envelope import Envelope
from slimtools.projection import (
    Rows,
    Unreadable,
    apply_deny,
    read,
    record_to_plain,
    records_by_id,
    rows,
    scrub_exception,
    table_records,
)


class FinalResult:
    """Base of results a tool returns to answer exactly that, past the pipeline.

    ``slimtools.ToolResult`` is one: a forwarder (the MCP proxy, ``slimtools.wrap``) returns
    it for what must reach the model untouched, such as an upstream error or an image.
    """

    __slots__ = ()


Step = Engine[Envelope[Any]]


def records_at(result: Any, path: str) -> tuple[Any, list[str]]:
    """The records at dotted ``path`` inside a dict result, or none and a note saying so."""
    if not isinstance(result, Mapping):
        return result, []  # already a list (or text): nothing to dig out
    value: Any = result
    for step in path.strip(".").split("."):
        value = value.get(step) if isinstance(value, Mapping) else None
        if value is None:
            return (), [f"the result has no {path!r} list, so nothing was shown"]
    return value, []


def classify(result: Any) -> tuple[str, Any]:
    """Sort a tool result into ``("records", tuple)``, ``("text", str)`` or ``("other", x)``."""
    if type(result) is list:  # the usual result, sorted with one check
        return "records", result
    if isinstance(result, str):
        return "text", result
    if isinstance(result, (bytes, bytearray)):
        return "text", bytes(result).decode("utf-8", "replace")
    if isinstance(result, (Envelope, FinalResult)):
        return "envelope", result  # already final: returned as it is
    if isinstance(result, Unreadable):
        return "unreadable", result
    if isinstance(result, (list, tuple)):
        # Kept by reference, not copied: a backend that mutates a list after returning it
        # must return a copy for later pages to stay consistent.
        return "records", result
    if isinstance(result, (set, frozenset)):
        return "records", tuple(result)
    if isinstance(result, (Mapping, BaseModel)) or (
        dataclasses.is_dataclass(result) and not isinstance(result, type)
    ):
        return "records", (result,)
    if isinstance(result, Iterator):
        return "records", tuple(result)
    return "other", result


def _has_attributes(value: Any) -> bool:
    """True for a plain object whose data are attributes (not a class, not a scalar)."""
    return isinstance(getattr(value, "__dict__", None), dict) and not isinstance(value, type)


def run(cfg: SlimConfig, call: Call) -> Step:
    """The pipeline of one decorated call; see the module docstring."""
    paging = cfg.paging
    req, notes = _check_paging(paging, call.page, call.limit)
    detailed = cfg.formats and _check_format(cfg, call.response_format, notes)
    page, limit, page_ok = req.page, req.limit, req.ok
    snap: str | None = None  # the snapshot key, computed only when a snapshot is read or written
    kind: str | None = None
    data: Any = None
    missed = False
    found: Any = None
    if paging is not None and page_ok and page > 1:
        snap = call.snapshot_key()
        found = yield Load([snap])
        if found is not UNAVAILABLE and snap in found:
            kind, data = _from_snapshot(cfg, found[snap])
        missed = kind is None
    fresh = kind is None
    if fresh:
        kind, data = yield from _invoke(cfg, call, notes)
    if kind == "envelope":
        return data  # type: ignore[no-any-return]
    if kind == "other" and cfg.projection is not None and _has_attributes(data):
        # One plain object is one record: passing it through would show every public
        # attribute, defeating the allowlist.
        kind, data = "records", (data,)
    if kind == "other":
        return _passthrough(data, as_text=cfg.projection is not None)
    saves: dict[str, Any] = {}
    snapshot: str | None = None  # the key of the page-1 snapshot this call writes
    if fresh and paging is not None:
        longer = multipage(cfg, call, (kind, data), limit)
        if longer or (not page_ok and bool(data)) or page > 1:
            kind, data = _snapshot_form(cfg, kind, data)
            snapshot = snap or call.snapshot_key()
            saves[snapshot] = {"views": data} if kind == "views" else data
        if missed and longer:  # only a result longer than a page has pages to miss
            notes.append(_missed(cfg, call, req, store_down=found is UNAVAILABLE))
    if kind in ("records", "views"):
        store = (saves, found is UNAVAILABLE)
        out, tail, down = yield from _records(
            cfg, call, (kind, data), req, store, detailed=detailed
        )
        found = UNAVAILABLE if down else found
    else:
        out, tail = show_text(cfg, call, data, req, saves)
    out.notes[:0] = notes
    env, resumes = fit(cfg, call, out, tail, req)
    if resumes and fresh and snapshot is None:
        # The budget cut this page and the hint resumes after it: that call must read the
        # same result, not run the backend again (which may reorder it).
        kind, data = _snapshot_form(cfg, kind, data)
        saves[call.snapshot_key()] = {"views": data} if kind == "views" else data
    if saves:
        # After a failed read the store is not tried again in this call: one timeout per
        # call at worst when the store hangs.
        refused = UNAVAILABLE if found is UNAVAILABLE else (yield Save(saves))
        if refused and note_unkept(call, out, tail, None if refused is UNAVAILABLE else refused):
            env, _ = fit(cfg, call, out, tail, req)
    return env


def _invoke(cfg: SlimConfig, call: Call, notes: list[str]) -> Engine[tuple[str, Any]]:
    """Run the tool and sort its result (read first when the tool is guarded); records lose
    what ``deny`` removes and masks (``projection.apply_deny``) before anything else.

    A guarded tool's exception loses its denied ``key: value`` pairs (and, under an
    allowlist, the values of quoted pairs it does not name) before it propagates, also
    one a generator tool raises while its items are read.
    """
    try:
        result = yield INVOKE
        if cfg.guarded:
            result = read(result)
        if cfg.items is not None:
            result, note = records_at(result, cfg.items)
            notes.extend(note)
            if cfg.guarded:  # what the path holds may be JSON text, or prose: read it too
                result = read(result)
        if cfg.guarded and type(result) is dict:  # {"123": {...}, "456": {...}}: by id
            result = table_records(result, cfg.named)  # {"columns": [...], "rows": [...]}
            result = records_by_id(result, cfg.id_field, cfg.named)
        kind, data = classify(result)  # a generator runs here
    except Exception as exc:
        scrub_exception(exc, cfg.denied_names, cfg.allowed_names)
        if call.withheld:  # the application's hidden arguments, quoted by the tool
            hide_in_exception(exc, call.withheld)
        raise
    if kind == "records" and cfg.guarded:  # rows without keys: named, or withheld
        data = rows(data)
        if isinstance(data, Unreadable):
            kind = "unreadable"
    if type(data) is Rows:  # also read so by a foreign tool's guard (slimtools.foreign)
        notes.append(data.note())
    if kind == "unreadable":
        return unreadable(cfg, call, data)
    if cfg.deny is not None and kind == "records":
        key = cfg.handles.key if cfg.handles is not None else None
        return kind, apply_deny(data, cfg.deny, key=key)[0]
    return kind, data


def _missed(cfg: SlimConfig, call: Call, req: Req, *, store_down: bool) -> str:
    """Why page > 1 was fetched afresh, and the call that gives consistent pages."""
    if store_down:
        return "the handle store is unavailable, so the results were fetched again"
    default = cfg.paging.limit if cfg.paging is not None else req.limit
    first = tool_call(call.tool, call.args, page=None, limit=req.limit, default=default)
    return (
        "no page-1 snapshot of this query exists in this session (page 1 was never asked "
        "for, or its snapshot expired), so the results were fetched again and may differ "
        f"from an earlier page 1; for consistent pages start at {first}"
    )


def _check_format(cfg: SlimConfig, fmt: Any, notes: list[str]) -> bool:
    """Whether briefs are detailed; an unknown ``response_format`` falls back, with a note."""
    if not cfg.formats or fmt == "concise":
        return False
    if fmt == "detailed":
        return True
    notes.append('response_format must be "concise" or "detailed"; used "concise"')
    return False


def _from_snapshot(cfg: SlimConfig, value: Any) -> tuple[str | None, Any]:
    """A stored snapshot as ``(kind, data)``; ``(None, None)`` when this tool cannot use it.

    A reduced snapshot (``{"views": [[brief, kept], ...]}``) is only read by a tool that
    reduces: one whose options changed since (a restart with a durable store) fetches again.
    """
    if isinstance(value, Mapping):
        views = value.get("views")
        if cfg.reduces and isinstance(views, list):
            return "views", views
        return None, None
    return classify(value)


def _snapshot_form(cfg: SlimConfig, kind: str | None, data: Any) -> tuple[str | None, Any]:
    """What a page-1 snapshot keeps: for a reducing tool, each record's brief and kept view.

    Never the raw records then: the store must not hold what no path may show.
    """
    if kind != "records" or not cfg.reduces or cfg.projection is None:
        return kind, data
    project = cfg.projection.project
    if cfg.handles is None and not cfg.formats:  # nothing would ever show the kept view
        return "views", [[project(r), None] for r in data]
    keep = cfg.keep
    return "views", [[project(r), keep(r)] for r in data]


def _check_paging(paging: PageSpec | None, page: Any, limit: Any) -> tuple[Req, list[str]]:
    """Validate ``page`` and ``limit``; a bad limit falls back to the default, with a note."""
    if paging is None:
        return Req(1, 0, ok=True), []
    if type(page) is int and type(limit) is int and page >= 1 and 1 <= limit <= paging.max_limit:
        return Req(page, limit, True), []  # the usual call, valid at a glance
    return _validate_paging(paging, page, limit)


def _validate_paging(paging: PageSpec, page: Any, limit: Any) -> tuple[Req, list[str]]:
    """``_check_paging`` for any ``page`` and ``limit``, valid or not."""
    notes: list[str] = []
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        notes.append(f"limit must be an integer from 1 to {paging.max_limit}; used {paging.limit}")
        limit = paging.limit
    elif limit > paging.max_limit:
        notes.append(f"limit capped at {paging.max_limit}")
        limit = paging.max_limit
    ok = isinstance(page, int) and not isinstance(page, bool) and page >= 1
    return Req(page if ok else 1, limit, ok), notes


def _invalid_page(call: Call, req: Req, total: int, unit: str) -> str:
    """What is wrong with the page asked for, what is valid, and the call to make."""
    retry = format_call(
        call.tool, {**call.args, "page": page_count(total, req.limit) if req.ok else 1}
    )
    return past_end(call.page, valid=req.ok, total=total, unit=unit, size=req.limit, retry=retry)


def _passthrough(value: Any, *, as_text: bool) -> Envelope[Any]:
    """A result that is not records or text, shown as it is (a brief, or with ``as_text``, text).

    A projected tool's output schema promises briefs that are objects, so there a scalar is
    shown as the envelope's ``text`` (its JSON, a string's quotes dropped) instead.
    """
    if value is None:
        return Out(total=0, notes=["the tool returned no result"]).build()
    note = f"result passed through as is ({type(value).__name__}): nothing to slim"
    if as_text:
        plain = to_jsonable(value)
        text = plain if isinstance(plain, str) else dumps_str(plain)
        return Out(total=1, text=text, notes=[note]).build()
    return Out(total=1, briefs=[value], notes=[note]).build()


def _records(
    cfg: SlimConfig,
    call: Call,
    source: tuple[str, Sequence[Any]],
    req: Req,
    store: tuple[dict[str, Any], bool],
    *,
    detailed: bool,
) -> Engine[tuple[Out, list[Part], bool]]:
    """A page of records as briefs with handles, and whether the store is down.

    ``store`` is the call's saves and whether the store already failed.
    """
    kind, records = source
    saves, down = store
    page, limit, page_ok = req.page, req.limit, req.ok
    total = len(records)
    out = Out(total=total)
    if cfg.paging is not None:
        out.page = page
        if not page_ok or page > page_count(total, limit):
            out.page = None
            out.notes.append(_invalid_page(call, req, total, "items"))
            return out, [], down
        chosen = page_of(records, page, limit)[1]
    else:
        chosen = records
    kept: Sequence[Any]
    if kind == "views":  # from a reduced snapshot: [brief, kept] per record
        out.briefs = [view[1] if detailed else view[0] for view in chosen]
        kept = [view[1] for view in chosen]
    else:
        projection = cfg.detail if detailed else cfg.projection
        out.briefs = (
            projection.project_many(chosen) if projection else [record_to_plain(r) for r in chosen]
        )
        kept = chosen
        if cfg.reduces and cfg.handles is not None:
            kept = [cfg.keep(r) for r in chosen]
    tail: list[Part] = []
    if cfg.handles is not None:
        taken = yield from stored_ids(cfg.handles, call.tool, out.briefs, store_down=down)
        down = taken is UNAVAILABLE
        first = attach_handles(
            cfg.handles,
            call.tool,
            (kept, out.briefs),
            saves,
            taken={} if down else taken,
        )
        if first is not None:
            tail.append(Part(f"full record: {handle_call(call.companion, first[0])}", "record"))
            out.first_key = first[1]
    return out, tail, down
