"""``get_record``, the second engine: resolve a handle and word the answer (sans-I/O).

``get_record`` is a generator beside the pipeline's ``run``, driven by the same two drivers
(``slimtools._core.drive``): it yields a ``Load`` of the keys the handle may live under and,
when the store has nothing, an ``Invoke`` of each live ``fetch=``. It reads the toolkit as
plain data (``Sources``), never the ``Toolkit`` itself.

Every failure is a model-readable message that says how to recover. An unknown, expired,
malformed or other-session handle reads the same way, so a lookup reveals nothing about
other sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from slimtools._core.config import SlimConfig
from slimtools._core.drive import UNAVAILABLE, Engine, Invoke, Load
from slimtools._core.keys import normalize_handle, record_key, text_key
from slimtools._core.paging import chunks, handle_call, past_end
from slimtools._core.textpages import describe, text_pages
from slimtools._json import dumps_str
from slimtools._text import line_count
from slimtools.envelope import make_envelope
from slimtools.projection import UNPARSED, Unreadable, apply_deny, as_record, rows
from slimtools.tokens import count_tokens

_MAX_HANDLE = 256
_MAX_QUOTED = 60
_UNDER_LOOP = "fetch is async and an event loop is running: use aget_record"


@dataclass(frozen=True, slots=True)
class Sources:
    """What ``get_record`` knows of a toolkit: its handle tools and its settings.

    The toolkit replaces it whenever a tool that keeps handles is registered, so an engine
    run reads one consistent view.
    """

    tools: Mapping[str, SlimConfig]
    """Each tool that keeps handles, in registration order, with its options."""
    companion: str = "get_record"
    """The companion tool's name, as hints and messages write its calls."""
    record_max_chars: int = 20_000
    """Longer records are answered in pages of this many characters."""
    describe: Callable[[str, Exception], str] = lambda tool, exc: type(exc).__name__
    """Words a live ``fetch=`` failure of a tool (the toolkit's ``on_error``, logged)."""
    repeatable: frozenset[str] = frozenset()
    """The handle tools that only read (declared, or by their name's verbs): the only ones a
    message may tell the model to call again for fresh handles."""


Answer = tuple[str, bool]
"""The text ``get_record`` returns, and whether it is an error."""

Lookup = Callable[["Sources", Any, Any, Any], Engine[Answer]]
""":func:`get_record`'s signature: the engine itself, or one that also reports its answer
(``slimtools._core.observed.observed_lookup``)."""


def get_record(sources: Sources, raw: Any, source: Any, page: Any) -> Engine[Answer]:
    """The answer to ``get_record(raw, source=source, page=page)``; see the module docstring."""
    handle = normalize_handle(raw) if not isinstance(raw, (list, dict)) else None
    if handle is None or len(handle) > _MAX_HANDLE:
        return _malformed(raw, sources.companion), True
    tools = sources.tools
    if source is not None:
        if not isinstance(source, str) or source not in tools:
            known = ", ".join(tools) or "none yet"
            shown = _clip(repr(source) if isinstance(source, str) else dumps_str(source))
            return f"No tool {shown} keeps handles in this toolkit; sources: {known}.", True
        tools = {source: tools[source]}
    # (key, tool, is_text) for every key the handle may be stored under.
    kept = [t for t, cfg in tools.items() if cfg.handles is not None and cfg.handles.fetch is None]
    where = [(record_key(t, handle), t, False) for t in kept]
    where += [(text_key(t, handle), t, True) for t in kept]
    found: list[tuple[str, bool, Any]] = []  # (tool, is_text, value)
    unavailable = False
    if where:
        answer = yield Load([key for key, _, _ in where])
        if answer is UNAVAILABLE:
            unavailable = True
        else:
            found = [(t, text, answer[key]) for key, t, text in where if key in answer]
    errors: dict[str, str] = {}
    withheld: list[str] = []  # what a live fetch gave that cannot be read as a record
    if not found:
        for tool, cfg in tools.items():
            fetch = cfg.handles.fetch if cfg.handles is not None else None
            if fetch is None:
                continue
            try:
                value = yield Invoke(fetch, (handle,), under_loop=_UNDER_LOOP)
            except LookupError:
                continue
            except Exception as exc:  # a failing backend becomes a message, not a crash
                errors[tool] = sources.describe(tool, exc)
                continue
            value = _fetched(cfg, value)
            if isinstance(value, Unreadable):
                withheld.append(f"{tool}: {value.kind}")
            elif value is not None:
                kept = cfg.keep(apply_deny(value, cfg.deny)[0]) if cfg.reduces else value
                found.append((tool, False, kept))
    if not found and withheld:
        return (
            f"The record of handle {dumps_str(handle)} ({', '.join(withheld)}) has no field "
            "names, so it was withheld: this tool shows only fields it can project."
        ), True
    return _answer(
        sources,
        handle,
        page,
        tools=tuple(tools),
        found=found,
        unavailable=unavailable,
        errors=errors,
    )


def _fetched(cfg: SlimConfig, value: Any) -> Any:
    """A live ``fetch=``'s answer read as a guarded tool's results are
    (``projection.as_record``, ``projection.rows``): a row without field names (a plain
    tuple, a list of values, a set, prose) is an ``Unreadable`` verdict, never shown whole."""
    if not cfg.guarded or value is None:
        return value
    found = rows(value) if isinstance(value, (list, set, frozenset)) else as_record(value)
    if found is UNPARSED:
        return Unreadable(type(value).__name__, 0, "a record without field names")
    return found


def _clip(shown: str) -> str:
    """The head of a model-sent value quoted in an answer: a huge one is not echoed whole."""
    return shown if len(shown) <= _MAX_QUOTED else shown[:_MAX_QUOTED] + "…"


def _malformed(raw: Any, companion: str) -> str:
    shown = dumps_str(raw)[:60]
    return (
        f"{shown} is not a handle. Handles are the id or handle values shown in a tool's "
        f'briefs, e.g. {companion}(3) or {companion}("k3f9a2qd").'
    )


def _answer(
    sources: Sources,
    handle: str,
    page: Any,
    *,
    tools: tuple[str, ...],
    found: list[tuple[str, bool, Any]],
    unavailable: bool,
    errors: dict[str, str],
) -> Answer:
    """The text for what was found (or why nothing was), and whether it is an error."""
    shown = dumps_str(handle)
    readers = " or ".join(t for t in tools if t in sources.repeatable)
    # Only tools that only read are named: "call delete_entities again" would repeat a change.
    again = f"call {readers} again" if readers else "repeat the search or read that showed it"
    again_ = again[0].upper() + again[1:]
    if not found:
        if unavailable:
            return (
                f"The handle store is unavailable right now, so handle {shown} cannot be read. "
                f"Try again later, or {again}."
            ), True
        if errors:
            detail = "; ".join(f"{t}: {e}" for t, e in errors.items())
            return (
                f"Fetching handle {shown} failed ({detail}). {again[0].upper()}{again[1:]}.",
                True,
            )
        return (
            f"No record for handle {shown} in this session: it is unknown or has expired. "
            f"{again_} to get fresh handles."
        ), True
    by_tool: dict[str, tuple[bool, Any]] = {}
    for tool, is_text, stored in found:
        cfg = sources.tools.get(tool)
        # Records are stored with denied paths removed; stripping again on the way out also
        # covers records a store kept from before deny= was added. (A detail view is in
        # output names, where source paths do not apply.)
        clean = not is_text and cfg is not None and cfg.detail is None
        kept = apply_deny(stored, cfg.deny)[0] if clean and cfg else stored
        by_tool.setdefault(tool, (is_text, kept))
    if len({dumps_str(v) for _, v in by_tool.values()}) > 1:
        names = sorted(by_tool)
        choices = " or ".join(f'{sources.companion}({shown}, source="{t}")' for t in names)
        return (
            f"Handle {shown} matches records from several tools ({', '.join(names)}). "
            f"Call {choices}.",
            True,
        )
    is_text, value = next(iter(by_tool.values()))
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        return f"page must be an integer >= 1, got {_clip(dumps_str(page))}.", True
    if is_text and isinstance(value, dict) and isinstance(value.get("text"), str):
        size = _positive(value.get("page_lines")) or 50
        tokens = _positive(value.get("page_tokens"))
        tool = next(iter(by_tool))
        counter = sources.tools[tool].counter if tool in sources.tools else count_tokens
        return _text_answer(sources, value["text"], (size, tokens, counter), handle, page)
    return _record_answer(sources, value, handle, page)


def _positive(value: Any) -> int | None:
    """A stored page size, or None when it is missing or not a positive integer."""
    return value if type(value) is int and value >= 1 else None


def _text_answer(
    sources: Sources,
    text: str,
    spec: tuple[int, int | None, Callable[[str], int]],
    handle: str,
    page: int,
) -> Answer:
    """Page ``page`` of a kept text, as an envelope: the pages fixed when the handle was made."""
    size, tokens, counter = spec
    total = line_count(text)
    pages = text_pages(text, size, tokens, counter)
    if page > len(pages):
        retry = handle_call(sources.companion, handle, len(pages))
        hint = past_end(
            page, valid=True, total=total, unit="lines", size=size, retry=retry, pages=len(pages)
        )
        return str(make_envelope(total, [], hint, handle=handle, text="")), True
    shown = pages[page - 1]
    parts = [describe(shown, total)]
    if page < len(pages):
        parts.append("next: " + handle_call(sources.companion, handle, page + 1))
    env = make_envelope(
        total,
        [],
        "; ".join(parts),
        page=page if page != 1 else None,
        handle=handle,
        text=text[shown.start : shown.end],
    )
    return str(env), False


def _record_answer(sources: Sources, value: Any, handle: str, page: int) -> Answer:
    """A full record as JSON text, in pages of ``record_max_chars`` when it is longer."""
    text = value if isinstance(value, str) else dumps_str(value)
    size = sources.record_max_chars
    shown = dumps_str(handle)
    if len(text) <= size:
        if page != 1:
            return (
                f"record {shown} fits on one page; call {handle_call(sources.companion, handle)}.",
                True,
            )
        return text, False
    parts = chunks(text, size)
    if page > len(parts):
        return f"page {page} is past the end: record {shown} has {len(parts)} pages.", True
    more = (
        f"; next: {handle_call(sources.companion, handle, page + 1)}" if page < len(parts) else ""
    )
    head = f"[record {shown}: {len(text)} characters, page {page} of {len(parts)}{more}]\n"
    return head + parts[page - 1], False
