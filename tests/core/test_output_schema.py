"""Every envelope a slim tool returns validates against the tool's published output schema.

MCP clients check ``structuredContent`` against ``outputSchema`` and reject a result that
does not match; the other adapters publish the same schema. Validation uses ``jsonschema``
(which the MCP SDK itself uses for that check) with the validator the schema calls for.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import validator_for
from pydantic import BaseModel

from slimtools import Clip, Toolkit, paginate, project_fields, summarize_with_handle
from tests._profile import examples
from tests.core_helpers import next_call
from tests.strategies import (
    RECORD_FORMS,
    Colour,
    allowlist_model,
    record_dicts,
    record_forms,
    shapes,
    typed_allowlist,
    typed_records,
    typed_shapes,
)


def _problems(kit: Toolkit, tool: str, envelope: dict[str, Any]) -> list[str]:
    schema = kit.spec(tool).output_schema
    assert schema is not None
    validator = validator_for(schema)(schema)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(envelope)]


def _valid(kit: Toolkit, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = kit.call(tool, arguments)
    assert not result.is_error, result.text
    assert result.structured is not None
    assert _problems(kit, tool, result.structured) == [], result.text
    return result.structured


class Label(BaseModel):
    id: int
    name: Annotated[str, Clip(12)]


def _projected(result: Any) -> Toolkit:
    kit = Toolkit("schema")

    @kit.tool
    @paginate(limit=2)
    @project_fields(Label)
    def labels() -> Any:
        """List labels."""
        return result

    return kit


def test_a_scalar_result_of_a_projected_tool_fits_the_schema():
    """A projected tool whose backend returns a scalar shows it as text, not as a brief."""
    envelope = _valid(_projected(0), "labels", {})
    assert envelope == {
        "total": 1,
        "hint": "result passed through as is (int): nothing to slim",
        "text": "0",
    }


def test_a_string_enum_in_a_clipped_field_fits_the_schema():
    """``Clip(12)`` holds for a string enum value on the fast path (``maxLength``)."""
    envelope = _valid(_projected([{"id": 1, "name": Colour.GREEN}]), "labels", {})
    assert envelope["briefs"] == [{"id": 1, "name": "green, a…"}]


def test_a_clipped_field_holding_a_decimal_fits_the_schema():
    """A scalar that JSON writes as a string (a long Decimal) is clipped like text."""
    kit = _projected([{"id": 1, "name": Decimal("3.14159265358979323846")}])
    assert _valid(kit, "labels", {})["briefs"] == [{"id": 1, "name": "3.141592653…"}]


scalar_results = st.one_of(
    st.none(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.decimals(places=3)
)


@st.composite
def slim_tools(draw: st.DrawFn) -> tuple[Toolkit, Any]:
    """A toolkit with one slim tool of random options over a random result."""
    typed = draw(st.booleans())
    if typed:
        shape = draw(typed_shapes)
        spec: Any = typed_allowlist(shape)
        rows = draw(st.lists(typed_records(shape), max_size=6))
    else:
        plain = draw(shapes)
        spec = allowlist_model(plain)
        form = draw(record_forms)
        rows = [RECORD_FORMS[form](r) for r in draw(st.lists(record_dicts(plain), max_size=6))]
    result = draw(
        st.one_of(
            st.just(rows),
            st.just(rows[0] if rows else {}),
            scalar_results,
            st.text(max_size=40),
        )
    )
    decorators: list[Any] = []
    handles = draw(st.sampled_from([None, "generated", "key"]))
    budget = draw(st.none() | st.integers(20, 400))
    if draw(st.booleans()):
        decorators.append(paginate(limit=draw(st.integers(1, 4)), max_tokens=budget))
    if handles == "generated":
        decorators.append(summarize_with_handle(max_tokens=budget))
    elif handles == "key" and not typed:
        decorators.append(summarize_with_handle(key=next(iter(spec.model_fields))))
    if draw(st.booleans()):
        decorators.append(project_fields(spec, detail=spec, response_format=True))
    else:
        decorators.append(project_fields(spec))

    def tool() -> Any:
        return result

    for deco in reversed(decorators):
        tool = deco(tool)
    kit = Toolkit("schema")
    kit.tool(tool, name="tool")
    return kit, draw(st.sampled_from(["concise", "detailed"]))


@settings(max_examples=examples(200), deadline=None)
@given(made=slim_tools())
def test_every_envelope_validates_against_the_tools_output_schema(made):
    """Any records, allowlist, result shape and options: page 1 and the next page validate."""
    kit, fmt = made
    arguments: dict[str, Any] = {}
    if "response_format" in kit.spec("tool").parameters["properties"]:
        arguments["response_format"] = fmt
    envelope = _valid(kit, "tool", arguments)
    nxt = next_call(envelope["hint"], "tool")
    if nxt is not None:
        _valid(kit, "tool", nxt)
