"""Reading the billed usage from relayed responses, whatever the chunking and the API."""

from __future__ import annotations

import itertools

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.gateway import Billed
from slimtools.gateway._tap import UsageTap
from slimtools.instrumentation import Usage, usage_of
from tests._profile import examples

ANTHROPIC_STREAM = (
    b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
    b'{"input_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,'
    b'"output_tokens":1}}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"no \\"usage\\" here"}}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":42}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def read(chunks: list[bytes], content_type: str = "text/event-stream") -> Usage | None:
    """Feed the chunks to a tap and close it."""
    tap = UsageTap(content_type)
    for chunk in chunks:
        tap.feed(chunk)
    return tap.close()


@settings(max_examples=examples(60), deadline=None)
@given(cuts=st.lists(st.integers(0, len(ANTHROPIC_STREAM)), max_size=12))
def test_a_stream_cut_anywhere_reads_the_same_usage(cuts: list[int]) -> None:
    """However the stream is split into chunks, the usage read is the same."""
    points = [0, *sorted(cuts), len(ANTHROPIC_STREAM)]
    chunks = [ANTHROPIC_STREAM[a:b] for a, b in itertools.pairwise(points)]
    assert read(chunks) == Usage(prompt=123, cache_read=100, cache_write=20, output=42)


def test_message_delta_replaces_the_stand_in_output_count() -> None:
    """Anthropic's ``message_start`` output count is a stand-in; the delta's is the bill."""
    usage = read([ANTHROPIC_STREAM])
    assert usage is not None
    assert usage.output == 42


def test_chat_completions_usage_splits_cached_tokens() -> None:
    """``prompt_tokens`` includes the cached ones: the plain input is the rest."""
    usage = usage_of({"prompt_tokens": 100, "completion_tokens": 5,
                      "prompt_tokens_details": {"cached_tokens": 60}})  # fmt: skip
    assert usage == Usage(prompt=100, cache_read=60, output=5)
    assert usage.input == 40


def test_responses_usage_splits_cached_tokens() -> None:
    """Responses' ``input_tokens`` includes ``input_tokens_details.cached_tokens``."""
    usage = usage_of({"input_tokens": 90, "output_tokens": 3,
                      "input_tokens_details": {"cached_tokens": 80}})  # fmt: skip
    assert usage == Usage(prompt=90, cache_read=80, output=3)
    assert usage.input == 10


def test_a_json_response_is_read_once_it_has_passed() -> None:
    """A plain JSON response's usage is read from the whole body, however chunked."""
    body = orjson.dumps({"id": "x", "usage": {"input_tokens": 7, "output_tokens": 2,
                         "cache_read_input_tokens": 0}})  # fmt: skip
    assert read([body[:5], body[5:]], "application/json") == Usage(prompt=7, cache_read=0, output=2)


def test_a_body_that_is_not_json_has_no_usage() -> None:
    """An error page or other non-JSON body leaves the usage unknown, without raising."""
    assert read([b"<html>bad gateway</html>"], "text/html") is None


def test_bad_usage_figures_count_as_zero() -> None:
    """Negative, boolean or non-integer figures are not billed."""
    usage = usage_of({"input_tokens": -4, "output_tokens": True, "cache_read_input_tokens": "9"})
    assert usage == Usage(prompt=0, cache_read=0)


def test_a_json_response_without_usage_bills_nothing() -> None:
    """A JSON body with no ``usage`` object leaves the usage unknown."""
    assert read([b'{"id": "x", "usage": "none"}'], "application/json") is None


def test_litellm_anthropic_usage_keeps_its_cache_writes_and_output() -> None:
    """LiteLLM's dump of an Anthropic usage (OpenAI's shape, ``prompt_tokens`` counting
    reads and writes, Anthropic's cache fields beside) bills plain input, reads, writes
    and output apart."""
    raw = {
        "prompt_tokens": 130,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 100, "cache_creation_tokens": 20},
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }
    billed = Billed()
    billed.add(usage_of(raw))
    assert billed == Billed(input=10, cache_read=100, cache_write=20, output=5)


def test_billed_sums_each_response() -> None:
    """The conversation's bill adds every response's plain input, reads, writes, output."""
    billed = Billed()
    billed.add(Usage(prompt=123, cache_read=100, cache_write=20, output=42))
    billed.add(Usage(prompt=100, cache_read=60, output=5))
    assert billed == Billed(input=43, cache_read=160, cache_write=20, output=47)
