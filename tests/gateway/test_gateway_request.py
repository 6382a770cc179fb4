"""The pure rules for a client's request line: paths resolved inside the base, or refused."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.gateway._request import MAX_PATH_BYTES, RefusedError, target_path
from tests._profile import examples

SEGMENTS = st.sampled_from(["a", "v1", ".", "..", "%2e", "%2E%2e", "..%2f", "%2e%2e%2f", "b%20c"])


@given(st.lists(SEGMENTS, max_size=8))
@settings(max_examples=examples(300))
def test_a_forwarded_path_never_leaves_the_base(segments: list[str]) -> None:
    """Whatever spelling of dot segments comes in, what goes out holds none of them."""
    raw = ("/" + "/".join(segments)).encode()
    try:
        path, _ = target_path(raw, "/base")
    except RefusedError as exc:
        refused: RefusedError | None = exc
    else:
        refused = None
    if refused is not None:
        assert refused.status == 400
        return
    assert path.startswith("/")
    assert not {".", ".."} & set(unquote(path).split("/"))


def test_a_path_without_dot_segments_goes_as_it_came() -> None:
    """Percent-encoding the client chose is kept byte for byte."""
    assert target_path(b"/v1/files/a%20b%2Fc", "") == ("/v1/files/a%20b%2Fc", False)


def test_a_path_too_long_gets_414() -> None:
    """Past :data:`MAX_PATH_BYTES` the answer is 414, not a failure in the client."""
    with pytest.raises(RefusedError) as refused:
        target_path(b"/" + b"x" * MAX_PATH_BYTES, "")
    assert refused.value.status == 414


@pytest.mark.parametrize("raw", [b"/a%00b", b"/a%0Db", b"/a%7f", b"/%ff", b"x"])
def test_control_characters_and_bad_encodings_get_400(raw: bytes) -> None:
    """A control character, bytes that are not UTF-8 or a path without '/' are refused."""
    with pytest.raises(RefusedError) as refused:
        target_path(raw, "")
    assert refused.value.status == 400


def test_a_doubled_v1_is_detected() -> None:
    """An upstream base ending in /v1 and a path starting with it: one /v1 goes."""
    assert target_path(b"/v1/messages", "/v1") == ("/messages", True)
    assert target_path(b"/v1/messages", "/base") == ("/v1/messages", False)
