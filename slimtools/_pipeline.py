"""The one slimming pipeline behind every decorator stack (sans-I/O).

``run`` is a generator: it yields I/O requests (call the tool, load or save in the handle
store) and receives their answers, so a synchronous and an asynchronous shell drive the same
logic (the decorators' ``_drive_sync``/``_drive_async``). Per call it takes the page, keeps
the page's full records under handles, projects only the page's records and builds the
envelope: projection never runs over 10,000 rows to return 3.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from slimtools._config import Call, HandleSpec, PageSpec, SlimConfig
from slimtools._json import dumps_str, to_jsonable
from slimtools._keys import (
    format_call,
    make_handle,
    normalize_handle,
    record_key,
    split_lines,
    text_key,
)
from slimtools.envelope import Envelope, make_envelope
from slimtools.projection import record_to_plain

# The requests and the small records below are created on every call and never changed
# afterwards, yet are not ``frozen``: a frozen dataclass sets each field through
# ``object.__setattr__``, which makes construction about three times slower.


@dataclass(slots=True)
class Invoke:
    """Run the wrapped tool; answer with its result (its exceptions propagate)."""


INVOKE = Invoke()
"""The one ``Invoke`` request (it carries nothing)."""


@dataclass(slots=True)
class Load:
    """Read keys from the handle store; answer with a dict, or ``UNAVAILABLE``."""

    keys: list[str]


@dataclass(slots=True)
class Save:
    """Write items to the handle store; answer with refused keys, or ``UNAVAILABLE``."""

    items: dict[str, Any]


UNAVAILABLE: Any = object()
"""Answer to ``Load``/``Save`` when the store cannot be reached."""

Step = Generator["Invoke | Load | Save", Any, Envelope[Any]]


@dataclass(slots=True)
class _Out:
    """The envelope under construction, plus the hint's parts."""

    total: int
    briefs: list[Any] = field(default_factory=list)
    text: str | None = None
    page: int | None = None
    handle: str | None = None
    notes: list[str] = field(default_factory=list)

    def build(self, hint_tail: Sequence[str] = (), lead: Sequence[str] = ()) -> Envelope[Any]:
        """The envelope; its hint joins the notes, then ``lead``, then ``hint_tail``."""
        hint = "; ".join([*self.notes, *lead, *hint_tail])
        page = self.page if self.page != 1 else None
        return make_envelope(
            self.total, self.briefs, hint, page=page, handle=self.handle, text=self.text
        )


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
    if isinstance(result, str):
        return "text", result
    if isinstance(result, (bytes, bytearray)):
        return "text", bytes(result).decode("utf-8", "replace")
    if isinstance(result, Envelope):
        return "envelope", result
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


@dataclass(slots=True)
class _Req:
    """The page asked for, after validation: ``ok`` is False for an invalid page."""

    page: int
    limit: int
    ok: bool


def run(cfg: SlimConfig, call: Call) -> Step:
    """The pipeline of one decorated call; see the module docstring."""
    paging = cfg.paging
    req, notes = _check_paging(paging, call.page, call.limit)
    detailed = _check_format(cfg, call.response_format, notes)
    page, limit, page_ok = req.page, req.limit, req.ok
    snap: str | None = None  # the snapshot key, computed only when a snapshot is read or written
    kind: str | None = None
    data: Any = None
    missed = False
    if paging is not None and page_ok and page > 1:
        snap = call.snapshot_key()
        found = yield Load([snap])
        if found is not UNAVAILABLE and snap in found:
            kind, data = _from_snapshot(cfg, found[snap])
        missed = kind is None
    fresh = kind is None
    if fresh:
        result = yield INVOKE
        if cfg.items is not None:
            result, note = records_at(result, cfg.items)
            notes.extend(note)
        kind, data = classify(result)
    if kind == "envelope":
        return data  # type: ignore[no-any-return]
    if kind == "other" and cfg.projection is not None and _has_attributes(data):
        # One plain object is one record: passing it through would show every public
        # attribute, defeating the allowlist.
        kind, data = "records", (data,)
    if kind == "other":
        return _passthrough(data, as_text=cfg.projection is not None)
    saves: dict[str, Any] = {}
    if fresh and paging is not None:
        size = len(data) if kind == "records" else len(split_lines(data))
        if size > (limit if page_ok else 0) or page > 1:
            kind, data = _snapshot_form(cfg, str(kind), data)
            saves[snap or call.snapshot_key()] = {"views": data} if kind == "views" else data
        if missed and size > limit:
            # Only a result longer than a page has a page-1 snapshot to miss.
            notes.append("the snapshot of earlier pages expired, so results were fetched again")
    if kind in ("records", "views"):
        out, tail = _records(cfg, call, (kind, data), req, saves, detailed=detailed)
    else:
        out, tail = _text(cfg, call, data, req, saves)
    out.notes[:0] = notes
    if saves:
        refused = yield Save(saves)
        if refused is UNAVAILABLE:
            out.notes.append(
                "the handle store is unavailable, so these handles cannot be expanded "
                f"now: call {call.tool} again for details"
            )
        elif refused:
            shown = ", ".join(
                sorted(k.split(":", 2)[2] for k in refused if not k.startswith("s:"))[:5]
            )
            if shown:
                out.notes.append(f"too large to keep, not expandable: {shown}")
    return _fit(cfg, call, out, tail, req)


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


def _snapshot_form(cfg: SlimConfig, kind: str, data: Any) -> tuple[str, Any]:
    """What a page-1 snapshot keeps: for a reducing tool, each record's brief and kept view.

    Never the raw records then: the store must not hold what no path may show.
    """
    if kind != "records" or not cfg.reduces or cfg.projection is None:
        return kind, data
    project, keep = cfg.projection.project, cfg.keep
    return "views", [[project(r), keep(r)] for r in data]


def _check_paging(paging: PageSpec | None, page: Any, limit: Any) -> tuple[_Req, list[str]]:
    """Validate ``page`` and ``limit``; a bad limit falls back to the default, with a note."""
    if paging is None:
        return _Req(1, 0, ok=True), []
    notes: list[str] = []
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        notes.append(f"limit must be an integer from 1 to {paging.max_limit}; used {paging.limit}")
        limit = paging.limit
    elif limit > paging.max_limit:
        notes.append(f"limit capped at {paging.max_limit}")
        limit = paging.max_limit
    ok = isinstance(page, int) and not isinstance(page, bool) and page >= 1
    return _Req(page if ok else 1, limit, ok), notes


def _invalid_page(call: Call, req: _Req, total: int, unit: str) -> str:
    """What is wrong with the page asked for, what is valid, and the call to make."""
    pages = max(1, -(-total // req.limit))
    what = "past the end" if req.ok else "not a valid page"
    retry = format_call(call.tool, {**call.args, "page": pages if req.ok else 1})
    shape = f"{total} {unit} in {pages} pages of {req.limit}"
    return f"page {dumps_str(call.page)} is {what}: {shape}; {retry}"


def _passthrough(value: Any, *, as_text: bool) -> Envelope[Any]:
    """A result that is not records or text, shown as it is (a brief, or with ``as_text``, text).

    A projected tool's output schema promises briefs that are objects, so there a scalar is
    shown as the envelope's ``text`` (its JSON, a string's quotes dropped) instead.
    """
    if value is None:
        return _Out(total=0, notes=["the tool returned no result"]).build()
    note = f"result passed through as is ({type(value).__name__}): nothing to slim"
    if as_text:
        plain = to_jsonable(value)
        text = plain if isinstance(plain, str) else dumps_str(plain)
        return _Out(total=1, text=text, notes=[note]).build()
    return _Out(total=1, briefs=[value], notes=[note]).build()


def _records(
    cfg: SlimConfig,
    call: Call,
    source: tuple[str, Sequence[Any]],
    req: _Req,
    saves: dict[str, Any],
    *,
    detailed: bool,
) -> tuple[_Out, list[str]]:
    kind, records = source
    page, limit, page_ok = req.page, req.limit, req.ok
    total = len(records)
    out = _Out(total=total)
    if cfg.paging is not None:
        out.page = page
        pages = max(1, -(-total // limit))
        if not page_ok or page > pages:
            out.page = None
            out.notes.append(_invalid_page(call, req, total, "items"))
            return out, []
        start = (page - 1) * limit
        chosen = records[start : start + limit]
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
    first: str | None = None
    if cfg.handles is not None:
        first = _attach_handles(cfg.handles, call.tool, kept, out.briefs, saves)
    tail = []
    if first is not None:
        tail.append(f"full record: {call.companion}({first})")
    return out, tail


def _attach_handles(
    spec: HandleSpec, tool: str, records: Sequence[Any], briefs: list[Any], saves: dict[str, Any]
) -> str | None:
    """Give every brief a handle, queue what the handle keeps, return the first one as shown.

    ``records`` are what handles keep (the full records, or their reduced form).
    """
    key = spec.key
    keep = spec.fetch is None
    prefix = record_key(tool, "")  # every record key is this prefix plus the handle
    first: str | None = None
    for i, (record, brief) in enumerate(zip(records, briefs, strict=True)):
        shown: Any = brief.get(key) if key and isinstance(brief, dict) else None
        # An int id (the usual key) is its decimal text, inline: one call less per record.
        handle = str(shown) if type(shown) is int else normalize_handle(shown)
        if handle is None:
            handle = make_handle(record)
            shown = handle
            briefs[i] = (
                {"handle": handle, **brief}
                if isinstance(brief, dict)
                else {"handle": handle, "value": brief}
            )
        if keep:
            saves[prefix + handle] = record
        if first is None:
            first = str(shown) if type(shown) is int else dumps_str(shown)
    return first


def _text(
    cfg: SlimConfig,
    call: Call,
    text: str,
    req: _Req,
    saves: dict[str, Any],
) -> tuple[_Out, list[str]]:
    lines = split_lines(text)
    if cfg.paging is not None:
        return _text_page(cfg, call, (text, lines), req, saves)
    out = _Out(total=len(lines))
    spec = cfg.handles
    if spec is None or len(lines) <= spec.head + spec.tail:
        out.text = text
        out.notes.append(f"all {len(lines)} lines")
        return out, []
    handle = _keep_text(call.tool, text, spec.head, saves)
    out.handle = handle
    more = f"{call.companion}({dumps_str(handle)}, page=2)"
    if spec.tail:
        omitted = len(lines) - spec.head - spec.tail
        middle = f"… {omitted} lines omitted: {more} reads on …"
        out.text = "\n".join([*lines[: spec.head], middle, *lines[-spec.tail :]])
        return out, [f"head and tail of {len(lines)} lines; the middle: {more}"]
    out.text = "\n".join(lines[: spec.head])
    return out, [f"lines 1-{spec.head} of {len(lines)}; more: {more}"]


def _text_page(
    cfg: SlimConfig,
    call: Call,
    source: tuple[str, list[str]],
    req: _Req,
    saves: dict[str, Any],
) -> tuple[_Out, list[str]]:
    text, lines = source
    page, limit, page_ok = req.page, req.limit, req.ok
    total = len(lines)
    out = _Out(total=total)
    pages = max(1, -(-total // limit))
    if not page_ok or page > pages:
        out.text = ""
        out.notes.append(_invalid_page(call, req, total, "lines"))
        return out, []
    if total <= limit:
        out.text = text
        out.notes.append(f"all {total} lines")
        return out, []
    out.page = page
    start = (page - 1) * limit
    shown = lines[start : start + limit]
    out.text = "\n".join(shown)
    end = start + len(shown)
    tail = [f"lines {start + 1}-{end} of {total}"]
    if end < total:
        nxt = {**call.args, "page": page + 1}
        if cfg.paging is not None and limit != cfg.paging.limit:
            nxt["limit"] = limit
        tail.append("next: " + format_call(call.tool, nxt))
    if cfg.handles is not None:
        out.handle = _keep_text(call.tool, text, limit, saves)
        tail.append(f"same pages later: {call.companion}({dumps_str(out.handle)}, page=N)")
    return out, tail


def _keep_text(tool: str, text: str, page_lines: int, saves: dict[str, Any]) -> str:
    """Queue the full text under a handle that ``get_record(handle, page=N)`` reads by pages."""
    handle = make_handle(text)
    saves[text_key(tool, handle)] = {"text": text, "page_lines": page_lines}
    return handle


def _fit(cfg: SlimConfig, call: Call, out: _Out, tail: list[str], req: _Req) -> Envelope[Any]:
    """Apply ``max_tokens``: drop briefs (or lines) from the end and say so in the hint."""
    env = _with_more(cfg, call, out, tail, req)
    budget = cfg.max_tokens
    if budget is None or cfg.counter(str(env)) <= budget:
        return env
    items: list[Any] = out.text.split("\n") if out.text is not None else out.briefs
    lo, hi = 0, len(items)
    while lo < hi:  # the most items whose envelope stays within the budget
        mid = (lo + hi + 1) // 2
        if cfg.counter(str(_trim(cfg, call, out, tail, req, items=items, k=mid))) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return _trim(cfg, call, out, tail, req, items=items, k=lo)


def _trim(
    cfg: SlimConfig,
    call: Call,
    out: _Out,
    tail: list[str],
    req: _Req,
    *,
    items: list[Any],
    k: int,
) -> Envelope[Any]:
    """The envelope with only the first ``k`` briefs (or lines), and how to get the rest."""
    what = "lines" if out.text is not None else "briefs"
    if out.text is not None:
        trimmed = dataclasses.replace(out, text="\n".join(items[:k]), notes=list(out.notes))
    else:
        trimmed = dataclasses.replace(out, briefs=items[:k], notes=list(out.notes))
    note = f"{k} of {len(items)} {what} shown to stay within {cfg.max_tokens} tokens"
    if cfg.paging is not None and k > 0:
        # Resume exactly after the last item shown: a page size that divides the count
        # shown so far makes ``page`` land on the first item not seen.
        seen = (req.page - 1) * req.limit + k
        size = max(d for d in range(1, k + 1) if seen % d == 0)
        note += "; rest: " + format_call(
            call.tool, {**call.args, "page": seen // size + 1, "limit": size}
        )
    elif cfg.paging is not None:
        note += "; ask for a smaller limit"
    else:  # not paginated: the dropped items have no page to come back on
        note += f"; narrow the {call.tool} call to see the others"
    trimmed.notes.append(note)
    if out.text is not None:  # the rest call above replaces the page's own "next:"
        tail = [t for t in tail if not t.startswith("next:")]
    elif k == 0:  # the first brief, named by "full record: ...", is not shown
        tail = [t for t in tail if not t.startswith("full record:")]
    return trimmed.build(tail)


def _with_more(cfg: SlimConfig, call: Call, out: _Out, tail: list[str], req: _Req) -> Envelope[Any]:
    """Final hint for records: how many more and the exact call for the next page."""
    if out.text is None and out.total == 0 and not out.notes:
        return out.build(tail, ["no results"])
    if out.text is not None or cfg.paging is None or not out.briefs:
        if out.text is None and cfg.paging is None and not out.notes and not tail:
            out.notes.append(f"all {out.total} shown")
        return out.build(tail)
    end = (req.page - 1) * req.limit + len(out.briefs)
    remaining = out.total - end
    if remaining > 0:
        nxt = {**call.args, "page": req.page + 1}
        if req.limit != cfg.paging.limit:
            nxt["limit"] = req.limit
        lead = [f"{remaining} more: {format_call(call.tool, nxt)}"]
    else:
        lead = [f"all {out.total} shown" if req.page == 1 else f"last page ({out.total} in all)"]
    return out.build(tail, lead)
