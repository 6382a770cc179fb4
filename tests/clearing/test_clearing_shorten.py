"""Shortened arguments of cleared write calls (issue 20, item 2)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy, MemoryAudit, clear_stale_results, restore, view
from slimtools.clearing.shorten import shorten_args
from slimtools.errors import ConfigurationError
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, big, render, script

fmt_param = pytest.mark.parametrize("fmt", FORMATS)
FLAT = ClearingPolicy(cache=None, retention={}, infer_categories=True, supersede=False)
LONG = "x = 1\n" * 300
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=900),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


def _history(fmt: str, result_words: int = 120) -> list:
    result = Res(big("ok", result_words))
    edit = Call("c0", "str_replace_editor", {"path": "a.py", "new_str": LONG}, result)
    first = Turn((edit,), user="go")
    return render(fmt, [first, *script("bash", "bash", "bash")])


def _types(value):
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value)


@given(json_values, st.integers(100, 600))
def test_shortened_arguments_keep_keys_and_types(value, limit):
    """Shortening keeps every key, list length and value type, and is idempotent."""
    args = {"a": value}
    out = shorten_args(args, limit) or args
    assert _types(out) == _types(args)
    assert json.loads(json.dumps(out)).keys() == args.keys()
    assert shorten_args(out, limit) is None


@fmt_param
def test_cleared_write_call_has_its_long_string_shortened(fmt):
    """The edit's new_str becomes an excerpt with its size and a do-not-repeat note."""
    out = clear_stale_results(_history(fmt), FLAT.replace(keep_turns=1))
    edit = view(out).calls[0]
    assert set(edit.args) == {"path", "new_str"}
    assert edit.args["path"] == "a.py"
    assert len(edit.args["new_str"]) <= 400
    assert "1,800 chars shortened: this call was made; do not repeat it" in edit.args["new_str"]


@fmt_param
def test_non_write_calls_keep_their_arguments(fmt):
    """A bash call's arguments stay as they were."""
    out = clear_stale_results(_history(fmt), FLAT.replace(keep_turns=1))
    assert view(out).calls[1].args == {"q": 0}


@fmt_param
def test_shortening_can_be_turned_off(fmt):
    """shorten_write_inputs=False keeps the write call whole."""
    policy = FLAT.replace(keep_turns=1, shorten_write_inputs=False)
    out = clear_stale_results(_history(fmt), policy)
    assert view(out).calls[0].args["new_str"] == LONG


@fmt_param
def test_clear_tool_inputs_blanks_instead(fmt):
    """Calls whose arguments clear_tool_inputs blanks are blanked, not shortened."""
    policy = FLAT.replace(keep_turns=1, clear_tool_inputs=True)
    out = clear_stale_results(_history(fmt, result_words=400), policy)
    assert view(out).calls[0].args == {}


@fmt_param
def test_shortening_reaches_calls_whose_result_stays(fmt):
    """A write result too short to clear stays whole while its call is shortened."""
    out = clear_stale_results(_history(fmt), FLAT.replace(keep_turns=1))
    assert not view(out).results[0].cleared
    assert view(out).calls[0].args["new_str"] != LONG


@fmt_param
def test_restore_puts_shortened_arguments_back(fmt):
    """restore(clear(h)) == h with shortened arguments."""
    history, audit = _history(fmt), MemoryAudit()
    out = clear_stale_results(history, FLAT.replace(keep_turns=1), audit=audit)
    assert out != history
    assert restore(out, audit) == history


@fmt_param
def test_shortening_is_idempotent(fmt):
    """Clearing a cleared history again changes nothing."""
    policy = FLAT.replace(keep_turns=1)
    once = clear_stale_results(_history(fmt), policy)
    assert clear_stale_results(once, policy) == once


def test_a_bad_threshold_is_refused():
    """shorten_write_inputs must be a bool or an int of at least 100."""
    with pytest.raises(ConfigurationError, match="shorten_write_inputs"):
        ClearingPolicy(shorten_write_inputs=10)


@pytest.mark.parametrize(
    "arguments",
    ['{"path": "a.py", "content": "' + "x" * 2_000, json.dumps(["x" * 2_000]), json.dumps(LONG)],
    ids=["invalid-json", "a-list", "a-string"],
)
def test_write_arguments_that_are_not_a_json_object_stay_as_sent(arguments):
    """A write call whose OpenAI ``arguments`` are not a JSON object (cut-off JSON, a list,
    a string) is left as sent: shortening never invents an object with a ``_raw`` key."""
    history = render("openai_chat", [Turn(user="go"), *script("bash", "bash", "bash")])
    call = {
        "id": "w0",
        "type": "function",
        "function": {"name": "write_file", "arguments": arguments},
    }
    history[1:1] = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "w0", "content": big("ok")},
    ]
    out = clear_stale_results(history, FLAT.replace(keep_turns=1))
    assert out[1]["tool_calls"][0]["function"]["arguments"] == arguments
    assert view(out).results[0].cleared
