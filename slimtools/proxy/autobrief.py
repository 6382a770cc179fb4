"""Automatic briefs: an unconfigured tool's large record results shown as briefs, no config.

The first time a tool returns records worth more than ``threshold`` tokens, the ``suggest``
heuristic picks the fields to show (ids, names, states, dates, short type fields, clipped
texts) from that result, and the choice is fixed for the tool from then on: every later
result of it is shown through the same allowlist, so the bytes a prompt cache has seen stay
the same. Each brief carries a handle, so ``get_record`` reads any record whole. Text, errors
and small results are never briefed (text stays paged).

Rejected: choosing the fields per result. It adapts to each answer, but a tool whose briefs
change shape from call to call defeats the prompt cache and confuses the model.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from slimtools._core.jsonenc import dumps_str
from slimtools.errors import ConfigurationError
from slimtools.proxy._forward import Plan, Raw, slim
from slimtools.proxy._payload import extract, records_in
from slimtools.proxy.config import ToolOptions
from slimtools.proxy.suggest import suggest

__all__ = ["AUTO_BRIEF_LIMIT", "AUTO_BRIEF_TOKENS", "AutoBriefs", "auto_briefed"]

log = logging.getLogger("slimtools.proxy")

AUTO_BRIEF_TOKENS = 2_000
"""Record results worth more tokens than this are briefed when the tool is not configured.

About a screen of JSON: below it a result costs little however often it is read; above it
(a 150-commit ``list_commits`` is 36,000 tokens) briefs save most of it on every call.
"""

AUTO_BRIEF_LIMIT = 20
"""Briefs per page: the same default as a configured tool's ``limit``."""

_PREFETCHED: contextvars.ContextVar[Any] = contextvars.ContextVar("slimtools_prefetched")


@dataclass
class AutoBriefs:
    """The brief options chosen for each tool from its first large record result."""

    threshold: int = AUTO_BRIEF_TOKENS
    chosen: dict[str, ToolOptions] = field(default_factory=dict)

    def options_for(self, tool: str, data: Any, tokens: int) -> ToolOptions | None:
        """The tool's fixed options; chosen now from ``data`` if it is the first large one."""
        found = self.chosen.get(tool)
        if found is not None or tokens <= self.threshold:
            return found
        options = choose_options(tool, data)
        if options is not None:
            self.chosen[tool] = options
            shown = ", ".join(".".join(f.path) for f in options.fields or ())
            log.info("slimtools proxy: %s shows automatic briefs of %s", tool, shown)
        return options


def choose_options(tool: str, data: Any) -> ToolOptions | None:
    """Brief options for ``tool`` from one result, or None when it holds no records."""
    records, items = records_in(data)
    if records is None:
        return None
    try:
        found = suggest([data], tool=tool, limit=AUTO_BRIEF_LIMIT, measure=False)
    except ConfigurationError:  # records with no field worth a brief: leave it paged
        return None
    if found.items != items and items is not None:
        found.items = items
    if found.key is None:
        found.key = None  # handles are generated per record then
    return found.options()


Fetch = Callable[[dict[str, Any]], Awaitable[Raw]]


def prefetched(fetch: Fetch, shape: Callable[[Raw], Any]) -> Callable[..., Awaitable[Any]]:
    """A forwarder that answers with the result fetched for this call, if any, else fetches."""

    async def forward(**arguments: Any) -> Any:
        found = _PREFETCHED.get(None)
        if found is not None:
            return found
        return shape(await fetch(arguments))

    return forward


def auto_briefed(
    *,
    name: str,
    fetch: Fetch,
    plan: Callable[[], Plan],
    plain: Callable[..., Awaitable[Any]],
    register: Callable[[Any], Any],
    briefs: AutoBriefs,
    paged: bool,
) -> Callable[..., Awaitable[Any]]:
    """The tool as the model calls it: paged as before, or briefed once chosen.

    ``plain`` is the registered unconfigured forwarder (it reads ``_PREFETCHED``);
    ``register`` registers a slimmed function under the tool's name and returns it bound.
    """
    briefed: dict[str, Any] = {}

    async def call(**arguments: Any) -> Any:
        stack = briefed.get("fn")
        if stack is not None or arguments.get("page", 1) != 1:
            return await (stack or plain)(**arguments)
        raw = await fetch(arguments)
        current = plan()
        if raw.is_error or raw.opaque or current.budget is None:
            return await _with(current.shape(raw), plain, arguments)
        data = extract(raw.texts, raw.structured)
        options = briefs.options_for(name, data, _tokens(raw, current))
        if options is None:
            return await _with(current.shape(raw), plain, arguments)
        shaped = Plan(options, current.budget, current.counter, current.passthrough)
        briefed["fn"] = register(
            slim(prefetched(fetch, shaped.shape), shaped, name=name, paged=paged)
        )
        return await _with(shaped.shape(raw), briefed["fn"], arguments)

    call.__name__ = name
    return call


async def _with(value: Any, fn: Callable[..., Awaitable[Any]], arguments: dict[str, Any]) -> Any:
    """``fn(**arguments)`` answering from ``value`` instead of calling the upstream again."""
    token = _PREFETCHED.set(value)
    try:
        return await fn(**arguments)
    finally:
        _PREFETCHED.reset(token)


def _tokens(raw: Raw, plan: Plan) -> int:
    if raw.texts:
        return sum(plan.counter(t) for t in raw.texts)
    return plan.counter(dumps_str(raw.structured)) if raw.structured is not None else 0
