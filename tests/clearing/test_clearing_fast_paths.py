"""The clearing engine's speed shortcuts, each pinned to the slow reference it replaces."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from slimtools.clearing import ClearingPolicy
from slimtools.clearing._ingest import SeenCall
from slimtools.clearing._render import Placeholders
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
        ClearingPolicy(shorten_write_inputs=False),
        ClearingPolicy(shorten_write_inputs=120),
        ClearingPolicy(clear_tool_inputs=True),
        ClearingPolicy(clear_tool_inputs={"bash", "x"}),
        ClearingPolicy(categories={"x": "write"}, infer_categories=False),
    ]
)


@given(policy=_rewriting, tool=_tools, args=_args)
def test_input_args_asks_the_tool_once_and_answers_as_the_policy(policy, tool, args):
    """The per-tool cached rewrite decision gives the arguments ``input_rewrite_of`` gives."""
    placeholders = Placeholders(policy)
    call = SeenCall(tool, args, 0, 10, 40, 1)
    expected = policy.input_rewrite_of(tool, args) if args else None
    for _ in range(2):  # the first answer fills the cache, the second reads it
        assert placeholders.input_args(tool, call) == expected
