"""The format-neutral view and format detection."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from slimtools.clearing import (
    CallView,
    ClearingPolicy,
    ResultView,
    clear_stale_results,
    detect_format,
    view,
)
from slimtools.errors import ConfigurationError
from tests._profile import examples
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, render, script

fmt_param = pytest.mark.parametrize("fmt", FORMATS)


@fmt_param
def test_detect_format_recognises_each_format(fmt):
    """A history with tool traffic is detected as its own format."""
    assert detect_format(render(fmt, script("read_file", "bash"))) == fmt


def test_detect_format_without_tool_traffic_defaults_to_chat():
    """Plain role/content dicts read as openai_chat, which decodes them all alike."""
    assert detect_format([{"role": "user", "content": "hi"}]) == "openai_chat"
    assert detect_format([]) == "openai_chat"


def test_detect_format_langchain_by_module():
    """LangChain objects are recognised by module even without tool calls."""
    assert detect_format([HumanMessage("hi")]) == "langchain"


def test_unknown_format_name_is_a_clear_error():
    """Naming a format that does not exist raises ConfigurationError listing the formats."""
    with pytest.raises(ConfigurationError, match="openai_chat"):
        view([], format="gemini")


@fmt_param
def test_view_lists_calls_and_results_with_turns(fmt):
    """Calls and results carry ids, names, arguments, turns and positions."""
    history = render(fmt, script("read_file", ("bash", "search_logs")))
    v = view(history)
    assert v.format == fmt
    assert v.turns == 2
    assert [(c.id, c.name, c.args, c.turn) for c in v.calls] == [
        ("call_0", "read_file", {"q": 0}, 1),
        ("call_1", "bash", {"q": 1}, 2),
        ("call_2", "search_logs", {"q": 2}, 2),
    ]
    assert [(r.call_id, r.name, r.turn, r.cleared) for r in v.results] == [
        ("call_0", "read_file", 1, False),
        ("call_1", "bash", 2, False),
        ("call_2", "search_logs", 2, False),
    ]
    assert all(isinstance(c, CallView) for c in v.calls)
    assert all(isinstance(r, ResultView) for r in v.results)
    for r in v.results:
        assert r.text.startswith(f"r{r.call_id[5:]}_0")


@fmt_param
def test_view_message_texts_cover_every_message(fmt):
    """message_texts has one entry per message, including call arguments and result text."""
    history = render(fmt, script("read_file"))
    v = view(history)
    assert len(v.message_texts) == len(history)
    joined = "\n".join(v.message_texts)
    assert "read_file" in joined
    assert '"q":0' in joined.replace(" ", "")
    assert "r0_0" in joined


@fmt_param
def test_view_marks_cleared_results(fmt):
    """After clearing, the view reports the old result as cleared."""
    turn_end = ClearingPolicy(cache=None)
    history = clear_stale_results(render(fmt, script("search_logs", "bash", "bash")), turn_end)
    assert [r.cleared for r in view(history).results] == [True, False, False]


@fmt_param
def test_view_reports_errors(fmt):
    """A result flagged as an error (where the format can say so) is is_error."""
    turns = [Turn((Call("c1", "bash", {}, Res("boom", is_error=True)),), user="go")]
    (result,) = view(render(fmt, turns)).results
    assert result.is_error is (fmt in ("langchain", "anthropic"))


def test_view_orphan_result_has_no_name():
    """A result whose call is unknown is listed with name None."""
    history = [HumanMessage("go"), ToolMessage("late", tool_call_id="ghost")]
    (result,) = view(history).results
    assert result.name is None
    assert result.turn == 0


def test_responses_runs_of_calls_form_one_turn():
    """In the Responses format, consecutive model items are one turn; outputs end it."""
    items = [
        {"role": "user", "content": "go"},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "3"},
    ]
    v = view(items)
    assert v.turns == 2
    assert [c.turn for c in v.calls] == [1, 1, 2]


def test_consecutive_assistant_messages_are_separate_turns():
    """Outside the Responses format every model message starts a turn."""
    history = [HumanMessage("go"), AIMessage("a"), AIMessage("b")]
    assert view(history).turns == 2


def test_long_autonomous_loop_with_one_user_message_still_clears():
    """A single user message followed by many tool rounds is cleared turn by turn."""
    history = render("openai_chat", script(*["bash"] * 10))
    assert sum(1 for m in history if m["role"] == "user") == 1
    cleared = [
        r.cleared for r in view(clear_stale_results(history, ClearingPolicy(cache=None))).results
    ]
    assert cleared == [True] * 7 + [False] * 3  # bash is a command: 3 turns kept


def test_malformed_messages_are_viewed_as_plain_context():
    """None, numbers and odd dicts do not crash the view."""
    v = view([None, 3, {"role": "tool"}, {"role": "assistant", "tool_calls": [{"id": 5}]}])
    assert v.results == []
    assert len(v.message_texts) == 4


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(60), deadline=None)
@given(text=st.text())
def test_a_codecs_text_message_reads_back_as_that_text_from_the_user(fmt, text):
    """Property: the message a codec writes for a summary or a manifest decodes as that text,
    written by the user, with no call and no result."""
    from slimtools.clearing.formats.view import get_codec, safe_decode

    codec = get_codec(fmt)
    message = codec.text_message(text)
    seen = safe_decode(codec, message)
    assert (seen.model_output, seen.content_text, seen.calls, seen.results) == (False, text, (), ())
    assert codec.role(message) == "user"


@pytest.mark.parametrize(
    ("fmt", "message", "role"),
    [
        ("openai_chat", {"role": "developer", "content": "x"}, "system"),
        ("anthropic", {"role": "user", "content": "x"}, "user"),
        (
            "openai_responses",
            {"type": "function_call_output", "call_id": "c", "output": ""},
            "tool",
        ),
        ("openai_responses", {"type": "reasoning", "summary": []}, "assistant"),
    ],
)
def test_codecs_name_who_wrote_a_message(fmt, message, role):
    """role() normalises each format's word for the writer."""
    from slimtools.clearing.formats.view import get_codec

    assert get_codec(fmt).role(message) == role


def test_langchain_roles_are_normalised():
    """LangChain's human/ai/system/tool types read as user/assistant/system/tool."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from slimtools.clearing.formats.view import get_codec

    codec = get_codec("langchain")
    assert [
        codec.role(m)
        for m in (
            SystemMessage("s"),
            HumanMessage("h"),
            AIMessage("a"),
            ToolMessage("t", tool_call_id="c"),
        )
    ] == ["system", "user", "assistant", "tool"]
