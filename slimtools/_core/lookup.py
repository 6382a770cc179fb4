"""How ``get_record`` resolves a handle and words its answer (pure, but for live fetches).

Every failure is a model-readable message that says how to recover. An unknown, expired,
malformed or other-session handle reads the same way, so a lookup reveals nothing about
other sessions.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from slimtools._core.deny import strip
from slimtools._core.jsonenc import dumps_str
from slimtools._core.keys import chunks, normalize_handle, record_key, split_lines, text_key
from slimtools._core.pipeline import UNAVAILABLE
from slimtools.envelope import Envelope

if TYPE_CHECKING:
    from slimtools._core.config import SlimConfig
    from slimtools.toolkit import Toolkit

_MAX_HANDLE = 256


@dataclass(frozen=True)
class Lookup:
    """One ``get_record`` request on its way from plan to answer."""

    raw: Any
    handle: str | None
    tools: tuple[str, ...]
    keys: list[str]
    fetchers: dict[str, Any]
    configs: dict[str, SlimConfig] = field(default_factory=dict)
    """Each source tool's options: what its handles may show (``SlimConfig.keep``)."""
    problem: str | None = None
    found: dict[str, Any] = field(default_factory=dict)
    unavailable: bool = False
    errors: dict[str, str] = field(default_factory=dict)

    @classmethod
    def plan(cls, kit: Toolkit, raw: Any, source: Any) -> Lookup:
        """Normalise the handle and pick the store keys to read."""
        states = dict(kit._handle_tools)
        handle = normalize_handle(raw) if not isinstance(raw, (list, dict)) else None
        empty = cls(raw=raw, handle=handle, tools=tuple(states), keys=[], fetchers={})
        if handle is None or len(handle) > _MAX_HANDLE:
            return replace(empty, problem=_malformed(raw, kit.companion_name))
        if source is not None:
            if not isinstance(source, str) or source not in states:
                known = ", ".join(states) or "none yet"
                return replace(
                    empty,
                    problem=f"No tool {source!r} keeps handles in this toolkit; sources: {known}.",
                )
            states = {source: states[source]}
        tools = tuple(states)
        stored = [
            t
            for t, s in states.items()
            if s.cfg.handles is not None and s.cfg.handles.fetch is None
        ]
        keys = [record_key(t, handle) for t in stored] + [text_key(t, handle) for t in stored]
        fetchers = {
            t: s.cfg.handles.fetch
            for t, s in states.items()
            if s.cfg.handles and s.cfg.handles.fetch
        }
        configs = {t: s.cfg for t, s in states.items()}
        return cls(
            raw=raw, handle=handle, tools=tools, keys=keys, fetchers=fetchers, configs=configs
        )

    def with_found(self, answer: Any) -> Lookup:
        """Attach the store's answer (or mark the store unavailable)."""
        if answer is UNAVAILABLE:
            return replace(self, unavailable=True)
        return replace(self, found=dict(answer))

    def with_live(self, failed: Callable[[str, Exception], str]) -> Lookup:
        """When the store had nothing, ask the tools' ``fetch`` callables live.

        An async ``fetch`` is run to completion when no event loop is running in this thread;
        under a running loop it is reported as an error pointing at ``aget_record``. A
        ``fetch`` that raises is worded by ``failed(tool, exc)`` (the toolkit's ``on_error``).
        """
        if not self._wants_live():
            return self
        found: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for tool, fetch in self.fetchers.items():
            try:
                value = _run_sync(fetch(self.handle))
            except LookupError:
                continue
            except Exception as exc:  # a failing backend becomes a message, not a crash
                errors[tool] = failed(tool, exc)
                continue
            if value is not None:
                found[record_key(tool, self.handle or "")] = self._shown(tool, value)
        return replace(self, found=found, errors=errors)

    async def with_live_async(self, failed: Callable[[str, Exception], str]) -> Lookup:
        """:meth:`with_live` for async callers: an async ``fetch`` is awaited."""
        if not self._wants_live():
            return self
        found: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for tool, fetch in self.fetchers.items():
            try:
                value = fetch(self.handle)
                if inspect.isawaitable(value):
                    value = await value
            except LookupError:
                continue
            except Exception as exc:
                errors[tool] = failed(tool, exc)
                continue
            if value is not None:
                found[record_key(tool, self.handle or "")] = self._shown(tool, value)
        return replace(self, found=found, errors=errors)

    def _shown(self, tool: str, value: Any) -> Any:
        """A live-fetched record as the tool's handles may show it (detail view, deny)."""
        cfg = self.configs.get(tool)
        return cfg.keep(value) if cfg is not None and cfg.reduces else value

    def _wants_live(self) -> bool:
        return not (self.problem or self.found or not self.fetchers or self.handle is None)


def _run_sync(value: Any) -> Any:
    """``value``, or the result of awaiting it when no event loop runs in this thread."""
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(value))
    close = getattr(value, "close", None)
    if callable(close):
        close()  # never awaited otherwise: avoid the RuntimeWarning
    raise RuntimeError("fetch is async and an event loop is running: use aget_record")


async def _await(value: Any) -> Any:
    return await value


def _malformed(raw: Any, companion: str) -> str:
    shown = dumps_str(raw)[:60]
    return (
        f"{shown} is not a handle. Handles are the id or handle values shown in a tool's "
        f'briefs, e.g. {companion}(3) or {companion}("k3f9a2qd").'
    )


def render_lookup(lookup: Lookup, kit: Toolkit, page: Any) -> tuple[str, bool]:
    """The text ``get_record`` returns, and whether it is an error."""
    if lookup.problem:
        return lookup.problem, True
    handle = dumps_str(lookup.handle)
    again = " or ".join(lookup.tools) or "the tool that showed it"
    if not lookup.found:
        if lookup.unavailable:
            return (
                f"The handle store is unavailable right now, so handle {handle} cannot be read. "
                f"Try again later, or call {again} again."
            ), True
        if lookup.errors:
            detail = "; ".join(f"{t}: {e}" for t, e in lookup.errors.items())
            return f"Fetching handle {handle} failed ({detail}). Call {again} again.", True
        return (
            f"No record for handle {handle} in this session: it is unknown or has expired. "
            f"Call {again} again to get fresh handles."
        ), True
    by_tool: dict[str, tuple[str, Any]] = {}
    for key, stored in lookup.found.items():
        kind, tool, _ = key.split(":", 2)
        cfg = lookup.configs.get(tool)
        # Records are stored with denied paths removed; stripping again on the way out also
        # covers records a store kept from before deny= was added. (A detail view is in
        # output names, where source paths do not apply.)
        value = strip(stored, cfg.deny) if kind == "r" and cfg and cfg.detail is None else stored
        by_tool.setdefault(tool, (kind, value))
    distinct = {dumps_str(v) for _, v in by_tool.values()}
    if len(distinct) > 1:
        tools = sorted(by_tool)
        choices = " or ".join(f'{kit.companion_name}({handle}, source="{t}")' for t in tools)
        return (
            f"Handle {handle} matches records from several tools ({', '.join(tools)}). "
            f"Call {choices}.",
            True,
        )
    kind, value = next(iter(by_tool.values()))
    if not isinstance(page, int) or isinstance(page, bool) or page < 1:
        return f"page must be an integer >= 1, got {dumps_str(page)}.", True
    if kind == "t" and isinstance(value, dict) and isinstance(value.get("text"), str):
        return _text_page(
            value["text"], int(value.get("page_lines") or 50), lookup.handle or "", kit, page
        )
    return _record_page(value, lookup.handle or "", kit, page)


def _text_page(
    text: str, page_lines: int, handle: str, kit: Toolkit, page: int
) -> tuple[str, bool]:
    lines = split_lines(text)
    pages = max(1, -(-len(lines) // page_lines))
    call = f"{kit.companion_name}({dumps_str(handle)}, page="
    if page > pages:
        hint = (
            f"page {page} is past the end: {len(lines)} lines in {pages} pages of "
            f"{page_lines}; {call}{pages})"
        )
        return str(
            Envelope.model_construct(total=len(lines), hint=hint, handle=handle, text="", briefs=[])
        ), True
    start = (page - 1) * page_lines
    shown = lines[start : start + page_lines]
    end = start + len(shown)
    hint = f"lines {start + 1}-{end} of {len(lines)}"
    if end < len(lines):
        hint += f"; next: {call}{page + 1})"
    env: Envelope[Any] = Envelope.model_construct(
        total=len(lines),
        hint=hint,
        page=page if page != 1 else None,
        handle=handle,
        text="\n".join(shown),
        briefs=[],
    )
    return str(env), False


def _record_page(value: Any, handle: str, kit: Toolkit, page: int) -> tuple[str, bool]:
    text = value if isinstance(value, str) else dumps_str(value)
    if len(text) <= kit.record_max_chars:
        if page != 1:
            return (
                f"record {dumps_str(handle)} fits on one page; "
                f"call {kit.companion_name}({dumps_str(handle)}).",
                True,
            )
        return text, False
    parts = chunks(text, kit.record_max_chars)
    if page > len(parts):
        return (
            f"page {page} is past the end: record {dumps_str(handle)} has {len(parts)} pages.",
            True,
        )
    more = (
        f"; next: {kit.companion_name}({dumps_str(handle)}, page={page + 1})"
        if page < len(parts)
        else ""
    )
    head = (
        f"[record {dumps_str(handle)}: {len(text)} characters, page {page} of {len(parts)}{more}]\n"
    )
    return head + parts[page - 1], False
