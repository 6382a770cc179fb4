"""The JSON plumbing of transcripts: streaming a list's elements, replacing values in place."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools.transcripts._jsonio import TornLineWarning, iter_array, iter_jsonl, truncated
from slimtools.transcripts._model import MalformedError
from slimtools.transcripts._spans import dump_string, find_spans, replace_values
from tests._profile import examples

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
)
values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
spellings = st.fixed_dictionaries(
    {"indent": st.sampled_from([None, 0, 2]), "ensure_ascii": st.booleans()}
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _get(value, path):
    for key in path:
        value = value[key]
    return value


@settings(max_examples=examples(200))
@given(items=st.lists(values, max_size=8), spelling=spellings, chunk=st.integers(1, 64))
def test_list_elements_stream_whatever_the_chunk(items, spelling, chunk):
    """Elements come out equal to a whole parse, and gaps plus texts rebuild the file exactly."""
    text = json.dumps(items, **spelling)
    pieces = list(iter_array(io.StringIO(text), keep_text=True, chunk=chunk))
    assert [p.value for p in pieces if p.position is not None] == items
    assert [p.position for p in pieces] == [*range(len(items)), None]
    assert "".join(p.gap + p.text for p in pieces) == text


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("[1, 2", "ends inside the top-level list"),
        ("[1 2]", "expected ',' or ']'"),
        ('[{"a": }]', "in list element 0"),
        ("[1] x", "unexpected data after the top-level list"),
        ('{"a": 1}', "not a JSON list"),
    ],
)
def test_broken_lists_are_named(text, fault):
    """A list that is not well-formed raises with what is wrong."""
    with pytest.raises(MalformedError, match=fault):
        list(iter_array(io.StringIO(text), chunk=2))


@settings(max_examples=examples(200))
@given(data=st.data(), doc=values, spelling=spellings)
def test_replacing_a_value_changes_only_its_span(data, doc, spelling):
    """Replacing the value at any path gives the document with that value replaced, and
    keeps every character before and after the old value."""
    text = json.dumps(doc, **spelling)
    path = data.draw(st.sampled_from(list(_paths(doc))))
    ((start, end),) = find_spans(text, [path]).values()
    assert json.loads(text[start:end]) == _get(doc, path)
    new = replace_values(text, {path: lambda old: '"X"'})
    assert new == text[:start] + '"X"' + text[end:]
    expected = json.loads(text)
    if path:
        _get(expected, path[:-1])[path[-1]] = "X"
    else:
        expected = "X"
    assert json.loads(new) == expected


def test_a_path_that_leads_nowhere_is_named():
    """Locating a value that is not there raises, naming the path."""
    with pytest.raises(MalformedError, match=r"no value at \[0\]\['content'\]"):
        find_spans('[{"role": "user"}]', [(0, "content")])


def test_duplicate_keys_locate_the_last_one_as_parsers_do():
    """JSON parsers keep the last of duplicate keys; so does locating."""
    text = '{"a": 1, "a": 22}'
    (span,) = find_spans(text, [("a",)]).values()
    assert text[slice(*span)] == "22"


def test_new_strings_follow_the_escaping_of_the_old():
    """An ASCII-escaped value is replaced by ASCII; a raw UTF-8 one by raw UTF-8."""
    assert dump_string("café", '"abc"') == '"caf\\u00e9"'
    assert dump_string("café", '"é"') == '"café"'
    assert dump_string("\ud800", '"é"') == '"\\ud800"'  # no UTF-8 for a lone surrogate


_objects = st.dictionaries(st.text(max_size=5), values, min_size=1, max_size=4)
_unicode_spellings = st.sampled_from([{"ensure_ascii": True}, {"ensure_ascii": False}])


@settings(max_examples=examples(300))
@given(data=st.data(), record=_objects, spelling=_unicode_spellings)
def test_every_proper_prefix_of_a_record_reads_as_torn(data, record, spelling):
    """Cut a JSON object anywhere (mid-character included): truncated() says it was cut."""
    raw = json.dumps(record, **spelling).encode("utf-8")
    cut = data.draw(st.integers(1, len(raw) - 1))
    assert truncated(raw[:cut])


@pytest.mark.parametrize("line", [b"hello", b"{}", b'{"a": 1}', b"[1, 2]", b'{"a": 1}}'])
def test_complete_json_and_plain_text_are_not_torn(line):
    """Valid JSON is whole, and text that does not start a value is garbage, not a cut."""
    assert not truncated(line)


@settings(max_examples=examples(100))
@given(records=st.lists(_objects, min_size=1, max_size=5), extra=_objects, data=st.data())
def test_jsonl_with_a_torn_last_line_yields_the_complete_records(
    tmp_path_factory, records, extra, data
):
    """Records, then a cut-short record without a line end: the records, and one warning."""
    raw = json.dumps(extra).encode()
    cut = data.draw(st.integers(1, len(raw) - 1))
    path = tmp_path_factory.mktemp("torn") / "s.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in records) + raw[:cut])
    with pytest.warns(TornLineWarning) as caught:
        read = [value for _, value in iter_jsonl(path)]
    assert read == records
    assert [w.message.line for w in caught] == [len(records) + 1]


def test_a_torn_first_and_only_line_is_still_malformed(tmp_path):
    """With no complete record before it, a cut line is an error: nothing was read."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role": "us')
    with pytest.raises(MalformedError):
        list(iter_jsonl(path))
