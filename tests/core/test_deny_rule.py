"""One ``deny`` rule on every surface: what a denied name matches, and how values are masked.

The rule is stated once (``slimtools.projection._deny``, the table in docs/allowlist.md) and
applied by one function, ``apply_deny``; these tests pin its table row by row through the
decorators, ``wrap()`` and the proxy's forwarder, and the property at the end states that
the three show the model the same values, on the page and through ``get_record``.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel

import slimtools
from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle
from slimtools.foreign import Plan, Raw, slim
from slimtools.projection import apply_deny, compile_deny
from slimtools.proxy.config import tool_options
from tests._profile import examples
from tests.core.strategies_fail_closed import denied_results

_names = (f"deny{n}" for n in itertools.count())
_PROPERTY = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

Surface = Callable[[Toolkit, list[dict[str, Any]], list[str], list[str]], str]


def _decorated(
    kit: Toolkit, records: list[dict[str, Any]], fields: list[str], deny: list[str]
) -> str:
    name = next(_names)

    @project_fields(fields, deny=deny)
    @paginate(limit=2)
    @summarize_with_handle(key="id")
    def tool() -> Any:
        return copy.deepcopy(records)

    kit.tool(tool, name=name)
    return name


def _wrapped(
    kit: Toolkit, records: list[dict[str, Any]], fields: list[str], deny: list[str]
) -> str:
    name = next(_names)

    def tool() -> Any:
        return copy.deepcopy(records)

    tool.__name__ = name
    slimtools.wrap(tool, toolkit=kit, fields=fields, deny=deny, key="id", limit=2)
    return name


def _proxied(
    kit: Toolkit, records: list[dict[str, Any]], fields: list[str], deny: list[str]
) -> str:
    name = next(_names)
    options = tool_options({"fields": fields, "deny": deny, "key": "id", "limit": 2})
    plan = Plan(options, 20_000)

    def forward(**arguments: Any) -> Any:
        return plan.shape(Raw(texts=[json.dumps(records)]))

    forward.__name__ = name
    kit.tool(slim(forward, plan, name=name), name=name)
    return name


SURFACES: dict[str, Surface] = {"decorators": _decorated, "wrap": _wrapped, "proxy": _proxied}


def _seen(kit: Toolkit, name: str) -> dict[str, Any]:
    """What the model can read of a tool: its briefs on pages 1 and 2, each record by handle."""
    pages = [json.loads(kit.call(name, {"page": p}).text) for p in (1, 2)]
    briefs = [b for page in pages for b in page.get("briefs", [])]
    records = {
        str(b["id"]): json.loads(kit.call("get_record", {"handle": str(b["id"])}).text)
        for b in briefs
    }
    return {"briefs": briefs, "records": records}


def _through(
    surface: str, records: list[dict[str, Any]], fields: list[str], deny: list[str]
) -> dict[str, Any]:
    kit = Toolkit(f"deny-{surface}")
    return _seen(kit, SURFACES[surface](kit, records, fields, deny))


# what a denied name matches -----------------------------------------------------------


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_denied_name_is_removed_at_every_depth_from_get_record(surface):
    """``deny=["ssn"]`` removes ``ssn`` from nested objects and list items, not only the top."""
    rows = [{"id": 1, "ssn": "123-45-6789", "meta": {"ssn": "111-22-3333", "x": 1},
             "contacts": [{"ssn": "222-33-4444", "phone": "555"}]}]  # fmt: skip
    record = _through(surface, rows, ["id"], ["ssn"])["records"]["1"]
    assert record == {"id": 1, "meta": {"x": 1}, "contacts": [{"phone": "555"}]}


@pytest.mark.parametrize("surface", sorted(SURFACES))
@pytest.mark.parametrize("spelling", ["SSN", "Ssn", "s_s_n", "S-S-N", "s sn"])
def test_a_denied_name_matches_other_cases_and_look_alike_keys(surface, spelling):
    """Keys are compared folded: case ignored, ``_``, ``-`` and spaces dropped."""
    rows = [{"id": 1, spelling: "123-45-6789", "meta": {spelling: "987-65-4321"}}]
    seen = _through(surface, rows, ["id", "meta"], ["ssn"])
    assert seen["briefs"] == [{"id": 1, "meta": {}}]
    assert seen["records"]["1"] == {"id": 1, "meta": {}}


def test_a_camel_case_key_matches_a_snake_case_deny():
    """``social_security_number`` denies ``socialSecurityNumber`` too."""
    clean, _ = apply_deny(
        [{"socialSecurityNumber": "x", "id": 1}], compile_deny(["social_security_number"])
    )
    assert clean == [{"id": 1}]


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_dotted_path_matches_wherever_its_first_step_stands(surface):
    """``user.email`` removes ``email`` under every ``user`` key, and no other ``email``."""
    rows = [{"id": 1, "user": {"email": "ann@x.org", "login": "ann"},
             "owner": {"user": {"email": "bob@x.org", "login": "bob"}},
             "email": "team@x.org"}]  # fmt: skip
    record = _through(surface, rows, ["id"], ["user.email"])["records"]["1"]
    assert record == {
        "id": 1,
        "user": {"login": "ann"},
        "owner": {"user": {"login": "bob"}},
        "email": "team@x.org",
    }


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_json_pairs_inside_an_allowlisted_string_are_masked(surface):
    """A string field quoting a denied pair (``'{"ssn": "..."}'``) shows it masked."""
    rows = [{"id": 1, "name": '{"SSN": "999-88-7777", "city": "Oslo"}'}]
    seen = _through(surface, rows, ["id", "name"], ["ssn"])
    assert seen["briefs"][0]["name"] == '{"SSN": "[redacted]", "city": "Oslo"}'
    assert "999-88-7777" not in json.dumps(seen)


def test_an_allowlisted_field_named_like_a_denied_key_is_left_out_with_its_default():
    """A field whose source is denied is not shown, not even its model default."""

    class Brief(BaseModel):
        id: int
        SSN: str = "unknown"

    tool = project_fields(Brief, deny=["ssn"])(lambda: [{"id": 1, "SSN": "123-45-6789"}])
    assert tool().briefs == [{"id": 1}]


def test_the_data_given_is_never_changed():
    """``apply_deny`` copies what it changes; the caller's records stay as they were."""
    rows = [{"id": 1, "ssn": "123-45-6789", "meta": {"ssn": "x", "note": "ssn=123-45-6789"}}]
    before = copy.deepcopy(rows)
    apply_deny(rows, compile_deny(["ssn"]))
    assert rows == before


@settings(max_examples=examples(200), deadline=None)
@given(result=denied_results())
def test_the_flat_shortcut_matches_the_walk(result):
    """The shortcut for a list of flat dicts gives what the general walk gives."""
    records, _fields, deny = result
    tree = compile_deny(deny)
    shortcut, secrets = apply_deny(records, tree)
    walked, walked_secrets = apply_deny({"r": records}, tree)  # not a list: the walk reads it
    assert shortcut == walked["r"]
    assert secrets.values == walked_secrets.values


# masking ----------------------------------------------------------------------------


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_clip_through_a_denied_value_shows_no_prefix_of_it(surface):
    """The value is masked before the clip: ``123-45-67…`` never shows."""

    class Brief(BaseModel):
        id: int
        note: Annotated[str, Clip(10)]

    rows = [{"id": 1, "ssn": "123-45-6789", "note": "123-45-6789 on file"}]
    kit = Toolkit(f"clip-{surface}")
    if surface == "decorators":
        name = next(_names)
        kit.tool(project_fields(Brief, deny=["ssn"])(lambda: copy.deepcopy(rows)), name=name)
    else:
        name = next(_names)

        def tool() -> Any:
            return copy.deepcopy(rows)

        tool.__name__ = name
        if surface == "wrap":
            slimtools.wrap(tool, toolkit=kit, fields=Brief, deny=["ssn"])
        else:
            options = tool_options({"fields": [{"path": "id"}, {"path": "note", "clip": 10}],
                                    "deny": ["ssn"]})  # fmt: skip
            plan = Plan(options, 20_000)
            kit.tool(slim(lambda: plan.shape(Raw(texts=[json.dumps(rows)])), plan, name=name),
                     name=name)  # fmt: skip
    text = kit.call(name, {}).text
    assert "123-45" not in text, text
    assert "[redacted…" in text


@pytest.mark.parametrize(
    "form",
    [
        "ANN.LEE@EXAMPLE.ORG",  # another case
        "ann.lee%40example.org",  # URL-encoded
        "ann.lee\\u0040example.org",  # JSON-escaped
        "ann.lee&#64;example.org",  # HTML decimal entity
        "ann.lee&#x40;example.org",  # HTML hexadecimal entity
        "ann.lee&commat;example.org",  # HTML named entity
    ],
)
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_denied_value_is_masked_in_its_common_encodings(surface, form):
    """An e-mail quoted elsewhere in another case or encoding is masked too."""
    rows = [{"id": 1, "email": "ann.lee@example.org", "note": f"mailto:{form} today"}]
    seen = _through(surface, rows, ["id", "note"], ["email"])
    assert seen["briefs"][0]["note"] == "mailto:[redacted] today"
    assert seen["records"]["1"]["note"] == "mailto:[redacted] today"


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_handle_key_equal_to_a_denied_value_keeps_its_record_reachable(surface):
    """An id that is also a denied e-mail is shown and found by ``get_record``."""
    rows = [{"id": "ann.lee@example.org", "email": "ann.lee@example.org", "note": "vip"}]
    seen = _through(surface, rows, ["id", "note"], ["email"])
    assert seen["briefs"] == [{"id": "ann.lee@example.org", "note": "vip"}]
    assert seen["records"]["ann.lee@example.org"] == {"id": "ann.lee@example.org", "note": "vip"}


# one rule, every surface ------------------------------------------------------------


@_PROPERTY
@given(result=denied_results())
def test_every_surface_shows_the_same_values(result):
    """For any records, allowlist and deny, the decorators, ``wrap()`` and the proxy show the
    model the same briefs and the same ``get_record`` answers, none holding a denied value."""
    records, fields, deny = result
    seen = {surface: _through(surface, records, fields, deny) for surface in SURFACES}
    assert seen["wrap"] == seen["decorators"]
    assert seen["proxy"] == seen["decorators"]
    assert "denied" not in json.dumps(seen["decorators"]).lower()
