"""Automatic briefs: an unconfigured tool's large record results shown as briefs, no config.

When a tool returns records worth more than ``threshold`` tokens, the fields its briefs show
are chosen from that result and the tool's declared output schema alone
(``slimtools.proxy._autofields``): the same result shows the same bytes in every process
and instance, and each shape of record shows its own fields. Each brief carries a
content-addressed handle (sealed for session-less HTTP clients like any other), so
``get_record`` reads any record whole, and the hint names the fields left out. Text, errors
and small results are never briefed (text stays paged).

Page 2 and later are read from page 1's snapshot, which holds each record's brief: the proxy
notes in the handle store which fields page 1 chose (a few bytes, under the call's
arguments), so another instance sharing the store, or this one after a restart, serves the
next pages with the same fields and without calling the upstream again.

Rejected: fixing the fields from the first large result each process saw: two instances
then showed one call different bytes, and every shape but the first got bare handles.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from slimtools._json import dumps, dumps_str
from slimtools.foreign import (
    FieldSpec,
    Plan,
    Raw,
    ToolOptions,
    extract,
    raw_tokens,
    records_in,
    slim,
)
from slimtools.proxy._autofields import Choice, choose_fields
from slimtools.proxy.config import DEFAULT_AUTO_BRIEFS
from slimtools.stores.base import AsyncHandleStore
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
_PAGING = frozenset({"page", "limit", "cursor"})
"""Arguments that choose a page of one query, not the query: left out of its choice's key."""
_MAX_STACKS = 64
"""Slimmed forwarders kept per tool, one per distinct choice of fields (the oldest dropped)."""


@dataclass
class AutoBriefs:
    """The proxy-wide settings of automatic briefs."""

    warned: set[str] = field(default_factory=set)
    """Configured tools already warned that their fields match nothing."""
    threshold: int = DEFAULT_AUTO_BRIEFS
    """Tokens past which a record result is briefed (``auto_briefs`` in the config).

    About a screen of JSON: below it a result costs little however often it is read;
    above it (a 150-commit ``list_commits`` is 36,000 tokens) briefs save most of it on
    every call."""


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


def options_of(fields: tuple[FieldSpec, ...], items: str | None) -> ToolOptions:
    """The options of an automatic brief: the chosen fields, generated handles (sealable
    like any other), ``AUTO_BRIEF_LIMIT`` a page."""
    return ToolOptions(items=items, fields=fields, limit=AUTO_BRIEF_LIMIT)


def left_out_note(choice: Choice, companion: str) -> str:
    """What the hint says of the fields a brief leaves out, and how to see them."""
    if not choice.left_out:
        return ""
    shown = ", ".join(choice.left_out[:12])
    more = f" and {len(choice.left_out) - 12} more" if len(choice.left_out) > 12 else ""
    return (
        f" Briefs show {', '.join(choice.shown)}; left out: {shown}{more} "
        f"({companion}(handle) shows the whole record)."
    )


Fetch = Callable[[dict[str, Any]], Awaitable[Raw]]


def prefetched(fetch: Fetch, shape: Callable[[Raw], Any]) -> Callable[..., Awaitable[Any]]:
    """A forwarder that answers with the result fetched for this call, if any, else fetches."""

    async def forward(**arguments: Any) -> Any:
        found = _PREFETCHED.get(None)
        if found is not None:
            return found
        return shape(await fetch(arguments))

    return forward


def query_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """The store key under which the fields page 1 of a query chose are noted."""
    query = {k: v for k, v in arguments.items() if k not in _PAGING}
    digest = hashlib.blake2b(dumps(dict(sorted(query.items()))), digest_size=10).hexdigest()
    return f"a:{tool}:{digest}"


@dataclass
class _Briefed:
    """One tool's automatic briefs: a slimmed forwarder per choice of fields."""

    name: str
    fetch: Fetch
    plan: Callable[[], Plan]
    register: Callable[[Any], Any]
    kit: Toolkit
    paged: bool
    stacks: dict[str, Any] = field(default_factory=dict)

    def stack(self, choice: Choice, items: str | None) -> Any:
        """The slimmed forwarder for ``choice`` (registered, so get_record reads its handles)."""
        key = dumps_str([[list(f.path), f.name, f.clip] for f in choice.fields]) + str(items)
        found = self.stacks.get(key)
        if found is None:
            current = self.plan()
            shaped = Plan(
                options_of(choice.fields, items),
                current.budget,
                current.counter,
                current.passthrough,
            )
            fn = slim(
                prefetched(self.fetch, shaped.shape), shaped, name=self.name, paged=self.paged
            )
            found = self.register(fn)
            if len(self.stacks) >= _MAX_STACKS:
                self.stacks.pop(next(iter(self.stacks)))
            self.stacks[key] = found
        return found

    async def note(self, arguments: Mapping[str, Any], choice: Choice, items: str | None) -> None:
        """Note in the store which fields page 1 of this query chose (best effort)."""
        value = {
            "fields": [[list(f.path), f.name, f.clip] for f in choice.fields],
            "left_out": list(choice.left_out),
            "items": items,
        }
        await _store(self.kit, "put", {query_key(self.name, arguments): value})

    async def noted(self, arguments: Mapping[str, Any]) -> tuple[Choice, str | None] | None:
        """The fields page 1 of this query chose, as noted in the store (None: not noted)."""
        key = query_key(self.name, arguments)
        found = await _store(self.kit, "get", [key])
        value = found.get(key) if isinstance(found, Mapping) else None
        try:
            fields = tuple(FieldSpec(tuple(p), n, c) for p, n, c in value["fields"])  # type: ignore[index]
            left = tuple(str(k) for k in value["left_out"])  # type: ignore[index]
            items = value.get("items")  # type: ignore[union-attr]
        except (TypeError, KeyError, ValueError, AttributeError):
            return None
        return Choice(fields, left), items if isinstance(items, str) else None


async def _store(kit: Toolkit, action: str, value: Any) -> Any:
    """``put_many``/``get_many`` on the toolkit's store in the current scope; a store that
    fails is logged and read as holding nothing."""
    store, scope = kit.store, kit.scope()
    try:
        if isinstance(store, AsyncHandleStore):
            if action == "put":
                return await store.aput_many(scope, value)
            return await store.aget_many(scope, value)
        sync = store.put_many if action == "put" else store.get_many
        return await anyio.to_thread.run_sync(sync, scope, value)
    except Exception as exc:  # a store down: the call goes on without the note
        log.warning("slimtools proxy: handle store unavailable for automatic briefs: %s", exc)
        return {}


def auto_briefed(
    *,
    name: str,
    fetch: Fetch,
    plan: Callable[[], Plan],
    plain: Callable[..., Awaitable[Any]],
    register: Callable[[Any], Any],
    briefs: AutoBriefs,
    paged: bool,
    kit: Toolkit,
    schema: Mapping[str, Any] | None = None,
) -> Callable[..., Awaitable[Any]]:
    """The tool as the model calls it: paged as before, or briefed when its result is large.

    ``plain`` is the registered unconfigured forwarder (it reads ``_PREFETCHED``);
    ``register`` binds a slimmed function under the tool's name (its handles resolvable
    while it is held) and returns it;
    ``schema`` is the upstream's declared output schema.
    """
    tool = _Briefed(name, fetch, plan, register, kit, paged)
    companion = kit.companion_name

    async def call(**arguments: Any) -> Any:
        if paged and arguments.get("page", 1) != 1:
            noted = await tool.noted(arguments)
            if noted is None:  # page 1 was not briefed (or has expired): as it was paged
                return await plain(**arguments)
            choice, items = noted
            return _told(await tool.stack(choice, items)(**arguments), choice, companion)
        raw = await fetch(arguments)
        current = plan()
        if raw.is_error or raw.opaque or current.budget is None:
            return await _with(current.shape(raw), plain, arguments)
        data = extract(raw.texts, raw.structured)
        tokens = raw_tokens(raw.texts, raw.structured, current.counter)
        records, items = records_in(data) if tokens > briefs.threshold else (None, None)
        found = choose_fields(records, schema) if records is not None else None
        if found is None:
            return await _with(current.shape(raw), plain, arguments)
        stack = tool.stack(found, items)
        if paged:
            await tool.note(arguments, found, items)
        shaped = Plan(options_of(found.fields, items), current.budget, current.counter)
        return _told(await _with(shaped.shape(raw), stack, arguments), found, companion)

    call.__name__ = name
    return call


def _told(result: Any, choice: Choice, companion: str) -> Any:
    """``result`` (an envelope of briefs) with its hint naming the fields left out."""
    note = left_out_note(choice, companion)
    hint = getattr(result, "hint", None)
    if not note or not isinstance(hint, str) or not getattr(result, "briefs", None):
        return result
    return result.model_copy(update={"hint": hint + note})


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
    schema: Mapping[str, Any] | None = None,
) -> None:
    """Register the automatic-brief chooser in front of the forwarder ``spec`` (bound to
    ``kit``, not registered: ``Toolkit.bind``).

    The forwarder (its handles resolvable while it is bound) answers results that are not
    briefed; the chooser is listed with its schemas, so clients see no change.
    ``parameters`` is the upstream's input schema, which the briefed forwarder extends;
    ``schema`` its output schema, which the choice of fields reads.
    """
    name = spec.name
    options = {
        "name": name,
        "description": spec.description,
        "category": spec.category,
        "read_only": spec.read_only,
        "parameters": parameters,
    }

    def bind(fn: Any) -> Any:
        # Bound, not registered: the chooser stays the tool the model calls, and the
        # stack's handles are resolvable while it is held (``_Briefed.stacks``).
        return kit.bind(fn, **options).function  # type: ignore[arg-type]

    chooser = auto_briefed(
        name=name,
        fetch=fetch,
        plan=plan,
        plain=spec.function,
        register=bind,
        briefs=briefs,
        paged=paged,
        kit=kit,
        schema=schema,
    )
    kit.tool(
        chooser,
        name=name,
        description=spec.description,
        category=spec.category,
        read_only=spec.read_only,
        output_schema=spec.output_schema or {},
        parameters=spec.parameters,
    )
