"""What clear_stale_results clears, per setting and per format."""

from __future__ import annotations

import orjson
import pytest

from slimtools.clearing import (
    ClearingPolicy,
    clear_stale_results,
    clear_with_report,
    view,
)
from slimtools.clearing.formats.media import MEDIA_TOKENS
from tests.clearing.strategies_clearing import (
    FORMATS,
    IMAGE,
    Call,
    Res,
    Turn,
    big,
    openai_sdk_history,
    render,
    script,
)

fmt_param = pytest.mark.parametrize("fmt", FORMATS)
FLAT = ClearingPolicy(cache=None, retention={})  # only keep_turns applies


def cleared(history, policy=FLAT):
    """The cleared flags of every result after clearing."""
    return [r.cleared for r in view(clear_stale_results(history, policy)).results]


@fmt_param
def test_last_keep_turns_turns_are_untouched(fmt):
    """With keep_turns=2 the results of the last two turns stay; older ones are cleared."""
    assert cleared(render(fmt, script(*["t"] * 5))) == [True, True, True, False, False]


@fmt_param
def test_keep_turns_zero_clears_every_turn(fmt):
    """keep_turns=0 clears even the latest results."""
    assert cleared(render(fmt, script("t", "t")), FLAT.replace(keep_turns=0)) == [True, True]


@fmt_param
def test_keep_turns_larger_than_history_clears_nothing(fmt):
    """A window longer than the history keeps everything."""
    assert cleared(render(fmt, script("t", "t")), FLAT.replace(keep_turns=10)) == [False, False]


@fmt_param
def test_parallel_calls_form_one_turn(fmt):
    """Parallel calls of one assistant message share a turn and go together."""
    history = render(fmt, script(("t", "t", "t"), "t", "t"))
    assert cleared(history) == [True, True, True, False, False]


@fmt_param
@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        (0, [True] * 5),
        (2, [True, True, True, False, False]),
        (9, [False] * 5),
    ],
)
def test_keep_counts_tool_uses(fmt, keep, expected):
    """keep protects the last N tool uses: 0 keeps none, more than there are keeps all."""
    policy = FLAT.replace(keep_turns=0, keep=keep)
    assert cleared(render(fmt, script(("t", "t"), "t", "t", "t")), policy) == expected


@fmt_param
def test_keep_and_keep_turns_protect_either(fmt):
    """A result is kept when either keep or keep_turns protects it."""
    history = render(fmt, script("t", "t", ("t", "t", "t")))
    assert cleared(history, FLAT.replace(keep_turns=2, keep=4)) == [
        True,
        False,
        False,
        False,
        False,
    ]
    assert cleared(history, FLAT.replace(keep_turns=1, keep=1)) == [True, True, False, False, False]


@fmt_param
def test_excluded_tools_inside_the_keep_window_are_untouched(fmt):
    """Excluded results are never cleared and do not count toward keep."""
    history = render(fmt, script("t", "create_issue", "t", "create_issue", "t"))
    policy = FLAT.replace(keep_turns=0, keep=1, retention={"create_issue": None})
    assert cleared(history, policy) == [True, False, True, False, False]


@fmt_param
def test_never_clear_category_is_untouched(fmt):
    """Task input data (retention None) is never cleared."""
    history = render(fmt, script("load_dataset", "t", "t", "t"))
    policy = ClearingPolicy(cache=None, keep_turns=0, categories={"load_dataset": "input"})
    assert cleared(history, policy)[0] is False


@fmt_param
def test_retention_per_category(fmt):
    """Search results go before reads, and writes outlive both (defaults, section 5)."""
    history = render(fmt, script("web_search", "read_file", "create_issue", *["t"] * 2))
    policy = ClearingPolicy(cache=None, retention={"search": 2, "read": 4, "write": None})
    assert cleared(history, policy) == [True, False, False, False, False]
    history = render(fmt, script("web_search", "read_file", "create_issue", *["t"] * 4))
    assert cleared(history, policy) == [True, True, False, True, True, False, False]


def token_total(history):
    """The history's tokens as the engine counts them."""
    return clear_with_report(history, ClearingPolicy(cache=None, keep_turns=99))[1].tokens_before


@fmt_param
def test_trigger_below_at_and_above(fmt):
    """Nothing is cleared until the history exceeds the token trigger (at is not above)."""
    history = render(fmt, script(*["t"] * 4))
    total = token_total(history)
    assert not any(cleared(history, FLAT.replace(trigger=total + 1)))
    assert not any(cleared(history, FLAT.replace(trigger=total)))
    assert any(cleared(history, FLAT.replace(trigger=total - 1)))


@fmt_param
def test_trigger_on_tool_uses(fmt):
    """A tool-use trigger fires when there are more tool uses than its value."""
    history = render(fmt, script(*["t"] * 4))
    assert not any(cleared(history, FLAT.replace(trigger=("tool_uses", 4))))
    assert any(cleared(history, FLAT.replace(trigger=("tool_uses", 3))))


@fmt_param
def test_clear_at_least_is_all_or_nothing(fmt):
    """The cache is broken only when it pays: below clear_at_least nothing is cleared."""
    history = render(fmt, script(*["t"] * 4))
    _, report = clear_with_report(history, FLAT)
    saved = report.cleared_input_tokens
    assert report.cleared_tool_uses == 2
    _, at = clear_with_report(history, FLAT.replace(clear_at_least=saved))
    assert at.cleared_tool_uses == 2
    _, above = clear_with_report(history, FLAT.replace(clear_at_least=saved + 1))
    assert above.cleared_tool_uses == 0
    assert above.first_changed is None


@fmt_param
def test_unreachable_clear_at_least_leaves_history_identical(fmt):
    """An unreachable clear_at_least returns the same messages."""
    history = render(fmt, script(*["t"] * 6))
    out = clear_stale_results(history, FLAT.replace(clear_at_least=10**9))
    assert all(a is b for a, b in zip(out, history, strict=True))


@fmt_param
def test_report_has_anthropic_applied_edit_shape(fmt):
    """The report converts to Anthropic's applied_edits entry."""
    _, report = clear_with_report(render(fmt, script(*["t"] * 4)), FLAT)
    edit = report.as_applied_edit()
    assert edit["type"] == "clear_tool_uses_20250919"
    assert edit["cleared_tool_uses"] == 2
    assert 0 < edit["cleared_input_tokens"] == report.tokens_before - report.tokens_after
    assert report.changed


@fmt_param
def test_unchanged_messages_are_shared(fmt):
    """Only replaced messages are copies; the rest are the caller's objects."""
    history = render(fmt, script(*["t"] * 4))
    out = clear_stale_results(history, FLAT)
    changed = [i for i, (a, b) in enumerate(zip(history, out, strict=True)) if a is not b]
    positions = {r.position for r in view(out).results if r.cleared}
    assert set(changed) == positions


@fmt_param
def test_orphans_and_empty_results_are_left_alone(fmt):
    """Orphan results and calls and empty results never crash and stay as they are."""
    turns = [
        Turn((Call("a", "t", {}, Res("")),), user="go"),
        Turn((Call("c", "t", {}, None),), orphans=(("ghost", Res(big("g", 200))),)),
        *script("t", "t", "t")[1:],
    ]
    history = render(fmt, turns)
    before = view(history)
    after = view(clear_stale_results(history, FLAT.replace(keep_turns=0)))
    texts = {r.call_id: (r.text, r.cleared) for r in after.results}
    for r in before.results:
        if r.call_id in ("a", "ghost"):
            assert texts[r.call_id] == (r.text, False)


@fmt_param
def test_multimodal_results_are_cleared_and_say_what_they_held(fmt):
    """A result with an image is cleared; its placeholder names the block, never its data."""
    multimodal = Res((("text", big("m", 200)), ("image", IMAGE)))
    turns = [Turn((Call("b", "t", {}, multimodal),), user="go"), *script("t", "t", "t")[1:]]
    history = render(fmt, turns)
    (result, *_) = view(clear_stale_results(history, FLAT.replace(keep_turns=0))).results
    assert result.cleared
    assert "1 non-text block: image (" in result.text
    assert "base64" in result.text or "data URL" in result.text or "image/png" in result.text
    assert "iVBORw0KGgo" not in result.text


@fmt_param
def test_an_image_only_result_counts_as_media_tokens(fmt):
    """A result that is only an image still weighs MEDIA_TOKENS, so clearing it pays."""
    image_only = Res((("image", IMAGE),))
    turns = [Turn((Call("b", "t", {}, image_only),), user="go"), *script("t", "t", "t")[1:]]
    (result, *_) = view(render(fmt, turns)).results
    assert result.media_tokens == MEDIA_TOKENS
    _, report = clear_with_report(render(fmt, turns), FLAT.replace(keep_turns=0))
    assert "b" in report.cleared_call_ids


@fmt_param
def test_error_results_are_cleared_like_others(fmt):
    """An error result is cleared too, and keeps its error flag."""
    turns = [Turn((Call("e", "t", {}, Res("Traceback " * 200, is_error=True)),), user="go")]
    history = render(fmt, [*turns, *script("t", "t")[1:]])
    (result, *_) = view(clear_stale_results(history, FLAT.replace(keep_turns=0))).results
    assert result.cleared
    assert result.is_error is (fmt in ("langchain", "anthropic"))


def test_anthropic_several_results_in_one_message_clear_independently():
    """Each tool_result block of one user message is judged on its own."""
    history = render("anthropic", script(("t", "create_issue", "t"), "t"))
    policy = FLAT.replace(keep_turns=0, retention={"create_issue": None})
    out = clear_stale_results(history, policy)
    blocks = out[2]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["call_0", "call_1", "call_2"]
    assert blocks[1] is history[2]["content"][1]
    assert [r.cleared for r in view(out).results] == [True, False, True, True]


def test_anthropic_block_list_content_and_cache_control_survive():
    """A block-list tool_result is replaced by text; its other keys are kept."""
    history = render("anthropic", script("t", "t"))
    block = history[2]["content"][0]
    block["content"] = [{"type": "text", "text": big("b", 300)}]
    block["cache_control"] = {"type": "ephemeral"}
    out = clear_stale_results(history, FLAT.replace(keep_turns=1))
    new = out[2]["content"][0]
    assert isinstance(new["content"], str)
    assert new["cache_control"] == {"type": "ephemeral"}
    assert new["tool_use_id"] == "call_0"


@fmt_param
def test_clear_tool_inputs_blanks_arguments_as_valid_json(fmt):
    """Cleared calls lose their arguments; kept calls keep them."""
    history = render(fmt, script("t", "t", "t"))
    out = clear_stale_results(history, FLAT.replace(clear_tool_inputs=True))
    assert [c.args for c in view(out).calls] == [{}, {"q": 1}, {"q": 2}]


def test_clear_tool_inputs_in_every_langchain_copy():
    """tool_calls args, additional_kwargs arguments and content blocks are all blanked."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    raw = [{"id": "c1", "type": "function", "function": {"name": "t", "arguments": '{"q": 1}'}}]
    ai = AIMessage(
        [
            {"type": "text", "text": "calling"},
            {"type": "tool_use", "id": "c1", "name": "t", "input": {"q": 1}, "partial_json": "x"},
        ],
        additional_kwargs={"tool_calls": raw},
        id="a1",
    )
    history = [HumanMessage("go"), ai, ToolMessage(big(), tool_call_id="c1", id="t1")]
    out = clear_stale_results(history, FLAT.replace(keep_turns=0, clear_tool_inputs=True))
    new = out[1]
    assert new.id == "a1"
    assert new.tool_calls[0]["args"] == {}
    assert orjson.loads(new.additional_kwargs["tool_calls"][0]["function"]["arguments"]) == {}
    assert new.content[1]["input"] == {}
    assert orjson.loads(new.content[1]["partial_json"]) == {}
    assert new.content[0] == {"type": "text", "text": "calling"}
    assert ai.tool_calls[0]["args"] == {"q": 1}


def test_clear_tool_inputs_only_for_named_tools():
    """With a set of names, only those tools' arguments are blanked."""
    history = render("anthropic", script("bash", "read_file", "t", "t"))
    out = clear_stale_results(history, FLAT.replace(clear_tool_inputs={"bash"}))
    assert [c.args for c in view(out).calls] == [{}, {"q": 1}, {"q": 2}, {"q": 3}]


def test_langchain_replacement_keeps_ids_so_add_messages_overwrites():
    """LangGraph's add_messages puts each replacement exactly where the original was."""
    from langgraph.graph.message import add_messages

    history = render("langchain", script(*["t"] * 4))
    out = clear_stale_results(history, FLAT)
    replaced = [m for m, o in zip(out, history, strict=True) if m is not o]
    for new in replaced:
        old = next(m for m in history if m.id == new.id)
        assert (new.tool_call_id, new.status, new.artifact) == (
            old.tool_call_id,
            old.status,
            old.artifact,
        )
    merged = add_messages(history, replaced)
    assert merged == out


def test_langchain_middleware_cleared_results_count_as_cleared():
    """Results LangChain's ContextEditingMiddleware cleared are not cleared again."""
    history = render("langchain", script(*["t"] * 4))
    history[2] = history[2].model_copy(
        update={"content": "[cleared]", "response_metadata": {"context_editing": {"cleared": True}}}
    )
    out = clear_stale_results(history, FLAT)
    assert out[2] is history[2]
    assert view(out).results[0].cleared


def test_openai_sdk_objects_are_read_and_rewritten():
    """ChatCompletionMessage objects straight from a response are handled."""
    history = openai_sdk_history()
    out = clear_stale_results(history, FLAT.replace(clear_tool_inputs=True))
    assert view(out).results[0].cleared
    assert out[1].tool_calls[0].function.arguments == "{}"
    assert history[1].tool_calls[0].function.arguments == '{"q":1}'


def test_anthropic_sdk_blocks_are_read_and_rewritten():
    """ToolUseBlock objects in an assistant message's content are handled."""
    from anthropic.types import TextBlock, ToolUseBlock

    blocks = [
        TextBlock(type="text", text="calling"),
        ToolUseBlock(type="tool_use", id="c1", name="t", input={"q": 1}),
    ]
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": blocks},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": big()}],
        },
        *render("anthropic", script("t", "t"))[1:],
    ]
    out = clear_stale_results(history, FLAT.replace(clear_tool_inputs=True))
    assert view(out).results[0].cleared
    assert out[1]["content"][1].input == {}
    assert blocks[1].input == {"q": 1}


def test_responses_custom_tool_calls_pair_by_call_id():
    """custom_tool_call / custom_tool_call_output items are cleared like function calls."""
    items = [
        {"role": "user", "content": "go"},
        {"type": "custom_tool_call", "call_id": "c1", "name": "sh", "input": "ls -la"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": big()},
        *render("openai_responses", script("t", "t"))[1:],
    ]
    out = clear_stale_results(items, FLAT.replace(clear_tool_inputs=True))
    assert view(out).results[0].cleared
    assert out[1]["input"] == ""


def test_named_format_overrides_detection():
    """format= names the codec explicitly."""
    history = render("openai_chat", script("t", "t", "t"))
    assert cleared(history, FLAT) == cleared(history, FLAT.replace())
    out = clear_stale_results(history, FLAT, format="openai_chat")
    assert view(out, format="openai_chat").results[0].cleared


def test_reused_call_ids_pair_with_the_latest_call():
    """Servers that reuse ids such as "call_0" each turn still get every stale result cleared."""
    from slimtools.clearing import MemoryAudit, restore

    history = render("openai_chat", script(*["t"] * 5))
    for message in history:
        for call in message.get("tool_calls") or ():
            call["id"] = "call_0"
        if message["role"] == "tool":
            message["tool_call_id"] = "call_0"
    audit = MemoryAudit()
    out = clear_stale_results(history, FLAT, audit=audit)
    assert cleared(history) == [True, True, True, False, False]
    assert [r.name for r in view(out).results] == ["t"] * 5
    assert restore(out, audit) == history


def test_reused_call_ids_do_not_confuse_the_incremental_clearer():
    """A reused id is not taken for an earlier cleared result when the history grows."""
    from slimtools.clearing import Clearer

    history = render("anthropic", script(*["t"] * 6))
    for message in history:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if "id" in block:
                block["id"] = "toolu_0"
            if "tool_use_id" in block:
                block["tool_use_id"] = "toolu_0"
    clearer = Clearer(FLAT)
    for end in range(1, len(history) + 1):
        out = clearer.clear(history[:end])
    assert out == clear_stale_results(history, FLAT)


@pytest.mark.parametrize(
    ("history", "says"),
    [
        ({"role": "user", "content": "hi"}, "a dict is one message or a request body"),
        ("hello", "pass the list of messages, not text"),
        ((m for m in [{"role": "user", "content": "hi"}]), "pass list(history)"),
        (42, "got int"),
    ],
)
def test_a_history_that_is_not_a_message_list_gets_a_clear_error(history, says):
    """A dict, a string, a generator or a number: a TypeError saying what to pass instead."""
    with pytest.raises(TypeError, match="history must be a list of messages") as error:
        clear_stale_results(history)
    assert says in str(error.value)


def test_a_tuple_of_messages_is_a_history_too():
    """Any sequence of messages is accepted, not only a list."""
    history = tuple(render("openai_chat", script("search_logs", "x", "x")))
    assert len(clear_stale_results(history)) == len(history)
