"""``slimtools._json.loads``: orjson's speed, with the standard library's exact integers."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from slimtools._json import loads, may_hold_long_integer
from tests.strategies import json_layouts, long_integers, long_number_json


def _typed(value: Any) -> Any:
    """``value`` with every scalar paired with its type, so ``1`` and ``1.0`` differ."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


@given(long_number_json, json_layouts)
def test_loads_reads_what_the_standard_library_reads(value, layout):
    """The fast path (orjson) gives exactly what ``json.loads`` gives, types included."""
    text = json.dumps(value, **layout)
    assert _typed(loads(text)) == _typed(json.loads(text))
    assert _typed(loads(text.encode("utf-8"))) == _typed(json.loads(text))


@given(long_integers, json_layouts)
def test_an_integer_orjson_would_round_is_flagged(number, layout):
    """Every integer outside -2**63..2**64-1, at the top or inside data, sends text to json."""
    if -(2**63) <= number < 2**64:
        return
    for value in (number, [number], {"id": number}, {"a": [1, {"b": number}]}):
        assert may_hold_long_integer(json.dumps(value, **layout).encode("utf-8"))


def test_a_negative_nineteen_digit_integer_beyond_64_bits_stays_exact():
    """-2**63 - 1 has 19 digits: it is read exactly, not as orjson's float."""
    assert loads('{"id": -9223372036854775809}') == {"id": -9223372036854775809}


def test_a_digit_run_inside_a_hex_digest_keeps_the_fast_path():
    """Digits after a letter (a commit sha) cannot start a number: orjson reads the text."""
    text = '{"sha": "bb1b82d32520f8362333335328321988202a9aef", "n": 9223372036854775807}'
    assert not may_hold_long_integer(text.encode())
    assert loads(text)["n"] == 2**63 - 1


@given(st.integers(-(2**63), 2**64 - 1))
def test_integers_orjson_reads_exactly_keep_the_fast_path(number):
    """Integers orjson reads exactly, with up to 19 digits, do not trigger the slow path."""
    if len(str(abs(number))) > 19 or (number < 0 and len(str(-number)) > 18):
        return
    assert not may_hold_long_integer(json.dumps({"id": number}).encode())


def test_dumps_exact_round_trips_what_orjson_refuses():
    """Lone surrogates and integers beyond 64 bits come back from ``loads`` as they were."""
    from slimtools._json import dumps_exact

    value = {"text": "cut \ud83d here", "id": 2**70 + 1, "n": -(2**64), "plain": [1, "a"]}
    assert loads(dumps_exact(value)) == value
    assert dumps_exact({"a": 1}) == b'{"a":1}'
