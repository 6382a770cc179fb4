"""How the pipeline shows a text result: whole, by pages, or head (and tail) and a handle.

Pages come from ``slimtools._core.textpages`` (exact slices of the text, within the page's
share of the budget); this module words them, writes the next call and keeps the text
under a handle whose pages are fixed when it is made.
"""

from __future__ import annotations

from typing import Any

from slimtools._core.config import Call, SlimConfig
from slimtools._core.fit import Out, Part, Req
from slimtools._core.keys import make_handle, text_key
from slimtools._core.paging import format_call, handle_call, past_end, split_lines, tool_call
from slimtools._core.textpages import cost, describe, text_pages
from slimtools._text import line_count


def show_text(
    cfg: SlimConfig,
    call: Call,
    text: str,
    req: Req,
    saves: dict[str, Any],
) -> tuple[Out, list[Part]]:
    if cfg.paging is not None:
        return _text_page(cfg, call, text, req, saves)
    total = line_count(text)
    out = Out(total=total)
    spec = cfg.handles
    budget = page_tokens(cfg, call)
    fits = budget is None or cost(cfg.counter, text) <= budget
    if spec is None or (total <= spec.head + spec.tail and fits):
        out.text = text
        out.notes.append(f"all {total} lines")
        return out, []
    lines = split_lines(text)
    if spec.tail:
        kept = [*lines[: spec.head], *lines[-spec.tail :]]
        if budget is None or cost(cfg.counter, "\n".join(kept)) <= budget:
            handle = _keep_text(call.tool, text, (spec.head, budget), saves)
            out.handle, out.first_key = handle, text_key(call.tool, handle)
            more = handle_call(call.companion, handle, 2)
            omitted = total - spec.head - spec.tail
            middle = f"… {omitted} lines omitted: {more} reads on …"
            out.marker = (middle, f"… {omitted} lines omitted …")
            out.text = "\n".join([*lines[: spec.head], middle, *lines[-spec.tail :]])
            return out, [
                Part(f"head and tail of {total} lines"),
                Part(f"the middle: {more}", "handle"),
            ]
    pages = text_pages(text, spec.head, budget, cfg.counter)
    handle = _keep_text(call.tool, text, (spec.head, budget), saves)
    out.handle, out.first_key = handle, text_key(call.tool, handle)
    first = pages[0]
    out.text = text[first.start : first.end]
    tail = [Part(describe(first, total))]
    if len(pages) > 1:
        tail.append(Part(f"more: {handle_call(call.companion, handle, 2)}", "handle"))
    return out, tail


def page_tokens(cfg: SlimConfig, call: Call) -> int | None:
    """The tokens a text page may hold: the budget less what the envelope around it takes.

    The reserve covers the envelope's keys and the hint, which repeats the call's arguments
    (the next call, and the handle's); at most half the budget goes to it.
    """
    if cfg.max_tokens is None:
        return None
    reserve = 120 + 2 * cfg.counter(format_call(call.tool, call.args))
    return max(1, cfg.max_tokens - min(reserve, cfg.max_tokens // 2))


def _text_page(
    cfg: SlimConfig,
    call: Call,
    text: str,
    req: Req,
    saves: dict[str, Any],
) -> tuple[Out, list[Part]]:
    page, limit, page_ok = req.page, req.limit, req.ok
    total = line_count(text)
    budget = page_tokens(cfg, call)
    pages = text_pages(text, limit, budget, cfg.counter)
    out = Out(total=total)
    if not page_ok or page > len(pages):
        out.text = ""
        retry = format_call(call.tool, {**call.args, "page": len(pages) if page_ok else 1})
        out.notes.append(
            past_end(
                call.page,
                valid=page_ok,
                total=total,
                unit="lines",
                size=limit,
                retry=retry,
                pages=len(pages),
            )
        )
        return out, []
    if len(pages) == 1:
        out.text = text
        out.notes.append(f"all {total} lines")
        return out, []
    out.page = page
    shown = pages[page - 1]
    out.text = text[shown.start : shown.end]
    tail = [Part(describe(shown, total))]
    if page < len(pages):
        default = cfg.paging.limit if cfg.paging is not None else limit
        nxt = tool_call(call.tool, call.args, page=page + 1, limit=limit, default=default)
        tail.append(Part("next: " + nxt, "next"))
    if cfg.handles is not None:
        out.handle = _keep_text(call.tool, text, (limit, budget), saves)
        out.first_key = text_key(call.tool, out.handle)
        later = handle_call(call.companion, out.handle, "N")
        tail.append(Part(f"same pages later: {later}", "handle"))
    return out, tail


def multipage(cfg: SlimConfig, call: Call, source: tuple[str | None, Any], limit: int) -> bool:
    """Whether records or a text take more than one page of ``limit`` (or of the budget)."""
    kind, data = source
    if kind != "text":
        return len(data) > limit
    text: str = data
    if line_count(text) > limit:
        return True
    budget = page_tokens(cfg, call)
    return budget is not None and cost(cfg.counter, text) > budget


def _keep_text(tool: str, text: str, spec: tuple[int, int | None], saves: dict[str, Any]) -> str:
    """Queue the full text under a handle that ``get_record(handle, page=N)`` reads by pages.

    The handle names the text and its page size together, so the pages a handle promises
    never change: a later call with another ``limit`` makes another handle.
    """
    lines, tokens = spec
    handle = make_handle([text, lines, tokens])
    saves[text_key(tool, handle)] = {"text": text, "page_lines": lines, "page_tokens": tokens}
    return handle
