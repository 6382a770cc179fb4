"""Proxy config: TOML validated at start, every error naming the file, line and key."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slimtools import ConfigurationError
from slimtools.projection import Projection, apply_deny, compile_deny
from slimtools.proxy import DEFAULT_MAX_TOKENS, load_config, parse_config
from slimtools.proxy.config import tool_options
from tests._profile import examples


def _error(text: str) -> str:
    with pytest.raises(ConfigurationError) as caught:
        parse_config(text, "slim.toml")
    return str(caught.value)


def test_no_config_means_the_default_budget_and_no_tool_options():
    """Without a file every tool is unconfigured under the 20,000-token budget."""
    config = load_config(None)
    assert config.max_tokens == DEFAULT_MAX_TOKENS == 20_000
    assert config.options_for("anything") is None


def test_an_unknown_tool_option_names_the_line_and_the_key():
    """A typo is reported with the file, its line and the full key, and the known options."""
    message = _error("max_tokens = 100\n\n[tools.list_issues]\nlimt = 5\n")
    assert message.startswith("slim.toml:4: tools.list_issues.limt: unknown option")
    assert "limit" in message


def test_a_bad_value_names_the_line_and_the_key():
    """A wrong type says what was expected and what was given."""
    message = _error('[tools."list_*"]\nitems = "items"\nlimit = "ten"\n')
    assert message.startswith('slim.toml:3: tools."list_*".limit: must be a positive integer')
    assert "'ten'" in message


def test_invalid_toml_says_where():
    """A syntax error reports the parser's line and column."""
    assert "line 2" in _error("max_tokens = 5\n[tools.x\n")


def test_an_unknown_top_level_key_is_refused():
    """Top-level keys are checked too."""
    assert _error("max_token = 5\n").startswith("slim.toml:1: max_token: unknown key")


def test_a_missing_file_is_a_configuration_error(tmp_path):
    """A config path that does not exist says so rather than raising OSError."""
    with pytest.raises(ConfigurationError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


def test_max_tokens_false_turns_the_global_budget_off():
    """``max_tokens = false`` (or 0) leaves unconfigured tools untouched."""
    assert parse_config("max_tokens = false").max_tokens is None
    assert parse_config("max_tokens = 0").max_tokens is None


def test_an_exact_name_wins_over_a_glob_and_globs_match_in_file_order():
    """``list_issues`` uses its own table; other ``list_*`` tools the first matching glob."""
    config = parse_config(
        '[tools."list_*"]\nlimit = 7\n[tools."l*"]\nlimit = 9\n[tools.list_issues]\nlimit = 3\n'
    )
    assert config.options_for("list_issues").limit == 3
    assert config.options_for("list_pulls").limit == 7
    assert config.options_for("lock").limit == 9
    assert config.options_for("get_issue") is None


def test_field_syntax_renames_clips_and_nests():
    """``"name = path:N"`` renames and clips; plain dotted paths keep their nesting."""
    config = parse_config(
        '[tools.t]\nfields = ["number", "author = user.login", "title:12", "labels.name",'
        ' {name = "b", path = "body", clip = 6}]\n'
    )
    brief = Projection.from_spec(config.options_for("t").brief_model()).project(
        {
            "number": 1,
            "user": {"login": "ana", "email": "a@x"},
            "title": "a title far too long",
            "labels": [{"name": "bug", "url": "u"}],
            "body": "long body text",
        }
    )
    assert brief == {
        "number": 1,
        "author": "ana",
        "title": "a title far…",
        "b": "long…",
        "labels": [{"name": "bug"}],
    }


def test_plain_paths_become_a_list_allowlist():
    """Without renames or clips the allowlist is the list of paths, as project_fields takes."""
    config = parse_config('[tools.t]\nfields = ["id", "user.login"]\n')
    assert config.options_for("t").brief_model() == ["id", "user.login"]


def test_a_malformed_field_is_reported_with_the_accepted_forms():
    """A field that is neither form says how to write one."""
    assert 'write "path"' in _error("[tools.t]\nfields = [3]\n")


def test_a_key_outside_the_fields_is_refused():
    """The handle key must be a field the brief shows."""
    message = _error('[tools.t]\nfields = ["title"]\nkey = "id"\n')
    assert message.startswith("slim.toml:3: tools.t.key:")


def test_max_limit_below_limit_is_refused():
    """``max_limit`` must be at least ``limit``."""
    assert "at least limit" in _error("[tools.t]\nlimit = 50\nmax_limit = 10\n")


def test_category_must_be_a_retention_category():
    """An unknown category lists the valid ones."""
    assert "search" in _error('[tools.t]\ncategory = "lookup"\n')


secrets = st.dictionaries(st.sampled_from(["email", "token", "name"]), st.text(max_size=5))
records = st.recursive(
    st.fixed_dictionaries({"user": secrets, "email": st.text(max_size=3)}),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), inner)
    ),
    max_leaves=8,
)


@settings(max_examples=examples(100), deadline=None)
@given(data=records)
def test_denied_paths_are_gone_at_every_depth(data):
    """After ``apply_deny`` no ``email`` key and no ``user.token`` remains anywhere."""
    stripped = apply_deny(data, compile_deny(["email", "user.token"]))[0]
    text = repr(stripped)
    assert "'email'" not in text

    def walk(node):
        if isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            assert "token" not in (node.get("user") or {})
            for value in node.values():
                walk(value)

    walk(stripped)


@settings(max_examples=examples(100), deadline=None)
@given(data=records)
def test_stripping_denied_paths_never_changes_the_input(data):
    """The caller's payload is left as it was: stripping copies where it removes."""
    before = copy.deepcopy(data)
    apply_deny(data, compile_deny(["email", "user.token"]))
    assert data == before


def test_a_limit_over_100_raises_max_limit_with_it():
    """``limit = 120`` alone is accepted, ``max_limit`` following it as ``paginate`` does."""
    options = parse_config("[tools.t]\nlimit = 120\n").options_for("t")
    assert (options.limit, options.max_limit) == (120, 120)


def test_an_explicit_max_limit_below_limit_names_max_limit():
    """The message blames ``max_limit`` and says the limit it must reach."""
    message = _error("[tools.t]\nlimit = 50\nmax_limit = 10\n")
    assert message.startswith("slim.toml:3: tools.t.max_limit: must be at least limit (50)")


def test_two_fields_shown_under_one_name_are_refused():
    """``["a = id", "a = name"]`` would show one and drop the other: refused at start."""
    message = _error('[tools.t]\nfields = ["a = id", "a = name"]\n')
    assert message.startswith("slim.toml:2: tools.t.fields: two fields are shown as 'a'")


def test_a_global_deny_merges_into_a_tool_with_its_own_table():
    """``[tools."*"] deny`` is added to every tool's own deny: deny wins."""
    config = parse_config('[tools."*"]\ndeny = ["ssn"]\n[tools.t]\ndeny = ["email"]\nlimit = 3\n')
    options = config.options_for("t")
    assert set(options.deny) == {"ssn", "email"}
    assert options.limit == 3


def test_every_glob_that_matches_adds_its_deny():
    """A tool matched by two globs gets both denies, its options from the first."""
    config = parse_config(
        '[tools."list_*"]\nlimit = 4\ndeny = ["a"]\n[tools."*"]\ndeny = ["b"]\nlimit = 9\n'
    )
    options = config.options_for("list_x")
    assert (options.limit, set(options.deny)) == (4, {"a", "b"})


def test_known_options_come_from_the_schema():
    """The unknown-option message lists exactly the schema's keys, the runtime's fields too."""
    import dataclasses

    from slimtools.foreign import ToolTable, known_keys
    from slimtools.proxy.config import ToolOptions

    message = _error("[tools.t]\nlimt = 5\n")
    assert message.endswith("known options: " + ", ".join(known_keys(ToolTable)))
    runtime = {f.name for f in dataclasses.fields(ToolOptions)} - {"model"}
    assert runtime == set(ToolTable.model_fields)


def test_on_unreadable_takes_withhold_or_text():
    """The opt-in to see unreadable text is one of two words."""
    message = _error('[tools.t]\non_unreadable = "raw"\n')
    assert message.startswith('slim.toml:2: tools.t.on_unreadable: must be "withhold" or "text"')


def test_a_negative_global_budget_is_refused():
    """``max_tokens = -1`` says what it takes."""
    assert _error("max_tokens = -1\n").startswith("slim.toml:1: max_tokens: must be a positive")


def test_dotted_fields_under_one_head_are_one_nested_name():
    """``user.login`` and ``user.id`` nest under one ``user``: not two fields of one name."""
    options = tool_options({"fields": ["user.login", "user.id", "title"]})
    assert [f.output for f in options.fields] == ["user", "user", "title"]


def test_a_whole_field_beside_its_own_dotted_path_is_refused():
    """``user`` shown whole and ``user.login`` nested would both be ``user``: refused."""
    with pytest.raises(ConfigurationError, match="two fields are shown as 'user'"):
        tool_options({"fields": ["user", "user.login"]})


@pytest.mark.parametrize("entry", ["a..b", ".", "user..email"])
def test_a_deny_path_with_an_empty_step_is_refused_at_start(entry):
    """``deny = ["a..b"]`` is a config error naming the line, not a failure of every call."""
    with pytest.raises(ConfigurationError, match=r"slim.toml:2: tools.t.deny"):
        parse_config(f'[tools.t]\ndeny = ["{entry}"]\n', "slim.toml")


def test_calls_wait_60_seconds_for_the_upstream_by_default():
    """Without ``call_timeout`` an upstream call is abandoned after a minute."""
    assert load_config(None).call_timeout == parse_config("").call_timeout == 60.0


@pytest.mark.parametrize("text", ["call_timeout = 0\n", "call_timeout = false\n"])
def test_call_timeout_zero_or_false_leaves_calls_unbounded(text):
    """``0`` or ``false`` turns the timeout off, as ``max_tokens`` does the budget."""
    assert parse_config(text).call_timeout is None


def test_call_timeout_takes_fractions_of_a_second():
    """``call_timeout = 0.5`` is half a second."""
    assert parse_config("call_timeout = 0.5\n").call_timeout == 0.5


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "true", '"60"'])
def test_a_bad_call_timeout_names_the_line_and_says_what_it_takes(value):
    """A negative, infinite or non-number timeout is refused at start."""
    message = _error(f'name = "p"\ncall_timeout = {value}\n')
    assert message.startswith("slim.toml:2: call_timeout: must be a positive number"), message


def test_a_config_that_is_not_utf8_names_the_file_and_the_reason(tmp_path):
    """A Latin-1 config is a configuration error naming the file and the offending byte."""
    path = tmp_path / "slim.toml"
    path.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigurationError, match=r"slim\.toml: not UTF-8 text: byte 0xe9"):
        load_config(path)


def test_the_proxy_exits_2_on_a_config_that_is_not_utf8(tmp_path):
    """``slimtools proxy --config`` on a Latin-1 file: exit 2, one line naming the file."""
    from tests._ports import run, slimtools

    path = tmp_path / "slim.toml"
    path.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    done = run(slimtools("proxy", "--config", str(path), "--", "true"))
    assert done.returncode == 2, done.stderr
    assert str(path) in done.stderr
    assert "not UTF-8" in done.stderr
    assert "Traceback" not in done.stderr
