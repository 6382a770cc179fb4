"""The clearing engine's speed shortcuts, each pinned to the slow reference it replaces."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy
from slimtools.clearing._ingest import SeenCall
from slimtools.clearing._render import Placeholders
from slimtools.tokens import count_tokens
from tests.clearing.strategies_clearing import TOOLS

_tools = st.sampled_from([*TOOLS, "edit_file", "str_replace_editor", "write_note"])
_args = st.dictionaries(
    st.sampled_from(["path", "content", "query", "n"]),
    st.text(max_size=300) | st.integers(),
    max_size=3,
)
_rewriting = st.sampled_from(
    [
        ClearingPolicy(),
        ClearingPolicy(clear_tool_inputs=True),
        ClearingPolicy(clear_tool_inputs={"bash", "x"}),
    ]
)


@given(policy=_rewriting, tool=_tools, args=_args)
def test_input_saving_asks_the_tool_once_and_answers_as_the_policy(policy, tool, args):
    """The per-tool cached blanking decision saves what blanking as the policy says saves."""
    placeholders = Placeholders(policy)
    call = SeenCall(tool, args, 0, 10, 40, 1)
    blanked = bool(args) and policy.clears_inputs_of(tool)
    expected = max(0, 10 - count_tokens(f"{tool} {{}}")) if blanked else 0
    for _ in range(2):  # the first answer fills the cache, the second reads it
        assert placeholders.input_saving(tool, call) == expected


def _same_counter(text: str) -> int:
    """``count_tokens`` under another name: the read loop takes its general path."""
    return count_tokens(text)


@given(
    texts=st.lists(st.text(max_size=40) | st.text(alphabet="abc 漢字é", max_size=40), max_size=6)
)
def test_reading_with_the_default_counter_counts_as_the_counter_itself(texts):
    """The read loop's inlined ASCII count gives the tokens ``count_tokens`` gives."""
    from slimtools.clearing._ingest import Reading, read_messages
    from slimtools.clearing.formats.view import get_codec

    codec = get_codec("openai_chat")
    history: list[dict[str, object]] = []
    for i, text in enumerate(texts):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": text or "t", "arguments": "{}"},
        }
        history += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": text, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": text},
        ]
    fast, slow = Reading(), Reading()
    sizes: dict[str, list[int]] = {"fast": [], "slow": []}
    for reading, count, key in (
        (fast, count_tokens, "fast"),
        (slow, _same_counter, "slow"),
    ):
        read_messages(
            reading,
            codec,
            count,
            history,
            0,
            file=lambda r, p, size, t, c, k=key: sizes[k].append(size),
        )
    assert (fast.tokens, list(fast.offsets), fast.text_tokens) == (
        slow.tokens, list(slow.offsets), slow.text_tokens
    )  # fmt: skip
    assert sizes["fast"] == sizes["slow"]


@given(
    call_id=st.none() | st.text(max_size=4),
    name=st.none() | st.integers() | st.text(max_size=6),
    args=st.none()
    | st.text(max_size=10)
    | st.dictionaries(
        st.text(max_size=4), st.integers() | st.text(max_size=5) | st.binary(max_size=2)
    ),
)
def test_a_langchain_call_decodes_as_make_call_does(call_id, name, args):
    """The inlined decode of a single LangChain call equals the general make_call path."""
    from slimtools.clearing.formats.base import make_call, one
    from slimtools.clearing.formats.langchain import _one_call

    assert _one_call(call_id, name, args) == one(make_call(call_id, name, args))


def test_with_changes_copies_a_model_seen_before_as_model_copy_does():
    """A model of a class copied before takes the direct copy, equal to pydantic's."""
    from langchain_core.messages import ToolMessage

    from slimtools.clearing.formats._objects import with_changes

    message = ToolMessage("long result", tool_call_id="c1", id="t1", artifact={"k": 1})
    for _ in range(2):  # the first copy meets the class, the second takes the shortcut
        ours = with_changes(message, {"content": "short"})
        theirs = message.model_copy(update={"content": "short"})
        assert ours == theirs
        assert ours.__pydantic_fields_set__ == theirs.__pydantic_fields_set__
        assert message.content == "long result"


@given(
    text=st.text(max_size=300)
    | st.sampled_from(['{"briefs": [{"id": 3}, {"handle": "k1"}], "total": 2}', " x\n y"]),
    tool=_tools,
    args=_args,
    is_error=st.booleans(),
    keep_head=st.integers(0, 250),
    tokens=st.integers(-2_000, 10**7),
)
def test_the_default_placeholder_is_the_template_rendered(
    text, tool, args, is_error, keep_head, tokens
):
    """The default template's direct rendering, with its inlined count, equals the generic
    renderer's placeholder and the policy counter's tokens."""
    from slimtools.clearing._batch import Pending
    from slimtools.clearing.excerpt import envelope_handles, flatten_head, render_args
    from slimtools.clearing.formats.base import RawResult
    from slimtools.clearing.placeholder import (
        DEFAULT_TEMPLATE,
        MAX_PLACEHOLDER_CHARS,
        PlaceholderInfo,
        render,
    )

    policy = ClearingPolicy(keep_head=keep_head)
    raw = RawResult("c1", None, text, 0, is_error, False, True)
    pending = Pending(raw, tool, SeenCall(tool, args, 0, 10, 40, 1), 1, 1, tokens, 0)
    head = flatten_head(text, keep_head)
    info = PlaceholderInfo(
        tool, args, render_args(args), len(text), tokens, head,
        envelope_handles(text, policy.handle_key(tool)), "c1", 1, is_error,
        policy.refetch_tool, policy.repeatable_of(tool), (),
    )  # fmt: skip
    expected = render(info, DEFAULT_TEMPLATE, MAX_PLACEHOLDER_CHARS)
    assert Placeholders(policy).sized(pending) == (
        expected,
        policy.token_counter(expected),
    )


@given(
    args=st.dictionaries(
        st.text(max_size=6),
        st.text(max_size=200) | st.integers() | st.none() | st.lists(st.integers(), max_size=3),
        max_size=3,
    )
    | st.builds(lambda n: {"big": 1 << n}, st.integers(60, 70))
)
def test_a_single_argument_renders_as_the_joined_list_does(args):
    """``render_args``'s single-argument shortcut writes what the general join writes."""
    import orjson

    from slimtools._json import dumps_str
    from slimtools.clearing.excerpt import _ARGS_MAX, render_args

    try:
        text = ", ".join([f"{k}={orjson.dumps(v).decode()}" for k, v in args.items()])
    except (TypeError, orjson.JSONEncodeError):
        text = ", ".join([f"{k}={dumps_str(v)}" for k, v in args.items()])
    expected = text if len(text) <= _ARGS_MAX else text[: _ARGS_MAX - 1] + "…"
    assert render_args(args) == expected


@given(
    turns=st.lists(st.integers(0, 60), min_size=1, max_size=120).map(sorted),
    keep=st.integers(0, 5),
    clock=st.integers(0, 70),
)
def test_a_long_queue_falls_due_as_popping_it_one_by_one_does(turns, keep, clock):
    """Taking a long retention queue at once (all but its newest results) moves the same
    results, in the same order, as popping each due result in turn."""
    from collections import deque

    from slimtools.clearing._batch import Pending, State
    from slimtools.clearing._deciding import Decider
    from slimtools.clearing._render import Placeholders
    from slimtools.clearing.formats.base import RawResult

    raw = RawResult("c", None, "text", 0, False, False, True)
    call = SeenCall("t", {}, 0, 1, 2, 1)
    queue = [Pending(raw, "t", call, i, turn, 10, i) for i, turn in enumerate(turns)]
    expected = [p for p in queue if p.turn + keep <= clock]
    policy = ClearingPolicy()
    state = State()
    state.waiting[keep] = deque(queue)
    Decider(policy, Placeholders(policy), None).take_due(state, clock)
    assert state.ripe == expected
    assert list(state.waiting[keep]) == queue[len(expected) :]
