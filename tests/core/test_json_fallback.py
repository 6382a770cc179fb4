"""The JSON encoder: compact orjson, and a documented fallback for everything else."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from slimtools import paginate
from slimtools._json import dumps, dumps_str, to_jsonable


class Row(BaseModel):
    id: int
    when: datetime.date


class PlainObject:
    def __init__(self) -> None:
        self.name = "x"
        self._hidden = "h"


class Opaque:
    __slots__ = ()

    def __str__(self) -> str:
        return "<opaque>"


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    tags: set[str]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("12.50"), "12.50"),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), ["a", "b"]),
        (b"caf\xc3\xa9", "café"),
        (b"\xff\x00", "base64:/wA="),
        (bytearray(b"ok"), "ok"),
        (memoryview(b"ok"), "ok"),
        (Row(id=1, when=datetime.date(2024, 5, 1)), {"id": 1, "when": "2024-05-01"}),
        (PlainObject(), {"name": "x"}),
        (Opaque(), "<opaque>"),
        (2**70, 2**70),
        (-(2**70), -(2**70)),
        ({1: "a", 2.5: "b"}, {"1": "a", "2.5": "b"}),
        ({(1, 2): "t"}, {"(1, 2)": "t"}),
        (Color.RED, "red"),
        (Point(1, {"b", "a"}), {"x": 1, "tags": ["a", "b"]}),
        (datetime.datetime(2024, 1, 2, 3, 4), "2024-01-02T03:04:00"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    ],
)
def test_values_orjson_cannot_encode_get_the_documented_fallback(value, expected):
    """Decimal, sets, bytes, models, objects, big ints, odd keys ... each have a JSON form."""
    assert to_jsonable(value) == expected


def test_unsortable_sets_become_lists():
    """A set of mixed types is listed in iteration order rather than failing."""
    assert sorted(map(str, to_jsonable({1, "a"}))) == ["1", "a"]


def test_big_ints_inside_containers_stay_exact_numbers():
    """One huge int deep in a record does not spoil the rest of it, and keeps every digit."""
    assert to_jsonable({"ok": 1, "big": [2**80]}) == {"ok": 1, "big": [2**80]}
    assert dumps_str({"big": 2**80 + 1}) == f'{{"big":{2**80 + 1}}}'


def test_reference_cycles_become_a_marker():
    """A dict containing itself is written once, then ``"<cycle>"``."""
    loop: dict[str, Any] = {"id": 1}
    loop["self"] = loop
    assert to_jsonable(loop) == {"id": 1, "self": "<cycle>"}


def test_shared_references_are_not_cycles():
    """The same list referenced twice (no cycle) is written twice."""
    shared = [1, 2]
    assert to_jsonable({"a": shared, "b": shared, "c": {1, 2}}) == {
        "a": [1, 2],
        "b": [1, 2],
        "c": [1, 2],
    }


def test_very_deep_nesting_is_cut_with_a_marker():
    """Nesting beyond what orjson accepts ends in ``"<too deep>"``."""
    deep: list[Any] = []
    node = deep
    for _ in range(300):
        node.append([])
        node = node[0]
    assert "<too deep>" in dumps_str(deep)


def test_a_lone_surrogate_becomes_a_replacement_character():
    """Text that cannot be UTF-8 is repaired: one U+FFFD per lone surrogate."""
    assert to_jsonable(["a\ud800b"]) == ["a\ufffdb"]


def test_a_surrogate_pair_becomes_its_character():
    """A surrogate pair left by ``surrogatepass`` decoding is written as the emoji it encodes."""
    assert to_jsonable(["\ud83d\ude00", {1, 2}]) == ["😀", [1, 2]]


def test_output_is_compact_utf8_with_non_ascii_as_is():
    """No spaces, no escapes for non-ASCII."""
    assert dumps({"t": "日本", "n": [1, 2]}) == '{"t":"日本","n":[1,2]}'.encode()


def test_nan_and_infinity_become_null():
    """JSON has no NaN: orjson writes null."""
    assert to_jsonable([float("nan"), float("inf")]) == [None, None]


weird_values = st.recursive(
    st.one_of(
        st.none(),
        st.integers(),
        st.floats(),
        st.text(),
        st.binary(max_size=8),
        st.decimals(allow_nan=False),
        st.builds(PlainObject),
        st.builds(Opaque),
        st.sampled_from(Color),
        st.dates(),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.frozensets(st.integers() | st.text(max_size=3), max_size=3),
        st.dictionaries(st.integers() | st.text(max_size=3) | st.booleans(), inner, max_size=3),
        st.tuples(inner, inner),
    ),
    max_leaves=12,
)


@given(value=weird_values)
def test_dumps_never_raises_and_gives_valid_json(value):
    """Whatever the value, the result parses as JSON."""
    json.loads(dumps(value))


def test_an_envelope_of_unencodable_briefs_still_serialises():
    """A tool returning Decimals and sets gives an envelope the model can read."""
    env = paginate(lambda: [{"price": Decimal("9.99"), "tags": {"x"}, "raw": b"\x00\xff"}])()
    assert json.loads(str(env))["briefs"] == [
        {"price": "9.99", "tags": ["x"], "raw": "base64:AP8="}
    ]


class Unprintable:
    """An object whose ``str`` and ``repr`` raise, as a half-initialised proxy's can."""

    __slots__ = ()

    def __str__(self) -> str:
        raise RuntimeError("str boom")

    def __repr__(self) -> str:
        raise RuntimeError("repr boom")


def test_an_object_whose_str_raises_becomes_a_marker():
    """``dumps`` never raises: an unprintable object is written as a marker naming its type."""
    assert to_jsonable([Unprintable()]) == ["<unprintable Unprintable>"]


def test_a_key_whose_str_raises_becomes_a_marker():
    """An unprintable dict key is written as the same marker, its value kept."""
    assert to_jsonable({Unprintable(): 1}) == {"<unprintable Unprintable>": 1}


def test_a_tool_returning_an_unprintable_object_still_answers():
    """Every decorator path and ``Toolkit.call`` give an envelope, not the object's exception."""
    from slimtools import Toolkit, summarize_with_handle

    kit = Toolkit("unprintable")

    @kit.tool()
    @summarize_with_handle()
    @paginate(limit=2)
    def search() -> Any:
        """Search."""
        return [{"id": 1, "x": Unprintable()}, Unprintable()]

    result = kit.call("search", "{}")
    assert not result.is_error
    assert "<unprintable Unprintable>" in result.text


def test_loads_of_json_nested_past_the_stack_is_a_value_error():
    """``loads`` says ``ValueError`` for what is not JSON; too deep is one such case."""
    from slimtools._json import loads

    with pytest.raises(ValueError, match="nested too deep"):
        loads("[" * 100_000 + "]" * 100_000)
