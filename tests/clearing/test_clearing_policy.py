"""ClearingPolicy: defaults, validation, retention, Anthropic and Toolkit constructors."""

from __future__ import annotations

import dataclasses
import importlib.util
from types import SimpleNamespace

import pytest

from slimtools.clearing import DEFAULT_RETENTION, ClearingPolicy, infer_category
from slimtools.errors import ConfigurationError
from slimtools.tokens import count_tokens


def test_the_policy_has_at_most_sixteen_fields():
    """What the tools are, when to clear, what the placeholder shows: 16 fields at most."""
    assert len(dataclasses.fields(ClearingPolicy)) <= 16


def test_a_trigger_reads_every_spelling_as_one():
    """A token count, a pair and Anthropic's dict all become ``(kind, n)``."""
    as_dict = {"type": "input_tokens", "value": 5}
    assert ClearingPolicy(trigger=5) == ClearingPolicy(trigger=("tokens", 5))
    assert ClearingPolicy(trigger=as_dict).trigger == ("tokens", 5)


def test_defaults_follow_turn_end_clearing():
    """No trigger, no minimum, clear at every round end, 2 turns kept, 200-char head."""
    p = ClearingPolicy()
    assert (p.keep_turns, p.keep_head) == (2, 200)
    assert p.trigger is p.clear_at_least is p.keep is None
    assert p.clear_tool_inputs is False
    assert p.token_counter is count_tokens
    assert dict(p.retention) == dict(DEFAULT_RETENTION)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"keep_turns": -1}, "keep_turns"),
        ({"keep_turns": True}, "keep_turns"),
        ({"keep_head": "200"}, "keep_head"),
        ({"keep": -3}, "keep"),
        ({"trigger": 1.5}, "trigger"),
        ({"trigger": ("tool_uses", -1)}, "trigger"),
        ({"trigger": ("turns", 3)}, "trigger"),
        ({"clear_at_least": -1}, "clear_at_least"),
        ({"repeatable": "create_issue"}, "repeatable"),
        ({"repeatable": [1]}, "repeatable"),
        ({"repeatable": {"x": "yes"}}, "repeatable"),
        ({"clear_tool_inputs": "bash"}, "clear_tool_inputs"),
        ({"retention": {"read": -1}}, "retention"),
        ({"retention": {"bash": "never"}}, "retention"),
        ({"categories": {"bash": 3}}, "categories"),
        ({"handle_keys": {"bash": 3}}, "handle_keys"),
        ({"placeholder": "{tool} {nope}"}, "nope"),
        ({"placeholder": "{tool"}, "malformed"),
        ({"placeholder": ""}, "placeholder"),
        ({"token_counter": 3}, "token_counter"),
        ({"token_counter": lambda text: len(text) / 4}, "token_counter must return an int"),
        ({"token_counter": lambda text: None}, "token_counter must return an int"),
        ({"token_counter": lambda text: str(len(text))}, "token_counter must return an int"),
    ],
)
def test_invalid_settings_raise_clear_errors(changes, message):
    """Each bad setting raises ConfigurationError naming the field."""
    with pytest.raises(ConfigurationError, match=message):
        ClearingPolicy(**changes)


def test_collections_are_normalised_and_immutable():
    """A collection of repeatable names becomes a mapping to True; mappings cannot be
    changed after construction."""
    p = ClearingPolicy(repeatable=["a", "b"], categories={"x": "read"})
    assert p.repeatable == {"a": True, "b": True}
    with pytest.raises(TypeError):
        p.categories["y"] = "write"  # type: ignore[index]


@pytest.mark.parametrize(
    ("tool", "category"),
    [
        ("web_search", "search"),
        ("list_dir", "search"),
        ("findUsers", "search"),
        ("read_file", "read"),
        ("get_record", "read"),
        ("bash", "command"),
        ("tail", "command"),
        ("run_query", "command"),
        ("create_issue", "write"),
        ("git_commit", "write"),
        ("fetch_and_update", "write"),
        ("frobnicate", None),
    ],
)
def test_categories_are_inferred_from_tool_names(tool, category):
    """Name words imply categories; write wins over everything (it is kept longest)."""
    assert infer_category(tool) == category


def test_retention_follows_the_article_table_order():
    """Search goes first, reads and commands early, writes late, task input never."""
    p = ClearingPolicy(categories={"dataset": "input"})
    keep = {t: p.turns_to_keep(t) for t in ("web_search", "read_file", "bash", "create_issue")}
    assert keep["web_search"] <= keep["read_file"] == keep["bash"] < keep["create_issue"]
    assert p.turns_to_keep("dataset") is None


def test_keep_turns_is_a_floor_for_every_retention():
    """No category is cleared inside the keep_turns window."""
    p = ClearingPolicy(keep_turns=5, retention={**DEFAULT_RETENTION, "bash": 1})
    assert p.turns_to_keep("bash") == 5
    assert p.turns_to_keep("web_search") == 5


def test_a_tool_named_in_retention_wins_over_its_category():
    """A retention keyed by tool name overrides the tool's category, None meaning never."""
    p = ClearingPolicy(retention={**DEFAULT_RETENTION, "read_file": None, "create_issue": 2})
    assert p.turns_to_keep("read_file") is None
    assert p.turns_to_keep("create_issue") == 2


def test_a_category_key_is_never_read_as_a_tool_name():
    """A tool named like a category keeps its own category's retention, not the key's."""
    p = ClearingPolicy(categories={"write": "search"}, retention={"search": 4, "write": 9})
    assert p.turns_to_keep("write") == 4


def test_uncategorised_tools_use_keep_turns():
    """A tool with no category keeps keep_turns turns."""
    assert ClearingPolicy(keep_turns=4).turns_to_keep("frobnicate") == 4


def test_clear_tool_inputs_may_name_tools():
    """clear_tool_inputs accepts a set of tool names, like Anthropic's list form."""
    p = ClearingPolicy(clear_tool_inputs=["bash"])
    assert p.clears_inputs_of("bash")
    assert not p.clears_inputs_of("read_file")


def test_from_anthropic_defaults():
    """No argument: trigger at 100,000 input tokens, keep 3 tool uses, no turn windows."""
    p = ClearingPolicy.from_anthropic()
    assert (p.trigger, p.keep, p.keep_turns) == (("tokens", 100_000), 3, 0)
    assert p.turns_to_keep("create_issue") == 0


def test_from_anthropic_reads_the_edit_dict():
    """Every field of a clear_tool_uses_20250919 edit maps onto the policy."""
    p = ClearingPolicy.from_anthropic(
        {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 30000},
            "keep": {"type": "tool_uses", "value": 5},
            "clear_at_least": {"type": "input_tokens", "value": 5000},
            "exclude_tools": ["web_search"],
            "clear_tool_inputs": True,
        }
    )
    assert (p.trigger, p.keep, p.clear_at_least) == (("tokens", 30000), 5, 5000)
    assert p.turns_to_keep("web_search") is None
    assert p.clear_tool_inputs is True


def test_from_anthropic_tool_uses_trigger():
    """A tool_uses trigger counts tool uses, not tokens."""
    p = ClearingPolicy.from_anthropic({"trigger": {"type": "tool_uses", "value": 10}})
    assert (p.trigger, p.keep) == (("tool_uses", 10), 3)


def test_from_anthropic_applies_overrides():
    """Keyword overrides such as a placeholder are applied after the edit."""
    p = ClearingPolicy.from_anthropic(None, placeholder="{tool} cleared", keep_turns=1)
    assert (p.placeholder, p.keep_turns) == ("{tool} cleared", 1)


@pytest.mark.parametrize(
    "edit",
    [
        {"type": "clear_thinking_20251015"},
        {"trigger": {"type": "messages", "value": 3}},
        {"keep": {"type": "input_tokens", "value": 3}},
        {"keep": 3},
        {"clear_at_least": {"type": "input_tokens", "value": -1}},
        {"surprise": True},
        "clear everything",
    ],
)
def test_from_anthropic_rejects_malformed_edits(edit):
    """A malformed edit raises ConfigurationError instead of clearing with wrong settings."""
    with pytest.raises(ConfigurationError):
        ClearingPolicy.from_anthropic(edit)


def test_for_toolkit_uses_categories_and_handle_keys():
    """A toolkit's categories and handle keys feed the policy; overrides merge on top."""
    kit = SimpleNamespace(
        categories={"load_csv": "input", "search_logs": "search", "odd": None},
        handle_keys={"search_logs": "id", "read_file": None},
        companion_name="fetch_record",
    )
    p = ClearingPolicy.for_toolkit(kit, keep_turns=1, categories={"x": "write"})
    assert p.turns_to_keep("load_csv") is None
    assert p.category_of("x") == "write"
    assert "odd" not in p.categories
    assert p.handle_key("search_logs") == "id"
    assert p.handle_key("read_file") is None
    assert p.handle_key("unknown") == "id"
    assert p.refetch_tool == "fetch_record"
    assert p.keep_turns == 1


def test_replace_validates_again():
    """policy.replace re-runs validation."""
    with pytest.raises(ConfigurationError):
        ClearingPolicy().replace(keep_turns=-2)


def test_policies_are_hashable_and_compare_by_value():
    """Equal policies hash alike, so a policy can key a cache."""
    a = ClearingPolicy(categories={"x": "read"}, repeatable={"y"})
    b = ClearingPolicy(categories={"x": "read"}, repeatable={"y": True})
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b, ClearingPolicy()}) == 2


def test_a_token_counter_that_fails_on_the_probe_is_left_to_its_first_use():
    """A counter that cannot answer yet (a client not connected) does not stop a policy."""

    def not_ready(text: str) -> int:
        raise RuntimeError("no client yet")

    assert ClearingPolicy(token_counter=not_ready).token_counter is not_ready


def test_a_category_that_is_not_one_is_refused():
    """A typo in a declared category is a configuration error naming the tool."""
    with pytest.raises(ConfigurationError, match=r"'search_logs'.*'serach'"):
        ClearingPolicy(categories={"search_logs": "serach"})


def test_a_category_given_a_retention_is_one():
    """A category of the user's own counts once the policy's ``retention`` gives it turns."""
    policy = ClearingPolicy(categories={"audit_log": "audit"}, retention={"audit": 50})
    assert policy.turns_to_keep("audit_log") == 50


def test_every_surface_starts_from_the_same_default_policy():
    """The CLI's default (also the gateway's), the LangGraph node and middleware and the
    LiteLLM hook all clear under ``ClearingPolicy()``."""
    pytest.importorskip("langchain.agents.middleware")
    from slimtools.adapters.langgraph import ClearingMiddleware, ClearingNode
    from slimtools.cli._policy import build_policy

    default = ClearingPolicy()
    assert build_policy("default") == default
    assert ClearingNode()._clearers.policy == default
    assert ClearingMiddleware().policy == default
    if importlib.util.find_spec("litellm") is not None:
        from slimtools.integrations.litellm import SlimtoolsClearing

        assert SlimtoolsClearing().policy == default
