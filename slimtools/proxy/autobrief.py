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
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from slimtools.errors import ConfigurationError
from slimtools.foreign import Plan, Raw, extract, raw_tokens, records_in, slim
from slimtools.proxy.config import DEFAULT_AUTO_BRIEFS, ToolOptions
from slimtools.proxy.suggest import suggest
from slimtools.toolkit import Toolkit, ToolSpec

__all__ = [
    "AUTO_BRIEF_LIMIT",
    "AutoBriefs",
    "auto_briefed",
    "install",
    "prefetched",
    "unmatched_fields",
    "warn_unmatched",
]

log = logging.getLogger("slimtools.proxy")


AUTO_BRIEF_LIMIT = 20
"""Briefs per page: the same default as a configured tool's ``limit``."""

_PREFETCHED: contextvars.ContextVar[Any] = contextvars.ContextVar("slimtools_prefetched")


@dataclass
class AutoBriefs:
    """The brief options chosen for each tool from its first large record result."""

    warned: set[str] = field(default_factory=set)
    """Configured tools already warned that their fields match nothing."""
    threshold: int = DEFAULT_AUTO_BRIEFS
    """Tokens past which a record result is briefed (``auto_briefs`` in the config).

    About a screen of JSON: below it a result costs little however often it is read;
    above it (a 150-commit ``list_commits`` is 36,000 tokens) briefs save most of it on
    every call."""
    chosen: dict[str, ToolOptions] = field(default_factory=dict)

    def options_for(self, tool: str, data: Any, tokens: int) -> ToolOptions | None:
        """The tool's fixed options; chosen now from ``data`` if it is the first large one."""
        found = self.chosen.get(tool)
        if found is not None or tokens <= self.threshold:
            return found
        options = choose_options(tool, data)
        if options is not None and tool in self.chosen:  # a concurrent first call chose
            return self.chosen[tool]
        if options is not None:
            self.chosen[tool] = options
            shown = ", ".join(".".join(f.path) for f in options.fields or ())
            log.info("slimtools proxy: %s shows automatic briefs of %s", tool, shown)
        return options


def unmatched_fields(options: ToolOptions, data: Any) -> list[str] | None:
    """The keys ``data``'s records have when none of the configured fields is among them.

    None when a field matches, or when there is nothing to tell (no fields, no records).
    """
    if not options.fields or options.model is not None:
        return None
    records: Any = data
    for step in (options.items or "").strip(".").split(".") if options.items else ():
        records = records.get(step) if isinstance(records, dict) else None
    if isinstance(records, dict) and options.items is None:
        found, _ = records_in(records)
        records = found if found is not None else [records]
    if not isinstance(records, list):
        return None
    heads = {f.path[0] for f in options.fields}
    keys: dict[str, None] = {}
    for record in records[:50]:
        if isinstance(record, dict):
            if any(head in record for head in heads):
                return None  # a field matches: no need to gather every record's keys
            keys.update(dict.fromkeys(record))
    return list(keys) if keys else None


def warn_unmatched(tool: str, options: ToolOptions | None, data: Any, warned: set[str]) -> Any:
    """``data``, after logging once per tool that its configured fields match nothing."""
    if options is not None and tool not in warned:
        keys = unmatched_fields(options, data)
        if keys is not None:
            warned.add(tool)
            log.warning(
                "slimtools proxy: [tools.%s] fields match no key of its records, so its "
                "briefs are empty; the records have: %s",
                tool,
                ", ".join(keys[:20]),
            )
    return data


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
        if stack is not None or (paged and arguments.get("page", 1) != 1):
            return await (stack or plain)(**arguments)
        raw = await fetch(arguments)
        current = plan()
        if raw.is_error or raw.opaque or current.budget is None:
            return await _with(current.shape(raw), plain, arguments)
        data = extract(raw.texts, raw.structured)
        tokens = raw_tokens(raw.texts, raw.structured, current.counter)
        options = briefs.options_for(name, data, tokens)
        if options is None:
            return await _with(current.shape(raw), plain, arguments)
        shaped = Plan(options, current.budget, current.counter, current.passthrough)
        if "fn" not in briefed:  # (a concurrent first call may have registered it)
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


def install(
    kit: Toolkit,
    spec: ToolSpec,
    *,
    fetch: Fetch,
    plan: Callable[[], Plan],
    briefs: AutoBriefs,
    paged: bool,
    parameters: Mapping[str, Any] | None,
) -> None:
    """Register the automatic-brief chooser in front of the forwarder ``spec`` (bound to
    ``kit``, not registered: ``Toolkit.bind``).

    The forwarder (its handles resolvable while it is bound) answers until the tool's briefs
    are chosen; the chooser is listed with its schemas, so clients see no change.
    ``parameters`` is the upstream's input schema, which the briefed forwarder extends.
    """
    name = spec.name
    register = partial(
        kit.tool,
        name=name,
        description=spec.description,
        category=spec.category,
        read_only=spec.read_only,
        output_schema=spec.output_schema or {},
    )
    chooser = auto_briefed(
        name=name,
        fetch=fetch,
        plan=plan,
        plain=spec.function,
        register=partial(register, parameters=parameters),
        briefs=briefs,
        paged=paged,
    )
    register(chooser, parameters=spec.parameters)
