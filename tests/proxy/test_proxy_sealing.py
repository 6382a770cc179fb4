"""Sealing a session-less client's handles (``slimtools.proxy.sessions``), without a server."""

from __future__ import annotations

import json

from slimtools._json import dumps_str
from slimtools.proxy.sessions import seal_envelope, seal_result

BIG = 2**70 + 1
"""A snowflake-style id: beyond 64 bits, so a float cannot hold it."""


def test_a_hint_handle_beyond_64_bits_is_sealed_as_that_integer():
    """``get_record(<snowflake>)`` in a hint is sealed with every digit of the id."""
    env = {"total": 1, "briefs": [{"id": BIG}], "hint": f"full record: get_record({BIG})"}
    sealed = seal_envelope(env, "tok", companion="get_record", key="id")
    assert sealed["hint"] == f'full record: get_record("{BIG}~tok")'


def test_an_envelope_text_block_keeps_integers_beyond_64_bits():
    """Re-sealing an envelope's text block never rounds the ids it shows."""
    env = {"total": 1, "briefs": [{"id": BIG}], "hint": "all 1 shown"}
    result = {"content": [{"type": "text", "text": dumps_str(env)}]}
    sealed = seal_result(result, "tok", companion="get_record", key="id")
    assert json.loads(sealed["content"][0]["text"])["briefs"][0]["id"] == BIG
