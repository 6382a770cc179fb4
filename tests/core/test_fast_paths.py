"""The core's speed shortcuts give exactly what the general code they bypass gives."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from slimtools import Toolkit, paginate, project_fields, summarize_with_handle
from slimtools._core.config import HandleSpec, PageSpec
from slimtools._core.handles import attach_handles
from slimtools._core.keys import _digest, args_digest, frozen_args, normalize_handle
from slimtools._core.paging import format_call, tool_call
from slimtools._core.pipeline import _check_paging, _validate_paging, classify
from slimtools._json import _default, dumps
from slimtools.clip import _WORD_BACKOFF, _splits, clip_text, cut_text
from slimtools.envelope import Envelope, make_envelope
from slimtools.projection import Projection
from slimtools.stores.memory import MemoryStore, _sizes, approx_size
from slimtools.typing import Scope
from tests.strategies import (
    complete_records,
    flat_allowlists,
    scalar_values,
    texts,
    typed_allowlist,
    typed_records,
    typed_shapes,
)


def _reference_clip(text: str, max_chars: int, marker: str = "…") -> str:
    """clip_text as first written: the grapheme walk for every text, ASCII included."""
    if len(text) <= max_chars:
        return text
    cut = max(0, max_chars - len(marker))
    while cut > 0 and _splits(text, cut):
        cut -= 1
    if 0 < cut < len(text) and text[cut - 1].isalnum() and text[cut].isalnum():
        space = text.rfind(" ", max(0, cut - _WORD_BACKOFF), cut)
        if space > 0:
            cut = space
    return text[:cut].rstrip() + marker


mostly_ascii = st.lists(st.sampled_from([*"ab1 .\r\n\t", "é", "\u0301", "😀", "🇫🇷"])).map("".join)
markers = st.sampled_from(["…", "...", "", "[cut]"])


@given(text=mostly_ascii | texts, limit=st.integers(min_value=0, max_value=40), marker=markers)
def test_clip_text_matches_the_grapheme_walk(text, limit, marker):
    """The ASCII shortcut of clip_text cuts exactly where the grapheme walk cuts."""
    assert clip_text(text, limit, marker) == _reference_clip(text, limit, marker)


def test_clip_text_keeps_a_crlf_pair_whole():
    """An ASCII cut between "\\r" and "\\n" moves before the pair."""
    assert clip_text("ab\r\ncd", 4) == "ab…"


json_like = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text()
    | st.decimals(allow_nan=False, allow_infinity=False)
    | st.frozensets(st.integers(), max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


def _dumps_with_option_always(value):
    """The reference: orjson with OPT_NON_STR_KEYS on every call, or None where it fails."""
    try:
        return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        return None


@given(value=json_like)
def test_dumps_fast_path_gives_the_bytes_of_the_general_path(value):
    """Trying without OPT_NON_STR_KEYS first never changes the bytes dumps produces."""
    expected = _dumps_with_option_always(value)
    if expected is not None:
        assert dumps(value) == expected


def _slots(env: Envelope[Any]) -> tuple[Any, ...]:
    return (
        type(env),
        env.__dict__,
        env.__pydantic_fields_set__,
        env.__pydantic_extra__,
        env.__pydantic_private__,
    )


@given(
    total=st.integers(min_value=0),
    page=st.none() | st.integers(min_value=2),
    handle=st.none() | st.text(max_size=8),
    text=st.none() | st.text(max_size=8),
)
def test_make_envelope_builds_what_model_construct_builds(total, page, handle, text):
    """make_envelope leaves every instance slot as Envelope.model_construct does."""
    briefs = [{"id": 1}]
    fast = make_envelope(total, briefs, "h", page=page, handle=handle, text=text)
    slow = Envelope.model_construct(
        total=total, briefs=briefs, hint="h", page=page, handle=handle, text=text
    )
    assert _slots(fast) == _slots(slow)
    assert (fast == slow, str(fast), fast.jsonable()) == (True, str(slow), slow.jsonable())


def test_a_made_envelope_copies_and_updates_like_a_model():
    """model_copy(update=...) works on a made envelope (its fields set is a real set)."""
    env = make_envelope(3, [], "h")
    assert env.model_copy(update={"total": 4}).total == 4
    assert env.model_fields_set == set(Envelope.model_fields)


@given(value=st.integers())
def test_an_int_handle_is_its_decimal_text(value):
    """The int shortcut of normalize_handle gives the decimal text, as the model sends it."""
    assert normalize_handle(value) == str(value)


def test_a_bool_handle_is_not_taken_for_an_int():
    """``True`` is not ``1``: bools keep their own handle text."""
    assert (normalize_handle(True), normalize_handle(False)) == ("true", "false")


@given(
    values=st.lists(st.dictionaries(st.text(max_size=3), st.integers()) | st.text(), max_size=20)
)
def test_batch_sizes_share_one_encoding_and_size_texts_alone(values):
    """Records share the average of one encoding; texts and lists are sized one by one."""
    sizes = _sizes(values)
    records = [v for v in values if isinstance(v, dict)]
    each = len(dumps(records)) // len(records) + 1 if records else 0
    assert sizes == [approx_size(v) if isinstance(v, str) else each for v in values]


def test_put_many_refuses_only_the_oversized_keys_in_order():
    """Refused keys come back in the batch's order; the rest are stored and counted."""
    store = MemoryStore(max_bytes=40)
    refused = store.put_many(Scope("k"), {"a": "x" * 50, "b": "ok", "c": "y" * 60})
    assert refused == ["a", "c"]
    assert store.get_many(Scope("k"), ["a", "b", "c"]) == {"b": "ok"}
    assert store.nbytes == approx_size("ok")


def test_snapshot_is_written_only_for_results_longer_than_a_page():
    """A result that fits on page 1 writes no snapshot; a longer one writes exactly one."""
    kit_store = MemoryStore()
    kit = Toolkit("fast", store=kit_store)
    rows = [{"id": i} for i in range(5)]

    @kit.tool
    @summarize_with_handle(key="id")
    @paginate(limit=10)
    @project_fields(["id"])
    def short() -> list[dict[str, int]]:
        return rows

    @kit.tool
    @paginate(limit=2)
    def long() -> list[dict[str, int]]:
        return rows

    short()
    assert not any(key.startswith("s:") for _, key in kit_store._entries)
    long()
    assert [key for _, key in kit_store._entries if key.startswith("s:")] != []
    assert str(long(page=3)) == str(long(page=3))


@given(shape=typed_shapes, data=st.data())
def test_flat_projection_of_dicts_matches_the_general_path(shape, data):
    """The flat dict path shows exactly what the general path shows for any other mapping."""
    record = data.draw(typed_records(shape))
    projection = Projection.from_spec(typed_allowlist(shape))
    assert projection.project(record) == projection.project(MappingProxyType(record))


@given(
    content=st.text(max_size=60),
    status=st.sampled_from(["success", "error"]),
    name=st.none() | st.text(max_size=8),
)
def test_langchain_plain_result_decodes_as_make_result_does(content, status, name):
    """The inlined decode of a plain ToolMessage equals the general make_result path."""
    from langchain_core.messages import ToolMessage

    from slimtools.clearing.formats.base import make_result, result_message
    from slimtools.clearing.formats.langchain import LangChainCodec

    message = ToolMessage(content, tool_call_id="c1", status=status, name=name)
    expected = result_message(make_result("c1", name, content, 0, is_error=status == "error"))
    assert LangChainCodec().decode(message) == expected


@given(
    content=st.text(max_size=40), extra=st.dictionaries(st.sampled_from(["a", "b"]), st.integers())
)
def test_model_copy_builds_what_pydantic_model_copy_builds(content, extra):
    """The direct copy of a LangChain message equals ``model_copy(update=...)``."""
    from langchain_core.messages import AIMessage, ToolMessage

    from slimtools.clearing.formats._objects import model_copy

    for message in (
        ToolMessage("x" * 50, tool_call_id="c1", id="t1", artifact={"k": 1}, **extra),
        AIMessage("hi", tool_calls=[{"id": "c", "name": "n", "args": {}}]),
    ):
        ours = model_copy(message, {"content": content})
        theirs = message.model_copy(update={"content": content})
        assert ours == theirs
        assert ours.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
        assert ours.__pydantic_extra__ == theirs.__pydantic_extra__
        assert ours.__pydantic_private__ == theirs.__pydantic_private__
        assert ours.model_dump() == theirs.model_dump()


# the decorated call's shortcuts: each gives what the general path gives ------------------


@given(allowlist=flat_allowlists(), data=st.data())
def test_compiled_projection_of_complete_records_matches_the_general_path(allowlist, data):
    """A record carrying every key takes the compiled path and gets the general path's brief."""
    model, keys = allowlist
    projection = Projection.from_spec(model)
    records = data.draw(st.lists(complete_records(keys) | typed_records_any, max_size=4))
    general = [projection._general(r) for r in records]
    assert [projection.project(r) for r in records] == general
    assert projection.project_many(records) == general


typed_records_any = st.dictionaries(st.text(max_size=6), scalar_values, max_size=4)


@given(text=texts | st.text(min_size=1, max_size=80), limit=st.integers(2, 40), marker=markers)
def test_cut_text_is_clip_text_for_a_long_text(text, limit, marker):
    """cut_text (the clip without the length check) cuts where clip_text cuts."""
    if len(text) > limit and limit > len(marker):
        assert cut_text(text, limit, marker) == clip_text(text, limit, marker)


NOTHING_KEPT: dict[str, Any] = {"taken": {}}  # an empty store


def _general_attach(records, briefs, key):
    """attach_handles through its general loop: briefs that are not plain dicts skip the
    int-id shortcut."""

    class Brief(dict):  # a dict subclass: the shortcut only takes plain dicts
        pass

    saves: dict[str, Any] = {}
    wrapped = [Brief(b) if type(b) is dict else b for b in briefs]
    first = attach_handles(HandleSpec(key=key), "t", (records, wrapped), saves, **NOTHING_KEPT)
    return first, saves, [dict(b) if isinstance(b, dict) else b for b in wrapped]


handle_values = st.integers() | st.text(max_size=4) | st.none() | st.booleans()


@given(ids=st.lists(st.integers() | handle_values, min_size=1, max_size=8))
def test_int_id_handles_match_the_general_loop(ids):
    """The int-id shortcut of attach_handles keeps the same keys, records and first handle."""
    records = [{"id": i, "n": n} for n, i in enumerate(ids)]
    briefs = [{"id": i} for i in ids]
    saves: dict[str, Any] = {}
    first = attach_handles(HandleSpec(key="id"), "t", (records, briefs), saves, **NOTHING_KEPT)
    assert (first, saves, briefs) == _general_attach(records, [{"id": i} for i in ids], "id")


arg_values = (
    st.integers()
    | st.floats(allow_nan=False)
    | st.booleans()
    | st.none()
    | st.text(max_size=5)
    | st.lists(st.integers(), max_size=2)
)


# A paged tool's arguments never hold page or limit: the wrapper pops them, and @paginate
# refuses a function with a parameter of its own so named.
tool_args = st.dictionaries(
    st.text(max_size=4).filter(lambda k: k not in ("page", "limit")), arg_values, max_size=3
)


@given(args=tool_args, page=st.integers(1, 9))
def test_cached_call_text_is_the_formatted_call(args, page):
    """tool_call (argument text cached per argument tuple) writes format_call's text."""
    for _ in range(2):  # the second round reads the cache
        assert tool_call("t", args, page=page, limit=5, default=5) == format_call(
            "t", {**args, "page": page}
        )
        assert tool_call("t", args, page=page, limit=7, default=5) == format_call(
            "t", {**args, "page": page, "limit": 7}
        )


@given(args=st.dictionaries(st.text(max_size=4), arg_values, max_size=3))
def test_cached_digest_is_the_digest(args):
    """args_digest cached per argument tuple equals the digest computed afresh."""
    assert args_digest(args) == _digest(args) == args_digest(args)


def test_cache_keys_tell_apart_values_json_writes_apart():
    """1, 1.0 and True, and 0.0 and -0.0, are equal as dict keys but never share a cache key."""
    keys = [frozen_args({"x": v}) for v in (1, 1.0, True, 0.0, -0.0)]
    assert len(set(keys)) == 5
    assert [format_call("t", {"x": v}) for v in (1, 1.0, True, 0.0, -0.0)] == [
        "t(x=1)",
        "t(x=1.0)",
        "t(x=true)",
        "t(x=0.0)",
        "t(x=-0.0)",
    ]


paging_values = st.integers(-2, 200) | st.booleans() | st.none() | st.floats(allow_nan=False)


@given(page=paging_values | st.text(max_size=2), limit=paging_values)
def test_the_valid_paging_shortcut_matches_the_full_check(page, limit):
    """_check_paging's shortcut for a valid page and limit gives the full check's answer."""
    paging = PageSpec(limit=20, max_limit=100)
    assert _check_paging(paging, page, limit) == _validate_paging(paging, page, limit)


@given(rows=st.lists(st.dictionaries(st.text(max_size=3), st.integers()), max_size=5))
def test_a_list_result_is_classified_as_the_general_checks_would(rows):
    """The list shortcut of classify keeps the list itself, as the isinstance chain does."""
    kind, data = classify(rows)
    assert (kind, data) == ("records", rows)
    assert data is rows


batches = st.dictionaries(
    st.sampled_from([f"r:t:{i}" for i in range(8)] + ["s:t:x", "t:t:h"]),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3)
    | st.text(max_size=30)
    | st.lists(st.integers(), max_size=40),
    max_size=6,
)


@given(first=batches, data=st.data())
def test_writing_the_same_objects_again_keeps_their_sizes(first, data):
    """An object written again under its key keeps its size (nothing is encoded again) and
    moves to the recent end in the batch's order, as any write does."""
    store, scope = MemoryStore(), Scope("k")
    store.put_many(scope, first)
    sizes = {k: e.size for (_, k), e in store._entries.items()}
    nbytes = store.nbytes
    keys = data.draw(st.permutations(list(first)))
    again = {k: first[k] for k in keys}
    assert store.put_many(scope, again) == []
    assert {k: e.size for (_, k), e in store._entries.items()} == sizes
    assert store.nbytes == nbytes
    assert [k for _, k in store._entries][len(store) - len(keys) :] == keys
    assert store.get_many(scope, keys) == again


def test_new_objects_in_a_batch_are_sized_together():
    """Values not already stored are sized by the batch rule (_sizes) applied to them alone."""
    store, scope = MemoryStore(), Scope("k")
    kept = {"id": 1, "body": "x" * 50}
    store.put_many(scope, {"r:t:1": kept})
    new = [{"id": 2}, {"id": 3, "body": "y" * 10}]
    store.put_many(scope, {"r:t:1": kept, "r:t:2": new[0], "r:t:3": new[1]})
    sizes = [e.size for _, e in store._entries.items()]
    assert sizes[1:] == _sizes(new)
