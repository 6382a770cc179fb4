"""The envelope under construction, its final hint, and fitting it into ``max_tokens``.

``fit`` drops briefs (or lines) from the end until the serialised envelope is within the
budget, and the hint gives the call that resumes right after the last item shown. A record
too large for the budget on its own is shown clipped (its strings shortened, at worst only
its handle kept) rather than not at all, so ``get_record`` can still reach it.
``note_unkept`` words what the handle store did not keep, and withdraws the calls that would
read it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from slimtools._core.config import Call, SlimConfig
from slimtools._core.keys import handle_of, is_snapshot_key
from slimtools._core.paging import format_call, page_start, tool_call
from slimtools.clip import clip_text
from slimtools.envelope import Envelope, make_envelope

# The records below are created on every call and never changed afterwards, yet are not
# ``frozen``: a frozen dataclass sets each field through ``object.__setattr__``, which makes
# construction about three times slower.


class Part(NamedTuple):
    """One part of a hint's tail, with what it offers carried as data: a trimmed envelope
    drops the offers it no longer keeps by their kind, never by reading their text.

    ``offers``: ``"next"`` the tool's call for the next page of a text; ``"record"`` the
    companion's call expanding the first brief; ``"handle"`` another companion call on a
    handle; ``""`` words only (what is shown).
    """

    text: str
    offers: str = ""


@dataclass(slots=True)
class Out:
    """The envelope under construction, plus the hint's parts."""

    total: int
    briefs: list[Any] = field(default_factory=list)
    text: str | None = None
    page: int | None = None
    handle: str | None = None
    notes: list[str] = field(default_factory=list)
    first_key: str | None = None
    """Store key of the record the hint's ``full record:`` call expands."""
    marker: tuple[str, str] | None = None
    """The omitted-lines marker in ``text``, and its wording when the store is unavailable."""

    def build(self, hint_tail: Sequence[Part] = (), lead: Sequence[str] = ()) -> Envelope[Any]:
        """The envelope; its hint joins the notes, then ``lead``, then ``hint_tail``."""
        hint = "; ".join([*self.notes, *lead, *(part.text for part in hint_tail)])
        page = self.page if self.page != 1 else None
        return make_envelope(
            self.total, self.briefs, hint, page=page, handle=self.handle, text=self.text
        )


@dataclass(slots=True)
class Req:
    """The page asked for, after validation: ``ok`` is False for an invalid page."""

    page: int
    limit: int
    ok: bool


def fit(
    cfg: SlimConfig, call: Call, out: Out, tail: list[Part], req: Req
) -> tuple[Envelope[Any], bool]:
    """The envelope within ``max_tokens``, and whether its hint offers a resume call.

    A resume call (``page=..., limit=...`` right after the last item shown) reads the page-1
    snapshot, so the caller must keep one whenever this says so.
    """
    env = with_more(cfg, call, out, tail, req)
    budget = cfg.max_tokens
    if budget is None or cfg.counter(str(env)) <= budget:
        return env, False
    items: list[Any] = out.text.split("\n") if out.text is not None else out.briefs
    lo, hi = 0, len(items)
    while lo < hi:  # the most items whose envelope stays within the budget
        mid = (lo + hi + 1) // 2
        if cfg.counter(str(_trim(cfg, call, out, tail, req, items=items, k=mid))) <= budget:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0 and out.text is None and items:
        key = None if cfg.handles is None else cfg.handles.key or "handle"
        for brief in _clip_levels(items[0], key):
            clipped = [brief, *items[1:]]
            env = _trim(cfg, call, out, tail, req, items=clipped, k=1, clipped=True)
            if cfg.counter(str(env)) <= budget:
                return env, cfg.paging is not None
    return _trim(cfg, call, out, tail, req, items=items, k=lo), cfg.paging is not None and lo > 0


def _trim(
    cfg: SlimConfig,
    call: Call,
    out: Out,
    tail: list[Part],
    req: Req,
    *,
    items: list[Any],
    k: int,
    clipped: bool = False,
) -> Envelope[Any]:
    """The envelope with only the first ``k`` briefs (or lines), and how to get the rest."""
    what = "lines" if out.text is not None else "briefs"
    if out.text is not None:
        trimmed = dataclasses.replace(out, text="\n".join(items[:k]), notes=list(out.notes))
    else:
        trimmed = dataclasses.replace(out, briefs=items[:k], notes=list(out.notes))
    cut = ", clipped" if clipped else ""
    note = f"{k} of {len(items)} {what} shown{cut} to stay within {cfg.max_tokens} tokens"
    seen = page_start(req.page, req.limit) + k
    if cfg.paging is not None and k > 0 and seen < out.total:
        # Resume exactly after the last item shown: a page size that divides the count
        # shown so far makes ``page`` land on the first item not seen.
        size = max(d for d in range(1, k + 1) if seen % d == 0)
        note += "; rest: " + format_call(
            call.tool, {**call.args, "page": seen // size + 1, "limit": size}
        )
    elif cfg.paging is not None and k == 0:
        note += "; ask for a smaller limit"
    elif cfg.paging is None and k < len(items):  # no page to come back on
        note += f"; narrow the {call.tool} call to see the others"
    trimmed.notes.append(note)
    if out.text is not None:  # the rest call above replaces the page's own next call
        tail = [part for part in tail if part.offers != "next"]
    elif k == 0:  # the first brief, which the "record" offer expands, is not shown
        tail = [part for part in tail if part.offers != "record"]
    return trimmed.build(tail)


def _clip_levels(brief: Any, key: str | None) -> Iterator[Any]:
    """Ever shorter forms of one brief: strings clipped harder, then the handle alone."""
    for chars in (400, 200, 100, 50, 20):
        yield _clip_strings(brief, chars, key)
    if key is not None and isinstance(brief, dict) and key in brief:
        yield {key: brief[key]}


def _clip_strings(value: Any, chars: int, keep: str | None = None) -> Any:
    """``value`` with every string longer than ``chars`` clipped (``keep``'s value intact)."""
    if isinstance(value, str):
        return clip_text(value, chars) if len(value) > chars else value
    if isinstance(value, dict):
        return {k: v if k == keep else _clip_strings(v, chars) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clip_strings(v, chars) for v in value]
    return value


def with_more(cfg: SlimConfig, call: Call, out: Out, tail: list[Part], req: Req) -> Envelope[Any]:
    """Final hint for records: how many more and the exact call for the next page."""
    if out.text is None and out.total == 0 and not out.notes:
        return out.build(tail, ["no results"])
    if out.text is not None or cfg.paging is None or not out.briefs:
        if out.text is None and cfg.paging is None and not out.notes and not tail:
            return out.build(tail, [f"all {out.total} shown"])
        return out.build(tail)
    end = page_start(req.page, req.limit) + len(out.briefs)
    remaining = out.total - end
    if remaining > 0:
        nxt = tool_call(
            call.tool, call.args, page=req.page + 1, limit=req.limit, default=cfg.paging.limit
        )
        lead = [f"{remaining} more: {nxt}"]
    else:
        lead = [f"all {out.total} shown" if req.page == 1 else f"last page ({out.total} in all)"]
    return out.build(tail, lead)


def note_unkept(call: Call, out: Out, tail: list[Part], refused: Collection[str] | None) -> bool:
    """Say what the store did not keep, and offer no call that would read it; True if told.

    ``refused`` are the keys the store refused (too large), or ``None`` when it was
    unavailable and kept nothing.
    """
    if refused is None:
        out.notes.append(
            "the handle store is unavailable, so these handles cannot be expanded "
            f"now: call {call.tool} again for details"
        )
        forget_handles(out, tail)
        return True
    if not refused:
        return False
    shown = sorted(handle_of(k, call.tool) for k in refused if not is_snapshot_key(k))
    if not shown:
        return False
    out.notes.append(f"too large to keep, not expandable: {', '.join(shown[:5])}")
    if out.first_key in refused:
        forget_handles(out, tail)
    return True


def forget_handles(out: Out, tail: list[Part]) -> None:
    """Drop every offer to expand a handle the store does not hold."""
    tail[:] = [part for part in tail if part.offers not in ("record", "handle")]
    if out.marker is not None and out.text is not None:
        out.text = out.text.replace(*out.marker, 1)
    out.handle = None
