"""Placeholders: content, handles, templates, bounds and recognition."""

from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slimtools.categories import repeatable_tools
from slimtools.clearing import ClearingPolicy, clear_stale_results, is_placeholder, view
from slimtools.clearing.excerpt import envelope_handles, flatten_head
from slimtools.clearing.placeholder import MAX_PLACEHOLDER_CHARS
from slimtools.envelope import Envelope
from tests.clearing.strategies_clearing import FORMATS, Call, Res, Turn, big, render, script

fmt_param = pytest.mark.parametrize("fmt", FORMATS)
NOW = ClearingPolicy(keep_turns=0, retention={})


def cleared_text(fmt, content, tool="read_file", args=None, policy=NOW, is_error=False):
    """Clear a one-call history and return the text that replaced the result."""
    call = Call("c1", tool, args or {"path": "a.py"}, Res(content, is_error=is_error))
    history = render(fmt, [Turn((call,), user="go")])
    return view(clear_stale_results(history, policy)).results[0].text


@fmt_param
def test_placeholder_names_the_call_size_head_and_refetch(fmt):
    """The placeholder shows tool, arguments, size in chars and tokens, head and refetch line."""
    text = cleared_text(fmt, "first line\n\n   second   line " + "x" * 2000)
    assert 'read_file(path="a.py")' in text
    assert "2,029 chars" in text
    assert "~508 tokens" in text
    assert "Head: first line second line xxx" in text
    assert 'call read_file(path="a.py") again' in text
    assert is_placeholder(text)


def test_head_is_bounded_by_keep_head():
    """keep_head limits the head; 0 drops the head line."""
    text = cleared_text("openai_chat", "y" * 3000, policy=NOW.replace(keep_head=10))
    assert "Head: yyyyyyyyyy\n" in text
    assert "Head:" not in cleared_text("openai_chat", "y" * 3000, policy=NOW.replace(keep_head=0))


@given(
    text=st.text(
        st.sampled_from(["a", " ", "\n", "\t", "\x0b", "\x1c", "\u00a0", "\u2028", "é", "\x00"]),
        max_size=60,
    ),
    keep=st.integers(0, 30),
)
def test_flatten_head_is_split_and_join_cut_to_keep_head(text, keep):
    """Every shortcut of flatten_head gives the prefix of whitespace-flattened text."""
    assert flatten_head(text, keep) == " ".join(text.split())[:keep]


def test_flatten_head_handles_long_whitespace_runs():
    """A head after a huge whitespace run is still found, flattened."""
    assert flatten_head(" " * 5000 + "a  b\n\nc" + "d" * 50, 5) == "a b c"
    assert flatten_head("short", 100) == "short"


def test_error_results_say_so():
    """An error result's placeholder marks it as an error."""
    text = cleared_text("anthropic", "Traceback " * 100, is_error=True)
    assert "(an error)" in text


def test_envelope_handles_are_listed_with_get_record():
    """Handles of a slimtools envelope survive clearing, with the get_record line."""
    env = Envelope(
        total=40,
        briefs=[{"handle": "k3f9a2qd", "title": big("t", 200)}, {"handle": "m1", "title": "z"}],
        hint='more: get_record("k3f9a2qd")',
    )
    text = cleared_text("langchain", str(env), tool="search_docs")
    assert 'Handles: "k3f9a2qd", "m1"' in text
    assert "get_record(<handle>)" in text


def test_declared_handle_key_and_id_fallback():
    """A tool's declared key field is used; tools without one fall back to "id"."""
    body = {"total": 9, "briefs": [{"id": 3, "ref": "R-1", "s": big("s", 200)}], "hint": ""}
    text = orjson.dumps(body).decode()
    assert envelope_handles(text, "ref") == ('"R-1"',)
    assert envelope_handles(text, "id") == ("3",)
    assert envelope_handles(text, None) == ()
    policy = NOW.replace(handle_keys={"search_logs": "ref"})
    assert 'Handles: "R-1"' in cleared_text("openai_chat", text, "search_logs", policy=policy)
    assert "Handles: 3" in cleared_text("openai_chat", text, "search_logs")


def test_text_envelope_top_level_handle():
    """The top-level handle of a text envelope is kept."""
    env = Envelope(total=1200, hint="lines 1-50", page=1, handle="t7d2m4xa", text=big("l", 80))
    assert envelope_handles(str(env), "id") == ('"t7d2m4xa"',)


def test_non_envelope_json_has_no_handles():
    """JSON that is not an envelope, and broken JSON, yield no handles."""
    assert envelope_handles('{"id": 3}', "id") == ()
    assert envelope_handles('{"total": 1, "briefs": [', "id") == ()
    assert envelope_handles("[1, 2]", "id") == ()


def test_handles_are_capped():
    """At most 20 handles are listed, then a count of the rest."""
    briefs = [{"handle": f"h{i}"} for i in range(30)]
    text = orjson.dumps({"total": 30, "briefs": briefs, "hint": ""}).decode()
    handles = envelope_handles(text, "id")
    assert len(handles) == 21
    assert handles[-1] == "… (+10 more)"


@fmt_param
def test_json_array_results_are_clearable(fmt):
    """A result starting with "[" is real content, not a cleared marker (the article's bug)."""
    array = orjson.dumps([{"id": i, "msg": "timeout"} for i in range(50)]).decode()
    text = cleared_text(fmt, array)
    assert is_placeholder(text)
    assert not is_placeholder(array)


def test_look_alike_marker_is_not_trusted():
    """Text imitating the marker but failing its digest is not taken as cleared."""
    fake = "[cleared 00000000] " + "x" * 500
    assert not is_placeholder(fake)
    assert is_placeholder(cleared_text("openai_chat", fake))


def test_edited_placeholder_is_not_recognised():
    """Changing a placeholder's body breaks its digest."""
    text = cleared_text("openai_chat", "z" * 2000)
    assert not is_placeholder(text.replace("chars", "bytes"))


@fmt_param
def test_custom_template(fmt):
    """A user template replaces the body; the marker is still prepended."""
    policy = NOW.replace(placeholder="{tool} gone ({chars} chars); {refetch}")
    text = cleared_text(fmt, "q" * 1000, policy=policy)
    assert text.endswith(
        'read_file gone (1,000 chars); To see it again, call read_file(path="a.py") again.'
    )
    assert is_placeholder(text)


def test_callable_placeholder():
    """A callable receives PlaceholderInfo and returns the body."""
    policy = NOW.replace(placeholder=lambda info: f"{info.tool}#{info.call_id}#{info.turn}")
    assert cleared_text("anthropic", "q" * 1000, policy=policy).endswith("read_file#c1#1")


def test_failing_callable_leaves_the_result():
    """A placeholder callable that raises keeps the original result (never crashes)."""
    policy = NOW.replace(placeholder=lambda info: 1 / 0)
    assert cleared_text("openai_chat", "q" * 1000, policy=policy) == "q" * 1000


def test_placeholder_size_is_bounded():
    """MAX_PLACEHOLDER_CHARS caps the placeholder, marker included."""
    policy = NOW.replace(placeholder="{head}" * 10, keep_head=500)
    text = cleared_text("openai_chat", "w" * 10_000, policy=policy)
    assert len(text) == MAX_PLACEHOLDER_CHARS
    assert is_placeholder(text)


@fmt_param
def test_result_shorter_than_its_placeholder_is_left_alone(fmt):
    """A result the placeholder would not shrink is not replaced."""
    assert cleared_text(fmt, "short answer") == "short answer"


def test_long_arguments_are_truncated_in_the_placeholder():
    """Huge arguments do not blow up the placeholder."""
    text = cleared_text("openai_chat", "r" * 5000, args={"code": "a" * 5000})
    assert len(text) < 1000
    assert "…" in text


def test_cjk_results_are_counted_in_tokens():
    """Token counts use the policy's counter (CJK is about a token a character)."""
    history = render("anthropic", script("read_file", size=10))
    history[2]["content"][0]["content"] = "错误" * 500
    text = view(clear_stale_results(history, NOW)).results[0].text
    assert "1,000 chars (~1,000 tokens)" in text


@pytest.mark.parametrize("handles", [(), ('"k1"', "3")])
@pytest.mark.parametrize("head", ["", "some head"])
@pytest.mark.parametrize("is_error", [False, True])
@pytest.mark.parametrize("repeatable", [True, False, None])
@pytest.mark.parametrize("media", [(), ("image (image/png, 3 KB, base64)",)])
def test_default_template_fast_paths_match_the_generic_renderer(
    handles, head, is_error, repeatable, media
):
    """The f-string used for the default template renders exactly what the template says."""
    from slimtools.clearing.placeholder import (
        DEFAULT_TEMPLATE,
        PlaceholderInfo,
        _format_generic,
        default_body,
    )

    args = {"path": "a.py"}
    info = PlaceholderInfo(
        "t", args, 'path="a.py"', 12345, 3086, head, handles, "c", 4, is_error, "get_record",
        repeatable, media,
    )  # fmt: skip
    fast = default_body(
        "t", 'path="a.py"', args, 12345, 3086, is_error, media, head, handles, repeatable,
        "get_record",
    )  # fmt: skip
    assert fast == _format_generic(DEFAULT_TEMPLATE, info)


@pytest.mark.parametrize(
    ("template", "needs"),
    [
        ("[cleared]", set()),
        ("{tool} {head}", {"head"}),
        ("{refetch}", {"args", "handles"}),
        ("{handles} {args}", {"args", "handles"}),
    ],
)
def test_only_the_fields_a_template_shows_are_computed(template, needs):
    """A terse template skips the head, arguments and handle parsing."""
    assert ClearingPolicy(placeholder=template).placeholder_needs == needs
    assert ClearingPolicy(placeholder=lambda i: "x").placeholder_needs == {
        "args",
        "handles",
        "head",
    }


def test_terse_template_still_clears():
    """A constant template replaces the result with just the marker and the text."""
    text = cleared_text("openai_chat", "v" * 500, policy=NOW.replace(placeholder="[cleared]"))
    assert text.endswith("] [cleared]")
    assert is_placeholder(text)


@pytest.mark.parametrize("tool", ["search_logs", "read_file", "list_dir", "get_record"])
def test_tools_that_only_read_are_offered_again(tool):
    """Search and read tools (by category) get the exact call to make again."""
    text = cleared_text("openai_chat", big("r", 200), tool=tool, args={"q": "x"})
    assert f'call {tool}(q="x") again' in text


@pytest.mark.parametrize(
    "tool",
    [
        "str_replace_editor",
        "edit_file",
        "apply_patch",
        "run_ipython",
        "execute_bash",
        "computer",
        "browser",
        "create_issue",
        "bash",
    ],
)
def test_tools_with_effects_are_never_offered_again(tool):
    """Writes and commands, agents' own tools included, are not to be called again."""
    args = {"path": "/repo/app.py", "command": "insert", "new_str": "x = 1"}
    text = cleared_text("anthropic", big("r", 200), tool=tool, args=args)
    assert f"call {tool}(" not in text
    assert f"Do not call {tool} again to see this: that would repeat what it did." in text
    assert 'To see the current state, read "/repo/app.py" with a read-only tool.' in text


def test_the_read_hint_names_every_path_the_supersession_rule_reads():
    """A write's path under any of the supersession rule's names (``target_file`` too) is
    where its placeholder says to read: one list of path arguments for both."""
    args = {"target_file": "/repo/app.py", "code_edit": "x = 1"}
    text = cleared_text("anthropic", big("r", 200), tool="edit_file", args=args)
    assert 'To see the current state, read "/repo/app.py" with a read-only tool.' in text


def test_an_unknown_tool_is_warned_about_not_offered():
    """A tool nothing is known about: repeating it may repeat an effect; read instead."""
    text = cleared_text("openai_chat", big("r", 200), tool="frobnicate", args={"n": 1})
    assert "frobnicate(n=1) again" not in text
    assert "If frobnicate changed anything, calling it again would repeat that" in text
    assert "use a read-only tool" in text


def test_a_tool_declared_repeatable_is_offered_again():
    """``repeatable=`` (MCP readOnlyHint/idempotentHint, a read-only toolkit tool) wins."""
    policy = NOW.replace(repeatable={"frobnicate"})
    text = cleared_text("openai_chat", big("r", 200), tool="frobnicate", policy=policy)
    assert 'call frobnicate(path="a.py") again' in text


def test_handles_stay_reachable_for_tools_with_effects():
    """get_record is always safe: a write tool's envelope still offers its handles."""
    briefs = [{"id": i, "t": big("t", 120)} for i in range(3)]
    envelope = str(Envelope(total=3, briefs=briefs, hint="full record: get_record(0)"))
    text = cleared_text("openai_chat", envelope, tool="create_issue")
    assert "Do not call create_issue again" in text
    assert "or get_record(<handle>) for one record" in text


def test_repeatable_tools_reads_mcp_annotations():
    """readOnlyHint or idempotentHint (SDK objects or dicts, either spelling) count."""
    from mcp.types import Tool, ToolAnnotations

    tools = [
        Tool(
            name="read",
            input_schema={"type": "object"},
            annotations=ToolAnnotations(read_only_hint=True),
        ),
        {"name": "put", "annotations": {"idempotentHint": True}},
        {"name": "delete", "annotations": {"destructiveHint": True}},
        {"name": "plain"},
    ]
    assert repeatable_tools(tools) == {"read", "put"}


def test_for_toolkit_marks_read_only_tools_and_get_record_repeatable():
    """A toolkit's read-only tools (declared or by category) and its companion repeat safely."""
    from slimtools import Toolkit

    kit = Toolkit("k")
    kit.tool(lambda: 1, name="status", read_only=True)
    kit.tool(lambda: 1, name="deploy", category="command")
    kit.tool(lambda: 1, name="grep_code", category="search")
    policy = ClearingPolicy.for_toolkit(kit)
    assert policy.repeatable_of("status") is True
    assert policy.repeatable_of("grep_code") is True
    assert policy.repeatable_of("get_record") is True
    assert policy.repeatable_of("deploy") is False


@pytest.mark.shared
def test_no_placeholder_on_real_openhands_runs_asks_to_repeat_an_edit():
    """On recorded OpenHands runs, edits and IPython cells are never offered to run again."""
    from slimtools.transcripts import load_transcripts
    from tests._shared import shared_data

    runs = load_transcripts(shared_data() / "transcripts" / "openhands")
    texts = []
    for run in runs:
        out = clear_stale_results(run.messages, ClearingPolicy(cache=None, keep_turns=1))
        texts += [r.text for r in view(out).results if r.cleared]
    assert texts
    for text in texts:
        assert "call str_replace_editor(" not in text
        assert "call run_ipython(" not in text
        assert "call execute_bash(" not in text


@pytest.mark.parametrize("arguments", ['{"path": "a.py', '["a.py"]'], ids=["cut-off", "a-list"])
def test_refetch_line_never_offers_a_call_with_an_invented_argument(arguments):
    """A read whose OpenAI ``arguments`` were not a JSON object is offered again by name,
    not as a call with the engine's internal ``_raw`` argument the tool does not take."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "read_file", "arguments": arguments},
    }
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": big("line")},
    ]
    text = view(clear_stale_results(history, NOW)).results[0].text
    assert is_placeholder(text)
    assert "To see it again, call read_file again with valid arguments." in text
    assert "call read_file(_raw" not in text


def test_an_envelope_handle_beyond_64_bits_is_listed_exactly():
    """A snowflake id as a handle is quoted digit for digit, not as a rounded float."""
    body = {"total": 1, "briefs": [{"id": 2**70 + 1, "s": big("s", 200)}], "hint": ""}
    text = cleared_text("openai_chat", json.dumps(body), "search_logs")
    assert f"Handles: {2**70 + 1}" in text


def test_call_arguments_beyond_64_bits_are_offered_again_exactly():
    """JSON arguments with an integer id beyond 64 bits are offered again with that id."""
    call = {"id": "c1", "type": "function", "function": {"name": "read_file"}}
    call["function"]["arguments"] = json.dumps({"id": 2**70 + 1})
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": big("x", 2000)},
    ]
    text = view(clear_stale_results(history, NOW)).results[0].text
    assert f"call read_file(id={2**70 + 1}) again" in text
