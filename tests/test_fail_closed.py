"""Fail closed: a tool with an allowlist or a deny never shows what it cannot project.

The property runs records that try to leak (``tests/strategies_fail_closed.py``), in every
shape a result comes in, through the three surfaces that share the rule: the decorators,
``slimtools.wrap`` on a plain callable, and the proxy's forwarder (its payload functions and
decorators, without MCP). Every text the model could read (page 1, page 2, the first
handle's record, an error) is checked for the sentinels.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import slimtools
from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.proxy._forward import Plan, Raw, slim
from slimtools.proxy.config import tool_options
from tests._profile import examples
from tests.strategies_fail_closed import (
    ALLOW,
    DENY,
    SHAPES,
    TEXT_SHAPES,
    items_of,
    leaks,
    leaky_records,
    raising,
    shape_names,
)

_names = (f"tool{n}" for n in itertools.count())
_PROPERTY = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _leaks(kit: Toolkit, name: str) -> list[tuple[str, str]]:
    """The sentinels in what a model reads from ``name``: page 1, page 2, the first record.

    A handle's record is the full record minus ``deny`` (no ``detail=`` allowlist is
    given), so there only denied values count.
    """
    first = kit.call(name, {})
    found = [(w, first.text) for w in leaks(first.text)]
    second = kit.call(name, {"page": 2}).text
    found += [(w, second) for w in leaks(second)]
    briefs = json.loads(first.text).get("briefs") if not first.is_error else None
    if briefs:
        record = kit.call("get_record", {"handle": briefs[0]["id"]}).text
        found += [(w, record) for w in leaks(record) if w == "DENIED"]
    return found


def _decorated(kit: Toolkit, body: Callable[[], Any], items: str | None) -> str:
    name = next(_names)

    @project_fields(ALLOW, deny=DENY, items=items)
    @paginate(limit=2)
    @summarize_with_handle(key="id")
    def tool() -> Any:
        return body()

    kit.tool(tool, name=name)
    return name


def _wrapped(kit: Toolkit, body: Callable[[], Any], items: str | None) -> str:
    name = next(_names)

    def tool() -> Any:
        return body()

    tool.__name__ = name
    options: dict[str, Any] = {"fields": ALLOW, "deny": DENY, "key": "id", "limit": 2}
    slimtools.wrap(tool, toolkit=kit, **options, **({"items": items} if items else {}))
    return name


def _proxied(kit: Toolkit, texts: list[str]) -> str:
    name = next(_names)
    options = tool_options({"fields": ALLOW, "deny": DENY, "key": "id", "limit": 2})
    plan = Plan(options, 20_000)

    def forward(**arguments: Any) -> Any:
        return plan.shape(Raw(texts=texts))

    forward.__name__ = name
    kit.tool(slim(forward, plan, name=name), name=name)
    return name


@_PROPERTY
@given(records=leaky_records(), shape=shape_names)
def test_no_shape_leaks_through_the_decorators(records, shape):
    """Nothing denied and nothing outside the allowlist reaches the model, in any shape."""
    kit = Toolkit("fail-closed")
    name = _decorated(kit, lambda: SHAPES[shape](records), items_of(shape))
    assert _leaks(kit, name) == [], shape


@_PROPERTY
@given(records=leaky_records(), shape=shape_names)
def test_no_shape_leaks_through_wrap(records, shape):
    """``slimtools.wrap`` on a plain callable holds the same rule."""
    kit = Toolkit("fail-closed-wrap")
    name = _wrapped(kit, lambda: SHAPES[shape](records), items_of(shape))
    assert _leaks(kit, name) == [], shape


@_PROPERTY
@given(records=leaky_records(), shape=st.sampled_from(TEXT_SHAPES))
def test_no_text_shape_leaks_through_the_proxy_forwarder(records, shape):
    """The proxy's payload functions and decorators hold the rule for every text shape."""
    kit = Toolkit("fail-closed-proxy")
    name = _proxied(kit, [SHAPES[shape](records)])
    assert _leaks(kit, name) == [], shape


@_PROPERTY
@given(records=leaky_records())
def test_one_block_per_record_does_not_leak_through_the_proxy_forwarder(records):
    """Several text blocks, one JSON record each, are records too, and as safe."""
    kit = Toolkit("fail-closed-blocks")
    name = _proxied(kit, [json.dumps(r) for r in records])
    assert _leaks(kit, name) == []


@_PROPERTY
@given(records=leaky_records(), wrapped=st.booleans())
def test_an_exception_quoting_a_record_does_not_leak(records, wrapped):
    """An error quoting a row reaches the model without its denied or unlisted values."""
    kit = Toolkit("fail-closed-errors")
    build = _wrapped if wrapped else _decorated
    name = build(kit, raising(records), None)
    result = kit.call(name, {})
    assert result.is_error
    assert leaks(result.text) == [], result.text
    assert "bad row" in result.text


@_PROPERTY
@given(records=leaky_records(), shape=shape_names)
def test_readable_shapes_show_every_record(records, shape):
    """Fail closed is not fail empty: every readable shape shows all its records."""
    if shape == "prose":
        return
    kit = Toolkit("fail-closed-shown")
    name = _decorated(kit, lambda: SHAPES[shape](records), items_of(shape))
    env = json.loads(kit.call(name, {"limit": 100}).text)
    assert [b["id"] for b in env["briefs"]] == [r["id"] for r in records], shape


def test_a_withheld_result_is_logged_once_per_tool(caplog):
    """The developer hears once per tool that a result was withheld, and how to opt in."""

    @project_fields(["id"])
    def tool_logged_once() -> str:
        return "plain prose"

    tool = tool_logged_once
    with caplog.at_level(logging.WARNING, logger="slimtools"):
        tool()
        tool()
    warnings = [r for r in caplog.records if "withheld" in r.getMessage()]
    assert len(warnings) == 1
    assert 'on_unreadable="text"' in warnings[0].getMessage()
