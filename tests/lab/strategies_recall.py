"""Hypothesis strategies for the recall harness: sweep settings and erratic scripted models."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy

TOOL_NAMES = ("search_logs", "read_file", "grep", "list_deployments", "get_record", "nope", "")
CALL_IDS = ("", "call_1", "call_3", "dup", "x")
ARGUMENTS = (
    '{"query": "timeout"}',
    '{"path": "src/shop/cart.py"}',
    "{bad",
    "[1]",
    "",
    '{"handle": 1}',
)


@st.composite
def policies(draw: st.DrawFn) -> ClearingPolicy | None:
    """No clearing, or a policy with varied retention, heads and input blanking."""
    if draw(st.booleans()):
        return None
    return ClearingPolicy(
        keep_turns=draw(st.integers(0, 3)),
        keep_head=draw(st.sampled_from([0, 40, 200, 500])),
        keep=draw(st.none() | st.integers(0, 3)),
        clear_tool_inputs=draw(st.booleans()),
    )


def replies() -> st.SearchStrategy[Any]:
    """One reply of an erratic model: text, or calls with missing, reused or colliding ids,
    unknown tools and malformed arguments."""
    call = st.builds(
        lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
        st.sampled_from(CALL_IDS),
        st.sampled_from(TOOL_NAMES),
        st.sampled_from(ARGUMENTS),
    )
    calls = st.lists(call, min_size=1, max_size=3).map(
        lambda c: {"role": "assistant", "content": "", "tool_calls": c}
    )
    return st.one_of(st.text(max_size=30), calls)
