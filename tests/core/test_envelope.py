"""The Envelope: what the model sees, byte for byte."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from slimtools import Envelope
from slimtools.envelope import ENVELOPE_KEYS, is_envelope_dict
from tests.strategies import json_values, texts


def test_keys_come_in_the_documented_order():
    """Keys appear as total, briefs, hint, page, handle (text results: total, hint, ...)."""
    env = Envelope(total=3, briefs=[{"id": 1}], hint="h", page=2, handle="k")
    assert list(json.loads(str(env))) == ["total", "briefs", "hint", "page", "handle"]
    text_env = Envelope(total=3, hint="h", page=2, handle="k", text="a\nb")
    assert list(json.loads(str(text_env))) == ["total", "hint", "page", "handle", "text"]


def test_empty_optionals_are_omitted():
    """page, handle and text are left out when they carry nothing."""
    assert (
        str(Envelope(total=0, hint="no results")) == '{"total":0,"briefs":[],"hint":"no results"}'
    )


def test_text_envelopes_omit_briefs():
    """A text result shows ``text`` and no ``briefs`` key."""
    shown = json.loads(str(Envelope(total=1, hint="all 1 lines", text="x")))
    assert "briefs" not in shown
    assert shown["text"] == "x"


def test_str_is_compact_json():
    """No spaces after separators: whitespace costs tokens."""
    env = Envelope(total=1, briefs=[{"a": [1, 2]}], hint="h")
    assert str(env) == '{"total":1,"briefs":[{"a":[1,2]}],"hint":"h"}'


def test_non_ascii_is_written_as_is():
    """CJK and emoji appear as themselves, not as \\u escapes."""
    env = Envelope(total=1, briefs=[{"t": "日本語 👩‍💻"}], hint="é")
    assert "日本語 👩‍💻" in str(env)
    assert "\\u" not in str(env)


def test_to_json_is_utf8_bytes_of_str():
    """``to_json()`` is exactly ``str(env)`` encoded as UTF-8."""
    env = Envelope(total=1, briefs=[{"t": "ü"}], hint="h")
    assert env.to_json() == str(env).encode("utf-8")


@given(briefs=st.lists(json_values, max_size=5), hint=texts, page=st.none() | st.integers(1, 9))
def test_jsonable_equals_the_parsed_string(briefs, hint, page):
    """``env.jsonable() == json.loads(str(env))`` for any briefs."""
    env = Envelope(total=len(briefs), briefs=briefs, hint=hint, page=page)
    assert env.jsonable() == json.loads(str(env))


def test_as_dict_holds_what_str_shows():
    """``as_dict()`` has the same keys, in the same order, as the JSON text."""
    env = Envelope(total=2, briefs=[{"id": 1}], hint="h", handle="k")
    assert list(env.as_dict()) == list(json.loads(str(env)))


def test_envelope_keys_constant_lists_every_model_visible_key():
    """``ENVELOPE_KEYS`` is the documented key order."""
    assert ENVELOPE_KEYS == ("total", "briefs", "hint", "page", "handle", "text")


def test_negative_total_is_rejected():
    """``total`` counts items, so it cannot be negative."""
    with pytest.raises(ValidationError):
        Envelope(total=-1)


def test_envelope_is_frozen():
    """An envelope is a value: it cannot be changed after it is built."""
    env = Envelope(total=1, hint="h")
    with pytest.raises(ValidationError):
        env.total = 2  # type: ignore[misc]


def test_unencodable_briefs_use_the_json_fallback():
    """Values orjson cannot encode do not break ``str(env)``."""
    env = Envelope(total=1, briefs=[{"tags": {"b"}, "raw": b"\xff"}], hint="h")
    assert json.loads(str(env))["briefs"] == [{"tags": ["b"], "raw": "base64:/w=="}]


def test_is_envelope_dict_recognises_serialised_envelopes():
    """A parsed envelope is recognised; an arbitrary dict is not."""
    env = Envelope(total=1, briefs=[1], hint="h")
    assert is_envelope_dict(json.loads(str(env)))
    assert not is_envelope_dict({"total": 1, "items": []})
