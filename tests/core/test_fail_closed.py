"""Fail closed: a tool with an allowlist or a deny never shows what it cannot project.

The property runs records that try to leak (``tests/core/strategies_fail_closed.py``), in every
shape a result comes in, through the three surfaces that share the rule: the decorators,
``slimtools.wrap`` on a plain callable, and the proxy's forwarder (its payload functions and
decorators, without MCP). Every text the model could read (page 1, page 2, the first
handle's record, an error) is checked for the sentinels.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import slimtools
from slimtools import (
    ConfigurationError,
    Envelope,
    Toolkit,
    paginate,
    project_fields,
    summarize_with_handle,
)
from slimtools.foreign import Plan, Raw, slim
from slimtools.projection._scrub import EXACT_MAX
from slimtools.proxy.config import tool_options
from tests._profile import examples
from tests.core.strategies_fail_closed import (
    ALLOW,
    DENY,
    SHAPES,
    TEXT_SHAPES,
    WITHHELD_SHAPES,
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
        first_brief = briefs[0]
        handle = first_brief["id"] if "id" in first_brief else first_brief.get("handle")
        record = kit.call("get_record", {"handle": handle}).text
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
    if shape in WITHHELD_SHAPES:
        return
    kit = Toolkit("fail-closed-shown")
    name = _decorated(kit, lambda: SHAPES[shape](records), items_of(shape))
    env = json.loads(kit.call(name, {"limit": 100}).text)
    ids = [str(r["id"]) if shape == "json dict by id" else r["id"] for r in records]
    assert [b["id"] for b in env["briefs"]] == ids, shape  # JSON keys are strings


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


def test_the_text_opt_in_shows_unreadable_text_with_denied_pairs_masked():
    """``on_unreadable="text"`` shows prose as text, values of denied ``key: value`` masked."""

    @project_fields(["id"], deny=["ssn"], on_unreadable="text")
    def status() -> str:
        return "user 1 ok\nssn: 123-45-6789"

    env = status()
    assert env.text == "user 1 ok\nssn: [redacted]"


def test_the_opt_in_must_be_withhold_or_text():
    """Any other ``on_unreadable`` is a configuration error at decoration time."""
    with pytest.raises(ConfigurationError, match="on_unreadable"):
        project_fields(["id"], on_unreadable="raw")  # type: ignore[arg-type]


def test_the_proxy_config_takes_the_same_opt_in():
    """``on_unreadable`` in a ``[tools.NAME]`` table is validated and kept."""
    assert tool_options({"fields": ["id"], "on_unreadable": "text"}).on_unreadable == "text"
    with pytest.raises(ConfigurationError, match="on_unreadable"):
        tool_options({"fields": ["id"], "on_unreadable": True})


def test_values_too_short_to_be_specific_are_not_masked_elsewhere():
    """Denied values under five characters (``"no"``, ``42``) stay in other fields."""
    rows = [{"id": 1, "note": "answer no, code 42, pin 98765", "flag": "no", "code": 42}]
    rows[0]["pin"] = 98765
    env = project_fields(["id", "note"], deny=["flag", "code", "pin"])(lambda: rows)()
    assert env.briefs[0]["note"] == "answer no, code 42, pin [redacted]"


def test_a_denied_number_is_masked_only_as_a_whole_number():
    """A denied number is masked where it stands alone, not inside a longer number."""
    rows = [{"id": 1, "note": "acct 123456 and 91234567", "acct": 123456}]
    env = project_fields(["id", "note"], deny=["acct"])(lambda: rows)()
    assert env.briefs[0]["note"] == "acct [redacted] and 91234567"


def test_what_a_handle_keeps_is_masked_too():
    """The record ``get_record`` shows has the call's denied values masked in its strings."""
    kit = Toolkit("fail-closed-kept")
    rows = [{"id": 1, "note": "ssn is 123-45-6789", "ssn": "123-45-6789", "extra": "x"}]
    kit.tool(
        summarize_with_handle(key="id")(project_fields(["id"], deny=["ssn"])(lambda: rows)),
        name="people",
    )
    kit.call("people", {})
    assert json.loads(kit.get_record(1)) == {"id": 1, "note": "ssn is [redacted]", "extra": "x"}


def test_wrap_with_only_a_deny_withholds_prose():
    """``wrap(fn, deny=[...])`` without fields still withholds what it cannot read."""
    kit = Toolkit("fail-closed-deny-only")

    def lookup() -> str:
        return "ssn 123-45-6789 belongs to Ann"

    slimtools.wrap(lookup, toolkit=kit, deny=["ssn"])
    text = kit.call("lookup", {}).text
    assert "123-45-6789" not in text
    assert "could not be read as records" in text


def test_tools_without_an_allowlist_keep_showing_text():
    """A tool with neither an allowlist nor a deny pages its text as before."""
    env = paginate(lambda: "a\nb")()
    assert env.text == "a\nb"


def test_wrap_with_only_a_deny_masks_denied_pairs_in_errors():
    """A wrapped callable's exception loses the values of denied keys, fields or not."""
    kit = Toolkit("fail-closed-deny-errors")

    def lookup() -> str:
        raise LookupError("no match for {'ssn': '123-45-6789', 'name': 'Ann'}")

    slimtools.wrap(lookup, toolkit=kit, deny=["ssn"])
    text = kit.call("lookup", {}).text
    assert "123-45-6789" not in text
    assert "'name': 'Ann'" in text


def test_wrap_with_only_a_deny_masks_a_generators_error_raised_mid_way():
    """A wrapped generator failing while its items are read loses denied values too."""
    kit = Toolkit("fail-closed-deny-generator")

    def lookup() -> Iterator[dict[str, Any]]:
        yield {"id": 0}
        raise LookupError("no match for {'ssn': '123-45-6789', 'name': 'Ann'}")

    slimtools.wrap(lookup, toolkit=kit, deny=["ssn"])
    text = kit.call("lookup", {}).text
    assert "123-45-6789" not in text
    assert "'name': 'Ann'" in text


class _RowError(Exception):
    """An exception whose message is built from an attribute, not from its arguments."""

    def __init__(self, row: dict[str, Any]) -> None:
        super().__init__()
        self.row = row

    def __str__(self) -> str:
        return f"bad row {self.row}"


def test_wrap_with_only_a_deny_masks_an_error_whose_message_is_not_its_arguments():
    """An exception whose ``__str__`` quotes a row reaches the model without its denied values."""
    kit = Toolkit("fail-closed-deny-str")

    def lookup() -> str:
        raise _RowError({"id": 1, "ssn": "123-45-6789", "name": "Ann"})

    slimtools.wrap(lookup, toolkit=kit, deny=["ssn"])
    text = kit.call("lookup", {}).text
    assert "123-45-6789" not in text
    assert "'name': 'Ann'" in text


def test_a_short_value_padded_with_spaces_is_still_short():
    """``"  no  "`` is two characters once stripped: exempt like ``"no"``."""
    rows = [{"id": 1, "note": "say no", "flag": "  no  "}]
    env = project_fields(["id", "note"], deny=["flag"])(lambda: rows)()
    assert env.briefs[0]["note"] == "say no"


def test_many_denied_values_are_found_by_words():
    """Past the exact-lookup limit (a long result), a denied value quoted elsewhere is masked."""
    rows = [{"id": i, "note": f"n{i}", "ssn": f"SSN-{i:06d}"} for i in range(EXACT_MAX + 50)]
    rows[3]["note"] = f"see {rows[100]['ssn']}, and 'Ann Lee'"
    rows[4]["ssn"] = "Ann Lee"
    env = project_fields(["id", "note"], deny=["ssn"])(lambda: rows)()
    assert env.briefs[3]["note"] == "see [redacted], and '[redacted]'"


def test_a_denied_value_with_quotes_is_found_and_masked():
    """A value that JSON escapes (a quote, a backslash) is found in the envelope all the same."""
    secret = 'pa"ss\\word'
    rows = [{"id": 1, "note": f"it is {secret}!", "pw": secret}]
    env = project_fields(["id", "note"], deny=["pw"])(lambda: rows)()
    assert env.briefs[0]["note"] == "it is [redacted]!"


def test_an_envelope_a_guarded_tool_relays_is_projected_like_its_records():
    """A guarded tool returning another tool's ``Envelope`` shows only what it can project."""
    relayed = Envelope(total=1, briefs=[{"id": 1, "ssn": "123-45-6789", "zz": "x"}], hint="h")
    env = project_fields(["id"], deny=["ssn"])(lambda: relayed)()
    assert (env.total, env.briefs) == (1, [{"id": 1}])


def test_a_text_envelope_a_guarded_tool_relays_is_withheld():
    """A relayed text ``Envelope`` is prose to the allowlist: withheld, not shown raw."""
    relayed = Envelope(total=1, text="ssn 123-45-6789 belongs to Ann", hint="h")
    env = project_fields(["id"])(lambda: relayed)()
    assert "123-45-6789" not in str(env)
    assert "could not be read as records" in env.hint


def test_wrap_with_only_a_deny_strips_a_relayed_envelope():
    """``wrap(fn, deny=[...])`` removes denied paths from an ``Envelope`` the callable relays."""
    kit = Toolkit("fail-closed-relayed")

    def lookup() -> Envelope[Any]:
        return Envelope(total=1, briefs=[{"id": 1, "ssn": "123-45-6789"}], hint="h")

    slimtools.wrap(lookup, toolkit=kit, deny=["ssn"])
    text = kit.call("lookup", {}).text
    assert "123-45-6789" not in text
    assert '"id":1' in text


def test_wrap_with_only_a_deny_reads_json_text_at_the_items_path():
    """``wrap(fn, deny=[...], items=...)`` reads JSON text at the path, denied keys removed."""
    kit = Toolkit("fail-closed-items-text")

    def lookup() -> dict[str, str]:
        return {"items": json.dumps([{"id": 1, "ssn": "123-45-6789"}])}

    slimtools.wrap(lookup, toolkit=kit, deny=["ssn"], items="items")
    text = kit.call("lookup", {}).text
    assert "123-45-6789" not in text
    assert '"id":1' in text


def test_the_proxy_forwarder_withholds_prose_at_the_items_path():
    """A proxied tool with a deny and ``items`` withholds prose found at the path."""
    kit = Toolkit("fail-closed-proxy-items")
    options = tool_options({"deny": ["ssn"], "items": "items"})
    plan = Plan(options, 20_000)

    def forward(**arguments: Any) -> Any:
        return plan.shape(Raw(texts=[json.dumps({"items": "ssn 123-45-6789 is Ann's"})]))

    forward.__name__ = "proxied"
    kit.tool(slim(forward, plan, name="proxied"), name="proxied")
    text = kit.call("proxied", {}).text
    assert "123-45-6789" not in text
    assert "could not be read as records" in text


def test_a_denied_pair_in_escaped_json_is_masked():
    """JSON quoted inside a JSON string (``\\"ssn\\": \\"...\\"``) loses its denied value too."""
    from slimtools.projection import scrub_pairs

    text = 'bad row "{\\"id\\": 1, \\"ssn\\": \\"SECRET-0001\\"}"; again SECRET-0001'
    masked = scrub_pairs(text, {"ssn"})
    assert "SECRET" not in masked
    assert '\\"id\\": 1' in masked
